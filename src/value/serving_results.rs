//! Measured serving results in the files people already produce, for `rank --results`:
//! vLLM's `bench serve --save-result` JSON (also JSON Lines, `--append-result`), SGLang's
//! `bench_serving` output (its `--output-file` JSON Lines, or the printed "Serving Benchmark
//! Result" block) and InferenceX's result rows (`agg_*.json`: one object or a list). Each
//! becomes one [`Measured`]: the system's output and total tokens per second on `gpus` GPUs
//! of `gpu`, with the lengths, concurrency and per-user figures the file states. A file
//! that says neither its GPU nor how many takes them from `--results-on` (8xh200-sxm).

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which tool wrote a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    Vllm,
    Sglang,
    Inferencex,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Vllm => "vLLM bench serve",
            Tool::Sglang => "SGLang bench_serving",
            Tool::Inferencex => "InferenceX",
        }
    }
}

/// One measured serving run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub file: String,
    pub tool: Tool,
    /// Catalog GPU id.
    pub gpu: String,
    /// GPUs the server ran on (one copy of the model, or copies side by side).
    pub gpus: u32,
    /// The model as the file names it.
    pub model: String,
    /// The precision the file states, if it does ("fp8", "fp4").
    pub precision: Option<String>,
    /// Mean prompt and output tokens per request.
    pub prompt_tokens: f64,
    pub output_tokens: f64,
    /// Requests in flight, where the client capped them.
    pub concurrency: Option<f64>,
    /// Output tokens per second per GPU.
    pub tok_s_per_gpu: f64,
    /// Input and output tokens per second per GPU.
    pub total_tok_s_per_gpu: f64,
    pub tok_s_per_user: Option<f64>,
    pub ttft_s: Option<f64>,
}

/// Where a file that does not say so ran: `8xh200-sxm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct On {
    pub gpus: u32,
    pub gpu: String,
}

impl On {
    pub fn parse(s: &str) -> Result<On, String> {
        let bad = || format!("--results-on {s}: expected GPUS x catalog GPU id, e.g. 8xh200-sxm");
        let (n, gpu) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let gpus: u32 = n.trim().parse().map_err(|_| bad())?;
        if gpus == 0 || gpu.trim().is_empty() {
            return Err(bad());
        }
        Ok(On {
            gpus,
            gpu: gpu.trim().to_lowercase(),
        })
    }
}

/// Whether `text` is one of the serving formats (not a gpuvalue results file).
pub fn looks_like_serving(text: &str) -> bool {
    let t = text.trim_start();
    if t.contains("Serving Benchmark Result") {
        return true;
    }
    [
        "\"output_throughput\"",
        "\"tput_per_gpu\"",
        "\"total_output_tokens\"",
    ]
    .iter()
    .any(|k| t.contains(k))
        && !t.contains("\"schema_version\"")
}

/// Every run in the file `name` (text `text`); `on` where the file lacks its GPUs. A file
/// none of the formats reads is refused naming what is missing.
pub fn parse(text: &str, name: &str, on: Option<&On>) -> Result<Vec<Measured>> {
    if text.contains("Serving Benchmark Result") {
        return Ok(vec![sglang_text(text, name, on)?]);
    }
    let objects: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(a)) => a,
        Ok(v @ Value::Object(_)) => vec![v],
        Ok(_) => bail!("{name}: expected a JSON object or list of serving results"),
        // JSON Lines: one object a line (vLLM --append-result, SGLang --output-file).
        Err(_) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .map_err(|e| anyhow::anyhow!("{name}: line {}: not JSON ({e})", i + 1))
            })
            .collect::<Result<_>>()?,
    };
    if objects.is_empty() {
        bail!("{name}: no serving results in it");
    }
    objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let at = if objects.len() > 1 {
                format!("{name} (result {})", i + 1)
            } else {
                name.to_string()
            };
            from_object(o, &at, name, on)
        })
        .collect()
}

fn num(o: &Value, k: &str) -> Option<f64> {
    match o.get(k)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
    .filter(|x| x.is_finite())
}

fn text_of(o: &Value, k: &str) -> Option<String> {
    o.get(k).and_then(Value::as_str).map(str::to_string)
}

/// The GPU and count: the file's, else `on`; else an error naming both.
fn placed(
    file_gpu: Option<String>,
    file_gpus: Option<u32>,
    on: Option<&On>,
    at: &str,
) -> Result<(String, u32)> {
    let gpu = file_gpu.or_else(|| on.map(|o| o.gpu.clone()));
    let gpus = file_gpus.or_else(|| on.map(|o| o.gpus));
    match (gpu, gpus) {
        (Some(g), Some(n)) if n > 0 => Ok((g, n)),
        _ => bail!(
            "{at}: the file does not say which GPUs it ran on: give them with --results-on GPUSxGPU (e.g. 8xh200-sxm)"
        ),
    }
}

fn from_object(o: &Value, at: &str, file: &str, on: Option<&On>) -> Result<Measured> {
    if o.get("tput_per_gpu").is_some() || o.get("hw").is_some() {
        return inferencex(o, at, file, on);
    }
    let missing: Vec<&str> = [
        "completed",
        "total_input_tokens",
        "total_output_tokens",
        "output_throughput",
    ]
    .into_iter()
    .filter(|k| num(o, k).is_none())
    .collect();
    if !missing.is_empty() {
        bail!(
            "{at}: not a gpuvalue results file (no schema_version), nor a vLLM or SGLang serving result (missing {}), nor an InferenceX row (missing tput_per_gpu, hw)",
            missing.join(", ")
        );
    }
    let completed = num(o, "completed").unwrap_or(0.0);
    if completed < 1.0 {
        bail!("{at}: completed {completed}: no request finished, nothing measured");
    }
    let tool = if o.get("tag").is_some()
        || o.get("dataset_name").is_some()
        || o.get("random_input_len").is_some()
    {
        Tool::Sglang
    } else {
        Tool::Vllm
    };
    let output = num(o, "output_throughput").unwrap_or(0.0);
    let total = num(o, "total_token_throughput")
        .unwrap_or_else(|| output + num(o, "input_throughput").unwrap_or(0.0));
    let tp = num(o, "tensor_parallel_size")
        .or(num(o, "tp"))
        .map(|x| x as u32);
    // `--metadata gpu=4xNVIDIA_L40S`, as benchmark scripts record it.
    let meta = text_of(o, "gpu").and_then(|g| gpu_metadata(&g));
    let (gpu, gpus) = placed(
        meta.as_ref().map(|m| m.1.clone()),
        tp.or(meta.map(|m| m.0)),
        on,
        at,
    )?;
    let tpot = num(o, "median_tpot_ms").or(num(o, "mean_tpot_ms"));
    Ok(Measured {
        file: file.to_string(),
        tool,
        gpu,
        gpus,
        model: text_of(o, "model_id")
            .or(text_of(o, "model"))
            .unwrap_or_default(),
        precision: None,
        prompt_tokens: num(o, "total_input_tokens").unwrap_or(0.0) / completed,
        output_tokens: num(o, "total_output_tokens").unwrap_or(0.0) / completed,
        concurrency: num(o, "max_concurrency"),
        tok_s_per_gpu: output / f64::from(gpus),
        total_tok_s_per_gpu: total / f64::from(gpus),
        tok_s_per_user: tpot.filter(|t| *t > 0.0).map(|t| 1000.0 / t),
        ttft_s: num(o, "median_ttft_ms")
            .or(num(o, "mean_ttft_ms"))
            .map(|t| t / 1000.0),
    })
}

/// An InferenceX row: per-GPU throughputs already, its hardware as a runner name.
fn inferencex(o: &Value, at: &str, file: &str, on: Option<&On>) -> Result<Measured> {
    let need = ["tput_per_gpu", "output_tput_per_gpu", "isl", "osl"];
    let missing: Vec<&str> = need.into_iter().filter(|k| num(o, k).is_none()).collect();
    if !missing.is_empty() {
        bail!(
            "{at}: an InferenceX row without {} (an agentic or multinode row is not a fixed-length serving run)",
            missing.join(", ")
        );
    }
    if o.get("is_multinode").and_then(Value::as_bool) == Some(true) {
        bail!("{at}: a multinode (disaggregated) InferenceX row: not modelled");
    }
    let hw = text_of(o, "hw").map(|h| runner_gpu(&h));
    let tp = num(o, "tp").map(|x| x as u32);
    let (gpu, gpus) = placed(hw.flatten(), tp, on, at)?;
    Ok(Measured {
        file: file.to_string(),
        tool: Tool::Inferencex,
        gpu,
        gpus,
        model: text_of(o, "model").unwrap_or_default(),
        precision: text_of(o, "precision").map(|p| p.to_lowercase()),
        prompt_tokens: num(o, "isl").unwrap_or(0.0),
        output_tokens: num(o, "osl").unwrap_or(0.0),
        concurrency: num(o, "conc"),
        tok_s_per_gpu: num(o, "output_tput_per_gpu").unwrap_or(0.0),
        total_tok_s_per_gpu: num(o, "tput_per_gpu").unwrap_or(0.0),
        tok_s_per_user: num(o, "median_intvty"),
        ttft_s: num(o, "median_ttft"),
    })
}

/// "4xNVIDIA_L40S" (a count and a name, as `--metadata gpu=` records it): (4, "NVIDIA L40S").
fn gpu_metadata(s: &str) -> Option<(u32, String)> {
    let (n, name) = s.split_once(['x', 'X'])?;
    let n: u32 = n.trim().parse().ok().filter(|n| *n > 0)?;
    Some((n, name.replace('_', " ").trim().to_string()))
}

/// InferenceX's runner names ("h200-cw_0", "mi355x-amds_1", "b200-nvd") to catalog ids.
fn runner_gpu(hw: &str) -> Option<String> {
    let base = hw.to_lowercase();
    let base = base.split(['-', '_']).next().unwrap_or("");
    Some(
        match base {
            "h100" => "h100-sxm",
            "h200" => "h200-sxm",
            "b200" | "b300" | "gb200" | "gb300" | "mi300x" | "mi325x" | "mi355x" => base,
            _ => return None,
        }
        .to_string(),
    )
}

/// SGLang's printed summary: "Output token throughput (tok/s):  1234.5" and the rest.
fn sglang_text(text: &str, name: &str, on: Option<&On>) -> Result<Measured> {
    let field = |label: &str| -> Option<f64> {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.rsplit(':').next())
            .and_then(|v| v.trim().parse().ok())
    };
    let need = [
        "Successful requests",
        "Total input tokens",
        "Total generated tokens",
        "Output token throughput (tok/s)",
    ];
    let missing: Vec<&str> = need.into_iter().filter(|l| field(l).is_none()).collect();
    if !missing.is_empty() {
        bail!("{name}: an SGLang summary without {}", missing.join(", "));
    }
    let completed = field("Successful requests").unwrap_or(0.0);
    if completed < 1.0 {
        bail!("{name}: no request finished, nothing measured");
    }
    let (gpu, gpus) = placed(None, None, on, name)?;
    let output = field("Output token throughput (tok/s)").unwrap_or(0.0);
    let total = field("Total token throughput (tok/s)")
        .unwrap_or_else(|| output + field("Input token throughput (tok/s)").unwrap_or(0.0));
    let tpot = field("Median TPOT (ms)").or(field("Mean TPOT (ms)"));
    Ok(Measured {
        file: name.to_string(),
        tool: Tool::Sglang,
        gpu,
        gpus,
        model: String::new(),
        precision: None,
        prompt_tokens: field("Total input tokens").unwrap_or(0.0) / completed,
        output_tokens: field("Total generated tokens").unwrap_or(0.0) / completed,
        concurrency: field("Max request concurrency").or(field("Max reqeuest concurrency")),
        tok_s_per_gpu: output / f64::from(gpus),
        total_tok_s_per_gpu: total / f64::from(gpus),
        tok_s_per_user: tpot.filter(|t| *t > 0.0).map(|t| 1000.0 / t),
        ttft_s: field("Median TTFT (ms)")
            .or(field("Mean TTFT (ms)"))
            .map(|t| t / 1000.0),
    })
}

/// The presets a model name in a results file means ("deepseek-ai/DeepSeek-R1-0528" is
/// deepseek-r1, "meta-llama/Llama-3.3-70B-Instruct" is 70b); empty: the file names none.
pub fn model_matches(file_model: &str, model: &str) -> bool {
    let f = file_model.to_lowercase().replace(['_', ' ', '.'], "-");
    if f.is_empty() {
        return true;
    }
    let name = model.to_lowercase();
    match name.as_str() {
        "8b" => f.contains("llama") && f.contains("-8b"),
        "70b" => f.contains("llama") && f.contains("-70b"),
        "405b" => f.contains("llama") && f.contains("-405b"),
        "llama2-7b" => f.contains("llama-2") && f.contains("-7b"),
        "deepseek-r1" => f.contains("deepseek-r1") || f.contains("deepseek-v3"),
        "kimi-k2" => f.contains("kimi-k2"),
        "llama4-maverick" => f.contains("maverick"),
        other => f.contains(other),
    }
}

/// The precision a file's model name implies ("...-FP8", "...-NVFP4", "...-MXFP4").
pub fn precision_in_name(file_model: &str) -> Option<crate::value::jobs::Precision> {
    let f = file_model.to_lowercase();
    if f.contains("fp4") {
        Some(crate::value::jobs::Precision::Fp4)
    } else if f.contains("fp8") {
        Some(crate::value::jobs::Precision::Fp8)
    } else {
        None
    }
}
