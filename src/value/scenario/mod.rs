//! Scenarios: what a job needs, as amounts of work on the execution units frameworks use,
//! plus what must fit on each GPU. Schema (version 2, JSON; version 1 files still load; the
//! embedded default is `src/data/scenarios.json`):
//!
//! ```text
//! schema_version      1 | 2
//! scenarios[]         { id, description,
//!                       job?: { name, assumption, output?: { amount, unit },
//!                               steady_hours? },  work arriving at a steady rate
//!                                  over that many hours (rows pay whole instances)
//!                       memory_floor?: [ { what, gb } ],   per-GPU memory the job needs
//!                       sharded_memory?: [ { what, gb } ], memory split over an instance's
//!                                                          GPUs (sharded weights, optimizer)
//!                       decode?: { tokens, weight_gb, kv_mb_per_token, context_tokens,
//!                                  max_batch, memory_use },  autoregressive decoding
//!                       collectives?: { bytes_per_step, steps, what, parallelism? },
//!                                  communication per step (all-gather/reduce-scatter bytes
//!                                  per GPU; an all-reduce counts twice) over the instance's
//!                                  interconnect, overlapped with the compute: "data"
//!                                  (default) over every GPU, "tensor" within each copy of
//!                                  a served model (needs decode)
//!                       min_gpu_memory_gb?,                 (version 1: one number)
//!                       min_vcpus_per_gpu?,                 host floor: vCPUs to feed a GPU
//!                       terms[]: { figure, work, unit, what? } }
//! ```
//! A job's time on one GPU is the sum over its terms: `work / rate` for throughput figures
//! (FLOP at a matmul rate, integer operations at an INT8 rate, bytes at STREAM GB/s) and
//! `work x cost` for latency figures (dispatches at the per-dispatch cost). Summing, not
//! overlapping, the compute and memory terms is the model's stated simplification: it is
//! what the calibration points are fitted with.

use crate::figure::FigureKey;
use crate::files::parse_json;
use crate::market::catalog::GpuSpec;
use crate::results::ResultsFile;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::Path;

mod check;
pub mod engine;
pub mod serving;
mod timing;
use check::*;
pub use timing::*;

const EMBEDDED: &str = include_str!("../../data/scenarios.json");

/// Largest amount of work one scenario term may hold (FLOP, bytes or dispatches): a zettascale
/// job is 1e21 FLOP; more is a typo, and would make every cost infinite.
pub const MAX_WORK: f64 = 1e24;

/// Newest scenario schema this gpuvalue reads.
pub const SCHEMA_VERSION: u32 = 2;

/// A rate on one kind of execution unit that a scenario term runs at: how to measure it, where
/// a datasheet gives it, and which unit the work falls back to where a GPU lacks this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// FP32 on the vector units, GFLOPS.
    MatmulF32,
    /// FP16 on the vector units (FP32 accumulation), GFLOPS.
    MatmulF16,
    /// FP16/BF16 on the matrix engines (tensor/matrix cores), GFLOPS.
    MatmulF16Matrix,
    /// TF32 on the matrix engines, GFLOPS.
    MatmulTf32Matrix,
    /// FP8 on the matrix engines, GFLOPS.
    MatmulFp8Matrix,
    /// FP4 on the matrix engines (NVFP4, MXFP4), GFLOPS.
    MatmulFp4Matrix,
    /// INT8 packed dot products on the vector units, GOPS.
    MatmulInt8,
    /// INT8 on the matrix engines, GOPS.
    MatmulInt8Matrix,
    /// FP64 on the vector units: the faster of native f64 and emulated double (df64), GFLOPS.
    MatmulF64Best,
    /// FP64 on the matrix engines (FP64 tensor cores, AMD matrix cores), GFLOPS.
    MatmulF64Matrix,
    /// An LLM's training matmuls in FP16/BF16 on the matrix engines: the same datasheet peak
    /// as `MatmulF16Matrix`, with its own efficiency, fitted on published LLM training
    /// (attention, optimizer and framework overheads a ResNet-50 point does not have).
    LlmTrainF16Matrix,
    /// An LLM's training matmuls in FP8 (Transformer Engine), likewise.
    LlmTrainFp8Matrix,
    /// STREAM triad, GB/s.
    StreamTriad,
    /// Per-dispatch cost inside a batch, microseconds.
    LatencyDispatch,
}

/// A datasheet figure as a rate for a scenario: per package, in the figure's unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Sheet {
    pub value: f64,
    /// The catalog field it comes from.
    pub field: &'static str,
    /// How it was derived, when it is not printed on a datasheet.
    pub derived: Option<String>,
}

impl Rate {
    pub const ALL: [Rate; 14] = [
        Rate::MatmulF32,
        Rate::MatmulF16,
        Rate::MatmulF16Matrix,
        Rate::MatmulTf32Matrix,
        Rate::MatmulFp8Matrix,
        Rate::MatmulFp4Matrix,
        Rate::MatmulInt8,
        Rate::MatmulInt8Matrix,
        Rate::MatmulF64Best,
        Rate::MatmulF64Matrix,
        Rate::LlmTrainF16Matrix,
        Rate::LlmTrainFp8Matrix,
        Rate::StreamTriad,
        Rate::LatencyDispatch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rate::MatmulF32 => "matmul_f32",
            Rate::MatmulF16 => "matmul_f16",
            Rate::MatmulF16Matrix => "matmul_f16_matrix",
            Rate::MatmulTf32Matrix => "matmul_tf32_matrix",
            Rate::MatmulFp8Matrix => "matmul_fp8_matrix",
            Rate::MatmulFp4Matrix => "matmul_fp4_matrix",
            Rate::MatmulInt8 => "matmul_int8",
            Rate::MatmulInt8Matrix => "matmul_int8_matrix",
            Rate::MatmulF64Best => "matmul_f64_best",
            Rate::MatmulF64Matrix => "matmul_f64_matrix",
            Rate::LlmTrainF16Matrix => "llm_train_f16_matrix",
            Rate::LlmTrainFp8Matrix => "llm_train_fp8_matrix",
            Rate::StreamTriad => "stream_triad",
            Rate::LatencyDispatch => "latency_dispatch",
        }
    }

    /// What the figure is, for people.
    pub fn label(self) -> &'static str {
        match self {
            Rate::MatmulF32 => "FP32 vector",
            Rate::MatmulF16 => "FP16 vector",
            Rate::MatmulF16Matrix => "FP16 matrix engines",
            Rate::MatmulTf32Matrix => "TF32 matrix engines",
            Rate::MatmulFp8Matrix => "FP8 matrix engines",
            Rate::MatmulFp4Matrix => "FP4 matrix engines",
            Rate::MatmulInt8 => "INT8 dot products (vector)",
            Rate::MatmulInt8Matrix => "INT8 matrix engines",
            Rate::MatmulF64Best => "FP64 vector",
            Rate::MatmulF64Matrix => "FP64 matrix engines",
            Rate::LlmTrainF16Matrix => "FP16 matrix engines (LLM training)",
            Rate::LlmTrainFp8Matrix => "FP8 matrix engines (LLM training)",
            Rate::StreamTriad => "memory bandwidth (triad)",
            Rate::LatencyDispatch => "per-kernel dispatch cost",
        }
    }

    /// A datasheet peak of this unit as the catalog states it: TFLOPS, TOPS or GB/s.
    pub fn peak_text(self, value: f64) -> String {
        let (v, unit) = match self.unit() {
            "GB/s" => (value, "GB/s"),
            "GOPS" => (value / 1e3, "TOPS"),
            _ => (value / 1e3, "TFLOPS"),
        };
        let t = format!("{v:.3}");
        format!("{} {unit}", t.trim_end_matches('0').trim_end_matches('.'))
    }

    pub fn unit(self) -> &'static str {
        match self {
            Rate::MatmulInt8 | Rate::MatmulInt8Matrix => "GOPS",
            Rate::StreamTriad => "GB/s",
            Rate::LatencyDispatch => "us",
            _ => "GFLOPS",
        }
    }

    /// Seconds that `work` units cost at `value` (in this figure's unit).
    pub fn seconds(self, work: f64, value: f64) -> f64 {
        match self {
            Rate::LatencyDispatch => work * value * 1e-6,
            _ => work / (value * 1e9),
        }
    }

    /// The catalog field that holds this figure's datasheet peak (TFLOPS, TOPS or GB/s).
    pub fn sheet_field(self) -> Option<&'static str> {
        Some(match self {
            Rate::MatmulF32 => "fp32_tflops",
            Rate::MatmulF16 => "fp16_vector_tflops",
            Rate::MatmulF16Matrix | Rate::LlmTrainF16Matrix => "fp16_tensor_tflops",
            Rate::MatmulTf32Matrix => "tf32_matrix_tflops",
            Rate::MatmulFp8Matrix | Rate::LlmTrainFp8Matrix => "fp8_matrix_tflops",
            Rate::MatmulFp4Matrix => "fp4_matrix_tflops",
            Rate::MatmulInt8Matrix => "int8_matrix_tops",
            Rate::MatmulF64Best => "fp64_vector_tflops",
            Rate::MatmulF64Matrix => "fp64_matrix_tflops",
            Rate::StreamTriad => "bandwidth_gbps",
            Rate::MatmulInt8 | Rate::LatencyDispatch => return None,
        })
    }

    /// The datasheet peak of a GPU's package for this figure, in this figure's unit.
    pub fn datasheet(self, gpu: &GpuSpec) -> Option<Sheet> {
        let field = self.sheet_field()?;
        let (_, value, _) = gpu.figure_fields().into_iter().find(|f| f.0 == field)?;
        let scale = if self == Rate::StreamTriad { 1.0 } else { 1e3 };
        Some(Sheet {
            value: value? * scale,
            field,
            derived: gpu.derivation(field).map(str::to_string),
        })
    }

    /// The unit the work runs on where a GPU lacks this one (no datasheet figure, nothing
    /// measured): FP16 matrix work on a GPU without matrix engines runs on its FP16 vector
    /// units, and so on. None: nothing else can do this work.
    pub fn fallback(self) -> Option<Rate> {
        match self {
            Rate::MatmulF16 | Rate::MatmulTf32Matrix => Some(Rate::MatmulF32),
            Rate::MatmulF16Matrix => Some(Rate::MatmulF16),
            Rate::MatmulFp8Matrix => Some(Rate::MatmulF16Matrix),
            // FP4 weights are dequantised for the FP8 engines where no FP4 engine exists.
            Rate::MatmulFp4Matrix => Some(Rate::MatmulFp8Matrix),
            // Frameworks run an INT8 model in FP16 where no INT8 engine exists; on a measured
            // machine the packed-dot-product rate comes first.
            Rate::MatmulInt8Matrix => Some(Rate::MatmulInt8),
            Rate::MatmulInt8 => Some(Rate::MatmulF16Matrix),
            Rate::MatmulF64Matrix => Some(Rate::MatmulF64Best),
            // Without matrix engines an LLM trains on the FP16 vector units; FP8 training
            // without FP8 engines is refused before it gets here.
            Rate::LlmTrainF16Matrix => Some(Rate::MatmulF16),
            Rate::LlmTrainFp8Matrix => Some(Rate::LlmTrainF16Matrix),
            Rate::MatmulF32 | Rate::MatmulF64Best | Rate::StreamTriad | Rate::LatencyDispatch => {
                None
            }
        }
    }

    /// This figure and the ones its work falls back to, in order.
    pub fn chain(self) -> Vec<Rate> {
        std::iter::successors(Some(self), |f| f.fallback()).collect()
    }

    /// An assumed value where no datasheet figure exists and nothing was measured.
    pub fn assumed(self) -> Option<f64> {
        match self {
            // Per-kernel launch cost of a discrete GPU inside a stream of kernels: an
            // assumption, shown as such (the decode calibration points fit it within 1.2x).
            Rate::LatencyDispatch => Some(10.0),
            _ => None,
        }
    }

    /// The measured figures this one is the best of (none: WGSL cannot reach that unit).
    pub fn sources(self) -> &'static [FigureKey] {
        match self {
            Rate::MatmulF32 => &[FigureKey::MatmulF32],
            Rate::MatmulF16 => &[FigureKey::MatmulF16],
            Rate::MatmulF16Matrix | Rate::LlmTrainF16Matrix => &[FigureKey::MatmulCoop],
            Rate::MatmulInt8 => &[FigureKey::MatmulInt8],
            Rate::MatmulF64Best => &[FigureKey::MatmulF64, FigureKey::MatmulDf64],
            Rate::StreamTriad => &[FigureKey::StreamTriad],
            Rate::LatencyDispatch => &[FigureKey::LatencyDispatch],
            Rate::MatmulF64Matrix => &[FigureKey::MatmulF64Matrix],
            Rate::MatmulTf32Matrix
            | Rate::MatmulFp8Matrix
            | Rate::LlmTrainFp8Matrix
            | Rate::MatmulFp4Matrix
            | Rate::MatmulInt8Matrix => &[],
        }
    }

    /// The figure in a results file, if measured there: the best over its sources (and,
    /// for matmul, over sizes).
    pub fn measured(self, r: &ResultsFile) -> Option<f64> {
        let first = self.sources().first()?;
        let found = self.sources().iter().filter_map(|&k| r.best(k));
        if first.info().higher_is_better {
            found.reduce(f64::max)
        } else {
            found.reduce(f64::min)
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Units of output one job produces (images, tokens, FLOP).
    pub amount: f64,
    pub unit: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub name: String,
    pub assumption: String,
    /// What one job produces, so a time per job reads as a throughput (images/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
    /// The work arrives at a steady rate over this many hours (serving a stated
    /// throughput): the job lasts that long whatever the instance, which needs company
    /// where it cannot keep up, and each row costs its whole instances for the whole time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_hours: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Term {
    pub figure: Rate,
    /// Amount of work at this figure: FLOP, bytes, or dispatches.
    pub work: f64,
    pub unit: String,
    /// What this work is, for people ("convolutions in FP16 on tensor cores").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what: Option<String>,
}

/// One thing that must fit in a GPU's memory for the job to run there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryNeed {
    pub what: String,
    pub gb: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub id: String,
    pub description: String,
    /// Version 1's single memory floor; version 2 states what fills it in `memory_floor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_gpu_memory_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_floor: Vec<MemoryNeed>,
    /// Host floor: vCPUs each GPU needs to be fed (data loading, decoding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_vcpus_per_gpu: Option<f64>,
    #[serde(default)]
    pub job: Option<Job>,
    pub terms: Vec<Term>,
    /// Memory the job splits over an instance's GPUs (weights and optimizer state sharded,
    /// a model served tensor-parallel): each GPU needs its share on top of `memory_floor`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sharded_memory: Vec<MemoryNeed>,
    /// Autoregressive decoding: its memory traffic depends on the batch the instance's
    /// memory holds, so it is worked out per instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode: Option<Decode>,
    /// Data-parallel communication on an instance of several GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collectives: Option<Collectives>,
    /// LLM serving as servers run it (`rank --job llm-serve`): the step model of
    /// `serving.rs` instead of `terms` and `decode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<serving::Serving>,
    /// The data a job takes out of the cloud (its results, a checkpoint, responses): costed
    /// at each provider's published transfer price (`src/data/egress.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<EgressNeed>,
}

/// Data out of the cloud per job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressNeed {
    /// GB (10^9 bytes) per job.
    pub gb: f64,
    /// What the data is.
    pub what: String,
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
        if !(1..=SCHEMA_VERSION).contains(&f.schema_version) {
            bail!(
                "{name}: schema_version {} is not one this gpuvalue reads (1..={SCHEMA_VERSION})",
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
            check_scenario(s, &format!("{name}: scenarios[{i}]"))?;
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
        for id in ["training", "inference", "hpc", "int8_inference"] {
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
            memory_floor: vec![],
            min_vcpus_per_gpu: None,
            job: None,
            sharded_memory: vec![],
            decode: None,
            collectives: None,
            serving: None,
            egress: None,
            terms: vec![
                Term {
                    figure: Rate::MatmulF32,
                    work: 2e12,
                    unit: "FLOP".into(),
                    what: None,
                },
                Term {
                    figure: Rate::LatencyDispatch,
                    work: 1000.0,
                    unit: "dispatches".into(),
                    what: None,
                },
            ],
        };
        // 2e12 FLOP at 1000 GFLOPS = 2 s; 1000 dispatches at 10 us = 0.01 s.
        let t = s.seconds_per_job(|f| {
            if f == Rate::LatencyDispatch {
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
        // Collectives: a negative size, and tensor parallelism without a served model.
        let with = |c: &str| {
            ScenarioFile::parse(
                &format!(
                    r#"{{"schema_version": 2, "scenarios": [{{"id": "x", "description": "", "terms": [{{"figure": "matmul_f32", "work": 1, "unit": "FLOP"}}], "collectives": {c}}}]}}"#
                ),
                "s.json",
            )
        };
        let e = with(r#"{"bytes_per_step": -1, "steps": 1, "what": "w"}"#).unwrap_err();
        assert!(e.to_string().contains("collectives.bytes_per_step"), "{e}");
        let e = with(r#"{"bytes_per_step": 1, "steps": 1, "what": "w", "parallelism": "tensor"}"#)
            .unwrap_err();
        assert!(e.to_string().contains("collectives.parallelism"), "{e}");
        assert!(with(r#"{"bytes_per_step": 1, "steps": 1, "what": "w"}"#).is_ok());
    }
}
