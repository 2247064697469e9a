//! Output for people: terminal tables (devices, results, catalog, rankings, comparisons),
//! CSV and Markdown for the commands, and the HTML and Markdown reports with their SVG
//! charts. Number formatting and HTML escaping for all of them live in `fmt`.

pub mod burn;
pub mod calibration;
pub mod catalog;
pub mod compare;
pub mod export;
pub mod fmt;
pub mod hierarchy;
pub mod html;
pub mod levers;
pub mod markdown;
pub mod metrics;
pub mod rank;
pub mod serving;
pub mod svg;
pub mod table;
pub mod term;
#[cfg(not(target_arch = "wasm32"))]
pub mod transfers;

use crate::market::catalog::Catalog;
use crate::results::{ProbeResult, ResultsFile, Status};
use crate::value::rank::RankReport;

/// `report.html` and `report.md`, both stating the same generation time.
pub fn render(
    results: &[(String, ResultsFile)],
    ranks: &[RankReport],
    catalog: &Catalog,
) -> (String, String) {
    render_with(results, ranks, &[], catalog)
}

/// As [`render`], with serving sweeps (throughput and cost against interactivity) drawn.
pub fn render_with(
    results: &[(String, ResultsFile)],
    ranks: &[RankReport],
    sweeps: &[crate::value::rank::Sweep],
    catalog: &Catalog,
) -> (String, String) {
    let now = crate::files::now_rfc3339();
    (
        html::render_at(results, ranks, sweeps, catalog, &now),
        markdown::render_at(results, ranks, sweeps, catalog, &now),
    )
}

/// A device section's title: the adapter, its backend, its software mark, and the file (so
/// two runs of one adapter get two headings).
fn device_title(file: &str, r: &ResultsFile) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    format!(
        "{} ({}{}): {base}",
        r.adapter.name,
        r.adapter.backend,
        if r.adapter.software {
            ", software adapter"
        } else {
            ""
        }
    )
}

/// The fleet's findings among the results files (sibling GPUs far apart), when notable.
fn fleet_lines(results: &[(String, ResultsFile)], catalog: &Catalog) -> Vec<String> {
    let fleet = crate::value::fleet::analyse(results, Some(catalog));
    if fleet.is_notable() {
        fleet.lines()
    } else {
        Vec::new()
    }
}

/// Median, min, max, samples and validation of a probe, as report table cells ("-" where
/// none); shared by the HTML and Markdown reports.
fn probe_cells(p: &ProbeResult) -> [String; 5] {
    let val = p.validation.as_ref().map_or("-".into(), |v| {
        format!("{} {:.1e}", if v.passed { "pass" } else { "FAIL" }, v.error)
    });
    match (&p.value, p.status) {
        (Some(v), Status::Ok) => [
            fmt::figure(v.median),
            fmt::figure(v.min),
            fmt::figure(v.max),
            v.n.to_string(),
            val,
        ],
        _ => ["-".into(), "-".into(), "-".into(), "-".into(), val],
    }
}

/// The catalog's price dates ("2026-01-01, 2026-02-01") and exchange rates, so a report's
/// reader can judge how fresh the prices are.
fn catalog_dates_and_rates(catalog: &Catalog) -> (String, String) {
    let mut dates: Vec<&str> = catalog.instances.iter().map(|i| i.as_of.as_str()).collect();
    dates.sort();
    dates.dedup();
    let rates: Vec<String> = catalog
        .currencies
        .iter()
        .map(|(c, r)| format!("{c} {} per USD as of {}", r.per_usd, r.as_of))
        .collect();
    (dates.join(", "), rates.join("; "))
}

/// Writes `report.html` and `report.md` into the directory `out` (created if missing, in an
/// existing parent), each
/// atomically (a temporary file beside it, renamed over it): nothing else in `out` is
/// touched, and a failure leaves the previous report files whole. Errors name the path.
#[cfg(not(target_arch = "wasm32"))]
pub fn write(out: &std::path::Path, html: &str, md: &str) -> anyhow::Result<()> {
    write_as(out, "report", html, md)
}

/// As [`write`], the files named `STEM.html` and `STEM.md` (`run` names them after its
/// results file, so the last run's report is not overwritten).
#[cfg(not(target_arch = "wasm32"))]
pub fn write_as(out: &std::path::Path, stem: &str, html: &str, md: &str) -> anyhow::Result<()> {
    use anyhow::{Context, bail};
    use std::path::Path;
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() && !out.exists() => {
            bail!(
                "--out {}: a symbolic link to nothing (dangling)",
                out.display()
            )
        }
        Ok(_) if !out.is_dir() => {
            bail!("--out {}: exists and is not a directory", out.display())
        }
        _ => {}
    }
    if !out.is_dir() {
        // Only the directory itself: a mistyped parent path is not created.
        let parent = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            bail!(
                "--out {}: the parent directory {} does not exist",
                out.display(),
                parent.display()
            );
        }
        std::fs::create_dir(out)
            .with_context(|| format!("--out {}: cannot create the directory", out.display()))?;
    }
    if !out.is_dir() {
        bail!("--out {}: not a directory", out.display());
    }
    for (ext, text) in [("html", html), ("md", md)] {
        crate::files::write_atomic(&out.join(format!("{stem}.{ext}")), text.as_bytes())?;
    }
    Ok(())
}
