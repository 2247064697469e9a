//! `rank --side-by-side`: the cost levers per instance, as a terminal table, Markdown and
//! CSV (JSON is the view's serde form).

use super::fmt::{csv_cell, md, percent, sig};
use super::rank::{View, hours, summary_lines};
use crate::market::catalog::PricingModel;
use crate::value::levers::{LeverRow, Levers, MODELS};
use tabled::settings::Style;

/// The column heading of each pricing model.
fn heading(m: PricingModel) -> &'static str {
    match m {
        PricingModel::OnDemand => "on demand",
        PricingModel::Spot => "spot",
        PricingModel::Reserved1y => "1-year",
        PricingModel::Reserved3y => "3-year",
    }
}

/// A model's cell: the cost per job, with the spot band ("?" where none is published and
/// the worst is assumed) or a commitment's break-even utilisation ("@63%"); "-" where the
/// instance has no such price.
fn cell(r: &LeverRow, m: PricingModel) -> String {
    let Some(c) = r.costs.get(&m) else {
        return "-".into();
    };
    let mut s = sig(c.cost_per_job);
    if !c.warnings.is_empty() {
        s.push('*');
    }
    if let Some(k) = &c.spot {
        s.push_str(&format!(
            " ({}{})",
            k.band.label(),
            if k.assumed { "?" } else { "" }
        ));
    }
    if let Some(b) = c.break_even {
        s.push_str(&format!(" @{}", percent(b)));
    }
    s
}

fn best(r: &LeverRow) -> &'static str {
    match r.cheapest {
        PricingModel::OnDemand => "on demand",
        PricingModel::Spot => "spot",
        PricingModel::Reserved1y => "1-year",
        PricingModel::Reserved3y => "3-year",
    }
}

fn instance(r: &LeverRow) -> String {
    format!("{} {} ({})", r.provider, r.instance_type, r.region)
}

/// The lines under the table: the job and model (as the on-demand ranking says them), how
/// each lever is costed, and what is not shown.
fn notes(l: &Levers, shown: usize) -> Vec<String> {
    let mut v: Vec<String> = summary_lines(&l.on_demand, 0, true)
        .into_iter()
        .filter(|x| x.starts_with("Assumption:") || x.starts_with("Model:"))
        .collect();
    let cp = l
        .rows
        .iter()
        .find_map(|r| r.costs.get(&PricingModel::Spot)?.spot.as_ref());
    v.push(format!(
        "Costs per job in {c}. On demand: the hours used. Spot: the expected cost with the work lost to interruptions and redone, and the band of instances interrupted a month (\"?\": none published, the worst assumed; {}). 1- and 3-year commitments are paid for every hour of the term: the cost per job is at {u} of its hours used{how}, and \"@63%\" is the utilisation above which the commitment beats on demand (committed / on-demand price per hour).",
        cp.map_or("a checkpoint as --checkpoint-every says".to_string(), |k| format!(
            "a checkpoint every {}, {} to restart",
            hours(k.checkpointing.every_hours),
            hours(k.checkpointing.restart_hours)
        )),
        c = l.currency,
        u = percent(l.utilisation),
        how = if l.utilisation < 1.0 { " (--utilisation)" } else { " (--utilisation to change)" }
    ));
    let steady = l
        .on_demand
        .scenario
        .job
        .as_ref()
        .and_then(|j| j.steady_hours)
        .is_some();
    if steady
        && l.rows
            .iter()
            .any(|r| r.cheapest == crate::market::catalog::PricingModel::Spot)
    {
        v.push(format!(
            "Spot for a steady rate: each interruption takes an instance out for the restart time ({}): the spot column counts the requests in flight lost, not the traffic nobody serves while it restarts; an endpoint that must keep up needs a spare on demand (or on another spot pool) beside it.",
            cp.map_or("--restart-time".to_string(), |k| hours(k.checkpointing.restart_hours))
        ));
    }
    let mut dates: Vec<String> = Vec::new();
    for m in MODELS {
        let mut d: Vec<&str> = l
            .rows
            .iter()
            .filter_map(|r| r.costs.get(&m).map(|c| c.price_as_of.as_str()))
            .collect();
        d.sort_unstable();
        d.dedup();
        if let (Some(first), Some(last)) = (d.first(), d.last()) {
            dates.push(if first == last {
                format!("{} {first}", heading(m))
            } else {
                format!("{} {first}..{last}", heading(m))
            });
        }
    }
    v.push(format!("Prices as of: {}.", dates.join("; ")));
    let flagged = l
        .rows
        .iter()
        .flat_map(|r| r.costs.values())
        .filter(|c| !c.warnings.is_empty())
        .count();
    if flagged > 0 {
        v.push(format!(
            "* {flagged} price(s) carry a catalog warning (a stale price or band, an outlier): `rank --price MODEL --details` lists each."
        ));
    }
    if l.ranked_total > shown {
        v.push(format!(
            "Not shown: {} more (--top N).",
            l.ranked_total - shown
        ));
    }
    v
}

/// The view as a terminal table: `view.rows` instances, cheapest way first.
pub fn table(l: &Levers, view: View) -> String {
    let shown = &l.rows[..l.rows.len().min(view.rows)];
    let mut b = tabled::builder::Builder::default();
    let mut head = vec![
        "#".to_string(),
        "instance".into(),
        "GPUs".into(),
        "time/job".into(),
    ];
    head.extend(MODELS.iter().map(|m| heading(*m).to_string()));
    head.push("cheapest".into());
    b.push_record(head);
    for (i, r) in shown.iter().enumerate() {
        let mut rec = vec![
            (i + 1).to_string(),
            instance(r),
            format!("{} x {}", r.gpu_count, r.gpu_name),
            hours(r.hours_per_job),
        ];
        rec.extend(MODELS.iter().map(|m| cell(r, *m)));
        rec.push(best(r).into());
        b.push_record(rec);
    }
    let mut t = b.build();
    t.with(Style::rounded());
    let mut out = format!(
        "{}: {} (cost per job in {}, each way to pay)\n",
        l.scenario, l.job, l.currency
    );
    out.push_str(&super::term::fit(t));
    out.push('\n');
    for n in notes(l, shown.len()) {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

pub fn markdown(l: &Levers) -> String {
    let mut out = format!(
        "**{}: {}** (cost per job in {}, each way to pay)\n\n| # | instance | GPUs | time/job |",
        md(&l.scenario),
        md(&l.job),
        md(&l.currency)
    );
    for m in MODELS {
        out.push_str(&format!(" {} |", heading(m)));
    }
    out.push_str(" cheapest |\n|---|---|---|---|---|---|---|---|---|\n");
    for (i, r) in l.rows.iter().enumerate() {
        out.push_str(&format!(
            "| {} | {} | {} x {} | {} |",
            i + 1,
            md(&instance(r)),
            r.gpu_count,
            md(&r.gpu_name),
            hours(r.hours_per_job)
        ));
        for m in MODELS {
            out.push_str(&format!(" {} |", md(&cell(r, m))));
        }
        out.push_str(&format!(" {} |\n", best(r)));
    }
    out.push('\n');
    for n in notes(l, l.rows.len()) {
        out.push_str(&format!("{}  \n", md(&n)));
    }
    out
}

/// One record per instance and pricing model it has.
pub fn csv(l: &Levers) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "provider",
        "instance_type",
        "region",
        "gpu_name",
        "gpu_count",
        "pricing",
        "currency",
        "price_per_hour",
        "hours_per_job",
        "cost_per_job",
        "break_even_utilisation",
        "spot_interruption_band",
        "price_as_of",
        "cheapest",
    ])?;
    for r in &l.rows {
        for (m, c) in &r.costs {
            w.write_record([
                csv_cell(&r.provider),
                csv_cell(&r.instance_type),
                csv_cell(&r.region),
                csv_cell(&r.gpu_name),
                r.gpu_count.to_string(),
                m.name().into(),
                csv_cell(&l.currency),
                c.price_per_hour.to_string(),
                c.hours_per_job.to_string(),
                c.cost_per_job.to_string(),
                c.break_even.map_or(String::new(), |b| b.to_string()),
                c.spot.as_ref().map_or(String::new(), |k| {
                    format!(
                        "{}{}",
                        k.band.label(),
                        if k.assumed { " assumed" } else { "" }
                    )
                }),
                csv_cell(&c.price_as_of),
                (*m == r.cheapest).to_string(),
            ])?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
