//! The browser build: what the page (`web/`) calls through wasm-bindgen. The same probes,
//! validation, statistics and results file as the command line; the page's suite runs in
//! the browser's event loop, every GPU wait an awaited promise.
//!
//! Built by `scripts/build-web.sh`; the exports and their JSON are the page's contract:
//! `adapter_info`, `catalog_gpus`, `run_suite`, `results_table`, `roofline_svg`, `standing`,
//! `request_stop`.

use crate::host::HostInfo;
use crate::market::catalog::Catalog;
use crate::measuring::gpu::adapter::{self, AdapterSummary};
use crate::measuring::gpu::context::Watchdog;
use crate::measuring::gpu::{Gpu, Timer};
use crate::measuring::probes::{self, Ctx, ProbeRef, RunCtx, measure::Plan};
use crate::measuring::reference::Dims;
use crate::results::{BrowserInfo, ResultsFile, RunOptions};
use crate::value::rank::{self, RankOptions};
use crate::value::scenario::ScenarioFile;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use wasm_bindgen::prelude::*;

fn js_err(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

/// What the page asks for.
#[derive(Deserialize)]
struct WebOptions {
    /// `quick` (the command line's quick suite) or `ci` (tiny sizes for a software adapter).
    #[serde(default = "quick")]
    suite: String,
    #[serde(default)]
    stated_gpu: Option<String>,
    #[serde(default)]
    user_agent: String,
    #[serde(default)]
    platform: String,
    #[serde(default)]
    hardware_concurrency: usize,
    #[serde(default)]
    cross_origin_isolated: bool,
}

fn quick() -> String {
    "quick".into()
}

/// A suite the page can run.
struct Suite {
    sizes: Option<Vec<Dims>>,
    array_mib: u64,
    budget: Duration,
}

impl Suite {
    fn named(name: &str) -> Result<Suite, String> {
        match name {
            // The command line's quick suite; arrays of 64 MiB (a browser's buffers are
            // smaller than a native device's, and the page must stay responsive).
            "quick" => Ok(Suite {
                sizes: None,
                array_mib: 64,
                budget: Duration::from_secs(60),
            }),
            // SwiftShader runs a 256x256 matmul at about 0.13 GFLOPS: tiny sizes.
            "ci" => Ok(Suite {
                sizes: Some(vec![Dims {
                    m: 64,
                    n: 64,
                    k: 64,
                }]),
                array_mib: 1,
                budget: Duration::from_secs(120),
            }),
            other => Err(format!("unknown suite '{other}': expected quick or ci")),
        }
    }
}

/// What the browser lacks, for the page and the results file.
fn limits_of(s: &AdapterSummary) -> Vec<String> {
    let mut v = vec![
        "native f64: WebGPU has no SHADER_F64, so df64 (double-float) is the double figure here"
            .to_string(),
        "subgroups: wgpu's WebGPU backend does not pass them through yet (gfx-rs/wgpu#10146), so the subgroup FP32 and df64 matmul kernels are not candidates".into(),
        "cooperative matrices (tensor cores): WebGPU has none".into(),
        "the GPU model: browsers hide it; pick it from the list to rank it".into(),
    ];
    if !s.features.shader_f16 {
        v.push("f16: this browser does not offer shader-f16".into());
    }
    if !s.features.timestamp_query {
        v.push("GPU timestamps: not offered; timed with performance.now()".into());
    }
    v
}

/// The browser's adapter, described, with the WGSL language features its compiler takes.
struct WebAdapter {
    adapter: wgpu::Adapter,
    summary: AdapterSummary,
    wgsl: wgpu::WgslLanguageFeatures,
}

impl WebAdapter {
    async fn open() -> Result<WebAdapter, String> {
        let inst = adapter::instance(None);
        let adapter = inst
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("no WebGPU adapter: {e} (is WebGPU enabled in this browser?)"))?;
        let mut summary = adapter::summarize(0, &adapter);
        if summary.name.trim().is_empty() {
            summary.name = "WebGPU adapter (model hidden by the browser)".into();
        }
        Ok(WebAdapter {
            adapter,
            summary,
            wgsl: inst.wgsl_language_features(),
        })
    }

    fn wgsl_names(&self) -> Vec<String> {
        self.wgsl.iter_names().map(|(n, _)| n.to_string()).collect()
    }
}

/// The adapter the browser gives (JSON: the results file's adapter fields, plus
/// `wgsl_features` and `lacks`); rejects when there is no WebGPU adapter.
#[wasm_bindgen]
pub async fn adapter_info() -> Result<String, JsValue> {
    let w = WebAdapter::open().await.map_err(js_err)?;
    let mut out = serde_json::to_value(&w.summary).map_err(js_err)?;
    let features: Vec<&str> = w.adapter.features().iter_names().map(|(n, _)| n).collect();
    out["features"] = serde_json::json!(features);
    out["wgsl_features"] = serde_json::json!(w.wgsl_names());
    out["lacks"] = serde_json::json!(limits_of(&w.summary));
    Ok(out.to_string())
}

/// The catalog's GPUs for the page's picker: `[{id, name, vendor}]`.
#[wasm_bindgen]
pub fn catalog_gpus() -> String {
    let c = Catalog::embedded();
    let list: Vec<serde_json::Value> = c
        .gpus
        .iter()
        .map(|g| serde_json::json!({"id": g.id, "name": g.name, "vendor": g.vendor}))
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Asks a running suite to stop after the current measurement.
#[wasm_bindgen]
pub fn request_stop() {
    crate::interrupt::request();
}

fn call(f: &js_sys::Function, args: &[JsValue]) {
    let this = JsValue::NULL;
    let _ = match args {
        [a] => f.call1(&this, a),
        [a, b, c] => f.call3(&this, a, b, c),
        _ => f.call0(&this),
    };
}

/// Runs a suite on the browser's adapter: `progress(label, done, total)` as it goes,
/// `on_result(results_json)` after every result; resolves to the results file (JSON, the
/// command line's schema with a `browser` section).
#[wasm_bindgen]
pub async fn run_suite(
    options_json: String,
    progress: js_sys::Function,
    on_result: js_sys::Function,
) -> Result<String, JsValue> {
    forward_panics();
    crate::interrupt::clear();
    let opts: WebOptions = serde_json::from_str(&options_json)
        .map_err(|e| js_err(format!("run_suite options: {e}")))?;
    let suite = Suite::named(&opts.suite).map_err(js_err)?;
    let w = WebAdapter::open().await.map_err(js_err)?;
    let wgsl = w.wgsl_names();
    let summary = w.summary.clone();
    let mut gpu = Gpu::open(w.adapter, w.summary)
        .await
        .map_err(|e| js_err(format!("{e:#}")))?;
    gpu.wgsl = w.wgsl;
    let (host, mut results) = new_results(&opts, &suite, &summary, wgsl);
    let list: Vec<ProbeRef> = probes::REGISTRY.to_vec();
    let deadline = crate::clock::Instant::now() + suite.budget;
    let total = list.len();
    for i in 0..total {
        if crate::interrupt::requested() {
            break;
        }
        let report = |label: &str| {
            call(
                &progress,
                &[label.into(), (i as f64).into(), (total as f64).into()],
            )
        };
        let mut on_record = |results: &ResultsFile| {
            if let Ok(j) = serde_json::to_string(results) {
                call(&on_result, &[j.into()]);
            }
        };
        let step = ProbeStep {
            gpu: &gpu,
            probes: &list[i..],
            deadline,
            suite: &suite,
            host: &host,
        };
        step.run(&mut results, &report, &mut on_record).await;
    }
    gpu.set_watchdog(None);
    crate::measuring::suite::finish(&mut results);
    call(
        &progress,
        &["done".into(), (total as f64).into(), (total as f64).into()],
    );
    serde_json::to_string_pretty(&results).map_err(js_err)
}

/// The page's results file before any probe: the command line's schema, `host.hostname`
/// `browser`, and the `browser` section.
fn new_results(
    opts: &WebOptions,
    suite: &Suite,
    summary: &AdapterSummary,
    wgsl_features: Vec<String>,
) -> (HostInfo, ResultsFile) {
    let host = HostInfo {
        hostname: "browser".into(),
        os: opts.platform.clone(),
        kernel: String::new(),
        cpu_model: String::new(),
        cpu_threads: opts.hardware_concurrency,
        cpu_cores: None,
        // Unknown: no host cap on buffer sizes (the suite's array size bounds them).
        ram_bytes: 0,
    };
    let options = RunOptions {
        quick: true,
        probes: probes::REGISTRY
            .iter()
            .map(|p| p.name().to_string())
            .collect(),
        sizes: suite
            .sizes
            .as_ref()
            .map(|v| v.iter().map(Dims::to_string).collect()),
        array_mib: Some(suite.array_mib),
        time_budget_s: suite.budget.as_secs_f64(),
        trusted_shaders: false,
        timestamps: true,
        args: vec!["web page".into(), format!("suite={}", opts.suite)],
    };
    let mut results = ResultsFile::new(host.clone(), summary.clone(), options);
    results.browser = Some(BrowserInfo {
        user_agent: opts.user_agent.clone(),
        stated_gpu: opts.stated_gpu.clone().filter(|s| !s.trim().is_empty()),
        adapter_description: summary.name.clone(),
        wgsl_features,
        cross_origin_isolated: opts.cross_origin_isolated,
        limits: limits_of(summary),
    });
    (host, results)
}

/// One probe of the page's suite: `probes[0]` runs with its share of the time left before
/// `deadline` (the rest of `probes` still to come).
struct ProbeStep<'a> {
    gpu: &'a Gpu,
    probes: &'a [ProbeRef],
    deadline: crate::clock::Instant,
    suite: &'a Suite,
    host: &'a HostInfo,
}

impl ProbeStep<'_> {
    /// Runs the probe into `results`, calling `on_record` after every result it keeps.
    async fn run(
        &self,
        results: &mut ResultsFile,
        report: &dyn Fn(&str),
        on_record: &mut dyn FnMut(&ResultsFile),
    ) {
        let (gpu, probe) = (self.gpu, self.probes[0]);
        // A device that stopped working runs nothing more; each probe left says why, as
        // the native bench records it.
        if let Some(h) = gpu.halted() {
            let r = crate::results::ProbeResult::placeholder(probe.name())
                .with_status(crate::results::Status::Skipped, format!("not run: {h}"));
            results.probes.push(r);
            return;
        }
        let left = self
            .deadline
            .saturating_duration_since(crate::clock::Instant::now());
        let budget = probes::budget(probe, left, self.probes);
        gpu.set_watchdog(Some(Watchdog::new(
            Duration::from_secs(60),
            budget * 2 + Duration::from_secs(120),
        )));
        let timer = Timer::new(gpu, true);
        report(probe.name());
        let run = RunCtx {
            plan: Plan::quick(),
            quick: true,
            sizes: self.suite.sizes.clone(),
            deadline: crate::clock::Instant::now() + budget,
            trusted: false,
            host: self.host,
            progress: report,
            array_bytes: Some(self.suite.array_mib << 20),
            reduced: Default::default(),
        };
        let ctx = Ctx::new(gpu, &timer, run);
        let mut emit = |r| {
            if crate::measuring::suite::record(
                results,
                r,
                timer.fallback_reason(),
                ctx.reduced.take(),
            ) {
                on_record(results);
            }
        };
        probe.run(&ctx, &mut emit).await;
        // Errors a probe left pending (work made but never waited on) are its own: they
        // must not fail the next probe's first wait.
        let _ = gpu.settle().await;
        let _ = gpu.take_error();
    }
}

fn parse(results_json: &str) -> Result<ResultsFile, JsValue> {
    ResultsFile::parse(results_json).map_err(|e| js_err(format!("results: {e:#}")))
}

/// The probe table of a results file (HTML), as the HTML report shows it.
#[wasm_bindgen]
pub fn results_table(results_json: String) -> Result<String, JsValue> {
    Ok(crate::report::html::probes_table(&parse(&results_json)?))
}

/// The roofline of a results file (SVG), with the stated GPU's datasheet ceilings.
#[wasm_bindgen]
pub fn roofline_svg(results_json: String) -> Result<String, JsValue> {
    Ok(crate::report::html::roofline(
        &parse(&results_json)?,
        &Catalog::embedded(),
    ))
}

#[derive(Serialize)]
struct Standing {
    scenario: String,
    title: String,
    /// This machine's place among the ranked instances and itself (1 + those that finish
    /// the job sooner); None when a figure the scenario needs was not measured.
    place: Option<usize>,
    /// The ranked instances, plus this machine.
    of: usize,
    line: String,
}

/// Where this machine stands in each scenario of the embedded catalog (on-demand USD):
/// `[{scenario, title, place, of, line}]`.
#[wasm_bindgen]
pub fn standing(results_json: String) -> Result<String, JsValue> {
    let r = parse(&results_json)?;
    let c = Catalog::embedded();
    let checked = c.checked();
    let opts = RankOptions::default();
    let files = [("this browser run".to_string(), r)];
    let mut out = Vec::new();
    for s in &ScenarioFile::embedded().scenarios {
        let rep = rank::rank(&checked, s, &files, &opts).map_err(js_err)?;
        let Some(m) = rep.machines.first() else {
            continue;
        };
        let line = crate::report::rank::machine_line(&rep, m);
        out.push(Standing {
            scenario: s.id.clone(),
            title: s.description.clone(),
            place: m.instances_faster.map(|f| f + 1),
            of: rep.ranked_total + 1,
            line,
        });
    }
    serde_json::to_string(&out).map_err(js_err)
}

/// A panic ends the wasm instance: say why on the console first (the page also marks the
/// run failed when its promise never settles or rejects).
fn forward_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let msg = format!("gpuvalue panicked: {info}");
            let global = js_sys::global();
            if let Ok(console) = js_sys::Reflect::get(&global, &"console".into())
                && let Ok(f) = js_sys::Reflect::get(&console, &"error".into())
                && let Ok(f) = f.dyn_into::<js_sys::Function>()
            {
                let _ = f.call1(&console, &msg.into());
            }
        }));
    });
}
