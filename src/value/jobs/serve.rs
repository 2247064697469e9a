//! Serving an LLM: the model's weights, KV cache and FLOP as the step model of
//! `scenario::serving` needs them, the workload and its targets (docs/ranking-model.md).

use super::{BYTES_PER_TOKEN, Model, Precision, check, gb};
use crate::value::scenario::serving::{Experts, Parallel, Serving, Target, Window};
use crate::value::scenario::{Job, MemoryNeed, Scenario};
use anyhow::{Result, bail};

/// A server's default batch limit: vLLM's `max_num_seqs`.
pub const MAX_BATCH: f64 = 256.0;

/// Serving: the model, its precision, the requests with their lengths and what each must get.
#[derive(Clone, Debug, PartialEq)]
pub struct Serve {
    pub model: Model,
    /// The weights' precision; None: as the model ships (its `quantization_config`), else
    /// 16-bit.
    pub precision: Option<Precision>,
    pub requests: f64,
    pub prompt_tokens: f64,
    pub output_tokens: f64,
    /// Requests in flight per copy of the model; None: the most that meet the targets, or
    /// the server's limit.
    pub concurrency: Option<f64>,
    /// Output tokens per second each request must decode at.
    pub interactivity: Option<f64>,
    /// Time to first token, at most.
    pub ttft_s: Option<f64>,
    pub parallel: Option<Parallel>,
    /// A steady request rate (per second) instead of a number of requests: the job is an
    /// hour of that traffic, served by as many instances as keep up with it.
    pub rate: Option<f64>,
    /// The server's batch limit (requests in flight per copy); None: [`MAX_BATCH`].
    pub max_batch: Option<f64>,
    /// Speculative decoding with the model's MTP layer: asked (true), ruled out (false), or
    /// chosen per row where the model has one (None).
    pub mtp: Option<bool>,
    /// The engine whose published times to first token the estimate follows (None: every
    /// engine's runs pooled).
    pub engine: Option<crate::value::scenario::engine::Engine>,
}

/// The main job's serving question: tokens a second each user reads at (a chat's pace:
/// well above reading speed, below what a single request gets alone on most GPUs).
pub const MAIN_INTERACTIVITY: f64 = 30.0;

/// The main job's serving jobs: a dense 70B (Llama 3, served in FP8 as NVIDIA's and
/// vLLM's published runs serve it) and a MoE model (DeepSeek-R1, FP8 as it ships), a
/// million chats of 1,024 prompt and 1,024 output tokens at [`MAIN_INTERACTIVITY`].
pub fn main_serving() -> Result<Vec<Scenario>> {
    [("70b", Some(Precision::Fp8)), ("deepseek-r1", None)]
        .into_iter()
        .map(|(name, precision)| {
            Serve {
                interactivity: Some(MAIN_INTERACTIVITY),
                ..Serve::chats(super::preset(name)?, precision)
            }
            .scenario()
        })
        .collect()
}

impl Serve {
    /// A million requests of 1,024 prompt and 1,024 output tokens, nothing else asked.
    pub fn chats(model: Model, precision: Option<Precision>) -> Serve {
        Serve {
            model,
            precision,
            requests: 1e6,
            prompt_tokens: 1024.0,
            output_tokens: 1024.0,
            concurrency: None,
            interactivity: None,
            ttft_s: None,
            parallel: None,
            rate: None,
            max_batch: None,
            mtp: None,
            engine: None,
        }
    }

    /// The precision served in, bytes per routed-expert and per other parameter, what they
    /// are, and the precision whose engines run the matmuls.
    fn weights(&self) -> (Precision, f64, f64, String, Precision) {
        let shipped = self.model.shipped;
        match (self.precision, shipped) {
            (None, Some(s)) => (
                s.precision,
                s.expert_bytes,
                s.other_bytes,
                s.what.into(),
                s.compute,
            ),
            (Some(p), Some(s)) if p == s.precision => {
                (p, s.expert_bytes, s.other_bytes, s.what.into(), s.compute)
            }
            (p, _) => {
                let p = p.unwrap_or(Precision::Fp16);
                let b = p.weight_bytes();
                let what = format!("{} weights, {b} bytes a parameter", p.name());
                (p, b, b, what, p)
            }
        }
    }

    /// What each copy is asked to serve, in words.
    fn target_words(&self) -> String {
        match (self.concurrency, self.interactivity, self.ttft_s) {
            (Some(c), _, _) => format!("{c} requests in flight per copy of the model"),
            (None, None, None) => format!(
                "as many requests in flight per copy as 90% of its memory holds, at most {}",
                self.batch_limit()
            ),
            (None, i, t) => format!(
                "the most requests in flight per copy that still get{}{}, at most {}",
                i.map_or(String::new(), |i| format!(" {i} tokens/s each")),
                t.map_or(String::new(), |t| format!(" a first token within {t} s")),
                self.batch_limit()
            ),
        }
    }

    /// The batch limit in words: the stated one, or vLLM's default.
    fn batch_limit(&self) -> String {
        match self.max_batch {
            Some(b) => format!("{b} (--max-batch)"),
            None => format!("{MAX_BATCH} (vLLM's max_num_seqs; --max-batch states another)"),
        }
    }

    fn checked(&self) -> Result<f64> {
        let m = &self.model;
        check(m.params, 1e6, 1e13, "--model-params")?;
        check(self.requests, 1.0, 1e13, "--requests")?;
        if let Some(r) = self.rate {
            check(r, 1e-3, 1e7, "--request-rate")?;
        }
        check(self.prompt_tokens, 1.0, 1e7, "--prompt-tokens")?;
        check(self.output_tokens, 1.0, 1e7, "--output-tokens")?;
        if let Some(c) = self.concurrency {
            check(c, 1.0, 1e5, "--concurrency")?;
        }
        if let Some(i) = self.interactivity {
            check(i, 1e-3, 1e5, "--interactivity")?;
        }
        if let Some(t) = self.ttft_s {
            check(t, 1e-4, 1e5, "--ttft-s")?;
        }
        if let Some(b) = self.max_batch {
            check(b, 1.0, 1e5, "--max-batch")?;
            if b.fract() != 0.0 {
                bail!("--max-batch {b}: expected a whole number of requests");
            }
        }
        if let (Some(c), Some(b)) = (self.concurrency, self.max_batch)
            && c > b
        {
            bail!("--concurrency {c} is over --max-batch {b}: the server would queue the rest");
        }
        if self.concurrency.is_some() && (self.interactivity.is_some() || self.ttft_s.is_some()) {
            bail!(
                "--concurrency fixes the requests in flight; --interactivity and --ttft-s ask for the most that meet a target: give one or the other"
            );
        }
        if let Some(ctx) = m.context
            && self.prompt_tokens + self.output_tokens > ctx
        {
            bail!(
                "--prompt-tokens {} + --output-tokens {} = {} tokens: over {}'s context of {ctx} tokens (max_position_embeddings)",
                self.prompt_tokens,
                self.output_tokens,
                self.prompt_tokens + self.output_tokens,
                m.prose()
            );
        }
        if self.precision.is_none()
            && let Some(why) = &m.unread_quantization
        {
            bail!("{why}");
        }
        if self.mtp == Some(true) && m.mtp_layers <= 0.0 {
            bail!(
                "--speculative mtp: {} ships no multi-token-prediction layer (num_nextn_predict_layers)",
                m.prose()
            );
        }
        if let Some(p) = self.parallel
            && p.ep > 1
            && !m.is_moe()
        {
            bail!(
                "--parallel {}: ep applies to a Mixture-of-Experts model; {} is dense",
                p.label(),
                m.prose()
            );
        }
        Ok(self.rate.map_or(self.requests, |r| r * 3600.0))
    }

    /// The step model's view of the model and workload.
    pub fn serving(&self) -> Result<Serving> {
        let requests = self.checked()?;
        let m = &self.model;
        let (p, expert_bytes, other_bytes, _, compute) = self.weights();
        let kv = m.kv_elements_per_layer() * p.kv_bytes() / 1e6;
        let (full_layers, window) = match m.sliding {
            Some(s) => (
                m.layers - s.layers,
                Some(Window {
                    mb_per_token: s.layers * kv,
                    tokens: s.window,
                }),
            ),
            None => (m.layers, None),
        };
        Ok(Serving {
            model: m.name.clone(),
            tokens: requests * self.output_tokens,
            prompt_tokens: self.prompt_tokens,
            output_tokens: self.output_tokens,
            layers: m.layers,
            hidden: m.hidden,
            heads: m.heads,
            dense_gb: gb((m.params - m.routed() - m.embedding()) * other_bytes),
            attention_gb: gb(m.layers * m.attention_params * other_bytes),
            held_gb: gb(m.embedding() * other_bytes),
            experts: m.moe.map(|e| Experts {
                layers: e.layers,
                count: e.experts,
                per_token: e.per_token,
                gb: gb(e.expert_params * expert_bytes),
            }),
            active_params: m.active(),
            attention_flop: m.attention_flop_per_context(),
            kv_mb_per_token: full_layers * kv,
            window,
            kv_split: if m.kv_split_by_tp() { m.kv_heads } else { 1.0 },
            engines: compute.engines(),
            block_scaled: p == Precision::Fp4 && compute == Precision::Fp8,
            memory_use: 0.9,
            max_batch: self.max_batch.unwrap_or(MAX_BATCH),
            kv_bytes: p.kv_bytes(),
            mtp: (m.mtp_layers > 0.0).then_some(crate::value::scenario::serving::Mtp::PUBLISHED),
            engine: self.engine,
            target: Target {
                concurrency: self.concurrency,
                interactivity: self.interactivity,
                ttft_s: self.ttft_s,
                parallel: self.parallel,
                mtp: self.mtp,
            },
        })
    }

    pub fn scenario(&self) -> Result<Scenario> {
        let s = self.serving()?;
        let requests = s.tokens / self.output_tokens;
        let m = &self.model;
        let (p, _, _, weights_what, compute) = self.weights();
        let moe = match (m.moe, &s.experts) {
            (Some(e), Some(x)) => format!(
                "; {} of {} routed experts a token in {} layers ({:.3} GB each), a step reading the experts its batch touches (E(1-(1-k/E)^B) a layer)",
                e.per_token, e.experts, e.layers, x.gb
            ),
            _ => String::new(),
        };
        let attention = match m.attention {
            super::Attention::Mla { .. } => {
                "MLA's compressed KV cache, whole on every tensor-parallel rank"
            }
            super::Attention::Gqa => "GQA's KV cache, split over tensor-parallel ranks by KV head",
        };
        let target = self.target_words();
        Ok(Scenario {
            id: format!("llm-serve-{}-{}", m.label(), p.name().to_lowercase()),
            description: format!(
                "serving {} with {weights_what}, split over the instance's GPUs",
                m.prose()
            ),
            min_gpu_memory_gb: None,
            memory_floor: vec![MemoryNeed {
                what: "framework workspace and activations".into(),
                gb: crate::value::scenario::serving::WORKSPACE_GB,
            }],
            min_vcpus_per_gpu: None,
            job: Some(Job {
                name: match self.rate {
                    Some(r) => format!(
                        "an hour of {r} requests/s ({} output tokens/s) of {} prompt and {} output tokens",
                        r * self.output_tokens,
                        self.prompt_tokens,
                        self.output_tokens
                    ),
                    None => format!(
                        "{:.3e} requests of {} prompt and {} output tokens",
                        self.requests, self.prompt_tokens, self.output_tokens
                    ),
                },
                assumption: format!(
                    "{:.1} GB of weights ({:.3e} parameters, {:.3e} active); prefill and decode on the {} engines; {attention}{moe}; {target}; the layout (tensor, expert, data-parallel attention{}) that serves the most tokens per GPU",
                    s.weight_gb(),
                    m.params,
                    m.active(),
                    compute.name(),
                    match (m.mtp_layers > 0.0, self.mtp) {
                        (true, None) => ", speculative decoding with its MTP layer or not",
                        (true, Some(true)) => ", with speculative decoding by its MTP layer",
                        _ => "",
                    }
                ),
                output: Some(crate::value::scenario::Output {
                    amount: requests * self.output_tokens,
                    unit: "output tokens".into(),
                }),
                steady_hours: self.rate.map(|_| 1.0),
            }),
            terms: Vec::new(),
            sharded_memory: Vec::new(),
            collectives: None,
            decode: None,
            serving: Some(s),
            egress: Some(crate::value::scenario::EgressNeed {
                gb: gb(requests * self.output_tokens * BYTES_PER_TOKEN),
                what: format!(
                    "the responses' text, about {BYTES_PER_TOKEN} bytes an output token (a token is about 4 characters of English, OpenAI's rule of thumb), without the protocol's framing"
                ),
            }),
        })
    }
}
