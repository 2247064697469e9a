//! A model's shape from its Hugging Face `config.json`, each family's own field names:
//! Llama / Qwen / Mistral (dense, GQA), Mixtral and gpt-oss (`num_local_experts`), Qwen-MoE
//! (`num_experts`, `moe_intermediate_size`, `mlp_only_layers`, `decoder_sparse_step`),
//! DeepSeek-V2/V3/R1 and Kimi K2 (`n_routed_experts`, `n_shared_experts`,
//! `first_k_dense_replace`, MLA's `kv_lora_rank` and `qk_rope_head_dim`), Llama 4 (its
//! `text_config`, `interleave_moe_layer_step`, dense layers of `intermediate_size_mlp`, a shared
//! expert as wide as a routed one).
//! Parameters are counted from the shapes (gated MLPs: 3 x hidden x width; biases and norms
//! left out, under 0.1%); the multi-token-prediction layers (`num_nextn_predict_layers`) are
//! not served and not counted, as the published totals do not count them. A field it cannot
//! read is an error naming the file, the field and what was expected.

use super::Precision;
use super::model::{Attention, Model, Moe, Shipped, Sliding};
use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

/// The fields of one object, with the file name for errors.
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    file: &'a str,
    prefix: &'static str,
}

impl Fields<'_> {
    fn err(&self, field: &str, expected: &str) -> anyhow::Error {
        let got = match self.obj.get(field) {
            None => "missing".to_string(),
            Some(v) => format!("got {v}"),
        };
        anyhow::anyhow!(
            "{}: field `{}{field}`: expected {expected} ({got})",
            self.file,
            self.prefix
        )
    }

    /// A positive number, required.
    fn num(&self, field: &str) -> Result<f64> {
        self.opt(field)?
            .ok_or_else(|| self.err(field, "a positive number"))
    }

    /// A positive number if present (null counts as absent).
    fn opt(&self, field: &str) -> Result<Option<f64>> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
                _ => Err(self.err(field, "a positive number")),
            },
        }
    }

    /// A positive whole number, required (layers, widths, heads).
    fn whole(&self, field: &str) -> Result<f64> {
        let x = self.num(field)?;
        if x.fract() != 0.0 || x > 1e9 {
            return Err(self.err(field, "a positive whole number"));
        }
        Ok(x)
    }

    /// A whole number >= 0 if present.
    fn count(&self, field: &str) -> Result<Option<f64>> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(x) => Ok(Some(x as f64)),
                None => Err(self.err(field, "a whole number")),
            },
        }
    }
}

/// The model described by `text`, the contents of the `config.json` named `file`.
pub fn parse(text: &str, file: &str) -> Result<Model> {
    let root: Value =
        serde_json::from_str(text).with_context(|| format!("{file}: not a JSON config"))?;
    let Some(top) = root.as_object() else {
        bail!("{file}: expected a JSON object (a Hugging Face config.json)");
    };
    let model_type = top
        .get("model_type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    // Multimodal configs (Llama 4) keep the language model under `text_config`.
    let (obj, prefix) = match top.get("text_config").and_then(Value::as_object) {
        Some(t) => (t, "text_config."),
        None => (top, ""),
    };
    let f = Fields { obj, file, prefix };
    let layers = f.whole("num_hidden_layers")?;
    let hidden = f.whole("hidden_size")?;
    let (heads, kv_heads) = heads(&f)?;
    let vocab = f.whole("vocab_size")?;
    hybrid(&f, layers)?;
    let tied = obj
        .get("tie_word_embeddings")
        .or(top.get("tie_word_embeddings"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mla = obj.contains_key("kv_lora_rank");
    let head_dim = match f.opt("head_dim")? {
        Some(d) => d,
        None if mla => f.num("v_head_dim")?,
        None => hidden / heads,
    };
    let (attention, attn_params) = if mla {
        mla_attention(&f, hidden, heads)?
    } else {
        let q = hidden * heads * head_dim;
        let kv = 2.0 * hidden * kv_heads * head_dim;
        (Attention::Gqa, q + kv + heads * head_dim * hidden)
    };
    let mlp = mlp(&f, &model_type, layers, hidden)?;
    let embeddings = vocab * hidden * if tied { 1.0 } else { 2.0 };
    let params = layers * attn_params + mlp.dense + mlp.routed + embeddings;
    let sliding = sliding(&f, layers)?;
    let (shipped, unread_quantization) = match shipped(top, file) {
        Ok(s) => (s, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let context = f.opt("max_position_embeddings")?;
    Ok(Model {
        name: top
            .get("_name_or_path")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map_or_else(|| file_stem(file), |s| s.rsplit('/').next().unwrap().into()),
        params,
        layers,
        hidden,
        heads,
        kv_heads,
        attention_params: attn_params,
        head_dim,
        vocab,
        attention,
        sliding,
        moe: mlp.moe,
        shipped,
        source: Some(file.to_string()),
        context,
        mtp_layers: f.count("num_nextn_predict_layers")?.unwrap_or(0.0),
        unread_quantization,
    })
}

/// Query and KV heads: whole numbers, the KV heads dividing the query heads (each serves a
/// whole group of them).
fn heads(f: &Fields) -> Result<(f64, f64)> {
    let heads = f.whole("num_attention_heads")?;
    let kv_heads = match f.opt("num_key_value_heads")? {
        Some(_) => f.whole("num_key_value_heads")?,
        None => heads,
    };
    if kv_heads > heads || heads % kv_heads != 0.0 {
        return Err(f.err(
            "num_key_value_heads",
            &format!(
                "a divisor of num_attention_heads ({heads}): each KV head serves a whole group of query heads"
            ),
        ));
    }
    Ok((heads, kv_heads))
}

fn file_stem(file: &str) -> String {
    std::path::Path::new(file)
        .file_stem()
        .map_or_else(|| file.to_string(), |s| s.to_string_lossy().into_owned())
}

/// MLA's attention and its parameters a layer: the query (through `q_lora_rank` where it is
/// set), the compressed KV and rotary key, their up-projection, the output.
fn mla_attention(f: &Fields, hidden: f64, heads: f64) -> Result<(Attention, f64)> {
    let kv_lora_rank = f.num("kv_lora_rank")?;
    let rope_dim = f.num("qk_rope_head_dim")?;
    let nope = f.num("qk_nope_head_dim")?;
    let v = f.num("v_head_dim")?;
    let qk = nope + rope_dim;
    let q = match f.opt("q_lora_rank")? {
        Some(r) => hidden * r + r * heads * qk,
        None => hidden * heads * qk,
    };
    let kv = hidden * (kv_lora_rank + rope_dim) + kv_lora_rank * heads * (nope + v);
    let o = heads * v * hidden;
    Ok((
        Attention::Mla {
            kv_lora_rank,
            rope_dim,
        },
        q + kv + o,
    ))
}

/// The MLPs: dense parameters (dense layers, shared experts, routers) and routed experts.
struct Mlp {
    dense: f64,
    routed: f64,
    moe: Option<Moe>,
}

fn mlp(f: &Fields, model_type: &str, layers: f64, hidden: f64) -> Result<Mlp> {
    let gated = |width: f64| 3.0 * hidden * width;
    let named = ["n_routed_experts", "num_local_experts", "num_experts"]
        .iter()
        .find_map(|k| f.count(k).transpose().map(|n| n.map(|n| (*k, n))))
        .transpose()?;
    let routes =
        f.obj.contains_key("num_experts_per_tok") || f.obj.contains_key("experts_per_token");
    // A model that routes tokens to experts has two or more of them: fewer would make a
    // Mixture-of-Experts model a small dense one.
    if let Some((k, n)) = named
        && n < 2.0
        && routes
    {
        return Err(f.err(
            k,
            "2 or more routed experts (the config routes tokens to experts)",
        ));
    }
    let experts = named.map(|(_, n)| n).filter(|e| *e > 1.0);
    let Some(experts) = experts else {
        let width = f.num("intermediate_size")?;
        return Ok(Mlp {
            dense: layers * gated(width),
            routed: 0.0,
            moe: None,
        });
    };
    let per_token = match f.opt("num_experts_per_tok")? {
        Some(k) => k,
        None => f
            .opt("experts_per_token")?
            .ok_or_else(|| f.err("num_experts_per_tok", "a positive number"))?,
    };
    if per_token > experts {
        return Err(f.err(
            "num_experts_per_tok",
            &format!("at most the {experts} routed experts"),
        ));
    }
    // The routed experts' width: `moe_intermediate_size` where the family has it (DeepSeek,
    // Qwen-MoE), else `intermediate_size` (Mixtral, gpt-oss, Llama 4).
    let width = match f.opt("moe_intermediate_size")? {
        Some(w) => w,
        None => f.num("intermediate_size")?,
    };
    let moe_layers = moe_layers(f, model_type, layers)?;
    // Dense layers' width: DeepSeek's `intermediate_size`, Llama 4's `intermediate_size_mlp`.
    let dense_width = f
        .opt("intermediate_size_mlp")?
        .or(if f.obj.contains_key("moe_intermediate_size") {
            f.opt("intermediate_size")?
        } else {
            None
        })
        .unwrap_or(width);
    let shared = if let Some(n) = f.count("n_shared_experts")? {
        n * gated(width)
    } else if let Some(w) = f.opt("shared_expert_intermediate_size")? {
        gated(w)
    } else if model_type == "llama4_text" || model_type == "llama4" {
        // Llama 4's shared expert is as wide as a routed one (`intermediate_size`);
        // `intermediate_size_mlp` is the dense layers' width.
        gated(width)
    } else {
        0.0
    };
    let router = hidden * experts;
    let expert_params = gated(width);
    Ok(Mlp {
        dense: (layers - moe_layers) * gated(dense_width) + moe_layers * (shared + router),
        routed: moe_layers * experts * expert_params,
        moe: Some(Moe {
            experts,
            per_token,
            layers: moe_layers,
            expert_params,
        }),
    })
}

/// How many layers route to experts: DeepSeek's after `first_k_dense_replace` (every
/// `moe_layer_freq`), Qwen-MoE's every `decoder_sparse_step` but `mlp_only_layers`, Llama
/// 4's every `interleave_moe_layer_step` (or its `moe_layers` list), else all.
fn moe_layers(f: &Fields, model_type: &str, layers: f64) -> Result<f64> {
    if let Some(Value::Array(list)) = f.obj.get("moe_layers") {
        return Ok(list.len() as f64);
    }
    if let Some(k) = f.count("first_k_dense_replace")? {
        let every = f.count("moe_layer_freq")?.unwrap_or(1.0).max(1.0);
        return Ok(((layers - k) / every).ceil().max(0.0));
    }
    if let Some(step) = f.count("decoder_sparse_step")? {
        let step = step.max(1.0);
        let skipped = match f.obj.get("mlp_only_layers") {
            Some(Value::Array(l)) => l.len() as f64,
            None | Some(Value::Null) => 0.0,
            Some(_) => return Err(f.err("mlp_only_layers", "a list of layer numbers")),
        };
        return Ok((layers / step).floor() - skipped);
    }
    if let Some(step) = f.count("interleave_moe_layer_step")? {
        return Ok((layers / step.max(1.0)).floor());
    }
    let _ = model_type;
    Ok(layers)
}

/// Layers that are not attention (Mamba, linear attention: Jamba, Qwen3-Next, Falcon-H1)
/// are refused by name: the step model costs attention's KV cache and FLOP, and would cost
/// them wrongly. `layer_types`, where given, must list every layer.
fn hybrid(f: &Fields, layers: f64) -> Result<()> {
    if let Some(Value::Array(types)) = f.obj.get("layer_types") {
        if types.len() as f64 != layers {
            return Err(f.err(
                "layer_types",
                &format!(
                    "one entry per layer ({layers}, num_hidden_layers), got {}",
                    types.len()
                ),
            ));
        }
        if let Some(other) = types.iter().find(|t| {
            !matches!(
                t.as_str(),
                Some("full_attention" | "sliding_attention" | "attention")
            )
        }) {
            return Err(f.err(
                "layer_types",
                &format!(
                    "full_attention or sliding_attention layers only: {other} layers (a hybrid model) are not modelled"
                ),
            ));
        }
    }
    for key in [
        "layers_block_type",
        "attn_layer_period",
        "full_attention_interval",
        "linear_num_value_heads",
        "mamba_d_state",
        "ssm_state_size",
        "hybrid_override_pattern",
    ] {
        if f.obj.contains_key(key) {
            bail!(
                "{}: field `{}{key}`: marks a hybrid model (Mamba or linear-attention layers), which gpuvalue does not model (it costs attention layers only)",
                f.file,
                f.prefix
            );
        }
    }
    Ok(())
}

/// Sliding-window layers: gpt-oss lists each layer's type; Mistral-style configs give one
/// window for every layer (`sliding_window`, ignored where `use_sliding_window` is false).
fn sliding(f: &Fields, layers: f64) -> Result<Option<Sliding>> {
    let Some(window) = f.opt("sliding_window")? else {
        return Ok(None);
    };
    if f.obj.get("use_sliding_window").and_then(Value::as_bool) == Some(false) {
        return Ok(None);
    }
    let count = match f.obj.get("layer_types") {
        Some(Value::Array(types)) => types
            .iter()
            .filter(|t| t.as_str() == Some("sliding_attention"))
            .count() as f64,
        Some(Value::Null) | None => layers,
        Some(_) => return Err(f.err("layer_types", "a list of each layer's type")),
    };
    Ok((count > 0.0).then_some(Sliding {
        window,
        layers: count,
    }))
}

/// DeepSeek's FP8: 128x128 blocks with an FP32 scale each.
const FP8: Shipped = Shipped {
    precision: Precision::Fp8,
    compute: Precision::Fp8,
    expert_bytes: 1.0 + 4.0 / (128.0 * 128.0),
    other_bytes: 1.0 + 4.0 / (128.0 * 128.0),
    what: "FP8 weights in 128x128 blocks with an FP32 scale each",
};

/// 8-bit integer weights (GPTQ, bitsandbytes, compressed-tensors W8A16): a 16-bit scale per
/// group of 128, multiplied on the 16-bit engines.
const INT8: Shipped = Shipped {
    precision: Precision::Fp8,
    compute: Precision::Fp16,
    expert_bytes: 1.0 + 2.0 / 128.0,
    other_bytes: 1.0 + 2.0 / 128.0,
    what: "8-bit integer weights with their scales, dequantised to 16-bit for the matmuls",
};

const INT4: Shipped = Shipped {
    precision: Precision::Int4,
    compute: Precision::Int4,
    expert_bytes: 0.55,
    other_bytes: 0.55,
    what: "4-bit weights (GPTQ/AWQ/bitsandbytes) with their scales",
};

const NVFP4: Shipped = Shipped {
    precision: Precision::Fp4,
    compute: Precision::Fp4,
    expert_bytes: 0.5625,
    other_bytes: 0.5625,
    what: "NVFP4 weights (4 bits and an FP8 scale per 16)",
};

/// gpt-oss's MXFP4 is weight-only: TensorRT-LLM and vLLM multiply with FP8 or 16-bit
/// activations (W4A8 on Blackwell, W4A16 on Hopper), not on the FP4 engines.
const MXFP4: Shipped = Shipped {
    precision: Precision::Fp4,
    compute: Precision::Fp8,
    expert_bytes: 4.25 / 8.0,
    other_bytes: 2.0,
    what: "MXFP4 routed experts (4.25 bits a parameter with their scales), the rest BF16",
};

/// The shipped format from `quantization_config`: FP8 (DeepSeek's 128x128 blocks), MXFP4
/// (gpt-oss: routed experts at 4.25 bits, the rest BF16 as `modules_to_not_convert` says),
/// NVFP4 (ModelOpt), GPTQ/AWQ 4-bit; none: 16-bit.
fn shipped(top: &Map<String, Value>, file: &str) -> Result<Option<Shipped>> {
    let Some(q) = top.get("quantization_config") else {
        return Ok(None);
    };
    let method = q
        .get("quant_method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    let algo = q
        .get("quant_algo")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    let field = |name: &str, expected: &str| {
        anyhow::anyhow!(
            "{file}: field `quantization_config.{name}`: expected {expected} (got {}); --precision states the weights' precision instead",
            q.get(name).unwrap_or(&Value::Null)
        )
    };
    // GPTQ, AWQ: `bits`, 4 unless said.
    let bits = |default: u64| -> Result<u64> {
        match q.get("bits") {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v.as_u64().ok_or_else(|| field("bits", "4 or 8")),
        }
    };
    Ok(Some(match (method.as_str(), algo.as_str()) {
        ("fp8", _) | (_, "fp8") => FP8,
        ("mxfp4", _) => MXFP4,
        (_, "nvfp4") | ("nvfp4", _) => NVFP4,
        ("gptq" | "awq", _) => match bits(4)? {
            4 => INT4,
            8 => INT8,
            _ => return Err(field("bits", "4 or 8")),
        },
        ("bitsandbytes", _) => {
            let on = |k: &str| q.get(k).and_then(Value::as_bool) == Some(true);
            if on("load_in_4bit") {
                INT4
            } else if on("load_in_8bit") {
                INT8
            } else {
                return Err(field("load_in_4bit", "load_in_4bit or load_in_8bit true"));
            }
        }
        ("compressed-tensors", _) => compressed_tensors(q)
            .ok_or_else(|| {
                field(
                    "config_groups",
                    "a group whose weights are 8-bit float or integer, 4-bit integer or 4-bit float (NVFP4)",
                )
            })?,
        _ => return Err(field("quant_method", "fp8, mxfp4, nvfp4 (modelopt quant_algo), gptq, awq, bitsandbytes or compressed-tensors")),
    }))
}

/// compressed-tensors (llm-compressor's checkpoints, the common FP8 and INT4 Llama ones):
/// the first group's weights, `num_bits` and `type`.
fn compressed_tensors(q: &Value) -> Option<Shipped> {
    let groups = q.get("config_groups")?.as_object()?;
    let w = groups.values().find_map(|g| g.get("weights"))?;
    let bits = w.get("num_bits")?.as_u64()?;
    let kind = w.get("type")?.as_str()?;
    match (bits, kind) {
        (8, "float") => Some(FP8),
        (8, "int") => Some(INT8),
        (4, "int") => Some(INT4),
        (4, "float") => Some(NVFP4),
        _ => None,
    }
}
