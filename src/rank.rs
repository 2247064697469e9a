//! Joining results, catalog and scenario into ranked rows: per instance the figures used
//! (measured, or datasheet x efficiency: estimated), price, time and cost to finish the
//! scenario's job, value, and what a budget buys.

use crate::calibration::{self, CalibrationFile, Factor, Origin};
use crate::catalog::spot::{self, Checkpointing, SpotRisk};
use crate::catalog::{
    Admission, Catalog, Checked, Finding, GpuSpec, Instance, PricingModel, Severity, Tier,
};
use crate::results::ResultsFile;
use crate::scenario::{Rate, Scenario, Timing};
use crate::stats::median;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

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
    /// Use measured figures outside the plausible band of their GPU's datasheet
    /// (`PLAUSIBLE`) as measured; by default they are flagged and left out.
    pub use_implausible: bool,
    /// How a job on spot capacity survives an interruption (`--price spot`).
    pub checkpointing: Checkpointing,
    /// How many identical instances a job runs on (`--nodes`).
    pub nodes: Nodes,
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
    /// On spot: the interruption risk it was costed with; `hours_per_job` and
    /// `cost_per_job` are then the expected ones, with the work lost and redone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot: Option<SpotRisk>,
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
    let figures = scenario.figures();
    let mut notes = Vec::new();
    let (measured, mut machines) =
        measured_figures(catalog, scenario, &figures, results, opts, &mut notes);
    let derived = derived_factors(catalog, &figures, &measured);
    let resolver = Resolver::new(measured, derived, embedded_calibration());
    let mut rows = Vec::new();
    let mut excluded = Vec::new();
    let mut used = Used::new();
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
            Some(Ok((row, factors))) => {
                rows.push(row);
                for e in factors {
                    remember(&mut used, e);
                }
            }
            Some(Err(reason)) => excluded.push(Excluded {
                instance: inst.key(),
                reason,
            }),
            None => {}
        }
    }
    for (f, (x, n, files)) in &resolver.derived {
        if !f.sources().is_empty() {
            remember(&mut used, efficiency(*f, &derived_factor(*x, *n, files)));
        }
    }
    let efficiencies = used.into_values().collect();
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
            .and_then(|r| crate::catalog::regions::note(r, &catalog.instances)),
    })
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
    let cal = embedded_calibration();
    let scenarios = crate::scenario::ScenarioFile {
        schema_version: 1,
        scenarios: vec![scenario.clone()],
    };
    let miss = |pts: &mut dyn Iterator<Item = &crate::calibration::Point>| {
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
    let is_own = |p: &&crate::calibration::Point| {
        p.scenario.as_deref() == Some(scenario.id.as_str())
            || p.job
                .as_ref()
                .and_then(|j| j.scenario().ok())
                .is_some_and(|s| s.id == scenario.id)
    };
    let own = miss(&mut cal.points.iter().filter(is_own));
    let all = || {
        let every = crate::scenario::ScenarioFile::embedded();
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
fn implausible(gpu: &crate::catalog::GpuSpec, u: Rate, v: f64) -> Option<String> {
    let sheet = u.datasheet(gpu)?.value / f64::from(gpu.adapters());
    let share = v / sheet;
    (sheet > 0.0 && !(PLAUSIBLE.0..=PLAUSIBLE.1).contains(&share)).then(|| {
        format!(
            "{} {} {} is {:.1}% of the {} datasheet ({} {}), outside the plausible {:.0}-{:.0}%",
            u.label(),
            short_number(v),
            u.unit(),
            share * 100.0,
            gpu.name,
            short_number(sheet),
            u.unit(),
            PLAUSIBLE.0 * 100.0,
            PLAUSIBLE.1 * 100.0
        )
    })
}

/// Each results file as a measured machine, and the measured figures per catalog GPU.
fn measured_figures(
    catalog: &Catalog,
    scenario: &Scenario,
    figures: &[Rate],
    results: &[(String, ResultsFile)],
    opts: &RankOptions,
    notes: &mut Vec<String>,
) -> (Measured, Vec<Machine>) {
    let mut by_place = ByPlace::new();
    let mut machines = Vec::new();
    for (name, r) in results {
        let mut rejected = None;
        let matched = catalog.match_adapter(r.catalog_name());
        let gpu = matched.map(|g| g.id.clone());
        if let (Some(cg), false) = (matched, r.adapter.software) {
            let mut units: std::collections::BTreeSet<Rate> =
                figures.iter().flat_map(|f| f.chain()).collect();
            // One implausible figure makes the whole file suspect (it is likely of another
            // device), latency included, which has no datasheet to check it against.
            let odd: Vec<String> = units
                .iter()
                .filter_map(|&u| implausible(cg, u, u.measured(r)?))
                .collect();
            if !odd.is_empty() {
                let (what, skip) = if opts.use_implausible {
                    ("used as measured (--use-implausible)".to_string(), false)
                } else {
                    (
                        format!(
                            "none of its figures is used as {}'s (--use-implausible uses them)",
                            cg.name
                        ),
                        true,
                    )
                };
                notes.push(format!("{name}: {}; {what}", odd.join("; ")));
                if skip {
                    units.clear();
                    rejected = Some(format!(
                        "its figures are implausible for {} ({}): not compared (--use-implausible)",
                        cg.name,
                        odd.first().map_or("", String::as_str)
                    ));
                }
            }
            for u in units {
                let Some(v) = u.measured(r) else { continue };
                by_place
                    .entry((cg.id.clone(), u))
                    .or_default()
                    .entry(crate::fleet::place(r))
                    .or_default()
                    .push((v, name.clone()));
            }
        }
        let mut uses = Vec::new();
        let mut complete = true;
        for &f in figures {
            let found = f
                .chain()
                .into_iter()
                .find_map(|u| Some((u, u.measured(r)?)));
            match found {
                Some((u, v)) => {
                    uses.push(if u == f {
                        FigureUse::new(f, v, Derivation::Measured, format!("measured in {name}"))
                    } else {
                        FigureUse::new(f, v, Derivation::StandsIn { used: u }, stand_in_basis(f, u))
                    });
                }
                None => complete = false,
            }
        }
        // One adapter, its memory the catalog's (a GPU the catalog lacks decodes at the
        // server's batch limit: its memory is not known here).
        let mem = matched
            .and_then(|g| g.memory_per_adapter_gb())
            .unwrap_or(f64::INFINITY);
        let hours = (complete && rejected.is_none())
            .then(|| scenario.timing(1, mem, None, value_in(&uses)).ok())
            .flatten()
            .map(|t| t.seconds / 3600.0);
        machines.push(Machine {
            adapter: r.adapter.name.clone(),
            software: r.adapter.software,
            catalog_gpu: gpu,
            file: name.clone(),
            figures: uses,
            hours_per_job: hours,
            instances_faster: None,
            implausible: rejected,
        });
    }
    let measured = by_place
        .into_iter()
        .map(|(k, places)| {
            let files = places.values().flatten().map(|(_, f)| f.clone()).collect();
            let values = places
                .into_values()
                .filter_map(|v| median(v.into_iter().map(|(x, _)| x)))
                .collect();
            (k, (values, files))
        })
        .collect();
    (measured, machines)
}

/// Each figure's value in `uses` (NaN for one it lacks: no term asks for it).
fn value_in(uses: &[FigureUse]) -> impl Fn(Rate) -> f64 + '_ {
    |f| {
        uses.iter()
            .find(|u| u.figure == f)
            .map_or(f64::NAN, |u| u.value)
    }
}

/// The embedded calibration, parsed once.
fn embedded_calibration() -> &'static CalibrationFile {
    static C: OnceLock<CalibrationFile> = OnceLock::new();
    C.get_or_init(CalibrationFile::embedded)
}

/// For figures no calibration rule covers: the median measured / datasheet ratio over the
/// hardware GPUs measured in this ranking (a WGSL kernel's share of the peak), by figure.
fn derived_factors(catalog: &Catalog, figures: &[Rate], measured: &Measured) -> Derived {
    let mut out = BTreeMap::new();
    for f in figures.iter().flat_map(|f| f.chain()) {
        let mut files = Vec::new();
        let ratios: Vec<f64> = measured
            .iter()
            .filter(|((_, fig), _)| *fig == f)
            .filter_map(|((g, _), (vals, from))| {
                let gpu = catalog.gpu(g)?;
                let sheet = f.datasheet(gpu)?.value / f64::from(gpu.adapters());
                let r = median(vals.iter().copied())? / sheet;
                files.extend(from.iter().cloned());
                Some(r)
            })
            .collect();
        let n = ratios.len();
        if let Some(x) = median(ratios) {
            out.insert(f, (x, n, files));
        }
    }
    out
}

/// Per figure: the median measured / datasheet ratio, over how many GPU models, from which
/// files.
type Derived = BTreeMap<Rate, (f64, usize, Vec<String>)>;

/// The files a derived figure comes from, for its basis: "a.json, b.json" (at most 3 named).
fn files_text(files: &[String]) -> String {
    let mut v: Vec<&str> = files.iter().map(String::as_str).collect();
    v.sort();
    v.dedup();
    let more = v.len().saturating_sub(3);
    let mut t = v.into_iter().take(3).collect::<Vec<_>>().join(", ");
    if more > 0 {
        t.push_str(&format!(" and {more} more"));
    }
    t
}

impl FigureUse {
    fn new(f: Rate, value: f64, derivation: Derivation, basis: String) -> FigureUse {
        FigureUse {
            figure: f,
            value,
            unit: f.unit().into(),
            source: derivation.source(),
            basis,
            derivation,
        }
    }
}

/// Finds the value of a figure for one adapter of a catalog GPU: measured, else datasheet x
/// efficiency, else the same for the unit its work falls back to; latency: measured, else
/// the measured hardware median, else the assumption. Remembers every factor it used.
struct Resolver {
    measured: Measured,
    /// Measured / datasheet ratios for figures no calibration rule covers.
    derived: Derived,
    calibration: &'static CalibrationFile,
    /// Latency has no datasheet: measured hardware GPUs' median, if any, and its files.
    hw_latency: Option<(f64, Vec<String>)>,
}

/// Each efficiency factor a ranking used, once per figure and the GPUs it covers.
type Used = BTreeMap<(Rate, String), Efficiency>;

/// A factor as the ranking reports it.
fn efficiency(f: Rate, k: &Factor) -> Efficiency {
    Efficiency {
        figure: f,
        factor: k.value,
        origin: k.origin.name().into(),
        basis: k.basis.clone(),
        applies_to: k.applies_to.clone(),
    }
}

fn remember(used: &mut Used, e: Efficiency) {
    used.entry((e.figure, e.applies_to.clone())).or_insert(e);
}

impl Resolver {
    fn new(
        measured: Measured,
        derived: Derived,
        calibration: &'static CalibrationFile,
    ) -> Resolver {
        let latency = || {
            measured
                .iter()
                .filter(|((_, f), _)| *f == Rate::LatencyDispatch)
        };
        let hw_latency = median(latency().flat_map(|(_, (v, _))| v.iter().copied())).map(|m| {
            (
                m,
                latency()
                    .flat_map(|(_, (_, f))| f.iter().cloned())
                    .collect(),
            )
        });
        Resolver {
            measured,
            derived,
            calibration,
            hw_latency,
        }
    }

    fn median_of(&self, gpu: &GpuSpec, f: Rate) -> Option<f64> {
        self.measured
            .get(&(gpu.id.clone(), f))
            .and_then(|(v, _)| median(v.iter().copied()))
    }

    /// The efficiency for a figure on a GPU: its calibration rule, else the ratio measured
    /// in this ranking, else the default assumption.
    fn factor(&self, f: Rate, gpu: &GpuSpec) -> Factor {
        if let Some(k) = self.calibration.factor(f, gpu) {
            return k;
        }
        if let Some((x, n, files)) = self.derived.get(&f) {
            return derived_factor(*x, *n, files);
        }
        calibration::default_factor(f)
    }

    /// The figure's value on `gpu`, and the efficiency factor behind it when estimated.
    fn resolve(&self, fig: Rate, gpu: &GpuSpec) -> Option<(FigureUse, Option<Efficiency>)> {
        if fig == Rate::LatencyDispatch {
            return Some((self.latency(gpu), None));
        }
        let r = calibration::resolve(
            fig,
            gpu,
            |f| self.median_of(gpu, f),
            |f| self.factor(f, gpu),
        )?;
        let Some((sheet, k)) = &r.estimate else {
            return Some((
                if r.used == fig {
                    FigureUse::new(fig, r.value, Derivation::Measured, "measured".into())
                } else {
                    FigureUse::new(
                        fig,
                        r.value,
                        Derivation::StandsIn { used: r.used },
                        stand_in_basis(fig, r.used),
                    )
                },
                None,
            ));
        };
        let mut basis = format!(
            "{} {} x {:.2} ({}; {})",
            r.used.label(),
            r.used.peak_text(sheet.value),
            k.value,
            k.origin.name(),
            k.applies_to
        );
        if let Some(d) = &sheet.derived {
            basis.push_str(&format!("; peak derived: {d}"));
        }
        if r.used != fig {
            basis.push_str(&format!("; no {} on this GPU", fig.label()));
        }
        if gpu.adapters() > 1 {
            basis.push_str(&format!("; per adapter, {} per package", gpu.adapters()));
        }
        let how = Derivation::Datasheet {
            used: r.used,
            peak: sheet.value,
            factor: k.value,
            origin: k.origin,
        };
        Some((
            FigureUse::new(fig, r.value, how, basis),
            Some(efficiency(r.used, k)),
        ))
    }

    fn latency(&self, gpu: &GpuSpec) -> FigureUse {
        let fig = Rate::LatencyDispatch;
        if let Some(v) = self.median_of(gpu, fig) {
            return FigureUse::new(fig, v, Derivation::Measured, "measured".into());
        }
        match &self.hw_latency {
            Some((v, files)) => FigureUse::new(
                fig,
                *v,
                Derivation::HardwareMedian,
                format!("median of measured hardware GPUs ({})", files_text(files)),
            ),
            None => FigureUse::new(
                fig,
                fig.assumed().unwrap_or(10.0),
                Derivation::Assumed,
                "assumed 10 us per kernel launch (no measured hardware GPU)".into(),
            ),
        }
    }
}

/// Everything needed to cost one catalog instance.
struct Costing<'a> {
    catalog: &'a Catalog,
    findings: &'a [Finding],
    scenario: &'a Scenario,
    figures: &'a [Rate],
    resolver: &'a Resolver,
    opts: &'a RankOptions,
}

impl Costing<'_> {
    /// The ranked row of instance `i`, or why it is left out (`Err`); `None` when the
    /// filters do not select it.
    /// The instance's row and the efficiency factors behind it; Some(Err) says why it is not
    /// ranked, None that the filters left it out.
    #[allow(clippy::type_complexity)]
    fn row(
        &self,
        i: usize,
        inst: &Instance,
    ) -> Result<Option<Result<(RankRow, Vec<Efficiency>), String>>> {
        let Some(gpu) = self.catalog.gpu(&inst.gpu) else {
            return Ok(Some(Err(not_a_catalog_gpu(&inst.gpu))));
        };
        // A job that shards (weights, optimizer state, a served model) needs its share per
        // GPU, over every GPU of every node it runs on.
        let per_node = inst.gpu_count * gpu.adapters();
        let nodes = self.nodes_for(per_node, gpu);
        let admission = self.opts.filters.admit(
            inst,
            Some(gpu),
            self.scenario.memory_floor_on(per_node * nodes),
        );
        if admission == Admission::NotSelected {
            return Ok(None);
        }
        if let Some(why) = self.row_errors(i) {
            return Ok(Some(Err(format!("catalog error: {why}"))));
        }
        if let Admission::TooSmall(why) = admission {
            return Ok(Some(Err(why)));
        }
        if let Some(why) = self.host_floor(inst) {
            return Ok(Some(Err(why)));
        }
        if let Some(date) = &inst.retired {
            return Ok(Some(Err(format!("retired on {date}: no longer sold"))));
        }
        let (price, per_hour) = match self.priced(inst, gpu, nodes)? {
            Ok(x) => x,
            Err(why) => return Ok(Some(Err(why))),
        };
        let mut uses = Vec::new();
        let mut factors = Vec::new();
        for &fig in self.figures {
            match self.resolver.resolve(fig, gpu) {
                Some((u, e)) => {
                    uses.push(u);
                    factors.extend(e);
                }
                None => {
                    return Ok(Some(Err(format!(
                        "no {} figure for {}: not measured, no datasheet figure",
                        fig.name(),
                        gpu.name
                    ))));
                }
            }
        }
        // Figures are per adapter; an instance runs gpu_count packages of `adapters` each.
        let timing = match self.timing(inst, gpu, per_node, nodes, &uses) {
            Ok(x) => x,
            Err(why) => return Ok(Some(Err(why))),
        };
        let mut hours = timing.seconds / 3600.0;
        // Spot capacity is taken back: the expected time with the work redone.
        let risk = (self.opts.pricing == PricingModel::Spot).then(|| {
            spot::expected(
                hours,
                price.interruption.as_ref(),
                self.opts.checkpointing,
                self.scenario.decode.is_some(),
            )
        });
        if let Some(r) = &risk {
            hours = r.expected_hours;
        }
        // A steady rate: the job lasts its hours on every instance, on as many as keep up.
        let steady = match self.steady(hours) {
            Ok(s) => s,
            Err(why) => return Ok(Some(Err(why))),
        };
        let (hours, fleet_per_hour) = match steady {
            Some((s, h)) => (h, per_hour * f64::from(s.instances)),
            None => (hours, per_hour),
        };
        let cost = fleet_per_hour * hours;
        // Every ranked cost is a finite positive amount, whatever the inputs came to.
        if !(cost.is_finite() && cost > 0.0 && hours.is_finite() && hours > 0.0) {
            return Ok(Some(Err(format!(
                "cost per job works out to {cost} (price {per_hour}/h, {hours} h per job): not a finite positive amount"
            ))));
        }
        let mut row = self.ranked(i, inst, gpu, uses, fleet_per_hour, hours);
        row.price_per_hour = per_hour;
        row.nodes = nodes;
        row.steady = steady.map(|(s, _)| s);
        row.timing = Some(timing);
        row.spot = risk;
        Ok(Some(Ok((row, factors))))
    }

    /// The instance's price in the kind and currency asked for, for `nodes` of it: per hour
    /// with the price it came from; Ok(Err) says why it cannot be ranked on price.
    fn priced<'c>(
        &'c self,
        inst: &'c Instance,
        gpu: &GpuSpec,
        nodes: u32,
    ) -> Result<Result<(&'c crate::catalog::Price, f64), String>> {
        if nodes > 1 && self.opts.pricing == PricingModel::Spot {
            return Ok(Err(format!(
                "spot on {nodes} nodes is not modelled (an interruption of any node stops the job)"
            )));
        }
        let Some(price) = inst.prices.get(&self.opts.pricing) else {
            return Ok(Err(format!("no {} price", self.opts.pricing.name())));
        };
        if inst.tier(price) == Tier::Reported && !self.opts.include_reported {
            return Ok(Err(
                "reported price (unverified: not a list price); --include-reported ranks it, marked"
                    .into(),
            ));
        }
        // Spot prices move by the hour: one months old says little of today's, so it does not
        // lead a ranking unless asked for (issue 35 item 7).
        let as_of = price.as_of.as_deref().unwrap_or(&inst.as_of);
        if self.opts.pricing == PricingModel::Spot
            && !self.opts.include_reported
            && let Some(m) = crate::files::months_ago(as_of).filter(|m| *m > STALE_SPOT_MONTHS)
        {
            return Ok(Err(format!(
                "stale spot price: as of {as_of}, {m} months ago (spot prices change by the hour; over {STALE_SPOT_MONTHS} months is not ranked); --include-reported ranks it, marked, or `gpuvalue catalog update` takes a current one"
            )));
        }
        let (bad_gpus, bad_currencies) = Catalog::bad_entries(self.findings);
        if bad_gpus.contains(&gpu.id) {
            return Ok(Err(format!(
                "catalog error in the entry of GPU {:?}",
                gpu.id
            )));
        }
        if let Some(c) = [&price.currency, &self.opts.currency]
            .into_iter()
            .find(|c| bad_currencies.contains(c))
        {
            return Ok(Err(format!("catalog error in the exchange rate of {c}")));
        }
        let per_hour = self
            .catalog
            .convert(price.amount, &price.currency, &self.opts.currency)?
            * f64::from(nodes);
        Ok(Ok((price, per_hour)))
    }

    /// For a job at a steady rate (its `steady_hours`), the instances that keep up when one
    /// takes `hours` for the whole job, with the job's hours; None for a job of fixed size.
    fn steady(&self, hours: f64) -> Result<Option<(Steady, f64)>, String> {
        let Some(h) = self.scenario.job.as_ref().and_then(|j| j.steady_hours) else {
            return Ok(None);
        };
        let need = hours / h;
        // Whole instances; a hair over a whole number is rounding, not another instance.
        let n = (need * (1.0 - 1e-9)).ceil().max(1.0);
        if !(n.is_finite() && n <= 1e6) {
            return Err(format!(
                "{need:.3e} instances would be needed to keep up with the rate (more than a million)"
            ));
        }
        Ok(Some((
            Steady {
                instances: n as u32,
                load: need / n,
            },
            h,
        )))
    }

    /// Why the instance's host cannot feed its GPUs (the scenario's vCPUs per GPU), if so.
    fn host_floor(&self, inst: &Instance) -> Option<String> {
        let need = self.scenario.min_vcpus_per_gpu?;
        // Unknown vCPUs: ranked, with a warning (see `ranked`).
        let vcpu = inst.vcpu?;
        let per_gpu = f64::from(vcpu) / f64::from(inst.gpu_count.max(1));
        (per_gpu < need).then(|| {
            format!("{per_gpu} vCPUs per GPU < {need} needed to feed each GPU (host floor)")
        })
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

    /// How one job runs on the instance (`adapters` GPUs) and how long it takes: the terms
    /// split over the GPUs, serving in the layout that finishes first, and the collectives
    /// that outlast the compute ([`Scenario::timing`]). Err: why the job cannot run there.
    fn timing(
        &self,
        inst: &Instance,
        gpu: &GpuSpec,
        adapters: u32,
        nodes: u32,
        uses: &[FigureUse],
    ) -> Result<Timing, String> {
        let mem = gpu.memory_per_adapter_gb().unwrap_or(0.0);
        let link = inst
            .interconnect
            .as_ref()
            .map(|l| (l.kind.as_str(), l.bus_gbps));
        let net = crate::catalog::networks::of(&inst.provider, &inst.instance_type)
            .map(|n| (n.kind.as_str(), n.gb_per_s()));
        self.scenario
            .timing_nodes(adapters, nodes, mem, link, net, value_in(uses))
    }

    /// The nodes the job runs on for an instance of `per_node` adapters: the number asked
    /// for, or (auto) the fewest whose memory holds the job's sharded state.
    fn nodes_for(&self, per_node: u32, gpu: &GpuSpec) -> u32 {
        match self.opts.nodes {
            Nodes::Fixed(n) => n.max(1),
            Nodes::Auto => {
                let mem = gpu.memory_per_adapter_gb().unwrap_or(0.0);
                (1..=Nodes::MOST)
                    .find(|n| {
                        self.scenario
                            .memory_floor_on(per_node * n)
                            .is_none_or(|need| need <= mem)
                    })
                    .unwrap_or(Nodes::MOST)
            }
        }
    }

    fn ranked(
        &self,
        i: usize,
        inst: &Instance,
        gpu: &GpuSpec,
        uses: Vec<FigureUse>,
        per_hour: f64,
        hours: f64,
    ) -> RankRow {
        let cost = per_hour * hours;
        // The row's warnings, less those about its other prices (a stale spot price does not
        // concern an on-demand ranking).
        let this = format!(".prices.{}.", self.opts.pricing.name());
        let mut warnings: Vec<String> = self
            .findings
            .iter()
            .filter(|x| x.severity == Severity::Warning && x.instance == Some(i))
            .filter(|x| !x.path.contains(".prices.") || x.path.contains(&this))
            .map(|x| x.message.clone())
            .collect();
        if let (Some(need), None) = (self.scenario.min_vcpus_per_gpu, inst.vcpu) {
            warnings.push(format!(
                "vCPU count unknown: the scenario's host floor ({need} vCPUs per GPU) is not checked"
            ));
        }
        let budget = self.opts.budget;
        RankRow {
            rank: 0,
            place: 0,
            tied: false,
            provider: inst.provider.clone(),
            instance_type: inst.instance_type.clone(),
            region: inst.region.clone(),
            gpu: gpu.id.clone(),
            gpu_name: gpu.name.clone(),
            gpu_count: inst.gpu_count,
            nodes: 1,
            basis: if uses.iter().all(|u| u.source == Source::Measured) {
                Source::Measured
            } else {
                Source::Estimated
            },
            figures: uses,
            price_per_hour: per_hour,
            currency: self.opts.currency.clone(),
            pricing: self.opts.pricing,
            price_as_of: inst
                .prices
                .get(&self.opts.pricing)
                .map_or(&inst.as_of[..], |p| p.as_of(inst))
                .to_string(),
            price_confidence: format!("{:?}", inst.confidence).to_lowercase(),
            price_tier: inst
                .prices
                .get(&self.opts.pricing)
                .map_or(Tier::List, |p| inst.tier(p)),
            hours_per_job: hours,
            jobs_per_hour: 1.0 / hours,
            cost_per_job: cost,
            jobs_per_currency_unit: 1.0 / cost,
            budget_hours: budget.map(|b| b / per_hour),
            budget_jobs: budget.map(|b| b / per_hour / hours),
            warnings,
            steady: None,
            timing: None,
            spot: None,
        }
    }
}

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
fn share_places(rows: &mut [RankRow], uncertainty: f64) {
    let mut lead = 0;
    for i in 0..rows.len() {
        let band = if rows[i].basis == Source::Measured && rows[lead].basis == Source::Measured {
            MEASURED_UNCERTAINTY
        } else {
            uncertainty
        };
        if i > 0 && rows[i].cost_per_job <= rows[lead].cost_per_job * band {
            rows[i].place = rows[lead].rank;
            rows[i].tied = true;
            rows[lead].tied = true;
        } else {
            lead = i;
            rows[i].place = rows[i].rank;
        }
    }
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
    use crate::catalog::{AMBIGUOUS_GPU, MISMATCH_GPU, NOT_GPU, UNKNOWN_GPU, UNSPECIFIED_GPU};
    let reasons = [
        (
            UNSPECIFIED_GPU,
            "no datasheet entry in this gpuvalue yet for",
        ),
        (NOT_GPU, "not a GPU:"),
        (MISMATCH_GPU, "its memory fits no GPU named"),
        (AMBIGUOUS_GPU, "could be several GPUs:"),
        (UNKNOWN_GPU, "an accelerator no entry names:"),
    ];
    for (prefix, says) in reasons {
        if let Some(name) = gpu.strip_prefix(prefix) {
            return format!("{says} {name}");
        }
    }
    format!("unknown GPU id {gpu:?}")
}
