//! Plain SVG charts (no scripts, no fonts fetched): a log-log roofline and horizontal bar
//! charts. Hand-written: three small chart types need less code than a plotting crate's
//! setup, and the output stays readable and self-contained.

use super::fmt::{esc, money, tick};
use std::fmt::Write;

/// The opening of a chart: the svg element (class `chart <kind>`), its title and a white
/// background.
fn open_svg(s: &mut String, kind: &str, w: f64, h: f64, title: &str) {
    let t = esc(title);
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart {kind}" viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="{t}"><title>{t}</title><rect x="0" y="0" width="{w}" height="{h}" fill="white"/>"#
    );
}

/// A horizontal ceiling on the roofline (a compute peak).
pub struct Ceiling {
    pub label: String,
    pub gflops: f64,
    /// Datasheet ceilings are dashed.
    pub datasheet: bool,
}

/// A measured point (a matmul size at its arithmetic intensity).
pub struct Point {
    pub label: String,
    pub intensity: f64,
    pub gflops: f64,
}

/// A log-log roofline: x arithmetic intensity (FLOP/byte), y GFLOPS; memory slopes (GB/s)
/// and compute ceilings, measured solid, datasheet dashed.
pub fn roofline(
    title: &str,
    bandwidths: &[(String, f64, bool)],
    ceilings: &[Ceiling],
    points: &[Point],
) -> String {
    // Non-finite values are left out, and the axis ends at MAX_GFLOPS whatever the data.
    let top = ceilings
        .iter()
        .map(|c| c.gflops)
        .chain(points.iter().map(|p| p.gflops))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
        .min(MAX_GFLOPS);
    let f = Frame::new(top);
    let mut s = f.open("roofline", title);
    f.grid(&mut s);
    let mut legend = Legend {
        x: f.w - f.mr,
        y: f.mt + 10.0,
    };
    f.slopes(&mut s, &mut legend, bandwidths, ceilings);
    f.ceilings(&mut s, &mut legend, ceilings);
    for p in points {
        let _ = write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="4" fill="#000"><title>{}</title></circle>"##,
            f.px(p.intensity.clamp(f.x0, f.x1)),
            f.py(p.gflops.clamp(f.y0, f.y1)),
            esc(&p.label)
        );
    }
    s.push_str("</svg>");
    s
}

const DASHED: &str = r#" stroke-dasharray="6 4""#;

/// The roofline's y axis ends here at most (1e9 GFLOPS: a hundred times any validated
/// figure), so its tick loop has a bounded number of steps whatever the data.
const MAX_GFLOPS: f64 = 1e9;

/// At most this many ticks on an axis: the loops stop there even on values the axis
/// clamp missed.
const MAX_TICKS: usize = 40;

fn dash(dashed: bool) -> &'static str {
    if dashed { DASHED } else { "" }
}

/// A chart's size and its plot area's margins (left, right, top, bottom).
#[derive(Clone, Copy)]
pub(super) struct Area {
    pub w: f64,
    pub h: f64,
    pub ml: f64,
    pub mr: f64,
    pub mt: f64,
    pub mb: f64,
}

impl Area {
    /// The chart's opening: its svg element of `kind` with the title (for assistive
    /// technology and as text at the top left of the plot) on white.
    pub(super) fn open(&self, kind: &str, title: &str) -> String {
        let mut s = String::new();
        open_svg(&mut s, kind, self.w, self.h, title);
        let _ = write!(
            s,
            r#"<text x="{}" y="22" font-size="15" font-weight="bold">{}</text>"#,
            self.ml,
            esc(title)
        );
        s
    }
}

/// A log-log chart's plot area: the area, the axes' ranges and the mapping to pixels.
struct Frame {
    area: Area,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl std::ops::Deref for Frame {
    type Target = Area;
    fn deref(&self) -> &Area {
        &self.area
    }
}

impl Frame {
    /// The roofline's frame: intensity from 1/16 to 1024, GFLOPS from 0.1 to the decade
    /// above twice `top`.
    fn new(top: f64) -> Frame {
        Frame {
            area: Area {
                w: 820.0,
                h: 420.0,
                ml: 70.0,
                mr: 270.0,
                mt: 40.0,
                mb: 50.0,
            },
            x0: 0.0625,
            x1: 1024.0,
            y0: 0.1,
            y1: 10f64.powf((top * 2.0).log10().ceil()),
        }
    }

    fn px(&self, x: f64) -> f64 {
        let span = self.x1.log10() - self.x0.log10();
        self.ml + (x.log10() - self.x0.log10()) / span * (self.w - self.ml - self.mr)
    }

    fn py(&self, y: f64) -> f64 {
        let span = self.y1.log10() - self.y0.log10();
        self.h - self.mb - (y.log10() - self.y0.log10()) / span * (self.h - self.mt - self.mb)
    }

    /// Grid lines and ticks (x every factor 4, y every decade) and the axis titles.
    fn grid(&self, s: &mut String) {
        let (ml, mt, w, h, mr, mb) = (self.ml, self.mt, self.w, self.h, self.mr, self.mb);
        let mut x = self.x0;
        for _ in 0..MAX_TICKS {
            if x > self.x1 * 1.0001 {
                break;
            }
            let (xx, yb, yt, label) = (self.px(x), h - mb, h - mb + 15.0, tick(x));
            let _ = write!(
                s,
                r##"<line x1="{xx:.1}" y1="{mt}" x2="{xx:.1}" y2="{yb}" stroke="#ddd"/><text x="{xx:.1}" y="{yt}" font-size="11" text-anchor="middle">{label}</text>"##
            );
            x *= 4.0;
        }
        let mut y = self.y0;
        for _ in 0..MAX_TICKS {
            if y > self.y1 * 1.0001 {
                break;
            }
            let (yy, xr, xt, label) = (self.py(y), w - mr, ml - 5.0, tick(y));
            let _ = write!(
                s,
                r##"<line x1="{ml}" y1="{yy:.1}" x2="{xr}" y2="{yy:.1}" stroke="#ddd"/><text x="{xt}" y="{:.1}" font-size="11" text-anchor="end">{label}</text>"##,
                yy + 4.0
            );
            y *= 10.0;
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">arithmetic intensity (FLOP per byte)</text>"#,
            (ml + w - mr) / 2.0,
            h - 12.0
        );
        let _ = write!(
            s,
            r#"<text x="16" y="{}" font-size="12" text-anchor="middle" transform="rotate(-90 16 {})">GFLOPS</text>"#,
            (mt + h - mb) / 2.0,
            (mt + h - mb) / 2.0
        );
    }

    /// The memory slopes y = bandwidth x intensity, up to the highest ceiling.
    fn slopes(
        &self,
        s: &mut String,
        legend: &mut Legend,
        bandwidths: &[(String, f64, bool)],
        ceilings: &[Ceiling],
    ) {
        let peak = ceilings
            .iter()
            .filter(|c| !c.datasheet)
            .map(|c| c.gflops)
            .fold(0.0, f64::max)
            .max(1.0);
        for (bw_label, gbps, datasheet) in bandwidths {
            if !(gbps.is_finite() && *gbps > 0.0) {
                continue;
            }
            let xe = (ceilings.iter().map(|c| c.gflops).fold(peak, f64::max) / gbps).min(self.x1);
            let xs = (self.y0 / gbps).max(self.x0);
            let _ = write!(
                s,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#555" stroke-width="2"{}/>"##,
                self.px(xs),
                self.py(gbps * xs),
                self.px(xe),
                self.py(gbps * xe),
                dash(*datasheet)
            );
            legend.entry(
                s,
                "#555",
                *datasheet,
                &format!("{bw_label}: {gbps:.1} GB/s"),
            );
        }
    }

    /// The compute ceilings, one colour each.
    fn ceilings(&self, s: &mut String, legend: &mut Legend, ceilings: &[Ceiling]) {
        let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];
        for (i, c) in ceilings.iter().enumerate() {
            if !(c.gflops.is_finite() && c.gflops > 0.0) {
                continue;
            }
            let color = colors[i % colors.len()];
            let _ = write!(
                s,
                r#"<line x1="{}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{color}" stroke-width="2"{}/>"#,
                self.ml,
                self.py(c.gflops),
                self.w - self.mr,
                self.py(c.gflops),
                dash(c.datasheet)
            );
            legend.entry(
                s,
                color,
                c.datasheet,
                &format!("{}: {:.1}", c.label, c.gflops),
            );
        }
    }
}

/// The legend beside the plot: one line and label per entry, downwards.
struct Legend {
    x: f64,
    y: f64,
}

impl Legend {
    fn entry(&mut self, s: &mut String, color: &str, dashed: bool, label: &str) {
        let y = self.y;
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="2"{}/><text x="{}" y="{}" font-size="11">{}</text>"#,
            self.x + 8.0,
            self.x + 28.0,
            dash(dashed),
            self.x + 32.0,
            y + 4.0,
            esc(label)
        );
        self.y += 18.0;
    }
}

/// A bar of a horizontal bar chart; `estimated` bars are hatched grey-blue, measured solid.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub estimated: bool,
}

pub fn bars(title: &str, unit: &str, items: &[Bar]) -> String {
    let (w, ml, mr, row) = (820.0, 330.0, 80.0, 22.0);
    let h = 60.0 + row * items.len().max(1) as f64 + 30.0;
    let maxv = items
        .iter()
        .map(|b| b.value)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
        .max(1e-300);
    let mut s = String::new();
    open_svg(&mut s, "bars", w, h, title);
    s.push_str(r##"<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#9ecae1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#4a7fb0" stroke-width="2"/></pattern></defs>"##);
    let _ = write!(
        s,
        r#"<text x="10" y="22" font-size="15" font-weight="bold">{}</text>"#,
        esc(title)
    );
    let _ = write!(
        s,
        r##"<rect x="{ml}" y="32" width="12" height="12" fill="#08519c"/><text x="{}" y="42" font-size="11">measured</text><rect x="{}" y="32" width="12" height="12" fill="url(#hatch)"/><text x="{}" y="42" font-size="11">estimated (datasheet x efficiency)</text>"##,
        ml + 16.0,
        ml + 90.0,
        ml + 106.0
    );
    for (i, b) in items.iter().enumerate() {
        let y = 56.0 + row * i as f64;
        let bw = (b.value / maxv * (w - ml - mr)).clamp(1.0, w - ml - mr);
        let fill = if b.estimated {
            "url(#hatch)"
        } else {
            "#08519c"
        };
        let label: String = if b.label.chars().count() > 52 {
            b.label.chars().take(51).chain(['…']).collect()
        } else {
            b.label.clone()
        };
        let _ = write!(
            s,
            r#"<text x="{}" y="{:.1}" font-size="11" text-anchor="end">{}</text><rect x="{ml}" y="{:.1}" width="{bw:.1}" height="{:.1}" fill="{fill}"><title>{}: {} {}</title></rect><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            ml - 6.0,
            y + 14.0,
            esc(&label),
            y + 3.0,
            row - 6.0,
            esc(&b.label),
            money(b.value),
            esc(unit),
            ml + bw + 4.0,
            y + 14.0,
            money(b.value)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
        (ml + w - mr) / 2.0,
        h - 10.0,
        esc(unit)
    );
    s.push_str("</svg>");
    s
}

/// Colours for the series of a line chart, in order (ColorBrewer's Set1 and Dark2).
const SERIES: [&str; 12] = [
    "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628", "#f781bf", "#999999",
    "#1b9e77", "#d95f02", "#7570b3", "#66a61e",
];

/// The stroke of the series past each round of [`SERIES`]: solid, dashed, dotted.
const DASHES: [&str; 3] = [
    "",
    r#" stroke-dasharray="6 3""#,
    r#" stroke-dasharray="2 2""#,
];

/// A log-log line chart: a line and its points per series, x and y on log scales, a legend
/// to the right. Non-finite and non-positive values are left out.
pub fn lines(title: &str, x_unit: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.1.iter().filter(plottable).copied())
        .collect();
    let (x0, x1) = decades(&mut all.iter().map(|p| p.0));
    let (y0, y1) = decades(&mut all.iter().map(|p| p.1));
    let f = Frame::for_lines((x0, x1.max(x0 * 10.0)), (y0, y1.max(y0 * 10.0)));
    let mut s = f.open("lines", title);
    f.decade_grid(&mut s);
    for (i, (name, pts)) in series.iter().enumerate() {
        f.series(&mut s, i, name, pts, x_unit);
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text></svg>"#,
        (f.ml + f.w - f.mr) / 2.0,
        f.h - 12.0,
        esc(x_unit)
    );
    s
}

/// A point a log-log chart can place: both coordinates finite and positive.
fn plottable(p: &&(f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite() && p.0 > 0.0 && p.1 > 0.0
}

/// The whole decades around `v`'s values; 1 to 10 when it has none.
fn decades(v: &mut dyn Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    if lo.is_finite() && hi > 0.0 {
        (
            10f64.powf(lo.log10().floor()),
            10f64.powf(hi.log10().ceil()),
        )
    } else {
        (1.0, 10.0)
    }
}

impl Frame {
    /// The line chart's frame: log axes over `x` and `y`, the legend at the right.
    fn for_lines((x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> Frame {
        Frame {
            area: Area {
                w: 820.0,
                h: 420.0,
                ml: 70.0,
                mr: 190.0,
                mt: 40.0,
                mb: 50.0,
            },
            x0,
            x1,
            y0,
            y1,
        }
    }

    /// Decade grid lines with their labels, on both axes.
    fn decade_grid(&self, s: &mut String) {
        let (ml, mt, w, h, mr, mb) = (self.ml, self.mt, self.w, self.h, self.mr, self.mb);
        let mut d = self.x0;
        while d <= self.x1 * 1.0001 {
            let x = self.px(d);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{mt}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
                h - mb,
                h - mb + 16.0,
                tick(d)
            );
            d *= 10.0;
        }
        let mut d = self.y0;
        while d <= self.y1 * 1.0001 {
            let y = self.py(d);
            let _ = write!(
                s,
                r##"<line x1="{ml}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
                w - mr,
                ml - 6.0,
                y + 4.0,
                tick(d)
            );
            d *= 10.0;
        }
    }

    /// Series `i`: its line, a point with its value to hover at each, its legend entry.
    fn series(&self, s: &mut String, i: usize, name: &str, pts: &[(f64, f64)], x_unit: &str) {
        let c = SERIES[i % SERIES.len()];
        // Past the colours, the same colours dashed, then dotted: 36 series told apart.
        let dash = DASHES[(i / SERIES.len()) % DASHES.len()];
        let pts: Vec<&(f64, f64)> = pts.iter().filter(plottable).collect();
        let path: Vec<String> = pts
            .iter()
            .map(|p| format!("{:.1},{:.1}", self.px(p.0), self.py(p.1)))
            .collect();
        if path.len() > 1 {
            let _ = write!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"#,
                path.join(" ")
            );
        }
        for p in &pts {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}: {} at {} {}</title></circle>"#,
                self.px(p.0),
                self.py(p.1),
                esc(name),
                money(p.1),
                money(p.0),
                esc(x_unit)
            );
        }
        let ly = self.mt + 16.0 * i as f64;
        let _ = write!(
            s,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}" stroke-width="3"{dash}/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            self.w - self.mr + 8.0,
            ly + 5.5,
            self.w - self.mr + 22.0,
            ly + 5.5,
            self.w - self.mr + 26.0,
            ly + 9.0,
            esc(name)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_wellformed_svg_with_content() {
        let r = roofline(
            "x <test>",
            &[("STREAM triad".into(), 10.0, false)],
            &[
                Ceiling {
                    label: "FP32".into(),
                    gflops: 70.0,
                    datasheet: false,
                },
                Ceiling {
                    label: "FP32 peak".into(),
                    gflops: 200.0,
                    datasheet: true,
                },
            ],
            &[Point {
                label: "1024".into(),
                intensity: 170.0,
                gflops: 69.0,
            }],
        );
        assert!(r.starts_with("<svg") && r.ends_with("</svg>"));
        assert!(
            r.contains("&lt;test&gt;") && r.contains("<circle") && r.contains("stroke-dasharray")
        );
        let b = bars(
            "v",
            "jobs",
            &[
                Bar {
                    label: "a".into(),
                    value: 2.0,
                    estimated: true,
                },
                Bar {
                    label: "b".into(),
                    value: 1.0,
                    estimated: false,
                },
            ],
        );
        assert_eq!(b.matches("<rect x=\"330\"").count(), 3); // legend swatch + 2 bars
    }

    #[test]
    fn extreme_values_end_and_stay_small() {
        for v in [
            5e307,
            5e304 * 1e3,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
            0.0,
            -1.0,
            1e-300,
        ] {
            let c = |gflops| Ceiling {
                label: "x".into(),
                gflops,
                datasheet: true,
            };
            let r = roofline(
                "t",
                &[("bw".into(), v, false)],
                &[c(v), c(70.0)],
                &[Point {
                    label: "p".into(),
                    intensity: v,
                    gflops: v,
                }],
            );
            assert!(r.len() < 100_000, "{v}: {} bytes", r.len());
            let b = bars(
                "t",
                "u",
                &[Bar {
                    label: "a".into(),
                    value: v,
                    estimated: false,
                }],
            );
            assert!(b.len() < 10_000, "{v}");
        }
    }
}
