//! The serving engine an estimate assumes. Published times to first token differ by engine
//! at the same load: TensorRT-LLM's stay near 0.1-0.2 s to 64 clients where SGLang's on
//! Blackwell grow to 0.5 s, and TensorRT-LLM with attention data parallelism holds prompts
//! to balance its ranks. So each engine with enough published TTFTs gets its own
//! time-to-first-token parameters over its vendor's throughput fit; `--engine` picks one,
//! and without it the vendor's pooled fit (every engine's runs) answers.

use serde::{Deserialize, Serialize};

/// An inference engine, as published runs name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    Sglang,
    #[serde(rename = "tensorrt-llm")]
    TensorrtLlm,
    Vllm,
    /// AMD's ATOM (ROCm).
    Atom,
}

impl Engine {
    pub const ALL: [Engine; 4] = [
        Engine::Sglang,
        Engine::TensorrtLlm,
        Engine::Vllm,
        Engine::Atom,
    ];

    /// The engine behind a published run's framework (`dynamo-sglang`, `trtllm`,
    /// `sglang-mori-disagg`): the one it schedules with; None for one not listed.
    pub fn of_framework(framework: &str) -> Option<Engine> {
        let f = framework.to_ascii_lowercase();
        if f.contains("sglang") {
            Some(Engine::Sglang)
        } else if f.contains("tensorrt") || f.contains("trtllm") || f.contains("trt-llm") {
            Some(Engine::TensorrtLlm)
        } else if f.contains("vllm") {
            Some(Engine::Vllm)
        } else if f.contains("atom") {
            Some(Engine::Atom)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::Sglang => "SGLang",
            Engine::TensorrtLlm => "TensorRT-LLM",
            Engine::Vllm => "vLLM",
            Engine::Atom => "ATOM",
        }
    }
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Engine, String> {
        Engine::of_framework(s.trim()).ok_or_else(|| {
            format!("unknown engine `{s}`: expected sglang, tensorrt-llm (trtllm), vllm or atom")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frameworks_name_their_engine_and_an_unknown_one_is_refused_with_the_choices() {
        for (f, e) in [
            ("dynamo-sglang", Engine::Sglang),
            ("sglang-mori-disagg", Engine::Sglang),
            ("dynamo-tensorrt-llm", Engine::TensorrtLlm),
            ("trtllm", Engine::TensorrtLlm),
            ("vLLM", Engine::Vllm),
            ("atom", Engine::Atom),
        ] {
            assert_eq!(Engine::of_framework(f), Some(e), "{f}");
        }
        assert_eq!(Engine::of_framework("tgi"), None);
        let e = "lmdeploy".parse::<Engine>().unwrap_err();
        assert!(e.contains("expected sglang, tensorrt-llm"), "{e}");
        assert_eq!(
            serde_json::to_string(&Engine::TensorrtLlm).unwrap(),
            "\"tensorrt-llm\""
        );
    }
}
