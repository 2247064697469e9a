//! `gpuvalue compare` output: terminal table and Markdown (for a pull-request comment).

use super::fmt::compared;
use crate::measuring::compare::{Comparison, Row};
use tabled::settings::Style;
use tabled::{Table, Tabled};

fn ratio(r: &Row) -> String {
    match (r.speedup, r.noise) {
        (Some(s), Some(n)) => format!("{s:.3}x (noise ±{:.1}%)", 100.0 * n),
        _ => "-".into(),
    }
}

#[derive(Tabled)]
struct Line {
    probe: String,
    base: String,
    new: String,
    unit: String,
    #[tabled(rename = "speed-up")]
    speedup: String,
    verdict: String,
}

fn lines(c: &Comparison) -> Vec<Line> {
    c.rows
        .iter()
        .map(|r| Line {
            probe: r.probe.clone(),
            base: compared(r.base),
            new: compared(r.new),
            unit: r.unit.clone(),
            speedup: ratio(r),
            verdict: if r.regression {
                format!("{} (regression)", r.verdict.name())
            } else {
                r.verdict.name().into()
            },
        })
        .collect()
}

fn heading(c: &Comparison) -> String {
    let mut s = format!(
        "BASE {}  ->  NEW {}; regression threshold {:.1}% beyond noise",
        c.base,
        c.new,
        100.0 * c.threshold
    );
    if let Some(n) = &c.adapter_note {
        s.push_str(&format!("\nWARNING: different adapters: {n}"));
    }
    for d in &c.run_differences {
        s.push_str(&format!("\nWARNING: different run parameters: {d}"));
    }
    let differ: Vec<String> = c
        .rows
        .iter()
        .filter_map(|r| Some(format!("{}: {}", r.probe, r.differs.as_ref()?)))
        .filter(|_| c.run_differences.is_empty())
        .collect();
    for d in differ {
        s.push_str(&format!(
            "\nWARNING: measured under different parameters: {d}"
        ));
    }
    if c.rows
        .iter()
        .any(|r| r.verdict == crate::measuring::compare::Verdict::NotComparable)
    {
        s.push_str("\nFigures measured under different parameters are not compared (--force compares them anyway).");
    }
    s
}

fn footer(c: &Comparison) -> String {
    let mut s = String::new();
    for g in &c.gate_failures {
        s.push_str(&format!("FAILED: {g}\n"));
    }
    s.push_str(&match c.regressions() {
        0 => "no regressions".to_string(),
        n => format!("{n} regression(s)"),
    });
    s
}

pub fn table(c: &Comparison) -> String {
    format!(
        "{}\n{}\n{}",
        heading(c),
        super::term::fit(Table::new(lines(c)).with(Style::rounded()).to_owned()),
        footer(c)
    )
}

pub fn markdown(c: &Comparison) -> String {
    use super::fmt::md;
    let mut s = format!(
        "{}\n\n| probe | base | new | unit | speed-up | verdict |\n|---|---|---|---|---|---|\n",
        heading(c).lines().map(md).collect::<Vec<_>>().join("  \n")
    );
    for l in lines(c) {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            md(&l.probe),
            l.base,
            l.new,
            md(&l.unit),
            l.speedup,
            l.verdict
        ));
    }
    for l in footer(c).lines() {
        s.push_str(&format!("\n**{}**\n", super::fmt::md(l)));
    }
    s
}
