//! FP32 arithmetic peak: independent multiply-add chains with nothing loaded in the loop,
//! the adapter's own ceiling for compute-bound kernels. It puts the matmul figures in
//! proportion on any adapter (a GPU against its datasheet; lavapipe against its vector width
//! and whether its `fma` is fused) without a BLAS of another vector width as the yardstick.
//! Every invocation's result is checked exactly.

use super::Ctx;
use crate::figure::FigureKey;
use crate::gpu::context::{KernelSpec, RuntimeChecks, fold_workgroups};
use crate::gpu::wgsl::KernelSource;
use crate::reference::Rng;
use crate::results::{ProbeResult, Validation};
use anyhow::Result;

const PEAK_WGSL: &str = include_str!("../../shaders/peak.wgsl");
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

async fn measure(ctx: &Ctx<'_>) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let count = invocations(gpu.info.software);
    // Small integers: every chain value stays a short dyadic fraction.
    let seeds: Vec<f32> = Rng::fresh()
        .fill_f32(count as usize)
        .iter()
        .map(|r| (r.abs() * 1000.0).floor())
        .collect();
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
    let wrong = seeds
        .iter()
        .zip(&got)
        .filter(|(s, g)| expected(**s).to_bits() != g.to_bits())
        .count();
    let flops = 2.0 * f64::from(count) * f64::from(CHAINS * UNROLL * TRIPS);
    let value = timing.time_per_iter_s.map(|t| flops / t * 1e-9, true);
    let mut res = ProbeResult::of(FigureKey::PeakF32)
        .param("invocations", count)
        .param("multiply_adds_per_invocation", CHAINS * UNROLL * TRIPS)
        .param("independent_chains", CHAINS)
        .param("runtime_checks", !ctx.trusted);
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
    Ok(res.validated(validation, value, |v| {
        format!(
            "validation failed: {:.3}% of the invocations wrote a wrong sum",
            100.0 * v.error
        )
    }))
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
    run_with_async_fn!();
    fn kernels(&self) -> Vec<KernelSource> {
        vec![KernelSource::new(
            "peak f32",
            source(),
            "main",
            &[("WG", f64::from(WG))],
        )]
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
