//! Efficiency calibration: what fraction of a datasheet peak real work reaches, per figure
//! and GPU generation, each factor fitted on published measurements (the embedded
//! `src/data/calibration.json`). Schema (version 1, JSON):
//!
//! ```text
//! schema_version  1
//! rules[]   { figure, vendor?, archs?[], factor, basis, points[] (ids it is fitted on) }
//! points[]  { id, gpu, scenario? | figure?, relative_to?, published, unit, conditions,
//!             source, date }
//! ```
//! A point is a published result for one GPU package: a scenario's throughput (output units
//! per second: images/s, tokens/s, FLOP/s), a figure's own rate (a STREAM triad in GB/s), or a
//! ratio to another GPU's throughput (`relative_to`). `implied` recomputes each point from the
//! catalog's datasheet figures, these factors and the scenario model; `fit` solves for the
//! factor of a rule that makes its points' geometric-mean ratio 1. The rule most specific to
//! a GPU applies: one naming its architecture, else its vendor, else one for all GPUs.

use crate::files::parse_json;
use crate::health::Expectation;
use crate::market::catalog::{Catalog, GpuSpec};
use crate::model::AdapterSummary;
use crate::value::scenario::{Placement, Rate, Scenario, ScenarioFile, Sheet};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

const EMBEDDED: &str = include_str!("../data/calibration.json");

/// How far an implied figure may be from its published one (either way) for the model to
/// count as calibrated: 1.5x.
pub const TOLERANCE: f64 = 1.5;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub figure: Rate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub archs: Vec<String>,
    pub factor: f64,
    pub basis: String,
    /// Ids of the points the factor is fitted on; empty: not calibrated (the basis says how
    /// the factor was chosen).
    #[serde(default)]
    pub points: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    pub id: String,
    /// Catalog GPU id; the published figure is per package of it.
    pub gpu: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<Rate>,
    /// A ratio of this GPU's scenario throughput to that GPU's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<String>,
    /// A job with parameters instead of `scenario` (`rank --job`'s LLM jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<crate::value::jobs::JobSpec>,
    /// GPUs the published figure ran on (default 1): the scenario's compute split over
    /// them, its collectives over `bus_gbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// The system's GPU interconnect bus bandwidth (GB/s); none: communication not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_gbps: Option<f64>,
    /// A run on several nodes of `gpus` GPUs each (`rank --nodes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// The network between those nodes, the node's total in Gb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_gbps: Option<f64>,
    pub published: f64,
    pub unit: String,
    pub conditions: String,
    pub source: String,
    pub date: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub rules: Vec<Rule>,
    pub points: Vec<Point>,
}

/// Where a factor came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Fitted on published measurements (a calibration rule with points).
    Calibrated,
    /// Measured / datasheet over the hardware GPUs measured in this ranking.
    Derived,
    /// A stated assumption: no published point and nothing measured.
    Assumed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Factor {
    pub value: f64,
    pub origin: Origin,
    pub basis: String,
    /// Which GPUs the factor covers, for people ("NVIDIA volta/ampere", "all GPUs").
    pub applies_to: String,
}

/// A figure's value for one adapter, and how it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The figure whose rate was used (the asked one, or one its work falls back to).
    pub used: Rate,
    /// Per adapter, in the asked figure's unit.
    pub value: f64,
    /// The datasheet figure and factor, for an estimate; None when measured.
    pub estimate: Option<(Sheet, Factor)>,
}

/// The factor assumed for a figure nothing calibrates or measures.
pub fn default_factor(f: Rate) -> Factor {
    let value = match f {
        // Portable WGSL GEMM reaches roughly 35-45% of the FP32 peak (design notes §4).
        Rate::MatmulF32 => 0.35,
        Rate::StreamTriad => 0.8,
        Rate::LatencyDispatch => 1.0,
        _ => 0.5,
    };
    Factor {
        value,
        origin: Origin::Assumed,
        basis: "no calibration point and no measured GPU: default assumption".into(),
        applies_to: "all GPUs".into(),
    }
}

impl Origin {
    /// As outputs print it.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Calibrated => "calibrated",
            Origin::Derived => "derived",
            Origin::Assumed => "assumed",
        }
    }
}

impl Rule {
    /// How specifically this rule covers `gpu`: 2 by architecture, 1 by vendor, 0 for all;
    /// None when it does not cover it.
    fn specificity(&self, gpu: &GpuSpec) -> Option<u8> {
        if let Some(v) = &self.vendor
            && !v.eq_ignore_ascii_case(&gpu.vendor)
        {
            return None;
        }
        if !self.archs.is_empty() {
            let arch = gpu.arch.as_deref()?;
            return self.archs.iter().any(|a| a == arch).then_some(2);
        }
        Some(u8::from(self.vendor.is_some()))
    }

    pub fn applies_to(&self) -> String {
        match (&self.vendor, self.archs.is_empty()) {
            (None, true) => "all GPUs".into(),
            (v, _) => format!(
                "{}{}",
                v.as_deref().unwrap_or("any vendor"),
                if self.archs.is_empty() {
                    String::new()
                } else {
                    format!(" {}", self.archs.join("/"))
                }
            ),
        }
    }

    fn factor(&self) -> Factor {
        let (origin, basis) = if self.points.is_empty() {
            (
                Origin::Assumed,
                format!("no published point: {}", self.basis),
            )
        } else {
            (
                Origin::Calibrated,
                format!(
                    "fitted on {} published result(s): {}",
                    self.points.len(),
                    self.basis
                ),
            )
        };
        Factor {
            value: self.factor,
            origin,
            basis,
            applies_to: self.applies_to(),
        }
    }
}

/// Walks a figure's fallback chain for one GPU: a measured value of the figure (per
/// adapter), else its datasheet figure x factor, else the same for the unit its work falls
/// back to. None: no unit of the chain has a figure.
pub fn resolve(
    fig: Rate,
    gpu: &GpuSpec,
    measured: impl Fn(Rate) -> Option<f64>,
    factor: impl Fn(Rate) -> Factor,
) -> Option<Resolved> {
    for f in fig.chain() {
        if let Some(v) = measured(f) {
            return Some(Resolved {
                used: f,
                value: v,
                estimate: None,
            });
        }
        if let Some(sheet) = f.datasheet(gpu) {
            let k = factor(f);
            return Some(Resolved {
                used: f,
                value: sheet.value * k.value / f64::from(gpu.adapters()),
                estimate: Some((sheet, k)),
            });
        }
    }
    None
}

impl CalibrationFile {
    pub fn embedded() -> CalibrationFile {
        Self::parse(EMBEDDED, "embedded calibration").expect("the embedded calibration parses")
    }

    pub fn parse(text: &str, name: &str) -> Result<CalibrationFile> {
        let f: CalibrationFile = parse_json(text, name)?;
        if f.schema_version != 1 {
            bail!(
                "{name}: schema_version {} is not one this gpuvalue reads (1)",
                f.schema_version
            );
        }
        for (i, r) in f.rules.iter().enumerate() {
            if !(r.factor.is_finite() && r.factor > 0.0 && r.factor <= 1.0) {
                bail!(
                    "{name}: rules[{i}].factor: expected a fraction in 0 < factor <= 1, found {}",
                    r.factor
                );
            }
            for p in &r.points {
                if !f.points.iter().any(|x| &x.id == p) {
                    bail!("{name}: rules[{i}].points: no point has id {p:?}");
                }
            }
        }
        for (i, p) in f.points.iter().enumerate() {
            let named = [p.scenario.is_some(), p.figure.is_some(), p.job.is_some()];
            if named.iter().filter(|x| **x).count() != 1 {
                bail!(
                    "{name}: points[{i}] ({}): give one of a scenario, a job or a figure",
                    p.id
                );
            }
            if let Some(j) = &p.job {
                j.scenario()
                    .with_context(|| format!("{name}: points[{i}] ({}).job", p.id))?;
            }
            if !(p.published.is_finite() && p.published > 0.0) {
                bail!(
                    "{name}: points[{i}].published: expected a positive number, found {}",
                    p.published
                );
            }
        }
        Ok(f)
    }

    /// The calibration rule for a figure on a GPU, as a factor; None when no rule covers it.
    pub fn factor(&self, fig: Rate, gpu: &GpuSpec) -> Option<Factor> {
        self.rules
            .iter()
            .filter(|r| r.figure == fig)
            .filter_map(|r| Some((r.specificity(gpu)?, r)))
            .max_by_key(|(s, _)| *s)
            .map(|(_, r)| r.factor())
    }

    /// The rule's factor, else the default assumption.
    fn factor_or_default(&self, fig: Rate, gpu: &GpuSpec) -> Factor {
        self.factor(fig, gpu).unwrap_or_else(|| default_factor(fig))
    }

    /// A scenario's throughput on one package of `gpu` from datasheet figures and these
    /// factors alone (output units per second; FLOP/s when the job states no output).
    pub fn throughput(
        &self,
        catalog: &Catalog,
        scenarios: &ScenarioFile,
        scenario: &str,
        gpu: &str,
    ) -> Result<f64> {
        self.throughput_on(catalog, scenarios, scenario, gpu, 1, None)
    }

    /// The scenario's throughput on `gpus` packages of `gpu`, by scenario id.
    pub fn throughput_on(
        &self,
        catalog: &Catalog,
        scenarios: &ScenarioFile,
        scenario: &str,
        gpu: &str,
        gpus: u32,
        bus_gbps: Option<f64>,
    ) -> Result<f64> {
        self.throughput_of(
            catalog,
            scenarios.get(scenario)?,
            gpu,
            gpus,
            bus_gbps,
            (1, None),
        )
    }

    /// The throughput of scenario `s` on `gpus` packages of `gpu` (on each of `nodes.0`
    /// nodes linked by a network of `nodes.1` Gb/s a node): the compute split over every
    /// adapter, decoding with the batch their memory holds, plus what the scenario's
    /// collectives over `bus_gbps` (and the network) add beyond the compute.
    pub fn throughput_of(
        &self,
        catalog: &Catalog,
        s: &Scenario,
        gpu: &str,
        gpus: u32,
        bus_gbps: Option<f64>,
        nodes: (u32, Option<f64>),
    ) -> Result<f64> {
        let g = catalog
            .gpu(gpu)
            .with_context(|| format!("calibration names GPU {gpu:?}, not in the catalog"))?;
        let rate = |f: Rate| -> Result<f64> {
            Ok(if f == Rate::LatencyDispatch {
                f.assumed().unwrap_or(10.0)
            } else {
                resolve(f, g, |_| None, |x| self.factor_or_default(x, g))
                    .with_context(|| format!("GPU {gpu} has no figure for {}", f.name()))?
                    .value
            })
        };
        let mut rates = std::collections::BTreeMap::new();
        for f in s.figures() {
            rates.insert(f, rate(f)?);
        }
        let n = gpus.max(1) * g.adapters();
        let mem = g.memory_per_adapter_gb().unwrap_or(0.0);
        let at = Placement {
            adapters: n,
            nodes: nodes.0,
            mem_gb: mem,
            link: bus_gbps.map(|b| ("the point's link", b)),
            net: nodes.1.map(|g| ("the point's network", g / 8.0)),
            gpu: Some(g),
        };
        let timing = s
            .timing_nodes(&at, |f| rates.get(&f).copied().unwrap_or(f64::NAN))
            .map_err(|why| anyhow::anyhow!("{gpu}: {why}"))?;
        let amount = s
            .job
            .as_ref()
            .and_then(|j| j.output.as_ref())
            .map_or(1.0, |o| o.amount);
        Ok(amount / timing.seconds)
    }

    /// What the model says a point's published figure is.
    pub fn implied(&self, p: &Point, catalog: &Catalog, scenarios: &ScenarioFile) -> Result<f64> {
        if let Some(fig) = p.figure {
            let g = catalog.gpu(&p.gpu).with_context(|| {
                format!(
                    "calibration point {}: GPU {:?} not in the catalog",
                    p.id, p.gpu
                )
            })?;
            let r = resolve(fig, g, |_| None, |f| self.factor_or_default(f, g))
                .with_context(|| format!("calibration point {}: no {} figure", p.id, fig.name()))?;
            return Ok(r.value * f64::from(g.adapters()));
        }
        let generated;
        let s = match &p.job {
            Some(j) => {
                generated = j
                    .scenario()
                    .with_context(|| format!("calibration point {}", p.id))?;
                &generated
            }
            None => scenarios.get(p.scenario.as_deref().unwrap_or_default())?,
        };
        let t = self.throughput_of(
            catalog,
            s,
            &p.gpu,
            p.gpus.unwrap_or(1),
            p.bus_gbps,
            (p.nodes.unwrap_or(1), p.network_gbps),
        )?;
        match &p.relative_to {
            Some(other) => Ok(t / self.throughput_of(catalog, s, other, 1, None, (1, None))?),
            None => Ok(t),
        }
    }

    /// Every point with its implied figure and implied / published ratio.
    pub fn check(&self, catalog: &Catalog, scenarios: &ScenarioFile) -> Result<Vec<PointCheck>> {
        self.points
            .iter()
            .map(|p| {
                let implied = self.implied(p, catalog, scenarios)?;
                Ok(PointCheck {
                    id: p.id.clone(),
                    gpu: p.gpu.clone(),
                    what: p
                        .scenario
                        .clone()
                        .or_else(|| p.job.as_ref().and_then(|j| j.scenario().ok()).map(|s| s.id))
                        .or_else(|| p.figure.map(|f| f.name().to_string()))
                        .unwrap_or_default(),
                    published: p.published,
                    implied,
                    ratio: implied / p.published,
                    unit: p.unit.clone(),
                    fitted: self.rules.iter().any(|r| r.points.contains(&p.id)),
                    source: p.source.clone(),
                })
            })
            .collect()
    }

    /// The factor for rule `i` that makes its points' geometric-mean implied / published
    /// ratio 1, the other factors as they are. None for a rule without points.
    pub fn fit(
        &self,
        i: usize,
        catalog: &Catalog,
        scenarios: &ScenarioFile,
    ) -> Result<Option<f64>> {
        let rule = &self.rules[i];
        if rule.points.is_empty() {
            return Ok(None);
        }
        let log_ratio = |k: f64| -> Result<f64> {
            let mut c = self.clone();
            c.rules[i].factor = k;
            let mut sum = 0.0;
            for id in &rule.points {
                let p = c
                    .points
                    .iter()
                    .find(|p| &p.id == id)
                    .expect("checked on parse");
                sum += (c.implied(p, catalog, scenarios)? / p.published).ln();
            }
            Ok(sum / rule.points.len() as f64)
        };
        // Throughput rises with the factor: bisect on log scale over 1e-3..1.
        let (mut lo, mut hi) = (1e-3f64, 1.0f64);
        if log_ratio(hi)? < 0.0 {
            return Ok(Some(hi));
        }
        for _ in 0..60 {
            let mid = (lo * hi).sqrt();
            if log_ratio(mid)? < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(Some((lo * hi).sqrt()))
    }
}

/// One calibration point recomputed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointCheck {
    pub id: String,
    pub gpu: String,
    /// The scenario or figure the point measures.
    pub what: String,
    pub published: f64,
    pub implied: f64,
    /// implied / published.
    pub ratio: f64,
    pub unit: String,
    /// Whether a rule is fitted on it (else it only checks the model).
    pub fitted: bool,
    pub source: String,
}
/// What a burn holds an adapter to, what the buyer pays for: the catalog GPU this adapter is, its datasheet FP32 rate per
/// adapter, and the calibrated share of it a portable matmul reaches (the ranking's own
/// factor, so the burn holds the GPU to the figure the ranking charges for).
pub fn burn_expectation(
    catalog: &Catalog,
    calibration: &CalibrationFile,
    info: &AdapterSummary,
) -> Option<Expectation> {
    let gpu = catalog_gpu(catalog, info)?;
    let sheet = Rate::MatmulF32.datasheet(gpu)?.value / f64::from(gpu.adapters());
    let factor = calibration
        .factor(Rate::MatmulF32, gpu)
        .unwrap_or_else(|| crate::value::calibration::default_factor(Rate::MatmulF32));
    Some(Expectation {
        gpu: gpu.name.clone(),
        datasheet_gflops: sheet,
        expected_gflops: sheet * factor.value,
        basis: format!("{:.2} x datasheet FP32 ({})", factor.value, factor.basis),
        board_w: board_w(gpu),
    })
}

/// The catalog GPU a hardware adapter is (by its name, or its OpenCL board or device name);
/// None for a software adapter.
fn catalog_gpu<'c>(catalog: &'c Catalog, info: &AdapterSummary) -> Option<&'c GpuSpec> {
    if info.software {
        return None;
    }
    catalog.match_adapter(&info.name).or_else(|| {
        let o = info.opencl.as_ref()?;
        catalog
            .match_adapter(o.board_name.as_deref().unwrap_or(&o.device_name))
            .or_else(|| catalog.match_adapter(&o.device_name))
    })
}

fn board_w(gpu: &GpuSpec) -> Option<f64> {
    gpu.tdp_w.map(|w| w / f64::from(gpu.adapters()))
}

/// The datasheet board power of a hardware adapter, W, from the built-in catalog: the
/// bound on the power its telemetry may read (the bench's and burn's sampler).
pub fn board_power_w(info: &AdapterSummary) -> Option<f64> {
    board_w(catalog_gpu(&Catalog::embedded(), info)?)
}
