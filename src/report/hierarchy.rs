//! The memory hierarchy in a report: each curve of the `hierarchy` probe (read bandwidth,
//! load latency) against working-set size as an SVG line chart (log2 x, log y), the stated
//! caches as dashed verticals and the steps found (`crate::measuring::cache_levels::steps`) marked and
//! named; and the steps as text for the terminal and Markdown.

use super::fmt::esc;
use super::svg::Area;
use crate::figure::FigureKey;
use crate::measuring::cache_levels::{Cache, Step, size, steps};
use crate::results::{ProbeResult, ResultsFile, Status};
use std::fmt::Write;

/// One measured curve of a results file: its figure, points (bytes, value) by size, the
/// stated caches the probe recorded, and its steps.
pub struct Curve {
    pub figure: FigureKey,
    pub points: Vec<(u64, f64)>,
    pub stated: Vec<Cache>,
    pub steps: Vec<Step>,
}

/// The file's hierarchy curves (bandwidth, latency), those with at least two valid points.
pub fn curves(r: &ResultsFile) -> Vec<Curve> {
    let mut out = Vec::new();
    for figure in [FigureKey::HierarchyRead, FigureKey::HierarchyLatency] {
        let mut points = Vec::new();
        let mut stated: Vec<Cache> = Vec::new();
        for p in &r.probes {
            if p.figure != Some(figure) || p.status != Status::Ok {
                continue;
            }
            let bytes = p.params.get("bytes").and_then(|v| v.as_u64());
            if let (Some(b), Some(v)) = (bytes, p.value.as_ref()) {
                points.push((b, v.median));
            }
            if stated.is_empty()
                && let Some(s) = p.params.get("stated_caches")
            {
                stated = serde_json::from_value(s.clone()).unwrap_or_default();
            }
        }
        points.sort_by_key(|p| p.0);
        if points.len() >= 2 {
            let steps = steps(&points, figure.info().higher_is_better, &stated);
            out.push(Curve {
                figure,
                points,
                stated,
                steps,
            });
        }
    }
    out
}

/// One line a step: "L2 (2 MiB stated): 1 MiB, 15.1 -> 22.5 ns".
pub fn step_lines(c: &Curve) -> Vec<String> {
    let unit = c.figure.info().unit;
    c.steps
        .iter()
        .map(|s| {
            let name = match &s.level {
                Some(l) => {
                    let stated = c.stated.iter().find(|x| &x.level == l);
                    format!(
                        "{l} ({} stated)",
                        stated.map_or("?".into(), |x| size(x.bytes))
                    )
                }
                None => "unnamed step (no stated cache within 2x)".into(),
            };
            format!(
                "{name}: past {}, {:.1} -> {:.1} {unit}",
                size(s.bytes),
                s.before,
                s.after
            )
        })
        .collect()
}

/// The curve as an SVG chart.
pub fn chart(title: &str, c: &Curve) -> String {
    let p = Plot::new(c);
    let (w, h, ml) = (p.w, p.h, p.ml);
    let mut s = p.open("hierarchy", title);
    p.grid(&mut s, c);
    p.stated(&mut s, c);
    p.curve(&mut s, c);
    p.steps(&mut s, c);
    let unit = c.figure.info().unit;
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">working set</text><text x="14" y="{:.1}" font-size="12" transform="rotate(-90 14 {:.1})" text-anchor="middle">{unit}</text></svg>"#,
        (ml + w - p.mr) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    );
    s
}

/// A curve's plot area: working sets on a log2 axis, values on whole decades.
struct Plot {
    area: Area,
    /// log2 of the smallest and largest working set.
    x0: f64,
    x1: f64,
    /// The decades (log10) at the bottom and top.
    lo: f64,
    hi: f64,
}

impl std::ops::Deref for Plot {
    type Target = Area;
    fn deref(&self) -> &Area {
        &self.area
    }
}

impl Plot {
    fn new(c: &Curve) -> Plot {
        let vals = c.points.iter().map(|p| p.1).filter(|v| *v > 0.0);
        let lo = vals.clone().fold(f64::INFINITY, f64::min).log10().floor();
        Plot {
            area: Area {
                w: 820.0,
                h: 360.0,
                ml: 70.0,
                mr: 30.0,
                mt: 40.0,
                mb: 50.0,
            },
            x0: (c.points[0].0 as f64).log2(),
            x1: (c.points[c.points.len() - 1].0 as f64).log2(),
            lo,
            hi: vals.fold(0.0, f64::max).log10().ceil().max(lo + 1.0),
        }
    }

    fn x(&self, b: f64) -> f64 {
        self.ml + (b.log2() - self.x0) / (self.x1 - self.x0).max(1.0) * (self.w - self.ml - self.mr)
    }

    fn y(&self, v: f64) -> f64 {
        self.h
            - self.mb
            - (v.log10() - self.lo) / (self.hi - self.lo) * (self.h - self.mt - self.mb)
    }

    /// Decades on y, every other power of two on x.
    fn grid(&self, s: &mut String, c: &Curve) {
        let (ml, w, h, mr, mb) = (self.ml, self.w, self.h, self.mr, self.mb);
        for d in (self.lo as i32)..=(self.hi as i32) {
            let v = 10f64.powi(d);
            let _ = write!(
                s,
                r##"<line x1="{ml}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
                w - mr,
                self.y(v),
                self.y(v),
                ml - 6.0,
                self.y(v) + 4.0,
                crate::report::fmt::tick(v)
            );
        }
        for (b, _) in c.points.iter().step_by(2) {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                self.x(*b as f64),
                h - mb + 16.0,
                esc(&size(*b))
            );
        }
    }

    /// A dashed line at each stated cache within the plot, its source in a tooltip.
    fn stated(&self, s: &mut String, c: &Curve) {
        for cache in &c.stated {
            let cx = self.x(cache.bytes as f64);
            if cx < self.ml || cx > self.w - self.mr {
                continue;
            }
            let _ = write!(
                s,
                r##"<line x1="{cx:.1}" x2="{cx:.1}" y1="{}" y2="{:.1}" stroke="#888" stroke-dasharray="4 3"><title>{} stated: {} ({})</title></line><text x="{:.1}" y="{:.1}" font-size="11" fill="#555">{} {}</text>"##,
                self.mt,
                self.h - self.mb,
                esc(&cache.level),
                esc(&size(cache.bytes)),
                esc(&cache.source),
                cx + 3.0,
                self.mt + 10.0,
                esc(&cache.level),
                esc(&size(cache.bytes))
            );
        }
    }

    /// The measured points, joined, each with its value to hover.
    fn curve(&self, s: &mut String, c: &Curve) {
        let path: Vec<String> = c
            .points
            .iter()
            .map(|(b, v)| format!("{:.1},{:.1}", self.x(*b as f64), self.y(*v)))
            .collect();
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#08519c" stroke-width="2"/>"##,
            path.join(" ")
        );
        let unit = c.figure.info().unit;
        for (b, v) in &c.points {
            let _ = write!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="#08519c"><title>{}: {v:.2} {unit}</title></circle>"##,
                self.x(*b as f64),
                self.y(*v),
                esc(&size(*b))
            );
        }
    }

    /// A marker over each step found, named by the cache it matches.
    fn steps(&self, s: &mut String, c: &Curve) {
        for st in &c.steps {
            let label = st.level.clone().unwrap_or_else(|| "step".into());
            let _ = write!(
                s,
                r##"<text x="{:.1}" y="{:.1}" font-size="12" fill="#b30000" text-anchor="middle">▼ {}</text>"##,
                self.x(st.bytes as f64),
                self.y(st.before) - 8.0,
                esc(&label)
            );
        }
    }
}

/// The file's hierarchy as HTML: each curve's chart and its steps; empty without curves.
pub fn html(r: &ResultsFile) -> String {
    let mut s = String::new();
    for c in curves(r) {
        let what = match c.figure {
            FigureKey::HierarchyRead => "Read bandwidth",
            _ => "Dependent-load latency",
        };
        let title = format!("{what} against working set: {}", r.adapter.name);
        let _ = write!(s, "<figure>{}<figcaption>", chart(&title, &c));
        let lines = step_lines(&c);
        if lines.is_empty() {
            s.push_str("No step found.");
        } else {
            s.push_str(&esc(&lines.join("; ")));
        }
        s.push_str(if c.stated.is_empty() {
            " No cache size is stated for this device.</figcaption></figure>"
        } else {
            " Dashed: the caches as stated (sources in their tooltips).</figcaption></figure>"
        });
    }
    s
}

/// A probe as the summary tables show it: the probe, the name it is shown under and, for a
/// level of the memory hierarchy, what the level covers.
pub struct Shown<'a> {
    pub probe: &'a ProbeResult,
    pub name: String,
    pub note: Option<String>,
}

/// The file's probes as the terminal table and the Markdown report list them: each
/// hierarchy curve as one row per level found (the measured size at each step, then the
/// largest size), in place of its 10-20 sizes; `all`: every probe as measured. A
/// hierarchy size that failed, and a curve with too few sizes for steps, stay as measured.
pub fn shown(r: &ResultsFile, all: bool) -> Vec<Shown<'_>> {
    let curves = if all { Vec::new() } else { curves(r) };
    let mut out = Vec::new();
    let mut done: Vec<FigureKey> = Vec::new();
    for p in &r.probes {
        let curve = curves
            .iter()
            .find(|c| Some(c.figure) == p.figure && p.status == Status::Ok);
        match curve {
            None => out.push(Shown {
                probe: p,
                name: p.name.clone(),
                note: None,
            }),
            Some(c) if !done.contains(&c.figure) => {
                done.push(c.figure);
                out.extend(levels(r, c));
            }
            Some(_) => {}
        }
    }
    out
}

/// One row a level of `c`: the measured size at each step (the largest still on the fast
/// side), then the largest size measured.
fn levels<'a>(r: &'a ResultsFile, c: &Curve) -> Vec<Shown<'a>> {
    let what = match c.figure {
        FigureKey::HierarchyRead => "hierarchy read",
        _ => "hierarchy latency",
    };
    let at = |bytes: u64| {
        r.probes.iter().find(|p| {
            p.figure == Some(c.figure)
                && p.status == Status::Ok
                && p.params.get("bytes").and_then(|v| v.as_u64()) == Some(bytes)
        })
    };
    let mut out = Vec::new();
    for (i, st) in c.steps.iter().enumerate() {
        let Some(p) = at(st.bytes) else { continue };
        let level = st
            .level
            .clone()
            .unwrap_or_else(|| format!("level {}", i + 1));
        let stated = st
            .level
            .as_ref()
            .and_then(|l| c.stated.iter().find(|x| &x.level == l))
            .map_or("no stated cache within 2x".to_string(), |x| {
                format!("{} stated", size(x.bytes))
            });
        out.push(Shown {
            probe: p,
            name: format!("{what}: {level} to {}", size(st.bytes)),
            note: Some(stated),
        });
    }
    let (largest, _) = c.points[c.points.len() - 1];
    if let Some(p) = at(largest) {
        let beyond = c.stated.iter().all(|x| largest >= 2 * x.bytes);
        let name = if beyond && !c.stated.is_empty() {
            format!("{what}: memory at {}", size(largest))
        } else {
            format!("{what}: largest set {}", size(largest))
        };
        out.push(Shown {
            probe: p,
            name,
            note: None,
        });
    }
    if let Some(first) = out.first_mut() {
        let sizes = format!(
            "{} sizes from {} to {}: `show --all`, the HTML chart",
            c.points.len(),
            size(c.points[0].0),
            size(largest)
        );
        first.note = Some(match first.note.take() {
            Some(n) => format!("{n}; {sizes}"),
            None => sizes,
        });
    }
    out
}
