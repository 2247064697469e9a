//! FP32 arithmetic peak: independent multiply-add chains with nothing loaded in the loop,
//! the adapter's own ceiling for compute-bound kernels. It puts the matmul figures in
//! proportion on any adapter (a GPU against its datasheet; lavapipe against its vector width
//! and whether its `fma` is fused) without a BLAS of another vector width as the yardstick.
//! Every invocation's result is checked exactly.

use super::Ctx;
use super::measure;
use crate::figure::FigureKey;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks, fold_workgroups};
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::Rng;
use crate::results::{ProbeResult, Validation};
use anyhow::Result;

const PEAK_WGSL: &str = include_str!("../../../shaders/peak.wgsl");
/// Independent chains per invocation (the shader's x0..x7).
const CHAINS: u32 = 8;
/// Steps of every chain per loop trip.
const UNROLL: u32 = 8;
/// Loop trips: 8 chains x 8 steps x 256 trips = 16384 multiply-adds per invocation.
const TRIPS: u32 = 256;
const WG: u32 = 256;
/// The chain's coefficients: x <- x * A + B flips x to B - x and back, exactly.
const A: f32 = -1.0;
const B: f32 = 0.75;

/// The shader with its `//@UNROLL` line repeated UNROLL times.
fn source() -> String {
    PEAK_WGSL
        .lines()
        .flat_map(|l| match l.trim_start().strip_prefix("//@UNROLL ") {
            Some(body) => {
                let pad = &l[..l.len() - l.trim_start().len()];
                vec![format!("{pad}{body}"); UNROLL as usize]
            }
            None => vec![l.to_string()],
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Invocations per dispatch: enough to fill a large GPU; a CPU rasteriser gets fewer, so
/// one dispatch lasts milliseconds, not seconds.
fn invocations(software: bool) -> u32 {
    if software { 1 << 14 } else { 1 << 20 }
}

/// One chain's end value: each step flips x to B - x, so an even number of steps ends where
/// the chain started.
fn expected_chain(seed: f32, chain: u32) -> f32 {
    let x = seed + chain as f32;
    if (UNROLL * TRIPS).is_multiple_of(2) {
        x
    } else {
        B - x
    }
}

/// What an invocation seeded with `seed` must write: the eight chains' ends, summed in the
/// shader's order.
fn expected(seed: f32) -> f32 {
    let v: Vec<f32> = (0..CHAINS).map(|c| expected_chain(seed, c)).collect();
    ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]))
}

/// Fresh seeds, small integers: every chain value stays a short dyadic fraction.
fn seeds(count: u32) -> Vec<f32> {
    Rng::fresh()
        .fill_f32(count as usize)
        .iter()
        .map(|r| (r.abs() * 1000.0).floor())
        .collect()
}

/// The figure, from what every invocation (or lane) wrote: each sum checked exactly.
fn judge(
    mut res: ProbeResult,
    seeds: &[f32],
    got: &[f32],
    timing: measure::TimingInfo,
) -> ProbeResult {
    let count = seeds.len() as u32;
    let wrong = seeds
        .iter()
        .zip(got)
        .filter(|(s, g)| expected(**s).to_bits() != g.to_bits())
        .count()
        + seeds.len().saturating_sub(got.len());
    let flops = 2.0 * f64::from(count) * f64::from(CHAINS * UNROLL * TRIPS);
    let value = timing.figure(|t| flops / t * 1e-9);
    res = res
        .param("invocations", count)
        .param("multiply_adds_per_invocation", CHAINS * UNROLL * TRIPS)
        .param("independent_chains", CHAINS);
    res.timing = Some(timing);
    let validation = Validation {
        metric: "exact".into(),
        error: wrong as f64 / f64::from(count),
        tolerance: 0.0,
        passed: wrong == 0,
        detail: Some(format!(
            "all {count} invocations checked exactly: {wrong} wrong"
        )),
    };
    res.validated(validation, value, |v| {
        format!(
            "validation failed: {:.3}% of the invocations wrote a wrong sum",
            100.0 * v.error
        )
    })
}

async fn measure(ctx: &Ctx<'_>) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let count = invocations(gpu.info.software);
    let seeds = seeds(count);
    let params: [u32; 4] = [A.to_bits(), B.to_bits(), TRIPS, count];
    let params = gpu.uniform_buffer("peak params", bytemuck::cast_slice(&params))?;
    let seed = gpu.upload("peak seeds", &seeds)?;
    let out = gpu.storage_buffer("peak out", u64::from(count) * 4)?;
    gpu.poison(&out, 0x7fc0_0000);
    let src = source();
    let constants = [("WG", f64::from(WG))];
    let pipeline = gpu.kernel(&KernelSpec {
        constants: &constants,
        // Indices: one per invocation, guarded by `count`; the loop runs to a uniform.
        checks: RuntimeChecks::unless(ctx.trusted),
        ..KernelSpec::new("peak f32", &src)
    })?;
    let bind = gpu.bind(&pipeline, &[(0, &params), (1, &seed), (2, &out)]);
    let groups = fold_workgroups(
        count.div_ceil(WG),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    let timing = super::time_dispatches(ctx, &pipeline, &bind, groups).await?;
    let got: Vec<f32> = gpu.read(&out, count as usize).await?;
    let res = ProbeResult::of(FigureKey::PeakF32).param("runtime_checks", !ctx.trusted);
    Ok(judge(res, &seeds, &got, timing))
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let f = FigureKey::PeakF32;
    super::step(ctx, emit, f, f.info().label, measure(ctx)).await;
}

/// The peak probe, as registered in `probes::REGISTRY`.
pub struct Peak;

impl super::Probe for Peak {
    fn name(&self) -> &'static str {
        "peak"
    }
    fn about(&self) -> &'static str {
        "FP32 multiply-add peak: independent chains, no loads (GFLOPS; the ceiling for matmul)."
    }
    fn budget_share(&self) -> f64 {
        0.03
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[FigureKey::PeakF32]
    }
    run_with_async_fn!(opencl);
    fn kernels(&self) -> Vec<KernelSource> {
        vec![KernelSource::new(
            "peak f32",
            source(),
            "main",
            &[("WG", f64::from(WG))],
        )]
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: the chains in OpenCL C, VEC lanes per work-item (float to
/// float16, the fastest valid width chosen by short trials), every lane checked exactly.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    use super::*;
    use crate::measuring::gpu::opencl::{Arg, ClSource};
    use crate::measuring::probes::ClCtx;

    const PEAK_CL: &str = include_str!("../../../shaders/opencl/peak.cl");
    const VECS: [u32; 4] = [1, 4, 8, 16];

    fn source(vec: u32) -> ClSource {
        ClSource::new(
            "peak f32",
            "peak.cl",
            PEAK_CL,
            vec![("VEC", vec.to_string())],
        )
    }

    /// Every width the trials can pick.
    pub(super) fn cl_sources() -> Vec<ClSource> {
        VECS.into_iter().map(source).collect()
    }

    fn run_width(
        ctx: &ClCtx<'_>,
        vec: u32,
        seeds: &[f32],
        plan: &measure::Plan,
    ) -> Result<(measure::TimingInfo, Vec<f32>)> {
        let cl = ctx.cl;
        let count = seeds.len();
        let items = count as u32 / vec;
        let prog = cl.build_source(&source(vec))?;
        let seed = cl.upload("peak seeds", seeds)?;
        let mut out = cl.buffer::<f32>("peak out", count)?;
        cl.poison(&mut out, 0x7fc0_0000)?;
        let args = [
            seed.arg(),
            out.arg(),
            Arg::F32(A),
            Arg::F32(B),
            Arg::U32(TRIPS),
            Arg::U32(items),
        ];
        let k = cl.kernel(&prog, "peak", &args)?;
        // Work-groups of 64 (or fewer where the device allows fewer): left to the runtime,
        // PoCL may make one group of the whole range and run it on one core.
        let wg = (cl.info.limits.max_compute_invocations_per_workgroup as usize).clamp(1, 64);
        let global = [(items as usize).next_multiple_of(wg)];
        let timing = ctx.time(plan, &mut || cl.dispatch(&k, &global, Some(&[wg])))?;
        Ok((timing, cl.read(&out, count)?))
    }

    async fn measure_cl(ctx: &ClCtx<'_>) -> Result<ProbeResult> {
        let count = invocations(ctx.cl.info.software);
        let tune = measure::Plan::trial(64);
        let mut trials = Vec::new();
        let mut best: Option<(f64, u32)> = None;
        for vec in VECS {
            if best.is_some() && ctx.shrink() {
                break;
            }
            let seeds = seeds(count);
            let r = run_width(ctx, vec, &seeds, &tune);
            let (gflops, valid, note) = match r {
                Ok((t, got)) => {
                    let j = judge(ProbeResult::of(FigureKey::PeakF32), &seeds, &got, t);
                    let ok = j.status == crate::results::Status::Ok;
                    (j.value.map(|v| v.median), ok, j.reason)
                }
                Err(e) => (None, false, Some(format!("{e:#}"))),
            };
            if let (Some(g), true) = (gflops, valid)
                && best.is_none_or(|(b, _)| g > b)
            {
                best = Some((g, vec));
            }
            trials.push(serde_json::json!({
                "config": format!("float{vec} lanes per work-item"),
                "gflops_median": gflops, "valid": valid, "note": note,
            }));
        }
        let mut res = ProbeResult::of(FigureKey::PeakF32);
        res.autotune = trials;
        let Some((_, vec)) = best else {
            return Ok(res.no_valid_configuration());
        };
        let seeds = seeds(count);
        let (timing, got) = run_width(ctx, vec, &seeds, &ctx.plan())?;
        res.kernel = Some(
            serde_json::json!({"label": format!("opencl peak, float{vec} lanes"), "vec": vec}),
        );
        Ok(judge(res, &seeds, &got, timing))
    }

    pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
        let f = FigureKey::PeakF32;
        super::super::step(ctx, emit, f, f.info().label, measure_cl(ctx)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain itself, stepped on the CPU.
    fn stepped(seed: f32, chain: u32) -> f32 {
        let mut x = seed + chain as f32;
        for _ in 0..UNROLL * TRIPS {
            x = x.mul_add(A, B);
        }
        x
    }

    #[test]
    fn the_closed_form_is_the_chain() {
        for s in [0.0f32, 1.0, 17.0, 999.0] {
            for c in 0..CHAINS {
                assert_eq!(stepped(s, c), expected_chain(s, c));
            }
        }
        assert_eq!(expected(3.0), 8.0 * 3.0 + 28.0);
    }

    #[test]
    fn the_unrolled_source_has_every_step() {
        let s = source();
        assert_eq!(s.matches("x7 = fma(x7, a, b);").count(), UNROLL as usize);
        assert!(!s.contains("//@"));
    }
}
