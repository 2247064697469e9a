//! Ranking output: terminal table, Markdown, CSV and the HTML report's table (JSON is the
//! report's serde form). The columns are defined once ([`columns`]), the words of their
//! cells and of the notes once ([`words`], [`notes`]); each format adds its syntax.

pub mod columns;
mod csv;
mod html;
mod markdown;
pub mod notes;
mod terminal;
pub mod words;

pub use self::csv::csv;
pub use html::html_table;
pub use markdown::markdown;
pub use notes::{heading, machine_line, nothing_ranks, summary_lines};
pub use terminal::{View, table};
pub use words::{
    budget_cell, derivation, figure_value, figures_used, hours, place, scaled, spot_cell,
    spot_note, steady_cell, tier_and_confidence, timing_notes,
};
