//! How each command's output is chosen: `--format`, `--json`, and their defaults.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};

pub use crate::report::export::Format;

impl Format {
    /// The formats of `devices`, `show` and `catalog`.
    pub const TABLE_JSON: &[Format] = &[Format::Table, Format::Json];
    /// The formats of `compare` (and `calibration`).
    pub const COMPARE: &[Format] =
        <crate::measuring::compare::Comparison as crate::report::export::Export>::FORMATS;
    /// The formats of `rank`.
    pub const RANK: &[Format] =
        <crate::report::export::Ranking<'static> as crate::report::export::Export>::FORMATS;

    /// A `--format` parser that accepts only `allowed` (clap then names those in its error
    /// and in the help).
    pub(super) fn only(allowed: &'static [Format]) -> impl TypedValueParser<Value = Format> {
        PossibleValuesParser::new(allowed.iter().filter_map(|f| f.to_possible_value()))
            .map(|s| <Format as ValueEnum>::from_str(&s, false).expect("one of the allowed"))
    }

    /// The one place the hidden legacy flags (`--json`, `--csv`, `--markdown`) map to a
    /// format; clap lets at most one of them, or `--format`, be given.
    pub(super) fn chosen(format: Option<Format>, json: bool, csv: bool, markdown: bool) -> Format {
        match (format, json, csv, markdown) {
            (Some(f), ..) => f,
            (None, true, ..) => Format::Json,
            (None, _, true, _) => Format::Csv,
            (None, _, _, true) => Format::Markdown,
            (None, false, false, false) => Format::Table,
        }
    }
}

/// `--format table|json` (`--json` kept as a hidden alias).
#[derive(Args, Debug, Clone, Default)]
#[group(multiple = false)]
pub struct TableOrJson {
    /// Output format [default: table].
    #[arg(long, value_parser = Format::only(Format::TABLE_JSON))]
    format: Option<Format>,
    /// Same as --format json.
    #[arg(long, hide = true)]
    json: bool,
}

impl TableOrJson {
    pub fn format(&self) -> Format {
        Format::chosen(self.format, self.json, false, false)
    }
}

/// `--format table|json|markdown` (`--json`, `--markdown` kept as hidden aliases).
#[derive(Args, Debug, Clone, Default)]
#[group(multiple = false)]
pub struct CompareOutput {
    /// Output format [default: table]; markdown for a pull-request comment.
    #[arg(long, value_parser = Format::only(Format::COMPARE))]
    format: Option<Format>,
    /// Same as --format json.
    #[arg(long, hide = true)]
    json: bool,
    /// Same as --format markdown.
    #[arg(long, hide = true)]
    markdown: bool,
}

impl CompareOutput {
    pub fn format(&self) -> Format {
        Format::chosen(self.format, self.json, false, self.markdown)
    }
}

/// `--format table|json|csv|markdown` (`--json`, `--csv`, `--markdown` kept as hidden
/// aliases).
#[derive(Args, Debug, Clone, Default)]
#[group(multiple = false)]
pub struct RankOutput {
    /// Output format [default: table].
    #[arg(long, value_parser = Format::only(Format::RANK))]
    format: Option<Format>,
    /// Same as --format json.
    #[arg(long, hide = true)]
    json: bool,
    /// Same as --format csv.
    #[arg(long, hide = true)]
    csv: bool,
    /// Same as --format markdown.
    #[arg(long, hide = true)]
    markdown: bool,
}

impl RankOutput {
    pub fn format(&self) -> Format {
        Format::chosen(self.format, self.json, self.csv, self.markdown)
    }
}
