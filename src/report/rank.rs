//! Ranking output: terminal table, Markdown, CSV (JSON is the report's serde form).

use super::fmt::{csv_cell, md, sig, thousands};
use crate::market::catalog::Tier;
use crate::market::catalog::spot::SpotRisk;
use crate::value::rank::{Derivation, FigureUse, RankReport, Source};
use crate::value::scenario::{Comm, Timing};
use tabled::settings::Style;
use tabled::{Table, Tabled};

/// A duration to three significant figures: seconds below a minute, minutes below an
/// hour, days from 48 hours.
pub fn hours(h: f64) -> String {
    if h >= 48.0 {
        format!("{} d", sig(h / 24.0))
    } else if h >= 1.0 {
        format!("{} h", sig(h))
    } else if h >= 1.0 / 60.0 {
        format!("{} min", sig(h * 60.0))
    } else {
        format!("{} s", sig(h * 3600.0))
    }
}

fn basis(s: Source) -> &'static str {
    match s {
        Source::Measured => "measured",
        Source::Estimated => "estimated",
        Source::Assumed => "assumed",
    }
}

/// How much of a ranking the terminal table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Rows shown (the rest are counted).
    pub rows: usize,
    /// Per-figure detail per row, every efficiency factor, every instance not ranked.
    pub details: bool,
}

impl View {
    /// The short answer: ten rows, one line each.
    pub const SHORT: View = View {
        rows: 10,
        details: false,
    };
}

/// One instance on one line: the short answer.
#[derive(Tabled)]
struct Short {
    #[tabled(rename = "#")]
    place: String,
    instance: String,
    #[tabled(rename = "GPUs")]
    gpus: String,
    #[tabled(rename = "price/h")]
    price: String,
    #[tabled(rename = "time/job")]
    time: String,
    #[tabled(rename = "cost/job")]
    cost: String,
    basis: String,
}

/// One instance with the figures behind its time: `--details`.
#[derive(Tabled)]
struct Detailed {
    #[tabled(rename = "#")]
    place: String,
    instance: String,
    #[tabled(rename = "GPUs")]
    gpus: String,
    #[tabled(rename = "price/h")]
    price: String,
    #[tabled(rename = "time/job")]
    time: String,
    #[tabled(rename = "cost/job")]
    cost: String,
}

/// "2=" for a shared place, "2" alone.
pub fn place(x: &crate::value::rank::RankRow) -> String {
    if x.tied {
        format!("{}=", x.place.max(1))
    } else {
        x.rank.to_string()
    }
}

/// A figure for people: its label and value in a readable unit (TFLOPS from 10,000 GFLOPS).
/// A figure as used: the units whose rate it is, with its value; where another unit's rate
/// stands in (a GPU without FP8 engines), that unit is named, never the one it stands for.
pub fn figure_value(f: &crate::value::rank::FigureUse) -> String {
    let (used, why) = match f.derivation {
        Derivation::Datasheet { used, .. } => (used, "none on this GPU"),
        Derivation::StandsIn { used } => (used, "not measured"),
        _ => (f.figure, ""),
    };
    if used == f.figure {
        format!("{} {}", f.figure.label(), scaled(f.value, &f.unit))
    } else {
        format!(
            "{} {} (for the {} work: {why})",
            used.label(),
            scaled(f.value, &f.unit),
            f.figure.label()
        )
    }
}

/// A value with its unit, scaled up a step past 10,000 (GFLOPS to TFLOPS, GB/s to TB/s),
/// to three significant figures.
pub fn scaled(v: f64, unit: &str) -> String {
    let up = match unit {
        "GFLOPS" => Some("TFLOPS"),
        "GOPS" => Some("TOPS"),
        "GB/s" => Some("TB/s"),
        _ => None,
    };
    match up {
        Some(u) if v >= 10_000.0 => format!("{} {u}", sig(v / 1000.0)),
        _ => format!("{} {unit}", sig(v)),
    }
}

fn instance_cell(x: &crate::value::rank::RankRow) -> String {
    format!("{} {} ({})", x.provider, x.instance_type, x.region)
}

/// The GPUs, with a `†` (said under the table) where the job's collectives ran over a
/// link between them that nobody stated.
fn gpus_cell(x: &crate::value::rank::RankRow) -> String {
    let mark = if link_assumed(x) { " †" } else { "" };
    if x.nodes > 1 {
        format!("{} nodes x {} x {}{mark}", x.nodes, x.gpu_count, x.gpu_name)
    } else {
        format!("{} x {}{mark}", x.gpu_count, x.gpu_name)
    }
}

/// The price with a `*` where the row has a note (listed under the table) and its tier
/// when it is not a list price.
fn price_short(x: &crate::value::rank::RankRow) -> String {
    let mut s = price_cell(x);
    if !x.warnings.is_empty() {
        s.push('*');
    }
    s
}

/// What the budget buys, in whole jobs where it buys one: "30 jobs, 12.5 d", "<1 job".
pub fn budget_cell(x: &crate::value::rank::RankRow) -> Option<String> {
    // A steady rate's "job" is a period of traffic: the budget buys hours of it.
    if let (Some(_), Some(j)) = (&x.steady, x.budget_jobs) {
        return Some(format!(
            "{} h of traffic",
            thousands((j * x.hours_per_job).floor())
        ));
    }
    match (x.budget_jobs, x.budget_hours) {
        (Some(j), Some(h)) if j >= 1.0 => Some(format!(
            "{} job{} ({})",
            thousands(j.floor()),
            if j >= 2.0 { "s" } else { "" },
            hours(h)
        )),
        (Some(j), Some(h)) => Some(format!("<1 job ({:.0}%, {})", j * 100.0, hours(h))),
        _ => None,
    }
}

/// The ranking as a terminal table: a heading line, the rows (`view`), then the model,
/// prices, caveats and measured machines, each a short line.
pub fn table(r: &RankReport, view: View) -> String {
    let shown = &r.rows[..r.rows.len().min(view.rows)];
    let mut out = format!("{}: {}\n", r.scenario.id, r.job);
    if r.rows.is_empty() && !view.details {
        out.push_str(&super::term::wrap(&nothing_ranks(r)));
        return out;
    }
    let table = if r.scenario.serving.is_some() {
        serving_table(r, shown)
    } else if view.details {
        let rows = shown.iter().map(|x| Detailed {
            place: place(x),
            instance: instance_cell(x),
            gpus: gpus_cell(x),
            price: format!(
                "{}\n{}\n{}",
                price_short(x),
                x.price_as_of,
                tier_and_confidence(x)
            ),
            time: hours(x.hours_per_job),
            cost: sig(x.cost_per_job),
        });
        let mut t = Table::new(rows);
        rename_money_columns(&mut t, r, &[3, 5], 4);
        t
    } else {
        let rows = shown.iter().map(|x| Short {
            place: place(x),
            instance: instance_cell(x),
            gpus: gpus_cell(x),
            price: price_short(x),
            time: hours(x.hours_per_job),
            cost: sig(x.cost_per_job),
            basis: basis(x.basis).into(),
        });
        let mut t = Table::new(rows);
        rename_money_columns(&mut t, r, &[3, 5], 4);
        t
    };
    let mut t = table;
    if let Some(c) = spot_column(shown) {
        t.with(tabled::settings::Concat::horizontal(c));
    }
    if let Some(c) = steady_column(shown) {
        t.with(tabled::settings::Concat::horizontal(c));
    }
    if let Some(b) = budget_column(shown) {
        t.with(tabled::settings::Concat::horizontal(b));
    }
    t.with(Style::rounded());
    out.push_str(&super::term::fit(t));
    out.push('\n');
    if view.details {
        out.push_str(&row_details(shown));
    }
    for l in summary_lines(r, shown.len(), view.details) {
        out.push_str(&l);
        out.push('\n');
    }
    if view.details {
        for l in heading(r) {
            out.push_str(&l);
            out.push('\n');
        }
        if !r.excluded.is_empty() {
            out.push_str(&format!("Not ranked ({}):\n", r.excluded.len()));
            for e in &r.excluded {
                out.push_str(&format!("  {}: {}\n", e.instance, e.reason));
            }
        }
    }
    out.push_str(&machines_text(r));
    out
}

/// A served model's rows: price, layout and concurrency, tokens per second per GPU and per
/// user, time to first token and cost per million output tokens.
fn serving_table(r: &RankReport, shown: &[crate::value::rank::RankRow]) -> Table {
    let mut b = tabled::builder::Builder::default();
    let mut head = vec![
        "#".to_string(),
        "instance".into(),
        "GPUs".into(),
        format!("{}/h", r.currency),
    ];
    head.extend(super::serving::columns(r));
    b.push_record(head);
    for x in shown {
        let mut row = vec![place(x), instance_cell(x), gpus_cell(x), price_short(x)];
        row.extend(super::serving::cells(r, x));
        b.push_record(row);
    }
    b.build()
}

/// Under a detailed table, each row's figures (value per GPU and how it was reached) and how
/// the job runs there, a short block a row instead of a narrow column.
fn row_details(shown: &[crate::value::rank::RankRow]) -> String {
    let mut out = String::new();
    for x in shown {
        out.push_str(&format!(
            "#{} {}: {}\n",
            place(x),
            instance_cell(x),
            gpus_cell(x)
        ));
        for f in &x.figures {
            out.push_str(&format!("  {}: {}\n", figure_value(f), derivation(f)));
        }
        for n in job_notes(x) {
            out.push_str(&format!("  {n}\n"));
        }
    }
    out
}

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

/// How a figure's value was found, in a few words ("312 TFLOPS x 0.55 calibrated").
pub fn derivation(f: &FigureUse) -> String {
    match f.derivation {
        Derivation::Measured => "measured".into(),
        Derivation::StandsIn { used } => format!("measured {} stands in", used.label()),
        Derivation::Datasheet {
            used,
            peak,
            factor,
            origin,
        } => format!(
            "{}{} x {factor:.2} {}",
            if used == f.figure {
                String::new()
            } else {
                format!("{}: ", used.label())
            },
            used.peak_text(peak),
            origin.name()
        ),
        Derivation::HardwareMedian => "estimated".into(),
        Derivation::Assumed => "assumed".into(),
    }
}

/// How the job runs on the row's instance (serving's copies and batch, the collectives),
/// then its spot risk.
fn job_notes(x: &crate::value::rank::RankRow) -> impl Iterator<Item = String> + '_ {
    x.timing
        .iter()
        .flat_map(timing_notes)
        .chain(x.link.as_ref().and_then(link_note))
        .chain(x.spot.as_ref().map(spot_note))
        .chain(x.egress.as_ref().map(|g| match (g.per_gb, g.cost) {
            (Some(p), Some(c)) => format!(
                "egress: {} GB out at {} {} a GB = {} {}{}",
                sig(g.gb),
                sig(p),
                x.currency,
                sig(c),
                x.currency,
                if g.secondary {
                    " (price from a secondary copy, the provider's page not read)"
                } else {
                    ""
                }
            ),
            _ => format!(
                "egress: {} GB out, not counted: {} publishes no price gpuvalue knows",
                sig(g.gb),
                x.provider
            ),
        }))
        .chain(x.steady.as_ref().map(|s| {
            format!(
                "{} instance{} keep{} up with the rate, {:.0}% busy",
                s.instances,
                if s.instances == 1 { "" } else { "s" },
                if s.instances == 1 { "s" } else { "" },
                s.load * 100.0
            )
        }))
}

/// Where the link a row's collectives ran over comes from, unless its catalog row states it.
fn link_note(l: &crate::market::catalog::links::Link) -> Option<String> {
    use crate::market::catalog::links::LinkBasis;
    match l.basis {
        LinkBasis::Stated => None,
        LinkBasis::Board => {
            Some("the link is the GPU's baseboard's (the row states none)".into())
        }
        LinkBasis::Assumed => Some(
            "the link is assumed (the row states none): PCIe of the GPU's generation at NCCL's model of it, an upper bound"
                .into(),
        ),
    }
}

fn link_assumed(x: &crate::value::rank::RankRow) -> bool {
    x.link
        .as_ref()
        .is_some_and(|l| l.basis == crate::market::catalog::links::LinkBasis::Assumed)
}

/// A timing in words: the layout of a served model, then its communication.
pub fn timing_notes(t: &Timing) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(l) = &t.layout {
        v.push(if l.copies == 1 && l.gpus_per_copy == 1 {
            format!(
                "decodes {:.0} sequences at once ({:.0} GB of KV cache)",
                l.batch, l.kv_gb
            )
        } else {
            format!(
                "{} of the model over {} GPU{}{each}, {:.0} sequences at once ({:.0} GB of KV cache{each})",
                if l.copies == 1 {
                    "1 copy".to_string()
                } else {
                    format!("{} copies", l.copies)
                },
                l.gpus_per_copy,
                if l.gpus_per_copy == 1 { "" } else { "s" },
                l.batch,
                l.kv_gb,
                each = if l.copies == 1 { "" } else { " each" },
            )
        });
    }
    match &t.comm {
        Comm::None => {}
        Comm::NoLink => v.push(
            "communication not counted: the catalog states no GPU interconnect for this instance"
                .into(),
        ),
        Comm::Counted {
            what,
            link,
            bus_gbps,
            seconds,
            exposed,
            ..
        } => v.push(format!(
            "{what} {} over {link} ({bus_gbps} GB/s bus), {}",
            hours(*seconds / 3600.0),
            if *exposed > 0.0 {
                format!("{} beyond the compute", hours(*exposed / 3600.0))
            } else {
                format!("hidden behind {} of compute", hours(t.compute / 3600.0))
            }
        )),
    }
    v
}

/// A spot row's risk in a few words: its band a month, "24 h max", or "not published".
pub fn spot_cell(r: &SpotRisk) -> String {
    let band = if r.assumed {
        format!("{}/month assumed", r.band.label())
    } else {
        format!("{}/month", r.band.label())
    };
    if r.forced_stops > 0 {
        format!("{band}, {} stops", r.forced_stops)
    } else {
        band
    }
}

/// What the spot risk adds to a row's time, and why.
pub fn spot_note(r: &SpotRisk) -> String {
    let unit = if r.stateless {
        "an interruption loses the requests in flight".to_string()
    } else {
        format!("checkpoint every {}", hours(r.checkpointing.every_hours))
    };
    let stops = f64::from(r.forced_stops) * r.stop_hours;
    let mut s = format!(
        "spot: {} interrupted a month{} (costed as {:.0}%): {} interruptions expected, {} redone or restarting ({unit}, restart {})",
        r.band.label(),
        if r.assumed {
            ", assumed: no rate published for this type and region"
        } else {
            ""
        },
        r.band.monthly_share() * 100.0,
        sig(r.expected_interruptions),
        hours(r.expected_hours - r.bare_hours - stops),
        hours(r.checkpointing.restart_hours),
    );
    if r.forced_stops > 0 {
        s.push_str(&format!(
            "; longer than its maximum run time: {} forced stops, {} lost",
            r.forced_stops,
            hours(stops)
        ));
    }
    s
}

/// The spot risk column when the ranking is by spot price.
fn spot_column(shown: &[crate::value::rank::RankRow]) -> Option<Table> {
    extra_column(
        "interrupted",
        shown.iter().map(|x| x.spot.as_ref().map(spot_cell)),
    )
}

/// The instances column when the job is a steady rate: how many keep up, how busy.
fn steady_column(shown: &[crate::value::rank::RankRow]) -> Option<Table> {
    extra_column(
        "instances",
        shown.iter().map(|x| x.steady.as_ref().map(steady_cell)),
    )
}

/// "3 (78% busy)": the instances a steady rate takes and the share of their time it uses.
pub fn steady_cell(s: &crate::value::rank::Steady) -> String {
    format!("{} ({:.0}% busy)", s.instances, s.load * 100.0)
}

/// The budget column ("budget buys") when a budget was given.
fn budget_column(shown: &[crate::value::rank::RankRow]) -> Option<Table> {
    extra_column("budget buys", shown.iter().map(budget_cell))
}

/// A column to join to the table's right: only when every shown row has its cell.
fn extra_column(header: &str, cells: impl Iterator<Item = Option<String>>) -> Option<Table> {
    let cells: Option<Vec<String>> = cells.collect();
    let cells = cells.filter(|c| !c.is_empty())?;
    let mut b = tabled::builder::Builder::default();
    b.push_record([header.to_string()]);
    for c in cells {
        b.push_record([c]);
    }
    Some(b.build())
}

/// "price/h" and "cost/job" headers carry the currency ("USD/h", "USD/job").
/// A steady rate's period of traffic (its "job"), if the ranking is of one.
fn steady_hours(r: &RankReport) -> Option<f64> {
    r.scenario.job.as_ref().and_then(|j| j.steady_hours)
}

/// The price and cost columns named in the ranking's currency; for a steady rate (whose
/// "job" is a period of traffic) the time and cost columns say so.
fn rename_money_columns(t: &mut Table, r: &RankReport, cols: &[usize], time_col: usize) {
    use tabled::settings::Modify;
    use tabled::settings::format::Format;
    use tabled::settings::object::Cell;
    let currency = &r.currency;
    let steady = steady_hours(r).is_some();
    let names = [format!("{currency}/h"), format!("{currency}/job")];
    for (c, name) in cols.iter().zip(names) {
        t.with(Modify::new(Cell::new(0, *c)).with(Format::content(move |_| name.clone())));
    }
    if steady {
        t.with(Modify::new(Cell::new(0, time_col)).with(Format::content(|_| "traffic".into())));
    }
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

/// The lines under every form of the ranking (terminal, Markdown, HTML): what was
/// ranked, the model and its uncertainty, the prices and their age, the budget, notes on
/// shown rows, and what is not shown.
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
        "Ties: costs within {:.0}% of each other share a place (\"2=\"): {}.",
        (r.uncertainty - 1.0) * 100.0,
        if r.scenario.serving.is_some() {
            "the serving model's miss on 80% of the published runs held out of its fit"
        } else {
            "the model's largest miss on a published point"
        }
    )
}

pub fn summary_lines(r: &RankReport, shown: usize, details: bool) -> Vec<String> {
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
    v.extend(super::serving::notes(r));
    v.push(ties_line(r));
    v.push(format!(
        "Prices: {} per hour in {}{}; {}.",
        r.pricing.name().replace('_', "-"),
        r.currency,
        if r.currency == "USD" {
            String::new()
        } else {
            format!(" ({})", r.currency_rate)
        },
        price_dates(&r.rows[..shown.min(r.rows.len())])
    ));
    if let Some(from) = &r.prices_from {
        v.push(format!(
            "Prices from: {from} (`gpuvalue catalog update` takes new ones; --offline: the built-in ones)."
        ));
    }
    if let Some(n) = &r.gpu_note {
        v.push(n.clone());
    }
    if let Some(n) = &r.region_note {
        v.push(n.clone());
    }
    if let Some(most) = r.rows.iter().map(|x| x.nodes).max().filter(|n| *n > 1) {
        v.push(format!(
            "Nodes: a row runs the job on as many identical instances as its GPUs column says (up to {most}), data-parallel over all their GPUs with the state sharded over them; the collectives run within a node over its link and between nodes over the network its provider publishes (src/data/networks.json; types without one rank on one node only), overlapped with the compute; its price per hour is all of them."
        ));
    }
    v.extend(egress_line(r, shown));
    if let Some(k) = r.rows.iter().find_map(|x| x.spot.as_ref()) {
        v.push(format!(
            "Spot: time and cost include the expected work lost to interruptions and redone: \
             a checkpoint every {}, {} to restart, each band's upper edge a month (>20%: 30%) \
             as a steady rate (AWS Spot Instance Advisor's trailing month); a row whose \
             provider publishes no rate is costed with the worst band, marked assumed. \
             Capacity to start is not modelled \
             (--checkpoint-every, --restart-time).",
            hours(k.checkpointing.every_hours),
            hours(k.checkpointing.restart_hours)
        ));
    }
    if let Some(b) = r
        .rows
        .first()
        .and_then(|x| x.budget_jobs.map(|j| j * x.cost_per_job))
    {
        let steady = steady_hours(r).is_some();
        v.push(format!(
            "Budget: {} {} (\"budget buys\": {}).",
            sig(b),
            r.currency,
            if steady {
                "the hours of this traffic it pays for, all the row's instances running"
            } else {
                "whole jobs it pays for, and the hours it rents"
            }
        ));
    }
    for w in currency_warnings(r) {
        v.push(format!("Caveat: {w}"));
    }
    // The same note on several rows (a stale price) is said once, naming the rows.
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
    if !more.is_empty() {
        v.push(format!("Not shown: {}.", more.join("; ")));
    }
    v
}

/// "as of 2026-11 (8 rows), 2024-12 (2 rows)" for the shown rows.
fn price_dates(rows: &[crate::value::rank::RankRow]) -> String {
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

/// The figures a row used, on one line: what, value per GPU, and how it was found; then
/// how the job runs there (a serving batch).
pub fn figures_used(r: &crate::value::rank::RankRow) -> String {
    r.figures
        .iter()
        .map(|f| format!("{} ({})", figure_value(f), derivation(f)))
        .chain(job_notes(r))
        .collect::<Vec<_>>()
        .join("; ")
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

/// The ranking as Markdown: the heading, every row with the figures behind it (and what the
/// budget buys when one was given), then the same summary lines as the terminal.
pub fn markdown(r: &RankReport) -> String {
    let mut out = format!("**{}: {}**  \n", md(&r.scenario.id), md(&r.job));
    if r.rows.is_empty() {
        let why = nothing_ranks(r);
        for l in why.lines() {
            out.push_str(&format!("{}  \n", md(l.trim_start())));
        }
        return out;
    }
    for l in heading(r) {
        out.push_str(&format!("{}  \n", md(&l)));
    }
    if r.scenario.serving.is_some() {
        out.push_str(&serving_markdown(r));
    } else {
        out.push_str(&jobs_markdown(r));
    }
    out.push('\n');
    for l in summary_lines(r, r.rows.len(), true) {
        out.push_str(&format!("{}  \n", md(&l)));
    }
    let m = machines_text(r);
    for l in m.lines() {
        out.push_str(&format!("{}  \n", md(l)));
    }
    out
}

/// A served model's rows in Markdown.
fn serving_markdown(r: &RankReport) -> String {
    let cols = super::serving::columns(r);
    let mut out = format!(
        "\n| # | instance | region | GPUs | basis | {c}/h | {} |\n|---|---|---|---|---|---|{}\n",
        cols.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | "),
        "---|".repeat(cols.len()),
        c = md(&r.currency)
    );
    for x in &r.rows {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            md_row_head(x),
            price_cell(x),
            super::serving::cells(r, x)
                .iter()
                .map(|c| md(c))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

/// The first cells of a Markdown row: place, instance, region, GPUs and basis.
fn md_row_head(x: &crate::value::rank::RankRow) -> String {
    format!(
        "{} | {} {} | {} | {} | {}",
        place(x),
        md(&x.provider),
        md(&x.instance_type),
        md(&x.region),
        md(&gpus_cell(x)),
        basis(x.basis)
    )
}

/// Any other job's rows in Markdown.
fn jobs_markdown(r: &RankReport) -> String {
    let mut out = String::new();
    let budget = r.rows.iter().all(|x| budget_cell(x).is_some()) && !r.rows.is_empty();
    out.push_str(&format!(
        "\n| # | instance | region | GPUs | basis | figures used (per GPU) | {c}/h | time/job | {c}/job | jobs per 1,000 {c} |{}\n|---|---|---|---|---|---|---|---|---|---|{}\n",
        if budget { " budget buys |" } else { "" },
        if budget { "---|" } else { "" },
        c = md(&r.currency)
    ));
    for x in &r.rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |{}\n",
            md_row_head(x),
            md(&figures_used(x)),
            price_cell(x),
            hours(x.hours_per_job),
            sig(x.cost_per_job),
            sig(1000.0 * x.jobs_per_currency_unit),
            budget_cell(x).map_or(String::new(), |b| format!(" {} |", md(&b)))
        ));
    }
    out
}

/// The ranking as CSV, one record per instance, cells safe for spreadsheets.
pub fn csv(r: &RankReport) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
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
        "place",
        "spot_interruption_band",
        "spot_bare_hours_per_job",
        "spot_expected_interruptions",
        "steady_instances",
        "steady_load",
        "nodes",
        "egress_gb",
        "egress_cost",
    ];
    let serving = r.scenario.serving.is_some();
    let mut header: Vec<&str> = header.to_vec();
    if serving {
        header.extend(SERVING_CSV);
    }
    w.write_record(&header)?;
    for x in &r.rows {
        let figs: Vec<String> = x
            .figures
            .iter()
            .map(|f| {
                format!(
                    "{}={:.6} {} ({}: {})",
                    f.figure.name(),
                    f.value,
                    f.unit,
                    basis(f.source),
                    derivation(f)
                )
            })
            .collect();
        let mut rec = vec![
            x.rank.to_string(),
            csv_cell(&x.provider),
            csv_cell(&x.instance_type),
            csv_cell(&x.region),
            csv_cell(&x.gpu),
            x.gpu_count.to_string(),
            basis(x.basis).to_string(),
            x.pricing.name().into(),
            csv_cell(&x.currency),
            format!("{}", x.price_per_hour),
            format!("{}", x.hours_per_job),
            format!("{}", x.cost_per_job),
            format!("{}", x.jobs_per_currency_unit),
            x.budget_hours.map(|v| v.to_string()).unwrap_or_default(),
            x.budget_jobs.map(|v| v.to_string()).unwrap_or_default(),
            csv_cell(&x.price_as_of),
            x.price_confidence.clone(),
            x.price_tier.name().into(),
            csv_cell(&figs.join("; ")),
            csv_cell(&x.warnings.join("; ")),
            place(x),
            x.spot.as_ref().map_or(String::new(), |k| {
                format!(
                    "{}{}",
                    k.band.label(),
                    if k.assumed { " assumed" } else { "" }
                )
            }),
            x.spot
                .as_ref()
                .map_or(String::new(), |k| k.bare_hours.to_string()),
            x.spot
                .as_ref()
                .map_or(String::new(), |k| k.expected_interruptions.to_string()),
            x.steady
                .as_ref()
                .map_or(String::new(), |s| s.instances.to_string()),
            x.steady
                .as_ref()
                .map_or(String::new(), |s| s.load.to_string()),
            x.nodes.to_string(),
            x.egress
                .as_ref()
                .map_or(String::new(), |g| g.gb.to_string()),
            x.egress
                .as_ref()
                .and_then(|g| g.cost)
                .map_or(String::new(), |c| c.to_string()),
        ];
        if serving {
            rec.extend(serving_csv(x));
        }
        w.write_record(&rec)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The serving columns of the CSV, their JSON keys' names.
const SERVING_CSV: [&str; 12] = [
    "layout",
    "gpus_per_copy",
    "concurrency",
    "tok_s_per_gpu",
    "total_tok_s_per_gpu",
    "tok_s_per_user",
    "ttft_s",
    "cost_per_million_tokens",
    "cost_per_million_total_tokens",
    "api_cost_per_million_tokens",
    "beats_api_above",
    "measured",
];

fn serving_csv(x: &crate::value::rank::RankRow) -> Vec<String> {
    let Some(s) = &x.serving else {
        return vec![String::new(); SERVING_CSV.len()];
    };
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    vec![
        s.layout.clone(),
        s.gpus_per_copy.to_string(),
        s.concurrency.to_string(),
        s.tok_s_per_gpu.to_string(),
        s.total_tok_s_per_gpu.to_string(),
        s.tok_s_per_user.to_string(),
        s.ttft_s.to_string(),
        s.cost_per_million_tokens.to_string(),
        s.cost_per_million_total_tokens.to_string(),
        opt(s.api_cost_per_million_tokens),
        opt(s.beats_api_above),
        csv_cell(s.measured.as_deref().unwrap_or("")),
    ]
}

/// A price, marked when it is `reported` (unverified).
fn price_cell(x: &crate::value::rank::RankRow) -> String {
    if x.price_tier == Tier::Reported {
        format!("{} (REPORTED)", sig(x.price_per_hour))
    } else {
        sig(x.price_per_hour)
    }
}

/// The price's provenance for people: `list, high` or `REPORTED, low` (unverified).
pub fn tier_and_confidence(x: &crate::value::rank::RankRow) -> String {
    if x.price_tier == Tier::Reported {
        format!("REPORTED, {}", x.price_confidence)
    } else {
        format!("{}, {}", x.price_tier.name(), x.price_confidence)
    }
}
