//! One output interface for every subject a command prints (devices, results files, the
//! catalog, a ranking, a comparison, the calibration): each implements [`Export`] for the
//! formats it supports, so the budget, stale-data notes, software-adapter marks and fleet
//! findings reach every format from one place, and a format a subject lacks is refused by
//! name. (In the spirit of hyperfine's `export/`: one trait, each implementation renders
//! its subject.)

use super::{calibration, catalog, compare, rank, table, term};
use crate::market::catalog::Catalog;
use crate::results::ResultsFile;
use crate::value::fleet::{BurnGate, Fleet};
use crate::value::rank::RankReport;
use anyhow::{Result, bail};
use serde::Serialize;

/// An output format. Each command accepts the ones it can print (see its `--format`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// A terminal table.
    #[default]
    Table,
    /// JSON: every field, for scripts.
    Json,
    /// CSV: one row per line, with a header.
    Csv,
    /// Markdown (tables for a pull-request comment or a wiki).
    Markdown,
}

/// A subject rendered to the formats it supports. `table` is the terminal form: escaped
/// for the terminal and fitted to its width by [`render`].
pub trait Export {
    /// What the subject is, for a refusal ("gpuvalue rank cannot print ...").
    const COMMAND: &'static str;
    /// The formats it renders, in the order `--help` lists them.
    const FORMATS: &'static [Format];
    fn table(&self) -> String;
    fn json(&self) -> Result<String>;
    /// Only for subjects with [`Format::Csv`] in `FORMATS`.
    fn csv(&self) -> Result<String> {
        bail!("no CSV form")
    }
    /// Only for subjects with [`Format::Markdown`] in `FORMATS`.
    fn markdown(&self) -> String {
        String::new()
    }
}

/// The subject in format `f`, ending with a newline; a format it lacks is an error naming
/// the ones it has.
pub fn render<E: Export>(e: &E, f: Format) -> Result<String> {
    if !E::FORMATS.contains(&f) {
        let names: Vec<&str> = E::FORMATS.iter().map(|f| f.name()).collect();
        bail!(
            "gpuvalue {} cannot print --format {}; it supports {}",
            E::COMMAND,
            f.name(),
            names.join(", ")
        );
    }
    let mut out = match f {
        Format::Table => term::wrap(&crate::text::term_text(&e.table())),
        Format::Json => e.json()?,
        Format::Csv => e.csv()?,
        Format::Markdown => e.markdown(),
    };
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
        }
    }
}

fn pretty<T: Serialize + ?Sized>(v: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(v)?)
}

/// `devices`: the adapters shown, and the one a bench would pick.
pub struct Devices<'a> {
    pub shown: &'a [crate::model::AdapterSummary],
    pub default: Option<&'a crate::model::AdapterSummary>,
}

impl Export for Devices<'_> {
    const COMMAND: &'static str = "devices";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];
    fn table(&self) -> String {
        let mut s = table::devices(self.shown);
        if let Some(best) = self.default {
            s.push_str(&format!("\ndefault adapter: {best}"));
        }
        s
    }
    fn json(&self) -> Result<String> {
        pretty(self.shown)
    }
}

/// `show`: results files with their paths.
pub struct Shown<'a> {
    pub files: &'a [(String, ResultsFile)],
    /// Every probe as measured (each memory-hierarchy size its own row).
    pub all: bool,
}

impl Export for Shown<'_> {
    const COMMAND: &'static str = "show";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];
    fn table(&self) -> String {
        self.files
            .iter()
            .map(|(p, r)| format!("{p}\n{}\n", table::results_with(r, self.all)))
            .collect::<Vec<_>>()
            .join("\n")
    }
    fn json(&self) -> Result<String> {
        let files: Vec<&ResultsFile> = self.files.iter().map(|(_, r)| r).collect();
        pretty(&files)
    }
}

/// `catalog`: the listing in a currency, and the selected rows as a catalog file (JSON, which
/// `--catalog FILE` reads back).
pub struct CatalogListing<'a> {
    pub rows: &'a [catalog::CatalogRow],
    pub catalog: &'a Catalog,
    pub selected: &'a Catalog,
    pub currency: &'a str,
}

impl Export for CatalogListing<'_> {
    const COMMAND: &'static str = "catalog";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];
    fn table(&self) -> String {
        catalog::table(self.rows, self.catalog, self.currency)
    }
    fn json(&self) -> Result<String> {
        pretty(self.selected)
    }
}

/// `rank`: the ranking, the fleet's findings among the results files, the burns that kept
/// GPUs out, and how much of it the terminal shows.
pub struct Ranking<'a> {
    pub report: &'a RankReport,
    pub fleet: &'a Fleet,
    pub burns: &'a BurnGate,
    pub view: rank::View,
}

/// The JSON of `rank`: the ranking's fields, and `fleet` (groups of sibling adapters and
/// the outliers among them) where results files were given.
#[derive(Serialize)]
struct RankJson<'a> {
    #[serde(flatten)]
    report: &'a RankReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    fleet: Option<&'a Fleet>,
    /// The burns among the results files, and the files left out for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    burn: Option<&'a BurnGate>,
}

impl Ranking<'_> {
    /// The fleet's findings (when notable) and the burns' exclusions, as lines.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = if self.fleet.is_notable() {
            self.fleet.lines()
        } else {
            Vec::new()
        };
        notes.extend(self.burns.lines());
        notes
    }
}

impl Export for Ranking<'_> {
    const COMMAND: &'static str = "rank";
    const FORMATS: &'static [Format] =
        &[Format::Table, Format::Json, Format::Csv, Format::Markdown];
    fn table(&self) -> String {
        let mut s = rank::table(self.report, self.view);
        for n in self.notes() {
            s.push_str(&n);
            s.push('\n');
        }
        s
    }
    fn json(&self) -> Result<String> {
        pretty(&RankJson {
            report: self.report,
            fleet: (!self.fleet.groups.is_empty()).then_some(self.fleet),
            burn: (!self.burns.is_empty()).then_some(self.burns),
        })
    }
    /// One table: the fleet notes go to stderr (the command prints [`Ranking::notes`]).
    fn csv(&self) -> Result<String> {
        rank::csv(self.report)
    }
    fn markdown(&self) -> String {
        let mut s = rank::markdown(self.report);
        let notes = self.notes();
        if !notes.is_empty() {
            let items: Vec<String> = notes
                .iter()
                .map(|n| format!("- {}", super::fmt::md(n)))
                .collect();
            s.push_str(&format!("\n## Fleet\n\n{}\n", items.join("\n")));
        }
        s
    }
}

/// `rank --side-by-side`: every way to pay per instance.
pub struct SideBySide<'a> {
    pub levers: &'a crate::value::levers::Levers,
    pub view: rank::View,
}

impl Export for SideBySide<'_> {
    const COMMAND: &'static str = "rank --side-by-side";
    const FORMATS: &'static [Format] =
        &[Format::Table, Format::Json, Format::Csv, Format::Markdown];
    fn table(&self) -> String {
        super::levers::table(self.levers, self.view)
    }
    fn json(&self) -> Result<String> {
        pretty(self.levers)
    }
    fn csv(&self) -> Result<String> {
        super::levers::csv(self.levers)
    }
    fn markdown(&self) -> String {
        super::levers::markdown(self.levers)
    }
}

impl Export for crate::measuring::compare::Comparison {
    const COMMAND: &'static str = "compare";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown];
    fn table(&self) -> String {
        compare::table(self)
    }
    fn json(&self) -> Result<String> {
        pretty(self)
    }
    fn markdown(&self) -> String {
        compare::markdown(self)
    }
}

impl Export for calibration::Table {
    const COMMAND: &'static str = "calibration";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown];
    fn table(&self) -> String {
        self.text()
    }
    fn json(&self) -> Result<String> {
        pretty(self)
    }
    fn markdown(&self) -> String {
        calibration::Table::markdown(self)
    }
}

/// `burn`: each GPU's acceptance test, and a verdict line each when there are several.
pub struct Burns<'a> {
    pub outcomes: Vec<(
        &'a crate::model::AdapterSummary,
        &'a crate::health::BurnRecord,
    )>,
}

impl Export for Burns<'_> {
    const COMMAND: &'static str = "burn";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];
    fn table(&self) -> String {
        let mut s: Vec<String> = self
            .outcomes
            .iter()
            .map(|(a, r)| super::burn::render(a, r))
            .collect();
        if self.outcomes.len() > 1 {
            s.extend(
                self.outcomes
                    .iter()
                    .map(|(a, r)| super::burn::verdict_line(a, r)),
            );
        }
        s.join("\n")
    }
    fn json(&self) -> Result<String> {
        let v: Vec<serde_json::Value> = self
            .outcomes
            .iter()
            .map(|(a, r)| serde_json::json!({"adapter": a, "burn": r}))
            .collect();
        pretty(&v)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Export for calibration::Serving {
    const COMMAND: &'static str = "calibration --serving";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown];
    fn table(&self) -> String {
        self.text()
    }
    fn json(&self) -> Result<String> {
        pretty(self)
    }
    fn markdown(&self) -> String {
        calibration::Serving::markdown(self)
    }
}

impl Export for crate::value::rank::Sweep {
    const COMMAND: &'static str = "rank --sweep";
    const FORMATS: &'static [Format] =
        &[Format::Table, Format::Json, Format::Csv, Format::Markdown];
    fn table(&self) -> String {
        self.text()
    }
    fn json(&self) -> Result<String> {
        pretty(self)
    }
    fn csv(&self) -> Result<String> {
        crate::value::rank::Sweep::csv(self)
    }
    fn markdown(&self) -> String {
        crate::value::rank::Sweep::markdown(self)
    }
}
