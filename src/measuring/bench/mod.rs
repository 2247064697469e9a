//! The bench driver: open each chosen adapter, run the probes in turn, rewrite the results
//! file atomically after every probe result, show progress on a terminal.

use crate::figure::FigureKey;
use crate::files::now_rfc3339;
use crate::host::HostInfo;
use crate::interrupt;
use crate::measuring::gpu::context::{Halt, Watchdog};
use crate::measuring::gpu::fault::FaultSpec;
use crate::measuring::gpu::{AdapterChoice, BackendChoice, Gpu, Timer, adapter};
use crate::measuring::probes::{self, Ctx, ProbeRef, RunCtx, measure::Plan};
use crate::measuring::reference::Dims;
use crate::measuring::run_registry;
use crate::measuring::suite;
use crate::results::{Incident, MemoryCheck, ProbeResult, ResultsFile, RunOptions, Status};
use crate::text::{term, term_text};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod adapter_run;
use adapter_run::*;

/// What one adapter's run produced.
pub struct BenchOutcome {
    pub path: PathBuf,
    pub results: ResultsFile,
}

impl BenchOutcome {
    pub fn interrupted(&self) -> bool {
        self.results.interrupted
    }

    pub fn any_failed(&self) -> bool {
        self.results
            .probes
            .iter()
            .any(|p| p.status == Status::Failed)
    }
}

fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    out.trim_matches('-').chars().take(40).collect()
}

fn default_path(host: &HostInfo, name: &str) -> PathBuf {
    let stamp = now_rfc3339().replace([':', '-'], "").replace('T', "-");
    let stamp = stamp.trim_end_matches('Z');
    PathBuf::from("results").join(format!(
        "{}-{}-{}.json",
        sanitize(&host.hostname),
        sanitize(name),
        stamp
    ))
}

fn out_path(
    out: Option<&Path>,
    host: &HostInfo,
    info: &adapter::AdapterSummary,
    several: bool,
) -> PathBuf {
    match out {
        Some(p) if several => {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let ext = p
                .extension()
                .map(|e| format!(".{}", e.to_string_lossy()))
                .unwrap_or_default();
            p.with_file_name(format!("{stem}-{}{ext}", info.index))
        }
        Some(p) => p.to_path_buf(),
        None => default_path(host, &info.name),
    }
}

/// Checks up front that the output file can be written, so a long run does not end in an
/// I/O error. `given`: the user named the file (`--out`); else it is the default place, and
/// the message says so instead of blaming an option never typed.
pub fn check_writable(path: &Path, given: bool) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let what = if given {
        format!("--out {}", path.display())
    } else {
        format!(
            "the results file {} (the default place; --out FILE puts it elsewhere)",
            path.display()
        )
    };
    if !dir.exists() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{what}: cannot create directory {}", dir.display()))?;
    }
    if path.is_dir() {
        bail!("{what}: is a directory; give a file name");
    }
    let probe = dir.join(format!(".gpuvalue-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("{what}: directory {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The default watchdog for a probe given its share of the time budget.
fn default_probe_timeout(budget: Duration) -> Duration {
    budget * 2 + Duration::from_secs(120)
}

/// Takes the output lock for each path. A default (generated) name that another run holds
/// or that exists already gets a numeric suffix; a name the user gave is refused instead.
/// Without a usable registry (a read-only temp directory, say) the run goes ahead
/// unlocked, with a warning.
fn lock_outputs(
    paths: Vec<PathBuf>,
    generated: bool,
) -> Result<Vec<(PathBuf, Option<run_registry::OutputLock>)>> {
    let unlocked = |e: anyhow::Error| {
        let e = term_text(&format!("{e:#}"));
        eprintln!("warning: {e}; the results file is not locked against other runs");
        None
    };
    let mut out = Vec::new();
    for p in paths {
        if !generated {
            let lock = match run_registry::OutputLock::acquire(&p) {
                Ok(l) => Some(l),
                Err(run_registry::LockError::Held(e)) => return Err(e),
                Err(run_registry::LockError::Unavailable(e)) => unlocked(e),
            };
            out.push((p, lock));
            continue;
        }
        let mut n = 1;
        loop {
            let candidate = if n == 1 {
                p.clone()
            } else {
                let stem = p.file_stem().unwrap_or_default().to_string_lossy();
                p.with_file_name(format!("{stem}-{n}.json"))
            };
            if !candidate.exists() {
                match run_registry::OutputLock::acquire(&candidate) {
                    Ok(l) => {
                        out.push((candidate, Some(l)));
                        break;
                    }
                    Err(run_registry::LockError::Held(_)) => {}
                    Err(run_registry::LockError::Unavailable(e)) => {
                        out.push((candidate, unlocked(e)));
                        break;
                    }
                }
            }
            n += 1;
            if n > 1000 {
                bail!("{}: no free results file name", p.display());
            }
        }
    }
    Ok(out)
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// What a bench was asked to do, validated (built from the command line by `cli`; the
/// bench never sees clap types).
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub adapter: AdapterChoice,
    pub backend: Option<BackendChoice>,
    /// Small sizes and short samples.
    pub quick: bool,
    /// The probes to run, in this order.
    pub probes: Vec<ProbeRef>,
    /// Matmul sizes, else each probe picks its own.
    pub sizes: Option<Vec<Dims>>,
    /// Time budget for the whole run on one adapter.
    pub time_budget: Duration,
    pub array_mib: Option<u64>,
    /// Results file; generated under results/ when absent.
    pub out: Option<PathBuf>,
    pub quiet: bool,
    /// Build proven-in-range kernels without runtime bounds checks.
    pub trusted: bool,
    /// Use GPU timestamps where the adapter has them.
    pub timestamps: bool,
    /// Watchdog for a whole probe (default: from its budget).
    pub probe_timeout: Option<Duration>,
    /// Watchdog for one wait on the GPU.
    pub wait_timeout: Duration,
    pub inject_fault: Option<FaultSpec>,
    /// The command line, recorded in the results file.
    pub args: Vec<String>,
    /// The catalog instance this machine is (checked by the caller), recorded.
    pub instance: Option<crate::model::InstanceRef>,
    /// An adapter's datasheet board power, W (given by the caller, which knows the
    /// catalog): the bound on its power readings.
    pub board_power: Option<fn(&crate::model::AdapterSummary) -> Option<f64>>,
}

impl BenchOptions {
    /// The quick suite of every probe, as the main job runs it.
    pub fn quick(adapter: AdapterChoice, backend: Option<BackendChoice>) -> BenchOptions {
        BenchOptions {
            adapter,
            backend,
            quick: true,
            probes: probes::REGISTRY.to_vec(),
            sizes: None,
            time_budget: Duration::from_secs(QUICK_BUDGET_S),
            array_mib: None,
            out: None,
            quiet: false,
            trusted: true,
            timestamps: true,
            probe_timeout: None,
            wait_timeout: Duration::from_secs_f64(DEFAULT_WAIT_TIMEOUT_S),
            inject_fault: None,
            args: std::env::args().collect(),
            instance: None,
            board_power: None,
        }
    }

    /// The executor-independent part of a probe's context.
    fn run_ctx<'a>(
        &self,
        host: &'a HostInfo,
        budget: Duration,
        progress: &'a dyn Fn(&str),
    ) -> RunCtx<'a> {
        RunCtx {
            plan: if self.quick {
                Plan::quick()
            } else {
                Plan::full()
            },
            quick: self.quick,
            sizes: self.sizes.clone(),
            deadline: Instant::now() + budget,
            trusted: self.trusted,
            host,
            progress,
            array_bytes: self.array_mib.map(|m| m << 20),
            reduced: Default::default(),
        }
    }

    fn run_options(&self, probes: &[ProbeRef]) -> RunOptions {
        RunOptions {
            quick: self.quick,
            probes: probes.iter().map(|p| p.name().to_string()).collect(),
            sizes: self
                .sizes
                .as_ref()
                .map(|v| v.iter().map(Dims::to_string).collect()),
            array_mib: self.array_mib,
            time_budget_s: self.time_budget.as_secs_f64(),
            trusted_shaders: self.trusted,
            timestamps: self.timestamps,
            args: self.args.clone(),
        }
    }
}

/// The default time budget of a quick run, seconds (a full run: `FULL_BUDGET_S`).
pub const QUICK_BUDGET_S: u64 = 45;
pub const FULL_BUDGET_S: u64 = 600;
/// The default watchdog for one wait on the GPU, seconds (`--wait-timeout`).
pub const DEFAULT_WAIT_TIMEOUT_S: f64 = 60.0;

/// Runs the bench on every chosen adapter in turn: one results file each, rewritten after
/// every probe result.
pub fn run(opts: &BenchOptions) -> Result<Vec<BenchOutcome>> {
    let probes = probes::dedup(&opts.probes);
    if let Some(f) = &opts.inject_fault
        && !probes.iter().any(|p| p.name() == f.probe)
    {
        bail!(
            "--inject-fault {}@{}: the {} probe is not in --probes",
            f.fault.name(),
            f.probe,
            f.probe
        );
    }
    let list = adapter::enumerate(opts.backend);
    let chosen = list.select(&opts.adapter)?;
    let host = HostInfo::detect();
    let outputs = prepare_outputs(opts, &host, &list, &chosen)?;
    let mut outcomes = Vec::new();
    for (&idx, (path, _lock)) in chosen.iter().zip(outputs) {
        // A request before the first adapter opened still leaves that adapter's file,
        // empty and marked interrupted: every interrupted run says so in its file.
        if interrupt::requested() && !outcomes.is_empty() {
            break;
        }
        let mut run = AdapterRun::start(opts, &host, &list, idx, &probes, path)?;
        for i in 0..probes.len() {
            if interrupt::requested() {
                break;
            }
            run.probe(probes[i], &probes[i..])?;
        }
        if !interrupt::requested() {
            run.peak_again_if_beaten(&probes)?;
        }
        outcomes.push(run.finish()?);
    }
    Ok(outcomes)
}

/// Checks every output path before the first probe runs, and locks it for this run.
fn prepare_outputs(
    opts: &BenchOptions,
    host: &HostInfo,
    list: &adapter::AdapterList,
    chosen: &[usize],
) -> Result<Vec<(PathBuf, Option<run_registry::OutputLock>)>> {
    let several = chosen.len() > 1;
    let paths: Vec<PathBuf> = chosen
        .iter()
        .map(|&i| out_path(opts.out.as_deref(), host, &list.summaries[i], several))
        .collect();
    for p in &paths {
        check_writable(p, opts.out.is_some())?;
    }
    lock_outputs(paths, opts.out.is_none())
}

/// Refuses options the adapter cannot honour before anything is measured.
fn check_adapter_fits(opts: &BenchOptions, gpu: &Gpu) -> Result<()> {
    let info = &gpu.info;
    for &d in opts.sizes.iter().flatten() {
        probes::matmul::check_fits(gpu, d)
            .with_context(|| format!("--sizes {}x{}x{} on adapter {}", d.m, d.n, d.k, info))?;
    }
    if let Some(mib) = opts.array_mib {
        let limit = gpu.limits.max_buffer_size;
        if mib << 20 > limit {
            bail!(
                "--array-mib {mib}: larger than adapter {}'s max_buffer_size ({} MiB)",
                info,
                limit >> 20
            );
        }
    }
    Ok(())
}

/// Refuses options an OpenCL device cannot honour before anything is measured.
fn check_opencl_fits(opts: &BenchOptions, cl: &crate::measuring::gpu::opencl::ClGpu) -> Result<()> {
    let limit = cl.info.limits.max_buffer_size;
    for &d in opts.sizes.iter().flatten() {
        let bytes = (d.m.max(d.n) * d.k.max(d.n) * 8) as u64;
        if bytes > limit {
            bail!(
                "--sizes {}x{}x{}: a matrix of {} MiB is over device {}'s largest allocation ({} MiB)",
                d.m,
                d.n,
                d.k,
                bytes >> 20,
                cl.info,
                limit >> 20
            );
        }
    }
    if let Some(mib) = opts.array_mib
        && mib << 20 > limit
    {
        bail!(
            "--array-mib {mib}: larger than device {}'s largest allocation ({} MiB)",
            cl.info,
            limit >> 20
        );
    }
    Ok(())
}

fn progress_bar(opts: &BenchOptions, probes: usize, name: &str) -> Option<ProgressBar> {
    if opts.quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = ProgressBar::new(probes as u64);
    b.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {pos}/{len} probes  {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    b.enable_steady_tick(Duration::from_millis(120));
    b.set_prefix(name.to_string());
    Some(b)
}

/// Device memory a probe may leave allocated without a warning (allocator block rounding).
const MEMORY_SLACK: u64 = 1 << 20;
