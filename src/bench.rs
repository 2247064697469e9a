//! The bench driver: open each chosen adapter, run the probes in turn, rewrite the results
//! file atomically after every probe result, show progress on a terminal.

use crate::cli::BenchArgs;
use crate::gpu::{Gpu, Timer, adapter};
use crate::host::HostInfo;
use crate::probes::{self, Ctx, ProbeKind, measure::Plan};
use crate::results::{ResultsFile, RunOptions, SCHEMA_VERSION, Status, ToolInfo, now_rfc3339};
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

pub fn run(args: &BenchArgs, raw_args: Vec<String>) -> Result<Vec<BenchOutcome>> {
    let time_budget = args
        .time_budget
        .unwrap_or(if args.quick { 45.0 } else { 600.0 });
    if !(time_budget.is_finite() && time_budget > 0.0) {
        bail!("--time-budget {time_budget}: expected a positive number of seconds");
    }
    if args.array_mib == Some(0) {
        bail!("--array-mib 0: expected at least 1 MiB");
    }
    let list = adapter::enumerate(args.select.backend);
    let chosen = list.select(&args.select.adapter)?;
    let host = HostInfo::detect();
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let several = chosen.len() > 1;
    let mut outcomes = Vec::new();
    // Check every output path before the first probe runs.
    let paths: Vec<PathBuf> = chosen
        .iter()
        .map(|&i| out_path(args, &host, &list.summaries[i], several))
        .collect();
    for p in &paths {
        check_writable(p)?;
    }
    let mut probes_sorted: Vec<ProbeKind> = Vec::new();
    for k in &args.probes {
        if !probes_sorted.contains(k) {
            probes_sorted.push(*k);
        }
    }
    for (&idx, path) in chosen.iter().zip(paths) {
        let info = list.summaries[idx].clone();
        if info.software && !args.quiet {
            eprintln!(
                "note: {} is a software adapter (the CPU): its figures say nothing about GPU speed",
                info.name
            );
        }
        let gpu = Gpu::open(list.adapters[idx].clone(), info.clone())?;
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
        let timer = Timer::new(&gpu, !args.no_timestamps);
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
        };
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
        let mut save_err = None;
        for (pi, kind) in probes_sorted.iter().enumerate() {
            // This probe's share of what is left: time a fast probe did not use rolls over.
            let left = run_deadline.saturating_duration_since(Instant::now());
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
                deadline: Instant::now() + kind.budget(left, &probes_sorted[pi..]),
                trusted: !args.checked,
                host: &host,
                progress: &progress,
                faults: Default::default(),
                array_bytes: args.array_mib.map(|m| m << 20),
            };
            probes::run(*kind, &ctx, &mut |mut r| {
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
            });
            if let Some(b) = &bar {
                b.inc(1);
            }
            if let Some(e) = save_err.take() {
                return Err(e);
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        if let Some(s) = probes::precision::summary(&results.probes) {
            results.probes.push(s);
        }
        results.complete = true;
        results.updated = now_rfc3339();
        results.save(&path)?;
        outcomes.push(BenchOutcome { path, results });
    }
    Ok(outcomes)
}
