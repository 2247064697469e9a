//! Scenarios: what a job needs, as amounts of work per measured figure. Schema (version 1,
//! JSON; the embedded default is `src/data/scenarios.json`):
//!
//! ```text
//! schema_version  1
//! scenarios[]     { id, description, min_gpu_memory_gb?, job?: { name, assumption },
//!                   terms[]: { figure, work, unit } }
//! ```
//! A job's time on one GPU is the sum over its terms: `work / rate` for throughput figures
//! (FLOP at matmul GFLOPS, bytes at STREAM GB/s) and `work x cost` for latency figures
//! (dispatches at the per-dispatch cost). The work amounts are the scenario's weights.

use crate::catalog::Gpu;
use crate::figure::FigureKey;
use crate::files::parse_json;
use crate::results::ResultsFile;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::Path;

const EMBEDDED: &str = include_str!("data/scenarios.json");

/// Largest amount of work one scenario term may hold (FLOP, bytes or dispatches): a zettascale
/// job is 1e21 FLOP; more is a typo, and would make every cost infinite.
pub const MAX_WORK: f64 = 1e24;

/// A figure a scenario can score, with how to measure it and how to estimate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// FP32 matmul, GFLOPS.
    MatmulF32,
    /// FP16 matmul with FP32 accumulation, GFLOPS.
    MatmulF16,
    /// The faster of native f64 and emulated double (df64) matmul, GFLOPS.
    MatmulF64Best,
    /// STREAM triad, GB/s.
    StreamTriad,
    /// Per-dispatch cost inside a batch, microseconds.
    LatencyDispatch,
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::MatmulF32 => "matmul_f32",
            Figure::MatmulF16 => "matmul_f16",
            Figure::MatmulF64Best => "matmul_f64_best",
            Figure::StreamTriad => "stream_triad",
            Figure::LatencyDispatch => "latency_dispatch",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Figure::MatmulF32 | Figure::MatmulF16 | Figure::MatmulF64Best => "GFLOPS",
            Figure::StreamTriad => "GB/s",
            Figure::LatencyDispatch => "us",
        }
    }

    /// Seconds that `work` units cost at `value` (in this figure's unit).
    pub fn seconds(self, work: f64, value: f64) -> f64 {
        match self {
            Figure::LatencyDispatch => work * value * 1e-6,
            _ => work / (value * 1e9),
        }
    }

    /// The datasheet ceiling in this figure's unit, and what it is.
    pub fn datasheet(self, gpu: &Gpu) -> Option<(f64, &'static str)> {
        match self {
            Figure::MatmulF32 => gpu.fp32_tflops.map(|t| (t * 1e3, "FP32 peak")),
            // WGSL reaches no tensor cores: FP16 matmul is estimated from the FP32 peak, with
            // no speed-up assumed.
            Figure::MatmulF16 => gpu
                .fp32_tflops
                .map(|t| (t * 1e3, "FP32 peak (no FP16 speed-up assumed)")),
            Figure::MatmulF64Best => gpu
                .fp64_vector_tflops
                .map(|t| (t * 1e3, "FP64 vector peak")),
            Figure::StreamTriad => gpu.bandwidth_gbps.map(|b| (b, "memory bandwidth")),
            Figure::LatencyDispatch => None,
        }
    }

    /// Fraction of the datasheet figure assumed when no measured GPU gives a better one.
    pub fn default_efficiency(self) -> f64 {
        match self {
            // Portable WGSL GEMM reaches roughly 35-45% of peak at best (design notes §4).
            Figure::MatmulF32 | Figure::MatmulF16 | Figure::MatmulF64Best => 0.35,
            // STREAM triad typically reaches most of the rated bandwidth.
            Figure::StreamTriad => 0.8,
            Figure::LatencyDispatch => 1.0,
        }
    }

    /// An assumed value where no datasheet figure exists and nothing was measured.
    pub fn assumed(self) -> Option<f64> {
        match self {
            // Per-dispatch cost of a discrete GPU in a batch: an assumption, shown as such.
            Figure::LatencyDispatch => Some(10.0),
            _ => None,
        }
    }

    /// The measured figures this one is the best of.
    pub fn sources(self) -> &'static [FigureKey] {
        match self {
            Figure::MatmulF32 => &[FigureKey::MatmulF32],
            Figure::MatmulF16 => &[FigureKey::MatmulF16],
            Figure::MatmulF64Best => &[FigureKey::MatmulF64, FigureKey::MatmulDf64],
            Figure::StreamTriad => &[FigureKey::StreamTriad],
            Figure::LatencyDispatch => &[FigureKey::LatencyDispatch],
        }
    }

    /// The figure in a results file, if measured there: the best over its sources (and,
    /// for matmul, over sizes).
    pub fn measured(self, r: &ResultsFile) -> Option<f64> {
        let found = self.sources().iter().filter_map(|&k| r.best(k));
        if self.sources()[0].info().higher_is_better {
            found.reduce(f64::max)
        } else {
            found.reduce(f64::min)
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub name: String,
    pub assumption: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Term {
    pub figure: Figure,
    /// Amount of work at this figure: FLOP, bytes, or dispatches.
    pub work: f64,
    pub unit: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub id: String,
    pub description: String,
    #[serde(default)]
    pub min_gpu_memory_gb: Option<f64>,
    #[serde(default)]
    pub job: Option<Job>,
    pub terms: Vec<Term>,
}

impl Scenario {
    /// Seconds one job takes on one GPU with the given figure values.
    pub fn seconds_per_job(&self, value_of: impl Fn(Figure) -> f64) -> f64 {
        self.terms
            .iter()
            .map(|t| t.figure.seconds(t.work, value_of(t.figure)))
            .sum()
    }

    pub fn job_name(&self) -> String {
        self.job.as_ref().map_or_else(
            || format!("one unit of the {} scenario", self.id),
            |j| j.name.clone(),
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub schema_version: u32,
    pub scenarios: Vec<Scenario>,
}

impl ScenarioFile {
    pub fn embedded() -> ScenarioFile {
        Self::parse(EMBEDDED, "embedded scenarios").expect("the embedded scenarios parse")
    }

    pub fn parse(text: &str, name: &str) -> Result<ScenarioFile> {
        let f: ScenarioFile = parse_json(text, name)?;
        if f.schema_version != 1 {
            bail!(
                "{name}: schema_version {} is not one this gpuvalue reads (1)",
                f.schema_version
            );
        }
        let mut ids = std::collections::HashSet::new();
        for (i, s) in f.scenarios.iter().enumerate() {
            if !ids.insert(s.id.clone()) {
                bail!(
                    "{name}: scenarios[{i}].id: duplicate scenario id {:?}",
                    s.id
                );
            }
            if s.terms.is_empty() {
                bail!("{name}: scenarios[{i}].terms: a scenario needs at least one term");
            }
            for (j, t) in s.terms.iter().enumerate() {
                if !(t.work.is_finite() && t.work > 0.0 && t.work <= MAX_WORK) {
                    bail!(
                        "{name}: scenarios[{i}].terms[{j}].work: expected an amount in 0 < work <= {MAX_WORK:e}, found {}",
                        t.work
                    );
                }
            }
            if let Some(m) = s.min_gpu_memory_gb
                && !(m.is_finite() && (0.0..=1e4).contains(&m))
            {
                bail!(
                    "{name}: scenarios[{i}].min_gpu_memory_gb: expected a number of GB in 0..=1e4, found {m}"
                );
            }
        }
        Ok(f)
    }

    pub fn load(path: &Path) -> Result<ScenarioFile> {
        let text = crate::files::read_text(path, "scenarios file")?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The embedded scenarios plus the user's (which replace embedded ones of the same id).
    pub fn with_user(user: Option<&Path>) -> Result<ScenarioFile> {
        let mut f = Self::embedded();
        if let Some(p) = user {
            for s in Self::load(p)?.scenarios {
                match f.scenarios.iter_mut().find(|x| x.id == s.id) {
                    Some(x) => *x = s,
                    None => f.scenarios.push(s),
                }
            }
        }
        Ok(f)
    }

    pub fn get(&self, id: &str) -> Result<&Scenario> {
        self.scenarios.iter().find(|s| s.id == id).with_context(|| {
            format!(
                "unknown scenario {id:?}; known: {}",
                self.scenarios
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_scenarios_parse_and_state_their_assumptions() {
        let f = ScenarioFile::embedded();
        for id in ["training", "inference", "hpc"] {
            let s = f.get(id).unwrap();
            assert!(
                s.job.as_ref().is_some_and(|j| !j.assumption.is_empty()),
                "{id}"
            );
        }
        assert!(
            f.get("mining")
                .unwrap_err()
                .to_string()
                .contains("training")
        );
    }

    #[test]
    fn seconds_per_job_adds_the_terms() {
        let s = Scenario {
            id: "t".into(),
            description: String::new(),
            min_gpu_memory_gb: None,
            job: None,
            terms: vec![
                Term {
                    figure: Figure::MatmulF32,
                    work: 2e12,
                    unit: "FLOP".into(),
                },
                Term {
                    figure: Figure::LatencyDispatch,
                    work: 1000.0,
                    unit: "dispatches".into(),
                },
            ],
        };
        // 2e12 FLOP at 1000 GFLOPS = 2 s; 1000 dispatches at 10 us = 0.01 s.
        let t = s.seconds_per_job(|f| {
            if f == Figure::LatencyDispatch {
                10.0
            } else {
                1000.0
            }
        });
        assert!((t - 2.01).abs() < 1e-12, "{t}");
    }

    #[test]
    fn bad_scenario_files_are_refused_with_the_path() {
        let e = ScenarioFile::parse(r#"{"schema_version": 1, "scenarios": [{"id": "x", "description": "", "terms": [{"figure": "matmul_f32", "work": -1, "unit": "FLOP"}]}]}"#, "s.json").unwrap_err();
        assert!(e.to_string().contains("scenarios[0].terms[0].work"), "{e}");
        let e = ScenarioFile::parse(r#"{"schema_version": 1, "scenarios": [{"id": "x", "description": "", "terms": [{"figure": "matmul_f128", "work": 1, "unit": "FLOP"}]}]}"#, "s.json").unwrap_err();
        assert!(e.to_string().contains("figure"), "{e}");
    }
}
