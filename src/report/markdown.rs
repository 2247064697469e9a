//! `report.md`: the Markdown twin of `report.html` (devices, probes, each scenario's
//! ranking and the catalog's dates), for reading on a forge or in a terminal.

use super::fmt::md;
use crate::market::catalog::Catalog;
use crate::results::ResultsFile;
use crate::value::rank::RankReport;
use std::fmt::Write;

/// The Markdown report, stating it was generated at `now`.
pub fn render_at(
    results: &[(String, ResultsFile)],
    ranks: &[RankReport],
    sweeps: &[crate::value::rank::Sweep],
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
    let fleet = super::fleet_lines(results, catalog);
    if !fleet.is_empty() {
        m.push_str("\n## Fleet\n\n");
        for l in &fleet {
            let _ = writeln!(m, "- {}", md(l));
        }
    }
    for rep in ranks {
        let _ = write!(
            m,
            "\n## Scenario {}\n\n{}",
            md(&rep.scenario.id),
            super::rank::markdown(rep)
        );
    }
    for s in sweeps {
        let _ = write!(m, "\n## Serving curve\n\n{}", s.markdown());
    }
    let (dates, rates) = super::catalog_dates_and_rates(catalog);
    let _ = write!(
        m,
        "\n## Catalog\n\n{} instances, prices as of {}; exchange rates: {}.\n",
        catalog.instances.len(),
        md(&dates),
        md(&rates),
    );
    m
}

fn device(m: &mut String, name: &str, r: &ResultsFile) {
    let _ = write!(
        m,
        "\n## {}\n\n{} {} ({}), driver {} {}; {}; run {}; gpuvalue {} ({}); file {}\n",
        md(&super::device_title(name, r)),
        md(&r.adapter.vendor),
        md(&r.adapter.device_type),
        md(&r.adapter.backend),
        md(&r.adapter.driver),
        md(&r.adapter.driver_info),
        if r.adapter.software {
            "**software adapter**"
        } else {
            "hardware"
        },
        md(&r.created),
        md(&r.tool.version),
        md(&r.tool.git_commit),
        md(name)
    );
    for c in r.caveats() {
        let _ = write!(m, "\n> **{}**\n", md(&c));
    }
    if let Some(b) = &r.burn {
        burn(m, b);
    }
    if r.probes.is_empty() {
        return;
    }
    m.push_str("\n| probe | status | median | min | max | unit | n | validation error |\n|---|---|---|---|---|---|---|---|\n");
    for s in super::hierarchy::shown(r, false) {
        let p = s.probe;
        let [med, min, max, n, val] = super::probe_cells(p);
        let name = match &s.note {
            Some(note) => format!("{} ({note})", s.name),
            None => s.name.clone(),
        };
        let _ = writeln!(
            m,
            "| {} | {} | {med} | {min} | {max} | {} | {n} | {val} |",
            md(&name),
            p.status,
            md(&p.unit)
        );
    }
}

/// A GPU's acceptance test: the verdict, what it covered, the reasons and the windows.
fn burn(m: &mut String, b: &crate::health::BurnRecord) {
    let _ = write!(
        m,
        "\n**Burn: {}**{}: {}\n",
        b.verdict.name(),
        super::burn::interrupted(b),
        md(&b.covered)
    );
    for r in &b.reasons {
        let _ = write!(m, "\n- {}", md(r));
    }
    if !b.reasons.is_empty() {
        m.push('\n');
    }
    let Some(l) = &b.load else { return };
    m.push_str("\n| window | start s | seconds | products | GFLOPS | miscompares | non-finite | host check |\n|---|---|---|---|---|---|---|---|\n");
    for w in &l.windows {
        let _ = writeln!(
            m,
            "| {}{} | {:.1} | {:.1} | {} | {:.1} | {} | {} | {} |",
            w.index + 1,
            if w.after_idle { " (after idle)" } else { "" },
            w.start_s,
            w.seconds,
            w.iterations,
            w.gflops,
            w.miscompares,
            w.non_finite,
            if w.host_mismatches == 0 {
                "exact".to_string()
            } else {
                format!("{} differ", w.host_mismatches)
            }
        );
    }
}
