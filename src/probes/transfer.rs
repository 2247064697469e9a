//! Host <-> device transfer bandwidth, timed on the wall clock (a transfer's cost is what the
//! host waits for): host->device is `Queue::write_buffer` + submit + wait; device->host is a
//! copy into a mappable buffer, map, and a copy out into host memory.

use super::Ctx;
use super::measure;
use crate::clock::Instant;
use crate::figure::FigureKey;
use crate::gpu::TimingMethod;
use crate::gpu::context::map_read;
use crate::gpu::wgsl::KernelSource;
use crate::reference::Rng;
use crate::results::{ProbeResult, Validation};
use anyhow::Result;

fn transfer_bytes(ctx: &Ctx<'_>) -> u64 {
    let want: u64 = ctx
        .array_bytes
        .unwrap_or(if ctx.quick { 64 << 20 } else { 256 << 20 });
    want.min(ctx.gpu.max_alloc(ctx.host.ram_bytes / 2)) / 4096 * 4096
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
    let value = timing
        .time_per_iter_s
        .map(|t| bytes as f64 / t * 1e-9, true);
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
    run_with_async_fn!();
    fn kernels(&self) -> Vec<KernelSource> {
        Vec::new()
    }
}
