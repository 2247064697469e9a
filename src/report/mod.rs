//! Output for people: terminal tables (devices, results, catalog, rankings, comparisons),
//! CSV and Markdown for the commands, and the HTML and Markdown reports with their SVG
//! charts. Number formatting and HTML escaping for all of them live in `fmt`.

pub mod catalog;
pub mod compare;
pub mod fmt;
pub mod html;
pub mod markdown;
pub mod rank;
pub mod svg;
pub mod table;

use crate::catalog::Catalog;
use crate::rank::RankReport;
use crate::results::{ProbeResult, ResultsFile, Status};
use anyhow::{Context, Result, bail};
use std::path::Path;

/// `report.html` and `report.md`, both stating the same generation time.
pub fn render(
    results: &[(String, ResultsFile)],
    ranks: &[RankReport],
    catalog: &Catalog,
) -> (String, String) {
    let now = crate::results::now_rfc3339();
    (
        html::render_at(results, ranks, catalog, &now),
        markdown::render_at(results, ranks, catalog, &now),
    )
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

/// Writes `report.html` and `report.md` into `out`, via a temporary directory renamed into
/// place: a failure leaves no partial report.
pub fn write(out: &Path, html: &str, md: &str) -> Result<()> {
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.exists() {
        bail!(
            "--out {}: the parent directory {} does not exist",
            out.display(),
            parent.display()
        );
    }
    if out.exists() && !out.is_dir() {
        bail!("--out {}: exists and is not a directory", out.display());
    }
    let name = out
        .file_name()
        .with_context(|| format!("--out {}: not a directory path", out.display()))?;
    let tmp = parent.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> Result<()> {
        std::fs::create_dir_all(&tmp).with_context(|| {
            format!(
                "--out {}: cannot write in {}",
                out.display(),
                parent.display()
            )
        })?;
        std::fs::write(tmp.join("report.html"), html)?;
        std::fs::write(tmp.join("report.md"), md)?;
        if out.exists() {
            let old = parent.join(format!(
                ".{}.old-{}",
                name.to_string_lossy(),
                std::process::id()
            ));
            std::fs::rename(out, &old)?;
            std::fs::rename(&tmp, out)?;
            let _ = std::fs::remove_dir_all(&old);
        } else {
            std::fs::rename(&tmp, out)?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}
