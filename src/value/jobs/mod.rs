//! Jobs with parameters: an LLM fine-tune and LLM serving, each turned into a scenario with
//! every assumption stated, so `rank` costs them like any scenario and `--print-scenario`
//! shows the file to edit. Models are the Llama presets or any Hugging Face `config.json`
//! (dense or Mixture-of-Experts); docs/ranking-model.md has the physics of each job.
//!
//! - `model`: a model's shape, the presets; `config`: the shape from a `config.json`;
//! - `precision`: the weights' precision and the fine-tuning methods;
//! - `finetune`, `serve`: each job as a scenario (serving's step model and layouts are
//!   `scenario::serving`, which the timing runs).

mod config;
mod finetune;
mod model;
mod precision;
mod presets;
mod serve;

pub use config::parse as parse_config;
pub use finetune::Finetune;
pub use model::{Attention, Model, Moe, Shipped, Sliding, article, params_label};
pub use precision::{Method, Precision};
pub use presets::{CONFIG_PRESETS, preset, preset_names};
pub use serve::{MAIN_INTERACTIVITY, MAX_BATCH, Serve, main_serving};

use crate::value::scenario::Scenario;
use anyhow::{Result, bail};

/// Sequences per optimizer step of a fine-tune (its global batch), whatever the GPU count.
pub const GLOBAL_BATCH: f64 = 128.0;

/// A model from a `config.json` file (`--model-config`).
pub fn model_config(path: &std::path::Path) -> Result<Model> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("--model-config {}: {e}", path.display()))?;
    parse_config(&text, &path.display().to_string())
}

/// The model a job runs: a `config.json` file, else a preset; `params` rescales a Llama
/// preset's shape to that many parameters (a MoE or a config file comes with its own).
pub fn chosen_model(
    config: Option<&std::path::Path>,
    preset_name: &str,
    params: Option<f64>,
) -> Result<Model> {
    let model = match config {
        Some(path) => model_config(path)?,
        None => preset(preset_name)?,
    };
    let Some(p) = params else {
        return Ok(model);
    };
    if !(p.is_finite() && (1e6..=1e13).contains(&p)) {
        bail!("--model-params {p}: expected a number of parameters from 1e6 to 1e13");
    }
    if model.is_moe() || model.source.is_some() {
        bail!(
            "--model-params scales the Llama presets' shape; {} comes with its own (give another config.json with --model-config)",
            model.prose()
        );
    }
    Ok(model.with_params(p))
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
        /// Requests in flight per copy of the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        concurrency: Option<f64>,
        /// The layout, as `--parallel` gives it ("tp=8,ep=8,dp-attention").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parallel: Option<String>,
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

fn fp16() -> Precision {
    Precision::Fp16
}

fn is_fp16(p: &Precision) -> bool {
    *p == Precision::Fp16
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
                parallel,
            } => Serve {
                model: preset(model)?,
                precision: Some(*precision),
                requests: *requests,
                prompt_tokens: *prompt_tokens,
                output_tokens: *output_tokens,
                concurrency: *concurrency,
                interactivity: None,
                ttft_s: None,
                parallel: parallel
                    .as_deref()
                    .map(crate::value::scenario::serving::Parallel::parse)
                    .transpose()
                    .map_err(anyhow::Error::msg)?,
                rate: None,
                max_batch: None,
                mtp: None,
                engine: None,
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

fn gb(bytes: f64) -> f64 {
    bytes / 1e9
}

fn check(x: f64, lo: f64, hi: f64, opt: &str) -> Result<()> {
    if !(x.is_finite() && (lo..=hi).contains(&x)) {
        bail!("{opt} {x}: expected a number from {lo:e} to {hi:e}");
    }
    Ok(())
}

/// Bytes of text a served token becomes in a response.
const BYTES_PER_TOKEN: f64 = 4.0;

#[cfg(test)]
mod tests;
