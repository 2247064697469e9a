//! `report.html`: one self-contained HTML file (inline CSS and SVG, nothing fetched) from
//! results files, the catalog and scenarios. Its Markdown twin is `super::markdown`.

use super::fmt::{esc, figure};
use super::svg::{self, Bar, Ceiling, Point};
use crate::figure::FigureKey;
use crate::market::catalog::Catalog;
use crate::results::{ResultsFile, Status};
use crate::value::rank::{RankReport, Source};
use crate::value::scenario::Rate;
use std::fmt::Write;

/// Bytes a matmul must move at least (A, B read once, C written once) per element size.
fn intensity(m: f64, n: f64, k: f64, in_bytes: f64, out_bytes: f64) -> f64 {
    2.0 * m * n * k / (in_bytes * (m * k + k * n) + out_bytes * m * n)
}

/// The roofline of one results file: measured ceilings, and the datasheet ceilings of its
/// catalog GPU (the one the user stated, for a browser run).
pub fn roofline(r: &ResultsFile, catalog: &Catalog) -> String {
    let mut ceilings = Vec::new();
    for (figure, label) in [
        (FigureKey::PeakF32, "FP32 multiply-add peak"),
        (FigureKey::MatmulF32, "FP32 matmul"),
        (FigureKey::MatmulF16, "f16 matmul"),
        (FigureKey::MatmulF64, "f64 matmul"),
        (FigureKey::MatmulDf64, "df64 matmul"),
        (FigureKey::MatmulCoop, "FP16 matrix engines"),
    ] {
        if let Some(g) = r.best(figure) {
            ceilings.push(Ceiling {
                label: format!("{label} (measured)"),
                gflops: g,
                datasheet: false,
            });
        }
    }
    let mut bandwidths = Vec::new();
    if let Some(bw) = r.best(FigureKey::StreamTriad) {
        bandwidths.push(("STREAM triad (measured)".to_string(), bw, false));
    }
    if let Some(gpu) = catalog.match_adapter(r.catalog_name()) {
        // Per adapter: a package of several adapters (MI250X) splits its peaks.
        let per = f64::from(gpu.adapters());
        for f in [
            Rate::MatmulF32,
            Rate::MatmulF64Best,
            Rate::MatmulF16Matrix,
            Rate::MatmulF64Matrix,
        ] {
            if let Some(sheet) = f.datasheet(gpu) {
                ceilings.push(Ceiling {
                    label: format!("{} datasheet", f.label()),
                    gflops: sheet.value / per,
                    datasheet: true,
                });
            }
        }
        if let Some(b) = gpu.bandwidth_gbps {
            bandwidths.push(("datasheet bandwidth".to_string(), b / per, true));
        }
    }
    let mut points = Vec::new();
    for p in r.probes.iter().filter(|p| p.status == Status::Ok) {
        let Some((inb, outb)) = p.figure.and_then(|f| f.element_bytes()) else {
            continue;
        };
        let g = |k: &str| p.params.get(k).and_then(|v| v.as_f64());
        if let (Some(m), Some(n), Some(k), Some(v)) = (g("m"), g("n"), g("k"), p.value.as_ref()) {
            points.push(Point {
                label: format!("{}: {} GFLOPS", p.name, figure(v.median)),
                intensity: intensity(m, n, k, inb, outb),
                gflops: v.median,
            });
        }
    }
    svg::roofline(
        &format!("Roofline: {}", r.adapter.name),
        &bandwidths,
        &ceilings,
        &points,
    )
}

fn device_html(s: &mut String, name: &str, r: &ResultsFile, catalog: &Catalog) {
    let a = &r.adapter;
    let _ = write!(
        s,
        "<section class=\"device\"><h2>{}</h2>",
        esc(&super::device_title(name, r))
    );
    let kind = if a.software {
        "<strong class=\"warn\">software adapter</strong> (the CPU; not GPU figures)"
    } else {
        "hardware"
    };
    let _ = write!(
        s,
        "<table class=\"kv\"><tr><th>adapter</th><td>{} ({} {}, {})</td></tr><tr><th>driver</th><td>{} {}</td></tr><tr><th>kind</th><td>{kind}</td></tr><tr><th>host</th><td>{} ({}, {} threads)</td></tr><tr><th>date</th><td>{}</td></tr><tr><th>tool</th><td>gpuvalue {} ({})</td></tr><tr><th>file</th><td>{}</td></tr></table>",
        esc(&a.name),
        esc(&a.vendor),
        esc(&a.device_type),
        esc(&a.backend),
        esc(&a.driver),
        esc(&a.driver_info),
        esc(&r.host.hostname),
        esc(&r.host.cpu_model),
        r.host.cpu_threads,
        esc(&r.created),
        esc(&r.tool.version),
        esc(&r.tool.git_commit),
        esc(name)
    );
    if let Some(b) = &r.burn {
        burn_html(s, b);
    }
    if let Some(b) = &r.browser {
        let _ = write!(
            s,
            "<p>Measured in a browser through WebGPU ({}); GPU {}.</p>",
            esc(&b.user_agent),
            match &b.stated_gpu {
                Some(g) => format!("stated by the user: {}", esc(g)),
                None => "not stated (browsers hide the model)".into(),
            }
        );
    }
    for c in r.caveats() {
        let _ = write!(s, "<p class=\"warn\">{}</p>", esc(&c));
    }
    if r.probes.is_empty() && r.burn.is_some() {
        s.push_str("</section>");
        return;
    }
    s.push_str(&probes_table(r));
    let _ = write!(
        s,
        "<figure>{}<figcaption>Measured ceilings solid, datasheet ceilings dashed; points are the matmul sizes at their arithmetic intensity (A and B read once, C written once).</figcaption></figure></section>",
        roofline(r, catalog)
    );
    let h = super::hierarchy::html(r);
    if !h.is_empty() {
        // Before the section's end.
        s.truncate(s.len() - "</section>".len());
        s.push_str(&h);
        s.push_str("</section>");
    }
}

/// Every probe result of one file as an HTML table: status, median, min, max, samples,
/// timing method and validation error (failed rows marked).
pub fn probes_table(r: &ResultsFile) -> String {
    let mut s = String::new();
    s.push_str("<table class=\"probes\"><tr><th>probe</th><th>status</th><th>median</th><th>min</th><th>max</th><th>unit</th><th>n</th><th>timing</th><th>validation error</th></tr>");
    for p in &r.probes {
        let [med, min, max, n, val] = super::probe_cells(p);
        let timing = p
            .timing
            .as_ref()
            .map_or("-".into(), |t| format!("{}", t.method));
        let cls = if p.status == Status::Failed {
            " class=\"fail\""
        } else {
            ""
        };
        let _ = write!(
            s,
            "<tr{cls}><td>{}</td><td>{}</td><td>{med}</td><td>{min}</td><td>{max}</td><td>{}</td><td>{n}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.name),
            p.status,
            esc(&p.unit),
            esc(&timing),
            esc(&val)
        );
    }
    s.push_str("</table>");
    s
}

fn scenario_html(s: &mut String, rep: &RankReport) {
    let _ = write!(
        s,
        "<section class=\"scenario\"><h2>Scenario {}: {}</h2><p>Job: {}.",
        esc(&rep.scenario.id),
        esc(&rep.scenario.description),
        esc(&rep.job)
    );
    if let Some(j) = &rep.scenario.job {
        let _ = write!(s, " Assumption: {}.", esc(&j.assumption));
    }
    s.push_str("</p>");
    for e in &rep.efficiencies {
        let _ = write!(
            s,
            "<p class=\"note\">Estimates of {} on {} use efficiency {:.2} ({}: {}).</p>",
            esc(e.figure.name()),
            esc(&e.applies_to),
            e.factor,
            esc(&e.origin),
            esc(&e.basis)
        );
    }
    charts_html(s, rep);
    s.push_str(&super::rank::html_table(rep));
    for l in super::rank::summary_lines(rep, rep.rows.len(), true) {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc(&l));
    }
    for m in &rep.machines {
        let _ = write!(
            s,
            "<p>Measured machine: {}.</p>",
            esc(&super::rank::machine_line(rep, m))
        );
    }
    s.push_str("</section>");
}

/// The value and cost charts of a ranking: its first 15 rows, saying so when there are more.
fn charts_html(s: &mut String, rep: &RankReport) {
    let top: Vec<_> = rep.rows.iter().take(15).collect();
    let base = |x: &crate::value::rank::RankRow| {
        format!(
            "{} {} ({}x {})",
            x.provider, x.instance_type, x.gpu_count, x.gpu_name
        )
    };
    // The same instance type in several regions: each bar says its region (the
    // charts once repeated labels that differed only by region).
    let bases: Vec<String> = top.iter().map(|x| base(x)).collect();
    let label = |x: &crate::value::rank::RankRow| {
        let b = base(x);
        if bases.iter().filter(|o| **o == b).count() > 1 {
            format!(
                "{} {} in {} ({}x {})",
                x.provider, x.instance_type, x.region, x.gpu_count, x.gpu_name
            )
        } else {
            b
        }
    };
    let value: Vec<Bar> = top
        .iter()
        .map(|x| Bar {
            label: label(x),
            value: 1000.0 * x.jobs_per_currency_unit,
            estimated: x.basis != Source::Measured,
        })
        .collect();
    let cost: Vec<Bar> = top
        .iter()
        .map(|x| Bar {
            label: label(x),
            value: x.cost_per_job,
            estimated: x.basis != Source::Measured,
        })
        .collect();
    let _ = write!(
        s,
        "<figure>{}</figure>",
        svg::bars(
            &format!(
                "Value, {}: jobs per 1,000 {}{}",
                rep.scenario.id,
                rep.currency,
                chart_cut(top.len(), rep.rows.len())
            ),
            &format!("jobs per 1,000 {}", rep.currency),
            &value
        )
    );
    let _ = write!(
        s,
        "<figure>{}</figure>",
        svg::bars(
            &format!(
                "Cost to finish one job, {}{}",
                rep.scenario.id,
                chart_cut(top.len(), rep.rows.len())
            ),
            &format!("{} per job", rep.currency),
            &cost
        )
    );
}

/// " (the first 15 of 28 ranked)" when a chart shows fewer bars than the table has rows.
fn chart_cut(shown: usize, all: usize) -> String {
    if shown < all {
        format!(" (the first {shown} of {all} ranked)")
    } else {
        String::new()
    }
}

const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left}\
th{background:#f3f3f3}tr.fail td{background:#fde0e0}.warn{color:#b00}.note{color:#555;font-size:.9em}\
figure{margin:1em 0}svg.chart{max-width:100%;height:auto;border:1px solid #eee}";

/// The HTML report, stating it was generated at `now`.
pub fn render_at(
    results: &[(String, ResultsFile)],
    ranks: &[RankReport],
    sweeps: &[crate::value::rank::Sweep],
    catalog: &Catalog,
    now: &str,
) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>gpuvalue report</title><style>{CSS}</style></head><body><h1>gpuvalue report</h1><p>Generated {now} by gpuvalue {}. Every figure below comes from the results files named; instance figures marked <em>estimated</em> are datasheet peaks times the stated efficiency.</p>",
        env!("CARGO_PKG_VERSION")
    );
    for (name, r) in results {
        device_html(&mut h, name, r, catalog);
    }
    let fleet = super::fleet_lines(results, catalog);
    if !fleet.is_empty() {
        h.push_str("<section><h2>Fleet</h2><ul>");
        for l in &fleet {
            let _ = write!(h, "<li>{}</li>", esc(l));
        }
        h.push_str("</ul></section>");
    }
    for rep in ranks {
        scenario_html(&mut h, rep);
    }
    for s in sweeps {
        let [tput, cost] = s.charts();
        let _ = write!(
            h,
            "<section><h2>Serving curve: {}</h2><p>{}: at each interactivity (output tokens per second per user), the cheapest instance of each GPU type, its output tokens per second per GPU and its price per million output tokens ({} prices, {}); <em>estimated</em> unless a serving results file measured it.</p><figure>{tput}</figure><figure>{cost}</figure></section>",
            esc(&s.scenario),
            esc(&s.job),
            esc(s.pricing.name()),
            esc(&s.currency)
        );
    }
    let (dates, rates) = super::catalog_dates_and_rates(catalog);
    let _ = writeln!(
        h,
        "<section><h2>Catalog</h2><p>{} instances, prices as of {}; exchange rates: {}.</p></section></body></html>",
        catalog.instances.len(),
        esc(&dates),
        esc(&rates)
    );
    h
}

/// A GPU's acceptance test: the verdict, what it covered, the reasons, the windows' rates.
fn burn_html(s: &mut String, b: &crate::health::BurnRecord) {
    let class = match b.verdict {
        crate::health::Verdict::Pass => "",
        _ => " class=\"warn\"",
    };
    let _ = write!(
        s,
        "<p><strong{class}>Burn: {}</strong>{}: {}</p>",
        b.verdict.name(),
        super::burn::interrupted(b),
        esc(&b.covered)
    );
    if !b.reasons.is_empty() {
        s.push_str("<ul>");
        for r in &b.reasons {
            let _ = write!(s, "<li>{}</li>", esc(r));
        }
        s.push_str("</ul>");
    }
    if let Some(t) = &b.telemetry {
        let _ = write!(s, "<p>{}</p>", esc(&t.line()));
    }
    if let Some(l) = &b.load {
        s.push_str(
            "<table><tr><th>window</th><th>GFLOPS</th><th>miscompares</th><th>non-finite</th><th>power and clocks</th></tr>",
        );
        for w in &l.windows {
            let _ = write!(
                s,
                "<tr><td>{}{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                w.index + 1,
                if w.after_idle { " (after idle)" } else { "" },
                w.gflops,
                w.miscompares + w.host_mismatches,
                w.non_finite,
                esc(&w.power.as_ref().map_or("-".into(), |p| p.line()))
            );
        }
        s.push_str("</table>");
        burn_charts(s, &l.windows);
    }
}

/// The burn's throughput, power and graphics clock window by window, where the sampler
/// read them: a drop beside its clocks and power.
fn burn_charts(s: &mut String, windows: &[crate::health::Window]) {
    type Pick = fn(&crate::health::Window) -> Option<f64>;
    let charts: [(&str, &str, Pick); 3] = [
        ("Throughput per window", "GFLOPS", |w| Some(w.gflops)),
        ("Mean power per window", "W", |w| w.power.as_ref()?.mean_w),
        ("Median graphics clock per window", "MHz", |w| {
            Some(w.power.as_ref()?.graphics_mhz?.median)
        }),
    ];
    for (title, unit, pick) in charts {
        let items: Vec<super::svg::Bar> = windows
            .iter()
            .filter_map(|w| {
                pick(w).map(|value| super::svg::Bar {
                    label: format!("window {}", w.index + 1),
                    value,
                    estimated: false,
                })
            })
            .collect();
        if items.len() == windows.len() && !items.is_empty() {
            s.push_str(&super::svg::bars(title, unit, &items));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::{PowerWindow, Spread};

    fn window(i: usize, gflops: f64, power: Option<PowerWindow>) -> crate::health::Window {
        crate::health::Window {
            power,
            ..crate::health::Window::for_test(i, gflops)
        }
    }

    #[test]
    fn a_burn_charts_power_and_clocks_beside_throughput_where_they_were_read() {
        let at = |w: f64, mhz: f64| PowerWindow {
            source: "NVML".into(),
            mean_w: Some(w),
            graphics_mhz: Some(Spread {
                min: mhz,
                median: mhz,
                max: mhz,
            }),
            ..PowerWindow::default()
        };
        let read = [
            window(0, 100.0, Some(at(690.0, 1980.0))),
            window(1, 70.0, Some(at(700.0, 1400.0))),
        ];
        let mut s = String::new();
        burn_charts(&mut s, &read);
        assert!(s.contains("Mean power per window") && s.contains("Median graphics clock"));
        assert_eq!(s.matches("<svg").count(), 3);
        // No counter read: throughput alone, no empty power chart.
        let mut s = String::new();
        burn_charts(&mut s, &[window(0, 100.0, None), window(1, 99.0, None)]);
        assert_eq!(s.matches("<svg").count(), 1, "{s}");
        assert!(!s.contains("power"));
    }
}
