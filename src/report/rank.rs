//! Ranking output: terminal table, Markdown, CSV (JSON is the report's serde form).

use super::fmt::{csv_cell, figure, md, money};
use crate::rank::{RankReport, Source};
use tabled::settings::Style;
use tabled::{Table, Tabled};

fn hours(h: f64) -> String {
    if h >= 48.0 {
        format!("{:.1} d", h / 24.0)
    } else if h >= 1.0 {
        format!("{h:.2} h")
    } else {
        format!("{:.1} min", h * 60.0)
    }
}

fn basis(s: Source) -> &'static str {
    match s {
        Source::Measured => "measured",
        Source::Estimated => "estimated",
        Source::Assumed => "assumed",
    }
}

#[derive(Tabled)]
struct Row {
    #[tabled(rename = "#")]
    rank: usize,
    instance: String,
    gpus: String,
    figures: String,
    #[tabled(rename = "price/h")]
    price: String,
    #[tabled(rename = "time/job")]
    time: String,
    #[tabled(rename = "cost/job")]
    cost: String,
    #[tabled(rename = "jobs per 1000")]
    value: String,
    budget: String,
    notes: String,
}

fn figures_text(r: &crate::rank::RankRow) -> String {
    let mut s = format!("[{}]", basis(r.basis));
    for f in &r.figures {
        s.push_str(&format!(
            "\n{} {} {}\n  {}",
            f.figure,
            figure(f.value),
            f.unit,
            f.short
        ));
    }
    s
}

/// The figures a row used, on one line: name, value per GPU, and how it was found.
pub fn figures_used(r: &crate::rank::RankRow) -> String {
    r.figures
        .iter()
        .map(|f| format!("{} {} {} ({})", f.figure, figure(f.value), f.unit, f.short))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Heading lines shared by the table and Markdown forms.
fn heading(r: &RankReport) -> Vec<String> {
    let mut v = vec![
        format!("Scenario {}: {}", r.scenario.id, r.scenario.description),
        format!("Job: {}", r.job),
    ];
    if let Some(j) = &r.scenario.job {
        v.push(format!("Assumption: {}", j.assumption));
    }
    v.push(format!("Model: {}", r.scenario.model_line()));
    v.push(format!(
        "Prices: {} in {} ({})",
        r.pricing, r.currency, r.currency_rate
    ));
    for e in &r.efficiencies {
        v.push(format!(
            "Efficiency of {} on {}: {:.2}, {} ({})",
            e.figure, e.applies_to, e.factor, e.origin, e.basis
        ));
    }
    if !r.efficiencies.is_empty() {
        v.push("Estimates are datasheet peak x efficiency; `gpuvalue calibration` recomputes every published point behind the factors.".into());
    }
    for n in &r.measurement_notes {
        v.push(format!("Measurement flagged: {n}"));
    }
    v
}

/// The ranking as a terminal table; `list_excluded` lists every instance not ranked (else
/// one line counts them).
pub fn table(r: &RankReport, list_excluded: bool) -> String {
    let rows: Vec<Row> = r
        .rows
        .iter()
        .map(|x| Row {
            rank: x.rank,
            instance: format!("{} {}\n{}", x.provider, x.instance_type, x.region),
            gpus: format!("{} x {}", x.gpu_count, x.gpu_name),
            figures: figures_text(x),
            price: format!(
                "{} {}\n{} ({})",
                money(x.price_per_hour),
                x.currency,
                x.price_as_of,
                tier_and_confidence(x)
            ),
            time: hours(x.hours_per_job),
            cost: format!("{} {}", money(x.cost_per_job), x.currency),
            value: format!("{:.2}", 1000.0 * x.jobs_per_currency_unit),
            budget: match (x.budget_hours, x.budget_jobs) {
                (Some(h), Some(j)) => format!("{} / {j:.2} jobs", hours(h)),
                _ => "-".into(),
            },
            notes: x.warnings.join("; "),
        })
        .collect();
    let mut out = heading(r).join("\n");
    out.push('\n');
    out.push_str(&Table::new(rows).with(Style::rounded()).to_string());
    out.push('\n');
    out.push_str(&machines_text(r));
    if !r.excluded.is_empty() && list_excluded {
        out.push_str(&format!("\nNot ranked ({}):\n", r.excluded.len()));
        for e in &r.excluded {
            out.push_str(&format!("  {}: {}\n", e.instance, e.reason));
        }
    } else if !r.excluded.is_empty() {
        out.push_str(&format!(
            "{} catalog instances not ranked (no price of this kind, reported prices without --include-reported, retired types, missing figures, catalog errors): `gpuvalue rank --scenario {}` lists them\n",
            r.excluded.len(),
            r.scenario.id
        ));
    }
    out
}

/// Where each measured machine stands: its time per job and how many instances beat it.
fn machines_text(r: &RankReport) -> String {
    let mut out = String::new();
    for m in &r.machines {
        out.push_str(&format!("Measured machine: {}\n", machine_line(r, m)));
    }
    out
}

/// One measured machine's place: adapter, catalog match, file, and its time per job with
/// how many ranked instances are faster.
pub fn machine_line(r: &RankReport, m: &crate::rank::Machine) -> String {
    let place = match (m.hours_per_job, m.instances_faster) {
        (Some(h), Some(faster)) => {
            format!(
                "{} per job; {faster} of {} ranked instances are faster than this machine",
                hours(h),
                r.ranked_total
            )
        }
        _ => "a figure this scenario needs was not measured".into(),
    };
    let cat = match &m.catalog_gpu {
        Some(g) => format!("catalog GPU {g}"),
        None => "not in catalog".into(),
    };
    format!(
        "{}{} ({cat}, {}): {place}",
        m.adapter,
        if m.software {
            " [software adapter]"
        } else {
            ""
        },
        m.file
    )
}

/// The ranking as Markdown: heading lines, one table row per instance, the machines.
pub fn markdown(r: &RankReport) -> String {
    let mut out = String::new();
    for l in heading(r) {
        out.push_str(&format!("{}  \n", md(&l)));
    }
    out.push_str(&format!(
        "\n| # | instance | region | GPUs | basis | figures used (per GPU) | price/h ({c}) | time/job | cost/job ({c}) | jobs per 1000 {c} |\n|---|---|---|---|---|---|---|---|---|---|\n",
        c = md(&r.currency)
    ));
    for x in &r.rows {
        out.push_str(&format!(
            "| {} | {} {} | {} | {} x {} | {} | {} | {} | {} | {} | {:.2} |\n",
            x.rank,
            md(&x.provider),
            md(&x.instance_type),
            md(&x.region),
            x.gpu_count,
            md(&x.gpu_name),
            basis(x.basis),
            md(&figures_used(x)),
            price_cell(x),
            hours(x.hours_per_job),
            money(x.cost_per_job),
            1000.0 * x.jobs_per_currency_unit
        ));
    }
    let m = machines_text(r);
    if !m.is_empty() {
        out.push('\n');
        for l in m.lines() {
            out.push_str(&format!("{}  \n", md(l)));
        }
    }
    out
}

/// The ranking as CSV, one record per instance, cells safe for spreadsheets.
pub fn csv(r: &RankReport) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rank",
        "provider",
        "instance_type",
        "region",
        "gpu",
        "gpu_count",
        "basis",
        "pricing",
        "currency",
        "price_per_hour",
        "hours_per_job",
        "cost_per_job",
        "jobs_per_currency_unit",
        "budget_hours",
        "budget_jobs",
        "price_as_of",
        "price_confidence",
        "price_tier",
        "figures",
        "warnings",
    ])?;
    for x in &r.rows {
        let figs: Vec<String> = x
            .figures
            .iter()
            .map(|f| {
                format!(
                    "{}={:.6} {} ({}: {})",
                    f.figure,
                    f.value,
                    f.unit,
                    basis(f.source),
                    f.short
                )
            })
            .collect();
        w.write_record([
            x.rank.to_string(),
            csv_cell(&x.provider),
            csv_cell(&x.instance_type),
            csv_cell(&x.region),
            csv_cell(&x.gpu),
            x.gpu_count.to_string(),
            basis(x.basis).to_string(),
            x.pricing.clone(),
            csv_cell(&x.currency),
            format!("{}", x.price_per_hour),
            format!("{}", x.hours_per_job),
            format!("{}", x.cost_per_job),
            format!("{}", x.jobs_per_currency_unit),
            x.budget_hours.map(|v| v.to_string()).unwrap_or_default(),
            x.budget_jobs.map(|v| v.to_string()).unwrap_or_default(),
            csv_cell(&x.price_as_of),
            x.price_confidence.clone(),
            x.price_tier.clone(),
            csv_cell(&figs.join("; ")),
            csv_cell(&x.warnings.join("; ")),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// A price, marked when it is `reported` (unverified).
fn price_cell(x: &crate::rank::RankRow) -> String {
    if x.price_tier == "reported" {
        format!("{} (REPORTED)", money(x.price_per_hour))
    } else {
        money(x.price_per_hour)
    }
}

/// The price's provenance for people: `list, high` or `REPORTED, low` (unverified).
pub fn tier_and_confidence(x: &crate::rank::RankRow) -> String {
    if x.price_tier == "reported" {
        format!("REPORTED, {}", x.price_confidence)
    } else {
        format!("{}, {}", x.price_tier, x.price_confidence)
    }
}
