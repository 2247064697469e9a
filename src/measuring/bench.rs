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

/// One adapter's run: its device, its results file, and what has happened to it so far.
struct AdapterRun<'a> {
    opts: &'a BenchOptions,
    host: &'a HostInfo,
    exec: Exec,
    path: PathBuf,
    results: ResultsFile,
    watcher: run_registry::Watcher,
    bar: Option<ProgressBar>,
    deadline: Instant,
    /// Device memory held before any probe (the baseline for the leak check).
    baseline: Option<(u64, usize)>,
    /// Set when the device can no longer be used: the remaining probes are not run.
    dead: Option<String>,
}

/// The executor an adapter's run measures with.
enum Exec {
    Wgpu {
        adapter: wgpu::Adapter,
        gpu: Box<Gpu>,
    },
    OpenCl(Box<crate::measuring::gpu::opencl::ClGpu>),
}

impl Exec {
    fn open(adapter: &adapter::Adapter, info: &crate::model::AdapterSummary) -> Result<Exec> {
        Ok(match adapter {
            adapter::Adapter::Wgpu(a) => Exec::Wgpu {
                adapter: a.clone(),
                gpu: Box::new(pollster::block_on(Gpu::open(a.clone(), info.clone()))?),
            },
            adapter::Adapter::OpenCl(d) => Exec::OpenCl(Box::new(
                crate::measuring::gpu::opencl::ClGpu::open((**d).clone(), info.clone())?,
            )),
        })
    }

    /// The wgpu device, where this run uses wgpu (watchdog, fault injection, leak checks
    /// and reopening are wgpu's: OpenCL has no way to stop a kernel or count allocations).
    fn gpu(&self) -> Option<&Gpu> {
        match self {
            Exec::Wgpu { gpu, .. } => Some(gpu),
            Exec::OpenCl(_) => None,
        }
    }
}

impl<'a> AdapterRun<'a> {
    /// Opens the device, registers the run and writes the first (empty) results file.
    fn start(
        opts: &'a BenchOptions,
        host: &'a HostInfo,
        list: &adapter::AdapterList,
        idx: usize,
        probes: &[ProbeRef],
        path: PathBuf,
    ) -> Result<AdapterRun<'a>> {
        let info = list.summaries[idx].clone();
        if info.software && !opts.quiet {
            eprintln!(
                "note: {} is a software adapter (the CPU): its figures say nothing about GPU speed",
                term(&info.name)
            );
        }
        let exec = Exec::open(&list.adapters[idx], &info)?;
        match &exec {
            Exec::Wgpu { gpu, .. } => check_adapter_fits(opts, gpu)?,
            Exec::OpenCl(cl) => check_opencl_fits(opts, cl)?,
        }
        let registration = match run_registry::Registration::new(&path, &info.name) {
            Ok(r) => Some(std::sync::Arc::new(r)),
            Err(e) => {
                let e = term_text(&format!("{e:#}"));
                eprintln!("warning: {e}; other gpuvalue runs will not be detected");
                None
            }
        };
        let watcher = run_registry::Watcher::new(registration, Duration::from_millis(500));
        let mut results = ResultsFile::new(host.clone(), info.clone(), opts.run_options(probes));
        results.instance = opts.instance.clone();
        run_registry::merge(&mut results.concurrent_runs, watcher.take());
        results.save(&path)?;
        Ok(AdapterRun {
            bar: progress_bar(opts, probes.len(), &info.name),
            deadline: Instant::now() + opts.time_budget,
            baseline: exec.gpu().and_then(Gpu::memory_in_use),
            opts,
            host,
            exec,
            path,
            results,
            watcher,
            dead: None,
        })
    }

    /// Runs one probe under the watchdog, the fault injector and a panic guard, then deals
    /// with what it left: a halted device, leaked memory, other runs seen meanwhile.
    fn probe(&mut self, probe: ProbeRef, left: &[ProbeRef]) -> Result<()> {
        let name = probe.name();
        if let Some(why) = &self.dead {
            let r = ProbeResult::placeholder(name)
                .with_status(Status::Skipped, format!("not run: {why}"));
            self.results.probes.push(r);
            return self.results.save(&self.path);
        }
        // This probe's share of what is left: time a fast probe did not use rolls over.
        let budget = probes::budget(
            probe,
            self.deadline.saturating_duration_since(Instant::now()),
            left,
        );
        let timeout = self
            .opts
            .probe_timeout
            .unwrap_or_else(|| default_probe_timeout(budget));
        let others_before = self.watcher.take();
        let first = self.results.probes.len();
        let fault = self.opts.inject_fault.as_ref().filter(|f| f.probe == name);
        if let Some(gpu) = self.exec.gpu() {
            gpu.set_watchdog(Some(Watchdog::new(self.opts.wait_timeout, timeout)));
            gpu.arm(fault.map(|f| f.fault));
        } else if let Some(f) = fault {
            let why = format!(
                "--inject-fault {}: fault injection works on wgpu adapters only",
                f.fault.name()
            );
            self.results
                .incidents
                .push(Incident::new(name, "fault_not_fired", why));
        }
        let outcome = self.guarded(probe, budget)?;
        if let Some(gpu) = self.exec.gpu() {
            gpu.set_watchdog(None);
            self.note_unfired_fault(name);
        }
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        let mut reopen = None;
        if let Err(msg) = outcome {
            let r = ProbeResult::placeholder(name)
                .with_status(Status::Failed, format!("the probe panicked: {msg}"));
            self.results.probes.push(r);
            self.results
                .incidents
                .push(Incident::new(name, "panic", msg));
            reopen = Some(format!("after a panic in the {name} probe"));
        }
        reopen = self.after_halt(name).or(reopen);
        if let Some(why) = reopen {
            self.reopen(name, &why);
        }
        self.check_leaks(name);
        self.note_concurrent(others_before, first);
        self.results.updated = now_rfc3339();
        self.results.save(&self.path)
    }

    /// The probe itself, with its results annotated and saved as they come; a panic comes
    /// back as its message.
    fn guarded(&mut self, probe: ProbeRef, budget: Duration) -> Result<Result<(), String>> {
        let AdapterRun {
            opts,
            host,
            exec,
            results,
            path,
            bar,
            ..
        } = self;
        let progress = |msg: &str| {
            if let Some(b) = bar.as_ref() {
                b.set_message(msg.to_string());
            }
        };
        let mut save_err = None;
        let run = opts.run_ctx(host, budget, &progress);
        let outcome = match exec {
            Exec::Wgpu { gpu, .. } => {
                let timer = Timer::new(gpu, opts.timestamps);
                let ctx = Ctx::new(gpu, &timer, run);
                let mut emit = |r: ProbeResult| {
                    if suite::record(results, r, timer.fallback_reason(), ctx.reduced.take())
                        && let Err(e) = results.save(path)
                    {
                        save_err.get_or_insert(e);
                    }
                };
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pollster::block_on(probe.run(&ctx, &mut emit))
                }))
            }
            Exec::OpenCl(cl) => {
                let ctx = probes::ClCtx { cl, run };
                let mut emit = |r: ProbeResult| {
                    if suite::record(results, r, cl.fallback_reason(), ctx.reduced.take())
                        && let Err(e) = results.save(path)
                    {
                        save_err.get_or_insert(e);
                    }
                };
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pollster::block_on(probe.run_opencl(&ctx, &mut emit))
                }))
            }
        };
        if let Some(e) = save_err {
            return Err(e);
        }
        Ok(outcome.map_err(|p| panic_message(p.as_ref())))
    }

    /// A fault the probe never reached (no allocation, no pipeline, no wait) is recorded,
    /// or a test could pass without its fault.
    fn note_unfired_fault(&mut self, name: &str) {
        let Some(gpu) = self.exec.gpu() else {
            return;
        };
        if let Some(f) = gpu.armed() {
            self.results.incidents.push(Incident::new(
                name,
                "fault_not_fired",
                format!(
                    "the injected fault `{}` found nothing to act on in this probe",
                    f.name()
                ),
            ));
        }
        gpu.arm(None);
    }

    /// Records a watchdog stop or a lost device; waits for a wedged device to drain. Gives
    /// the reason to reopen the device, if it must be.
    fn after_halt(&mut self, name: &str) -> Option<String> {
        let wait = self.opts.wait_timeout;
        let Exec::Wgpu { gpu, .. } = &self.exec else {
            return None;
        };
        match gpu.halted() {
            Some(Halt::Wedged(m)) => {
                self.results
                    .incidents
                    .push(Incident::new(name, "watchdog", m));
                if let Some(b) = &self.bar {
                    b.set_message("waiting for the device to finish the stopped work");
                }
                let t0 = Instant::now();
                if gpu.drain(wait * 5) {
                    let d = format!(
                        "the device finished the stopped work {:.1} s later; the run goes on",
                        t0.elapsed().as_secs_f64()
                    );
                    self.results
                        .incidents
                        .push(Incident::new(name, "drained", d));
                } else {
                    let why = format!(
                        "the device did not finish the work stopped by the watchdog in the {name} probe within a further {:.0} s",
                        (wait * 5).as_secs_f64()
                    );
                    let i = Incident::new(name, "unresponsive", why.clone());
                    self.results.incidents.push(i);
                    self.dead = Some(why);
                }
                None
            }
            Some(Halt::Lost(m)) => {
                self.results
                    .incidents
                    .push(Incident::new(name, "device_lost", m));
                Some(format!("after the device was lost in the {name} probe"))
            }
            None => None,
        }
    }

    /// Opens a new device on the same adapter, or marks the run dead if that fails.
    fn reopen(&mut self, name: &str, why: &str) {
        if self.dead.is_some() {
            return;
        }
        let Exec::Wgpu { adapter, gpu } = &mut self.exec else {
            return;
        };
        match pollster::block_on(Gpu::open(adapter.clone(), gpu.info.clone())) {
            Ok(g) => {
                **gpu = g;
                self.baseline = gpu.memory_in_use();
                let d = format!("a new device was opened on the adapter {why}");
                self.results
                    .incidents
                    .push(Incident::new(name, "reopened", d));
            }
            Err(e) => self.dead = Some(format!("the device could not be reopened {why}: {e:#}")),
        }
    }

    /// Leak check: what the probe allocated must be released when it ends.
    fn check_leaks(&mut self, name: &str) {
        let (Some((base, _)), Some((now, count))) =
            (self.baseline, self.exec.gpu().and_then(Gpu::memory_in_use))
        else {
            return;
        };
        if self.dead.is_some() {
            return;
        }
        self.results.memory.push(MemoryCheck {
            probe: name.into(),
            allocated_bytes: now,
            allocations: count,
            baseline_bytes: base,
        });
        if now > base + MEMORY_SLACK {
            self.results.incidents.push(Incident::new(
                name,
                "memory_left",
                format!(
                    "{:.1} MiB of device memory still allocated after the probe (baseline {:.1} MiB)",
                    now as f64 / 1048576.0,
                    base as f64 / 1048576.0
                ),
            ));
        }
    }

    /// Another bench measuring at the same time distorts both: say so on every figure the
    /// probe produced.
    fn note_concurrent(&mut self, mut others: Vec<run_registry::OtherRun>, first: usize) {
        run_registry::merge(&mut others, self.watcher.take());
        if others.is_empty() {
            return;
        }
        let pids: Vec<String> = others.iter().map(|o| o.pid.to_string()).collect();
        let w = format!(
            "another gpuvalue bench was running during this probe (pid {}): timings may be distorted",
            pids.join(", ")
        );
        for r in &mut self.results.probes[first..] {
            r.warnings.push(w.clone());
        }
        run_registry::merge(&mut self.results.concurrent_runs, others);
    }

    /// The peak is the ceiling: where a matmul's median beat the peak probe's (a CPU
    /// device's clock or its other tenants moved between the two), the peak probe runs once
    /// more and the higher of its two medians stands, the other recorded in its params. A
    /// peak still below stays below, and the file's caveat says so.
    fn peak_again_if_beaten(&mut self, probes: &[ProbeRef]) -> Result<()> {
        let Some(&peak) = probes.iter().find(|p| p.name() == "peak") else {
            return Ok(());
        };
        let (Some(first), Some(mm)) = (
            self.results.best(FigureKey::PeakF32),
            self.results.best(FigureKey::MatmulF32),
        ) else {
            return Ok(());
        };
        if mm <= first {
            return Ok(());
        }
        let at = self
            .results
            .probes
            .iter()
            .position(|p| p.figure == Some(FigureKey::PeakF32))
            .expect("a peak figure has its result");
        let before = self.results.probes.len();
        self.probe(peak, &[])?;
        let again: Vec<ProbeResult> = self.results.probes.drain(before..).collect();
        let Some(second) = again
            .into_iter()
            .find(|p| p.figure == Some(FigureKey::PeakF32) && p.status == Status::Ok)
        else {
            return self.results.save(&self.path);
        };
        let second_median = second.value.as_ref().map_or(0.0, |v| v.median);
        let why = format!(
            "measured twice: matmul_f32 reached {mm:.1} GFLOPS above the first peak's median"
        );
        let (other, median) = if second_median > first {
            self.results.probes[at] = second;
            ("first_run_median", first)
        } else {
            ("second_run_median", second_median)
        };
        let kept = &mut self.results.probes[at];
        kept.params.insert(other.into(), median.into());
        kept.params.insert("remeasured".into(), why.into());
        self.results.save(&self.path)
    }

    /// Adds the double-precision summary, marks the file complete (or interrupted) and
    /// writes it a last time.
    fn finish(mut self) -> Result<BenchOutcome> {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        suite::finish(&mut self.results);
        self.results.save(&self.path)?;
        if self.dead.is_some()
            && matches!(self.exec.gpu().and_then(Gpu::halted), Some(Halt::Wedged(_)))
        {
            // Dropping a device with work still queued waits for that work without bound;
            // the device is unusable, so it is left to the process's exit.
            std::mem::forget(self.exec);
        }
        Ok(BenchOutcome {
            path: self.path,
            results: self.results,
        })
    }
}

/// Device memory a probe may leave allocated without a warning (allocator block rounding).
const MEMORY_SLACK: u64 = 1 << 20;
