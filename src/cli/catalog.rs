//! The market commands: `catalog` (list, `check`, `update`), and the catalog every ranking
//! command loads.

use crate::cli::args::{self, Format};
use crate::cli::print_as;
use crate::market::catalog::{Catalog, Severity};
use crate::report;
use crate::value::rank::Filters;
use anyhow::{Result, bail};
use std::process::ExitCode;

/// The catalog the options name: the embedded one with the snapshots' prices, replaced by
/// `--catalog`, extended by each `--catalog-add` (JSON, or CSV with `--csv-as-of`).
///
/// The snapshots are, per source, the current one `catalog update` took, else the one built
/// into the binary; `--offline` uses only the built-in ones, `--catalog` none.
pub(super) fn load_catalog(src: &args::CatalogSource) -> Result<Catalog> {
    let sources = crate::market::catalog::load::Sources {
        catalog: src.catalog.as_deref(),
        add: &src.catalog_add,
        csv_as_of: src.csv_as_of.as_deref(),
    };
    if src.catalog.is_some() {
        return sources.load();
    }
    let home = if src.offline {
        None
    } else {
        Some(crate::market::feeds::snapshot::home()?)
    };
    let (mut c, from) =
        crate::market::feeds::merge::with_snapshots(Catalog::embedded(), home.as_deref())?;
    for f in c.load_findings.iter().filter(|f| f.path == "current") {
        warn!("warning: {}", f.message);
    }
    c.prices_from = from;
    sources.load_onto(c)
}

pub(super) fn filters(f: &args::FilterArgs) -> Result<Filters> {
    Ok(Filters {
        provider: f.provider.clone(),
        gpu: f.gpu.clone(),
        region: f.region.clone(),
        min_gpu_memory_gb: f.min_gpu_memory,
        gpu_exact: None,
    })
}

pub(super) fn catalog(a: args::CatalogArgs) -> Result<ExitCode> {
    if let Some(args::CatalogAction::Update(u)) = &a.action {
        return catalog_update(u);
    }
    if let Some(args::CatalogAction::Check { file, csv_as_of }) = &a.action {
        return match file {
            Some(file) => catalog_check(file, csv_as_of.as_deref()),
            None => {
                let c = load_catalog(&a.source)?;
                let (rows, gpus) = (c.instances.len(), c.gpus.len());
                print_check_all(&c, rows, gpus)
            }
        };
    }
    let c = load_catalog(&a.source)?;
    let currency = crate::market::catalog::currency_code(&a.currency);
    if !c.currencies.contains_key(&currency) {
        bail!(
            "--currency {}: no exchange rate in the catalog (have {}; RMB means CNY)",
            a.currency,
            c.currencies.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut c = c;
    let left_out = crate::market::feeds::merge::drop_flagged_snapshot_rows(&mut c);
    let findings = c.check();
    let f = filters(&a.filters)?;
    if let Some(e) = f.unmatched(&c) {
        bail!(e);
    }
    let rows = report::catalog::rows(&c, &findings, &f, a.price, &currency)?;
    let listing = report::export::CatalogListing {
        rows: &rows,
        catalog: &c,
        selected: &c.subset(&f),
        currency: &currency,
    };
    print_as(&listing, a.output.format())?;
    if a.output.format() == Format::Table {
        for x in findings.iter().filter(|x| x.severity == Severity::Error) {
            warn!("{x}");
        }
        if left_out > 0 {
            warn!(
                "note: {left_out} feed rows left out: no GPU datasheet yet, or a flagged price (catalog check)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `catalog update`: fetch the feeds, gate and write the snapshots (or `--list` them).
fn catalog_update(u: &args::UpdateArgs) -> Result<ExitCode> {
    let say = |s: &str| say!("{s}");
    if u.list {
        crate::market::feeds::update::list(&say)?;
        return Ok(ExitCode::SUCCESS);
    }
    let opts = crate::market::feeds::update::Options {
        sources: u.sources.clone(),
        mirror: u.mirror.clone(),
        timeout: std::time::Duration::from_secs(u.timeout),
        max_bytes: crate::market::feeds::update::max_bytes(u.max_download)?,
        force: u.force,
    };
    crate::market::feeds::update::run(&opts, &say)
}

/// `catalog check` without a file: the catalog commands use (embedded, with the current
/// snapshots' prices), every finding of every file.
fn print_check_all(c: &Catalog, rows: usize, gpus: usize) -> Result<ExitCode> {
    let from = c
        .prices_from
        .clone()
        .unwrap_or_else(|| crate::market::catalog::EMBEDDED_NAME.to_string());
    // Which GPUs have specs only (`catalog check` once counted 25, the listing showed 17):
    // they serve calibration points, results files and --catalog-add rows.
    let rented: std::collections::BTreeSet<&str> =
        c.instances.iter().map(|i| i.gpu.as_str()).collect();
    let spec_only: Vec<&str> = c
        .gpus
        .iter()
        .map(|g| g.id.as_str())
        .filter(|id| !rented.contains(id))
        .collect();
    let gpus = if spec_only.is_empty() {
        format!("{gpus} GPUs")
    } else {
        format!(
            "{gpus} GPUs ({} rented by an instance here; {} with specs only, for calibration points, results files and --catalog-add rows: {})",
            gpus - spec_only.len(),
            spec_only.len(),
            spec_only.join(", ")
        )
    };
    let errors = print_findings(&c.check(), &from, rows, &gpus);
    // Flagged snapshot rows only stay out of rankings: not a failed check.
    Ok(crate::exit::Status::failed_if(errors > 0 && c.prices_from.is_none()).into())
}

/// Prints each finding as its own paragraph (as a compiler prints diagnostics), a warning
/// repeated over rows once, and a one-line summary, whatever the name's length; gives the number of errors.
fn print_findings(
    findings: &[crate::market::catalog::Finding],
    name: &str,
    rows: usize,
    gpus: &str,
) -> usize {
    // One finding a paragraph, fitted to the terminal (100 columns through a pipe); a
    // warning repeated word for word over rows is one paragraph naming them.
    for line in report::catalog::finding_lines(findings) {
        println!(
            "{}",
            report::term::wrap_at_spaces(&crate::text::term_text(&line))
        );
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    println!(
        "{}",
        report::term::wrap_at_spaces(&crate::text::term_text(&format!(
            "{name}: {rows} instance rows, {gpus}: {errors} error(s), {} warning(s)",
            findings.len() - errors
        )))
    );
    errors
}

/// `catalog check FILE`: a CSV or a fragment (no currencies or no GPUs of its own) is
/// checked merged with the embedded catalog, as `--catalog-add` would use it; only the
/// file's own findings are shown, with its own row indices.
fn catalog_check(file: &std::path::Path, csv_as_of: Option<&str>) -> Result<ExitCode> {
    let name = file.display().to_string();
    let (c, rows, gpus) = crate::market::catalog::load::for_check(file, csv_as_of)?;
    print_check(&c, &name, rows, gpus)
}

/// Prints the findings of `c` that belong to the file `name` (a CSV's in line order) and a
/// summary; exit status 1 when there are errors.
fn print_check(c: &Catalog, name: &str, rows: usize, gpus: usize) -> Result<ExitCode> {
    let mut findings: Vec<_> = c.check().into_iter().filter(|f| f.file == name).collect();
    // A CSV's findings in the order of its lines (JSON paths have none: order kept).
    findings.sort_by_key(|f| crate::market::catalog::csv_import::line_of(&f.path));
    let errors = print_findings(&findings, name, rows, &format!("{gpus} GPUs"));
    Ok(crate::exit::Status::failed_if(errors > 0).into())
}
