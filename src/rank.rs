//! Joining results, catalog and scenario into ranked rows: per instance the figures used
//! (measured, or datasheet x efficiency: estimated), price, time and cost to finish the
//! scenario's job, value, and what a budget buys.

use crate::catalog::{Catalog, Finding, PricingModel, Severity, rows_with_errors};
use crate::results::ResultsFile;
use crate::scenario::{Figure, Scenario};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub provider: Option<String>,
    pub gpu: Option<String>,
    pub region: Option<String>,
    pub min_gpu_memory_gb: Option<f64>,
}

#[derive(Clone, Debug)]
pub struct RankOptions {
    pub pricing: PricingModel,
    pub currency: String,
    pub top: Option<usize>,
    pub budget: Option<f64>,
    pub filters: Filters,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Measured,
    Estimated,
    Assumed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureUse {
    pub figure: String,
    /// Per GPU, in `unit`.
    pub value: f64,
    pub unit: String,
    pub source: Source,
    /// How the value was obtained, for people.
    pub basis: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Efficiency {
    pub figure: String,
    pub factor: f64,
    /// `derived` from measured / datasheet ratios, or `default`.
    pub origin: String,
    pub basis: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub rank: usize,
    pub provider: String,
    pub instance_type: String,
    pub region: String,
    pub gpu: String,
    pub gpu_name: String,
    pub gpu_count: u32,
    /// `measured` when every figure was measured, `estimated` otherwise.
    pub basis: Source,
    pub figures: Vec<FigureUse>,
    pub price_per_hour: f64,
    pub currency: String,
    pub pricing: String,
    pub price_as_of: String,
    pub price_confidence: String,
    pub hours_per_job: f64,
    pub jobs_per_hour: f64,
    pub cost_per_job: f64,
    /// Jobs per one unit of the currency.
    pub jobs_per_currency_unit: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_hours: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_jobs: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Excluded {
    pub instance: String,
    pub reason: String,
}

/// A measured machine (results file) and where it stands: its time per job, without price.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub adapter: String,
    pub software: bool,
    /// Catalog GPU id, or None: "not in catalog".
    pub catalog_gpu: Option<String>,
    pub file: String,
    pub figures: Vec<FigureUse>,
    /// None when a figure the scenario needs was not measured.
    pub hours_per_job: Option<f64>,
    /// How many ranked instances finish the job sooner (all of them, before --top).
    #[serde(default)]
    pub instances_faster: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    pub scenario: Scenario,
    pub job: String,
    pub pricing: String,
    pub currency: String,
    pub currency_rate: String,
    pub efficiencies: Vec<Efficiency>,
    pub rows: Vec<RankRow>,
    pub excluded: Vec<Excluded>,
    /// Instances ranked before `--top` cut the list.
    pub ranked_total: usize,
    pub machines: Vec<Machine>,
    pub catalog_warnings: Vec<String>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// Ranks every catalog instance for the scenario. `results` pairs each results file with
/// its name (for display).
pub fn rank(
    catalog: &Catalog,
    findings: &[Finding],
    scenario: &Scenario,
    results: &[(String, ResultsFile)],
    opts: &RankOptions,
) -> Result<RankReport> {
    if !catalog.currencies.contains_key(&opts.currency) {
        anyhow::bail!(
            "--currency {}: no exchange rate in the catalog (have {})",
            opts.currency,
            catalog
                .currencies
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let figures: Vec<Figure> = {
        let mut f: Vec<Figure> = scenario.terms.iter().map(|t| t.figure).collect();
        f.dedup();
        f
    };
    // Measured figures per catalog GPU (hardware only), and the machines themselves.
    let mut measured: BTreeMap<(String, Figure), Vec<f64>> = BTreeMap::new();
    let mut machines = Vec::new();
    for (name, r) in results {
        let gpu = catalog.match_adapter(&r.adapter.name).map(|g| g.id.clone());
        let mut uses = Vec::new();
        let mut complete = true;
        for &f in &figures {
            match f.measured(r) {
                Some(v) => {
                    if let (Some(g), false) = (&gpu, r.adapter.software) {
                        measured.entry((g.clone(), f)).or_default().push(v);
                    }
                    uses.push(FigureUse {
                        figure: f.name().into(),
                        value: v,
                        unit: f.unit().into(),
                        source: Source::Measured,
                        basis: format!("measured in {name}"),
                    });
                }
                None => match f.stand_in().and_then(|s| s.measured(r)) {
                    Some(v) => uses.push(FigureUse {
                        figure: f.name().into(),
                        value: v,
                        unit: f.unit().into(),
                        source: Source::Estimated,
                        basis: stand_in_basis(f),
                    }),
                    None => complete = false,
                },
            }
        }
        let hours = complete.then(|| {
            scenario.seconds_per_job(|f| {
                uses.iter()
                    .find(|u| u.figure == f.name())
                    .map_or(f64::NAN, |u| u.value)
            }) / 3600.0
        });
        machines.push(Machine {
            adapter: r.adapter.name.clone(),
            software: r.adapter.software,
            catalog_gpu: gpu,
            file: name.clone(),
            figures: uses,
            hours_per_job: hours,
            instances_faster: None,
        });
    }
    // Efficiency factors: measured / datasheet over measured hardware GPUs, else defaults.
    let mut efficiencies = Vec::new();
    let mut eff_of = BTreeMap::new();
    for &f in &figures {
        let ratios: Vec<f64> = measured
            .iter()
            .filter(|((_, fig), _)| *fig == f)
            .filter_map(|((g, _), vals)| {
                let sheet = catalog.gpu(g).and_then(|gpu| f.datasheet(gpu))?.0;
                Some(median(vals.clone())? / sheet)
            })
            .collect();
        let n = ratios.len();
        let e = match median(ratios) {
            Some(x) => Efficiency {
                figure: f.name().into(),
                factor: x,
                origin: "derived".into(),
                basis: format!("median measured/datasheet ratio over {n} measured GPU model(s)"),
            },
            None => Efficiency {
                figure: f.name().into(),
                factor: f.default_efficiency(),
                origin: "default".into(),
                basis: "no measured GPU with a datasheet figure: default assumption".into(),
            },
        };
        eff_of.insert(f, e.factor);
        if f.datasheet_based() {
            efficiencies.push(e);
        }
    }
    // Latency has no datasheet: measured hardware GPUs' median, else the stated assumption.
    let hw_latency = median(
        measured
            .iter()
            .filter(|((_, f), _)| *f == Figure::LatencyDispatch)
            .flat_map(|(_, v)| v.iter().copied())
            .collect(),
    );
    let bad_rows = rows_with_errors(findings);
    let mut rows = Vec::new();
    let mut excluded = Vec::new();
    let min_mem = opts
        .filters
        .min_gpu_memory_gb
        .into_iter()
        .chain(scenario.min_gpu_memory_gb)
        .fold(0.0f64, f64::max);
    for (i, inst) in catalog.instances.iter().enumerate() {
        let f = &opts.filters;
        let contains = |hay: &str, needle: &Option<String>| {
            needle
                .as_ref()
                .is_none_or(|n| hay.to_lowercase().contains(&n.to_lowercase()))
        };
        let Some(gpu) = catalog.gpu(&inst.gpu) else {
            excluded.push(Excluded {
                instance: inst.key(),
                reason: format!("unknown GPU id {:?}", inst.gpu),
            });
            continue;
        };
        if !contains(&inst.provider, &f.provider)
            || !contains(&inst.region, &f.region)
            || !(contains(&gpu.id, &f.gpu) || contains(&gpu.name, &f.gpu))
        {
            continue;
        }
        if bad_rows.contains(&i) {
            let why: Vec<String> = findings
                .iter()
                .filter(|x| {
                    x.severity == Severity::Error && x.path.starts_with(&format!("instances[{i}]"))
                })
                .map(|x| x.message.clone())
                .collect();
            excluded.push(Excluded {
                instance: inst.key(),
                reason: format!("catalog error: {}", why.join("; ")),
            });
            continue;
        }
        if min_mem > 0.0 {
            match gpu.memory_gb {
                Some(m) if m >= min_mem => {}
                Some(m) => {
                    excluded.push(Excluded {
                        instance: inst.key(),
                        reason: format!("{m} GB per GPU < {min_mem} GB required"),
                    });
                    continue;
                }
                None => {
                    excluded.push(Excluded {
                        instance: inst.key(),
                        reason: "GPU memory unknown".into(),
                    });
                    continue;
                }
            }
        }
        let Some(price) = inst.prices.get(&opts.pricing) else {
            excluded.push(Excluded {
                instance: inst.key(),
                reason: format!("no {} price", opts.pricing.name()),
            });
            continue;
        };
        let per_hour = catalog.convert(price.amount, &price.currency, &opts.currency)?;
        let mut uses = Vec::new();
        let mut missing = None;
        for &fig in &figures {
            let m = measured
                .get(&(gpu.id.clone(), fig))
                .and_then(|v| median(v.clone()));
            let stand_in = fig
                .stand_in()
                .and_then(|s| measured.get(&(gpu.id.clone(), s)))
                .and_then(|v| median(v.clone()));
            let u = if let Some(v) = m {
                Some(FigureUse {
                    figure: fig.name().into(),
                    value: v,
                    unit: fig.unit().into(),
                    source: Source::Measured,
                    basis: "measured".into(),
                })
            } else if let Some(v) = stand_in {
                Some(FigureUse {
                    figure: fig.name().into(),
                    value: v,
                    unit: fig.unit().into(),
                    source: Source::Estimated,
                    basis: stand_in_basis(fig),
                })
            } else if let Some((sheet, what)) = fig.datasheet(gpu) {
                let e = eff_of[&fig];
                Some(FigureUse {
                    figure: fig.name().into(),
                    value: sheet * e,
                    unit: fig.unit().into(),
                    source: Source::Estimated,
                    basis: format!("{what} {sheet} x efficiency {e:.2}"),
                })
            } else if fig == Figure::LatencyDispatch {
                let (v, src, basis) = match hw_latency {
                    Some(v) => (
                        v,
                        Source::Estimated,
                        "median of measured hardware GPUs".to_string(),
                    ),
                    None => (
                        fig.assumed().unwrap_or(10.0),
                        Source::Assumed,
                        "assumed (no measured hardware GPU)".to_string(),
                    ),
                };
                Some(FigureUse {
                    figure: fig.name().into(),
                    value: v,
                    unit: fig.unit().into(),
                    source: src,
                    basis,
                })
            } else {
                None
            };
            match u {
                Some(u) => uses.push(u),
                None => {
                    missing = Some(fig);
                    break;
                }
            }
        }
        if let Some(fig) = missing {
            excluded.push(Excluded {
                instance: inst.key(),
                reason: format!(
                    "no {} figure for {}: not measured, no datasheet figure",
                    fig.name(),
                    gpu.name
                ),
            });
            continue;
        }
        let per_gpu_s = scenario.seconds_per_job(|f| {
            uses.iter()
                .find(|u| u.figure == f.name())
                .map_or(f64::NAN, |u| u.value)
        });
        let hours = per_gpu_s / f64::from(inst.gpu_count) / 3600.0;
        let cost = per_hour * hours;
        let warnings = findings
            .iter()
            .filter(|x| {
                x.severity == Severity::Warning && x.path.starts_with(&format!("instances[{i}]"))
            })
            .map(|x| x.message.clone())
            .collect();
        rows.push(RankRow {
            rank: 0,
            provider: inst.provider.clone(),
            instance_type: inst.instance_type.clone(),
            region: inst.region.clone(),
            gpu: gpu.id.clone(),
            gpu_name: gpu.name.clone(),
            gpu_count: inst.gpu_count,
            basis: if uses.iter().all(|u| u.source == Source::Measured) {
                Source::Measured
            } else {
                Source::Estimated
            },
            figures: uses,
            price_per_hour: per_hour,
            currency: opts.currency.clone(),
            pricing: opts.pricing.name().into(),
            price_as_of: inst.as_of.clone(),
            price_confidence: format!("{:?}", inst.confidence).to_lowercase(),
            hours_per_job: hours,
            jobs_per_hour: 1.0 / hours,
            cost_per_job: cost,
            jobs_per_currency_unit: 1.0 / cost,
            budget_hours: opts.budget.map(|b| b / per_hour),
            budget_jobs: opts.budget.map(|b| b / per_hour / hours),
            warnings,
        });
    }
    rows.sort_by(|a, b| {
        a.cost_per_job
            .total_cmp(&b.cost_per_job)
            .then_with(|| a.hours_per_job.total_cmp(&b.hours_per_job))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    let ranked_total = rows.len();
    for m in &mut machines {
        m.instances_faster = m
            .hours_per_job
            .map(|h| rows.iter().filter(|x| x.hours_per_job < h).count());
    }
    if let Some(n) = opts.top {
        rows.truncate(n);
    }
    let rate = &catalog.currencies[&opts.currency];
    Ok(RankReport {
        job: scenario.job_name(),
        scenario: scenario.clone(),
        pricing: opts.pricing.name().into(),
        currency: opts.currency.clone(),
        currency_rate: format!(
            "{} {} per USD, as of {} ({})",
            rate.per_usd, opts.currency, rate.as_of, rate.source
        ),
        efficiencies,
        rows,
        excluded,
        ranked_total,
        machines,
        catalog_warnings: findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .map(|f| f.to_string())
            .collect(),
    })
}

fn stand_in_basis(f: Figure) -> String {
    match f.stand_in() {
        Some(s) => format!(
            "{} not measured: the measured {} rate, no speed-up assumed",
            f.name(),
            s.name()
        ),
        None => String::new(),
    }
}

impl Figure {
    /// A measured figure that can stand in (as an estimate) for this one when it was not
    /// measured: FP16 matmul at the FP32 rate (no speed-up assumed, as for datasheets).
    pub fn stand_in(self) -> Option<Figure> {
        match self {
            Figure::MatmulF16 => Some(Figure::MatmulF32),
            _ => None,
        }
    }

    /// Whether estimates of this figure come from a datasheet (and so need an efficiency).
    pub fn datasheet_based(self) -> bool {
        self != Figure::LatencyDispatch
    }
}
