//! `report.md`: the Markdown twin of `report.html` (devices, probes, each scenario's
//! ranking and the catalog's dates), for reading on a forge or in a terminal.

use crate::catalog::Catalog;
use crate::rank::RankReport;
use crate::results::ResultsFile;
use std::fmt::Write;

/// The Markdown report, generated now.
pub fn render(
    results: &[(String, ResultsFile)],
    ranks: &[RankReport],
    catalog: &Catalog,
) -> String {
    render_at(results, ranks, catalog, &crate::results::now_rfc3339())
}

/// The Markdown report, stating it was generated at `now`.
pub fn render_at(
    results: &[(String, ResultsFile)],
    ranks: &[RankReport],
    catalog: &Catalog,
    now: &str,
) -> String {
    let mut m = format!(
        "# gpuvalue report\n\nGenerated {now} by gpuvalue {}.\n",
        env!("CARGO_PKG_VERSION")
    );
    for (name, r) in results {
        device(&mut m, name, r);
    }
    for rep in ranks {
        let _ = write!(
            m,
            "\n## Scenario {}\n\n{}",
            rep.scenario.id,
            super::rank::markdown(rep)
        );
    }
    let (dates, rates) = super::catalog_dates_and_rates(catalog);
    let _ = write!(
        m,
        "\n## Catalog\n\n{} instances, prices as of {dates}; exchange rates: {rates}.\n",
        catalog.instances.len(),
    );
    m
}

fn device(m: &mut String, name: &str, r: &ResultsFile) {
    let _ = write!(
        m,
        "\n## {}\n\n{} {} ({}), driver {} {}; {}; run {}; gpuvalue {} ({}); file {}\n",
        r.adapter.name,
        r.adapter.vendor,
        r.adapter.device_type,
        r.adapter.backend,
        r.adapter.driver,
        r.adapter.driver_info,
        if r.adapter.software {
            "**software adapter**"
        } else {
            "hardware"
        },
        r.created,
        r.tool.version,
        r.tool.git_commit,
        name
    );
    for c in r.caveats() {
        let _ = write!(m, "\n> **{c}**\n");
    }
    m.push_str("\n| probe | status | median | min | max | unit | n | validation error |\n|---|---|---|---|---|---|---|---|\n");
    for p in &r.probes {
        let [med, min, max, n, val] = super::probe_cells(p);
        let _ = writeln!(
            m,
            "| {} | {} | {med} | {min} | {max} | {} | {n} | {val} |",
            p.name, p.status, p.unit
        );
    }
}
