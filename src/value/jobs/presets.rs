//! The presets of `--model`: the Llama shapes (`model.rs`) and the Mixture-of-Experts
//! models read from their own `config.json` copies under `src/data/models/`.

use super::config;
use super::model::{LLAMA, Model, llama};
use anyhow::Result;

/// The Mixture-of-Experts presets: each model's own `config.json`, copied with its source
/// and date into `src/data/models/` (see its README).
pub const CONFIG_PRESETS: [(&str, &str); 7] = [
    (
        "deepseek-r1",
        include_str!("../../data/models/deepseek-r1.json"),
    ),
    (
        "qwen3-235b-a22b",
        include_str!("../../data/models/qwen3-235b-a22b.json"),
    ),
    (
        "gpt-oss-120b",
        include_str!("../../data/models/gpt-oss-120b.json"),
    ),
    (
        "gpt-oss-20b",
        include_str!("../../data/models/gpt-oss-20b.json"),
    ),
    ("kimi-k2", include_str!("../../data/models/kimi-k2.json")),
    (
        "llama4-maverick",
        include_str!("../../data/models/llama4-maverick.json"),
    ),
    (
        "mixtral-8x7b",
        include_str!("../../data/models/mixtral-8x7b.json"),
    ),
];

/// Every preset's name, in the order `--help` lists them.
pub fn preset_names() -> Vec<&'static str> {
    LLAMA
        .iter()
        .map(|l| l.0)
        .chain(CONFIG_PRESETS.iter().map(|c| c.0))
        .collect()
}

/// A preset by name ("8b", "70B", "deepseek-r1").
pub fn preset(name: &str) -> Result<Model> {
    let n = name.trim().to_lowercase();
    if let Some(m) = llama(&n) {
        return Ok(m);
    }
    if let Some((id, text)) = CONFIG_PRESETS.iter().find(|c| c.0 == n) {
        let mut m = config::parse(text, &format!("src/data/models/{id}.json"))
            .expect("embedded model configs parse (tested)");
        m.name = (*id).to_string();
        return Ok(m);
    }
    anyhow::bail!(
        "--model {name}: unknown preset, expected one of {} (or --model-config FILE)",
        preset_names().join(", ")
    )
}
