//! The acceptance test for people: one verdict line per GPU, its windows, the VRAM test and
//! the reasons in words (kept narrow: 100 columns).

use crate::health::{BurnRecord, LoadRecord};
use crate::model::AdapterSummary;
use tabled::settings::Style;
use tabled::{Table, Tabled};

#[derive(Tabled)]
struct WindowRow {
    window: String,
    #[tabled(rename = "start s")]
    start: String,
    seconds: String,
    products: u64,
    #[tabled(rename = "GFLOPS")]
    gflops: String,
    #[tabled(rename = "miscompares")]
    bad: u64,
    #[tabled(rename = "non-finite")]
    nan: u64,
    #[tabled(rename = "host check")]
    host: String,
    /// Mean power, energy, clock and limits over the window ("-": no counter read).
    power: String,
}

/// The verdict line: `PASS  NVIDIA H100 (0000:3b:00.0) vulkan: covered`.
pub fn verdict_line(a: &AdapterSummary, r: &BurnRecord) -> String {
    let name = match &a.pci_bus_id {
        Some(bus) => format!("{} ({bus})", a.name),
        None => a.name.clone(),
    };
    let soft = if a.software {
        ", software adapter (the CPU)"
    } else {
        ""
    };
    format!(
        "{:<5} {name} [{}{soft}]{}",
        r.verdict.name(),
        a.backend,
        interrupted(r)
    )
}

/// What a verdict line adds where the burn was interrupted: the words, or nothing.
pub fn interrupted(r: &BurnRecord) -> &'static str {
    if r.complete {
        ""
    } else {
        " (incomplete: interrupted)"
    }
}

/// Everything about one GPU's burn, for the terminal.
pub fn render(a: &AdapterSummary, r: &BurnRecord) -> String {
    let mut out = verdict_line(a, r);
    out.push('\n');
    if let Some(l) = &r.load {
        out.push_str(&load(l));
    }
    if let Some(s) = &r.stability {
        out.push_str(&format!(
            "steady {:.1} GFLOPS (median window); worst/best {:.0}%, last/first {:.0}%, trend {:+.1}% per window, CV {:.1}%\n",
            s.steady_gflops,
            s.worst_to_best * 100.0,
            s.last_to_first * 100.0,
            s.trend_per_window * 100.0,
            s.cv * 100.0
        ));
    }
    if let Some(e) = &r.expectation {
        out.push_str(&format!(
            "paid for: {} at {:.0} GFLOPS datasheet FP32, {:.0} expected ({})\n",
            e.gpu, e.datasheet_gflops, e.expected_gflops, e.basis
        ));
    }
    if let Some(v) = &r.vram {
        out.push_str(&format!(
            "VRAM: {} in {} windows of {} MiB, {} pass(es), {} errors, {:.1} GB/s ({:.1} s); {}\n",
            v.describe(),
            v.windows,
            v.window_bytes >> 20,
            v.passes,
            v.errors,
            v.gbps,
            v.seconds,
            v.basis
        ));
    }
    if let Some(f) = &r.injected {
        out.push_str(&format!("injected fault (testing the tool): {f}\n"));
    }
    if let Some(t) = &r.telemetry {
        out.push_str(&format!("{}\n", t.line()));
    }
    out.push_str(&format!("thresholds: {}\n", r.thresholds.basis));
    if r.reasons.is_empty() {
        out.push_str(&format!("covered: {}\n", r.covered));
    } else {
        for reason in &r.reasons {
            out.push_str(&format!("- {reason}\n"));
        }
        if !r.covered.is_empty() {
            out.push_str(&format!("covered: {}\n", r.covered));
        }
    }
    out
}

/// The load's line and its throughput windows, one row each.
fn load(l: &LoadRecord) -> String {
    let mut out = format!(
        "load: {} at {}x{}; {}; warm-up {:.1} s, idle gap {:.1} s before the last window\n",
        l.kernel, l.size, l.size, l.inputs, l.warmup_s, l.idle_gap_s
    );
    let rows: Vec<WindowRow> = l
        .windows
        .iter()
        .map(|w| WindowRow {
            window: format!(
                "{}{}",
                w.index + 1,
                if w.after_idle { " (after idle)" } else { "" }
            ),
            start: format!("{:.1}", w.start_s),
            seconds: format!("{:.1}", w.seconds),
            products: w.iterations,
            gflops: format!("{:.1}", w.gflops),
            bad: w.miscompares,
            nan: w.non_finite,
            host: if w.host_mismatches == 0 {
                "exact".into()
            } else {
                format!("{} differ", w.host_mismatches)
            },
            power: w.power.as_ref().map_or("-".into(), |p| p.line()),
        })
        .collect();
    if !rows.is_empty() {
        out.push_str(&super::term::fit(
            Table::new(rows).with(Style::rounded()).to_owned(),
        ));
        out.push('\n');
    }
    out
}
