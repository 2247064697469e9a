//! One adapter's run: open it, run every probe under the watchdog with fault injection and
//! leak checks, record each result, write the file as it goes.

use super::*;

/// One adapter's run: its device, its results file, and what has happened to it so far.
pub(super) struct AdapterRun<'a> {
    pub(super) opts: &'a BenchOptions,
    pub(super) host: &'a HostInfo,
    pub(super) exec: Exec,
    pub(super) path: PathBuf,
    pub(super) results: ResultsFile,
    pub(super) watcher: run_registry::Watcher,
    pub(super) bar: Option<ProgressBar>,
    pub(super) deadline: Instant,
    /// Device memory held before any probe (the baseline for the leak check).
    pub(super) baseline: Option<(u64, usize)>,
    /// Set when the device can no longer be used: the remaining probes are not run.
    pub(super) dead: Option<String>,
    /// Power, clocks and temperature beside the run (its own thread).
    pub(super) sampler: crate::measuring::telemetry::Sampler,
}

/// The executor an adapter's run measures with.
pub(super) enum Exec {
    Wgpu {
        adapter: wgpu::Adapter,
        gpu: Box<Gpu>,
    },
    OpenCl(Box<crate::measuring::gpu::opencl::ClGpu>),
}

impl Exec {
    pub(super) fn open(
        adapter: &adapter::Adapter,
        info: &crate::model::AdapterSummary,
    ) -> Result<Exec> {
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
    pub(super) fn gpu(&self) -> Option<&Gpu> {
        match self {
            Exec::Wgpu { gpu, .. } => Some(gpu),
            Exec::OpenCl(_) => None,
        }
    }
}

impl<'a> AdapterRun<'a> {
    /// Opens the device, registers the run and writes the first (empty) results file.
    pub(super) fn start(
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
        let sampler = crate::measuring::telemetry::Sampler::for_adapter(
            &info,
            &crate::measuring::telemetry::live_root(),
            crate::measuring::telemetry::PERIOD,
            opts.board_power.and_then(|f| f(&info)),
        );
        results.save(&path)?;
        Ok(AdapterRun {
            sampler,
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
    pub(super) fn probe(&mut self, probe: ProbeRef, left: &[ProbeRef]) -> Result<()> {
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
    pub(super) fn guarded(
        &mut self,
        probe: ProbeRef,
        budget: Duration,
    ) -> Result<Result<(), String>> {
        let AdapterRun {
            opts,
            host,
            exec,
            results,
            path,
            bar,
            sampler,
            ..
        } = self;
        // Each figure's window: from the previous figure (or the probe's start) to it.
        let mark = std::cell::Cell::new(sampler.now());
        let energy = |r: &mut ProbeResult| {
            let now = sampler.now();
            r.energy = sampler.window(mark.replace(now), now).map(|mut w| {
                w.per_watt = r
                    .value
                    .as_ref()
                    .zip(w.mean_w)
                    .filter(|(_, p)| *p > 0.0 && r.higher_is_better)
                    .map(|(v, p)| v.median / p);
                w
            });
        };
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
                let mut emit = |mut r: ProbeResult| {
                    energy(&mut r);
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
                let mut emit = |mut r: ProbeResult| {
                    energy(&mut r);
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
    pub(super) fn note_unfired_fault(&mut self, name: &str) {
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
    pub(super) fn after_halt(&mut self, name: &str) -> Option<String> {
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
    pub(super) fn reopen(&mut self, name: &str, why: &str) {
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
    pub(super) fn check_leaks(&mut self, name: &str) {
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
    pub(super) fn note_concurrent(
        &mut self,
        mut others: Vec<run_registry::OtherRun>,
        first: usize,
    ) {
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
    pub(super) fn peak_again_if_beaten(&mut self, probes: &[ProbeRef]) -> Result<()> {
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
    pub(super) fn finish(mut self) -> Result<BenchOutcome> {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        suite::finish(&mut self.results);
        self.results.telemetry = Some(self.sampler.finish());
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
