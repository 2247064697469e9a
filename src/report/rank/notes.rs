//! The lines around a ranking's table, computed once for every form: why nothing ranks,
//! the scenario and its efficiency factors, the notes under the table (the model, prices,
//! caveats, what is not shown), the instances not ranked and the measured machines.

use super::words::{hours, link_assumed};
use crate::report::fmt::sig;
use crate::value::rank::{RankReport, RankRow, Source};

/// Instead of an empty table: why nothing ranks, by the most common reasons (an instance's
/// own numbers taken out, so "16 GB per GPU < 20002 GB required" and "24 GB ..." count as
/// one reason), each with an example.
pub fn nothing_ranks(r: &RankReport) -> String {
    let mut by: std::collections::BTreeMap<String, (usize, &str, &str)> = Default::default();
    for e in &r.excluded {
        // Each run of digits as one '#': "16 GB ... 20002 GB" and "24 GB ... 2502 GB" match.
        let mut shape = String::with_capacity(e.reason.len());
        for c in e.reason.chars() {
            let digit = c.is_ascii_digit() || (c == '.' && shape.ends_with('#'));
            if !digit {
                shape.push(c);
            } else if !shape.ends_with('#') {
                shape.push('#');
            }
        }
        let slot = by.entry(shape).or_insert((0, &e.instance, &e.reason));
        slot.0 += 1;
    }
    let mut reasons: Vec<(usize, &str, &str)> = by.into_values().collect();
    reasons.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut out = format!(
        "Nothing ranks: none of the {} instances in the catalog (after the filters) can run this job.\n",
        r.excluded.len()
    );
    for (n, inst, why) in reasons.iter().take(3) {
        out.push_str(&format!("  {n} instance(s): {why} (e.g. {inst})\n"));
    }
    if reasons.len() > 3 {
        out.push_str(&format!(
            "  {} other reason(s); `--details` lists every instance with its own.\n",
            reasons.len() - 3
        ));
    }
    if let Some(j) = &r.scenario.job {
        out.push_str(&format!("Assumption: {}\n", j.assumption));
    }
    out
}

/// A steady rate's period of traffic (its "job"), if the ranking is of one.
pub fn steady_hours(r: &RankReport) -> Option<f64> {
    r.scenario.job.as_ref().and_then(|j| j.steady_hours)
}

/// The lines that explain marks and columns of the rows shown: an assumed link, a steady
/// rate's instances.
fn mark_lines(r: &RankReport, shown: usize) -> Vec<String> {
    let mut v = Vec::new();
    if r.rows[..shown.min(r.rows.len())].iter().any(link_assumed) {
        v.push(
            "† PCIe assumed: the instance states no link between its GPUs, so its collectives run over PCIe of the GPU's generation at NCCL's model of it, an upper bound (--details says which)."
                .into(),
        );
    }
    if let Some(h) = steady_hours(r) {
        v.push(format!(
            "Steady rate: the traffic of {} h keeps each row's instances busy for all of it; a row pays for the whole instances that keep up (\"instances\", with the share of their time the traffic takes), the job's cost is all of them for {} h.",
            h, h
        ));
    }
    v
}

/// The job's data out of the cloud and the shown rows whose provider publishes no price for
/// it, by provider: "lium (#1, #5)".
fn egress_line(r: &RankReport, shown: usize) -> Option<String> {
    let e = r.scenario.egress.as_ref().filter(|e| e.gb > 0.0)?;
    let mut unpriced: Vec<(&str, Vec<String>)> = Vec::new();
    for (i, x) in r.rows.iter().take(shown).enumerate() {
        if x.egress.as_ref().is_some_and(|g| g.cost.is_none()) {
            let place = format!("#{}", i + 1);
            match unpriced.iter_mut().find(|(p, _)| *p == x.provider) {
                Some((_, at)) => at.push(place),
                None => unpriced.push((&x.provider, vec![place])),
            }
        }
    }
    let unpriced = if unpriced.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = unpriced
            .iter()
            .map(|(p, at)| format!("{p} ({})", at.join(", ")))
            .collect();
        format!(
            " Providers with no published price gpuvalue knows (their data not counted, not assumed free): {}.",
            list.join(", ")
        )
    };
    Some(format!(
        "Egress: a job takes {} GB out of the cloud ({}); a row's cost includes it at its provider's published price for data out to the internet (first paid tier, src/data/egress.json); monthly free allowances are per account and shared, not subtracted; storage beside the instance is not counted; --egress-gb states another amount.{unpriced}",
        sig(e.gb),
        e.what,
    ))
}

/// How close two costs must be to share a place, and why.
fn ties_line(r: &RankReport) -> String {
    format!(
        "Ties: costs within {:.0}% of each other share a place (\"2=\"): {}; rows on the same GPU type at the same estimate share its error, so their prices alone order them.",
        (r.uncertainty - 1.0) * 100.0,
        if r.scenario.serving.is_some() {
            "the serving model's miss on 80% of the published runs, each estimated with its whole source held out of the fit"
        } else {
            "the model's largest miss on a published point"
        }
    )
}

/// The lines under every form of the ranking (terminal, Markdown, HTML): what was
/// ranked, the model and its uncertainty, the prices and their age, the budget, notes on
/// shown rows, and what is not shown.
pub fn summary_lines(r: &RankReport, shown: usize, details: bool) -> Vec<String> {
    let mut v = model_lines(r, shown);
    v.extend(price_lines(r, shown));
    v.extend(caveat_lines(r, shown));
    v.extend(not_shown_line(r, shown, details));
    v
}

/// The job's assumption, the model, the marks and columns of the rows shown, serving's
/// notes, and how close two costs must be to tie.
fn model_lines(r: &RankReport, shown: usize) -> Vec<String> {
    let mut v = Vec::new();
    let estimated = r.rows.iter().any(|x| x.basis != Source::Measured);
    if let Some(j) = &r.scenario.job {
        v.push(format!("Assumption: {}", j.assumption));
    }
    v.push(format!(
        "Model: {}.{}",
        r.scenario.model_line(),
        if estimated {
            " Estimated rows: datasheet peak x an efficiency calibrated on published results \
             (`gpuvalue calibration`); measured rows: your results files."
        } else {
            ""
        }
    ));
    v.extend(mark_lines(r, shown));
    v.extend(crate::report::serving::notes(r));
    v.push(ties_line(r));
    v
}

/// The prices (model, currency, age, source), the filters' notes, the nodes, egress, spot
/// and budget: what the price and cost columns are made of.
fn price_lines(r: &RankReport, shown: usize) -> Vec<String> {
    let mut v = vec![format!(
        "Prices: {} per hour in {}{}; {}.",
        r.pricing.name().replace('_', "-"),
        r.currency,
        if r.currency == "USD" {
            String::new()
        } else {
            format!(" ({})", r.currency_rate)
        },
        price_dates(&r.rows[..shown.min(r.rows.len())])
    )];
    if let Some(from) = &r.prices_from {
        v.push(format!(
            "Prices from: {from} (`gpuvalue catalog update` takes new ones; --offline: the built-in ones)."
        ));
    }
    v.extend(r.gpu_note.iter().cloned());
    v.extend(r.region_note.iter().cloned());
    if let Some(most) = r.rows.iter().map(|x| x.nodes).max().filter(|n| *n > 1) {
        v.push(format!(
            "Nodes: a row runs the job on as many identical instances as its GPUs column says (up to {most}), data-parallel over all their GPUs with the state sharded over them; the collectives run within a node over its link and between nodes over the network its provider publishes (src/data/networks.json; for training, types without one rank on one node only; a served model spanning nodes of such a type runs over an assumed 100 Gb/s Ethernet a node, said on its row), overlapped with the compute; its price per hour is all of them."
        ));
    }
    v.extend(egress_line(r, shown));
    v.extend(spot_line(r));
    v.extend(budget_line(r));
    v.extend(r.rows.first().and_then(|x| energy_line(x, &r.currency)));
    v
}

/// The first row's energy for its job, per token where it serves, and its electricity's
/// cost where a price was given.
fn energy_line(row: &crate::value::rank::RankRow, currency: &str) -> Option<String> {
    use crate::report::fmt::sig;
    let e = row.energy.as_ref()?;
    let mut s = format!(
        "Energy: row {} draws {} kWh a job ({} GPUs at {:.0} W each: {})",
        row.place,
        sig(e.kwh_per_job),
        e.gpus,
        e.watts_per_gpu,
        e.basis
    );
    if let Some(j) = e.joules_per_token {
        s.push_str(&format!(
            ", {} J per output token ({} kWh per million)",
            sig(j),
            sig(j * 1e6 / 3.6e6)
        ));
    }
    if let (Some(c), Some(p)) = (e.electricity_cost_per_job, e.price_per_kwh) {
        s.push_str(&format!(
            "; its electricity at {} {currency}/kWh x PUE {}: {} {currency} a job",
            sig(p),
            e.pue.unwrap_or(1.0),
            sig(c)
        ));
    }
    s.push('.');
    Some(s)
}

/// How spot's time and cost were reached, when the ranking is by spot price.
fn spot_line(r: &RankReport) -> Option<String> {
    let k = r.rows.iter().find_map(|x| x.spot.as_ref())?;
    Some(format!(
        "Spot: time and cost include the expected work lost to interruptions and redone: \
         a checkpoint every {}, {} to restart, each band's upper edge a month (>20%: 30%) \
         as a steady rate (AWS Spot Instance Advisor's trailing month); a row whose \
         provider publishes no rate is costed with the worst band, marked assumed. \
         Capacity to start is not modelled \
         (--checkpoint-every, --restart-time).",
        hours(k.checkpointing.every_hours),
        hours(k.checkpointing.restart_hours)
    ))
}

/// The budget and what its column counts, when one was given.
fn budget_line(r: &RankReport) -> Option<String> {
    let b = r
        .rows
        .first()
        .and_then(|x| x.budget_jobs.map(|j| j * x.cost_per_job))?;
    let steady = steady_hours(r).is_some();
    Some(format!(
        "Budget: {} {} (\"budget buys\": {}).",
        sig(b),
        r.currency,
        if steady {
            "the hours of this traffic it pays for, all the row's instances running"
        } else {
            "whole jobs it pays for, and the hours it rents"
        }
    ))
}

/// The exchange rate's caveats, the notes on shown rows (the same note on several rows,
/// a stale price, said once naming the rows), and the measurements flagged.
fn caveat_lines(r: &RankReport, shown: usize) -> Vec<String> {
    let mut v: Vec<String> = currency_warnings(r)
        .into_iter()
        .map(|w| format!("Caveat: {w}"))
        .collect();
    let mut notes: Vec<(String, Vec<String>)> = Vec::new();
    for x in r.rows.iter().take(shown) {
        for w in &x.warnings {
            match notes.iter_mut().find(|(n, _)| n == w) {
                Some((_, rows)) => rows.push(format!("#{}", x.rank)),
                None => notes.push((w.clone(), vec![format!("#{}", x.rank)])),
            }
        }
    }
    for (n, rows) in notes {
        v.push(format!("* {}: {n}", rows.join(", ")));
    }
    for n in &r.measurement_notes {
        v.push(format!("Measurement flagged: {n}"));
    }
    v
}

/// "Not shown: ...": the rows past `--top`, those not ranked, and `--details`.
fn not_shown_line(r: &RankReport, shown: usize, details: bool) -> Option<String> {
    let mut more = Vec::new();
    if r.rows.len() > shown {
        more.push(format!("{} more ranked (--top N)", r.rows.len() - shown));
    } else if r.ranked_total > r.rows.len() {
        more.push(format!(
            "{} more ranked (--top N)",
            r.ranked_total - r.rows.len()
        ));
    }
    if !r.excluded.is_empty() && !details {
        more.push(format!("{} not ranked", r.excluded.len()));
    }
    if !details {
        more.push("figures, factors and exclusions: --details".into());
    }
    (!more.is_empty()).then(|| format!("Not shown: {}.", more.join("; ")))
}

/// "as of 2026-11 (8 rows), 2024-12 (2 rows)" for the shown rows.
fn price_dates(rows: &[RankRow]) -> String {
    let mut dates: std::collections::BTreeMap<&str, usize> = Default::default();
    for x in rows {
        *dates.entry(x.price_as_of.as_str()).or_default() += 1;
    }
    let parts: Vec<String> = dates
        .iter()
        .rev()
        .map(|(d, n)| format!("{d} ({n} row{})", if *n == 1 { "" } else { "s" }))
        .collect();
    if parts.is_empty() {
        return "no row ranked".into();
    }
    format!("as of {}", parts.join(", "))
}

/// Catalog warnings about the exchange rate of the ranking's currency (a stale rate moves
/// every converted price).
fn currency_warnings(r: &RankReport) -> Vec<String> {
    let key = format!("currencies.{}.", r.currency);
    r.catalog_warnings
        .iter()
        .filter(|w| w.contains(&key))
        .map(|w| w.trim_start_matches("warning: ").to_string())
        .collect()
}

/// What stands behind the estimates: the scenario and every efficiency factor with its origin (the detailed forms: `--details`, Markdown, HTML).
pub fn heading(r: &RankReport) -> Vec<String> {
    let mut v = vec![format!(
        "Scenario {}: {}",
        r.scenario.id, r.scenario.description
    )];
    for e in &r.efficiencies {
        v.push(format!(
            "Efficiency of {} on {}: {:.2}, {} ({})",
            e.figure.name(),
            e.applies_to,
            e.factor,
            e.origin,
            e.basis
        ));
    }
    v
}

/// Where each measured machine stands, a line each: its time per job and how many
/// instances beat it.
pub fn machine_lines(r: &RankReport) -> Vec<String> {
    r.machines
        .iter()
        .map(|m| format!("Measured machine: {}", machine_line(r, m)))
        .collect()
}

/// `--details`: the instances not ranked, each with its reason, under a count.
pub fn not_ranked_lines(r: &RankReport) -> Vec<String> {
    if r.excluded.is_empty() {
        return Vec::new();
    }
    std::iter::once(format!("Not ranked ({}):", r.excluded.len()))
        .chain(
            r.excluded
                .iter()
                .map(|e| format!("  {}: {}", e.instance, e.reason)),
        )
        .collect()
}

/// One measured machine's place: adapter, catalog match, file, and its time per job with
/// how many ranked instances are faster.
pub fn machine_line(r: &RankReport, m: &crate::value::rank::Machine) -> String {
    let place = match (m.hours_per_job, m.instances_faster) {
        _ if m.implausible.is_some() => m.implausible.clone().unwrap_or_default(),
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
