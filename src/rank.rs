//! Joining results, catalog and scenario into ranked rows: per instance the figures used
//! (measured, or datasheet x efficiency: estimated), price, time and cost to finish the
//! scenario's job, value, and what a budget buys.

use crate::catalog::{Admission, Catalog, Finding, Gpu, Instance, PricingModel, Severity, Tier};
use crate::results::ResultsFile;
use crate::scenario::{Figure, Scenario};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::catalog::Filters;

#[derive(Clone, Debug)]
pub struct RankOptions {
    pub pricing: PricingModel,
    pub currency: String,
    pub top: Option<usize>,
    pub budget: Option<f64>,
    pub filters: Filters,
    /// Rank `reported` (unverified) prices too, marked; by default only `list` prices.
    pub include_reported: bool,
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
    /// `list` or `reported` (ranked only with --include-reported).
    pub price_tier: String,
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
    check_currency(catalog, &opts.currency)?;
    let mut figures: Vec<Figure> = scenario.terms.iter().map(|t| t.figure).collect();
    figures.dedup();
    let (measured, mut machines) = measured_figures(catalog, scenario, &figures, results);
    let (efficiencies, eff_of) = efficiencies(catalog, &figures, &measured);
    let resolver = Resolver::new(measured, eff_of);
    let mut rows = Vec::new();
    let mut excluded = Vec::new();
    for (i, inst) in catalog.instances.iter().enumerate() {
        let costed = Costing {
            catalog,
            findings,
            scenario,
            figures: &figures,
            resolver: &resolver,
            opts,
        }
        .row(i, inst)?;
        match costed {
            Some(Ok(row)) => rows.push(row),
            Some(Err(reason)) => excluded.push(Excluded {
                instance: inst.key(),
                reason,
            }),
            None => {}
        }
    }
    let ranked_total = order(&mut rows, &mut machines, opts.top);
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

fn check_currency(catalog: &Catalog, currency: &str) -> Result<()> {
    if let Some(c) = catalog.currencies.get(currency)
        && !(c.per_usd.is_finite() && c.per_usd > 0.0)
    {
        anyhow::bail!(
            "--currency {currency}: the catalog's exchange rate for it is {}, not a positive number",
            c.per_usd
        );
    }
    if !catalog.currencies.contains_key(currency) {
        anyhow::bail!(
            "--currency {}: no exchange rate in the catalog (have {})",
            currency,
            catalog
                .currencies
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

/// Measured values per (catalog GPU, figure), from hardware adapters only.
type Measured = BTreeMap<(String, Figure), Vec<f64>>;

/// Each results file as a measured machine, and the measured figures per catalog GPU.
fn measured_figures(
    catalog: &Catalog,
    scenario: &Scenario,
    figures: &[Figure],
    results: &[(String, ResultsFile)],
) -> (Measured, Vec<Machine>) {
    let mut measured = Measured::new();
    let mut machines = Vec::new();
    for (name, r) in results {
        let gpu = catalog.match_adapter(&r.adapter.name).map(|g| g.id.clone());
        let mut uses = Vec::new();
        let mut complete = true;
        for &f in figures {
            if let Some(v) = f.measured(r) {
                if let (Some(g), false) = (&gpu, r.adapter.software) {
                    measured.entry((g.clone(), f)).or_default().push(v);
                }
                uses.push(FigureUse::new(
                    f,
                    v,
                    Source::Measured,
                    format!("measured in {name}"),
                ));
            } else if let Some(v) = f.stand_in().and_then(|s| s.measured(r)) {
                uses.push(FigureUse::new(f, v, Source::Estimated, stand_in_basis(f)));
            } else {
                complete = false;
            }
        }
        let hours = complete.then(|| seconds_per_job(scenario, &uses) / 3600.0);
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
    (measured, machines)
}

/// Seconds one job takes on one GPU with the figures in `uses`.
fn seconds_per_job(scenario: &Scenario, uses: &[FigureUse]) -> f64 {
    scenario.seconds_per_job(|f| {
        uses.iter()
            .find(|u| u.figure == f.name())
            .map_or(f64::NAN, |u| u.value)
    })
}

/// Efficiency factors: measured / datasheet over measured hardware GPUs, else defaults.
/// The list holds the datasheet-based ones (for the report); the map every figure's factor.
fn efficiencies(
    catalog: &Catalog,
    figures: &[Figure],
    measured: &Measured,
) -> (Vec<Efficiency>, BTreeMap<Figure, f64>) {
    let mut list = Vec::new();
    let mut factor_of = BTreeMap::new();
    for &f in figures {
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
        factor_of.insert(f, e.factor);
        if f.datasheet_based() {
            list.push(e);
        }
    }
    (list, factor_of)
}

impl FigureUse {
    fn new(f: Figure, value: f64, source: Source, basis: String) -> FigureUse {
        FigureUse {
            figure: f.name().into(),
            value,
            unit: f.unit().into(),
            source,
            basis,
        }
    }
}

/// Finds the value of a figure for a catalog GPU: measured, else a measured stand-in, else
/// datasheet x efficiency, else (latency) the measured hardware median or the assumption.
struct Resolver {
    measured: Measured,
    efficiency: BTreeMap<Figure, f64>,
    /// Latency has no datasheet: measured hardware GPUs' median, if any.
    hw_latency: Option<f64>,
}

impl Resolver {
    fn new(measured: Measured, efficiency: BTreeMap<Figure, f64>) -> Resolver {
        let hw_latency = median(
            measured
                .iter()
                .filter(|((_, f), _)| *f == Figure::LatencyDispatch)
                .flat_map(|(_, v)| v.iter().copied())
                .collect(),
        );
        Resolver {
            measured,
            efficiency,
            hw_latency,
        }
    }

    fn median_of(&self, gpu: &Gpu, f: Figure) -> Option<f64> {
        self.measured
            .get(&(gpu.id.clone(), f))
            .and_then(|v| median(v.clone()))
    }

    fn resolve(&self, fig: Figure, gpu: &Gpu) -> Option<FigureUse> {
        if let Some(v) = self.median_of(gpu, fig) {
            return Some(FigureUse::new(fig, v, Source::Measured, "measured".into()));
        }
        if let Some(v) = fig.stand_in().and_then(|s| self.median_of(gpu, s)) {
            return Some(FigureUse::new(
                fig,
                v,
                Source::Estimated,
                stand_in_basis(fig),
            ));
        }
        if let Some((sheet, what)) = fig.datasheet(gpu) {
            let e = self.efficiency[&fig];
            let basis = format!("{what} {sheet} x efficiency {e:.2}");
            return Some(FigureUse::new(fig, sheet * e, Source::Estimated, basis));
        }
        if fig != Figure::LatencyDispatch {
            return None;
        }
        Some(match self.hw_latency {
            Some(v) => FigureUse::new(
                fig,
                v,
                Source::Estimated,
                "median of measured hardware GPUs".into(),
            ),
            None => FigureUse::new(
                fig,
                fig.assumed().unwrap_or(10.0),
                Source::Assumed,
                "assumed (no measured hardware GPU)".into(),
            ),
        })
    }
}

/// Everything needed to cost one catalog instance.
struct Costing<'a> {
    catalog: &'a Catalog,
    findings: &'a [Finding],
    scenario: &'a Scenario,
    figures: &'a [Figure],
    resolver: &'a Resolver,
    opts: &'a RankOptions,
}

impl Costing<'_> {
    /// The ranked row of instance `i`, or why it is left out (`Err`); `None` when the
    /// filters do not select it.
    fn row(&self, i: usize, inst: &Instance) -> Result<Option<Result<RankRow, String>>> {
        let Some(gpu) = self.catalog.gpu(&inst.gpu) else {
            return Ok(Some(Err(format!("unknown GPU id {:?}", inst.gpu))));
        };
        let admission = self
            .opts
            .filters
            .admit(inst, Some(gpu), self.scenario.min_gpu_memory_gb);
        if admission == Admission::NotSelected {
            return Ok(None);
        }
        if let Some(why) = self.row_errors(i) {
            return Ok(Some(Err(format!("catalog error: {why}"))));
        }
        if let Admission::TooSmall(why) = admission {
            return Ok(Some(Err(why)));
        }
        if let Some(date) = &inst.retired {
            return Ok(Some(Err(format!("retired on {date}: no longer sold"))));
        }
        let Some(price) = inst.prices.get(&self.opts.pricing) else {
            return Ok(Some(Err(format!("no {} price", self.opts.pricing.name()))));
        };
        if inst.tier(price) == Tier::Reported && !self.opts.include_reported {
            return Ok(Some(Err(
                "reported price (unverified: not a list price); --include-reported ranks it, marked"
                    .into(),
            )));
        }
        let (bad_gpus, bad_currencies) = Catalog::bad_entries(self.findings);
        if bad_gpus.contains(&gpu.id) {
            return Ok(Some(Err(format!(
                "catalog error in the entry of GPU {:?}",
                gpu.id
            ))));
        }
        if let Some(c) = [&price.currency, &self.opts.currency]
            .into_iter()
            .find(|c| bad_currencies.contains(c))
        {
            return Ok(Some(Err(format!(
                "catalog error in the exchange rate of {c}"
            ))));
        }
        let per_hour = self
            .catalog
            .convert(price.amount, &price.currency, &self.opts.currency)?;
        let mut uses = Vec::new();
        for &fig in self.figures {
            match self.resolver.resolve(fig, gpu) {
                Some(u) => uses.push(u),
                None => {
                    return Ok(Some(Err(format!(
                        "no {} figure for {}: not measured, no datasheet figure",
                        fig.name(),
                        gpu.name
                    ))));
                }
            }
        }
        let hours = seconds_per_job(self.scenario, &uses) / f64::from(inst.gpu_count) / 3600.0;
        let cost = per_hour * hours;
        // Every ranked cost is a finite positive amount, whatever the inputs came to.
        if !(cost.is_finite() && cost > 0.0 && hours.is_finite() && hours > 0.0) {
            return Ok(Some(Err(format!(
                "cost per job works out to {cost} (price {per_hour}/h, {hours} h per job): not a finite positive amount"
            ))));
        }
        Ok(Some(Ok(self.ranked(i, inst, gpu, uses, per_hour, hours))))
    }

    /// The catalog errors of instance `i`, joined; None when it has none.
    fn row_errors(&self, i: usize) -> Option<String> {
        let why: Vec<String> = self
            .findings
            .iter()
            .filter(|x| x.severity == Severity::Error && x.instance == Some(i))
            .map(|x| x.message.clone())
            .collect();
        (!why.is_empty()).then(|| why.join("; "))
    }

    fn ranked(
        &self,
        i: usize,
        inst: &Instance,
        gpu: &Gpu,
        uses: Vec<FigureUse>,
        per_hour: f64,
        hours: f64,
    ) -> RankRow {
        let cost = per_hour * hours;
        let warnings = self
            .findings
            .iter()
            .filter(|x| x.severity == Severity::Warning && x.instance == Some(i))
            .map(|x| x.message.clone())
            .collect();
        let budget = self.opts.budget;
        RankRow {
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
            currency: self.opts.currency.clone(),
            pricing: self.opts.pricing.name().into(),
            price_as_of: inst.as_of.clone(),
            price_confidence: format!("{:?}", inst.confidence).to_lowercase(),
            price_tier: inst
                .prices
                .get(&self.opts.pricing)
                .map_or(Tier::List, |p| inst.tier(p))
                .name()
                .into(),
            hours_per_job: hours,
            jobs_per_hour: 1.0 / hours,
            cost_per_job: cost,
            jobs_per_currency_unit: 1.0 / cost,
            budget_hours: budget.map(|b| b / per_hour),
            budget_jobs: budget.map(|b| b / per_hour / hours),
            warnings,
        }
    }
}

/// Sorts by cost per job (then time), numbers the ranks, places each measured machine among
/// them, and cuts the list at `top`. Gives the number ranked before the cut.
fn order(rows: &mut Vec<RankRow>, machines: &mut [Machine], top: Option<usize>) -> usize {
    rows.sort_by(|a, b| {
        a.cost_per_job
            .total_cmp(&b.cost_per_job)
            .then_with(|| a.hours_per_job.total_cmp(&b.hours_per_job))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    let ranked_total = rows.len();
    for m in machines {
        m.instances_faster = m
            .hours_per_job
            .map(|h| rows.iter().filter(|x| x.hours_per_job < h).count());
    }
    if let Some(n) = top {
        rows.truncate(n);
    }
    ranked_total
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
