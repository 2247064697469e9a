//! The words of a ranking's cells and notes: durations, places, prices, the figures a row
//! used and how they were found, a row's spot risk, steady rate and budget. Every form of
//! the ranking (terminal, Markdown, CSV, HTML) says them the same way.

use crate::market::catalog::Tier;
use crate::market::catalog::spot::SpotRisk;
use crate::report::fmt::{sig, thousands};
use crate::value::rank::{Derivation, FigureUse, RankRow, Source};
use crate::value::scenario::{Comm, Timing};

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

pub fn basis(s: Source) -> &'static str {
    match s {
        Source::Measured => "measured",
        Source::Estimated => "estimated",
        Source::Assumed => "assumed",
    }
}

/// "2=" for a shared place, "2" alone.
pub fn place(x: &RankRow) -> String {
    if x.tied {
        format!("{}=", x.place.max(1))
    } else {
        x.rank.to_string()
    }
}

/// A figure for people: its label and value in a readable unit (TFLOPS from 10,000 GFLOPS).
/// A figure as used: the units whose rate it is, with its value; where another unit's rate
/// stands in (a GPU without FP8 engines), that unit is named, never the one it stands for.
pub fn figure_value(f: &FigureUse) -> String {
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

pub fn instance_cell(x: &RankRow) -> String {
    format!("{} {} ({})", x.provider, x.instance_type, x.region)
}

/// The GPUs, with a `†` (said under the table) where the job's collectives ran over a
/// link between them that nobody stated.
pub fn gpus_cell(x: &RankRow) -> String {
    let mark = if link_assumed(x) { " †" } else { "" };
    if x.nodes > 1 {
        format!("{} nodes x {} x {}{mark}", x.nodes, x.gpu_count, x.gpu_name)
    } else {
        format!("{} x {}{mark}", x.gpu_count, x.gpu_name)
    }
}

/// The price with a `*` where the row has a note (listed under the table) and its tier
/// when it is not a list price.
pub fn price_short(x: &RankRow) -> String {
    let mut s = price_cell(x);
    if !x.warnings.is_empty() {
        s.push('*');
    }
    s
}

/// What the budget buys, in whole jobs where it buys one: "30 jobs, 12.5 d", "<1 job".
pub fn budget_cell(x: &RankRow) -> Option<String> {
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
pub fn job_notes(x: &RankRow) -> impl Iterator<Item = String> + '_ {
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
pub fn link_note(l: &crate::market::catalog::links::Link) -> Option<String> {
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

pub fn link_assumed(x: &RankRow) -> bool {
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

/// "3 (78% busy)": the instances a steady rate takes and the share of their time it uses.
pub fn steady_cell(s: &crate::value::rank::Steady) -> String {
    format!("{} ({:.0}% busy)", s.instances, s.load * 100.0)
}

/// The figures a row used, on one line: what, value per GPU, and how it was found; then
/// how the job runs there (a serving batch).
pub fn figures_used(r: &RankRow) -> String {
    r.figures
        .iter()
        .map(|f| format!("{} ({})", figure_value(f), derivation(f)))
        .chain(job_notes(r))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A price, marked when it is `reported` (unverified).
pub fn price_cell(x: &RankRow) -> String {
    if x.price_tier == Tier::Reported {
        format!("{} (REPORTED)", sig(x.price_per_hour))
    } else {
        sig(x.price_per_hour)
    }
}

/// The price's provenance for people: `list, high` or `REPORTED, low` (unverified).
pub fn tier_and_confidence(x: &RankRow) -> String {
    if x.price_tier == Tier::Reported {
        format!("REPORTED, {}", x.price_confidence)
    } else {
        format!("{}, {}", x.price_tier.name(), x.price_confidence)
    }
}
