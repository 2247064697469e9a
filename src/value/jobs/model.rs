//! A model's shape: what sets its FLOP, its weights, its KV cache and, for a
//! Mixture-of-Experts model, which weights a decode step reads. The Llama presets carry their
//! published counts; every other model is read from its Hugging Face `config.json`
//! (`super::config`), the embedded copies under `src/data/models/`.

use super::Precision;

/// The routed experts of a Mixture-of-Experts model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moe {
    /// Routed experts per MoE layer.
    pub experts: f64,
    /// Routed experts each token goes to.
    pub per_token: f64,
    /// Layers whose MLP is the routed experts (the rest are dense).
    pub layers: f64,
    /// Parameters of one routed expert in one layer (a gated MLP: 3 x hidden x width).
    pub expert_params: f64,
}

/// How the model attends, as its KV cache and attention FLOP depend on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Attention {
    /// Grouped-query attention: `kv_heads` keys and values of `head_dim` a layer.
    Gqa,
    /// DeepSeek's multi-head latent attention: one compressed vector of `kv_lora_rank` plus a
    /// rotary key of `rope_dim` per token and layer, which every tensor-parallel rank holds.
    Mla { kv_lora_rank: f64, rope_dim: f64 },
}

/// Layers that attend only to the last `window` tokens (gpt-oss: every other layer, 128).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sliding {
    pub window: f64,
    pub layers: f64,
}

/// The weights' format as the model ships it (`quantization_config`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shipped {
    /// The precision it ships in (the job's name, its KV cache).
    pub precision: Precision,
    /// The engines its matmuls run on: a weight-only format (MXFP4 experts with 8- or
    /// 16-bit activations, as servers run gpt-oss) computes on wider engines than it is
    /// stored in.
    pub compute: Precision,
    /// Bytes per routed-expert parameter, with the scales (MXFP4: 4.25 bits).
    pub expert_bytes: f64,
    /// Bytes per other parameter (attention, dense layers, embeddings).
    pub other_bytes: f64,
    /// In words, for the assumption line.
    pub what: &'static str,
}

/// A model's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub name: String,
    /// All parameters, both embeddings counted.
    pub params: f64,
    pub layers: f64,
    pub hidden: f64,
    /// Query heads (attention FLOP).
    pub heads: f64,
    pub kv_heads: f64,
    /// Attention's parameters in one layer.
    pub attention_params: f64,
    pub head_dim: f64,
    /// Embedding rows (vocabulary).
    pub vocab: f64,
    pub attention: Attention,
    pub sliding: Option<Sliding>,
    pub moe: Option<Moe>,
    /// The format the weights ship in; None: 16-bit.
    pub shipped: Option<Shipped>,
    /// Where the shape came from (a preset's config copy, or the user's file).
    pub source: Option<String>,
    /// The longest sequence the model takes (`max_position_embeddings`), where known.
    pub context: Option<f64>,
    /// Multi-token-prediction layers it ships (`num_nextn_predict_layers`: DeepSeek-V3/R1's
    /// one), a drafter for speculative decoding; 0: none.
    pub mtp_layers: f64,
    /// A `quantization_config` this reader cannot cost: why. Serving it needs `--precision`.
    pub unread_quantization: Option<String>,
}

impl Model {
    /// Parameters a token runs through, as model cards count them: every parameter but the
    /// routed experts the token does not go to and the input embedding (a lookup, not a
    /// matmul).
    pub fn active(&self) -> f64 {
        let idle = self.moe.map_or(0.0, |m| {
            m.layers * (m.experts - m.per_token) * m.expert_params
        });
        self.params - idle - self.embedding()
    }

    /// The input embedding's parameters.
    pub fn embedding(&self) -> f64 {
        self.vocab * self.hidden
    }

    /// The routed experts' parameters, all of them.
    pub fn routed(&self) -> f64 {
        self.moe
            .map_or(0.0, |m| m.layers * m.experts * m.expert_params)
    }

    /// KV cache bytes per token of context and layer of full attention, at `bytes` an element
    /// (keys and values for GQA; MLA's compressed vector and rotary key).
    pub fn kv_elements_per_layer(&self) -> f64 {
        match self.attention {
            Attention::Gqa => 2.0 * self.kv_heads * self.head_dim,
            Attention::Mla {
                kv_lora_rank,
                rope_dim,
            } => kv_lora_rank + rope_dim,
        }
    }

    /// Attention's FLOP for one token against one token of context, over all layers: QK^T
    /// and AV (MLA decodes absorbed, against the compressed vector).
    pub fn attention_flop_per_context(&self) -> f64 {
        let per_layer = match self.attention {
            Attention::Gqa => 4.0 * self.heads * self.head_dim,
            Attention::Mla {
                kv_lora_rank,
                rope_dim,
            } => 2.0 * self.heads * (2.0 * kv_lora_rank + rope_dim),
        };
        per_layer * self.layers
    }

    /// Whether tensor parallelism splits the KV cache (GQA's heads; MLA's latent is whole on
    /// every rank).
    pub fn kv_split_by_tp(&self) -> bool {
        matches!(self.attention, Attention::Gqa)
    }

    pub fn is_moe(&self) -> bool {
        self.moe.is_some()
    }
}

/// Llama 3 8B and 70B, Llama 3.1 405B, and Llama 2 7B (their `config.json`: hidden_size,
/// num_hidden_layers, num_key_value_heads; head dimension 128). Llama 2 7B attends with
/// all 32 heads (no grouped-query attention): four times Llama 3 8B's KV cache a token.
pub(super) const LLAMA: [(&str, f64, f64, f64, f64, f64); 4] = [
    ("8b", 8.03e9, 32.0, 4096.0, 8.0, 128256.0),
    ("70b", 70.6e9, 80.0, 8192.0, 8.0, 128256.0),
    ("405b", 405.85e9, 126.0, 16384.0, 8.0, 128256.0),
    ("llama2-7b", 6.74e9, 32.0, 4096.0, 32.0, 32000.0),
];

pub(super) fn llama(name: &str) -> Option<Model> {
    LLAMA
        .iter()
        .find(|l| l.0 == name)
        .map(|&(name, params, layers, hidden, kv_heads, vocab)| Model {
            name: name.into(),
            params,
            layers,
            hidden,
            heads: hidden / 128.0,
            kv_heads,
            attention_params: 2.0 * hidden * hidden + 2.0 * hidden * kv_heads * 128.0,
            head_dim: 128.0,
            vocab,
            attention: Attention::Gqa,
            sliding: None,
            moe: None,
            shipped: None,
            source: None,
            context: None,
            mtp_layers: 0.0,
            unread_quantization: None,
        })
}

/// The Llama 3 family in order of size: a parameter count between (or beyond) two of them
/// takes its shape from theirs.
const FAMILY: [&str; 3] = ["8b", "70b", "405b"];

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
    /// The model in a sentence: "Llama 3 8B", "DeepSeek-R1 (671B, 37B active)", or "a 13B
    /// model of Llama 3's shape".
    pub fn prose(&self) -> String {
        if llama(&self.name).is_none() {
            let active = if self.is_moe() {
                format!(", {} active", params_label(self.active()).to_uppercase())
            } else {
                String::new()
            };
            return format!(
                "{} ({}{active})",
                self.name,
                params_label(self.params).to_uppercase()
            );
        }
        let family = match self.name.as_str() {
            "llama2-7b" => "Llama 2",
            "405b" => "Llama 3.1",
            _ => "Llama 3",
        };
        let label = self.label();
        if label == self.name {
            match self.name.as_str() {
                "llama2-7b" => "Llama 2 7B".into(),
                n => format!("{family} {}", n.to_uppercase()),
            }
        } else {
            let big = label.to_uppercase();
            format!("{} {big} model of {family}'s shape", article(&label))
        }
    }

    /// The model's name: the preset's or config's, or its parameter count where it was
    /// scaled.
    pub fn label(&self) -> String {
        match llama(&self.name) {
            Some(m) if (m.params / self.params - 1.0).abs() >= 0.01 => params_label(self.params),
            _ => self.name.clone(),
        }
    }

    /// The model's shape at another parameter count, as its family grows. Llama 3 sizes
    /// take the layers and width of the two family members around them (interpolated on a
    /// log scale; beyond the ends, the nearest two's trend): from 8B to 70B the width
    /// doubles and the layers grow 2.5x, from 70B to 405B the width doubles again and the
    /// layers grow 1.6x. Other presets scale layers and width as the square root each. The
    /// width is a whole number of heads; the KV heads and head size stay.
    pub fn with_params(self, params: f64) -> Model {
        let (layers, hidden) = if FAMILY.contains(&self.name.as_str()) {
            let fam: Vec<Model> = FAMILY.iter().map(|n| llama(n).unwrap()).collect();
            let i = fam
                .windows(2)
                .position(|w| params <= w[1].params)
                .unwrap_or(fam.len() - 2);
            let (a, b) = (&fam[i], &fam[i + 1]);
            let t = (params / a.params).ln() / (b.params / a.params).ln();
            let at = |x: f64, y: f64| x * (y / x).powf(t);
            (at(a.layers, b.layers), at(a.hidden, b.hidden))
        } else {
            let s = (params / self.params).sqrt();
            (self.layers * s, self.hidden * s)
        };
        let hidden = ((hidden / self.head_dim).round() * self.head_dim).max(self.head_dim);
        Model {
            params,
            layers: layers.round().max(1.0),
            heads: hidden / self.head_dim,
            attention_params: 2.0 * hidden * hidden + 2.0 * hidden * self.kv_heads * self.head_dim,
            hidden,
            ..self
        }
    }
}
