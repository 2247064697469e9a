//! Dispatch latency: the round trip of one tiny dispatch (submit, run, wait: what a host
//! pays per synchronous step), the per-dispatch cost inside a batch (one pass holding
//! many dispatches), and on OpenCL the launch latency (enqueue to start, by the runtime's
//! profiling timestamps: the part of the round trip clpeak reports, so the two compare).
//! Each dispatch increments a counter that is checked afterwards.

use super::Ctx;
use super::measure;
use crate::clock::Instant;
use crate::figure::FigureKey;
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::gpu::{Gpu, TimingMethod};
use crate::results::{ProbeResult, Status, Validation};
use anyhow::Result;
use std::cell::Cell;

const LATENCY_WGSL: &str = include_str!("../../../shaders/latency.wgsl");

struct Kernel {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    counter: wgpu::Buffer,
}

fn kernel(gpu: &Gpu) -> Result<Kernel> {
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
    Ok(Kernel {
        pipeline,
        bind,
        counter,
    })
}

fn finish(
    mut res: ProbeResult,
    timing: measure::TimingInfo,
    expected: u64,
    got: u32,
) -> ProbeResult {
    let ok = u64::from(got) == expected % (1u64 << 32);
    let validation = Validation {
        metric: "exact".into(),
        error: (u64::from(got) as f64 - (expected % (1u64 << 32)) as f64).abs(),
        tolerance: 0.0,
        passed: ok,
        detail: Some(format!("counter {got}, dispatches issued {expected}")),
    };
    let value = timing.figure(|t| t * 1e6);
    res.timing = Some(timing);
    res.validated(validation, value, |_| {
        "validation failed: not every dispatch ran".into()
    })
}

async fn round_trip(ctx: &Ctx<'_>) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let k = kernel(gpu)?;
    let issued = Cell::new(0u64);
    let res = ProbeResult::of(FigureKey::LatencyRoundTrip).param(
        "what",
        "encode + submit one 1-invocation dispatch + wait for completion",
    );
    let timing = measure::measure(&ctx.plan(), &|| TimingMethod::WallClock, async |iters| {
        let t0 = Instant::now();
        for _ in 0..iters {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&k.pipeline);
                pass.set_bind_group(0, &k.bind, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            gpu.queue.submit([enc.finish()]);
            gpu.wait().await?;
            issued.set(issued.get() + 1);
        }
        Ok(t0.elapsed().as_secs_f64())
    })
    .await?;
    let got: Vec<u32> = gpu.read(&k.counter, 1).await?;
    Ok(finish(res, timing, issued.get(), got[0]))
}

async fn batched(ctx: &Ctx<'_>) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let k = kernel(gpu)?;
    let issued = Cell::new(0u64);
    let res = ProbeResult::of(FigureKey::LatencyDispatch).param(
        "what",
        "many 1-invocation dispatches in one compute pass, time per dispatch",
    );
    let timing = measure::measure(&ctx.plan(), &|| ctx.timer.method(), async |iters| {
        issued.set(issued.get() + u64::from(iters));
        ctx.timer
            .time_pass(&mut |pass| {
                pass.set_pipeline(&k.pipeline);
                pass.set_bind_group(0, &k.bind, &[]);
                for _ in 0..iters {
                    pass.dispatch_workgroups(1, 1, 1);
                }
            })
            .await
    })
    .await?;
    let got: Vec<u32> = gpu.read(&k.counter, 1).await?;
    Ok(finish(res, timing, issued.get(), got[0]))
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let f = FigureKey::LatencyRoundTrip;
    super::step(ctx, emit, f, f.info().label, round_trip(ctx)).await;
    let f = FigureKey::LatencyDispatch;
    super::step(ctx, emit, f, f.info().label, batched(ctx)).await;
    emit(ProbeResult::of(FigureKey::LatencyLaunch).with_status(Status::Unsupported, NO_LAUNCH));
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
    run_with_async_fn!(opencl);
    fn kernels(&self) -> Vec<KernelSource> {
        vec![KernelSource::new("latency", LATENCY_WGSL, "main", &[])]
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: one work-item bumps a counter; the round trip is enqueue +
/// `clFinish` on the wall clock, the batched cost many enqueues timed by profiling events,
/// the launch latency each dispatch's QUEUED to START.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    use super::*;
    use crate::measuring::gpu::opencl::ClGpu;
    use crate::measuring::probes::ClCtx;

    const LATENCY_CL: &str = include_str!("../../../shaders/opencl/latency.cl");

    pub(super) fn cl_sources() -> Vec<crate::measuring::gpu::opencl::ClSource> {
        vec![crate::measuring::gpu::opencl::ClSource::new(
            "latency",
            "latency.cl",
            LATENCY_CL,
            vec![],
        )]
    }

    /// Which latency: the round trip, the cost in a batch, or enqueue to start.
    #[derive(Clone, Copy, PartialEq)]
    enum Mode {
        RoundTrip,
        Batched,
        Launch,
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

    fn measure_cl(ctx: &ClCtx<'_>, mode: Mode) -> Result<ProbeResult> {
        let cl = ctx.cl;
        let prog = cl.build_source(&cl_sources()[0])?;
        let counter = cl.upload("counter", &[0u32])?;
        let k = cl.kernel(&prog, "bump", &[counter.arg()])?;
        let issued = Cell::new(0u64);
        let (figure, what, method) = match mode {
            Mode::Batched => (
                FigureKey::LatencyDispatch,
                "many 1-work-item enqueues, one clFinish, time per dispatch",
                TimingMethod::ProfilingEvents,
            ),
            Mode::RoundTrip => (
                FigureKey::LatencyRoundTrip,
                "enqueue one 1-work-item kernel + clFinish",
                TimingMethod::WallClock,
            ),
            Mode::Launch => (
                FigureKey::LatencyLaunch,
                "enqueue one 1-work-item kernel + clFinish; CL_PROFILING_COMMAND_START - QUEUED",
                TimingMethod::ProfilingEvents,
            ),
        };
        let res = ProbeResult::of(figure).param("what", what);
        let timing = if mode == Mode::Batched {
            ctx.time(&ctx.plan(), &mut || {
                issued.set(issued.get() + 1);
                cl.dispatch(&k, &[1], Some(&[1]))
            })?
        } else {
            pollster::block_on(measure::measure(&ctx.plan(), &|| method, async |iters| {
                let t0 = Instant::now();
                let mut launch = 0.0;
                for _ in 0..iters {
                    if mode == Mode::Launch {
                        launch += launch_seconds(cl, &k)?;
                    } else {
                        cl.dispatch(&k, &[1], Some(&[1]))?;
                        cl.finish()?;
                    }
                    issued.set(issued.get() + 1);
                }
                Ok(if mode == Mode::Launch {
                    launch
                } else {
                    t0.elapsed().as_secs_f64()
                })
            }))?
        };
        let got: Vec<u32> = cl.read(&counter, 1)?;
        Ok(finish(res, timing, issued.get(), got[0]))
    }

    pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
        let f = FigureKey::LatencyRoundTrip;
        super::super::step(ctx, emit, f, f.info().label, async {
            measure_cl(ctx, Mode::RoundTrip)
        })
        .await;
        let f = FigureKey::LatencyDispatch;
        super::super::step(ctx, emit, f, f.info().label, async {
            measure_cl(ctx, Mode::Batched)
        })
        .await;
        let f = FigureKey::LatencyLaunch;
        super::super::step(ctx, emit, f, f.info().label, async {
            measure_cl(ctx, Mode::Launch)
        })
        .await;
    }
}
