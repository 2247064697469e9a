//! Host <-> device transfer bandwidth, timed on the wall clock (a transfer's cost is what the
//! host waits for): host->device is `Queue::write_buffer` + submit + wait; device->host is a
//! copy into a mappable buffer, map, and a copy out into host memory.

use super::Ctx;
use super::measure;
use crate::clock::Instant;
use crate::figure::FigureKey;
use crate::measuring::gpu::TimingMethod;
use crate::measuring::gpu::context::map_read;
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::Rng;
use crate::results::{ProbeResult, Validation};
use anyhow::Result;

fn transfer_bytes(ctx: &Ctx<'_>) -> u64 {
    bytes_within(ctx, ctx.gpu.max_alloc(ctx.host.ram_bytes / 2))
}

/// The copy size: `--array-mib`, else 64 MiB (quick) or 256 MiB, within `max_alloc`.
fn bytes_within(run: &super::RunCtx<'_>, max_alloc: u64) -> u64 {
    let want: u64 = run
        .array_bytes
        .unwrap_or(if run.quick { 64 << 20 } else { 256 << 20 });
    want.min(max_alloc) / 4096 * 4096
}

fn finish(
    mut res: ProbeResult,
    timing: measure::TimingInfo,
    bytes: u64,
    ok: bool,
    detail: String,
) -> ProbeResult {
    let validation = Validation {
        metric: "exact".into(),
        error: if ok { 0.0 } else { 1.0 },
        tolerance: 0.0,
        passed: ok,
        detail: Some(detail),
    };
    let value = timing.figure(|t| bytes as f64 / t * 1e-9);
    res.timing = Some(timing);
    res.validated(validation, value, |_| {
        "validation failed: data arrived changed".into()
    })
}

async fn host_to_device(ctx: &Ctx<'_>, bytes: u64) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let res = ProbeResult::of(FigureKey::TransferToDevice)
        .param("bytes", bytes)
        .param("path", "Queue::write_buffer + submit + wait");
    let data = Rng::fresh().fill_f32((bytes / 4) as usize);
    let buf = gpu.storage_buffer("h2d", bytes)?;
    let timing = measure::measure(&ctx.plan(), &|| TimingMethod::WallClock, async |iters| {
        let t0 = Instant::now();
        for _ in 0..iters {
            gpu.queue.write_buffer(&buf, 0, bytemuck::cast_slice(&data));
            gpu.queue.submit([]);
            gpu.wait().await?;
        }
        Ok(t0.elapsed().as_secs_f64())
    })
    .await?;
    let back: Vec<f32> = gpu.read(&buf, data.len()).await?;
    let ok = back
        .iter()
        .zip(&data)
        .all(|(x, y)| x.to_bits() == y.to_bits());
    Ok(finish(
        res,
        timing,
        bytes,
        ok,
        "device copy read back and compared bit for bit".into(),
    ))
}

async fn device_to_host(ctx: &Ctx<'_>, bytes: u64) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let res = ProbeResult::of(FigureKey::TransferToHost)
        .param("bytes", bytes)
        .param("path", "copy to MAP_READ buffer + map + copy out");
    let data = Rng::fresh().fill_f32((bytes / 4) as usize);
    let src = gpu.upload("d2h source", &data)?;
    let staging = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("d2h staging"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })?;
    let mut last = Vec::new();
    let timing = measure::measure(&ctx.plan(), &|| TimingMethod::WallClock, async |iters| {
        let t0 = Instant::now();
        for _ in 0..iters {
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(&src, 0, &staging, 0, bytes);
            gpu.queue.submit([enc.finish()]);
            last = map_read(gpu, &staging, bytes).await?;
        }
        Ok(t0.elapsed().as_secs_f64())
    })
    .await?;
    let ok = last.len() as u64 == bytes && last == bytemuck::cast_slice::<f32, u8>(&data);
    Ok(finish(
        res,
        timing,
        bytes,
        ok,
        "last copy compared bit for bit with the uploaded data".into(),
    ))
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let bytes = transfer_bytes(ctx);
    let what = |f: FigureKey| format!("{} ({} MiB)", f.info().label, bytes >> 20);
    let f = FigureKey::TransferToDevice;
    super::step(ctx, emit, f, &what(f), host_to_device(ctx, bytes)).await;
    let f = FigureKey::TransferToHost;
    super::step(ctx, emit, f, &what(f), device_to_host(ctx, bytes)).await;
}

/// The transfer probe, as registered in `probes::REGISTRY`.
pub struct Transfer;

impl super::Probe for Transfer {
    fn name(&self) -> &'static str {
        "transfer"
    }
    fn about(&self) -> &'static str {
        "Host-to-device and device-to-host copies (GB/s)."
    }
    fn budget_share(&self) -> f64 {
        0.1
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[FigureKey::TransferToDevice, FigureKey::TransferToHost]
    }
    run_with_async_fn!(opencl);
    fn kernels(&self) -> Vec<KernelSource> {
        Vec::new()
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: blocking `clEnqueueWriteBuffer` / `clEnqueueReadBuffer` from
/// pageable host memory (a Rust `Vec`) and from pinned host memory (a mapped
/// `CL_MEM_ALLOC_HOST_PTR` buffer, as vendors' bandwidth samples do), timed on the wall
/// clock, checked bit for bit. One result per direction and host memory.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    /// Copies only: no program.
    pub(super) fn cl_sources() -> Vec<crate::measuring::gpu::opencl::ClSource> {
        Vec::new()
    }

    use super::*;
    use crate::measuring::probes::ClCtx;

    fn copy(ctx: &ClCtx<'_>, f: FigureKey, host: &mut [f32], pinned: bool) -> Result<ProbeResult> {
        let cl = ctx.cl;
        let bytes = (host.len() * 4) as u64;
        let data = Rng::fresh().fill_f32(host.len());
        let to_device = f == FigureKey::TransferToDevice;
        let mut dev = if to_device {
            cl.buffer::<f32>("transfer", host.len())?
        } else {
            cl.upload("transfer", &data)?
        };
        if to_device {
            host.copy_from_slice(&data);
        }
        let what = match (to_device, pinned) {
            (true, false) => "clEnqueueWriteBuffer (blocking) from pageable host memory",
            (true, true) => "clEnqueueWriteBuffer (blocking) from pinned host memory",
            (false, false) => "clEnqueueReadBuffer (blocking) into pageable host memory",
            (false, true) => "clEnqueueReadBuffer (blocking) into pinned host memory",
        };
        let res = ProbeResult::of(f)
            .param("bytes", bytes)
            .param("path", what)
            .param("host_memory", if pinned { "pinned" } else { "pageable" });
        let host_cell = std::cell::RefCell::new(host);
        let timing = pollster::block_on(measure::measure(
            &ctx.plan(),
            &|| TimingMethod::WallClock,
            async |iters| {
                let mut host = host_cell.borrow_mut();
                let t0 = Instant::now();
                for _ in 0..iters {
                    if to_device {
                        cl.write_from(&mut dev, &host)?;
                    } else {
                        cl.read_into(&dev, &mut host)?;
                    }
                }
                Ok(t0.elapsed().as_secs_f64())
            },
        ))?;
        let host = host_cell.into_inner();
        let got = if to_device {
            cl.read(&dev, data.len())?
        } else {
            host.to_vec()
        };
        let ok = got
            .iter()
            .zip(&data)
            .all(|(x, y)| x.to_bits() == y.to_bits());
        let detail = if to_device {
            "device copy read back and compared bit for bit"
        } else {
            "last copy compared bit for bit with the uploaded data"
        };
        Ok(finish(res, timing, bytes, ok, detail.into()))
    }

    pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
        let bytes = bytes_within(ctx, ctx.cl.max_alloc(ctx.host.ram_bytes / 2));
        let floats = (bytes / 4) as usize;
        for f in [FigureKey::TransferToDevice, FigureKey::TransferToHost] {
            let what = format!("{} ({} MiB, pageable)", f.info().label, bytes >> 20);
            super::super::step(ctx, emit, f, &what, async {
                let mut host = vec![0.0f32; floats];
                copy(ctx, f, &mut host, false)
            })
            .await;
            let what = format!("{} ({} MiB, pinned)", f.info().label, bytes >> 20);
            super::super::step(ctx, emit, f, &what, async {
                let mut pinned = ctx.cl.pinned_host(floats)?;
                copy(ctx, f, pinned.as_mut_slice(), true)
            })
            .await;
        }
    }
}
