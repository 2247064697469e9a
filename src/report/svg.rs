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
    let (w, h, ml, mr, mt, mb) = (820.0, 420.0, 70.0, 270.0, 40.0, 50.0);
    let (x0, x1) = (0.0625f64, 1024.0f64);
    let top = ceilings
        .iter()
        .map(|c| c.gflops)
        .chain(points.iter().map(|p| p.gflops))
        .fold(1.0, f64::max);
    let (y0, y1) = (0.1f64, 10f64.powf((top * 2.0).log10().ceil()));
    let px = |x: f64| ml + (x.log10() - x0.log10()) / (x1.log10() - x0.log10()) * (w - ml - mr);
    let py = |y: f64| h - mb - (y.log10() - y0.log10()) / (y1.log10() - y0.log10()) * (h - mt - mb);
    let mut s = String::new();
    open_svg(&mut s, "roofline", w, h, title);
    let _ = write!(
        s,
        r#"<text x="{}" y="22" font-size="15" font-weight="bold">{}</text>"#,
        ml,
        esc(title)
    );
    // Grid and ticks (decades).
    let mut x = x0;
    while x <= x1 * 1.0001 {
        let (xx, yb, yt, label) = (px(x), h - mb, h - mb + 15.0, tick(x));
        let _ = write!(
            s,
            r##"<line x1="{xx:.1}" y1="{mt}" x2="{xx:.1}" y2="{yb}" stroke="#ddd"/><text x="{xx:.1}" y="{yt}" font-size="11" text-anchor="middle">{label}</text>"##
        );
        x *= 4.0;
    }
    let mut y = y0;
    while y <= y1 * 1.0001 {
        let (yy, xr, xt, label) = (py(y), w - mr, ml - 5.0, tick(y));
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
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];
    let mut legend_y = mt + 10.0;
    let mut legend = |s: &mut String, color: &str, dashed: bool, label: &str| {
        let dash = if dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{legend_y}" x2="{}" y2="{legend_y}" stroke="{color}" stroke-width="2"{dash}/><text x="{}" y="{}" font-size="11">{}</text>"#,
            w - mr + 8.0,
            w - mr + 28.0,
            w - mr + 32.0,
            legend_y + 4.0,
            esc(label)
        );
        legend_y += 18.0;
    };
    let peak = ceilings
        .iter()
        .filter(|c| !c.datasheet)
        .map(|c| c.gflops)
        .fold(0.0, f64::max)
        .max(1.0);
    for (bw_label, gbps, datasheet) in bandwidths {
        // The slope y = bandwidth * intensity, up to the highest ceiling.
        let xe = (ceilings.iter().map(|c| c.gflops).fold(peak, f64::max) / gbps).min(x1);
        let xs = (y0 / gbps).max(x0);
        let dash = if *datasheet {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#555" stroke-width="2"{dash}/>"##,
            px(xs),
            py(gbps * xs),
            px(xe),
            py(gbps * xe)
        );
        legend(
            &mut s,
            "#555",
            *datasheet,
            &format!("{bw_label}: {gbps:.1} GB/s"),
        );
    }
    for (i, c) in ceilings.iter().enumerate() {
        let color = colors[i % colors.len()];
        let dash = if c.datasheet {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{color}" stroke-width="2"{dash}/>"#,
            ml,
            py(c.gflops),
            w - mr,
            py(c.gflops)
        );
        legend(
            &mut s,
            color,
            c.datasheet,
            &format!("{}: {:.1}", c.label, c.gflops),
        );
    }
    for p in points {
        let _ = write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="4" fill="#000"><title>{}</title></circle>"##,
            px(p.intensity.clamp(x0, x1)),
            py(p.gflops.max(y0)),
            esc(&p.label)
        );
    }
    s.push_str("</svg>");
    s
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
        let bw = (b.value / maxv * (w - ml - mr)).max(1.0);
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
}
