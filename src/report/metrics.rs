//! The figures and telemetry in the Prometheus text exposition format (`--metrics FILE`),
//! for node_exporter's textfile collector: gauges in base units (watts, joules, hertz,
//! celsius), named `gpuvalue_*`, labelled by adapter, backend and PCI bus id as DCGM's
//! exporter labels by GPU and bus id.

use crate::energy::PowerWindow;
use crate::health::{BurnRecord, Verdict};
use crate::model::AdapterSummary;
use crate::results::{ResultsFile, Status};
use std::fmt::Write;

/// A label value escaped as the format asks (backslash, double quote, newline).
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Gauges grouped by metric name, each with its HELP and TYPE once.
#[derive(Default)]
struct Families {
    order: Vec<(&'static str, &'static str)>,
    rows: Vec<(&'static str, String, f64)>,
}

impl Families {
    fn add(&mut self, name: &'static str, help: &'static str, labels: &[(&str, &str)], v: f64) {
        if !v.is_finite() {
            return;
        }
        if !self.order.iter().any(|(n, _)| *n == name) {
            self.order.push((name, help));
        }
        let l: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
            .collect();
        self.rows.push((name, l.join(","), v));
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for (name, help) in &self.order {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for (n, labels, v) in self.rows.iter().filter(|r| r.0 == *name) {
                let _ = writeln!(out, "{n}{{{labels}}} {v}");
            }
        }
        out
    }
}

fn device_labels(a: &AdapterSummary) -> Vec<(&'static str, String)> {
    vec![
        ("adapter", a.name.clone()),
        ("backend", a.backend.clone()),
        ("pci_bus_id", a.pci_bus_id.clone().unwrap_or_default()),
    ]
}

fn with<'a>(
    base: &'a [(&'static str, String)],
    more: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut v: Vec<(&str, &str)> = base.iter().map(|(k, v)| (*k, v.as_str())).collect();
    v.extend_from_slice(more);
    v
}

fn power(f: &mut Families, prefix: Prefix, labels: &[(&str, &str)], w: &PowerWindow) {
    if let Some(x) = w.mean_w {
        f.add(
            prefix.watts,
            "Mean board (or CPU package) power over the window, watts.",
            labels,
            x,
        );
    }
    if let Some(x) = w.energy_j {
        f.add(prefix.joules, "Energy over the window, joules.", labels, x);
    }
    if let Some(c) = w.graphics_mhz {
        f.add(
            prefix.hertz,
            "Median graphics clock over the window, hertz.",
            labels,
            c.median * 1e6,
        );
    }
    if let Some(t) = w.temperature_c {
        f.add(
            prefix.celsius,
            "Hottest temperature over the window, degrees Celsius.",
            labels,
            t.max,
        );
    }
    f.add(
        prefix.capped,
        "1 when the window ran at a power or thermal limit.",
        labels,
        f64::from(u8::from(w.capped())),
    );
}

#[derive(Clone, Copy)]
struct Prefix {
    watts: &'static str,
    joules: &'static str,
    hertz: &'static str,
    celsius: &'static str,
    capped: &'static str,
}

const PROBE: Prefix = Prefix {
    watts: "gpuvalue_probe_power_watts",
    joules: "gpuvalue_probe_energy_joules",
    hertz: "gpuvalue_probe_graphics_clock_hertz",
    celsius: "gpuvalue_probe_temperature_celsius",
    capped: "gpuvalue_probe_capped",
};

const WINDOW: Prefix = Prefix {
    watts: "gpuvalue_burn_window_power_watts",
    joules: "gpuvalue_burn_window_energy_joules",
    hertz: "gpuvalue_burn_window_graphics_clock_hertz",
    celsius: "gpuvalue_burn_window_temperature_celsius",
    capped: "gpuvalue_burn_window_capped",
};

fn sources(
    f: &mut Families,
    base: &[(&'static str, String)],
    t: Option<&crate::energy::TelemetryInfo>,
) {
    for s in t.map_or(&[][..], |t| &t.sources[..]) {
        let l = with(base, &[("source", s.source.as_str())]);
        f.add(
            "gpuvalue_telemetry_source_read",
            "1 when the power and clock source was read, 0 when it was tried and not read.",
            &l,
            f64::from(u8::from(s.read)),
        );
    }
}

/// Bench runs' figures (median, and whether its check passed) and each figure's power,
/// every adapter's in one exposition.
pub fn bench(runs: &[&ResultsFile]) -> String {
    let mut f = Families::default();
    for r in runs {
        bench_one(&mut f, r);
    }
    f.render()
}

fn bench_one(f: &mut Families, r: &ResultsFile) {
    let base = device_labels(&r.adapter);
    for p in &r.probes {
        let figure = p.figure.map(|k| k.to_string()).unwrap_or_default();
        let l = with(
            &base,
            &[
                ("probe", p.name.as_str()),
                ("figure", figure.as_str()),
                ("unit", p.unit.as_str()),
            ],
        );
        if let (Status::Ok, Some(v)) = (p.status, &p.value) {
            f.add(
                "gpuvalue_probe_value",
                "A measured figure's median, in the unit its label names.",
                &l,
                v.median,
            );
        }
        if let Some(v) = &p.validation {
            f.add(
                "gpuvalue_probe_check_passed",
                "1 when the figure's check against the CPU reference passed.",
                &l,
                f64::from(u8::from(v.passed)),
            );
        }
        if let Some(w) = &p.energy {
            power(f, PROBE, &l, w);
        }
    }
    sources(f, &base, r.telemetry.as_ref());
}

/// Burns' verdicts (one gauge a verdict, 1 for the one reached), their windows'
/// throughput, miscompares and power, every adapter's in one exposition.
pub fn burn(runs: &[(&AdapterSummary, &BurnRecord)]) -> String {
    let mut f = Families::default();
    for (a, r) in runs {
        burn_one(&mut f, a, r);
    }
    f.render()
}

/// A burn while it runs (`burn --metrics-port`): each adapter's windows so far and its
/// latest power, clock and temperature reading.
#[cfg(not(target_arch = "wasm32"))]
pub fn live(adapters: &[crate::measuring::burn::LiveAdapter]) -> String {
    let mut f = Families::default();
    for a in adapters {
        let base = device_labels(&a.adapter);
        let l = with(&base, &[]);
        f.add(
            "gpuvalue_burn_windows_done",
            "Windows of the sustained load measured so far.",
            &l,
            a.windows.len() as f64,
        );
        windows(&mut f, &base, &a.windows);
        if let Some(r) = &a.reading {
            if let Some(w) = r.power_w {
                f.add(
                    "gpuvalue_gpu_power_watts",
                    "Board (or CPU package) power at the latest reading, watts.",
                    &l,
                    w,
                );
            }
            if let Some(c) = r.graphics_mhz {
                f.add(
                    "gpuvalue_gpu_graphics_clock_hertz",
                    "Graphics clock at the latest reading, hertz.",
                    &l,
                    c * 1e6,
                );
            }
            if let Some(t) = r.temperature_c {
                f.add(
                    "gpuvalue_gpu_temperature_celsius",
                    "Temperature at the latest reading, degrees Celsius.",
                    &l,
                    t,
                );
            }
        }
    }
    f.render()
}

fn windows(f: &mut Families, base: &[(&'static str, String)], ws: &[crate::health::Window]) {
    for w in ws {
        let index = (w.index + 1).to_string();
        let l = with(base, &[("window", index.as_str())]);
        f.add(
            "gpuvalue_burn_window_gflops",
            "A window's FP32 throughput, GFLOPS.",
            &l,
            w.gflops,
        );
        f.add(
            "gpuvalue_burn_window_miscompares",
            "Elements that differed from the reference in the window.",
            &l,
            w.miscompares as f64,
        );
        if let Some(p) = &w.power {
            power(f, WINDOW, &l, p);
        }
    }
}

fn burn_one(f: &mut Families, a: &AdapterSummary, r: &BurnRecord) {
    let base = device_labels(a);
    for v in [Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Error] {
        let l = with(&base, &[("verdict", v.name())]);
        f.add(
            "gpuvalue_burn_verdict",
            "1 for the verdict the acceptance test reached.",
            &l,
            f64::from(u8::from(r.verdict == v)),
        );
    }
    if let Some(s) = &r.stability {
        f.add(
            "gpuvalue_burn_steady_gflops",
            "Median window's FP32 throughput, GFLOPS.",
            &with(&base, &[]),
            s.steady_gflops,
        );
    }
    windows(
        f,
        &base,
        r.load.as_ref().map_or(&[][..], |l| &l.windows[..]),
    );
    sources(f, &base, r.telemetry.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lavapipe() -> ResultsFile {
        ResultsFile::parse(include_str!("../../tests/fixtures/results-lavapipe.json")).unwrap()
    }

    #[test]
    fn a_bench_file_parses_as_prometheus_text_with_its_figures() {
        let mut r = lavapipe();
        r.adapter.name = "GPU \"A\"\\x\nb".into();
        r.probes[0].energy = Some(PowerWindow {
            source: "RAPL".into(),
            seconds: 2.0,
            samples: 20,
            mean_w: Some(65.0),
            energy_j: Some(130.0),
            ..PowerWindow::default()
        });
        let text = bench(&[&r]);
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let scrape = prometheus_parse::Scrape::parse(lines).expect("valid exposition format");
        let values: Vec<&prometheus_parse::Sample> = scrape
            .samples
            .iter()
            .filter(|s| s.metric == "gpuvalue_probe_value")
            .collect();
        let ok = r
            .probes
            .iter()
            .filter(|p| p.status == Status::Ok && p.value.is_some())
            .count();
        assert_eq!(values.len(), ok);
        // The parser hands label values back as written: escaped as the format asks.
        assert_eq!(values[0].labels.get("adapter"), Some(r#"GPU \"A\"\\x\nb"#));
        let watts = scrape
            .samples
            .iter()
            .find(|s| s.metric == "gpuvalue_probe_power_watts")
            .unwrap();
        assert_eq!(watts.value, prometheus_parse::Value::Gauge(65.0));
        assert_eq!(
            scrape
                .docs
                .get("gpuvalue_probe_power_watts")
                .map(|s| s.contains("watts")),
            Some(true)
        );
    }
}
