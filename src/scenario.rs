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

use crate::catalog::GpuSpec;
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
    pub const ALL: [Rate; 12] = [
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
            Rate::MatmulF16Matrix => "fp16_tensor_tflops",
            Rate::MatmulTf32Matrix => "tf32_matrix_tflops",
            Rate::MatmulFp8Matrix => "fp8_matrix_tflops",
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
            Rate::MatmulF16Matrix => &[FigureKey::MatmulCoop],
            Rate::MatmulInt8 => &[FigureKey::MatmulInt8],
            Rate::MatmulF64Best => &[FigureKey::MatmulF64, FigureKey::MatmulDf64],
            Rate::StreamTriad => &[FigureKey::StreamTriad],
            Rate::LatencyDispatch => &[FigureKey::LatencyDispatch],
            Rate::MatmulTf32Matrix
            | Rate::MatmulFp8Matrix
            | Rate::MatmulFp4Matrix
            | Rate::MatmulInt8Matrix
            | Rate::MatmulF64Matrix => &[],
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
}

/// The collectives of a job on several GPUs: `bytes_per_step` through each GPU's link per
/// step (nccl-tests' convention: an all-gather or reduce-scatter of S bytes moves
/// S x (p-1)/p over p GPUs; an all-reduce twice that), over `steps` steps. Data-parallel
/// training runs them over every GPU of the instance; tensor-parallel serving within each
/// copy of the model. They overlap the compute (prefetching, bucketed gradients, a second
/// micro-batch): only what outlasts it adds time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collectives {
    pub bytes_per_step: f64,
    pub steps: f64,
    pub what: String,
    #[serde(default, skip_serializing_if = "Parallelism::is_data")]
    pub parallelism: Parallelism,
}

/// Which GPUs a scenario's collectives run over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parallelism {
    /// Every GPU of the instance (data-parallel training: gradients, sharded state).
    #[default]
    Data,
    /// The GPUs of one copy of a served model (tensor parallel: its activations'
    /// all-reduces); needs `decode`, which decides how many GPUs a copy takes.
    Tensor,
}

impl Parallelism {
    fn is_data(&self) -> bool {
        *self == Parallelism::Data
    }
}

impl Collectives {
    /// Seconds of communication over the whole job on `gpus` GPUs linked at `bus_gbps`.
    pub fn seconds(&self, gpus: f64, bus_gbps: f64) -> f64 {
        if gpus <= 1.0 {
            return 0.0;
        }
        self.steps * self.bytes_per_step * (gpus - 1.0) / gpus / (bus_gbps * 1e9)
    }
}

/// How a job runs on an instance, and how long it takes there: the answer of
/// [`Scenario::timing`], for the ranking and the calibration alike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Seconds per job: `compute` plus the communication that outlasts it.
    pub seconds: f64,
    /// The terms and the decode's memory traffic, split over the instance's GPUs.
    pub compute: f64,
    /// Serving: how the GPUs are grouped into copies of the model, and each copy's batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    pub comm: Comm,
}

/// Serving's layout: `copies` copies of the model, each tensor-parallel over
/// `gpus_per_copy` GPUs, each decoding `batch` sequences at once.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub gpus_per_copy: u32,
    pub copies: u32,
    pub batch: f64,
    /// GB left for the KV cache in each copy.
    pub kv_gb: f64,
}

/// The job's communication on the instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Comm {
    /// No collectives: one GPU, one GPU per copy, or a job that states none.
    None,
    /// Counted over the link: `seconds` of it, `exposed` of them beyond the compute.
    Counted {
        what: String,
        link: String,
        bus_gbps: f64,
        seconds: f64,
        exposed: f64,
    },
    /// The job has collectives, but the instance's interconnect is unknown: not counted.
    NoLink,
}

impl Comm {
    pub fn exposed(&self) -> f64 {
        match self {
            Comm::Counted { exposed, .. } => *exposed,
            _ => 0.0,
        }
    }
}

/// Why a served model does not fit an instance: `memory_gb` usable against `weight_gb`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoRoom {
    pub memory_gb: f64,
    pub weight_gb: f64,
}

impl std::fmt::Display for NoRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.0} GB of memory on the instance leave no room for one sequence's KV cache after {:.0} GB of weights",
            self.memory_gb, self.weight_gb
        )
    }
}

/// Serving's decode phase: every step reads the weights once for the whole batch, and each
/// sequence's KV cache; the batch is what the memory left after the weights holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decode {
    /// Tokens generated in all (requests x output tokens).
    pub tokens: f64,
    /// The weights, read once per step (GB).
    pub weight_gb: f64,
    /// KV cache per token of context (MB).
    pub kv_mb_per_token: f64,
    /// The longest context a sequence reaches (prompt + output tokens); a step reads half
    /// of it on average.
    pub context_tokens: f64,
    /// Most sequences decoded at once (a server's limit; vLLM's default is 256).
    pub max_batch: f64,
    /// Share of the memory the server may use (vLLM's default is 0.9).
    pub memory_use: f64,
}

/// How one instance decodes: the batch its memory holds and the bytes the job reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecodePlan {
    pub batch: f64,
    /// GB left for the KV cache on the whole instance.
    pub kv_gb: f64,
    /// Bytes read over the whole job (weights once per step, plus the batch's KV cache).
    pub bytes: f64,
}

impl Decode {
    /// The plan on an instance of `gpus` adapters with `mem_gb` each, after `other_gb` of
    /// other needs on the whole instance; None when not even one sequence fits.
    pub fn plan(&self, gpus: f64, mem_gb: f64, other_gb: f64) -> Option<DecodePlan> {
        let kv_gb = gpus * mem_gb * self.memory_use - self.weight_gb - other_gb;
        let per_seq_gb = self.kv_mb_per_token * self.context_tokens / 1000.0;
        let fits = (kv_gb / per_seq_gb).floor();
        if fits.is_nan() || fits < 1.0 {
            return None;
        }
        let batch = fits.min(self.max_batch);
        let steps = self.tokens / batch;
        let per_step = self.weight_gb * 1e9 + batch * per_seq_gb * 1e9 / 2.0;
        Some(DecodePlan {
            batch,
            kv_gb,
            bytes: steps * per_step,
        })
    }
}

impl Scenario {
    /// Seconds one job takes on one GPU with the given figure values.
    pub fn seconds_per_job(&self, value_of: impl Fn(Rate) -> f64) -> f64 {
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

    /// The figures the terms use, each once, in term order (decoding reads memory: triad).
    pub fn figures(&self) -> Vec<Rate> {
        let mut v: Vec<Rate> = Vec::new();
        for t in &self.terms {
            if !v.contains(&t.figure) {
                v.push(t.figure);
            }
        }
        if self.decode.is_some() && !v.contains(&Rate::StreamTriad) {
            v.push(Rate::StreamTriad);
        }
        v
    }

    /// How the job runs on an instance of `adapters` GPUs of `mem_gb` each, linked by `link`
    /// (its name and all-reduce bus bandwidth, GB/s) if known, with `rate` the value of each
    /// figure on one GPU. Serving takes the layout that finishes first: each divisor of the
    /// GPU count as the GPUs of one tensor-parallel copy of the model, the copies decoding
    /// side by side (a copy's batch is what its memory holds, at most `max_batch`; its
    /// all-reduces run within it). Err: the model fits on no layout.
    pub fn timing(
        &self,
        adapters: u32,
        mem_gb: f64,
        link: Option<(&str, f64)>,
        rate: impl Fn(Rate) -> f64,
    ) -> Result<Timing, NoRoom> {
        let n = adapters.max(1);
        let terms = self.seconds_per_job(&rate);
        let Some(d) = &self.decode else {
            let compute = terms / f64::from(n);
            let comm = self.comm(n, 1, compute, link);
            return Ok(Timing {
                seconds: compute + comm.exposed(),
                compute,
                layout: None,
                comm,
            });
        };
        let mut best: Option<Timing> = None;
        for t in (1..=n).filter(|t| n.is_multiple_of(*t)) {
            let Some(plan) = self.decode_on(f64::from(t), mem_gb) else {
                continue;
            };
            let memory = Rate::StreamTriad.seconds(plan.bytes, rate(Rate::StreamTriad));
            let compute = (terms + memory) / f64::from(n);
            let comm = self.comm(t, n / t, compute, link);
            let timing = Timing {
                seconds: compute + comm.exposed(),
                compute,
                layout: Some(Layout {
                    gpus_per_copy: t,
                    copies: n / t,
                    batch: plan.batch,
                    kv_gb: plan.kv_gb,
                }),
                comm,
            };
            // Fewer GPUs a copy win a tie: less to go wrong, no faster layout skipped.
            if best
                .as_ref()
                .is_none_or(|b| timing.seconds < b.seconds * (1.0 - 1e-9))
            {
                best = Some(timing);
            }
        }
        best.ok_or(NoRoom {
            memory_gb: f64::from(n) * mem_gb * d.memory_use,
            weight_gb: d.weight_gb,
        })
    }

    /// How the job runs on `nodes` instances of `adapters` GPUs each (issue 34 item 4): the
    /// terms split over every GPU, the state sharded over all of them, and the data-parallel
    /// collectives run hierarchically: within a node over `link` (its all-reduce bus
    /// bandwidth) and, for the node's shard, between nodes over `net` (its name and the
    /// node's total GB/s): `bytes_per_step x (nodes-1)/nodes` through each node's network a
    /// step. They overlap the compute as on one node; only what outlasts it adds time. One
    /// node is [`Scenario::timing`]. Err: why the job cannot run on several nodes.
    pub fn timing_nodes(
        &self,
        adapters: u32,
        nodes: u32,
        mem_gb: f64,
        link: Option<(&str, f64)>,
        net: Option<(&str, f64)>,
        rate: impl Fn(Rate) -> f64,
    ) -> Result<Timing, String> {
        if nodes <= 1 {
            return self
                .timing(adapters, mem_gb, link, rate)
                .map_err(|e| e.to_string());
        }
        if self.decode.is_some() {
            return Err("serving on several nodes is not modelled: a served model scales by whole instances (--request-rate), and one that fits no instance would need pipeline parallelism between nodes".into());
        }
        let Some((net_name, net_gb)) = net else {
            return Err("the network between nodes of this instance type is not published (src/data/networks.json): not ranked on several nodes".into());
        };
        let n = adapters.max(1);
        let compute = self.seconds_per_job(&rate) / f64::from(n * nodes);
        let comm = match &self.collectives {
            None => Comm::None,
            Some(c) => {
                let intra = link.map_or(0.0, |(_, bus)| c.seconds(f64::from(n), bus));
                let inter = c.steps * c.bytes_per_step * f64::from(nodes - 1)
                    / f64::from(nodes)
                    / (net_gb * 1e9);
                let within = match link {
                    Some((name, bus)) => format!("{name} ({bus} GB/s bus) within a node, "),
                    None if n > 1 => "the link within a node not known (not counted), ".into(),
                    None => String::new(),
                };
                let seconds = intra + inter;
                Comm::Counted {
                    what: c.what.clone(),
                    link: format!(
                        "{within}{net_name} ({net_gb} GB/s a node) between {nodes} nodes"
                    ),
                    bus_gbps: link.map_or(net_gb, |l| l.1),
                    seconds,
                    exposed: (seconds - compute).max(0.0),
                }
            }
        };
        Ok(Timing {
            seconds: compute + comm.exposed(),
            compute,
            layout: None,
            comm,
        })
    }

    /// The collectives over `group` GPUs (all of them for data parallelism, a copy's for
    /// tensor parallelism), `copies` groups communicating side by side, against `compute`.
    fn comm(&self, group: u32, copies: u32, compute: f64, link: Option<(&str, f64)>) -> Comm {
        let Some(c) = &self.collectives else {
            return Comm::None;
        };
        let over = match c.parallelism {
            Parallelism::Data => group * copies,
            Parallelism::Tensor => group,
        };
        if over <= 1 {
            return Comm::None;
        }
        let Some((name, bus)) = link else {
            return Comm::NoLink;
        };
        let share = match c.parallelism {
            Parallelism::Data => 1.0,
            Parallelism::Tensor => f64::from(copies),
        };
        let seconds = c.seconds(f64::from(over), bus) / share;
        Comm::Counted {
            what: c.what.clone(),
            link: name.to_string(),
            bus_gbps: bus,
            seconds,
            exposed: (seconds - compute).max(0.0),
        }
    }

    /// How the decode runs on `adapters` GPUs of `mem_gb` each, after the scenario's other
    /// needs (its per-GPU floor on every GPU, its sharded memory once); None without a decode
    /// or when not one sequence fits.
    pub fn decode_on(&self, adapters: f64, mem_gb: f64) -> Option<DecodePlan> {
        let own = self.memory_floor_gb().unwrap_or(0.0);
        let sharded: f64 = self.sharded_memory.iter().map(|m| m.gb).sum();
        self.decode
            .as_ref()?
            .plan(adapters, mem_gb, sharded + adapters * own)
    }

    /// Memory each of `gpus` adapters needs: its own needs plus its share of the sharded
    /// ones (and of the weights a decode reads). None: the scenario states no floor.
    pub fn memory_floor_on(&self, gpus: u32) -> Option<f64> {
        let shared: f64 = self.sharded_memory.iter().map(|m| m.gb).sum::<f64>()
            + self.decode.as_ref().map_or(0.0, |d| d.weight_gb);
        let own = self.memory_floor_gb();
        if shared == 0.0 {
            return own;
        }
        Some(own.unwrap_or(0.0) + shared / f64::from(gpus.max(1)))
    }

    /// Memory one GPU (adapter) needs: the sum of the stated needs, or version 1's number,
    /// whichever is larger. None: the scenario states no floor.
    pub fn memory_floor_gb(&self) -> Option<f64> {
        let sum: f64 = self.memory_floor.iter().map(|m| m.gb).sum();
        match (self.min_gpu_memory_gb, self.memory_floor.is_empty()) {
            (None, true) => None,
            (m, _) => Some(sum.max(m.unwrap_or(0.0))),
        }
    }

    /// The model in one line: time per GPU as its terms, and the floors.
    pub fn model_line(&self) -> String {
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|t| match t.figure {
                Rate::LatencyDispatch => {
                    format!("{:.3e} {} x {}", t.work, t.unit, t.figure.label())
                }
                f => format!("{:.3e} {} / {}", t.work, t.unit, f.label()),
            })
            .collect();
        let mut line = format!("time per GPU = {}", terms.join(" + "));
        if let Some(d) = &self.decode {
            line.push_str(&format!(
                " + decode: {:.3e} tokens, each step reading the {} GB of weights once for the batch and {} MB of KV cache per token of context (up to {} tokens), the batch as large as {:.0}% of the memory holds (at most {})",
                d.tokens,
                round2(d.weight_gb),
                round2(d.kv_mb_per_token),
                d.context_tokens,
                d.memory_use * 100.0,
                d.max_batch
            ));
        }
        if let Some(c) = &self.collectives {
            line.push_str(&format!(
                " + on several GPUs: {:.3e} steps of {:.3e} bytes of {} over the GPUs' interconnect, the part that outlasts the compute",
                c.steps, c.bytes_per_step, c.what
            ));
        }
        if let Some(gb) = self.memory_floor_gb() {
            line.push_str(&format!("; needs {} GB per GPU", round2(gb)));
        }
        if !self.sharded_memory.is_empty() {
            let gb: f64 = self.sharded_memory.iter().map(|m| m.gb).sum();
            line.push_str(&format!(
                "{} {} GB split over the instance's GPUs",
                if self.memory_floor_gb().is_some() {
                    " plus"
                } else {
                    "; needs"
                },
                round2(gb)
            ));
        }
        if let Some(v) = self.min_vcpus_per_gpu {
            line.push_str(&format!(" and {v} vCPUs per GPU"));
        }
        line
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `x` when it is a finite number in `lo..=hi`, else an error naming `at`.
fn in_range(x: f64, lo: f64, hi: f64, at: &str, what: &str) -> Result<()> {
    if !(x.is_finite() && (lo..=hi).contains(&x)) {
        bail!("{at}: expected {what} in {lo}..={hi:e}, found {x}");
    }
    Ok(())
}

/// The checks of a scenario's collectives, if it states any.
fn check_collectives(s: &Scenario, at: &str) -> Result<()> {
    let Some(c) = &s.collectives else {
        return Ok(());
    };
    let c_at = format!("{at}.collectives");
    in_range(
        c.bytes_per_step,
        0.0,
        MAX_WORK,
        &format!("{c_at}.bytes_per_step"),
        "a number of bytes",
    )?;
    in_range(
        c.steps,
        0.0,
        MAX_WORK,
        &format!("{c_at}.steps"),
        "a number of steps",
    )?;
    if c.parallelism == Parallelism::Tensor && s.decode.is_none() {
        bail!(
            "{c_at}.parallelism: \"tensor\" runs within the copies of a served model and needs \"decode\"; expected \"data\" for a job without one"
        );
    }
    Ok(())
}

/// The checks of one scenario's numbers; `at` names it in the file.
fn check_scenario(s: &Scenario, at: &str) -> Result<()> {
    if s.terms.is_empty() {
        bail!("{at}.terms: a scenario needs at least one term");
    }
    for (j, t) in s.terms.iter().enumerate() {
        if !(t.work.is_finite() && t.work > 0.0 && t.work <= MAX_WORK) {
            bail!(
                "{at}.terms[{j}].work: expected an amount in 0 < work <= {MAX_WORK:e}, found {}",
                t.work
            );
        }
    }
    if let Some(m) = s.min_gpu_memory_gb {
        in_range(
            m,
            0.0,
            1e4,
            &format!("{at}.min_gpu_memory_gb"),
            "a number of GB",
        )?;
    }
    for (j, m) in s.memory_floor.iter().enumerate() {
        in_range(
            m.gb,
            0.0,
            1e4,
            &format!("{at}.memory_floor[{j}].gb"),
            "a number of GB",
        )?;
    }
    if let Some(v) = s.min_vcpus_per_gpu {
        in_range(
            v,
            0.0,
            1024.0,
            &format!("{at}.min_vcpus_per_gpu"),
            "a number of vCPUs",
        )?;
    }
    for (j, m) in s.sharded_memory.iter().enumerate() {
        in_range(
            m.gb,
            0.0,
            1e6,
            &format!("{at}.sharded_memory[{j}].gb"),
            "a number of GB",
        )?;
    }
    if let Some(d) = &s.decode {
        let d_at = format!("{at}.decode");
        in_range(
            d.tokens,
            1.0,
            MAX_WORK,
            &format!("{d_at}.tokens"),
            "a number of tokens",
        )?;
        in_range(
            d.weight_gb,
            0.0,
            1e6,
            &format!("{d_at}.weight_gb"),
            "a number of GB",
        )?;
        in_range(
            d.kv_mb_per_token,
            1e-6,
            1e4,
            &format!("{d_at}.kv_mb_per_token"),
            "a number of MB",
        )?;
        in_range(
            d.context_tokens,
            1.0,
            1e8,
            &format!("{d_at}.context_tokens"),
            "a number of tokens",
        )?;
        in_range(
            d.max_batch,
            1.0,
            1e6,
            &format!("{d_at}.max_batch"),
            "a batch size",
        )?;
        in_range(
            d.memory_use,
            0.05,
            1.0,
            &format!("{d_at}.memory_use"),
            "a share",
        )?;
    }
    check_collectives(s, at)?;
    if let Some(h) = s.job.as_ref().and_then(|j| j.steady_hours) {
        in_range(
            h,
            1e-3,
            1e6,
            &format!("{at}.job.steady_hours"),
            "a number of hours",
        )?;
    }
    if let Some(o) = s.job.as_ref().and_then(|j| j.output.as_ref())
        && !(o.amount.is_finite() && o.amount > 0.0 && o.amount <= MAX_WORK)
    {
        bail!(
            "{at}.job.output.amount: expected an amount in 0 < amount <= {MAX_WORK:e}, found {}",
            o.amount
        );
    }
    Ok(())
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
