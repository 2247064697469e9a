//! The ranking as a terminal table: the heading line, the table of the form the view asks
//! for, a block a row of figures under `--details`, then the notes, each a line.

use super::columns::{self, Grid};
use super::notes::{heading, machine_lines, not_ranked_lines, nothing_ranks, summary_lines};
use super::words::{derivation, figure_value, gpus_cell, instance_cell, job_notes, place};
use crate::value::rank::{RankReport, RankRow};

/// How much of a ranking the terminal table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Rows shown (the rest are counted).
    pub rows: usize,
    /// Per-figure detail per row, every efficiency factor, every instance not ranked.
    pub details: bool,
}

impl View {
    /// The short answer: ten rows, one line each.
    pub const SHORT: View = View {
        rows: 10,
        details: false,
    };
}

/// The ranking as a terminal table: a heading line, the rows (`view`), then the model,
/// prices, caveats and measured machines, each a short line.
pub fn table(r: &RankReport, view: View) -> String {
    let shown = &r.rows[..r.rows.len().min(view.rows)];
    let mut out = format!("{}: {}\n", r.scenario.id, r.job);
    if r.rows.is_empty() && !view.details {
        out.push_str(&crate::report::term::wrap(&nothing_ranks(r)));
        return out;
    }
    let form = if r.scenario.serving.is_some() {
        columns::SERVING
    } else if view.details {
        columns::DETAILED
    } else {
        columns::SHORT
    };
    out.push_str(&crate::report::term::fit(tabled(&columns::grid(
        r, shown, form,
    ))));
    out.push('\n');
    let mut lines = Vec::new();
    if view.details {
        out.push_str(&row_details(shown));
    }
    lines.extend(summary_lines(r, shown.len(), view.details));
    if view.details {
        lines.extend(heading(r));
        lines.extend(not_ranked_lines(r));
    }
    lines.extend(machine_lines(r));
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// A grid as a table for the terminal (fitted to its width, with rounded borders, by
/// [`crate::report::term::fit`]).
fn tabled(g: &Grid) -> tabled::Table {
    let mut b = tabled::builder::Builder::default();
    b.push_record(g.headers.clone());
    for row in &g.rows {
        b.push_record(row.clone());
    }
    b.build()
}

/// Under a detailed table, each row's figures (value per GPU and how it was reached) and how
/// the job runs there, a short block a row instead of a narrow column.
fn row_details(shown: &[RankRow]) -> String {
    let mut out = String::new();
    for x in shown {
        out.push_str(&format!(
            "#{} {}: {}\n",
            place(x),
            instance_cell(x),
            gpus_cell(x)
        ));
        for f in &x.figures {
            out.push_str(&format!("  {}: {}\n", figure_value(f), derivation(f)));
        }
        for n in job_notes(x) {
            out.push_str(&format!("  {n}\n"));
        }
    }
    out
}
