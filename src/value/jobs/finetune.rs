//! Fine-tuning an LLM: FLOP on the parameters each token goes through, memory for all of
//! them, sharded; the collectives of data parallelism and, for a Mixture-of-Experts model,
//! expert parallelism's all-to-all (docs/ranking-model.md has the physics).

use super::{GLOBAL_BATCH, Method, Model, Precision, check, gb};
use crate::value::scenario::{Collectives, Job, MemoryNeed, Parallelism, Scenario, Term};
use anyhow::{Result, bail};

/// A fine-tune: the model, the tokens trained on, the method and the sequence length.
#[derive(Clone, Debug, PartialEq)]
pub struct Finetune {
    pub model: Model,
    pub tokens: f64,
    pub method: Method,
    pub seq_len: f64,
    /// The precision of the training matmuls: FP16/BF16, or FP8 on the engines that have it.
    pub compute: Precision,
}

impl Finetune {
    pub fn scenario(&self) -> Result<Scenario> {
        self.check()?;
        let m = &self.model;
        let (per_token, what, base_bytes, label) = self.method.cost();
        // A Mixture-of-Experts model computes on the parameters each token goes through and
        // holds all of them; a dense model's count is its FLOP count, as before.
        let flop_params = if m.is_moe() { m.active() } else { m.params };
        let flop = per_token * flop_params * self.tokens;
        let sharded = self.sharded(base_bytes);
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
            description: self.description(label),
            min_gpu_memory_gb: None,
            memory_floor: self.memory_floor(activations),
            min_vcpus_per_gpu: None,
            job: Some(self.job(label, flop, what)),
            terms: vec![Term {
                figure: self.compute.training_engines(),
                work: flop,
                unit: "FLOP".into(),
                what: Some(format!("training matmuls in {}", self.in_precision())),
            }],
            sharded_memory: sharded,
            decode: None,
            serving: None,
            collectives: Some(self.collectives()),
            egress: Some(finetune_egress(self.method, m.params)),
        })
    }

    /// The settings' ranges, and a precision fine-tuning computes in.
    fn check(&self) -> Result<()> {
        check(self.model.params, 1e6, 1e13, "--model-params")?;
        check(self.tokens, 1.0, 1e16, "--tokens")?;
        check(self.seq_len, 16.0, 1e7, "--seq-len")?;
        if matches!(self.compute, Precision::Int4 | Precision::Fp4) {
            bail!(
                "--precision {}: fine-tuning computes in fp16 (BF16/FP16 mixed precision) or fp8; a 4-bit base is --method qlora",
                self.compute.name().to_lowercase()
            );
        }
        Ok(())
    }

    /// The matrix engines' precision, as the scenario's words name it.
    fn in_precision(&self) -> &'static str {
        match self.compute {
            Precision::Fp8 => "FP8",
            _ => "FP16/BF16",
        }
    }

    fn description(&self, label: &str) -> String {
        let m = &self.model;
        format!(
            "{label} fine-tuning of {} ({:.3e} parameters{}, {} layers, hidden {}) on the {} matrix engines",
            m.prose(),
            m.params,
            if m.is_moe() {
                format!(", {:.3e} active", m.active())
            } else {
                String::new()
            },
            m.layers,
            m.hidden,
            self.in_precision()
        )
    }

    /// The job: what is trained on, and the model's assumptions (`what`: the FLOP per
    /// parameter and token of the method).
    fn job(&self, label: &str, flop: f64, what: &str) -> Job {
        let m = &self.model;
        Job {
            name: format!(
                "{label} fine-tune of {} ({:.3e} parameters) on {:.3e} tokens of {} tokens each",
                m.prose(),
                m.params,
                self.tokens,
                self.seq_len
            ),
            assumption: format!(
                "{flop:.3e} FLOP: {what}, per token{}; attention's own FLOP not counted; several GPUs train data-parallel with the state sharded (ZeRO-3 / FSDP), {GLOBAL_BATCH} sequences per step, their collectives overlapping the compute{}",
                moe_words(m.is_moe()).0,
                moe_words(m.is_moe()).1
            ),
            output: Some(crate::value::scenario::Output {
                amount: self.tokens,
                unit: "tokens".into(),
            }),
            steady_hours: None,
        }
    }

    /// What a GPU holds beside the sharded state: one sequence's checkpointed activations
    /// and the framework's workspace.
    fn memory_floor(&self, activations: f64) -> Vec<MemoryNeed> {
        vec![
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
        ]
    }

    /// The collectives of one optimizer step across the data-parallel GPUs.
    fn collectives(&self) -> Collectives {
        Collectives {
            // ZeRO-3 / FSDP: the FP16 weights all-gathered for the forward and again for
            // the backward, the FP16 gradients reduce-scattered (full); LoRA gathers the
            // frozen base twice (its adapters' gradients are negligible).
            bytes_per_step: match self.method {
                Method::Full => 3.0,
                Method::Lora | Method::Qlora => 2.0,
            } * (self.model.params - self.expert_parallel_params())
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
            all_to_all: self.all_to_all_per_step(),
        }
    }
}

/// What a fine-tune takes out of the cloud: the weights it made, in BF16.
fn finetune_egress(method: Method, params: f64) -> crate::value::scenario::EgressNeed {
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
    crate::value::scenario::EgressNeed {
        gb: gb(bytes),
        what: what.into(),
    }
}

impl Finetune {
    /// What the instance's GPUs hold between them: the trained or frozen state, and the
    /// adapters with their optimizer state for LoRA and QLoRA.
    fn sharded(&self, base_bytes: f64) -> Vec<MemoryNeed> {
        let m = &self.model;
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
        sharded
    }

    /// Routed-expert parameters, which expert parallelism keeps on their GPUs instead of
    /// gathering them (LoRA's adapters train on the attention; the experts stay frozen in
    /// place either way).
    fn expert_parallel_params(&self) -> f64 {
        self.model.routed()
    }

    /// Bytes of token activations a step sends to the experts and back over the whole job's
    /// GPUs (16-bit hidden states, each token to its k experts, dispatch and combine, in the
    /// forward, the backward and checkpointing's second forward); None for a dense model.
    fn all_to_all_per_step(&self) -> Option<f64> {
        let moe = self.model.moe?;
        let tokens = GLOBAL_BATCH * self.seq_len;
        Some(tokens * moe.per_token * self.model.hidden * 2.0 * 2.0 * 3.0 * moe.layers)
    }
}

/// What a Mixture-of-Experts fine-tune adds to the assumption line: where its FLOP are
/// counted, and its all-to-all.
fn moe_words(moe: bool) -> (&'static str, &'static str) {
    if moe {
        (
            " (on the active parameters: the experts each token goes to)",
            "; the routed experts stay put (expert parallel over the instance's GPUs) and the tokens go to them and back, an all-to-all forward, backward and in checkpointing's second forward",
        )
    } else {
        ("", "")
    }
}
