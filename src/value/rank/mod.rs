//! Joining results, catalog and scenario into ranked rows: per instance the figures used
//! (measured, or datasheet x efficiency: estimated), price, time and cost to finish the
//! scenario's job, value, and what a budget buys.

use crate::market::catalog::spot::{self, Checkpointing, SpotRisk};
use crate::market::catalog::{
    Admission, Catalog, Checked, Finding, GpuSpec, Instance, PricingModel, Severity, Tier,
};
use crate::results::ResultsFile;
use crate::stats::median;
use crate::value::calibration::{self, CalibrationFile, Factor, Origin};
use crate::value::scenario::{Rate, Scenario, Timing};
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub use crate::market::catalog::Filters;

mod costing;
pub mod energy;
mod measured;
mod resolver;
mod serve;
mod sweep;
use costing::*;
use measured::*;
use resolver::*;
pub use serve::{ServeRow, ServingOptions, target_words};
pub use sweep::{LEVELS, Sweep, SweepPoint, sweep};

#[derive(Clone, Debug)]
pub struct RankOptions {
    pub pricing: PricingModel,
    pub currency: String,
    pub top: Option<usize>,
    pub budget: Option<f64>,
    pub filters: Filters,
    /// Rank `reported` (unverified) prices too, marked; by default only `list` prices.
    pub include_reported: bool,
    /// Use measured figures outside the plausible band of their GPU's datasheet
    /// (`PLAUSIBLE`) as measured; by default they are flagged and left out.
    pub use_implausible: bool,
    /// How a job on spot capacity survives an interruption (`--price spot`).
    pub checkpointing: Checkpointing,
    /// How many identical instances a job runs on (`--nodes`).
    pub nodes: Nodes,
    /// GB a job takes out of the cloud (`--egress-gb`), instead of what its scenario says.
    pub egress_gb: Option<f64>,
    /// Serving: measured results and a hosted API's price.
    pub serving: ServingOptions,
    /// Electricity's price and the facility's PUE, for each row's energy cost.
    pub power: energy::Power,
}

/// A spot price older than this many months is left out of a spot ranking unless
/// `--include-reported` (spot prices change by the hour; the feeds carry today's).
pub const STALE_SPOT_MONTHS: i64 = 3;

/// How many instances a job runs on: a fixed number, or the fewest that hold it (more
/// only add communication, so the fewest are also the cheapest), up to [`Nodes::MOST`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Nodes {
    Fixed(u32),
    Auto,
}

impl Default for Nodes {
    fn default() -> Self {
        Nodes::Fixed(1)
    }
}

impl Nodes {
    /// The most nodes `auto` tries.
    pub const MOST: u32 = 64;
}

/// A hardware adapter's measured figure is taken as its catalog GPU's when it lies within
/// this share of the GPU's datasheet peak for that unit: below 20% the file is more likely
/// of another device (a software adapter relabelled, a GPU shared or broken), above 110% of
/// another GPU than the one named.
pub const PLAUSIBLE: (f64, f64) = (0.20, 1.10);

impl Default for RankOptions {
    /// What `gpuvalue` and the page rank by: on-demand prices in USD, every instance,
    /// list prices only.
    fn default() -> Self {
        RankOptions {
            pricing: PricingModel::OnDemand,
            currency: "USD".into(),
            top: None,
            budget: None,
            filters: Filters::default(),
            include_reported: false,
            use_implausible: false,
            checkpointing: Checkpointing::default(),
            nodes: Nodes::default(),
            egress_gb: None,
            serving: ServingOptions::default(),
            power: energy::Power::default(),
        }
    }
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
    /// The figure (serialised by its name, "matmul_f16_matrix").
    pub figure: Rate,
    /// Per GPU, in `unit`.
    pub value: f64,
    pub unit: String,
    pub source: Source,
    /// How the value was obtained, for people.
    pub basis: String,
    /// The same as data; report/ words it for tables ("312 TFLOPS x 0.55 calibrated").
    pub derivation: Derivation,
}

/// How a figure's value was found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Derivation {
    /// Measured on this GPU.
    Measured,
    /// Not measured; the measured rate of the unit its work falls back to stands in.
    StandsIn { used: Rate },
    /// The datasheet peak of `used` (the figure's own unit, or the one its work falls back
    /// to) times an efficiency factor.
    Datasheet {
        used: Rate,
        peak: f64,
        factor: f64,
        origin: Origin,
    },
    /// Latency: the median of the measured hardware GPUs.
    HardwareMedian,
    /// The stated default (no measured hardware GPU).
    Assumed,
}

impl Derivation {
    pub fn source(self) -> Source {
        match self {
            Derivation::Measured => Source::Measured,
            Derivation::Assumed => Source::Assumed,
            _ => Source::Estimated,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Efficiency {
    pub figure: Rate,
    pub factor: f64,
    /// `calibrated` on published results, `derived` from measured / datasheet ratios in this
    /// ranking, or `assumed`.
    pub origin: String,
    pub basis: String,
    /// Which GPUs this factor covers ("NVIDIA", "NVIDIA hopper", "all GPUs").
    #[serde(default)]
    pub applies_to: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub rank: usize,
    /// The rank shown: the first rank of the rows whose cost per job is within the model's
    /// uncertainty ([`RankReport::uncertainty`]) of the cheapest of them, so that two rows a
    /// few percent apart are a tie ("2=") rather than a strict order.
    #[serde(default)]
    pub place: usize,
    /// Whether another row shares this row's place.
    #[serde(default)]
    pub tied: bool,
    pub provider: String,
    pub instance_type: String,
    pub region: String,
    pub gpu: String,
    pub gpu_name: String,
    pub gpu_count: u32,
    /// The identical instances the job runs on (`--nodes`): `gpu_count` GPUs each;
    /// `price_per_hour` is all of them together.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub nodes: u32,
    /// `measured` when every figure was measured, `estimated` otherwise.
    pub basis: Source,
    pub figures: Vec<FigureUse>,
    pub price_per_hour: f64,
    pub currency: String,
    pub pricing: PricingModel,
    pub price_as_of: String,
    pub price_confidence: String,
    /// `list` or `reported` (ranked only with --include-reported).
    pub price_tier: Tier,
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
    /// A job at a steady rate: the instances that keep up with it and how busy they are;
    /// `price_per_hour` is one instance's, `cost_per_job` all of theirs for the job's hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
    /// How the job runs on this instance: serving's copies of the model and their batch,
    /// the collectives and how much of them the compute hides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    /// The link between the instance's GPUs that the job's collectives were costed over:
    /// stated by the catalog row, the GPU's baseboard, or PCIe assumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::market::catalog::links::Link>,
    /// On spot: the interruption risk it was costed with; `hours_per_job` and
    /// `cost_per_job` are then the expected ones, with the work lost and redone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot: Option<SpotRisk>,
    /// The data the job takes out of the cloud and what its provider charges for it (in
    /// `cost_per_job`); `cost` None: the provider publishes no price (not counted, marked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<EgressCost>,
    /// A served model: tokens per second per GPU and per user, time to first token, cost
    /// per million tokens (JSON keys at the row's top level).
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub serving: Option<ServeRow>,
    /// The job's energy on this row's GPUs (each at its datasheet board power).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<energy::Energy>,
}

/// A row's data out of the cloud.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EgressCost {
    pub gb: f64,
    /// The provider's price per GB in the ranking's currency, where published.
    pub per_gb: Option<f64>,
    /// In the ranking's currency, included in `cost_per_job`.
    pub cost: Option<f64>,
    pub source: Option<String>,
    /// The price is a copy elsewhere: the provider's own page was not read.
    #[serde(default)]
    pub secondary: bool,
}

/// How many instances serve a steady rate, and the share of their time it takes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    pub instances: u32,
    /// One instance's time for the job over the instances' time (0 < load <= 1).
    pub load: f64,
}

impl RankRow {
    /// The instance's catalog key, provider/type/region (as `Instance::key`).
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.provider, self.instance_type, self.region)
    }
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
    /// Why the file's figures were not taken as its GPU's (implausible for it: a file of
    /// another device, relabelled); then it has no time per job here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    pub scenario: Scenario,
    pub job: String,
    pub pricing: PricingModel,
    pub currency: String,
    pub currency_rate: String,
    pub efficiencies: Vec<Efficiency>,
    pub rows: Vec<RankRow>,
    pub excluded: Vec<Excluded>,
    /// Instances ranked before `--top` cut the list.
    pub ranked_total: usize,
    pub machines: Vec<Machine>,
    pub catalog_warnings: Vec<String>,
    /// How far apart two costs per job must be to be ranked in order: the largest factor by
    /// which the model missed one of this scenario's published calibration points (of any
    /// point when the scenario has none; 1.05 when every figure is measured). Costs closer
    /// than this share a place.
    #[serde(default = "default_uncertainty")]
    pub uncertainty: f64,
    /// Measured figures not used as their GPU's (outside the plausible band of its
    /// datasheet), and which files the derived factors come from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measurement_notes: Vec<String>,
    /// The price snapshots merged into the catalog (`catalog update`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices_from: Option<String>,
    /// `--region` as a place (a country or an area): what it selected and what it could not
    /// place, so the rows it left out are said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_note: Option<String>,
    /// `--gpu` as part of a name: the GPUs it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_note: Option<String>,
}

/// Ranks every catalog instance for the scenario, on a catalog with its findings (its
/// errors keep rows out, its warnings travel with them). `results` pairs each results file
/// with its name (for display).
pub fn rank(
    checked: &Checked<'_>,
    scenario: &Scenario,
    results: &[(String, ResultsFile)],
    opts: &RankOptions,
) -> Result<RankReport> {
    let (catalog, findings) = (checked.catalog, &checked.findings[..]);
    check_currency(catalog, &opts.currency)?;
    // `--gpu` naming one catalog GPU takes it alone; part of a name takes every match.
    let settled = RankOptions {
        filters: opts.filters.clone().settle(catalog),
        ..opts.clone()
    };
    let opts = &settled;
    let stated = with_stated_egress(scenario, opts);
    let scenario = stated.as_ref().unwrap_or(scenario);
    let figures = scenario.figures();
    let mut notes = Vec::new();
    let (measured, mut machines) =
        measured_figures(catalog, scenario, &figures, results, opts, &mut notes);
    let derived = derived_factors(catalog, &figures, &measured);
    let resolver = Resolver::new(measured, derived, embedded_calibration());
    let watts = energy::measured_watts(catalog, results);
    let costing = Costing {
        catalog,
        findings,
        scenario,
        figures: &figures,
        resolver: &resolver,
        opts,
        watts: &watts,
    };
    serve::check_measured(catalog, scenario, &opts.serving.results)?;
    let (mut rows, excluded, efficiencies) = cost_every_instance(&costing)?;
    let uncertainty = model_uncertainty(catalog, scenario);
    let ranked_total = order(&mut rows, &mut machines, opts.top, uncertainty);
    let rate = &catalog.currencies[&opts.currency];
    Ok(RankReport {
        job: scenario.job_name(),
        scenario: scenario.clone(),
        pricing: opts.pricing,
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
        measurement_notes: notes,
        uncertainty,
        prices_from: catalog.prices_from.clone(),
        region_note: opts
            .filters
            .region
            .as_deref()
            .and_then(|r| crate::market::catalog::regions::note(r, &catalog.instances)),
        gpu_note: opts.filters.gpus_taken(catalog),
    })
}

/// The scenario with `--egress-gb`'s data out in place of its own, where the option is given.
fn with_stated_egress(scenario: &Scenario, opts: &RankOptions) -> Option<Scenario> {
    let gb = opts.egress_gb?;
    let mut s = scenario.clone();
    s.egress = Some(crate::value::scenario::EgressNeed {
        gb,
        what: "stated with --egress-gb".into(),
    });
    Some(s)
}

/// Every catalog instance costed: the ranked rows (not yet ordered), the excluded ones with
/// why, and the efficiency factors the rows used (with the factors derived from results).
fn cost_every_instance(
    costing: &Costing<'_>,
) -> Result<(Vec<RankRow>, Vec<Excluded>, Vec<Efficiency>)> {
    let mut rows = Vec::new();
    let mut excluded = Vec::new();
    let mut used = Used::new();
    for (i, inst) in costing.catalog.instances.iter().enumerate() {
        match costing.row(i, inst)? {
            Costed::Ranked(row, factors) => {
                rows.push(*row);
                for e in factors {
                    remember(&mut used, e);
                }
            }
            Costed::Excluded(reason) => excluded.push(Excluded {
                instance: inst.key(),
                reason,
            }),
            Costed::NotSelected => {}
        }
    }
    for (f, (x, n, files)) in &costing.resolver.derived {
        if !f.sources().is_empty() {
            remember(&mut used, efficiency(*f, &derived_factor(*x, *n, files)));
        }
    }
    Ok((rows, excluded, used.into_values().collect()))
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn default_uncertainty() -> f64 {
    MEASURED_UNCERTAINTY
}

/// Two rows whose every figure is measured are ordered when their costs differ by more than
/// this: the spread a repeated run of the same probes shows on an idle GPU.
const MEASURED_UNCERTAINTY: f64 = 1.05;

/// The largest factor by which the model misses a published point: of this scenario's
/// points, else of every point (the same factors stand behind a user's scenario). At least
/// [`MEASURED_UNCERTAINTY`].
fn model_uncertainty(catalog: &Catalog, scenario: &Scenario) -> f64 {
    if scenario.serving.is_some() {
        // Serving: the model's usual miss on published runs it was not fitted on.
        return crate::value::scenario::serving::fits()
            .held_out_miss
            .max(MEASURED_UNCERTAINTY);
    }
    let cal = embedded_calibration();
    let scenarios = crate::value::scenario::ScenarioFile {
        schema_version: 1,
        scenarios: vec![scenario.clone()],
    };
    let miss = |pts: &mut dyn Iterator<Item = &crate::value::calibration::Point>| {
        pts.filter_map(|p| {
            cal.implied(p, catalog, &scenarios)
                .ok()
                .map(|i| i / p.published)
        })
        .filter(|r| r.is_finite() && *r > 0.0)
        .map(|r| r.max(1.0 / r))
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))
    };
    // A point names the scenario by id, or the generated job whose scenario it is.
    let is_own = |p: &&crate::value::calibration::Point| {
        p.scenario.as_deref() == Some(scenario.id.as_str())
            || p.job
                .as_ref()
                .and_then(|j| j.scenario().ok())
                .is_some_and(|s| s.id == scenario.id)
    };
    let own = miss(&mut cal.points.iter().filter(is_own));
    let all = || {
        let every = crate::value::scenario::ScenarioFile::embedded();
        cal.check(catalog, &every).ok().and_then(|c| {
            c.iter()
                .map(|p| p.ratio.max(1.0 / p.ratio))
                .filter(|r| r.is_finite())
                .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))
        })
    };
    own.or_else(all).unwrap_or(1.5).max(MEASURED_UNCERTAINTY)
}

pub fn check_currency(catalog: &Catalog, currency: &str) -> Result<()> {
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

/// Measured values per (catalog GPU, figure), from hardware adapters only: one value per
/// place (instance type, else host), the median of that place's files, so that eight files
/// from one node weigh as much as one file from another; with the files they came from.
type Measured = BTreeMap<(String, Rate), (Vec<f64>, Vec<String>)>;

/// Per (catalog GPU, figure), per place, every file's value and name.
type ByPlace = BTreeMap<(String, Rate), BTreeMap<String, Vec<(f64, String)>>>;

/// A figure to four significant digits or so (12.35, 3350.0, 177840).
fn short_number(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Why a hardware adapter's measured figure is not taken as its catalog GPU's: it lies
/// outside `PLAUSIBLE` of the GPU's datasheet peak for that unit (per adapter).
/// Sorts by cost per job (then time), numbers the ranks, places each measured machine among
/// them, and cuts the list at `top`. Gives the number ranked before the cut.
fn order(
    rows: &mut Vec<RankRow>,
    machines: &mut [Machine],
    top: Option<usize>,
    uncertainty: f64,
) -> usize {
    rows.sort_by(|a, b| {
        a.cost_per_job
            .total_cmp(&b.cost_per_job)
            .then_with(|| a.hours_per_job.total_cmp(&b.hours_per_job))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    share_places(rows, uncertainty);
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

/// Places: a row whose cost is within the uncertainty of the cheapest row of the current
/// group joins it (measured-only pairs use [`MEASURED_UNCERTAINTY`]); the group's members
/// share the first one's rank. Groups start at a row, never chain past the first's band.
/// Identical hardware never ties: a row with the same GPU type, basis and time per job as a
/// cheaper row of its group has the same estimate and so the same error, and its price
/// alone puts it behind (its own rank; at the same price, the same place); it does not
/// start a group either.
fn share_places(rows: &mut [RankRow], uncertainty: f64) {
    let mut lead = 0;
    for i in 0..rows.len() {
        let band = if rows[i].basis == Source::Measured && rows[lead].basis == Source::Measured {
            MEASURED_UNCERTAINTY
        } else {
            uncertainty
        };
        let within = i > 0 && rows[i].cost_per_job <= rows[lead].cost_per_job * band;
        // A twin at the same cost first (it gives the place), else any cheaper twin.
        let twin = if within {
            let twins = || {
                rows[lead..i]
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| same_estimate(r, &rows[i]))
            };
            twins()
                .find(|(_, r)| r.cost_per_job == rows[i].cost_per_job)
                .or_else(|| twins().next())
                .map(|(t, _)| t)
        } else {
            None
        };
        if let Some(t) = twin {
            // The same estimate at the same cost (one instance in two regions) is equal.
            let same_cost = rows[lead + t].cost_per_job == rows[i].cost_per_job;
            rows[i].place = if same_cost {
                rows[lead + t].place
            } else {
                rows[i].rank
            };
            rows[i].tied = same_cost;
            if same_cost {
                rows[lead + t].tied = true;
            }
        } else if within {
            rows[i].place = rows[lead].rank;
            rows[i].tied = true;
            rows[lead].tied = true;
        } else {
            lead = i;
            rows[i].place = rows[i].rank;
        }
    }
}

/// Whether two rows rest on one estimate: the same GPU type, basis and time per job (and
/// so the same layout and link), where only the price differs.
fn same_estimate(a: &RankRow, b: &RankRow) -> bool {
    a.gpu == b.gpu
        && a.basis == b.basis
        && (a.hours_per_job - b.hours_per_job).abs() <= 1e-9 * a.hours_per_job.abs().max(1e-30)
}

/// A factor measured in this ranking: median measured / datasheet over `n` GPU models.
fn derived_factor(x: f64, n: usize, files: &[String]) -> Factor {
    Factor {
        value: x,
        origin: Origin::Derived,
        basis: format!(
            "median measured/datasheet ratio over {n} measured GPU model(s): {}",
            files_text(files)
        ),
        applies_to: "GPUs without a calibration rule".into(),
    }
}

/// How a measured rate of another unit stands in for `f`.
fn stand_in_basis(f: Rate, used: Rate) -> String {
    format!(
        "{} not measured: the measured {} rate stands in, no speed-up assumed",
        f.label(),
        used.label()
    )
}

/// Why a row whose GPU is not one of the catalog's cannot rank, in words (a feed row keeps
/// the reason its name did not map in its GPU field).
fn not_a_catalog_gpu(gpu: &str) -> String {
    if let crate::market::catalog::GpuId::Unranked(u, name) =
        crate::market::catalog::GpuId::parse(gpu)
    {
        return format!("{} {name}", u.not_ranked());
    }
    format!("unknown GPU id {gpu:?}")
}

/// The embedded catalog's training ranking: a real report whose rows tests replace.
#[cfg(test)]
pub(crate) fn training_report() -> RankReport {
    let c = crate::market::catalog::Catalog::embedded();
    let s = crate::value::scenario::ScenarioFile::embedded();
    rank(
        &c.checked(),
        s.get("training").unwrap(),
        &[],
        &RankOptions::default(),
    )
    .unwrap()
}

#[cfg(test)]
mod tie_tests {
    use super::*;

    /// Rows of (GPU, hours per job, price an hour), ordered and placed with a 1.4x band.
    fn placed(rows: &[(&str, f64, f64)]) -> Vec<(usize, bool)> {
        let base = training_report().rows[0].clone();
        let mut v: Vec<RankRow> = rows
            .iter()
            .map(|&(gpu, h, price)| RankRow {
                gpu: gpu.into(),
                basis: Source::Estimated,
                hours_per_job: h,
                price_per_hour: price,
                cost_per_job: h * price,
                tied: false,
                ..base.clone()
            })
            .collect();
        order(&mut v, &mut [], None, 1.4);
        v.iter().map(|r| (r.place, r.tied)).collect()
    }

    #[test]
    fn identical_hardware_never_ties_and_price_decides() {
        // Two 8 x H200 rows at 16.0 and 20.8 an hour: one estimate, so no tie.
        let p = placed(&[("h200", 1.0, 16.0), ("h200", 1.0, 20.8)]);
        assert_eq!(p, vec![(1, false), (2, false)]);
        // A different GPU type within the band ties with the cheapest row; the same GPU at
        // another price between them keeps its own place.
        let p = placed(&[
            ("h200", 1.0, 16.0),
            ("h200", 1.0, 17.9),
            ("mi300x", 1.2, 15.0),
        ]);
        assert_eq!(p, vec![(1, true), (2, false), (1, true)]);
        // The same estimate at the same price (one instance in two regions) is equal.
        let p = placed(&[("h200", 1.0, 16.0), ("h200", 1.0, 16.0)]);
        assert_eq!(p, vec![(1, true), (1, true)]);
        // The same GPU at another speed (another layout or link) is another estimate.
        let p = placed(&[("h200", 1.0, 16.0), ("h200", 1.1, 16.0)]);
        assert_eq!(p, vec![(1, true), (1, true)]);
        // Past the band, a new group.
        let p = placed(&[("h200", 1.0, 16.0), ("b200", 1.0, 30.0)]);
        assert_eq!(p, vec![(1, false), (2, false)]);
    }
}
