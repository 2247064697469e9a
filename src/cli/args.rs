//! Command-line definitions (clap) and nothing else.

use crate::measuring::gpu::{AdapterChoice, BackendChoice};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;
use values::*;

mod output;
mod values;

pub use values::MAX_MATRIX_BYTES;

#[derive(Parser, Debug)]
#[command(
    name = "gpuvalue",
    version,
    about = "Measure what a GPU really delivers (validated WGSL probes through wgpu) and what it is worth",
    long_about = None
)]
pub struct Cli {
    /// Without a command: `run` (quick bench of this machine, then every scenario ranked).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Print tables and notes at full width. Otherwise they are fitted to the terminal
    /// ($COLUMNS, else the terminal's own width, else 100 columns for a pipe or file).
    #[arg(long, global = true)]
    pub wide: bool,
}

impl Cli {
    /// Parses the command line, then refuses an option that the rest of it makes moot
    /// (`rank --tokens` without `--job`, `--request-rate` on a fine-tune): clap's own
    /// error and exit status 2, instead of an answer that ignored it.
    pub fn parse_checked() -> Cli {
        use clap::{CommandFactory, FromArgMatches};
        let matches = Cli::command().get_matches();
        if let Err(msg) = moot_options(&matches) {
            let mut cmd = Cli::command();
            cmd.build();
            let sub = cmd.find_subcommand_mut("rank").expect("rank is a command");
            sub.error(clap::error::ErrorKind::ArgumentConflict, msg)
                .exit();
        }
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

/// The options of `rank` (and its jobs) that the other options make moot, in words.
pub fn moot_options(m: &clap::ArgMatches) -> Result<(), String> {
    use clap::parser::ValueSource;
    let Some(("rank" | "report", r)) = m.subcommand() else {
        return Ok(());
    };
    let given = |id: &str| {
        r.try_get_raw(id).ok().flatten().is_some()
            && r.value_source(id) == Some(ValueSource::CommandLine)
    };
    let flag = |id: &str| r.try_get_one::<bool>(id).ok().flatten() == Some(&true);
    let opt = |id: &str| format!("--{}", id.replace('_', "-"));
    const FINETUNE: &[&str] = &["tokens", "method", "seq_len"];
    const SERVE: &[&str] = &[
        "requests",
        "request_rate",
        "token_rate",
        "prompt_tokens",
        "output_tokens",
        "concurrency",
        "interactivity",
        "ttft_s",
        "max_batch",
        "speculative",
        "engine",
        "parallel",
        "api_price",
        "sweep",
    ];
    const BOTH: &[&str] = &["model", "model_config", "model_params", "precision"];
    let job = r.try_get_one::<JobKind>("job").ok().flatten().copied();
    let wrong: Vec<(&str, &str)> = match job {
        None => FINETUNE
            .iter()
            .map(|o| (*o, "applies to --job llm-finetune"))
            .chain(SERVE.iter().map(|o| (*o, "applies to --job llm-serve")))
            .chain(
                BOTH.iter()
                    .map(|o| (*o, "applies to --job llm-finetune or llm-serve")),
            )
            .filter(|(o, _)| given(o))
            .collect(),
        Some(JobKind::LlmFinetune) => SERVE
            .iter()
            .filter(|o| given(o))
            .map(|o| (*o, "applies to --job llm-serve, not llm-finetune"))
            .collect(),
        Some(JobKind::LlmServe) => FINETUNE
            .iter()
            .filter(|o| given(o))
            .map(|o| (*o, "applies to --job llm-finetune, not llm-serve"))
            .collect(),
    };
    if let Some((o, why)) = wrong.first() {
        return Err(format!("{} {why}: here it would be ignored", opt(o)));
    }
    if flag("side_by_side") && given("price") {
        return Err("--price is not used with --side-by-side, which shows every way to pay".into());
    }
    if given("utilisation") && !flag("side_by_side") {
        return Err("--utilisation applies to --side-by-side (a commitment's cost per job at that share of its hours): here it would be ignored".into());
    }
    Ok(())
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List every adapter wgpu finds, with the limits and features the probes use.
    Devices(DevicesArgs),
    /// Run the probes on one adapter (or all) and write a results file per adapter.
    #[command(allow_negative_numbers = true)]
    Bench(BenchArgs),
    /// Print saved results files as the bench summary table.
    Show(ShowArgs),
    /// List and filter the price catalog, or check a catalog file (`catalog check FILE`).
    Catalog(CatalogArgs),
    /// Rank catalog instances by value for a scenario, with measured figures where results
    /// files exist and datasheet estimates (marked) elsewhere.
    #[command(allow_negative_numbers = true)]
    Rank(RankArgs),
    /// The main job: a quick bench of this machine, then every scenario ranked, showing where
    /// this machine stands.
    #[command(allow_negative_numbers = true)]
    Run(RunArgs),
    /// Compare two results files probe by probe (NEW against BASE): faster, slower or the
    /// same within the recorded noise, and validation changes. Exit status 1 when a probe
    /// is slower beyond the threshold and the noise, or newly fails.
    Compare(CompareArgs),
    /// Write report.html (self-contained: inline CSS and SVG charts) and report.md from
    /// results files: devices, probes, rooflines, and value and cost charts per scenario.
    Report(ReportArgs),
    /// Is the GPU I am paying for healthy? A sustained FP32 matmul load checked bit for bit,
    /// a VRAM test, stability from throughput windows and the rate against what the catalog
    /// says is paid for: PASS / WARN / FAIL / ERROR per GPU, exit status 0 / 3 / 4 / 5 (the
    /// worst GPU's).
    #[command(allow_negative_numbers = true)]
    Burn(BurnArgs),
    /// Recompute every published result behind the efficiency factors from the catalog, the
    /// factors and the scenario model: published, implied, ratio, and each factor refitted.
    Calibration(CalibrationArgs),
    /// Host-to-device and device-to-host copies on every GPU of this node alone and all at
    /// once (a PCIe switch or host link the GPUs share shows), and GPU-to-GPU copies
    /// (host-staged, labelled so), every copy checked bit for bit. Exit status 1 when a copy
    /// or check failed.
    Transfers(TransfersArgs),
}

#[derive(Args, Debug)]
pub struct TransfersArgs {
    /// GPUs to use: `all` (default), `visible`, an index from `gpuvalue devices`, part of a
    /// name or `pci:BUS`. Every GPU is measured through one API: the first one's, or --backend.
    #[arg(long, short = 'a', default_value = "all")]
    pub adapter: AdapterChoice,
    /// Only search this backend.
    #[arg(long, short = 'b', value_enum)]
    pub backend: Option<BackendChoice>,
    /// 64 MiB copies and 5 timed runs per step (default 256 MiB and 10).
    #[arg(long)]
    pub quick: bool,
    /// MiB per copy (capped by every GPU's largest buffer and a share of host memory).
    #[arg(long, value_name = "MIB", value_parser = whole_mib)]
    pub mib: Option<u64>,
    /// Timed runs per step (one warm-up run more).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: Option<u32>,
    /// Measure software adapters (the CPU: lavapipe, SwiftShader, PoCL) too.
    #[arg(long)]
    pub allow_software: bool,
    /// No progress lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub output: TableOrJson,
}

#[derive(Args, Debug)]
pub struct BurnArgs {
    #[command(flatten)]
    pub select: AdapterArgs,
    /// About 60 s: a 10 s warm-up, five 8 s windows, a 5 s idle gap, one VRAM pass
    /// (standard: 10 minutes, a 30 s warm-up, 20 s windows, a 15 s gap, 3 VRAM passes).
    #[arg(long)]
    pub quick: bool,
    /// Total seconds (5 or more): 300 and over keep the standard phases with more windows,
    /// shorter runs scale the quick ones.
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub duration: Option<f64>,
    /// Test a software adapter (the CPU: lavapipe, SwiftShader, PoCL) too; refused by
    /// default, since a burn that finds no GPU must not pass.
    #[arg(long)]
    pub allow_software: bool,
    /// Matrix size of the load (default 4096 on a GPU, 512 on a software adapter).
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,
    /// MiB of memory for the VRAM test (default 90% of the device's memory where the API
    /// reports it; a small, stated share of host memory on a software adapter).
    #[arg(long, value_name = "MIB", value_parser = whole_mib)]
    pub vram_mib: Option<u64>,
    /// Results file recording the burn (default: none).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Also write the verdict, windows and power in the Prometheus text format (for
    /// node_exporter's textfile collector).
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Serve the windows so far and the latest power, clock and temperature in the
    /// Prometheus text format over HTTP on this port (every interface) while it runs.
    #[arg(long, value_name = "PORT")]
    pub metrics_port: Option<u16>,
    /// No progress lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// For testing the tool: miscompare[@N] (product N changed before its check),
    /// vram-flip (one bit of VRAM flipped), slowdown (the load idles two thirds of the time
    /// from the middle window on, scripted telemetry at full clocks: a fault) or power-cap
    /// (the same slowdown, scripted telemetry at the power limit with the clock down: a cap).
    #[arg(long, value_name = "FAULT")]
    pub inject_fault: Option<crate::measuring::burn::BurnFault>,
    #[command(flatten)]
    pub output: TableOrJson,
}

#[derive(Args, Debug)]
pub struct CalibrationArgs {
    /// The serving model against published serving runs (src/data/serving_points.json): per
    /// GPU, the points fitted on and the held-out ones, each the share within 1.5x and the
    /// median and 10th/90th percentile of estimate / published.
    #[arg(long)]
    pub serving: bool,
    /// With --serving: every point, not the summary.
    #[arg(long, requires = "serving")]
    pub points: bool,
    /// Refit the serving model's per-vendor parameters on the points marked fit and print
    /// them as src/data/serving.json (the held-out points are not used).
    #[arg(long, conflicts_with_all = ["serving", "points"])]
    pub fit_serving: bool,
    #[command(flatten)]
    pub output: CompareOutput,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Results files from `gpuvalue bench`, or directories of them (their *.json files);
    /// with --job llm-serve also serving results (vLLM, SGLang, InferenceX).
    #[arg(required_unless_present = "job")]
    pub results: Vec<PathBuf>,
    /// Scenarios to rank (repeatable; default: all).
    #[arg(long, short = 's')]
    pub scenario: Vec<String>,
    /// Output directory (created if missing): report.html and report.md are written into it,
    /// each atomically; nothing else in it is touched.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// The GPUs a serving results file ran on where it does not say (8xh200-sxm).
    #[arg(long, value_name = "GPUSxGPU", value_parser = crate::value::serving_results::On::parse)]
    pub results_on: Option<crate::value::serving_results::On>,
    #[command(flatten)]
    pub settings: RankSettings,
    /// A job with parameters instead of the scenarios: with --job llm-serve the report also
    /// draws throughput per GPU and cost per million tokens against interactivity.
    #[command(flatten)]
    pub job: JobArgs,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The reference results file.
    pub base: PathBuf,
    /// The results file to judge.
    pub new: PathBuf,
    /// Slow-down (percent) beyond the noise that counts as a regression.
    #[arg(long, default_value_t = 5.0, value_name = "PERCENT", value_parser = percentage)]
    pub threshold: f64,
    /// Compare results of different adapters (otherwise refused).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: CompareOutput,
}

#[derive(Args, Debug, Clone, Default)]
pub struct CatalogSource {
    /// Use this catalog file instead of the embedded one.
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<PathBuf>,
    /// Add (or replace by id/key) entries from these catalog files. Files ending in .csv
    /// are imported as SkyPilot-style CSV catalogs (columns found by header name).
    #[arg(long, value_name = "FILE")]
    pub catalog_add: Vec<PathBuf>,
    /// The date the prices of CSV catalogs were read (CSV files carry none, and an undated
    /// price is not used), e.g. 2026-11-29.
    #[arg(long, value_name = "DATE")]
    pub csv_as_of: Option<String>,
    /// Ignore the price snapshots `catalog update` took: the prices built into the binary
    /// only (the hand-kept rows and the built-in feed snapshots).
    #[arg(long)]
    pub offline: bool,
}

#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only this provider (substring, any case).
    #[arg(long)]
    pub provider: Option<String>,
    /// Only this GPU: a catalog id or name (any case) takes that GPU alone (a10 is the A10,
    /// not the A100s); else every GPU whose id or name holds it, said under the table.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Only this place: a country (code or name: cn, china, us, de), an area (eu, asia,
    /// na, sa, oc, me, af), else a part of the region's name.
    #[arg(long)]
    pub region: Option<String>,
    /// Only GPUs with at least this much memory each, in GB.
    #[arg(long, value_name = "GB", value_parser = gigabytes)]
    pub min_gpu_memory: Option<f64>,
}

#[derive(Args, Debug)]
pub struct CatalogArgs {
    #[command(subcommand)]
    pub action: Option<CatalogAction>,
    #[command(flatten)]
    pub source: CatalogSource,
    #[command(flatten)]
    pub filters: FilterArgs,
    /// Show prices of this pricing model.
    #[arg(long, value_enum, default_value = "on_demand")]
    pub price: crate::market::catalog::PricingModel,
    /// Convert prices to this currency (USD, CNY, EUR, or any the catalog has a rate for).
    #[arg(long, default_value = "USD")]
    pub currency: String,
    #[command(flatten)]
    pub output: TableOrJson,
}

#[derive(Subcommand, Debug)]
pub enum CatalogAction {
    /// Check a catalog file (or, with none, the embedded catalog): errors (rows that cannot
    /// be used) and warnings (suspect rows, stale prices), each naming file, row and field
    /// (a CSV's line and column). Exit status 1 when there are errors.
    Check {
        /// Catalog file to check on its own: JSON, or a SkyPilot-style CSV (checked against
        /// the embedded GPUs and currencies). Without it, the embedded catalog.
        file: Option<PathBuf>,
        /// When a CSV's prices were read (without it every CSV row is reported undated).
        #[arg(long, value_name = "DATE")]
        csv_as_of: Option<String>,
    },
    /// Fetch the public price feeds and write a dated snapshot per source, which `rank`,
    /// `catalog`, `run`, `report` and `burn` then use (`--offline` ignores it). A source
    /// that fails, or whose new data a gate refuses (far fewer rows, GPUs gone), keeps its
    /// last snapshot. Exit status 1 when a source failed or was refused.
    Update(UpdateArgs),
}

#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// Only this source (repeatable); all by default. `--list` names them.
    #[arg(long = "source", value_name = "NAME")]
    pub sources: Vec<String>,
    /// Fetch every feed through a mirror: `https://HOST/PATH?QUERY` is read from
    /// `BASE/HOST/PATH?QUERY` (any static web server over a folder laid out by host).
    #[arg(long, value_name = "BASE", env = "GPUVALUE_MIRROR")]
    pub mirror: Option<String>,
    /// List the sources, their URLs, last success and age; fetch nothing.
    #[arg(long)]
    pub list: bool,
    /// Seconds a single HTTP call may take, retries aside.
    #[arg(long, value_name = "SECONDS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// Largest body read from a feed, in MB.
    #[arg(long, value_name = "MB", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_download: u64,
    /// Take a new snapshot even when a gate refuses it (far fewer rows, GPUs gone).
    #[arg(long)]
    pub force: bool,
}

pub use output::*;

#[derive(Args, Debug, Clone)]
pub struct RankSettings {
    #[command(flatten)]
    pub source: CatalogSource,
    /// Scenario definitions to add to (or replace) the embedded ones.
    #[arg(long, value_name = "FILE")]
    pub scenarios: Option<PathBuf>,
    #[command(flatten)]
    pub filters: FilterArgs,
    /// Pricing model to rank by.
    #[arg(long, value_enum, default_value = "on_demand")]
    pub price: crate::market::catalog::PricingModel,
    /// Currency of prices and costs.
    #[arg(long, default_value = "USD")]
    pub currency: String,
    /// Show only the best N instances.
    #[arg(long, value_name = "N", value_parser = row_count)]
    pub top: Option<usize>,
    /// What this amount (in --currency) buys on each instance: hours and jobs finished.
    #[arg(long, value_name = "AMOUNT", value_parser = budget_amount)]
    pub budget: Option<f64>,
    /// Rank `reported` prices too (articles, forums, quotes: unverified), marked as such;
    /// by default only `list` prices (provider pages, APIs, dated catalog snapshots) rank.
    #[arg(long)]
    pub include_reported: bool,
    /// Rank even when --catalog/--catalog-add files have rows with errors (those rows are
    /// left out and listed); without it such files are refused.
    #[arg(long)]
    pub skip_bad_rows: bool,
    /// Rank the figures of GPUs whose `gpuvalue burn` (a results file among --results)
    /// ended FAIL or ERROR; by default they are left out, and said.
    #[arg(long)]
    pub use_failed: bool,
    /// Use measured figures of hardware adapters that lie outside 20-110% of their GPU's
    /// datasheet peak for that unit as measured; by default they are flagged and left out
    /// (a relabelled software adapter, a shared or broken GPU, or another GPU than named).
    #[arg(long)]
    pub use_implausible: bool,
    /// --price spot: how often the job writes a checkpoint (30m, 2h); an interruption loses
    /// the work since the last one. Serving loses only its requests in flight.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = hours_of)]
    pub checkpoint_every: f64,
    /// --price spot: the time to get a new instance and resume from the checkpoint after an
    /// interruption.
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = hours_of)]
    pub restart_time: f64,
    /// Run the job on N identical instances (training and fine-tuning: data-parallel over
    /// every GPU, the collectives within a node over its link and between nodes over its
    /// published network), or `auto`: the fewest that hold the job. The price is N
    /// instances'. Instance types without a published network rank on one node only.
    #[arg(long, value_name = "N|auto", default_value = "1", value_parser = nodes_of)]
    pub nodes: crate::value::rank::Nodes,
    /// GB the job takes out of the cloud (results, checkpoints, responses), costed at each
    /// provider's published price for data out to the internet (src/data/egress.json); a
    /// provider that publishes none is marked. Default: the job's own (a fine-tune's
    /// weights, a serving job's responses; none for the built-in scenarios).
    #[arg(long, value_name = "GB", allow_negative_numbers = true, value_parser = egress_gb)]
    pub egress_gb: Option<f64>,
    /// Price of a kWh of electricity, in the ranking's currency: each row then says what
    /// its job's electricity costs (hardware you own; a rented price already pays it).
    /// Every row's energy (its GPUs at their datasheet board power) is shown either way.
    #[arg(long, value_name = "PRICE", allow_negative_numbers = true, value_parser = per_kwh)]
    pub electricity_price: Option<f64>,
    /// The facility's power usage effectiveness for --electricity-price (total power over
    /// the IT equipment's; default 1: the GPUs alone).
    #[arg(long, value_name = "P", allow_negative_numbers = true, value_parser = pue_of)]
    pub pue: Option<f64>,
}

#[derive(Args, Debug)]
pub struct RankArgs {
    /// Scenario id: training, inference, int8_inference, hpc, or one from --scenarios.
    #[arg(long, short = 's', default_value = "training")]
    pub scenario: String,
    /// Results files from `gpuvalue bench` (measured figures for their GPUs), or directories
    /// of them (their *.json files); with --job llm-serve also serving results: the result
    /// JSON vLLM's `bench serve` saves, SGLang's `bench_serving` output, InferenceX rows.
    #[arg(long, short = 'r', value_name = "FILE")]
    pub results: Vec<PathBuf>,
    /// The GPUs a serving results file ran on where it does not say: GPUSxGPU, e.g.
    /// 8xh200-sxm.
    #[arg(long, value_name = "GPUSxGPU", value_parser = crate::value::serving_results::On::parse)]
    pub results_on: Option<crate::value::serving_results::On>,
    #[command(flatten)]
    pub settings: RankSettings,
    /// Every ranked row with the figures behind its time (value, datasheet x factor or
    /// measured), the efficiency factors, and every instance not ranked with the reason.
    /// Without it: the ten best, one line each.
    #[arg(long)]
    pub details: bool,
    /// Every way to pay per instance: the cost per job on demand, on spot (expected, with
    /// its interruption risk) and with 1- and 3-year commitments, and the utilisation above
    /// which each commitment beats on demand (--price is then not used).
    #[arg(long, conflicts_with = "details")]
    pub side_by_side: bool,
    /// --side-by-side: the share of a commitment's hours the work uses, in percent (default
    /// 100): a commitment is paid for every hour of its term, so its cost per job is divided
    /// by this share; on demand and spot pay only the hours used. "Spot or 1-year for a job
    /// that runs 60% of the time?" is `--side-by-side --utilisation 60`.
    #[arg(long, value_name = "PERCENT", value_parser = utilisation)]
    pub utilisation: Option<f64>,
    #[command(flatten)]
    pub job: JobArgs,
    #[command(flatten)]
    pub output: RankOutput,
}

/// What kind of job `--job` describes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// Fine-tune an LLM (--method full, lora or qlora) on --tokens of --seq-len sequences.
    LlmFinetune,
    /// Serve an LLM (--precision) to --requests of --prompt-tokens and --output-tokens.
    LlmServe,
}

/// A job with parameters instead of a scenario file (`rank --job`).
#[derive(Args, Debug, Clone)]
pub struct JobArgs {
    /// A job with parameters instead of --scenario; every assumption is printed, and
    /// --print-scenario shows it as a scenario file to edit.
    #[arg(long, value_enum, conflicts_with = "scenario")]
    pub job: Option<JobKind>,
    /// The model: 8b or 70b (Llama 3), 405b (Llama 3.1), llama2-7b, or a Mixture-of-Experts
    /// model from its config.json: deepseek-r1, qwen3-235b-a22b, gpt-oss-120b, gpt-oss-20b,
    /// kimi-k2, llama4-maverick, mixtral-8x7b.
    #[arg(long, default_value = "8b", value_name = "PRESET")]
    pub model: String,
    /// The model's Hugging Face config.json (dense or Mixture-of-Experts; GQA, MLA, sliding
    /// windows; the weights' precision from its quantization_config).
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    pub model_config: Option<std::path::PathBuf>,
    /// Parameters, overriding the preset's count (the shape its family has at that size;
    /// the job is named by it), e.g. 13e9.
    #[arg(long, value_name = "N")]
    pub model_params: Option<f64>,
    /// llm-finetune: tokens trained on.
    #[arg(long, default_value_t = 1e9, value_name = "N")]
    pub tokens: f64,
    /// llm-finetune: full, lora or qlora.
    #[arg(long, value_enum, default_value = "lora")]
    pub method: crate::value::jobs::Method,
    /// llm-finetune: tokens per training sequence.
    #[arg(long, default_value_t = 4096.0, value_name = "N")]
    pub seq_len: f64,
    /// llm-serve: the weights' precision, fp16, fp8, int4 or fp4 (FP4 matrix engines where
    /// the GPU has them: Blackwell, MI355X; FP8 engines elsewhere, said); llm-finetune: the
    /// matmuls' precision, fp16 (BF16/FP16 mixed precision) or fp8 (Transformer Engine's FP8
    /// GEMMs).
    /// Default: as the model's config.json ships it, else fp16.
    #[arg(long, value_enum)]
    pub precision: Option<crate::value::jobs::Precision>,
    /// llm-serve: requests served.
    #[arg(long, default_value_t = 1e6, value_name = "N")]
    pub requests: f64,
    /// llm-serve: a steady rate instead of --requests, in requests per second: the job is
    /// an hour of that traffic, and each row counts the whole instances that keep up.
    #[arg(long, value_name = "PER_S", conflicts_with_all = ["requests", "token_rate"])]
    pub request_rate: Option<f64>,
    /// llm-serve: the same as a rate of output tokens per second (--request-rate times
    /// --output-tokens).
    #[arg(long, value_name = "PER_S", conflicts_with = "requests")]
    pub token_rate: Option<f64>,
    /// llm-serve: prompt tokens per request.
    #[arg(long, default_value_t = 1000.0, value_name = "N")]
    pub prompt_tokens: f64,
    /// llm-serve: output tokens per request.
    #[arg(long, default_value_t = 200.0, value_name = "N")]
    pub output_tokens: f64,
    /// llm-serve: requests in flight per copy of the model, as vLLM's, SGLang's and
    /// InferenceX's clients count them (default: as many as the memory holds, at most 256,
    /// vLLM's max_num_seqs; or the most that meet --interactivity / --ttft-s).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<f64>,
    /// llm-serve: each request decodes at least this many output tokens per second (tokens
    /// per second per user); each instance takes the most requests that still get it.
    #[arg(long, value_name = "TOK_S", conflicts_with = "concurrency")]
    pub interactivity: Option<f64>,
    /// llm-serve: the server's batch limit, requests in flight per copy (vLLM's
    /// max_num_seqs, SGLang's max_running_requests, TensorRT-LLM's max_batch_size; default
    /// 256, vLLM's): a latency target picks a batch under it, never above.
    #[arg(long, value_name = "N")]
    pub max_batch: Option<f64>,
    /// llm-serve: speculative decoding with the model's multi-token-prediction layer
    /// (DeepSeek-V3/R1 ship one): auto (each row takes it where it serves more tokens per
    /// GPU; the layout column says "mtp"), mtp (always), off (never).
    #[arg(long, value_enum, value_name = "MODE")]
    pub speculative: Option<Speculative>,
    /// llm-serve: the engine whose published times to first token the estimate follows:
    /// sglang, tensorrt-llm, vllm or atom (default: every engine's runs pooled; an engine
    /// without enough published runs on a vendor falls back to that pool, and the notes say
    /// which was used).
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<crate::value::scenario::engine::Engine>,
    /// llm-serve: the time to the first token, at most, in seconds.
    #[arg(long, value_name = "SECONDS", conflicts_with = "concurrency")]
    pub ttft_s: Option<f64>,
    /// llm-serve: a hosted API's price, USD per million input and output tokens (e.g.
    /// 0.55/2.19): each row adds the same job through the API and the share of its hours
    /// an instance must be busy to cost less.
    #[arg(long, value_name = "IN/OUT", value_parser = api_price)]
    pub api_price: Option<(f64, f64)>,
    /// llm-serve: per GPU type, the best instance's throughput per GPU and cost per million
    /// tokens at each interactivity from 5 to 300 tokens/s per user (the curve InferenceX
    /// plots), instead of one ranking.
    #[arg(long, conflicts_with_all = ["interactivity", "concurrency"])]
    pub sweep: bool,
    /// llm-serve: fix the layout of each copy of the model, e.g. tp=8 or tp=8,ep=8 or
    /// tp=8,ep=8,dp-attention (default: the layout that serves the most tokens per GPU).
    #[arg(long, value_name = "LAYOUT", value_parser = crate::value::scenario::serving::Parallel::parse)]
    pub parallel: Option<crate::value::scenario::serving::Parallel>,
    /// Print the job (or --scenario) as a scenario file and stop: the schema by example.
    #[arg(long)]
    pub print_scenario: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: AdapterArgs,
    /// The quick suite (what `run` always runs; accepted as `bench` accepts it).
    #[arg(long)]
    pub quick: bool,
    /// Results file for the bench (default results/<host>-<adapter>-<time>.json).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// No progress display.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// How every scenario is ranked (`--top` defaults to 5 here).
    #[command(flatten)]
    pub settings: RankSettings,
}

#[derive(Args, Debug, Clone)]
pub struct AdapterArgs {
    /// Adapter to use: its index from `gpuvalue devices`, part of its name, `all`,
    /// `visible` (the GPUs CUDA_VISIBLE_DEVICES, ROCR/HIP_VISIBLE_DEVICES or Slurm granted,
    /// matched by PCI bus id; else the default, with the reason) or `pci:0000:3b:00.0`.
    /// Default: the best hardware GPU (discrete before integrated), else a software adapter.
    #[arg(long, short = 'a', default_value = "best")]
    pub adapter: AdapterChoice,
    /// Only search this backend.
    #[arg(long, short = 'b', value_enum)]
    pub backend: Option<BackendChoice>,
}

#[derive(Args, Debug)]
pub struct DevicesArgs {
    #[command(flatten)]
    pub select: AdapterArgs,
    #[command(flatten)]
    pub output: TableOrJson,
}

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    pub select: AdapterArgs,
    /// Small sizes and short samples: for CI and laptops (under a minute on lavapipe).
    #[arg(long)]
    pub quick: bool,
    /// Probes to run, comma-separated (default: all).
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = probe_parser(),
        default_values_t = crate::measuring::probes::names().into_iter().map(String::from).collect::<Vec<_>>(),
        hide_default_value = true
    )]
    pub probes: Vec<String>,
    /// Matrix sizes for the matmul probe, comma-separated: N (square) or MxNxK.
    /// Default: 256 doubling up to what the adapter's limits and the time budget allow.
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<crate::measuring::reference::Dims>>,
    /// Time budget in seconds for the whole run on one adapter (default 45 with --quick,
    /// else 600). Probes stop starting new sizes when their share is spent.
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub time_budget: Option<f64>,
    /// Array size in MiB for the stream and transfer probes (default: 4x the last-level
    /// cache where known, else 256 MiB; within the adapter's limits).
    #[arg(long, value_name = "MIB", value_parser = whole_mib)]
    pub array_mib: Option<u64>,
    /// Results file (default results/<host>-<adapter>-<time>.json). With several adapters,
    /// the adapter's index is added before the extension.
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Also write the figures and their power in the Prometheus text format (for
    /// node_exporter's textfile collector).
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// No progress display.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Build every kernel with wgpu's runtime bounds checks (slower; default: kernels whose
    /// indexing is proven in range are built without them).
    #[arg(long)]
    pub checked: bool,
    /// Time with the wall clock even where GPU timestamps exist.
    #[arg(long)]
    pub no_timestamps: bool,
    /// Watchdog: a probe still running this many seconds after it started is stopped at
    /// its next wait on the GPU and marked failed (default: twice the probe's share of the
    /// time budget, plus 120 s).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub probe_timeout: Option<f64>,
    /// Watchdog: GPU work submitted in one go (a timed sample is sized to tens of
    /// milliseconds) that has not finished after this many seconds fails its probe; the run
    /// goes on once the device has drained, for up to 5x this long.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::measuring::bench::DEFAULT_WAIT_TIMEOUT_S, value_parser = positive_seconds)]
    pub wait_timeout: f64,
    /// The cloud instance this machine is, provider:type[:region] (e.g.
    /// aws:p5.48xlarge:us-east-1), checked against the catalog and recorded in the results
    /// file, so `rank --results DIR` can group a fleet's files by instance.
    #[arg(long, value_name = "PROVIDER:TYPE[:REGION]", env = "GPUVALUE_INSTANCE")]
    pub instance: Option<crate::model::InstanceRef>,
    /// The catalog --instance is checked against.
    #[command(flatten)]
    pub catalog: CatalogSource,
    /// For testing the tool: inject one fault, KIND@PROBE, KIND one of oom, compile, lost,
    /// hang, stuck, panic (e.g. `lost@stream`).
    #[arg(long, hide = true, value_name = "KIND@PROBE", value_parser = parse_fault)]
    pub inject_fault: Option<crate::measuring::gpu::fault::FaultSpec>,
}

impl BenchArgs {
    /// The validated options the bench runs with (`args`: the command line, recorded).
    pub fn options(&self, args: Vec<String>) -> crate::measuring::bench::BenchOptions {
        use crate::measuring::bench::{FULL_BUDGET_S, QUICK_BUDGET_S};
        let default_budget = if self.quick {
            QUICK_BUDGET_S
        } else {
            FULL_BUDGET_S
        };
        crate::measuring::bench::BenchOptions {
            adapter: self.select.adapter.clone(),
            backend: self.select.backend,
            quick: self.quick,
            probes: self
                .probes
                .iter()
                .filter_map(|n| crate::measuring::probes::find(n))
                .collect(),
            sizes: self.sizes.clone(),
            time_budget: self
                .time_budget
                .map_or(Duration::from_secs(default_budget), Duration::from_secs_f64),
            array_mib: self.array_mib,
            out: self.out.clone(),
            quiet: self.quiet,
            trusted: !self.checked,
            timestamps: !self.no_timestamps,
            probe_timeout: self.probe_timeout.map(Duration::from_secs_f64),
            wait_timeout: Duration::from_secs_f64(self.wait_timeout),
            inject_fault: self.inject_fault.clone(),
            args,
            // Checked against the catalog by the caller.
            instance: None,
            board_power: Some(crate::value::calibration::board_power_w),
        }
    }
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Results files written by `gpuvalue bench`, or directories of them (their *.json files).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Every probe as measured: each working-set size of the memory hierarchy its own row
    /// (the table gives one row a level found).
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub output: TableOrJson,
}

#[cfg(test)]
mod tests;

/// `--speculative`: how a served model decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Speculative {
    Auto,
    Mtp,
    Off,
}

impl Speculative {
    /// The serving target's choice: None lets each row choose.
    pub fn mtp(self) -> Option<bool> {
        match self {
            Speculative::Auto => None,
            Speculative::Mtp => Some(true),
            Speculative::Off => Some(false),
        }
    }
}
