//! Jobs with parameters: an LLM fine-tune and LLM serving, each turned into a scenario
//! (terms on the execution units, memory per GPU and split over an instance, decoding)
//! with every assumption stated, so `rank` costs them like any scenario and
//! `--print-scenario` shows the file to edit.
//!
//! The physics, per job:
//! - **Fine-tune.** Training FLOP are 6 x parameters x tokens for full fine-tuning (forward
//!   2, backward 4: activation and weight gradients), 4 x for LoRA and QLoRA (the frozen
//!   base needs no weight gradients; the adapters' own FLOP are under 1%), plus one more
//!   forward (2 x) for activation checkpointing, on the FP16/BF16 matrix engines.
//!   Attention's own FLOP (about 10% at 4k tokens of context for an 8B model) are not
//!   counted. Memory: mixed-precision Adam holds 16 bytes per parameter (FP16 weights and
//!   gradients, FP32 master weights and two moments), sharded over the instance's GPUs
//!   (ZeRO-3 / FSDP); LoRA a frozen FP16 base (2 bytes per parameter; QLoRA 4-bit, 0.5 plus
//!   about 10% for quantisation constants) also sharded, and adapters of 0.5% of the
//!   parameters with their Adam state. Each GPU holds its checkpointed activations (2 bytes
//!   x sequence x hidden x layers for a micro-batch of one sequence) and 2 GB of framework
//!   workspace. Several GPUs train data-parallel with the state sharded: per step of 128
//!   sequences the FP16 weights are all-gathered for the forward and the backward and the
//!   gradients reduce-scattered (LoRA: the two all-gathers of the base), over the
//!   instance's interconnect at the bus bandwidth nccl-tests reports; the collectives
//!   overlap the compute, and only what outlasts it adds time.
//! - **Serving.** Prefill: 2 x parameters FLOP per prompt token, on the matrix engines of
//!   the weights' precision (FP8 engines for FP8; FP16 for FP16 and for 4-bit weights,
//!   dequantised). Decode: 2 x parameters FLOP per output token, and per step the weights
//!   read once for the whole batch plus every sequence's KV cache (half the longest context
//!   on average); the batch is what the memory left after the weights holds (90% of it, at
//!   most 256 sequences a copy: vLLM's defaults). On several GPUs the server runs copies
//!   of the model side by side, each tensor-parallel over a divisor of the GPU count, in
//!   whichever layout finishes first. A copy over several GPUs all-reduces each token's
//!   hidden state twice a layer (after attention and after the MLP, Megatron's split), in
//!   16 bits whatever the weights' precision, for prompt and output tokens alike, over the
//!   instance's interconnect at the bus bandwidth nccl-tests reports; overlapped with the
//!   compute (a second micro-batch, fused all-reduce kernels), only what outlasts it adds
//!   time (docs/ranking-model.md: the MLPerf 8-GPU points, at 0.78-0.90x, run as copies
//!   over 1 or 2 GPUs, where the all-reduces are small either way).

use crate::scenario::{Collectives, Decode, Job, MemoryNeed, Parallelism, Rate, Scenario, Term};

/// Sequences per optimizer step of a fine-tune (its global batch), whatever the GPU count.
pub const GLOBAL_BATCH: f64 = 128.0;
use anyhow::{Result, bail};

/// A model's shape: what sets its FLOP, its weights and its KV cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    pub name: &'static str,
    pub params: f64,
    pub layers: f64,
    pub hidden: f64,
    pub kv_heads: f64,
    pub head_dim: f64,
}

/// Llama 3 8B and 70B, Llama 3.1 405B, and Llama 2 7B (their `config.json`: hidden_size,
/// num_hidden_layers, num_key_value_heads; head dimension 128). Llama 2 7B attends with
/// all 32 heads (no grouped-query attention): four times Llama 3 8B's KV cache a token.
pub const PRESETS: [Model; 4] = [
    Model {
        name: "8b",
        params: 8.03e9,
        layers: 32.0,
        hidden: 4096.0,
        kv_heads: 8.0,
        head_dim: 128.0,
    },
    Model {
        name: "70b",
        params: 70.6e9,
        layers: 80.0,
        hidden: 8192.0,
        kv_heads: 8.0,
        head_dim: 128.0,
    },
    Model {
        name: "405b",
        params: 405.85e9,
        layers: 126.0,
        hidden: 16384.0,
        kv_heads: 8.0,
        head_dim: 128.0,
    },
    Model {
        name: "llama2-7b",
        params: 6.74e9,
        layers: 32.0,
        hidden: 4096.0,
        kv_heads: 32.0,
        head_dim: 128.0,
    },
];

/// The Llama 3 family in order of size: a parameter count between (or beyond) two of them
/// takes its shape from theirs.
const FAMILY: [&str; 3] = ["8b", "70b", "405b"];

/// A preset by name ("8b", "70B").
pub fn preset(name: &str) -> Result<Model> {
    let n = name.trim().to_lowercase();
    PRESETS
        .iter()
        .find(|m| m.name == n)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|m| m.name).collect();
            anyhow::anyhow!(
                "--model {name}: unknown preset, expected one of {}",
                names.join(", ")
            )
        })
}

/// A parameter count as people name models: "70b", "1.3b", "405b", "10t", "350m".
pub fn params_label(p: f64) -> String {
    let (v, unit) = if p >= 1e12 {
        (p / 1e12, "t")
    } else if p >= 1e9 {
        (p / 1e9, "b")
    } else {
        (p / 1e6, "m")
    };
    // Three significant figures, trailing zeros dropped.
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    let t = format!("{v:.digits$}");
    let t = if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    };
    format!("{t}{unit}")
}

/// "a" or "an" before a number read aloud in English ("an 8B model", "an 11B model",
/// "an 80B model", "a 70B model").
pub fn article(label: &str) -> &'static str {
    let digits: String = label.chars().take_while(|c| c.is_ascii_digit()).collect();
    let an = digits.starts_with('8')
        || ((digits.len() == 2 || digits.len() == 5) && digits.starts_with("11"))
        || ((digits.len() == 2 || digits.len() == 5) && digits.starts_with("18"));
    if an { "an" } else { "a" }
}

impl Model {
    /// The model in a sentence: "Llama 3 8B", or "a 13B model of Llama 3's shape".
    pub fn prose(&self) -> String {
        let family = match self.name {
            "llama2-7b" => "Llama 2",
            "405b" => "Llama 3.1",
            _ => "Llama 3",
        };
        let label = self.label();
        if label == self.name {
            match self.name {
                "llama2-7b" => "Llama 2 7B".into(),
                n => format!("{family} {}", n.to_uppercase()),
            }
        } else {
            let big = label.to_uppercase();
            format!("{} {big} model of {family}'s shape", article(&label))
        }
    }

    /// The model's name: the preset's, or its parameter count where it was scaled.
    pub fn label(&self) -> String {
        let is_preset = PRESETS
            .iter()
            .any(|m| m.name == self.name && (m.params / self.params - 1.0).abs() < 0.01);
        if is_preset {
            self.name.to_string()
        } else {
            params_label(self.params)
        }
    }

    /// The model's shape at another parameter count, as its family grows. Llama 3 sizes
    /// take the layers and width of the two family members around them (interpolated on a
    /// log scale; beyond the ends, the nearest two's trend): from 8B to 70B the width
    /// doubles and the layers grow 2.5x, from 70B to 405B the width doubles again and the
    /// layers grow 1.6x. Other presets scale layers and width as the square root each. The
    /// width is a whole number of heads; the KV heads and head size stay.
    pub fn with_params(self, params: f64) -> Model {
        let (layers, hidden) = if FAMILY.contains(&self.name) {
            let fam: Vec<Model> = FAMILY.iter().map(|n| preset(n).unwrap()).collect();
            let i = fam
                .windows(2)
                .position(|w| params <= w[1].params)
                .unwrap_or(fam.len() - 2);
            let (a, b) = (fam[i], fam[i + 1]);
            let t = (params / a.params).ln() / (b.params / a.params).ln();
            let at = |x: f64, y: f64| x * (y / x).powf(t);
            (at(a.layers, b.layers), at(a.hidden, b.hidden))
        } else {
            let s = (params / self.params).sqrt();
            (self.layers * s, self.hidden * s)
        };
        Model {
            params,
            layers: layers.round().max(1.0),
            hidden: ((hidden / self.head_dim).round() * self.head_dim).max(self.head_dim),
            ..self
        }
    }
}

/// How a fine-tune trains.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Every weight, mixed-precision Adam.
    Full,
    /// Low-rank adapters on a frozen FP16 base.
    Lora,
    /// Low-rank adapters on a frozen 4-bit base.
    Qlora,
}

/// The weights' (and KV cache's) precision when serving.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp16,
    Fp8,
    /// 4-bit weights (dequantised to FP16 for the matmuls), FP16 KV cache.
    Int4,
    /// FP4 weights and matmuls on the FP4 matrix engines (NVFP4 on Blackwell, MXFP4 on
    /// CDNA4), FP8 KV cache, as MLPerf's Blackwell Llama 2 70B entries run. A GPU without
    /// FP4 engines runs the matmuls on its FP8 (else FP16) engines, said per row.
    Fp4,
}

impl Precision {
    fn weight_bytes(self) -> f64 {
        match self {
            Precision::Fp16 => 2.0,
            Precision::Fp8 => 1.0,
            Precision::Int4 => 0.5,
            // NVFP4: 4-bit values and one FP8 scale per 16 (MXFP4: one 8-bit scale per 32,
            // 0.53): the larger, NVFP4's.
            Precision::Fp4 => 0.5625,
        }
    }
    fn kv_bytes(self) -> f64 {
        match self {
            Precision::Fp8 | Precision::Fp4 => 1.0,
            Precision::Fp16 | Precision::Int4 => 2.0,
        }
    }
    fn engines(self) -> Rate {
        match self {
            Precision::Fp8 => Rate::MatmulFp8Matrix,
            Precision::Fp4 => Rate::MatmulFp4Matrix,
            Precision::Fp16 | Precision::Int4 => Rate::MatmulF16Matrix,
        }
    }
    /// The LLM-training rates: the same peaks, with efficiencies fitted on LLM training.
    fn training_engines(self) -> Rate {
        match self {
            Precision::Fp8 => Rate::LlmTrainFp8Matrix,
            _ => Rate::LlmTrainF16Matrix,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Precision::Fp16 => "FP16",
            Precision::Fp8 => "FP8",
            Precision::Int4 => "INT4",
            Precision::Fp4 => "FP4",
        }
    }
}

/// A job named in a file (a calibration point): its kind and parameters, as the command
/// line gives them (`rank --job`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum JobSpec {
    LlmServe {
        model: String,
        precision: Precision,
        prompt_tokens: f64,
        output_tokens: f64,
        requests: f64,
        /// Most requests in flight per copy of the model (the server's batch limit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        concurrency: Option<f64>,
    },
    LlmFinetune {
        model: String,
        method: Method,
        tokens: f64,
        seq_len: f64,
        /// The matmuls' precision: fp16 (BF16/FP16 mixed precision, the default) or fp8
        /// (Transformer Engine's FP8 GEMMs, as MLPerf runs it).
        #[serde(default = "fp16", skip_serializing_if = "is_fp16")]
        compute: Precision,
    },
}

impl JobSpec {
    /// The job's scenario, as `rank --job` builds it.
    pub fn scenario(&self) -> Result<Scenario> {
        match self {
            JobSpec::LlmServe {
                model,
                precision,
                prompt_tokens,
                output_tokens,
                requests,
                concurrency,
            } => Serve {
                model: preset(model)?,
                precision: *precision,
                requests: *requests,
                prompt_tokens: *prompt_tokens,
                output_tokens: *output_tokens,
                concurrency: concurrency.unwrap_or(MAX_BATCH),
                rate: None,
            }
            .scenario(),
            JobSpec::LlmFinetune {
                model,
                method,
                tokens,
                seq_len,
                compute,
            } => Finetune {
                model: preset(model)?,
                tokens: *tokens,
                method: *method,
                seq_len: *seq_len,
                compute: *compute,
            }
            .scenario(),
        }
    }
}

/// A fine-tune: the model, the tokens trained on, the method and the sequence length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finetune {
    pub model: Model,
    pub tokens: f64,
    pub method: Method,
    pub seq_len: f64,
    /// The precision of the training matmuls: FP16/BF16, or FP8 on the engines that have it.
    pub compute: Precision,
}

fn fp16() -> Precision {
    Precision::Fp16
}

fn is_fp16(p: &Precision) -> bool {
    *p == Precision::Fp16
}

/// Serving: the model, its precision, and the requests served with their lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Serve {
    pub model: Model,
    pub precision: Precision,
    pub requests: f64,
    pub prompt_tokens: f64,
    pub output_tokens: f64,
    /// Most requests in flight per copy of the model: the server's batch limit, lowered
    /// for a latency bound (fewer sequences a step, each step sooner).
    pub concurrency: f64,
    /// A steady request rate (per second) instead of a number of requests: the job is an
    /// hour of that traffic, served by as many instances as keep up with it.
    pub rate: Option<f64>,
}

/// A server's default batch limit: vLLM's `max_num_seqs`.
pub const MAX_BATCH: f64 = 256.0;

fn gb(bytes: f64) -> f64 {
    bytes / 1e9
}

fn check(x: f64, lo: f64, hi: f64, opt: &str) -> Result<()> {
    if !(x.is_finite() && (lo..=hi).contains(&x)) {
        bail!("{opt} {x}: expected a number from {lo:e} to {hi:e}");
    }
    Ok(())
}

impl Method {
    /// FLOP per parameter and token, what they are, the frozen or trained state's bytes per
    /// parameter, and the method's name.
    fn cost(self) -> (f64, &'static str, f64, &'static str) {
        match self {
            Method::Full => (
                8.0,
                "6 x params (forward, activation and weight gradients) + 2 x params (checkpointing's second forward)",
                16.0,
                "full",
            ),
            Method::Lora => (
                6.0,
                "4 x params (forward and activation gradients: the frozen base has no weight gradients) + 2 x params (checkpointing)",
                2.0,
                "LoRA",
            ),
            Method::Qlora => (
                6.0,
                "4 x params (forward and activation gradients; the 4-bit base is dequantised, not trained) + 2 x params (checkpointing)",
                0.55,
                "QLoRA",
            ),
        }
    }
}

impl Finetune {
    pub fn scenario(&self) -> Result<Scenario> {
        let m = &self.model;
        check(m.params, 1e6, 1e13, "--model-params")?;
        check(self.tokens, 1.0, 1e16, "--tokens")?;
        check(self.seq_len, 16.0, 1e7, "--seq-len")?;
        if matches!(self.compute, Precision::Int4 | Precision::Fp4) {
            bail!(
                "--precision {}: fine-tuning computes in fp16 (BF16/FP16 mixed precision) or fp8; a 4-bit base is --method qlora",
                self.compute.name().to_lowercase()
            );
        }
        let engines = self.compute.training_engines();
        let in_precision = match self.compute {
            Precision::Fp8 => "FP8",
            _ => "FP16/BF16",
        };
        let (per_token, what, base_bytes, label) = self.method.cost();
        let flop = per_token * m.params * self.tokens;
        let mut sharded = vec![MemoryNeed {
            what: match self.method {
                Method::Full => "weights, gradients and Adam state, 16 bytes per parameter (mixed precision), sharded (ZeRO-3 / FSDP)".into(),
                Method::Lora => "the frozen FP16 base, 2 bytes per parameter, sharded".into(),
                Method::Qlora => "the frozen 4-bit base with its quantisation constants, 0.55 bytes per parameter, sharded".into(),
            },
            gb: gb(base_bytes * m.params),
        }];
        if self.method != Method::Full {
            sharded.push(MemoryNeed {
                what:
                    "adapters (0.5% of the parameters) with gradients and Adam state, 16 bytes each"
                        .into(),
                gb: gb(0.005 * m.params * 16.0),
            });
        }
        let activations = gb(2.0 * self.seq_len * m.hidden * m.layers);
        Ok(Scenario {
            id: format!(
                "llm-finetune-{}-{}{}",
                m.label(),
                label.to_lowercase(),
                if self.compute == Precision::Fp8 {
                    "-fp8"
                } else {
                    ""
                }
            ),
            description: format!(
                "{label} fine-tuning of {} ({:.3e} parameters, {} layers, hidden {}) on the {in_precision} matrix engines",
                m.prose(),
                m.params,
                m.layers,
                m.hidden
            ),
            min_gpu_memory_gb: None,
            memory_floor: vec![
                MemoryNeed {
                    what: format!(
                        "checkpointed activations of one {}-token sequence (2 bytes x sequence x hidden x layers)",
                        self.seq_len
                    ),
                    gb: activations,
                },
                MemoryNeed {
                    what: "framework workspace".into(),
                    gb: 2.0,
                },
            ],
            min_vcpus_per_gpu: None,
            job: Some(Job {
                name: format!(
                    "{label} fine-tune of {} ({:.3e} parameters) on {:.3e} tokens of {} tokens each",
                    m.prose(),
                    m.params,
                    self.tokens,
                    self.seq_len
                ),
                assumption: format!(
                    "{flop:.3e} FLOP: {what}, per token; attention's own FLOP not counted; several GPUs train data-parallel with the state sharded (ZeRO-3 / FSDP), {GLOBAL_BATCH} sequences per step, their collectives overlapping the compute"
                ),
                output: Some(crate::scenario::Output {
                    amount: self.tokens,
                    unit: "tokens".into(),
                }),
                steady_hours: None,
            }),
            terms: vec![Term {
                figure: engines,
                work: flop,
                unit: "FLOP".into(),
                what: Some(format!("training matmuls in {in_precision}")),
            }],
            sharded_memory: sharded,
            decode: None,
            collectives: Some(Collectives {
                // ZeRO-3 / FSDP: the FP16 weights all-gathered for the forward and again for
                // the backward, the FP16 gradients reduce-scattered (full); LoRA gathers the
                // frozen base twice (its adapters' gradients are negligible).
                bytes_per_step: match self.method {
                    Method::Full => 3.0,
                    Method::Lora | Method::Qlora => 2.0,
                } * self.model.params
                    * match self.method {
                        Method::Qlora => 0.5,
                        _ => 2.0,
                    },
                steps: (self.tokens / (GLOBAL_BATCH * self.seq_len)).ceil(),
                what: match self.method {
                    Method::Full => {
                        "weight all-gathers (forward, backward) and gradient reduce-scatter"
                    }
                    Method::Lora | Method::Qlora => {
                        "all-gathers of the frozen base (forward, backward)"
                    }
                }
                .into(),
                parallelism: Parallelism::Data,
            }),
            egress: Some(finetune_egress(self.method, m.params)),
        })
    }
}

impl Serve {
    pub fn scenario(&self) -> Result<Scenario> {
        let m = &self.model;
        check(m.params, 1e6, 1e13, "--model-params")?;
        check(self.requests, 1.0, 1e13, "--requests")?;
        if let Some(r) = self.rate {
            check(r, 1e-3, 1e7, "--request-rate")?;
        }
        let requests = self.rate.map_or(self.requests, |r| r * 3600.0);
        check(self.prompt_tokens, 1.0, 1e7, "--prompt-tokens")?;
        check(self.output_tokens, 1.0, 1e7, "--output-tokens")?;
        check(self.concurrency, 1.0, 1e5, "--concurrency")?;
        let p = self.precision;
        let prefill = 2.0 * m.params * self.prompt_tokens * requests;
        let decode_flop = 2.0 * m.params * self.output_tokens * requests;
        let kv_mb = 2.0 * m.layers * m.kv_heads * m.head_dim * p.kv_bytes() / 1e6;
        let weights = gb(p.weight_bytes() * m.params);
        // Tensor parallel: 2 all-reduces a layer of the token's hidden state in 16 bits;
        // nccl-tests' bus bytes count an all-reduce twice.
        let ar_bytes = 2.0 * m.layers * m.hidden * 2.0;
        let ar_mb = ar_bytes / 1e6;
        Ok(Scenario {
            id: format!("llm-serve-{}-{}", m.label(), p.name().to_lowercase()),
            description: format!(
                "serving {} ({:.3e} parameters) with {} weights, split over the instance's GPUs",
                m.prose(),
                m.params,
                p.name()
            ),
            min_gpu_memory_gb: None,
            memory_floor: vec![MemoryNeed {
                what: "framework workspace and activations".into(),
                gb: 2.0,
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
                    "prefill {prefill:.3e} FLOP and decode {decode_flop:.3e} FLOP (2 x params per token) on the {} engines; decode reads the {weights:.1} GB of weights once per step for the batch and {kv_mb:.3} MB of KV cache per token of context; a copy of the model over several GPUs all-reduces {ar_mb:.3} MB a token (2 a layer of the 16-bit hidden state), overlapped with the compute",
                    p.name()
                ),
                output: Some(crate::scenario::Output {
                    amount: requests * self.output_tokens,
                    unit: "output tokens".into(),
                }),
                steady_hours: self.rate.map(|_| 1.0),
            }),
            terms: vec![
                Term {
                    figure: p.engines(),
                    work: prefill,
                    unit: "FLOP".into(),
                    what: Some("prefill: the prompts' matmuls".into()),
                },
                Term {
                    figure: p.engines(),
                    work: decode_flop,
                    unit: "FLOP".into(),
                    what: Some("decode: the output tokens' matmuls".into()),
                },
            ],
            sharded_memory: Vec::new(),
            collectives: Some(Collectives {
                bytes_per_step: 2.0 * ar_bytes,
                steps: requests * (self.prompt_tokens + self.output_tokens),
                what: "tensor-parallel all-reduces".into(),
                parallelism: Parallelism::Tensor,
            }),
            decode: Some(Decode {
                tokens: requests * self.output_tokens,
                weight_gb: weights,
                kv_mb_per_token: kv_mb,
                context_tokens: self.prompt_tokens + self.output_tokens,
                max_batch: self.concurrency,
                memory_use: 0.9,
            }),
            egress: Some(crate::scenario::EgressNeed {
                gb: gb(requests * self.output_tokens * BYTES_PER_TOKEN),
                what: format!(
                    "the responses' text, about {BYTES_PER_TOKEN} bytes an output token (a token is about 4 characters of English, OpenAI's rule of thumb), without the protocol's framing"
                ),
            }),
        })
    }
}

/// What a fine-tune takes out of the cloud: the weights it made, in BF16.
fn finetune_egress(method: Method, params: f64) -> crate::scenario::EgressNeed {
    let (bytes, what) = match method {
        Method::Full => (
            2.0 * params,
            "the fine-tuned weights in BF16, 2 bytes a parameter",
        ),
        Method::Lora | Method::Qlora => (
            0.005 * params * 2.0,
            "the adapters in BF16 (0.5% of the parameters, 2 bytes each)",
        ),
    };
    crate::scenario::EgressNeed {
        gb: gb(bytes),
        what: what.into(),
    }
}

/// Bytes of text a served token becomes in a response.
const BYTES_PER_TOKEN: f64 = 4.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Comm;

    #[test]
    fn full_fine_tuning_costs_8_x_params_x_tokens_and_16_bytes_a_parameter() {
        let s = Finetune {
            model: preset("8b").unwrap(),
            tokens: 1e9,
            method: Method::Full,
            seq_len: 4096.0,
            compute: Precision::Fp16,
        }
        .scenario()
        .unwrap();
        assert!((s.terms[0].work - 8.0 * 8.03e9 * 1e9).abs() < 1e9);
        let sharded: f64 = s.sharded_memory.iter().map(|m| m.gb).sum();
        assert!((sharded - 16.0 * 8.03).abs() < 0.01);
        // 128 GB of state over 8 GPUs: each needs 16 GB plus its activations.
        let per_gpu = s.memory_floor_on(8).unwrap();
        assert!(per_gpu > 16.0 && per_gpu < 22.0, "{per_gpu}");
        assert!(s.memory_floor_on(1).unwrap() > 128.0);
    }

    #[test]
    fn lora_needs_fewer_flop_and_far_less_memory_than_full() {
        let f = |method| {
            Finetune {
                model: preset("8b").unwrap(),
                tokens: 1e9,
                method,
                seq_len: 4096.0,
                compute: Precision::Fp16,
            }
            .scenario()
            .unwrap()
        };
        let (full, lora, qlora) = (f(Method::Full), f(Method::Lora), f(Method::Qlora));
        assert!((lora.terms[0].work / full.terms[0].work - 0.75).abs() < 1e-9);
        assert!(lora.memory_floor_on(1).unwrap() < 24.0);
        assert!(qlora.memory_floor_on(1).unwrap() < lora.memory_floor_on(1).unwrap());
    }

    #[test]
    fn a_70b_model_in_fp8_decodes_with_the_batch_its_memory_holds() {
        let s = serve_70b_fp8();
        let d = s.decode.as_ref().unwrap();
        assert!((d.weight_gb - 70.6).abs() < 0.1);
        // KV: 2 x 80 layers x 8 heads x 128 x 1 byte = 0.164 MB per token.
        assert!((d.kv_mb_per_token - 0.16384).abs() < 1e-9);
        // 8 x 80 GB: 576 GB usable, 505 left for KV, 1200-token sequences: capped at 256.
        let p = d.plan(8.0, 80.0, 16.0).unwrap();
        assert_eq!(p.batch, 256.0);
        // One 24 GB card cannot hold the weights at all.
        assert!(d.plan(1.0, 24.0, 2.0).is_none());
        assert!(s.memory_floor_on(1).unwrap() > 70.0);
    }

    fn serve_70b_fp8() -> Scenario {
        Serve {
            model: preset("70b").unwrap(),
            precision: Precision::Fp8,
            requests: 1e5,
            prompt_tokens: 1000.0,
            output_tokens: 200.0,
            concurrency: MAX_BATCH,
            rate: None,
        }
        .scenario()
        .unwrap()
    }

    /// A GPU's rates for the timing tests: 1 PFLOPS FP8, 3 TB/s.
    fn rates(f: Rate) -> f64 {
        match f {
            Rate::StreamTriad => 3000.0,
            _ => 1e6,
        }
    }

    #[test]
    fn a_served_model_runs_in_the_copies_that_finish_first_and_all_reduces_within_them() {
        let s = serve_70b_fp8();
        // 8 x 80 GB on NVLink: one GPU cannot hold 70.6 GB of weights and a KV cache, two
        // can; copies over 2 GPUs decode as large a batch as copies over 8, and all-reduce
        // over fewer GPUs.
        let t = s.timing(8, 80.0, Some(("NVLink", 370.0)), rates).unwrap();
        let l = t.layout.unwrap();
        assert_eq!((l.gpus_per_copy, l.copies, l.batch), (2, 4, 256.0));
        let Comm::Counted {
            seconds, exposed, ..
        } = t.comm
        else {
            panic!("{:?}", t.comm)
        };
        // 2 x 80 layers x 8192 x 2 bytes a token, twice (all-reduce), x 1/2 over 2 GPUs,
        // 1.2e8 tokens in all, the 4 copies side by side.
        let want = 1.2e8 * 2.0 * 80.0 * 8192.0 * 2.0 * 2.0 * 0.5 / 370e9 / 4.0;
        assert!((seconds / want - 1.0).abs() < 1e-9, "{seconds} vs {want}");
        assert_eq!(exposed, 0.0, "NVLink's all-reduces hide behind the compute");
        // A slow link exposes them, and no layout is slower than the one chosen.
        let slow = s.timing(8, 80.0, Some(("slow", 0.5)), rates).unwrap();
        assert!(slow.comm.exposed() > 0.0);
        assert!(slow.seconds > t.seconds);
        // Without a known link the collectives are said to be uncounted.
        let unknown = s.timing(8, 80.0, None, rates).unwrap();
        assert_eq!(unknown.comm, Comm::NoLink);
        // One 192 GB GPU a copy: no collectives at all.
        let big = s.timing(8, 192.0, Some(("xGMI", 300.0)), rates).unwrap();
        assert_eq!(big.layout.unwrap().gpus_per_copy, 1);
        assert_eq!(big.comm, Comm::None);
        // On 24 GB cards the model fits no layout of one GPU.
        assert!(s.timing(1, 24.0, None, rates).is_err());
    }

    #[test]
    fn concurrency_bounds_the_batch_of_each_copy() {
        let mut serve = Serve {
            model: preset("8b").unwrap(),
            precision: Precision::Fp16,
            requests: 1e4,
            prompt_tokens: 200.0,
            output_tokens: 50.0,
            concurrency: 20.0,
            rate: None,
        };
        let small = serve.scenario().unwrap();
        let t = small.timing(1, 80.0, None, rates).unwrap();
        assert_eq!(t.layout.unwrap().batch, 20.0);
        serve.concurrency = MAX_BATCH;
        let big = serve
            .scenario()
            .unwrap()
            .timing(1, 80.0, None, rates)
            .unwrap();
        assert!(
            big.seconds < t.seconds,
            "a larger batch reads the weights fewer times"
        );
        serve.concurrency = 0.0;
        assert!(serve.scenario().is_err());
    }

    #[test]
    fn a_size_takes_its_shape_from_the_family_and_its_name_from_its_parameters() {
        // Between and at the family's members: the members' own shapes, whichever preset
        // the count was given on.
        for from in ["8b", "70b", "405b"] {
            let m = preset(from).unwrap().with_params(405.85e9);
            assert_eq!((m.layers, m.hidden), (126.0, 16384.0), "{from}");
            let m = preset(from).unwrap().with_params(70.6e9);
            assert_eq!((m.layers, m.hidden), (80.0, 8192.0), "{from}");
        }
        let m = preset("8b").unwrap().with_params(30e9);
        assert!(m.layers > 32.0 && m.layers < 80.0 && m.hidden > 4096.0 && m.hidden < 8192.0);
        assert_eq!(m.hidden % 128.0, 0.0);
        // Scaling 8B's shape to 405B gave 26.4 MB of all-reduce a token (issue 34): the
        // family's trend gives Llama 3.1 405B's 8.3 MB and 0.26 MB of FP8 KV cache.
        let s = Serve {
            model: preset("8b").unwrap().with_params(405e9),
            precision: Precision::Fp8,
            requests: 1e3,
            prompt_tokens: 1000.0,
            output_tokens: 200.0,
            concurrency: MAX_BATCH,
            rate: None,
        }
        .scenario()
        .unwrap();
        let c = s.collectives.as_ref().unwrap();
        assert!((c.bytes_per_step / 2.0 / 1e6 - 8.26).abs() < 0.1, "{c:?}");
        let kv = s.decode.as_ref().unwrap().kv_mb_per_token;
        assert!((kv - 0.258).abs() < 0.01, "{kv}");
        assert_eq!(s.id, "llm-serve-405b-fp8");
        // Named by the parameters, not the preset the shape came from.
        for (p, want) in [(70e9, "70b"), (13e9, "13b"), (1.3e9, "1.3b"), (1e13, "10t")] {
            let m = preset("8b").unwrap().with_params(p);
            assert_eq!(m.label(), want);
        }
        assert_eq!(preset("8b").unwrap().prose(), "Llama 3 8B");
        assert_eq!(
            preset("8b").unwrap().with_params(8.5e9).prose(),
            "an 8.5B model of Llama 3's shape"
        );
        assert_eq!(
            preset("llama2-7b").unwrap().with_params(13e9).prose(),
            "a 13B model of Llama 2's shape"
        );
        assert!(preset("13b").is_err());
    }

    #[test]
    fn a_fine_tune_computes_in_fp16_or_fp8_and_refuses_int4() {
        let job = |compute| Finetune {
            model: preset("70b").unwrap(),
            tokens: 1e8,
            method: Method::Lora,
            seq_len: 8192.0,
            compute,
        };
        let fp16 = job(Precision::Fp16).scenario().unwrap();
        let fp8 = job(Precision::Fp8).scenario().unwrap();
        assert_eq!(fp16.terms[0].figure, Rate::LlmTrainF16Matrix);
        assert_eq!(fp8.terms[0].figure, Rate::LlmTrainFp8Matrix);
        // The same work, a distinct id, the precision said.
        assert_eq!(fp16.terms[0].work, fp8.terms[0].work);
        assert!(fp8.id.ends_with("-fp8") && !fp16.id.ends_with("-fp8"));
        assert!(fp8.description.contains("FP8 matrix engines"));
        let e = job(Precision::Int4).scenario().unwrap_err().to_string();
        assert!(e.contains("--method qlora"), "{e}");
        // A calibration point's job reads the field, and without it means fp16.
        let spec: JobSpec = serde_json::from_str(
            r#"{"kind": "llm-finetune", "model": "8b", "method": "lora", "tokens": 1e6, "seq_len": 1024}"#,
        )
        .unwrap();
        assert_eq!(
            spec.scenario().unwrap().terms[0].figure,
            Rate::LlmTrainF16Matrix
        );
    }
}
