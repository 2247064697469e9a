//! STREAM-style memory bandwidth: copy, scale, add, triad, and a read-only dot product.
//!
//! Arrays are f32 (vec4<f32> on wgpu, floatN on OpenCL), sized at least 4x the device's last-level cache where it is known
//! (the host's L3 for a software adapter), else 256 MiB, and always within the adapter's
//! buffer limits. Bandwidth counts bytes read plus bytes written. The method (sizing, tuning,
//! measuring, validation, figures) is here once, over `StreamExecutor`; `on_wgpu` and
//! `on_opencl` hold the kernels and how they are dispatched.

use super::executor::{self, Executor};
use super::measure::{self, TimingInfo};
use crate::figure::FigureKey;
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::{Rng, max_rel_error};
use crate::results::{ProbeResult, Status, Validation};
use anyhow::Result;

pub use on_wgpu::{CONFIGS, array_bytes, fitting_configs};

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

/// What the STREAM method asks of an executor: the kernels over three f32 arrays (a, b, c),
/// built for one configuration, dispatched and timed a batch at a time, and read back.
#[allow(async_fn_in_trait)]
pub trait StreamExecutor: Executor {
    /// One kernel configuration the tuner tries.
    type Config: Copy;
    /// The three arrays on the device.
    type Arrays;
    /// One kernel built for one configuration over the arrays, ready to dispatch.
    type Prepared;
    /// (bytes per array, how the size was chosen) when `--array-mib` does not say.
    fn array_bytes(&self) -> (u64, String);
    /// Why arrays of `bytes` (sized for `why`) cannot be measured at all, if so.
    fn unfit(&self, _bytes: u64, _why: &str) -> Option<String> {
        None
    }
    /// The configurations to try for `k`, given the one chosen for the kernels before it.
    fn candidates(&self, k: Kernel, chosen: Option<Self::Config>) -> Vec<Self::Config>;
    /// A configuration as the tuning trials record it.
    fn label(&self, k: Kernel, cfg: Self::Config) -> String;
    /// The host arrays a, b and c on the device.
    fn upload(&self, host: &[Vec<f32>; 3]) -> Result<Self::Arrays>;
    /// Fills array `which` with NaN, so an element the kernel leaves unwritten fails.
    fn poison(&self, arrays: &mut Self::Arrays, which: usize) -> Result<()>;
    /// Builds `k` for `cfg` over arrays of `floats` f32 each (dot: with its partial sums,
    /// poisoned).
    fn prepare(
        &self,
        k: Kernel,
        arrays: &Self::Arrays,
        cfg: Self::Config,
        floats: usize,
    ) -> Result<Self::Prepared>;
    /// Runs `iters` dispatches as one batch; the seconds it took.
    async fn dispatch(&self, p: &Self::Prepared, iters: u32) -> Result<f64>;
    /// Array `which` (`floats` f32) read back.
    async fn read(&self, arrays: &Self::Arrays, which: usize, floats: usize) -> Result<Vec<f32>>;
    /// Dot's result: the sum of its partial sums, read back.
    async fn dot_sum(&self, p: &Self::Prepared) -> Result<f64>;
    /// The measured result's executor-specific parameters and kernel description.
    fn describe(&self, res: ProbeResult, k: Kernel, p: &Self::Prepared) -> ProbeResult;
}

/// Random inputs on the host (for validation) and the device.
pub struct Arrays<D> {
    pub host: [Vec<f32>; 3],
    pub dev: D,
}

fn fresh<E: StreamExecutor>(exec: &E, floats: usize) -> Result<Arrays<E::Arrays>> {
    let mut rng = Rng::fresh();
    let host = [
        rng.fill_f32(floats),
        rng.fill_f32(floats),
        rng.fill_f32(floats),
    ];
    let dev = exec.upload(&host)?;
    Ok(Arrays { host, dev })
}

/// The array (a, b or c: 0, 1, 2) copy, scale, add and triad write, and what they must leave
/// there; None for dot.
fn expected(kernel: Kernel, [ha, hb, hc]: &[Vec<f32>; 3]) -> Option<(usize, Vec<f32>)> {
    Some(match kernel {
        Kernel::Copy => (2, ha.to_vec()),
        Kernel::Scale => (1, hc.iter().map(|x| SCALAR * x).collect()),
        Kernel::Add => (2, ha.iter().zip(hb).map(|(x, y)| x + y).collect()),
        Kernel::Triad => (0, hb.iter().zip(hc).map(|(y, z)| y + SCALAR * z).collect()),
        Kernel::Dot => return None,
    })
}

/// The array `kernel` writes (None for dot, which writes partial sums).
fn output(kernel: Kernel) -> Option<usize> {
    match kernel {
        Kernel::Copy | Kernel::Add => Some(2),
        Kernel::Scale => Some(1),
        Kernel::Triad => Some(0),
        Kernel::Dot => None,
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

/// Validation against the CPU: dot's sum, or the largest element-wise relative error of the
/// output array.
async fn check<E: StreamExecutor>(
    exec: &E,
    k: Kernel,
    arrays: &Arrays<E::Arrays>,
    p: &E::Prepared,
) -> Result<(f64, String)> {
    let [ha, hb, _] = &arrays.host;
    let Some((which, want)) = expected(k, &arrays.host) else {
        return Ok(dot_error(exec.dot_sum(p).await?, ha, hb));
    };
    let got = exec.read(&arrays.dev, which, ha.len()).await?;
    Ok((
        max_rel_error(&got, &want),
        "largest element-wise relative error over the whole array".to_string(),
    ))
}

/// The result every executor's starts from: the figure and how the arrays were sized.
fn sized(k: Kernel, bytes: u64, why: &str) -> ProbeResult {
    ProbeResult::of(k.figure())
        .param("array_bytes", bytes)
        .param("array_size_reason", why)
}

/// Records the validation and, if it passed, the bandwidth.
fn finish(
    mut res: ProbeResult,
    kernel: Kernel,
    timing: TimingInfo,
    (err, detail): (f64, String),
    bytes: u64,
) -> ProbeResult {
    let dot = kernel == Kernel::Dot;
    let tol = if dot { 1e-5 } else { TOLERANCE };
    let validation = Validation::within(if dot { "rel_sum" } else { "max_rel" }, err, tol, detail);
    let (r, w) = kernel.traffic();
    let moved = (r + w) as f64 * bytes as f64;
    let value = timing.figure(|t| moved / t * 1e-9);
    res.timing = Some(timing);
    res.validated(validation, value, Validation::tolerance_exceeded)
}

/// One kernel configuration measured under `plan` on `arrays`. No kernel writes an array it
/// reads, so trials can share one set of arrays: each poisons its output first.
async fn measure_kernel<E: StreamExecutor>(
    exec: &E,
    k: Kernel,
    arrays: &mut Arrays<E::Arrays>,
    cfg: E::Config,
    plan: &measure::Plan,
    (bytes, why): (u64, &str),
) -> Result<ProbeResult> {
    let floats = arrays.host[0].len();
    if let Some(which) = output(k) {
        exec.poison(&mut arrays.dev, which)?;
    }
    let p = exec.prepare(k, &arrays.dev, cfg, floats)?;
    let timing = executor::time(exec, plan, async |iters| exec.dispatch(&p, iters).await).await?;
    let checked = check(exec, k, arrays, &p).await?;
    let res = exec.describe(sized(k, bytes, why), k, &p);
    Ok(finish(res, k, timing, checked, bytes))
}

/// Runs the probe on `exec`: one result per kernel.
pub async fn run_on<E: StreamExecutor>(exec: &E, emit: &mut dyn FnMut(ProbeResult)) {
    let (bytes, why) = match exec.run_ctx().array_bytes {
        Some(b) => (b, "given with --array-mib".to_string()),
        None => exec.array_bytes(),
    };
    // Whole workgroup blocks only (64 KiB: the largest block of any configuration).
    let bytes = (bytes / (MAX_BLOCK * 16) * (MAX_BLOCK * 16)).max(MAX_BLOCK * 16);
    if let Some(why_not) = exec.unfit(bytes, &why) {
        for k in Kernel::ALL {
            emit(ProbeResult::of(k.figure()).with_status(Status::Failed, why_not.clone()));
        }
        return;
    }
    // The configuration chosen for the kernels so far.
    let chosen = std::cell::Cell::new(None);
    for k in Kernel::ALL {
        let what = format!("stream {} ({} MiB arrays): tuning", k.name(), bytes >> 20);
        super::step(exec, emit, k.figure(), &what, async {
            let (r, cfg) = tune_and_measure(exec, k, (bytes, &why), chosen.get()).await?;
            chosen.set(chosen.get().or(cfg));
            Ok(r)
        })
        .await;
    }
}

/// One kernel: short trials of each candidate on shared arrays (none when there is only
/// one), then the chosen one measured in full on fresh data. Gives the result and the
/// configuration measured.
async fn tune_and_measure<E: StreamExecutor>(
    exec: &E,
    k: Kernel,
    (bytes, why): (u64, &str),
    chosen: Option<E::Config>,
) -> Result<(ProbeResult, Option<E::Config>)> {
    let floats = (bytes / 4) as usize;
    let candidates = exec.candidates(k, chosen);
    let (best, trials) = match candidates[..] {
        [only] => (Some(only), Vec::new()),
        ref configs => tune(exec, k, floats, (bytes, why), configs).await?,
    };
    let Some(cfg) = best else {
        let mut r = sized(k, bytes, why);
        r.autotune = trials;
        return Ok((r.no_valid_configuration(), None));
    };
    exec.say(&format!(
        "stream {} ({} MiB arrays): measuring",
        k.name(),
        bytes >> 20
    ));
    // Fresh data for the measured run.
    let mut arrays = fresh(exec, floats)?;
    let plan = exec.run_ctx().plan();
    let mut r = measure_kernel(exec, k, &mut arrays, cfg, &plan, (bytes, why)).await?;
    r.autotune = trials;
    Ok((r, Some(cfg)))
}

/// Short trials of each configuration on one set of arrays: the fastest valid one, and
/// every trial as recorded in the results file.
async fn tune<E: StreamExecutor>(
    exec: &E,
    k: Kernel,
    floats: usize,
    sizing: (u64, &str),
    configs: &[E::Config],
) -> Result<(Option<E::Config>, Vec<serde_json::Value>)> {
    let plan = measure::Plan::trial(64);
    let mut trials = Vec::new();
    let mut best: Option<(f64, E::Config)> = None;
    let mut arrays = fresh(exec, floats)?;
    for &cfg in configs {
        if !exec.keep_tuning(best.is_some()) {
            break;
        }
        let r = measure_kernel(exec, k, &mut arrays, cfg, &plan, sizing).await;
        if r.is_err() {
            exec.settle().await;
        }
        let (gbps, valid, note) = match r {
            Ok(r) => (r.value.map(|v| v.median), r.status == Status::Ok, r.reason),
            Err(e) => (None, false, Some(format!("{e:#}"))),
        };
        if let (Some(g), true) = (gbps, valid)
            && best.is_none_or(|(b, _)| g > b)
        {
            best = Some((g, cfg));
        }
        trials.push(serde_json::json!({
            "config": exec.label(k, cfg),
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
    run_with_async_fn!(run_on);
    fn kernels(&self) -> Vec<KernelSource> {
        let mut out = Vec::new();
        for k in Kernel::ALL {
            for (wg, per_thread) in CONFIGS {
                let constants = [("WG", f64::from(wg)), ("PER_THREAD", f64::from(per_thread))];
                out.push(KernelSource::new(
                    k.name(),
                    on_wgpu::STREAM_WGSL,
                    k.name(),
                    &constants,
                ));
            }
        }
        out
    }
}

/// The same method on OpenCL: kernels in OpenCL C over floatVEC elements, one per work-item.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl;
#[cfg(not(target_arch = "wasm32"))]
use on_opencl::cl_sources;
mod on_wgpu;
#[cfg(test)]
mod tests;
