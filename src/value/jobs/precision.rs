//! The weights' precision (serving and fine-tuning matmuls) and how a fine-tune trains.

use crate::value::scenario::Rate;

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

impl std::str::FromStr for Precision {
    type Err = String;
    /// `fp16`, `fp8`, `int4` or `fp4`, any case (as the command line takes them): the value
    /// layer reads a results file's precision with this, never with clap.
    fn from_str(s: &str) -> Result<Precision, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "fp16" => Ok(Precision::Fp16),
            "fp8" => Ok(Precision::Fp8),
            "int4" => Ok(Precision::Int4),
            "fp4" => Ok(Precision::Fp4),
            _ => Err(format!("precision `{s}`: expected fp16, fp8, int4 or fp4")),
        }
    }
}

impl Precision {
    pub fn weight_bytes(self) -> f64 {
        match self {
            Precision::Fp16 => 2.0,
            Precision::Fp8 => 1.0,
            Precision::Int4 => 0.5,
            // NVFP4: 4-bit values and one FP8 scale per 16 (MXFP4: one 8-bit scale per 32,
            // 0.53): the larger, NVFP4's.
            Precision::Fp4 => 0.5625,
        }
    }
    pub fn kv_bytes(self) -> f64 {
        match self {
            Precision::Fp8 | Precision::Fp4 => 1.0,
            Precision::Fp16 | Precision::Int4 => 2.0,
        }
    }
    pub fn engines(self) -> Rate {
        match self {
            Precision::Fp8 => Rate::MatmulFp8Matrix,
            Precision::Fp4 => Rate::MatmulFp4Matrix,
            Precision::Fp16 | Precision::Int4 => Rate::MatmulF16Matrix,
        }
    }
    /// The LLM-training rates: the same peaks, with efficiencies fitted on LLM training.
    pub(super) fn training_engines(self) -> Rate {
        match self {
            Precision::Fp8 => Rate::LlmTrainFp8Matrix,
            _ => Rate::LlmTrainF16Matrix,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp16 => "FP16",
            Precision::Fp8 => "FP8",
            Precision::Int4 => "INT4",
            Precision::Fp4 => "FP4",
        }
    }
}

impl Method {
    /// FLOP per parameter and token, what they are, the frozen or trained state's bytes per
    /// parameter, and the method's name.
    pub(super) fn cost(self) -> (f64, &'static str, f64, &'static str) {
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
