//! STREAM-style memory bandwidth: copy, scale, add, triad, and a read-only dot product.
//!
//! Arrays are vec4<f32>, sized at least 4x the device's last-level cache where it is known
//! (the host's L3 for a software adapter), else 256 MiB, and always within the adapter's
//! buffer limits. Arrays larger than one binding are covered by several bind windows, one
//! dispatch each. Bandwidth counts bytes read plus bytes written.

use super::Ctx;
use super::measure::{self, TimingInfo};
use crate::figure::FigureKey;
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::KernelSpec;
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::{Rng, max_rel_error};
use crate::results::{ProbeResult, Status, Validation};
use anyhow::Result;

const STREAM_WGSL: &str = include_str!("../../../../shaders/stream.wgsl");
/// (workgroup size, elements per invocation) configurations the tuner tries per kernel. CPU
/// rasterisers differ in which loop shapes they unroll; GPUs are indifferent.
pub const CONFIGS: [(u32, u32); 5] = [(256, 4), (256, 16), (1024, 4), (1024, 1), (512, 8)];
/// The configurations of `CONFIGS` whose workgroup fits the device's limits, in order.
pub fn fitting_configs(l: &wgpu::Limits) -> Vec<(u32, u32)> {
    CONFIGS
        .into_iter()
        .filter(|&(wg, _)| {
            wg <= l.max_compute_invocations_per_workgroup && wg <= l.max_compute_workgroup_size_x
        })
        .collect()
}

/// Every array is a whole number of the largest block (4096 vec4 = 64 KiB).
const MAX_BLOCK: u64 = 512 * 8;
const SCALAR: f32 = 3.0;
/// Element-wise relative tolerance: one rounding (a contracted FMA in triad may differ from
/// the CPU's separate multiply and add by an ulp).
const TOLERANCE: f64 = 1e-6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Copy,
    Scale,
    Add,
    Triad,
    Dot,
}

impl Kernel {
    pub const ALL: [Kernel; 5] = [
        Kernel::Copy,
        Kernel::Scale,
        Kernel::Add,
        Kernel::Triad,
        Kernel::Dot,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Copy => "copy",
            Kernel::Scale => "scale",
            Kernel::Add => "add",
            Kernel::Triad => "triad",
            Kernel::Dot => "dot",
        }
    }

    pub fn figure(self) -> FigureKey {
        match self {
            Kernel::Copy => FigureKey::StreamCopy,
            Kernel::Scale => FigureKey::StreamScale,
            Kernel::Add => FigureKey::StreamAdd,
            Kernel::Triad => FigureKey::StreamTriad,
            Kernel::Dot => FigureKey::StreamDot,
        }
    }

    /// Arrays read and written per element.
    fn traffic(self) -> (u64, u64) {
        match self {
            Kernel::Copy | Kernel::Scale => (1, 1),
            Kernel::Add | Kernel::Triad => (2, 1),
            Kernel::Dot => (2, 0),
        }
    }
}

/// Largest array a quick run on a software adapter uses. A VM may report its whole
/// socket's last-level cache (480 MiB seen on a 2-vCPU Intel VM): 4x that gave 1 GiB
/// arrays whose set-up and checks alone took the quick run to 125 s. Three 256 MiB arrays
/// still exceed such a cache, and llvmpipe's copy rate is the same at 128 MiB and 1 GiB.
pub const QUICK_SOFTWARE_CAP: u64 = 256 << 20;

/// (bytes per array, how the size was chosen). `quick`: a quick run, which caps a software
/// adapter's arrays at `QUICK_SOFTWARE_CAP`.
pub fn array_bytes(gpu: &Gpu, host: &crate::host::HostInfo, quick: bool) -> (u64, String) {
    array_bytes_for(&gpu.info, gpu.max_alloc(host.ram_bytes / 3), quick)
}

/// `array_bytes` for any executor: `max_alloc` is the largest array the device (and, for a
/// CPU device, the host's memory) allows.
pub fn array_bytes_for(
    info: &crate::model::AdapterSummary,
    max_alloc: u64,
    quick: bool,
) -> (u64, String) {
    let name = info.name.to_lowercase();
    let llc = if info.software {
        crate::measuring::cache_levels::host_caches()
            .iter()
            .map(|c| c.bytes)
            .max()
            .map(|b| (b, "host last-level cache".to_string()))
    } else {
        crate::measuring::cache_levels::gpu_caches(&name)
            .iter()
            .map(|c| c.bytes)
            .max()
            .map(|b| (b, "known last-level cache".to_string()))
    };
    let (mut want, mut why) = match llc {
        Some((b, src)) => ((4 * b).max(32 << 20), format!("4 x {} MiB {src}", b >> 20)),
        None => (256 << 20, "256 MiB: last-level cache unknown".to_string()),
    };
    if quick && info.software && want > QUICK_SOFTWARE_CAP {
        want = QUICK_SOFTWARE_CAP;
        why = format!(
            "{why}, capped at {} MiB for a quick run on a software adapter",
            QUICK_SOFTWARE_CAP >> 20
        );
    }
    // Three arrays must fit in a quarter of host memory (a software adapter's device memory
    // is host memory, and validation keeps host copies) and within the buffer limit.
    let cap = max_alloc.min(1 << 30);
    let bytes = want.min(cap) / (MAX_BLOCK * 16) * (MAX_BLOCK * 16);
    let why = if bytes < want {
        format!(
            "{why}, capped at {} MiB by the adapter's or host's memory",
            bytes >> 20
        )
    } else {
        why
    };
    (bytes, why)
}

struct Window {
    bind: wgpu::BindGroup,
    groups: (u32, u32),
    count: u64,
}

/// Splits `count` vec4 elements (a multiple of `block`, the elements one workgroup handles)
/// into windows within the binding limit, the offset alignment and a one-dimensional grid,
/// each a whole number of blocks, so the kernels need no element test.
fn windows(gpu: &Gpu, count: u64, block: u64) -> Vec<(u64, u64)> {
    let align = u64::from(gpu.limits.min_storage_buffer_offset_alignment).max(16) / 16;
    let unit = lcm(align, block);
    let max_bind = gpu.limits.max_storage_buffer_binding_size / 16;
    let max_grid = u64::from(gpu.limits.max_compute_workgroups_per_dimension) * block;
    let step = (max_bind.min(max_grid).min(u64::from(u32::MAX)) / unit * unit).max(unit);
    let mut out = Vec::new();
    let mut s = 0;
    while s < count {
        let n = step.min(count - s);
        out.push((s, n));
        s += n;
    }
    out
}

fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    a / gcd(a, b) * b
}

/// Random input arrays on the host (for validation) and on the device.
struct Arrays {
    ha: Vec<f32>,
    hb: Vec<f32>,
    hc: Vec<f32>,
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    c: wgpu::Buffer,
}

impl Arrays {
    fn new(gpu: &Gpu, elems: u64) -> Result<Arrays> {
        let n = (elems * 4) as usize;
        let mut rng = Rng::fresh();
        let (ha, hb, hc) = (rng.fill_f32(n), rng.fill_f32(n), rng.fill_f32(n));
        let (a, b, c) = (
            gpu.upload("a", &ha)?,
            gpu.upload("b", &hb)?,
            gpu.upload("c", &hc)?,
        );
        Ok(Arrays {
            ha,
            hb,
            hc,
            a,
            b,
            c,
        })
    }
}

/// Dot's partial sums: one vec4 per invocation, one `stride`-byte slice per window.
struct Partials {
    buf: wgpu::Buffer,
    stride: u64,
}

/// Workgroups that cover `count` vec4 elements in blocks of `block`.
fn groups_of(count: u64, block: u64) -> u32 {
    (count.div_ceil(block)) as u32
}

/// Runs one kernel configuration on `arrays`. No kernel writes an array it reads, so trials
/// can share one set of arrays: each poisons its output first.
async fn run_kernel(
    ctx: &Ctx<'_>,
    kernel: Kernel,
    arrays: &Arrays,
    why: &str,
    (wg, per_thread): (u32, u32),
    plan: &measure::Plan,
) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let elems = arrays.ha.len() as u64 / 4;
    let bytes = elems * 16;
    let mut res = ProbeResult::of(kernel.figure())
        .param("kernel", kernel.name())
        .param("array_bytes", bytes)
        .param("array_size_reason", why)
        .param("element", "vec4<f32>");
    let block = u64::from(wg * per_thread);
    let wins = windows(gpu, elems, block);
    let partials = alloc_partials(gpu, kernel, &wins, block, wg)?;
    poison_output(gpu, kernel, arrays, partials.as_ref());
    let (pipeline, layout) = build_pipeline(gpu, kernel, (wg, per_thread))?;
    let windows_v = bind_windows(gpu, &layout, arrays, &wins, partials.as_ref(), block)?;
    let timing: TimingInfo = measure::measure(plan, &|| ctx.timer.method(), async |iters| {
        ctx.timer
            .time_pass(&mut |pass| {
                pass.set_pipeline(&pipeline);
                for _ in 0..iters {
                    for w in &windows_v {
                        pass.set_bind_group(0, &w.bind, &[]);
                        pass.dispatch_workgroups(w.groups.0, w.groups.1, 1);
                    }
                }
            })
            .await
    })
    .await?;
    res = res.param("bind_windows", windows_v.len());
    res.kernel = Some(serde_json::json!({
        "workgroup_size": wg,
        "elements_per_invocation": per_thread,
        "label": format!("{wg} invocations x {per_thread} vec4"),
        "runtime_checks": true,
    }));
    // Validate against the CPU.
    let (err, detail) = match kernel {
        Kernel::Dot => {
            let p = partials.as_ref().expect("dot has partials");
            validate_dot(gpu, arrays, &windows_v, p, (block, wg)).await?
        }
        _ => validate_elementwise(gpu, kernel, arrays).await?,
    };
    Ok(finish(res, kernel, timing, (err, detail), bytes))
}

/// Kernel step 1 (dot only): the buffer for the partial sums of every window.
fn alloc_partials(
    gpu: &Gpu,
    kernel: Kernel,
    wins: &[(u64, u64)],
    block: u64,
    wg: u32,
) -> Result<Option<Partials>> {
    // Dot writes one partial sum (a vec4) per invocation into its own buffer.
    let partial_stride = {
        let align = u64::from(gpu.limits.min_storage_buffer_offset_alignment).max(16);
        wins.iter()
            .map(|&(_, n)| {
                (u64::from(groups_of(n, block)) * u64::from(wg) * 16).next_multiple_of(align)
            })
            .max()
            .unwrap_or(align)
    };
    (kernel == Kernel::Dot)
        .then(|| gpu.storage_buffer("partials", partial_stride * wins.len() as u64))
        .transpose()
        .map(|b| {
            b.map(|buf| Partials {
                buf,
                stride: partial_stride,
            })
        })
}

/// Kernel step 2: poisons the kernel's output so unwritten elements fail validation.
fn poison_output(gpu: &Gpu, kernel: Kernel, arrays: &Arrays, partials: Option<&Partials>) {
    let Arrays { a, b, c, .. } = arrays;
    match kernel {
        Kernel::Copy | Kernel::Add => gpu.poison(c, f32::NAN.to_bits()),
        Kernel::Scale => gpu.poison(b, f32::NAN.to_bits()),
        Kernel::Triad => gpu.poison(a, f32::NAN.to_bits()),
        Kernel::Dot => gpu.poison(partials.map_or(c, |p| &p.buf), f32::NAN.to_bits()),
    }
}

/// Kernel step 3: the kernel's pipeline and its bind group layout.
fn build_pipeline(
    gpu: &Gpu,
    kernel: Kernel,
    (wg, per_thread): (u32, u32),
) -> Result<(wgpu::ComputePipeline, wgpu::BindGroupLayout)> {
    let constants = [("WG", f64::from(wg)), ("PER_THREAD", f64::from(per_thread))];
    // An explicit layout: not every entry point uses every binding, and a derived layout
    // would leave the unused ones out.
    let storage = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: false },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let layout = gpu
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("stream"),
            entries: &[
                storage(0),
                storage(1),
                storage(2),
                wgpu::BindGroupLayoutEntry {
                    binding: 3,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        });
    let pipeline_layout = gpu
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("stream"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    // Runtime checks stay on: the windows' element counts come from a uniform, and the
    // kernels' guards against them are what keeps the last workgroup in range.
    let pipeline = gpu.kernel(&KernelSpec {
        entry: kernel.name(),
        constants: &constants,
        layout: Some(&pipeline_layout),
        ..KernelSpec::new(kernel.name(), STREAM_WGSL)
    })?;
    Ok((pipeline, layout))
}

/// Kernel step 4: one bind group (and params uniform) per window.
fn bind_windows(
    gpu: &Gpu,
    layout: &wgpu::BindGroupLayout,
    arrays: &Arrays,
    wins: &[(u64, u64)],
    partials: Option<&Partials>,
    block: u64,
) -> Result<Vec<Window>> {
    fn binding(buf: &wgpu::Buffer, start: u64, count: u64) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: buf,
            offset: start * 16,
            size: std::num::NonZeroU64::new(count * 16),
        })
    }
    let Arrays { a, b, c, .. } = arrays;
    let mut windows_v = Vec::new();
    for (wi, &(start, count)) in wins.iter().enumerate() {
        let groups = (groups_of(count, block), 1);
        let params: [u32; 4] = [count as u32, groups.0, SCALAR.to_bits(), 0];
        let ubuf = gpu.uniform_buffer("stream params", bytemuck::cast_slice(&params))?;
        let third = match partials {
            Some(p) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &p.buf,
                offset: p.stride * wi as u64,
                size: std::num::NonZeroU64::new(p.stride),
            }),
            None => binding(c, start, count),
        };
        let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("stream window"),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: binding(a, start, count),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: binding(b, start, count),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: third,
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: ubuf.as_entire_binding(),
                },
            ],
        });
        windows_v.push(Window {
            bind,
            groups,
            count,
        });
    }
    Ok(windows_v)
}

/// Validation step (dot): the sum of the partial sums against the CPU's f64 dot product,
/// relative to the sum of |a*b|.
async fn validate_dot(
    gpu: &Gpu,
    arrays: &Arrays,
    windows_v: &[Window],
    p: &Partials,
    (block, wg): (u64, u32),
) -> Result<(f64, String)> {
    let Arrays { ha, hb, .. } = arrays;
    let mut sum = 0.0f64;
    for (wi, w) in windows_v.iter().enumerate() {
        let sums = groups_of(w.count, block) as usize * wg as usize;
        let bytes = gpu
            .read_bytes(&p.buf, p.stride * wi as u64, (sums * 16) as u64)
            .await?;
        let v: Vec<f32> = bytemuck::pod_collect_to_vec(&bytes);
        sum += v.iter().map(|&x| f64::from(x)).sum::<f64>();
    }
    Ok(dot_error(sum, ha, hb))
}

/// Validation step (copy, scale, add, triad): the largest element-wise relative error of
/// the output array against the CPU.
/// What copy, scale, add and triad must leave, and in which array (a, b or c: 0, 1, 2).
fn expected(kernel: Kernel, ha: &[f32], hb: &[f32], hc: &[f32]) -> (usize, Vec<f32>) {
    match kernel {
        Kernel::Copy => (2, ha.to_vec()),
        Kernel::Scale => (1, hc.iter().map(|x| SCALAR * x).collect()),
        Kernel::Add => (2, ha.iter().zip(hb).map(|(x, y)| x + y).collect()),
        _ => (0, hb.iter().zip(hc).map(|(y, z)| y + SCALAR * z).collect()),
    }
}

/// Dot's check: the sum of the partial sums against the CPU's, relative to sum |a*b| (f32
/// partial sums: the error grows like sqrt(n) * u relative to that).
fn dot_error(sum: f64, ha: &[f32], hb: &[f32]) -> (f64, String) {
    let want: f64 = ha
        .iter()
        .zip(hb)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let scale: f64 = ha
        .iter()
        .zip(hb)
        .map(|(x, y)| (f64::from(*x) * f64::from(*y)).abs())
        .sum();
    let e = if sum.is_finite() {
        (sum - want).abs() / scale
    } else {
        f64::INFINITY
    };
    (
        e,
        format!("dot {sum:.6e} vs CPU {want:.6e}, error relative to sum|a*b|"),
    )
}

async fn validate_elementwise(gpu: &Gpu, kernel: Kernel, arrays: &Arrays) -> Result<(f64, String)> {
    let Arrays {
        ha,
        hb,
        hc,
        a,
        b,
        c,
    } = arrays;
    let n = ha.len();
    let (which, want) = expected(kernel, ha, hb, hc);
    let out = [a, b, c][which];
    let got: Vec<f32> = gpu.read(out, n).await?;
    let e = max_rel_error(&got, &want);
    Ok((
        e,
        "largest element-wise relative error over the whole array".to_string(),
    ))
}

/// Final step: records the validation and, if it passed, the bandwidth.
fn finish(
    mut res: ProbeResult,
    kernel: Kernel,
    timing: TimingInfo,
    (err, detail): (f64, String),
    bytes: u64,
) -> ProbeResult {
    let tol = if kernel == Kernel::Dot {
        1e-5
    } else {
        TOLERANCE
    };
    let passed = err <= tol;
    let validation = Validation {
        metric: if kernel == Kernel::Dot {
            "rel_sum".into()
        } else {
            "max_rel".into()
        },
        error: err,
        tolerance: tol,
        passed,
        detail: Some(detail),
    };
    let (r, w) = kernel.traffic();
    let moved = (r + w) as f64 * bytes as f64;
    let value = timing.figure(|t| moved / t * 1e-9);
    res.timing = Some(timing);
    res.validated(validation, value, Validation::tolerance_exceeded)
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let (bytes, why) = match ctx.array_bytes {
        Some(b) => (b, "given with --array-mib".to_string()),
        None => array_bytes(ctx.gpu, ctx.host, ctx.quick),
    };
    // Whole workgroup blocks only (64 KiB: the largest block of any configuration).
    let bytes = (bytes / (MAX_BLOCK * 16) * (MAX_BLOCK * 16)).max(MAX_BLOCK * 16);
    // One array is one buffer (bindings beyond the binding limit are split into windows).
    if bytes > ctx.gpu.limits.max_buffer_size {
        for k in Kernel::ALL {
            emit(ProbeResult::of(k.figure()).with_status(
                Status::Failed,
                format!(
                    "{} MiB arrays ({why}) exceed the adapter's max_buffer_size ({} MiB)",
                    bytes >> 20,
                    ctx.gpu.limits.max_buffer_size >> 20
                ),
            ));
        }
        return;
    }
    let elems = bytes / 16;
    let tune_plan = measure::Plan::trial(64);
    // Configurations whose workgroup the device cannot run are not tried (a browser's
    // WebGPU device allows 256 invocations by default).
    let fitting = fitting_configs(&ctx.gpu.limits);
    if fitting.is_empty() {
        for k in Kernel::ALL {
            emit(ProbeResult::of(k.figure()).with_status(
                Status::Failed,
                "no stream configuration fits the adapter's workgroup limits",
            ));
        }
        return;
    }
    // The configuration chosen for the kernels so far: a quick run behind its budget
    // measures the next kernels with it instead of tuning again.
    let chosen = std::cell::Cell::new(None);
    for k in Kernel::ALL {
        let what = format!("stream {} ({} MiB arrays): tuning", k.name(), bytes >> 20);
        super::step(ctx, emit, k.figure(), &what, async {
            let configs: &[(u32, u32)] = match chosen.get() {
                Some(c) if ctx.shrink() => &[c],
                _ if ctx.shrink() => &fitting[..1],
                _ => &fitting,
            };
            let (r, cfg) =
                tune_and_measure(ctx, k, elems, bytes, &why, (configs, &tune_plan)).await?;
            chosen.set(chosen.get().or(cfg));
            Ok(r)
        })
        .await;
    }
}

/// One kernel: short trials of each configuration on shared arrays (none when there is only
/// one), then the chosen one measured in full on fresh data. Gives the result and the
/// configuration measured.
async fn tune_and_measure(
    ctx: &Ctx<'_>,
    k: Kernel,
    elems: u64,
    bytes: u64,
    why: &str,
    (configs, tune_plan): (&[(u32, u32)], &measure::Plan),
) -> Result<(ProbeResult, Option<(u32, u32)>)> {
    let (chosen, trials) = match configs {
        [only] => (Some(*only), Vec::new()),
        _ => tune(ctx, k, elems, why, configs, tune_plan).await?,
    };
    let Some(cfg) = chosen else {
        let mut r = ProbeResult::of(k.figure());
        r.autotune = trials;
        return Ok((r.no_valid_configuration(), None));
    };
    (ctx.progress)(&format!(
        "stream {} ({} MiB arrays): measuring",
        k.name(),
        bytes >> 20
    ));
    // Fresh data for the measured run.
    let arrays = Arrays::new(ctx.gpu, elems)?;
    let mut r = run_kernel(ctx, k, &arrays, why, cfg, &ctx.plan()).await?;
    r.autotune = trials;
    Ok((r, Some(cfg)))
}

/// A stream configuration: invocations per workgroup, vec4s per invocation.
type Config = (u32, u32);

/// Short trials of each configuration on one set of arrays: the fastest valid one, and
/// every trial as recorded in the results file.
async fn tune(
    ctx: &Ctx<'_>,
    k: Kernel,
    elems: u64,
    why: &str,
    configs: &[(u32, u32)],
    tune_plan: &measure::Plan,
) -> Result<(Option<Config>, Vec<serde_json::Value>)> {
    let mut trials = Vec::new();
    let mut best: Option<(f64, (u32, u32))> = None;
    let arrays = Arrays::new(ctx.gpu, elems)?;
    for &cfg in configs {
        let r = run_kernel(ctx, k, &arrays, why, cfg, tune_plan).await;
        if r.is_err() {
            // The web reports a failed build later: let it surface here, with its trial.
            let _ = ctx.gpu.settle().await;
        }
        let (gbps, valid, note) = match &r {
            Ok(r) => (
                r.value.as_ref().map(|v| v.median),
                r.status == Status::Ok,
                r.reason.clone(),
            ),
            Err(e) => (None, false, Some(format!("{e:#}"))),
        };
        if let (Some(g), true) = (gbps, valid)
            && best.is_none_or(|(b, _)| g > b)
        {
            best = Some((g, cfg));
        }
        trials.push(serde_json::json!({
            "config": format!("{} invocations x {} vec4", cfg.0, cfg.1),
            "gbps_median": gbps,
            "valid": valid,
            "note": note,
        }));
    }
    Ok((best.map(|(_, c)| c), trials))
}

/// The stream probe, as registered in `probes::REGISTRY`.
pub struct Stream;

impl super::Probe for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }
    fn about(&self) -> &'static str {
        "STREAM copy, scale, add, triad and a dot-product reduction (GB/s)."
    }
    fn budget_share(&self) -> f64 {
        0.2
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[
            FigureKey::StreamCopy,
            FigureKey::StreamScale,
            FigureKey::StreamAdd,
            FigureKey::StreamTriad,
            FigureKey::StreamDot,
        ]
    }
    run_with_async_fn!(opencl);
    fn kernels(&self) -> Vec<KernelSource> {
        let mut out = Vec::new();
        for k in Kernel::ALL {
            for (wg, per_thread) in CONFIGS {
                let constants = [("WG", f64::from(wg)), ("PER_THREAD", f64::from(per_thread))];
                out.push(KernelSource::new(
                    k.name(),
                    STREAM_WGSL,
                    k.name(),
                    &constants,
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{CONFIGS, fitting_configs};

    #[test]
    fn configurations_beyond_the_workgroup_limit_are_not_tried() {
        let web = wgpu::Limits::default();
        assert_eq!(web.max_compute_invocations_per_workgroup, 256);
        assert_eq!(fitting_configs(&web), vec![(256, 4), (256, 16)]);
        let big = wgpu::Limits {
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_size_x: 1024,
            ..wgpu::Limits::default()
        };
        assert_eq!(fitting_configs(&big), CONFIGS.to_vec());
    }

    #[test]
    fn traffic_counts() {
        use super::Kernel::*;
        assert_eq!(Triad.traffic(), (2, 1));
        assert_eq!(Dot.traffic(), (2, 0));
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: the same array sizing, kernels, tuning, validation and
/// figures; kernels in OpenCL C over floatVEC elements, one per work-item.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl;
