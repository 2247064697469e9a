//! Dispatch latency: the round trip of one tiny dispatch (submit, run, wait: what a host
//! pays per synchronous step), the per-dispatch cost inside a batch (one pass holding
//! many dispatches), and on OpenCL the launch latency (enqueue to start, by the runtime's
//! profiling timestamps: the part of the round trip clpeak reports, so the two compare).
//! Each dispatch increments a counter that is checked afterwards.

use super::Ctx;
use super::executor::{self, Executor};
use super::measure;
use crate::figure::FigureKey;
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::gpu::{Gpu, TimingMethod};
use crate::results::{ProbeResult, Status};
use anyhow::Result;
use std::cell::Cell;

const LATENCY_WGSL: &str = include_str!("../../../shaders/latency.wgsl");

/// Which latency: the round trip, the cost in a batch, or enqueue to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    RoundTrip,
    Batched,
    Launch,
}

impl Mode {
    /// In the order a run measures them.
    pub const ALL: [Mode; 3] = [Mode::RoundTrip, Mode::Batched, Mode::Launch];

    pub fn figure(self) -> FigureKey {
        match self {
            Mode::RoundTrip => FigureKey::LatencyRoundTrip,
            Mode::Batched => FigureKey::LatencyDispatch,
            Mode::Launch => FigureKey::LatencyLaunch,
        }
    }
}

/// The microseconds, if the 32-bit counter says every dispatch issued ran.
fn finish(res: ProbeResult, timing: measure::TimingInfo, expected: u64, got: u32) -> ProbeResult {
    let error = (u64::from(got) as f64 - (expected % (1u64 << 32)) as f64).abs();
    let detail = format!("counter {got}, dispatches issued {expected}");
    super::judged_exactly(
        res,
        timing,
        |t| t * 1e6,
        (error, detail),
        |_| "validation failed: not every dispatch ran".into(),
    )
}

/// What the latency method asks of an executor: a one-invocation kernel that bumps a
/// counter, dispatched alone and waited for, in batches, or with its launch timed, and the
/// counter read back.
#[allow(async_fn_in_trait)]
pub trait LatencyExecutor: Executor {
    /// The kernel over its counter.
    type Counter;
    /// What `mode` times on this executor (the result's `what`).
    fn what(&self, mode: Mode) -> &'static str;
    /// Why this executor cannot time `mode`, if it cannot (short: it is a table cell).
    fn lacks(&self, _mode: Mode) -> Option<&'static str> {
        None
    }
    /// The kernel built over a counter set to zero.
    fn prepare(&self) -> Result<Self::Counter>;
    /// One dispatch, submitted and waited for.
    async fn round_trip(&self, k: &Self::Counter) -> Result<()>;
    /// Runs `iters` dispatches as one batch; the seconds it took (by `method()`).
    async fn batch(&self, k: &Self::Counter, iters: u32) -> Result<f64>;
    /// Runs `iters` dispatches, each waited for; the sum of their enqueue-to-start times,
    /// by the runtime's profiling timestamps.
    async fn launches(&self, k: &Self::Counter, iters: u32) -> Result<f64>;
    /// The counter, read back.
    async fn counter(&self, k: &Self::Counter) -> Result<u32>;
}

/// One latency under the run's plan, its counter checked against the dispatches issued.
async fn measure_mode<E: LatencyExecutor>(exec: &E, mode: Mode) -> Result<ProbeResult> {
    let k = exec.prepare()?;
    let issued = Cell::new(0u64);
    let res = ProbeResult::of(mode.figure()).param("what", exec.what(mode));
    let plan = exec.run_ctx().plan();
    let timing = match mode {
        Mode::RoundTrip => {
            executor::time_wall(exec, &plan, async || {
                exec.round_trip(&k).await?;
                issued.set(issued.get() + 1);
                Ok(())
            })
            .await?
        }
        Mode::Batched => {
            executor::time(exec, &plan, async |iters| {
                issued.set(issued.get() + u64::from(iters));
                exec.batch(&k, iters).await
            })
            .await?
        }
        Mode::Launch => {
            let events = || TimingMethod::ProfilingEvents;
            measure::measure(&plan, &events, async |iters| {
                let launch = exec.launches(&k, iters).await?;
                issued.set(issued.get() + u64::from(iters));
                Ok(launch)
            })
            .await?
        }
    };
    let got = exec.counter(&k).await?;
    Ok(finish(res, timing, issued.get(), got))
}

/// Runs the probe on `exec`: each latency it can time, the others unsupported with why.
pub async fn run_on<E: LatencyExecutor>(exec: &E, emit: &mut dyn FnMut(ProbeResult)) {
    for mode in Mode::ALL {
        let f = mode.figure();
        if let Some(why) = exec.lacks(mode) {
            emit(ProbeResult::of(f).with_status(Status::Unsupported, why));
            continue;
        }
        super::step(exec, emit, f, f.info().label, measure_mode(exec, mode)).await;
    }
}

/// The wgpu kernel: one workgroup of one invocation over its counter.
pub struct WgpuCounter {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    counter: wgpu::Buffer,
}

fn kernel(gpu: &Gpu) -> Result<WgpuCounter> {
    let pipeline = gpu.wgsl_pipeline("latency", LATENCY_WGSL, &[])?;
    let counter = gpu.upload("counter", &[0u32])?;
    let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("latency"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: counter.as_entire_binding(),
        }],
    });
    Ok(WgpuCounter {
        pipeline,
        bind,
        counter,
    })
}

impl LatencyExecutor for Ctx<'_> {
    type Counter = WgpuCounter;

    fn what(&self, mode: Mode) -> &'static str {
        match mode {
            Mode::RoundTrip => "encode + submit one 1-invocation dispatch + wait for completion",
            Mode::Batched => "many 1-invocation dispatches in one compute pass, time per dispatch",
            Mode::Launch => NO_LAUNCH,
        }
    }
    fn lacks(&self, mode: Mode) -> Option<&'static str> {
        (mode == Mode::Launch).then_some(NO_LAUNCH)
    }
    fn prepare(&self) -> Result<WgpuCounter> {
        kernel(self.gpu)
    }
    async fn round_trip(&self, k: &WgpuCounter) -> Result<()> {
        let gpu = self.gpu;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&k.pipeline);
            pass.set_bind_group(0, &k.bind, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        gpu.queue.submit([enc.finish()]);
        gpu.wait().await
    }
    async fn batch(&self, k: &WgpuCounter, iters: u32) -> Result<f64> {
        super::time_batch(self.timer, &k.pipeline, &k.bind, (1, 1), iters).await
    }
    async fn launches(&self, _k: &WgpuCounter, _iters: u32) -> Result<f64> {
        anyhow::bail!(NO_LAUNCH)
    }
    async fn counter(&self, k: &WgpuCounter) -> Result<u32> {
        let got: Vec<u32> = self.gpu.read(&k.counter, 1).await?;
        Ok(got[0])
    }
}

/// Why wgpu has no launch latency (short: it is a table cell).
const NO_LAUNCH: &str = "OpenCL only (WebGPU has no queued timestamp)";

/// The latency probe, as registered in `probes::REGISTRY`.
pub struct Latency;

impl super::Probe for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }
    fn about(&self) -> &'static str {
        "Dispatch round trip and per-dispatch cost in a batch (microseconds)."
    }
    fn budget_share(&self) -> f64 {
        0.1
    }
    fn figures(&self) -> &'static [FigureKey] {
        // Launch latency is measured on OpenCL only: WebGPU has no timestamp for when a
        // dispatch was queued (unsupported there, said).
        &[
            FigureKey::LatencyRoundTrip,
            FigureKey::LatencyDispatch,
            FigureKey::LatencyLaunch,
        ]
    }
    run_with_async_fn!(run_on);
    fn kernels(&self) -> Vec<KernelSource> {
        vec![KernelSource::new("latency", LATENCY_WGSL, "main", &[])]
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::cl_sources;

/// The same method on OpenCL: one work-item bumps a counter; the round trip is enqueue +
/// `clFinish` on the wall clock, the batched cost many enqueues timed by profiling events,
/// the launch latency each dispatch's QUEUED to START.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    use super::*;
    use crate::measuring::gpu::opencl::{ClBuffer, ClGpu, ClSource};
    use crate::measuring::probes::ClCtx;

    const LATENCY_CL: &str = include_str!("../../../shaders/opencl/latency.cl");

    pub(super) fn cl_sources() -> Vec<ClSource> {
        vec![ClSource::new("latency", "latency.cl", LATENCY_CL, vec![])]
    }

    /// The `bump` kernel over its counter (kept alive: a kernel argument does not retain
    /// its buffer).
    pub struct ClCounter {
        kernel: opencl3::kernel::Kernel,
        counter: ClBuffer<u32>,
    }

    /// Enqueue to start of one dispatch (waited for with clFinish), from the event's QUEUED
    /// and START timestamps.
    fn launch_seconds(cl: &ClGpu, k: &opencl3::kernel::Kernel) -> Result<f64> {
        let ev = cl.dispatch(k, &[1], Some(&[1]))?;
        cl.finish()?;
        let queued = ev.profiling_command_queued()?;
        let start = ev.profiling_command_start()?;
        if start < queued {
            anyhow::bail!(
                "OpenCL profiling events reversed: start {start} ns before queued {queued} ns"
            );
        }
        Ok((start - queued) as f64 * 1e-9)
    }

    impl LatencyExecutor for ClCtx<'_> {
        type Counter = ClCounter;

        fn what(&self, mode: Mode) -> &'static str {
            match mode {
                Mode::Batched => "many 1-work-item enqueues, one clFinish, time per dispatch",
                Mode::RoundTrip => "enqueue one 1-work-item kernel + clFinish",
                Mode::Launch => {
                    "enqueue one 1-work-item kernel + clFinish; CL_PROFILING_COMMAND_START - QUEUED"
                }
            }
        }
        fn prepare(&self) -> Result<ClCounter> {
            let cl = self.cl;
            let prog = cl.build_source(&cl_sources()[0])?;
            let counter = cl.upload("counter", &[0u32])?;
            let kernel = cl.kernel(&prog, "bump", &[counter.arg()])?;
            Ok(ClCounter { kernel, counter })
        }
        async fn round_trip(&self, k: &ClCounter) -> Result<()> {
            self.cl.dispatch(&k.kernel, &[1], Some(&[1]))?;
            self.cl.finish()
        }
        async fn batch(&self, k: &ClCounter, iters: u32) -> Result<f64> {
            self.cl.time(iters, &mut || {
                Ok(self.cl.dispatch(&k.kernel, &[1], Some(&[1]))?.into())
            })
        }
        async fn launches(&self, k: &ClCounter, iters: u32) -> Result<f64> {
            let mut launch = 0.0;
            for _ in 0..iters {
                launch += launch_seconds(self.cl, &k.kernel)?;
            }
            Ok(launch)
        }
        async fn counter(&self, k: &ClCounter) -> Result<u32> {
            let got: Vec<u32> = self.cl.read(&k.counter, 1)?;
            Ok(got[0])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measuring::probes::executor::mock;

    /// The counter on the host: every dispatch bumps it, but `lost` of each measurement's
    /// bumps go missing; the launch latency is there unless `no_launch`.
    struct Kernels {
        lost: u64,
        no_launch: bool,
    }

    type Mock = mock::Device<Kernels>;

    impl Mock {
        /// `iters` dispatches run, each bumping the counter.
        fn bump(&self, k: &Cell<u64>, iters: u32) {
            k.set(k.get() + u64::from(iters));
        }
    }

    impl LatencyExecutor for Mock {
        /// Dispatches run so far.
        type Counter = Cell<u64>;
        fn what(&self, mode: Mode) -> &'static str {
            match mode {
                Mode::RoundTrip => "mock round trip",
                Mode::Batched => "mock batch",
                Mode::Launch => "mock launch",
            }
        }
        fn lacks(&self, mode: Mode) -> Option<&'static str> {
            (self.no_launch && mode == Mode::Launch).then_some("mock: no launch")
        }
        fn prepare(&self) -> Result<Cell<u64>> {
            // Each measurement replays the script from its start.
            self.clock.next.set(0);
            Ok(Cell::new(0))
        }
        async fn round_trip(&self, k: &Cell<u64>) -> Result<()> {
            self.bump(k, 1);
            Ok(())
        }
        async fn batch(&self, k: &Cell<u64>, iters: u32) -> Result<f64> {
            self.bump(k, iters);
            Ok(self.clock.batch(iters))
        }
        async fn launches(&self, k: &Cell<u64>, iters: u32) -> Result<f64> {
            self.bump(k, iters);
            Ok(self.clock.batch(iters))
        }
        async fn counter(&self, k: &Cell<u64>) -> Result<u32> {
            Ok(k.get().saturating_sub(self.lost) as u32)
        }
    }

    fn mock(per_iter_s: &[f64], lost: u64, no_launch: bool) -> Mock {
        mock::Device::new(mock::plan(5, 8), per_iter_s, Kernels { lost, no_launch })
    }

    fn results(m: &Mock) -> Vec<ProbeResult> {
        let mut out = Vec::new();
        pollster::block_on(run_on(m, &mut |r| out.push(r)));
        out
    }

    #[test]
    fn known_times_give_the_microseconds_and_the_warm_up_is_not_counted() {
        let m = mock(&[1.0, 0.004, 0.002, 0.001, 0.003, 0.008], 0, false);
        let r = results(&m);
        let names: Vec<&str> = r.iter().map(|p| p.name.as_str()).collect();
        let want: Vec<&str> = Mode::ALL.iter().map(|m| m.figure().info().label).collect();
        assert_eq!(names, want);
        let methods = [
            TimingMethod::WallClock,
            TimingMethod::WallClock,
            TimingMethod::ProfilingEvents,
        ];
        for (p, method) in r.iter().zip(methods) {
            assert_eq!(p.status, Status::Ok, "{}: {:?}", p.name, p.reason);
            let v = p.value.as_ref().unwrap();
            assert_eq!(v.n, 5);
            assert!((v.median - 3000.0).abs() < 1e-9, "{}: {v:?}", p.name);
            assert!((v.min - 1000.0).abs() < 1e-9 && (v.max - 8000.0).abs() < 1e-9);
            let t = p.timing.as_ref().unwrap();
            assert_eq!((t.warmup_runs, t.iters_per_sample), (1, 1));
            assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
            assert_eq!(t.method, method, "{}", p.name);
            // The warm-up's dispatch ran too: six issued, six counted.
            let detail = p.validation.as_ref().unwrap().detail.as_deref();
            assert_eq!(detail, Some("counter 6, dispatches issued 6"));
        }
        assert_eq!(r[1].params["what"], "mock batch");
        assert_eq!(m.clock.batches.borrow().len(), 18);
        assert_eq!(m.said.borrow().len(), 3, "one progress line a latency");
    }

    #[test]
    fn a_dispatch_that_did_not_run_fails_with_no_figure() {
        let r = results(&mock(&[0.01], 1, false));
        assert_eq!(r.len(), 3);
        for p in &r {
            let detail = "counter 5, dispatches issued 6";
            mock::assert_failed(p, detail, "validation failed: not every dispatch ran");
            assert_eq!(p.validation.as_ref().unwrap().error, 1.0);
        }
    }

    #[test]
    fn a_latency_the_executor_cannot_time_is_unsupported_and_not_run() {
        let m = mock(&[0.01], 0, true);
        let r = results(&m);
        assert_eq!(r.len(), 3);
        assert_eq!(r[2].name, FigureKey::LatencyLaunch.info().label);
        assert_eq!(r[2].status, Status::Unsupported);
        assert_eq!(r[2].reason.as_deref(), Some("mock: no launch"));
        assert!(r[2].timing.is_none());
        assert_eq!(m.said.borrow().len(), 2, "no progress line for it");
    }
}
