//! Serving an LLM as servers run it: continuous batching of `concurrency` requests per copy
//! of the model, each decode step reading the weights the batch touches (the dense ones once,
//! the routed experts the batch's tokens go to) and every request's KV cache, the prompts'
//! prefill interleaved with the steps, fixed costs a step and a layer, and the collectives of
//! the copy's layout (tensor parallel, expert parallel, data-parallel attention). The
//! efficiencies and fixed costs are fitted per vendor on published serving runs
//! (`src/data/serving.json`, `gpuvalue calibration`); docs/ranking-model.md has the physics.

use super::Rate;
use crate::market::catalog::GpuSpec;
use serde::{Deserialize, Serialize};

/// What a served model is, as the step model needs it (per copy of the model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serving {
    /// The model's name (a preset's, or the config's), for matching measured results.
    #[serde(default)]
    pub model: String,
    /// Output tokens over the whole job.
    pub tokens: f64,
    pub prompt_tokens: f64,
    pub output_tokens: f64,
    pub layers: f64,
    pub hidden: f64,
    /// Attention heads: tensor parallelism splits them evenly over its GPUs.
    #[serde(default)]
    pub heads: f64,
    /// Weights every step reads whatever the batch, GB: attention, dense layers, shared
    /// experts and routers, the output head.
    pub dense_gb: f64,
    /// Attention's part of `dense_gb` (whole on every GPU under data-parallel attention).
    pub attention_gb: f64,
    /// Weights held but not read a step (the input embedding, a lookup), GB.
    pub held_gb: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experts: Option<Experts>,
    /// Parameters a token computes on (2 FLOP each).
    pub active_params: f64,
    /// Attention FLOP per token and token of context, all layers (decode).
    pub attention_flop: f64,
    /// KV cache of the full-attention layers per token of context, MB.
    pub kv_mb_per_token: f64,
    /// Sliding-window layers' KV cache per token, MB, up to `window` tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Tensor parallelism splits the KV cache over at most this many ranks (GQA's KV heads);
    /// 1: every rank holds all of it (MLA's latent).
    pub kv_split: f64,
    /// The matrix engines prefill and decode run on.
    pub engines: Rate,
    /// The matmuls multiply 4-bit block-scaled weights (MXFP4) with 8-bit block-scaled
    /// activations, which needs block-scaled engines (Blackwell, CDNA 4: those with FP4
    /// engines); elsewhere servers run them on the 16-bit engines (W4A16: TensorRT-LLM's
    /// and vLLM's Hopper kernels for gpt-oss).
    #[serde(default)]
    pub block_scaled: bool,
    /// Share of the memory the server may use (vLLM's default 0.9).
    pub memory_use: f64,
    /// Most requests in flight per copy without a target (vLLM's max_num_seqs, 256).
    pub max_batch: f64,
    #[serde(default)]
    pub target: Target,
    /// Bytes an element of the KV cache (1: FP8, 2: 16-bit).
    #[serde(default = "two")]
    pub kv_bytes: f64,
    /// The model's multi-token-prediction drafter, where it ships one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtp: Option<Mtp>,
    /// The engine whose times to first token the estimate follows (None: every engine's
    /// published runs pooled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<super::engine::Engine>,
}

/// Speculative decoding with MTP: each step the drafter proposes `drafts` tokens a request
/// (one pass of its layer each), the model verifies them with the request's own token in
/// one pass, and each draft is accepted with probability `acceptance` while the ones
/// before it were.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mtp {
    pub drafts: f64,
    pub acceptance: f64,
}

impl Mtp {
    /// DeepSeek-V3's technical report: the second token's prediction accepted 85-90% of
    /// the time; the lower end, one draft a step (vLLM's and SGLang's minimal setting,
    /// `num_speculative_tokens` 1 / `--speculative-num-steps 1`).
    pub const PUBLISHED: Mtp = Mtp {
        drafts: 1.0,
        acceptance: 0.85,
    };

    /// Tokens a request emits per step: 1 + p + p^2 + ... + p^drafts.
    pub fn tokens_per_step(&self) -> f64 {
        (0..=self.drafts as u32)
            .map(|i| self.acceptance.powi(i as i32))
            .sum()
    }
}

/// The routed experts: `layers` MoE layers of `count` experts of `gb` each, `per_token` of
/// them per token.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experts {
    pub layers: f64,
    pub count: f64,
    pub per_token: f64,
    pub gb: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub mb_per_token: f64,
    pub tokens: f64,
}

/// What each request must get, and a layout fixed by the user.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// Requests in flight per copy of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<f64>,
    /// Output tokens per second each request decodes at, at least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactivity: Option<f64>,
    /// Time to first token, at most (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<Parallel>,
    /// Speculative decoding with MTP asked for (true), ruled out (false), or chosen per
    /// row where the model has a drafter and it serves more (None).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtp: Option<bool>,
}

/// A copy's layout: attention tensor-parallel over `tp` GPUs (or data-parallel over them),
/// the experts tensor- or expert-parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parallel {
    pub tp: u32,
    /// Expert parallel over `ep` GPUs (1 or `tp`).
    pub ep: u32,
    /// Attention data-parallel: each GPU its own requests and whole attention weights.
    pub dp_attention: bool,
    /// Speculative decoding with the model's multi-token-prediction layer as the drafter.
    #[serde(default)]
    pub mtp: bool,
}

impl Parallel {
    /// "tp=8,ep=8,dp-attention" (also "tp8 ep8 dpa"): one layout.
    pub fn parse(s: &str) -> Result<Parallel, String> {
        let mut p = Parallel {
            tp: 1,
            ep: 1,
            dp_attention: false,
            mtp: false,
        };
        let bad = |part: &str| {
            format!(
                "--parallel {s}: {part:?}: expected tp=N, ep=N, dp-attention or mtp, comma-separated (tp=8,ep=8,dp-attention)"
            )
        };
        for part in s.split([',', ' ']).filter(|x| !x.is_empty()) {
            let part_l = part.to_lowercase();
            if matches!(part_l.as_str(), "dp-attention" | "dpa" | "dp_attention") {
                p.dp_attention = true;
                continue;
            }
            if part_l == "mtp" {
                p.mtp = true;
                continue;
            }
            let (k, v) = part_l
                .split_once('=')
                .or_else(|| part_l.split_at_checked(2))
                .ok_or_else(|| bad(part))?;
            let n: u32 = v.parse().map_err(|_| bad(part))?;
            if n == 0 || n > 4096 {
                return Err(format!("--parallel {s}: {part}: expected 1 to 4096 GPUs"));
            }
            match k {
                "tp" => p.tp = n,
                "ep" => p.ep = n,
                _ => return Err(bad(part)),
            }
        }
        if p.ep != 1 && p.ep != p.tp {
            return Err(format!(
                "--parallel {s}: ep={} with tp={}: expected ep=1 or ep equal to tp (the experts spread over the copy's GPUs)",
                p.ep, p.tp
            ));
        }
        Ok(p)
    }

    pub fn label(&self) -> String {
        let mut s = format!("tp{}", self.tp);
        if self.ep > 1 {
            s.push_str(&format!(" ep{}", self.ep));
        }
        if self.dp_attention {
            s.push_str(" dpa");
        }
        if self.mtp {
            s.push_str(" mtp");
        }
        s
    }
}

/// The fitted efficiencies and fixed costs of one vendor's serving stacks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// Share of the STREAM-triad bandwidth a decode step's reads reach.
    pub bandwidth: f64,
    /// Share of the matrix engines' rate the matmuls reach.
    pub compute: f64,
    /// Fixed cost of a step (scheduling, sampling, launch), seconds.
    pub step_s: f64,
    /// Fixed cost of a layer within a step (kernel launches, small collectives), seconds.
    pub layer_s: f64,
    /// Latency of one collective inside a step (an all-reduce, an expert dispatch or
    /// combine) when a copy spans GPUs, seconds: the fixed cost that grows with the layout,
    /// not with the model alone, so a one-GPU copy of a small model pays none.
    #[serde(default = "default_collective_s")]
    pub collective_s: f64,
    /// Host time a step spends on each request it runs (scheduling, sampling,
    /// detokenising), seconds: the cost that grows with the batch, not with the model, so
    /// a small model's step at thousands of requests is not free.
    #[serde(default = "default_sequence_s")]
    pub sequence_s: f64,
    /// A request's fixed latency before its first token (the server's front end,
    /// tokenisation, scheduling, the first step), seconds.
    #[serde(default = "default_request_s")]
    pub request_s: f64,
    /// Share of the matrix rate one prompt's prefill reaches alone (its tokens spread over
    /// every expert: small grouped GEMMs).
    #[serde(default = "default_prefill")]
    pub prefill: f64,
    /// Share of the other clients whose prompts a new one waits behind: a closed loop of
    /// clients sending requests of one length keeps them in step (InferenceX, `vllm bench
    /// serve --max-concurrency`), so prompts arrive in waves and queue for prefill.
    #[serde(default = "default_burst")]
    pub burst: f64,
    /// Steps an engine with data-parallel attention holds a new prompt so that every rank
    /// prefills together (TensorRT-LLM's attention-DP balancing waits up to a set number
    /// of iterations).
    #[serde(default = "default_balance_steps")]
    pub balance_steps: f64,
}

fn two() -> f64 {
    2.0
}

impl Fit {
    /// Where a fit starts when nothing is known: round physical guesses (70% of the
    /// bandwidth, 60% of the matrix rate, a millisecond a step, 30 us a layer); the other
    /// terms' values are also what a fits file that omits them reads. Cross-validation refits from here, so a held-out
    /// group's points never reach its estimate through a stored value.
    pub const PRIOR: Fit = Fit {
        bandwidth: 0.7,
        compute: 0.6,
        step_s: 1e-3,
        layer_s: 3e-5,
        collective_s: 8e-6,
        sequence_s: 1e-7,
        request_s: 0.05,
        prefill: 0.3,
        burst: 1e-3,
        balance_steps: 0.01,
    };
}

/// The network assumed between nodes of a type that publishes none (serving across nodes):
/// one 100 Gb/s Ethernet port a node, the common floor of rented multi-GPU hosts.
pub const ASSUMED_NETWORK: &str = "an assumed 100 Gb/s Ethernet a node (the provider publishes no network: src/data/networks.json)";
/// [`ASSUMED_NETWORK`]'s GB/s a node.
pub const ASSUMED_NETWORK_GBS: f64 = 12.5;

/// The engines the estimates assume: those of the published runs the fits were made on.
pub const ENGINES: &str = "the engines of the published runs fitted on (89% of them from September 2025 to June 2026: SGLang 0.5, TensorRT-LLM 1.x, ATOM, vLLM; runs on early-2025 stacks were 2-4x slower)";

fn default_collective_s() -> f64 {
    Fit::PRIOR.collective_s
}

fn default_sequence_s() -> f64 {
    Fit::PRIOR.sequence_s
}

fn default_request_s() -> f64 {
    Fit::PRIOR.request_s
}

fn default_prefill() -> f64 {
    Fit::PRIOR.prefill
}

fn default_burst() -> f64 {
    Fit::PRIOR.burst
}

fn default_balance_steps() -> f64 {
    Fit::PRIOR.balance_steps
}

/// The fitted parameters: `src/data/serving.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitFile {
    pub schema_version: u32,
    pub description: String,
    pub fits: Vec<VendorFit>,
    /// The model's miss (max(ratio, 1/ratio)) on 80% of the published runs, each estimated
    /// with its whole source held out and the fits refitted without it (leave-one-source-out):
    /// a ranking's tie band between different hardware. Written by `calibration
    /// --fit-serving`; a test recomputes it.
    pub held_out_miss: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VendorFit {
    pub vendor: String,
    #[serde(flatten)]
    pub fit: Fit,
    /// Engines with time-to-first-token parameters of their own (fitted on their published
    /// TTFTs over this throughput fit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engines: Vec<EngineFit>,
    /// How it was fitted: points, split, command.
    pub basis: String,
}

const FITS: &str = include_str!("../../data/serving.json");

impl FitFile {
    pub fn embedded() -> FitFile {
        serde_json::from_str(FITS).expect("src/data/serving.json parses (tested)")
    }

    /// The fit for `gpu`'s vendor, else the first (NVIDIA's).
    pub fn for_gpu(&self, gpu: Option<&GpuSpec>) -> Fit {
        self.for_vendor(gpu.map_or("", |g| g.vendor.as_str()))
    }

    /// The fit for `vendor` (any case), else the first (NVIDIA's).
    pub fn for_vendor(&self, vendor: &str) -> Fit {
        self.vendor(vendor).fit
    }

    fn vendor(&self, vendor: &str) -> &VendorFit {
        self.fits
            .iter()
            .find(|f| f.vendor.eq_ignore_ascii_case(vendor))
            .unwrap_or(&self.fits[0])
    }

    /// The fit for `vendor` with `engine`'s time-to-first-token parameters where it has
    /// its own (else the vendor's pooled ones).
    pub fn for_engine(&self, vendor: &str, engine: Option<super::engine::Engine>) -> Fit {
        let v = self.vendor(vendor);
        v.engines
            .iter()
            .find(|e| Some(e.engine) == engine)
            .map_or(v.fit, |e| e.over(v.fit))
    }
}

/// An engine's time-to-first-token parameters (the TTFT terms of [`Fit`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineFit {
    pub engine: super::engine::Engine,
    pub request_s: f64,
    pub prefill: f64,
    pub burst: f64,
    pub balance_steps: f64,
    /// The published TTFTs it was fitted on.
    pub points: usize,
}

/// The fewest published TTFTs an engine needs for parameters of its own.
pub const MIN_ENGINE_POINTS: usize = 20;

impl EngineFit {
    /// The TTFT parameters of `fit`, for `engine`.
    pub fn of(engine: super::engine::Engine, fit: &Fit, points: usize) -> EngineFit {
        EngineFit {
            engine,
            request_s: fit.request_s,
            prefill: fit.prefill,
            burst: fit.burst,
            balance_steps: fit.balance_steps,
            points,
        }
    }

    /// `fit` with these TTFT parameters in place of its own.
    pub fn over(&self, fit: Fit) -> Fit {
        Fit {
            request_s: self.request_s,
            prefill: self.prefill,
            burst: self.burst,
            balance_steps: self.balance_steps,
            ..fit
        }
    }
}

/// Disaggregated serving: prefill on one pool of workers, decode on another (Dynamo, SGLang
/// PD, llm-d), each prompt's KV cache sent from the first to the second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pools {
    pub prefill: Pool,
    pub decode: Pool,
}

/// One pool: `workers` copies of the model, each in `layout`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pool {
    pub workers: u32,
    pub layout: Parallel,
}

impl Pools {
    pub fn gpus(&self) -> u32 {
        self.prefill.workers * self.prefill.layout.tp + self.decode.workers * self.decode.layout.tp
    }
}

/// Prompts' worth of prefill a new request waits for in a closed loop of clients, as
/// vLLM's `bench serve --max-concurrency` and InferenceX run it, when prefill keeps the
/// copy `busy` (0..1) of its time: a finished request is replaced at once, so arrivals
/// follow completions spread over the decode, and a prompt queues behind those before it
/// (M/D/1: busy / (2 (1 - busy))). Published TTFTs barely grow from 4 to 64 in flight
/// (DeepSeek-R1 on 8x H200, 1k prompts: 0.12-0.18 s), which a burst of every client at once
/// would not give.
pub fn queue_wait(busy: f64) -> f64 {
    let busy = busy.clamp(0.0, 0.95);
    busy / (2.0 * (1.0 - busy))
}

/// A step's prefill as the time to first token sees it: a prompt token's FLOP, the
/// prompts' tokens prefilled a step, the step's fixed costs and the whole step, seconds.
#[derive(Clone, Copy)]
struct Prefill {
    prompt_flop: f64,
    fresh: f64,
    fixed: f64,
    step: f64,
}

/// Per-GPU workspace and activations, GB.
pub const WORKSPACE_GB: f64 = 2.0;

/// The machine one copy runs on: GPUs, their memory, rates and link.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    pub mem_gb: f64,
    /// STREAM triad GB/s per GPU.
    pub bandwidth: f64,
    /// Matrix engines' GFLOPS per GPU.
    pub flops: f64,
    /// Collective bus bandwidth GB/s within a node (None: unknown, not counted).
    pub bus_gbps: Option<f64>,
    /// GPUs a node (or NVLink domain) links at `bus_gbps`; a copy over more runs its
    /// collectives over `net_gbps`.
    pub node_gpus: u32,
    /// The network between nodes, GB/s per GPU.
    pub net_gbps: Option<f64>,
    pub fit: Fit,
}

/// One copy at one batch: what it reaches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub parallel: Parallel,
    /// GPUs in the copy.
    pub gpus: u32,
    /// Requests in flight in the copy.
    pub concurrency: f64,
    /// Seconds a step takes (decode and its share of prefill).
    pub step_s: f64,
    pub tok_s_per_user: f64,
    pub ttft_s: f64,
    /// Output tokens per second per GPU.
    pub tok_s_per_gpu: f64,
    /// Input and output tokens per second per GPU.
    pub total_tok_s_per_gpu: f64,
    /// Whether decode is limited by memory (else compute).
    pub memory_bound: bool,
    /// Seconds of collectives a step.
    pub comm_s: f64,
    /// The most requests the copy's memory holds.
    pub max_concurrency: f64,
}

impl Serving {
    /// The matrix engines the matmuls run on on `gpu`: [`Serving::engines`], or the 16-bit
    /// ones for block-scaled weights on a GPU without block-scaled engines.
    pub fn engines_on(&self, gpu: Option<&GpuSpec>) -> Rate {
        let scaled = gpu.is_none_or(|g| Rate::MatmulFp4Matrix.datasheet(g).is_some());
        if self.block_scaled && !scaled {
            Rate::MatmulF16Matrix
        } else {
            self.engines
        }
    }

    /// The model in one line, for the notes under a ranking.
    pub fn model_line(&self) -> String {
        format!(
            "a step of B requests per copy takes max(bytes read / (triad bandwidth x fitted share), FLOP / (matrix rate x fitted share)) + fixed costs a step, a layer, a collective and a request (fitted) + the layout's collectives, plus the prompts' prefill interleaved (B x {} / {} prompt tokens a step); reads {} GB of dense weights{}, every request's KV cache ({} MB a token); tokens/s per user = 1 / step, per GPU = B / step / GPUs of the copy{}; the first token after the server's fixed latency, the wait for prefill in a closed loop of clients and the prompt's own prefill; needs the weights and one request's KV cache split over the copy's GPUs plus {WORKSPACE_GB} GB on each",
            self.prompt_tokens,
            self.output_tokens,
            super::round2(self.dense_gb),
            self.experts.map_or(String::new(), |e| format!(
                " and the routed experts the batch touches ({} of {} a token in {} layers, {} GB each)",
                e.per_token,
                e.count,
                e.layers,
                super::round2(e.gb)
            )),
            super::round2(self.kv_mb_per_token + self.window.map_or(0.0, |w| w.mb_per_token)),
            self.mtp.map_or(String::new(), |m| format!(
                " (with MTP, \"mtp\" in the layout: a step verifies 1 + {} draft token a request and emits {:.2}, {:.0}% acceptance as DeepSeek-V3's report publishes)",
                m.drafts,
                m.tokens_per_step(),
                m.acceptance * 100.0
            ))
        )
    }

    /// Expected distinct routed experts a layer that `batch` tokens touch: E(1-(1-k/E)^B).
    pub fn touched(&self, batch: f64) -> f64 {
        self.experts.map_or(0.0, |e| {
            e.count * (1.0 - (1.0 - e.per_token / e.count).powf(batch.max(0.0)))
        })
    }

    /// Every weight, GB.
    pub fn weight_gb(&self) -> f64 {
        self.dense_gb + self.held_gb + self.experts.map_or(0.0, |e| e.layers * e.count * e.gb)
    }

    /// KV cache of one request at `context` tokens, GB.
    fn kv_gb(&self, context: f64) -> f64 {
        let window = self
            .window
            .map_or(0.0, |w| w.mb_per_token * context.min(w.tokens));
        (self.kv_mb_per_token * context + window) / 1e3
    }

    /// How far tensor parallelism over `g` splits each request's KV cache.
    fn kv_share(&self, p: &Parallel) -> f64 {
        if p.dp_attention {
            1.0
        } else {
            f64::from(p.tp).min(self.kv_split).max(1.0)
        }
    }

    /// Weights on each GPU of a copy in layout `p`, GB.
    pub fn weights_per_gpu(&self, p: &Parallel) -> f64 {
        let g = f64::from(p.tp);
        let attention = if p.dp_attention {
            self.attention_gb
        } else {
            self.attention_gb / g
        };
        attention + (self.weight_gb() - self.attention_gb) / g
    }

    /// GB each GPU of a copy in layout `p` has for the KV cache, on GPUs of `mem_gb`.
    pub fn kv_room_per_gpu(&self, p: &Parallel, mem_gb: f64) -> f64 {
        mem_gb * self.memory_use - self.weights_per_gpu(p) - WORKSPACE_GB
    }

    /// The most requests a copy in layout `p` holds on GPUs of `mem_gb`; 0 when the weights
    /// leave no room for one.
    pub fn max_concurrency(&self, p: &Parallel, mem_gb: f64) -> f64 {
        let free = self.kv_room_per_gpu(p, mem_gb);
        let per_request = self.kv_gb(self.prompt_tokens + self.output_tokens) / self.kv_share(p);
        if free <= 0.0 || per_request <= 0.0 {
            return 0.0;
        }
        let per_gpu = (free / per_request).floor();
        // Data-parallel attention: each GPU its own requests; tensor parallel: all on each.
        if p.dp_attention {
            per_gpu * f64::from(p.tp)
        } else {
            per_gpu
        }
    }

    /// One copy in layout `p` on machine `m` with `b` requests in flight.
    pub fn point(&self, p: &Parallel, m: &Machine, b: f64) -> Point {
        match self.mtp.filter(|_| p.mtp) {
            Some(mtp) => self.speculative_point(p, m, b, mtp),
            None => self.plain_point(p, m, b, 1.0, 1.0).0,
        }
    }

    /// A step with MTP: the model verifies `1 + drafts` tokens a request in one pass, the
    /// drafter's layer runs `drafts` passes (one layer's share of a step each), and each
    /// request emits `tokens_per_step` tokens.
    fn speculative_point(&self, p: &Parallel, m: &Machine, b: f64, mtp: Mtp) -> Point {
        let emitted = mtp.tokens_per_step();
        let (pt, verify_s) = self.plain_point(p, m, b, 1.0 + mtp.drafts, emitted);
        let step = pt.step_s + self.draft_s(mtp.drafts, verify_s);
        let g = f64::from(p.tp);
        let per_gpu = b * emitted / step / g;
        Point {
            step_s: step,
            tok_s_per_user: emitted / step,
            tok_s_per_gpu: per_gpu,
            total_tok_s_per_gpu: per_gpu * (self.prompt_tokens + self.output_tokens)
                / self.output_tokens,
            ..pt
        }
    }

    /// The drafter's passes a step: `drafts` passes of its one layer, each a layer's share of
    /// the verifying pass `verify_s`.
    fn draft_s(&self, drafts: f64, verify_s: f64) -> f64 {
        drafts * verify_s / self.layers.max(1.0)
    }

    /// A new request's time to first token at `b` requests in flight: the server's fixed
    /// latency, half a step, its share of the queue for prefill (M/D/1), the clients in
    /// step with it whose prompts go first (on its rank under DP attention), the steps DP
    /// attention holds a prompt to balance its ranks, then its prompt through the copy
    /// alone (under DP attention one rank prefills it, its peers in step).
    fn ttft(&self, p: &Parallel, m: &Machine, b: f64, at: Prefill) -> f64 {
        let f = m.fit;
        let g = f64::from(p.tp);
        let isl = self.prompt_tokens;
        let bw = m.bandwidth * f.bandwidth * 1e9;
        let attention_gb = if p.dp_attention {
            self.attention_gb
        } else {
            self.attention_gb / g
        };
        let ranks = if p.dp_attention { 1.0 } else { g };
        let prompt_s = isl * at.prompt_flop / ranks / (m.flops * f.prefill * 1e9);
        let one_prompt = prompt_s
            + (attention_gb + (self.weight_gb() - self.attention_gb - self.held_gb) / g) * 1e9 / bw
            + at.fixed
            + self.comm(p, m, isl);
        // The copy's time on prefill: a step's prompts (b x ISL / OSL) at a lone prompt's rate.
        let busy = at.fresh * prompt_s / isl / at.step;
        let ahead = (b / if p.dp_attention { g } else { 1.0 } - 1.0).max(0.0) / 2.0;
        let balance = if p.dp_attention {
            f.balance_steps * at.step
        } else {
            0.0
        };
        f.request_s
            + one_prompt
            + at.step / 2.0
            + queue_wait(busy) * prompt_s
            + f.burst * ahead * prompt_s
            + balance
    }

    /// One copy in layout `p` with `b` requests in flight, each step running `tokens` tokens
    /// a request through the model (1, or 1 + drafts when verifying) and each request
    /// emitting `emitted` (its prompts' prefill comes that much sooner): the point (per user
    /// one token a step) and the decode pass of its step.
    fn plain_point(
        &self,
        p: &Parallel,
        m: &Machine,
        b: f64,
        tokens: f64,
        emitted: f64,
    ) -> (Point, f64) {
        let g = f64::from(p.tp);
        let f = m.fit;
        let bw = m.bandwidth * f.bandwidth * 1e9;
        let flops = m.flops * f.compute * 1e9;
        let isl = self.prompt_tokens;
        let osl = self.output_tokens;
        let context = isl + osl / 2.0;
        // Requests whose attention each GPU runs.
        let b_attn = if p.dp_attention { b / g } else { b };
        let attention_gb = if p.dp_attention {
            self.attention_gb
        } else {
            self.attention_gb / g
        };
        // Tokens through the model a step (several a request when verifying drafts).
        let bt = b * tokens;
        let experts_gb = self
            .experts
            .map_or(0.0, |e| e.layers * self.touched(bt) * e.gb / g);
        let kv = b_attn * self.kv_gb(context) / self.kv_share(p);
        let bytes =
            (attention_gb + (self.dense_gb - self.attention_gb) / g + experts_gb + kv) * 1e9;
        let mem_s = bytes / bw;
        let flop = bt * (2.0 * self.active_params + self.attention_flop * context) / g;
        let flop_s = flop / flops;
        let comm_s = self.comm(p, m, bt);
        let fixed = f.step_s + self.layers * f.layer_s;
        // The host's time on each request a step (each rank's own under DP attention).
        let host = b_attn * f.sequence_s;
        let decode = mem_s.max(flop_s) + fixed + host + comm_s;
        // The prompts prefilled per step, continuous batching: b x ISL / OSL tokens (times
        // the tokens each request emits a step).
        let prompt_flop = 2.0 * self.active_params + self.attention_flop * isl / 2.0;
        let fresh = b * emitted * isl / osl;
        let prefill_per_step = fresh * prompt_flop / g / flops
            + self.comm(p, m, fresh) * (emitted * isl / osl).min(1.0);
        let step = decode + prefill_per_step;
        let ttft = self.ttft(
            p,
            m,
            b,
            Prefill {
                prompt_flop,
                fresh,
                fixed,
                step,
            },
        );
        let per_gpu = b / step / g;
        let pt = Point {
            parallel: *p,
            gpus: p.tp,
            concurrency: b,
            step_s: step,
            tok_s_per_user: 1.0 / step,
            ttft_s: ttft,
            tok_s_per_gpu: per_gpu,
            total_tok_s_per_gpu: per_gpu * (isl + osl) / osl,
            memory_bound: mem_s >= flop_s,
            comm_s,
            max_concurrency: self.max_concurrency(p, m.mem_gb),
        };
        (pt, decode)
    }

    /// A disaggregated deployment with `c` requests in flight over its decode workers: the
    /// decode pool steps without prefill (its requests arrive with their KV cache), the
    /// prefill pool runs prompts in batches at the matrix rate's fitted share; the requests
    /// a second are the fewer of what decode completes and what prefill supplies, and every
    /// GPU of both pools counts. A request's first token: the server's latency, its prompt
    /// alone on a prefill worker (queueing as that pool is busy), and its KV cache sent over
    /// the network between nodes.
    pub fn disaggregated_point(&self, pools: &Pools, m: &Machine, c: f64) -> Result<Point, String> {
        let (p, d) = (pools.prefill, pools.decode);
        // Wide expert parallelism places redundant experts (SGLang's and TensorRT-LLM's
        // load balancers), so a pool's experts need not divide evenly over its GPUs.
        for l in [&p.layout, &d.layout] {
            let even = Parallel { ep: 1, ..*l };
            if let Some(why) = self.why_not(&even) {
                return Err(why);
            }
        }
        let per_worker = (c / f64::from(d.workers.max(1))).max(1.0);
        if per_worker > self.max_concurrency(&d.layout, m.mem_gb) {
            return Err(format!(
                "{per_worker:.0} requests a decode worker need more KV cache than {} holds",
                d.layout.label()
            ));
        }
        let f = m.fit;
        let (isl, osl) = (self.prompt_tokens, self.output_tokens);
        // Decode: one token a request a step (1 + drafts verified with MTP), no prefill.
        let (emitted, tokens) = match self.mtp.filter(|_| d.layout.mtp) {
            Some(x) => (x.tokens_per_step(), 1.0 + x.drafts),
            None => (1.0, 1.0),
        };
        let (dpt, decode_s) = self.plain_point(&d.layout, m, per_worker, tokens, 0.0);
        let step = decode_s + self.draft_s(tokens - 1.0, decode_s);
        let per_user = emitted / step;
        let decode_rps = c * per_user / osl;
        // Prefill: a prompt's FLOP on the pool's matrix engines at the fitted share.
        let prompt_flop = isl * (2.0 * self.active_params + self.attention_flop * isl / 2.0);
        let gp = f64::from(p.layout.tp);
        let prefill_rps =
            f64::from(p.workers) * gp * m.flops * f.compute * 1e9 / prompt_flop.max(1.0);
        let rps = decode_rps.min(prefill_rps);
        let gpus = f64::from(pools.gpus());
        let per_gpu = rps * osl / gpus;
        // The first token: alone on a prefill worker, then the KV cache over the network.
        let alone = prompt_flop / (gp * m.flops * f.prefill * 1e9);
        let busy = rps / prefill_rps;
        let ahead = (c / f64::from(p.workers.max(1)) - 1.0).max(0.0) / 2.0;
        // Within a node or an NVLink rack over the link, else over the network.
        let link = if pools.gpus() <= m.node_gpus {
            m.bus_gbps
        } else {
            m.net_gbps
        };
        let link = link.unwrap_or(ASSUMED_NETWORK_GBS / 8.0);
        let kv_s = self.kv_gb(isl) / (link * gp);
        let ttft = f.request_s
            + alone
            + f.step_s
            + self.layers * f.layer_s
            + queue_wait(busy) * alone
            + f.burst * ahead * alone
            + kv_s
            + step / 2.0;
        Ok(Point {
            parallel: d.layout,
            gpus: pools.gpus(),
            concurrency: c,
            step_s: step,
            tok_s_per_user: per_user.min(rps * osl / c.max(1.0)),
            ttft_s: ttft,
            tok_s_per_gpu: per_gpu,
            total_tok_s_per_gpu: per_gpu * (isl + osl) / osl,
            memory_bound: dpt.memory_bound,
            comm_s: dpt.comm_s,
            max_concurrency: dpt.max_concurrency * f64::from(d.workers),
        })
    }

    /// A step's collectives for `tokens` tokens: tensor parallel all-reduces the hidden
    /// state after attention and after each MLP (16 bits, 2(g-1)/g through each GPU's link);
    /// expert parallel sends each token to its experts and back (FP8 out, 16 bits back).
    fn comm(&self, p: &Parallel, m: &Machine, tokens: f64) -> f64 {
        let g = f64::from(p.tp);
        if p.tp <= 1 {
            return 0.0;
        }
        let link = if p.tp <= m.node_gpus {
            m.bus_gbps
        } else {
            m.net_gbps
        };
        let Some(bus) = link else {
            return 0.0;
        };
        let bus = bus * 1e9;
        let state = tokens * self.hidden * 2.0;
        let moe_layers = self.experts.map_or(0.0, |e| e.layers);
        let k = self.experts.map_or(0.0, |e| e.per_token);
        let mut bytes = 0.0;
        let mut collectives = 0.0;
        if !p.dp_attention {
            bytes += self.layers * state * 2.0 * (g - 1.0) / g;
            collectives += self.layers;
        }
        if p.ep > 1 {
            // Each GPU's share of the tokens, k copies each, out and back.
            // Each GPU dispatches its share of the tokens (its own requests under
            // data-parallel attention, a 1/g slice of the gathered batch under tensor parallel).
            let per_gpu = tokens / g;
            bytes += moe_layers * per_gpu * k * self.hidden * 3.0 * (g - 1.0) / g;
            collectives += 2.0 * moe_layers;
            // Dense layers without experts still all-reduce (data-parallel attention
            // gathers for them).
            bytes += (self.layers - moe_layers) * state * 2.0 * (g - 1.0) / g;
            collectives += self.layers - moe_layers;
        } else {
            bytes += self.layers * state * 2.0 * (g - 1.0) / g;
            collectives += self.layers;
        }
        bytes / bus + collectives * m.fit.collective_s
    }

    /// The layouts a copy over `g` GPUs may take: tensor parallel; for a
    /// Mixture-of-Experts model also expert parallel under tensor- or data-parallel
    /// attention.
    pub fn layouts(&self, g: u32) -> Vec<Parallel> {
        let plain = self.plain_layouts(g);
        let mtp = match self.target.mtp {
            Some(m) => m,
            None => self.mtp.is_some(),
        };
        if !mtp || self.mtp.is_none() {
            return plain;
        }
        let with: Vec<Parallel> = plain.iter().map(|p| Parallel { mtp: true, ..*p }).collect();
        if self.target.mtp == Some(true) {
            return with;
        }
        plain.into_iter().chain(with).collect()
    }

    fn plain_layouts(&self, g: u32) -> Vec<Parallel> {
        let tp = Parallel {
            tp: g,
            ep: 1,
            dp_attention: false,
            mtp: false,
        };
        if g == 1 {
            return vec![tp];
        }
        let mut v = Vec::new();
        if self.splits(&tp) {
            v.push(tp);
        }
        if self.experts.is_some() {
            for p in [
                Parallel { ep: g, ..tp },
                Parallel {
                    ep: g,
                    dp_attention: true,
                    ..tp
                },
            ] {
                if self.splits(&p) {
                    v.push(p);
                }
            }
        }
        v
    }

    /// Whether a layout divides the model evenly, as servers require: tensor-parallel
    /// attention its heads, expert parallelism its experts. None: why not.
    pub fn why_not(&self, p: &Parallel) -> Option<String> {
        let g = f64::from(p.tp);
        if !p.dp_attention && self.heads > 0.0 && self.heads % g != 0.0 {
            return Some(format!(
                "{} splits {} attention heads unevenly over {} GPUs",
                p.label(),
                self.heads,
                p.tp
            ));
        }
        if let Some(e) = self.experts
            && p.ep > 1
            && e.count % f64::from(p.ep) != 0.0
        {
            return Some(format!(
                "{} splits {} experts unevenly over {} GPUs",
                p.label(),
                e.count,
                p.ep
            ));
        }
        if p.mtp && self.mtp.is_none() {
            return Some(format!(
                "{}: the model ships no multi-token-prediction layer to draft with",
                p.label()
            ));
        }
        if p.ep > 1 && self.experts.is_none() {
            return Some(format!(
                "{}: a dense model has no experts to spread",
                p.label()
            ));
        }
        None
    }

    fn splits(&self, p: &Parallel) -> bool {
        self.why_not(p).is_none()
    }

    /// The best point of layout `p` on `m` for the target: the given concurrency; else the
    /// most requests that still meet the interactivity and time-to-first-token targets;
    /// else the server's limit. Err: why the layout cannot serve it.
    pub fn best_point(&self, p: &Parallel, m: &Machine) -> Result<Point, String> {
        if let Some(why) = self.why_not(p) {
            return Err(why);
        }
        let most = self.max_concurrency(p, m.mem_gb);
        if most < 1.0 {
            return Err(format!(
                "{:.0} GB of weights per GPU in {} leave no room for one request's KV cache",
                self.weights_per_gpu(p),
                p.label()
            ));
        }
        let t = &self.target;
        if let Some(c) = t.concurrency {
            if c > most {
                return Err(format!(
                    "concurrency {c} needs more KV cache than {} holds ({most:.0} requests)",
                    p.label()
                ));
            }
            let pt = self.point(p, m, c);
            return self.meets(pt).map(|_| pt);
        }
        if t.interactivity.is_none() && t.ttft_s.is_none() {
            return Ok(self.point(p, m, most.min(self.max_batch)));
        }
        // A target picks a batch under the server's limit, never above it.
        let cap = most.min(self.max_batch);
        let first = self.point(p, m, 1.0);
        self.meets(first)?;
        // The step only grows with the batch: the largest batch that meets the target.
        let (mut lo, mut hi) = (1.0f64, cap);
        if self.meets(self.point(p, m, hi)).is_ok() {
            return Ok(self.point(p, m, hi));
        }
        while hi - lo > 1.0 {
            let mid = ((lo + hi) / 2.0).floor();
            if self.meets(self.point(p, m, mid)).is_ok() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(self.point(p, m, lo))
    }

    /// Whether a point meets the targets; Err says by how much it misses.
    fn meets(&self, pt: Point) -> Result<(), String> {
        if let Some(i) = self.target.interactivity
            && pt.tok_s_per_user < i * (1.0 - 1e-9)
        {
            return Err(format!(
                "{} reaches {:.1} tokens/s per user at concurrency {}, under the {i} asked",
                pt.parallel.label(),
                pt.tok_s_per_user,
                pt.concurrency
            ));
        }
        if let Some(s) = self.target.ttft_s
            && pt.ttft_s > s * (1.0 + 1e-9)
        {
            return Err(format!(
                "{} takes {:.2} s to the first token at concurrency {}, over the {s} s asked",
                pt.parallel.label(),
                pt.ttft_s,
                pt.concurrency
            ));
        }
        Ok(())
    }

    /// The fastest copy on `n` GPUs of `m` (output tokens per second per GPU): every
    /// divisor of `n` as the copy's GPUs in every layout it may take, or the layout asked
    /// for. Err: why none serves.
    pub fn best_on(&self, n: u32, m: &Machine) -> Result<Point, String> {
        let layouts: Vec<Parallel> = match self.target.parallel {
            Some(p) => {
                if !n.is_multiple_of(p.tp) {
                    return Err(format!(
                        "--parallel {}: {n} GPUs are not a whole number of copies of {}",
                        p.label(),
                        p.tp
                    ));
                }
                vec![p]
            }
            None => (1..=n)
                .filter(|g| n.is_multiple_of(*g))
                .flat_map(|g| self.layouts(g))
                .collect(),
        };
        let mut best: Option<Point> = None;
        let mut why = Vec::new();
        for p in &layouts {
            match self.best_point(p, m) {
                // Fewer GPUs a copy win a tie: nothing faster is skipped.
                Ok(pt)
                    if best.is_none_or(|b| pt.tok_s_per_gpu > b.tok_s_per_gpu * (1.0 + 1e-9)) =>
                {
                    best = Some(pt)
                }
                Ok(_) => {}
                Err(e) => why.push(e),
            }
        }
        best.ok_or_else(|| {
            // The reason of the largest layout says the most (the others hold less).
            why.pop().unwrap_or_else(|| "no layout".into())
        })
    }
}

/// The embedded fits, parsed once.
pub fn fits() -> &'static FitFile {
    static FITS_FILE: std::sync::OnceLock<FitFile> = std::sync::OnceLock::new();
    FITS_FILE.get_or_init(FitFile::embedded)
}
