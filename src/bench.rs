//! The bench driver: open each chosen adapter, run the probes in turn, rewrite the results
//! file atomically after every probe result, show progress on a terminal.

use crate::cli::BenchArgs;
use crate::gpu::context::{Halt, Watchdog};
use crate::gpu::{Gpu, Timer, adapter};
use crate::host::HostInfo;
use crate::interrupt;
use crate::probes::{self, Ctx, ProbeKind, measure::Plan};
use crate::results::{
    Incident, MemoryCheck, ProbeResult, ResultsFile, RunOptions, SCHEMA_VERSION, Status, ToolInfo,
    now_rfc3339,
};
use crate::runs;
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
    args: &BenchArgs,
    host: &HostInfo,
    info: &adapter::AdapterSummary,
    several: bool,
) -> PathBuf {
    match &args.out {
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
        Some(p) => p.clone(),
        None => default_path(host, &info.name),
    }
}

/// Checks up front that the output file can be written, so a long run does not end in an
/// I/O error.
fn check_writable(path: &Path) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        std::fs::create_dir_all(dir).with_context(|| {
            format!(
                "--out {}: cannot create directory {}",
                path.display(),
                dir.display()
            )
        })?;
    }
    if path.is_dir() {
        bail!("--out {}: is a directory; give a file name", path.display());
    }
    let probe = dir.join(format!(".gpuvalue-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| {
        format!(
            "--out {}: directory {} is not writable",
            path.display(),
            dir.display()
        )
    })?;
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
) -> Result<Vec<(PathBuf, Option<runs::OutputLock>)>> {
    let unlocked = |e: anyhow::Error| {
        eprintln!("warning: {e:#}; the results file is not locked against other runs");
        None
    };
    let mut out = Vec::new();
    for p in paths {
        if !generated {
            let lock = match runs::OutputLock::acquire(&p) {
                Ok(l) => Some(l),
                Err(runs::LockError::Held(e)) => return Err(e),
                Err(runs::LockError::Unavailable(e)) => unlocked(e),
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
                match runs::OutputLock::acquire(&candidate) {
                    Ok(l) => {
                        out.push((candidate, Some(l)));
                        break;
                    }
                    Err(runs::LockError::Held(_)) => {}
                    Err(runs::LockError::Unavailable(e)) => {
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

pub fn run(args: &BenchArgs, raw_args: Vec<String>) -> Result<Vec<BenchOutcome>> {
    let time_budget = args
        .time_budget
        .unwrap_or(if args.quick { 45.0 } else { 600.0 });
    if !(time_budget.is_finite() && time_budget > 0.0) {
        bail!("--time-budget {time_budget}: expected a positive number of seconds");
    }
    if let Some(t) = args.probe_timeout
        && !(t.is_finite() && t > 0.0)
    {
        bail!("--probe-timeout {t}: expected a positive number of seconds");
    }
    if !(args.wait_timeout.is_finite() && args.wait_timeout > 0.0) {
        bail!(
            "--wait-timeout {}: expected a positive number of seconds",
            args.wait_timeout
        );
    }
    let wait_timeout = Duration::from_secs_f64(args.wait_timeout);
    if args.array_mib == Some(0) {
        bail!("--array-mib 0: expected at least 1 MiB");
    }
    let list = adapter::enumerate(args.select.backend);
    let chosen = list.select(&args.select.adapter)?;
    let host = HostInfo::detect();
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let several = chosen.len() > 1;
    let mut outcomes = Vec::new();
    // Check every output path before the first probe runs, and lock it for this run.
    let paths: Vec<PathBuf> = chosen
        .iter()
        .map(|&i| out_path(args, &host, &list.summaries[i], several))
        .collect();
    for p in &paths {
        check_writable(p)?;
    }
    let locked = lock_outputs(paths, args.out.is_none())?;
    let mut probes_sorted: Vec<ProbeKind> = Vec::new();
    for k in &args.probes {
        if !probes_sorted.contains(k) {
            probes_sorted.push(*k);
        }
    }
    if let Some(f) = args.inject_fault
        && !probes_sorted.contains(&f.probe)
    {
        bail!(
            "--inject-fault {}@{}: the {} probe is not in --probes",
            f.fault.name(),
            f.probe.name(),
            f.probe.name()
        );
    }
    for (&idx, (path, _lock)) in chosen.iter().zip(locked) {
        if interrupt::requested() {
            break;
        }
        let info = list.summaries[idx].clone();
        if info.software && !args.quiet {
            eprintln!(
                "note: {} is a software adapter (the CPU): its figures say nothing about GPU speed",
                info.name
            );
        }
        let mut gpu = Gpu::open(list.adapters[idx].clone(), info.clone())?;
        if let Some(sizes) = &args.sizes {
            for &d in sizes {
                probes::matmul::check_fits(&gpu, d).with_context(|| {
                    format!("--sizes {}x{}x{} on adapter {}", d.m, d.n, d.k, info)
                })?;
            }
        }
        if let Some(mib) = args.array_mib {
            let limit = gpu.limits.max_buffer_size;
            if mib << 20 > limit {
                bail!(
                    "--array-mib {mib}: larger than adapter {}'s max_buffer_size ({} MiB)",
                    info,
                    limit >> 20
                );
            }
        }
        let registration = match runs::Registration::new(&path, &info.name) {
            Ok(r) => Some(std::sync::Arc::new(r)),
            Err(e) => {
                eprintln!("warning: {e:#}; other gpuvalue runs will not be detected");
                None
            }
        };
        let watcher = runs::Watcher::new(registration, Duration::from_millis(500));
        let mut results = ResultsFile {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::current(),
            created: now_rfc3339(),
            updated: now_rfc3339(),
            complete: false,
            host: host.clone(),
            adapter: info.clone(),
            options: RunOptions {
                quick: args.quick,
                probes: probes_sorted.iter().map(|k| k.name().to_string()).collect(),
                sizes: args.sizes.as_ref().map(|v| {
                    v.iter()
                        .map(|d| format!("{}x{}x{}", d.m, d.n, d.k))
                        .collect()
                }),
                array_mib: args.array_mib,
                time_budget_s: time_budget,
                trusted_shaders: !args.checked,
                timestamps: !args.no_timestamps,
                args: raw_args.clone(),
            },
            probes: Vec::new(),
            interrupted: false,
            incidents: Vec::new(),
            concurrent_runs: Vec::new(),
            memory: Vec::new(),
        };
        runs::merge(&mut results.concurrent_runs, watcher.take());
        results.save(&path)?;
        let bar = if show_progress {
            let b = ProgressBar::new(probes_sorted.len() as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {pos}/{len} probes  {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(120));
            b.set_prefix(info.name.clone());
            Some(b)
        } else {
            None
        };
        let progress = |msg: &str| {
            if let Some(b) = &bar {
                b.set_message(msg.to_string());
            }
        };
        let run_deadline = Instant::now() + Duration::from_secs_f64(time_budget);
        // Device memory held before any probe (the baseline for the leak check).
        let mut baseline = gpu.memory_in_use();
        // Set when the device can no longer be used: the remaining probes are not run.
        let mut dead: Option<String> = None;
        let mut save_err = None;
        for (pi, kind) in probes_sorted.iter().enumerate() {
            if interrupt::requested() {
                break;
            }
            let name = kind.name();
            if let Some(why) = &dead {
                results.probes.push(
                    ProbeResult::new(name, format!("{name} probe"), "", true)
                        .with_status(Status::Skipped, format!("not run: {why}")),
                );
                results.save(&path)?;
                continue;
            }
            // This probe's share of what is left: time a fast probe did not use rolls over.
            let left = run_deadline.saturating_duration_since(Instant::now());
            let budget = kind.budget(left, &probes_sorted[pi..]);
            let timeout = args
                .probe_timeout
                .map(Duration::from_secs_f64)
                .unwrap_or_else(|| default_probe_timeout(budget));
            let others_before = watcher.take();
            let first = results.probes.len();
            gpu.set_watchdog(Some(Watchdog::new(wait_timeout, timeout)));
            gpu.arm(
                args.inject_fault
                    .filter(|f| f.probe == *kind)
                    .map(|f| f.fault),
            );
            let outcome = {
                let timer = Timer::new(&gpu, !args.no_timestamps);
                let ctx = Ctx {
                    gpu: &gpu,
                    timer: &timer,
                    plan: if args.quick {
                        Plan::quick()
                    } else {
                        Plan::full()
                    },
                    quick: args.quick,
                    sizes: args.sizes.clone(),
                    deadline: Instant::now() + budget,
                    trusted: !args.checked,
                    host: &host,
                    progress: &progress,
                    faults: Default::default(),
                    array_bytes: args.array_mib.map(|m| m << 20),
                };
                let mut emit = |mut r: ProbeResult| {
                    // What was cut short by Ctrl-C is not a finding: keep only what finished.
                    if interrupt::requested() && r.status != Status::Ok {
                        return;
                    }
                    // How the timer ended up timing: recorded beside the timing; a surprise
                    // (timestamps that disagreed on a hardware adapter) is also a warning.
                    if let Some(reason) = timer.fallback_reason() {
                        if let Some(t) = r.timing.as_mut()
                            && t.note.is_none()
                        {
                            t.note = Some(reason.to_string());
                        }
                        if !gpu.info.software && !r.warnings.iter().any(|w| w == reason) {
                            r.warnings.push(reason.to_string());
                        }
                    }
                    if let Some(v) = &r.value
                        && v.n > 1
                        && v.rel_spread() > crate::stats::WIDE_SPREAD
                    {
                        r.warnings.push(format!(
                            "wide spread: {:.3}..{:.3} {} ({:.0}% of the median); rerun on an idle machine",
                            v.min,
                            v.max,
                            r.unit,
                            100.0 * v.rel_spread()
                        ));
                    }
                    results.probes.push(r);
                    results.updated = now_rfc3339();
                    if let Err(e) = results.save(&path) {
                        save_err.get_or_insert(e);
                    }
                };
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    probes::run(*kind, &ctx, &mut emit)
                }))
            };
            gpu.set_watchdog(None);
            if let Some(f) = gpu.armed() {
                // The probe never did what the fault targets (no allocation, no pipeline,
                // no wait): say so, or a test could pass without its fault.
                results.incidents.push(Incident::new(
                    name,
                    "fault_not_fired",
                    format!(
                        "the injected fault `{}` found nothing to act on in this probe",
                        f.name()
                    ),
                ));
            }
            gpu.arm(None);
            if let Some(b) = &bar {
                b.inc(1);
            }
            if let Some(e) = save_err.take() {
                return Err(e);
            }
            let mut reopen = None;
            if let Err(p) = outcome {
                let msg = panic_message(p.as_ref());
                results.probes.push(
                    ProbeResult::new(name, format!("{name} probe"), "", true)
                        .with_status(Status::Failed, format!("the probe panicked: {msg}")),
                );
                results
                    .incidents
                    .push(Incident::new(name, "panic", msg.clone()));
                reopen = Some(format!("after a panic in the {name} probe"));
            }
            match gpu.halted() {
                Some(Halt::Wedged(m)) => {
                    results
                        .incidents
                        .push(Incident::new(name, "watchdog", m.clone()));
                    progress("waiting for the device to finish the stopped work");
                    let t0 = Instant::now();
                    if gpu.drain(wait_timeout * 5) {
                        results.incidents.push(Incident::new(
                            name,
                            "drained",
                            format!(
                                "the device finished the stopped work {:.1} s later; the run goes on",
                                t0.elapsed().as_secs_f64()
                            ),
                        ));
                    } else {
                        let why = format!(
                            "the device did not finish the work stopped by the watchdog in the {name} probe within a further {:.0} s",
                            (wait_timeout * 5).as_secs_f64()
                        );
                        results
                            .incidents
                            .push(Incident::new(name, "unresponsive", why.clone()));
                        dead = Some(why);
                    }
                }
                Some(Halt::Lost(m)) => {
                    results
                        .incidents
                        .push(Incident::new(name, "device_lost", m.clone()));
                    reopen = Some(format!("after the device was lost in the {name} probe"));
                }
                None => {}
            }
            if let Some(why) = reopen
                && dead.is_none()
            {
                match Gpu::open(list.adapters[idx].clone(), info.clone()) {
                    Ok(g) => {
                        gpu = g;
                        baseline = gpu.memory_in_use();
                        results.incidents.push(Incident::new(
                            name,
                            "reopened",
                            format!("a new device was opened on the adapter {why}"),
                        ));
                    }
                    Err(e) => {
                        dead = Some(format!("the device could not be reopened {why}: {e:#}"));
                    }
                }
            }
            // Leak check: what the probe allocated must be released when it ends.
            if dead.is_none()
                && let (Some((base, _)), Some((now, count))) = (baseline, gpu.memory_in_use())
            {
                results.memory.push(MemoryCheck {
                    probe: name.into(),
                    allocated_bytes: now,
                    allocations: count,
                    baseline_bytes: base,
                });
                if now > base + MEMORY_SLACK {
                    results.incidents.push(Incident::new(
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
            // Another bench measuring at the same time distorts both: say so on every
            // figure this probe produced.
            let mut others = others_before;
            runs::merge(&mut others, watcher.take());
            if !others.is_empty() {
                let pids: Vec<String> = others.iter().map(|o| o.pid.to_string()).collect();
                let w = format!(
                    "another gpuvalue bench was running during this probe (pid {}): timings may be distorted",
                    pids.join(", ")
                );
                for r in &mut results.probes[first..] {
                    r.warnings.push(w.clone());
                }
                runs::merge(&mut results.concurrent_runs, others);
            }
            results.updated = now_rfc3339();
            results.save(&path)?;
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        let interrupted = interrupt::requested();
        if !interrupted && let Some(s) = probes::precision::summary(&results.probes) {
            results.probes.push(s);
        }
        results.interrupted = interrupted;
        results.complete = !interrupted;
        results.updated = now_rfc3339();
        results.save(&path)?;
        if dead.is_some() && matches!(gpu.halted(), Some(Halt::Wedged(_))) {
            // Dropping a device with work still queued waits for that work without bound;
            // the device is unusable, so it is left to the process's exit.
            std::mem::forget(gpu);
        }
        outcomes.push(BenchOutcome { path, results });
    }
    Ok(outcomes)
}

/// Device memory a probe may leave allocated without a warning (allocator block rounding).
const MEMORY_SLACK: u64 = 1 << 20;
