//! A served model's row: tokens per second per GPU and per user, time to first token and
//! cost per million tokens at the row's price, from the estimate or from a measured serving
//! result of the same GPU, model, precision and lengths; beside a hosted API's price.

use super::*;
use crate::value::scenario::serving::Serving;
use crate::value::serving_results::Measured;

/// What `rank` takes for serving: measured results and a hosted API's price.
#[derive(Clone, Debug, Default)]
pub struct ServingOptions {
    /// Measured serving results (`--results` files of vLLM, SGLang, InferenceX).
    pub results: Vec<Measured>,
    /// A hosted API's price, USD per million input and output tokens (`--api-price`).
    pub api_price: Option<(f64, f64)>,
}

/// A served model's figures on one row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServeRow {
    /// The layout of one copy of the model ("tp8 ep8 dpa").
    pub layout: String,
    pub gpus_per_copy: u32,
    /// Requests in flight per copy.
    pub concurrency: f64,
    /// Output tokens per second per GPU.
    pub tok_s_per_gpu: f64,
    /// Input and output tokens per second per GPU.
    pub total_tok_s_per_gpu: f64,
    pub tok_s_per_user: f64,
    pub ttft_s: f64,
    /// The row's price per million output tokens (the instance's hourly price over its
    /// output tokens in an hour at full load), and per million input+output tokens.
    pub cost_per_million_tokens: f64,
    pub cost_per_million_total_tokens: f64,
    /// Where the figures were measured (a results file), else estimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
    /// The same job through the hosted API: its price per million output tokens (the
    /// prompts' tokens included at the input price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_cost_per_million_tokens: Option<f64>,
    /// The share of the hours the instance must be busy to cost less than the API (above
    /// 1: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beats_api_above: Option<f64>,
}

impl Costing<'_> {
    /// The measured serving result for `gpu` on `gpus` GPUs that matches the job, if one
    /// does: the same GPU, model and precision, prompt and output lengths within 10%, the
    /// instance a whole number of its servers, and the job's targets met; the fastest.
    pub(super) fn measured_serving(&self, gpu: &GpuSpec, gpus: u32) -> Option<&Measured> {
        let s = self.scenario.serving.as_ref()?;
        let close = |a: f64, b: f64| (a / b - 1.0).abs() <= 0.10;
        self.opts
            .serving
            .results
            .iter()
            .filter(|m| m.gpu == gpu.id && m.gpus > 0 && gpus.is_multiple_of(m.gpus))
            .filter(|m| crate::value::serving_results::model_matches(&m.model, &s.model))
            .filter(|m| {
                let stated = m
                    .precision
                    .as_deref()
                    .and_then(|p| p.parse::<crate::value::jobs::Precision>().ok())
                    .or_else(|| crate::value::serving_results::precision_in_name(&m.model));
                stated.is_none_or(|p| p.engines() == s.engines)
            })
            .filter(|m| {
                close(m.prompt_tokens, s.prompt_tokens) && close(m.output_tokens, s.output_tokens)
            })
            .filter(|m| {
                let t = &s.target;
                t.concurrency
                    .is_none_or(|c| m.concurrency.is_none_or(|mc| close(mc, c)))
                    && t.interactivity
                        .is_none_or(|i| m.tok_s_per_user.is_some_and(|u| u >= i))
                    && t.ttft_s.is_none_or(|x| m.ttft_s.is_some_and(|u| u <= x))
            })
            .max_by(|a, b| a.tok_s_per_gpu.total_cmp(&b.tok_s_per_gpu))
    }

    /// Replaces the estimate in `timing` with what `m` measured.
    pub(super) fn use_measured(&self, timing: &mut Timing, m: &Measured, gpus: u32) {
        let s = self.scenario.serving.as_ref().expect("a serving scenario");
        if let Some(pt) = timing.serving.as_mut() {
            pt.gpus = m.gpus;
            pt.tok_s_per_gpu = m.tok_s_per_gpu;
            pt.total_tok_s_per_gpu = m.total_tok_s_per_gpu;
            pt.tok_s_per_user = m.tok_s_per_user.unwrap_or(f64::NAN);
            pt.ttft_s = m.ttft_s.unwrap_or(f64::NAN);
            pt.concurrency = m.concurrency.unwrap_or(f64::NAN);
        }
        timing.seconds = s.tokens / (m.tok_s_per_gpu * f64::from(gpus));
        timing.compute = timing.seconds;
        timing.comm = crate::value::scenario::Comm::None;
        timing.layout = None;
    }

    /// The serving figures of a row priced at `per_hour` for `gpus` GPUs.
    pub(super) fn serve_row(
        &self,
        timing: &Timing,
        per_hour: f64,
        gpus: u32,
        measured: Option<&Measured>,
    ) -> Result<Option<ServeRow>> {
        let (Some(s), Some(pt)) = (self.scenario.serving.as_ref(), timing.serving.as_ref()) else {
            return Ok(None);
        };
        let per_million =
            |tok_s_per_gpu: f64| per_hour / (tok_s_per_gpu * f64::from(gpus) * 3600.0) * 1e6;
        let cost = per_million(pt.tok_s_per_gpu);
        let api = match self.opts.serving.api_price {
            Some((input, output)) => Some(self.catalog.convert(
                input * s.prompt_tokens / s.output_tokens + output,
                "USD",
                &self.opts.currency,
            )?),
            None => None,
        };
        Ok(Some(ServeRow {
            layout: match measured {
                Some(m) => format!("{} GPUs", m.gpus),
                None => pt.parallel.label(),
            },
            gpus_per_copy: pt.gpus,
            concurrency: pt.concurrency,
            tok_s_per_gpu: pt.tok_s_per_gpu,
            total_tok_s_per_gpu: pt.total_tok_s_per_gpu,
            tok_s_per_user: pt.tok_s_per_user,
            ttft_s: pt.ttft_s,
            cost_per_million_tokens: cost,
            cost_per_million_total_tokens: per_million(pt.total_tok_s_per_gpu),
            measured: measured.map(|m| format!("{} ({})", m.file, m.tool.name())),
            api_cost_per_million_tokens: api,
            beats_api_above: api.map(|a| cost / a),
        }))
    }
}

/// Refuses a measured serving result of this job's model past what its GPU can do: every
/// token (prompt and output) costs at least 2 FLOP per active parameter, so tokens per
/// second per GPU cannot pass the GPU's fastest matrix rate over that. Such a figure would
/// rank as measured at a price near zero.
pub fn check_measured(
    catalog: &crate::market::catalog::Catalog,
    scenario: &crate::value::scenario::Scenario,
    results: &[Measured],
) -> Result<()> {
    let Some(s) = scenario.serving.as_ref() else {
        return Ok(());
    };
    for m in results
        .iter()
        .filter(|m| crate::value::serving_results::model_matches(&m.model, &s.model))
    {
        let field = match m.tool {
            crate::value::serving_results::Tool::Inferencex => "tput_per_gpu",
            _ => "output_throughput",
        };
        let figures = [m.tok_s_per_gpu, m.total_tok_s_per_gpu];
        if figures.iter().any(|x| !x.is_finite() || *x <= 0.0) {
            bail!(
                "{}: field `{field}`: expected a positive number of tokens per second (got {} output, {} total per GPU)",
                m.file,
                m.tok_s_per_gpu,
                m.total_tok_s_per_gpu
            );
        }
        let Some(gpu) = catalog.gpu(&m.gpu) else {
            continue;
        };
        let peak = [
            Rate::MatmulFp4Matrix,
            Rate::MatmulFp8Matrix,
            Rate::MatmulF16Matrix,
        ]
        .iter()
        .filter_map(|r| r.datasheet(gpu).map(|d| d.value))
        .fold(0.0f64, f64::max);
        if peak <= 0.0 || s.active_params <= 0.0 {
            continue;
        }
        let ceiling = peak * 1e9 / (2.0 * s.active_params);
        if m.total_tok_s_per_gpu > ceiling {
            bail!(
                "{}: field `{field}`: {:.0} tokens/s per GPU is past what a {} can compute for {} ({:.0} TFLOPS at its fastest matrix rate / (2 FLOP x {:.3e} active parameters) = {:.0} tokens/s): expected a measured figure under that",
                m.file,
                m.total_tok_s_per_gpu,
                gpu.name,
                s.model,
                peak / 1e3,
                s.active_params,
                ceiling
            );
        }
    }
    Ok(())
}

/// The serving target in words, for the heading under a table.
pub fn target_words(s: &Serving) -> String {
    let t = &s.target;
    let mut v = Vec::new();
    if let Some(c) = t.concurrency {
        v.push(format!("{c} requests in flight per copy"));
    }
    if let Some(i) = t.interactivity {
        v.push(format!("at least {i} tokens/s per user"));
    }
    if let Some(x) = t.ttft_s {
        v.push(format!("first token within {x} s"));
    }
    if let Some(p) = t.parallel {
        v.push(format!("layout {}", p.label()));
    }
    if v.is_empty() {
        "as many requests in flight as the memory holds (at most 256 a copy)".into()
    } else {
        v.join(", ")
    }
}
