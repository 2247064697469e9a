//! The probes: one file each. A probe takes a context (device, timer, plan, budget) and emits
//! one `ProbeResult` per figure; the driver saves the results file after each one.

/// `Probe::run` for a probe file whose free `async fn run(ctx, emit)` does the work: the
/// trait returns that future boxed (the trait stays object-safe for `REGISTRY`).
macro_rules! run_with_async_fn {
    // A probe whose method is one `run_on` over its executor trait, which `Ctx` and `ClCtx`
    // implement: both executors run it.
    (run_on) => {
        fn run<'a>(
            &'a self,
            ctx: &'a super::Ctx<'a>,
            emit: &'a mut dyn FnMut(crate::results::ProbeResult),
        ) -> super::LocalBoxFuture<'a, ()> {
            Box::pin(run_on(ctx, emit))
        }
        run_with_async_fn!(@opencl run_on);
    };
    // A probe with a free `async fn run` on wgpu and `run_cl` on OpenCL.
    (opencl) => {
        run_with_async_fn!();
        run_with_async_fn!(@opencl run_cl);
    };
    // OpenCL: `$run` runs the probe, `cl_sources` lists its kernels.
    (@opencl $run:ident) => {
        #[cfg(not(target_arch = "wasm32"))]
        fn run_opencl<'a>(
            &'a self,
            ctx: &'a super::ClCtx<'a>,
            emit: &'a mut dyn FnMut(crate::results::ProbeResult),
        ) -> super::LocalBoxFuture<'a, ()> {
            Box::pin($run(ctx, emit))
        }
        #[cfg(not(target_arch = "wasm32"))]
        fn opencl_kernels(&self) -> Vec<crate::measuring::gpu::opencl::ClSource> {
            cl_sources()
        }
    };
    () => {
        fn run<'a>(
            &'a self,
            ctx: &'a super::Ctx<'a>,
            emit: &'a mut dyn FnMut(crate::results::ProbeResult),
        ) -> super::LocalBoxFuture<'a, ()> {
            Box::pin(run(ctx, emit))
        }
    };
}

pub mod coop;
pub mod double;
pub mod executor;
pub mod hierarchy;
pub mod int8;
pub mod latency;
pub mod matmul;
pub mod measure;
#[cfg(not(target_arch = "wasm32"))]
pub mod mfma;
pub mod peak;
pub mod stream;
pub mod transfer;

use crate::clock::Instant;
use crate::figure::FigureKey;
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::gpu::{Gpu, Timer};
use crate::measuring::reference::Dims;
use crate::results::{ProbeResult, Status, Validation};
use measure::Plan;
use std::time::Duration;

/// One probe: a name for the command line, what it measures, its share of the time budget,
/// the figures it produces, and how to run it. Each lives in its own file; `REGISTRY` lists
/// them in the order a bench runs them.
pub trait Probe: Sync {
    /// Name on the command line (`--probes`, `--inject-fault KIND@NAME`) and in the results
    /// file's options.
    fn name(&self) -> &'static str;
    /// One line for `--help`.
    fn about(&self) -> &'static str;
    /// Share of the run's time budget this probe may use (relative to the others run).
    fn budget_share(&self) -> f64;
    /// The figures its results carry.
    fn figures(&self) -> &'static [FigureKey];
    /// Runs the probe, emitting one validated result (or a failed one) per figure. Every GPU
    /// wait inside is awaited: the native bench drives the future with `pollster`, the page
    /// with the browser's event loop.
    fn run<'a>(
        &'a self,
        ctx: &'a Ctx<'a>,
        emit: &'a mut dyn FnMut(ProbeResult),
    ) -> LocalBoxFuture<'a, ()>;
    /// Every WGSL kernel variant the probe can build, as it builds them (validated by naga
    /// in a unit test, without a device).
    fn kernels(&self) -> Vec<KernelSource>;
    /// The same method on the OpenCL executor: the same figures, sizes, plan and
    /// validation, OpenCL C kernels (`shaders/opencl/`). A probe without OpenCL kernels
    /// records its figures as unsupported, with the reason.
    #[cfg(not(target_arch = "wasm32"))]
    fn run_opencl<'a>(
        &'a self,
        _ctx: &'a ClCtx<'a>,
        emit: &'a mut dyn FnMut(ProbeResult),
    ) -> LocalBoxFuture<'a, ()> {
        let figures = self.figures();
        Box::pin(
            async move { unsupported_on_opencl(figures, "this probe has no OpenCL kernel", emit) },
        )
    }
    /// Every OpenCL program variant the probe can build on the OpenCL executor (compiled
    /// offline for the real GPUs' targets by `tests/it/kernels.rs`).
    #[cfg(not(target_arch = "wasm32"))]
    fn opencl_kernels(&self) -> Vec<crate::measuring::gpu::opencl::ClSource> {
        Vec::new()
    }
}

/// Every OpenCL program variant the probes can build (the burn's are
/// `crate::measuring::burn::cl::opencl_kernels`; the burn depends on the probes, not the reverse).
#[cfg(not(target_arch = "wasm32"))]
pub fn every_opencl_program() -> Vec<crate::measuring::gpu::opencl::ClSource> {
    REGISTRY.iter().flat_map(|p| p.opencl_kernels()).collect()
}

pub use crate::measuring::gpu::signal::LocalBoxFuture;

/// A registered probe.
pub type ProbeRef = &'static dyn Probe;

impl std::fmt::Debug for dyn Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every probe, in the order a bench runs them. Adding a probe: one file and one line here.
pub static REGISTRY: &[ProbeRef] = &[
    &peak::Peak,
    &matmul::Matmul,
    &double::Double,
    &stream::Stream,
    &transfer::Transfer,
    &latency::Latency,
    &int8::Int8,
    &coop::Coop,
    &hierarchy::Hierarchy,
];

/// The registered probe called `name` (any case).
pub fn find(name: &str) -> Option<ProbeRef> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.name().eq_ignore_ascii_case(name))
}

/// The names of all probes, in run order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name()).collect()
}

/// `probes` in the order given, each once.
pub fn dedup(probes: &[ProbeRef]) -> Vec<ProbeRef> {
    let mut out: Vec<ProbeRef> = Vec::new();
    for p in probes {
        if !out.iter().any(|o| o.name() == p.name()) {
            out.push(*p);
        }
    }
    out
}

/// The probe's part of `total`, shared with the probes in `left` (itself included).
pub fn budget(probe: ProbeRef, total: Duration, left: &[ProbeRef]) -> Duration {
    let sum: f64 = left.iter().map(|k| k.budget_share()).sum();
    total.mul_f64(probe.budget_share() / sum.max(1e-9))
}

/// One figure of a probe, the loop every probe shares: skipped when the probe must stop
/// (time spent, device halted, Ctrl-C), else `measure`'s result, or a failed result that
/// carries `measure`'s error.
pub async fn step(
    ctx: &impl Halts,
    emit: &mut dyn FnMut(ProbeResult),
    figure: FigureKey,
    what: &str,
    measure: impl std::future::Future<Output = anyhow::Result<ProbeResult>>,
) {
    // A future does nothing until polled: when the probe must stop, `measure` is dropped
    // without running any of its work.
    if ctx.halted() {
        emit(ProbeResult::of(figure).with_status(Status::Skipped, ctx.halt_reason()));
        return;
    }
    ctx.say(what);
    match measure.await {
        Ok(r) => emit(r),
        Err(e) => emit(ProbeResult::of(figure).with_status(Status::Failed, format!("{e:#}"))),
    }
}

/// A result checked exactly (`error` is 0 when every value was right, else how far off):
/// its timing, the check, and if it passed the figure `figure` makes of each sample's
/// seconds per iteration; `reason` says why it failed.
pub fn judged_exactly(
    mut res: ProbeResult,
    timing: measure::TimingInfo,
    figure: impl Fn(f64) -> f64,
    (error, detail): (f64, String),
    reason: impl FnOnce(&Validation) -> String,
) -> ProbeResult {
    let value = timing.figure(figure);
    res.timing = Some(timing);
    res.validated(Validation::exact(error, detail), value, reason)
}

/// Times `iters` dispatches of `groups` workgroups of one pipeline per sample, under the
/// probe's plan (the reduced one when a quick run is behind).
pub async fn time_dispatches(
    ctx: &Ctx<'_>,
    pipeline: &wgpu::ComputePipeline,
    bind: &wgpu::BindGroup,
    groups: (u32, u32),
) -> anyhow::Result<measure::TimingInfo> {
    measure::measure(&ctx.plan(), &|| ctx.timer.method(), async |iters| {
        time_batch(ctx.timer, pipeline, bind, groups, iters).await
    })
    .await
}

/// One batch of `iters` dispatches of `groups` workgroups of one pipeline, in one pass: the
/// seconds it took by `timer`.
pub async fn time_batch(
    timer: &Timer<'_>,
    pipeline: &wgpu::ComputePipeline,
    bind: &wgpu::BindGroup,
    groups: (u32, u32),
    iters: u32,
) -> anyhow::Result<f64> {
    timer
        .time_pass(&mut |pass| {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, bind, &[]);
            for _ in 0..iters {
                pass.dispatch_workgroups(groups.0, groups.1, 1);
            }
        })
        .await
}

/// What a probe needs whatever executes it: the measurement plan, the time budget, the
/// sizes asked for, where to say progress. Each executor's context (`Ctx` for wgpu, `ClCtx`
/// for OpenCL) holds one and dereferences to it.
pub struct RunCtx<'a> {
    pub plan: Plan,
    pub quick: bool,
    /// Matrix sizes given with `--sizes` (else each probe picks its own).
    pub sizes: Option<Vec<Dims>>,
    /// When this probe should stop starting new work.
    pub deadline: Instant,
    /// Build proven-in-range kernels without runtime bounds checks.
    pub trusted: bool,
    pub host: &'a crate::host::HostInfo,
    pub progress: &'a dyn Fn(&str),
    /// Array size for the stream and transfer probes (else chosen from the cache size).
    pub array_bytes: Option<u64>,
    /// Set when a measurement used the reduced plan (a quick run behind its budget); the
    /// driver takes it with the next result and records it there.
    pub reduced: std::cell::Cell<bool>,
}

impl RunCtx<'_> {
    /// True once the probe's share of the time budget is spent.
    pub fn behind(&self) -> bool {
        Instant::now() > self.deadline
    }

    /// True when a quick run is behind its budget: probes then skip autotuning and measure
    /// with the reduced plan.
    pub fn shrink(&self) -> bool {
        self.quick && self.behind()
    }

    /// The plan for the next measurement: the run's own, or the reduced plan when a quick
    /// run is behind its budget (noted, for the result that follows).
    pub fn plan(&self) -> Plan {
        if self.shrink() {
            self.reduced.set(true);
            Plan::reduced()
        } else {
            self.plan.clone()
        }
    }

    /// Why the probe must start no more work, given why the device stopped (if it did): the
    /// device stopped, the user interrupted the run, or (full runs only) its time is spent.
    /// A quick run never drops a figure for time: it measures it with less (`plan`).
    fn stop(&self, device: Option<String>) -> Option<String> {
        if let Some(h) = device {
            Some(format!("not run: {h}"))
        } else if crate::interrupt::requested() {
            Some("not run: interrupted".into())
        } else if !self.quick && self.behind() {
            Some("time budget spent".into())
        } else {
            None
        }
    }
}

/// What the shared probe loop (`step`) asks of any executor's context.
pub trait Halts {
    /// True when the probe should start no more work.
    fn halted(&self) -> bool;
    /// Why `halted` is true, for the results of the work not started.
    fn halt_reason(&self) -> String;
    fn say(&self, what: &str);
}

/// Everything a probe needs on wgpu.
pub struct Ctx<'a> {
    pub gpu: &'a Gpu,
    pub timer: &'a Timer<'a>,
    pub faults: matmul::Faults,
    pub run: RunCtx<'a>,
}

impl<'a> Ctx<'a> {
    /// The one constructor (the bench, the page and the tests build theirs through it).
    pub fn new(gpu: &'a Gpu, timer: &'a Timer<'a>, run: RunCtx<'a>) -> Ctx<'a> {
        Ctx {
            gpu,
            timer,
            faults: Default::default(),
            run,
        }
    }

    /// True when the probe should start no more work: the device stopped working (lost, or
    /// a watchdog fired), the user interrupted the run, or (full runs only) its time is
    /// spent.
    pub fn halted(&self) -> bool {
        self.run
            .stop(self.gpu.halted().map(|h| h.to_string()))
            .is_some()
    }

    /// Why `halted` is true, for the results of the work not started.
    pub fn halt_reason(&self) -> String {
        self.run
            .stop(self.gpu.halted().map(|h| h.to_string()))
            .unwrap_or_else(|| "time budget spent".into())
    }
}

impl<'a> std::ops::Deref for Ctx<'a> {
    type Target = RunCtx<'a>;
    fn deref(&self) -> &RunCtx<'a> {
        &self.run
    }
}

impl Halts for Ctx<'_> {
    fn halted(&self) -> bool {
        Ctx::halted(self)
    }
    fn halt_reason(&self) -> String {
        Ctx::halt_reason(self)
    }
    fn say(&self, what: &str) {
        (self.run.progress)(what)
    }
}

/// Everything a probe needs on OpenCL.
#[cfg(not(target_arch = "wasm32"))]
pub struct ClCtx<'a> {
    pub cl: &'a crate::measuring::gpu::opencl::ClGpu,
    pub run: RunCtx<'a>,
}

#[cfg(not(target_arch = "wasm32"))]
impl<'a> std::ops::Deref for ClCtx<'a> {
    type Target = RunCtx<'a>;
    fn deref(&self) -> &RunCtx<'a> {
        &self.run
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Halts for ClCtx<'_> {
    fn halted(&self) -> bool {
        self.run.stop(None).is_some()
    }
    fn halt_reason(&self) -> String {
        self.run
            .stop(None)
            .unwrap_or_else(|| "time budget spent".into())
    }
    fn say(&self, what: &str) {
        (self.run.progress)(what)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl ClCtx<'_> {
    /// Times batches of enqueues under `plan` (warm-up, batch sizing, samples), by
    /// profiling events cross-checked against the wall clock (see `ClGpu::time`). Each
    /// enqueue returns its one command's event, or the span of the commands it enqueued.
    pub fn time<E: Into<crate::measuring::gpu::opencl::Span>>(
        &self,
        plan: &Plan,
        enqueue: &mut dyn FnMut() -> anyhow::Result<E>,
    ) -> anyhow::Result<measure::TimingInfo> {
        let enqueue = std::cell::RefCell::new(enqueue);
        let mut spans = || enqueue.borrow_mut()().map(Into::into);
        let spans = std::cell::RefCell::new(&mut spans);
        pollster::block_on(measure::measure(
            plan,
            &|| self.cl.method(),
            async |iters| self.cl.time(iters, &mut *spans.borrow_mut()),
        ))
    }
}

/// What a probe with no OpenCL kernel records on OpenCL: each figure unsupported, with why.
#[cfg(not(target_arch = "wasm32"))]
pub fn unsupported_on_opencl(figures: &[FigureKey], why: &str, emit: &mut dyn FnMut(ProbeResult)) {
    for f in figures {
        emit(ProbeResult::of(*f).with_status(Status::Unsupported, why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_found_in_any_case() {
        let names = names();
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for n in &names {
            assert_eq!(find(&n.to_uppercase()).map(|p| p.name()), Some(*n));
        }
        assert!(find("gpu").is_none());
    }

    #[test]
    fn every_figure_key_is_produced_by_one_probe() {
        for k in FigureKey::ALL {
            let by: Vec<_> = REGISTRY
                .iter()
                .filter(|p| p.figures().contains(&k))
                .map(|p| p.name())
                .collect();
            assert_eq!(by.len(), 1, "{k:?} produced by {by:?}");
        }
    }

    /// Parses, validates (with the pipeline's override values) and writes as SPIR-V what
    /// Vulkan would be given, and as MSL what Metal would (kernels without f64); the error
    /// names the kernel.
    fn compile(k: &KernelSource) -> Result<usize, String> {
        use naga::valid::{Capabilities, ValidationFlags, Validator};
        let fail = |what: &str, e: &dyn std::fmt::Debug| format!("{} ({what}): {e:?}", k.label);
        let module = naga::front::wgsl::parse_str(&k.source)
            .map_err(|e| format!("{}: {}", k.label, e.emit_to_string(&k.source)))?;
        let mut v = Validator::new(ValidationFlags::all(), Capabilities::all());
        let info = v.validate(&module).map_err(|e| fail("validation", &e))?;
        let mut constants = naga::back::PipelineConstants::default();
        for (name, value) in &k.constants {
            let declared = module
                .overrides
                .iter()
                .any(|(_, o)| o.name.as_deref() == Some(name));
            if !declared {
                return Err(format!(
                    "{}: sets override {name}, which it does not declare",
                    k.label
                ));
            }
            constants.insert(name.to_string(), *value);
        }
        let stage = (naga::ShaderStage::Compute, k.entry);
        let (module, info) = naga::back::pipeline_constants::process_overrides(
            &module,
            &info,
            Some(stage),
            &constants,
        )
        .map_err(|e| fail("override values", &e))?;
        let options = naga::back::spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: k.entry.to_string(),
        };
        // SPIR-V 1.6, as wgpu-hal writes it for a Vulkan 1.3 device.
        let spv = naga::back::spv::Options {
            lang_version: (1, 6),
            ..Default::default()
        };
        let words = naga::back::spv::write_vec(&module, &info, &spv, Some(&options))
            .map_err(|e| fail("SPIR-V", &e))?;
        spirv_val(k, &words)?;
        // Metal has no f64: those kernels are for Vulkan and DX12 only.
        if !k.source.contains("f64") {
            let options = naga::back::msl::Options {
                lang_version: (2, 3),
                ..Default::default()
            };
            let pipeline = naga::back::msl::PipelineOptions {
                entry_point: Some((naga::ShaderStage::Compute, k.entry.to_string())),
                ..Default::default()
            };
            naga::back::msl::write_string(&module, &info, &options, &pipeline)
                .map_err(|e| fail("MSL", &e))?;
        }
        Ok(words.len())
    }

    /// Khronos' SPIR-V validator (spirv-tools) on the module a Vulkan driver would get, for
    /// the Vulkan 1.3 environment: what naga writes is checked by a second implementation.
    /// Without spirv-val on PATH it says so once and passes, except under CI=true.
    fn spirv_val(k: &KernelSource, words: &[u32]) -> Result<(), String> {
        use std::process::{Command, Stdio};
        if Command::new("spirv-val").arg("--version").output().is_err() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true: no spirv-val (apt-get install spirv-tools)"
            );
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| eprintln!("spirv-val: SKIPPED (not on PATH; spirv-tools)"));
            return Ok(());
        }
        // A folder per call: tests in one process validate the same kernel at once.
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let name: String = (k.label.chars())
            .chain(
                k.constants
                    .iter()
                    .flat_map(|(n, v)| format!("-{n}{v}").chars().collect::<Vec<_>>()),
            )
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.path().join(format!("{name}.spv"));
        std::fs::write(&path, bytemuck::cast_slice::<u32, u8>(words)).map_err(|e| e.to_string())?;
        let out = Command::new("spirv-val")
            .args(["--target-env", "vulkan1.3"])
            .arg(&path)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&path);
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            return Ok(());
        }
        // Debian bookworm's spirv-tools (2023.1) predates SPV_KHR_cooperative_matrix (its
        // capability is 6022): those modules are checked by naga's validator only.
        if said.contains("Invalid capability operand: 6022") {
            return Ok(());
        }
        Err(format!(
            "{} {:?}: spirv-val --target-env vulkan1.3: {}",
            k.label,
            k.constants,
            said.trim()
        ))
    }

    #[test]
    fn every_kernel_variant_of_every_probe_compiles() {
        let mut kernels: Vec<KernelSource> = REGISTRY.iter().flat_map(|p| p.kernels()).collect();
        kernels.push(KernelSource::new(
            "spin",
            crate::measuring::gpu::inject::SPIN_WGSL,
            "main",
            &[],
        ));
        assert!(kernels.len() > 40, "only {} variants listed", kernels.len());
        let errors: Vec<String> = kernels.iter().filter_map(|k| compile(k).err()).collect();
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }

    #[test]
    fn a_broken_variant_is_caught() {
        let good = &matmul::Matmul.kernels()[0];
        let mut bad = good.clone();
        bad.source = bad.source.replacen("fn main", "fn main_renamed", 1);
        assert!(compile(good).is_ok());
        assert!(compile(&bad).is_err());
        let mut unknown = good.clone();
        unknown.constants.push(("NOT_DECLARED", 1.0));
        assert!(compile(&unknown).unwrap_err().contains("NOT_DECLARED"));
    }

    #[test]
    fn budgets_share_the_time_left() {
        let all = REGISTRY.to_vec();
        let total = Duration::from_secs(100);
        let sum: Duration = all.iter().map(|p| budget(*p, total, &all)).sum();
        assert!((sum.as_secs_f64() - 100.0).abs() < 1e-6);
        let last = all[all.len() - 1];
        assert_eq!(budget(last, total, &[last]), total);
    }
}
