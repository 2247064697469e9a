//! Double precision two ways: emulated double-float ("df64", two f32 per value, on every
//! adapter) and native f64 (where the adapter has SHADER_F64).
//!
//! Before the df64 probe, a self-test checks the building blocks on the adapter itself
//! (reassociation, fused FMA, split contraction, subnormal flushing); the kernels use the
//! FMA-based or the split-based product accordingly, and where no exact product exists the
//! probe fails with that reason instead of producing a misleading figure.

use super::Ctx;
use super::measure::{self, Plan, TimingInfo};
use crate::figure::FigureKey;
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::wgsl::{KernelSource, WgslSource};
use crate::measuring::reference::{Dims, Rng};
use crate::results::{ProbeResult, Status, Validation};
use crate::stats::Summary;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

mod kernel;
pub mod method;
#[cfg(test)]
mod method_tests;
mod on_wgpu;
mod selftest;
use kernel::*;
pub use method::DoubleKernels;
pub use on_wgpu::OnWgpu;
pub use selftest::*;

/// Rows per invocation the matmul kernels are tuned over.
const TM_CHOICES: [u32; 3] = [4, 8, 16];
const DF64_WGSL: &str = include_str!("../../../../shaders/df64.wgsl");
const SELFTEST_WGSL: &str = include_str!("../../../../shaders/df64_selftest.wgsl");
const MATMUL_DF64_WGSL: &str = include_str!("../../../../shaders/matmul_df64.wgsl");
const MATMUL_DF64_SUBGROUP_WGSL: &str =
    include_str!("../../../../shaders/matmul_df64_subgroup.wgsl");
/// Rows per invocation of the df64 subgroup kernel (multiples of the 8 lanes that load A).
const SUBGROUP_TM_CHOICES: [u32; 3] = [8, 16, 32];
const MATMUL_TYPED_WGSL: &str = include_str!("../../../../shaders/matmul_typed.wgsl");
const OPS_WGSL: &str = include_str!("../../../../shaders/df64_ops.wgsl");

/// Relative Frobenius error above which a double-precision product is wrong.
pub const DF64_TOLERANCE: f64 = 1e-10;
pub const F64_TOLERANCE: f64 = 1e-12;
/// f16 inputs, f32 products and sums: checked against the f16-rounded inputs in f64.
pub const F16_TOLERANCE: f64 = 1e-4;

// ---------- host-side double-float ----------

/// Splits an f64 into a double-float: hi = nearest f32, lo = nearest f32 to the rest.
pub fn to_df(x: f64) -> (f32, f32) {
    let hi = x as f32;
    let lo = (x - f64::from(hi)) as f32;
    (hi, lo)
}

/// The value a double-float stands for.
pub fn from_df(hi: f32, lo: f32) -> f64 {
    f64::from(hi) + f64::from(lo)
}

// ---------- matmul in double precision ----------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inputs {
    /// Uniform in [-1, 1].
    Random,
    /// Exponents spread over 2^-24..2^24 and alternating signs: cancellation-heavy sums.
    Adversarial,
}

fn input_value(rng: &mut Rng, kind: Inputs, i: usize) -> f64 {
    match kind {
        Inputs::Random => rng.signed_unit(),
        Inputs::Adversarial => {
            let e = (rng.next_u64() % 49) as i32 - 24;
            let m = 1.0 + rng.signed_unit().abs();
            let s = if i.is_multiple_of(2) { 1.0 } else { -1.0 };
            s * m * 2f64.powi(e)
        }
    }
}

/// Neumaier-compensated f64 dot products for the rows checked: accurate to about 2^-53
/// relative to the sum of magnitudes.
fn reference_rows(d: Dims, a: &[f64], b: &[f64], rows: &[usize]) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|&i| {
            (0..d.n)
                .map(|j| {
                    let (mut s, mut c) = (0.0f64, 0.0f64);
                    for k in 0..d.k {
                        let x = a[i * d.k + k] * b[k * d.n + j];
                        let t = s + x;
                        c += if s.abs() >= x.abs() {
                            (s - t) + x
                        } else {
                            (x - t) + s
                        };
                        s = t;
                    }
                    s + c
                })
                .collect()
        })
        .collect()
}

#[derive(Clone, Debug)]
pub struct PrecisionRun {
    pub timing: TimingInfo,
    pub gflops: Summary,
    pub rel_error: f64,
    pub rows_checked: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Df64,
    F64,
    F16,
}

/// Which kernel: the precision, rows per invocation, and (df64) the product to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub kind: Kind,
    pub tm: u32,
    pub use_fma: bool,
    /// df64 only: A through subgroup broadcasts (`matmul_df64_subgroup.wgsl`; needs
    /// subgroups of at least 8 invocations).
    pub subgroup: bool,
}

impl Variant {
    /// How the kernel is laid out, for the results file.
    fn label(&self) -> String {
        let product = match (self.kind, self.use_fma) {
            (Kind::Df64, true) => ", FMA product",
            (Kind::Df64, false) => ", split product",
            _ => "",
        };
        let a = if self.subgroup {
            ", A by subgroup broadcast"
        } else {
            ""
        };
        format!(
            "{} rows x 4 columns per invocation, {WG} invocations{product}{a}",
            self.tm
        )
    }
}

/// Workgroup size of the double-precision matmul kernels.
const WG: u32 = 64;

/// Runs one double-precision matmul on wgpu: fresh inputs, poisoned output, timed batches,
/// checked against compensated f64 on the CPU.
pub async fn run_matmul(
    gpu: &Gpu,
    timer: &crate::measuring::gpu::Timer<'_>,
    v: Variant,
    d: Dims,
    inputs: Inputs,
    plan: &Plan,
) -> Result<PrecisionRun> {
    method::run_matmul_on(&OnWgpu { gpu, timer }, (v.kind, v), d, inputs, plan).await
}

/// Fresh A and B in f64, zero-padded to `p`.
fn matmul_inputs(d: Dims, p: Dims, inputs: Inputs) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::fresh();
    let mut a = vec![0.0f64; p.m * p.k];
    let mut b = vec![0.0f64; p.k * p.n];
    for i in 0..d.m {
        for k in 0..d.k {
            a[i * p.k + k] = input_value(&mut rng, inputs, i + k);
        }
    }
    for k in 0..d.k {
        for j in 0..d.n {
            b[k * p.n + j] = input_value(&mut rng, inputs, k);
        }
    }
    (a, b)
}

fn result_for(kind: Kind, d: Dims) -> ProbeResult {
    let figure = match kind {
        Kind::Df64 => FigureKey::MatmulDf64,
        Kind::F64 => FigureKey::MatmulF64,
        Kind::F16 => FigureKey::MatmulF16,
    };
    ProbeResult::sized(figure, d.m, d.n, d.k)
}

/// The figure of one size, on either executor: the measured run `m` on random inputs and the
/// accuracy run `a` (adversarial inputs; random for f16), both within `tol`.
fn judge(mut res: ProbeResult, tol: f64, m: PrecisionRun, a: PrecisionRun) -> ProbeResult {
    let bits = |e: f64| if e > 0.0 { -e.log2() } else { 64.0 };
    res = res
        .param("error_random", m.rel_error)
        .param("error_adversarial", a.rel_error)
        .param("effective_bits", bits(m.rel_error))
        .param("effective_bits_adversarial", bits(a.rel_error));
    let worst = m.rel_error.max(a.rel_error);
    let validation = Validation::within(
        "relative_frobenius",
        worst,
        tol,
        format!(
            "random inputs {:.2e} ({:.1} bits), adversarial inputs {:.2e} ({:.1} bits); {} rows checked against compensated f64",
            m.rel_error,
            bits(m.rel_error),
            a.rel_error,
            bits(a.rel_error),
            m.rows_checked
        ),
    );
    res.timing = Some(m.timing);
    res.validated(validation, m.gflops, Validation::tolerance_exceeded)
}

/// The self-test's verdict for df64 at size `d`: the test, or the failed result that says
/// why df64 cannot be measured (the test could not run, or a building block is not exact).
fn usable(st: &Result<SelfTest>, d: Dims) -> Result<&SelfTest, Box<ProbeResult>> {
    match st {
        Err(e) => Err(Box::new(result_for(Kind::Df64, d).with_status(
            Status::Failed,
            format!("self-test could not run: {e:#}"),
        ))),
        Ok(s) if !s.usable => Err(Box::new(
            result_for(Kind::Df64, d).param("self_test", s).with_status(
                Status::Failed,
                format!(
                    "df64 building blocks are not exact on this device: {}",
                    s.reason.clone().unwrap_or_default()
                ),
            ),
        )),
        Ok(s) => Ok(s),
    }
}

/// The sizes measured when `--sizes` is not given.
fn default_sizes(quick: bool) -> Vec<Dims> {
    let v: &[usize] = if quick { &[256] } else { &[256, 512, 1024] };
    v.iter().map(|&n| Dims { m: n, n, k: n }).collect()
}

/// The tolerance of each precision.
fn tolerance(kind: Kind) -> f64 {
    match kind {
        Kind::F64 => F64_TOLERANCE,
        Kind::Df64 => DF64_TOLERANCE,
        Kind::F16 => F16_TOLERANCE,
    }
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let on = OnWgpu {
        gpu: ctx.gpu,
        timer: ctx.timer,
    };
    method::run_on(ctx, &on, emit).await
}

/// The side-by-side summary of a run's precisions: FP32, df64, f64 (and f16 where
/// measured) at the largest size all of them share, the df64:FP32 and f64:FP32 speed ratios,
/// and which double path is faster on this adapter (what the HPC scenario uses).
pub fn summary(probes: &[ProbeResult]) -> Option<ProbeResult> {
    let ok = |figure: FigureKey| -> Vec<(usize, f64)> {
        probes
            .iter()
            .filter(|p| p.figure == Some(figure) && p.status == Status::Ok)
            .filter_map(|p| {
                let n = p.params.get("m")?.as_u64()? as usize;
                Some((n, p.value.as_ref()?.median))
            })
            .collect()
    };
    let (f32s, dfs, f64s, f16s) = (
        ok(FigureKey::MatmulF32),
        ok(FigureKey::MatmulDf64),
        ok(FigureKey::MatmulF64),
        ok(FigureKey::MatmulF16),
    );
    let at = |v: &[(usize, f64)], n: usize| v.iter().find(|x| x.0 == n).map(|x| x.1);
    // The largest size with FP32 and at least one double figure.
    let n = f32s
        .iter()
        .map(|x| x.0)
        .filter(|&n| at(&dfs, n).is_some() || at(&f64s, n).is_some())
        .max()?;
    let fp32 = at(&f32s, n)?;
    let df = at(&dfs, n);
    let f64v = at(&f64s, n);
    let f16 = at(&f16s, n);
    let (path, best) = match (df, f64v) {
        (Some(d), Some(f)) if f >= d => ("native f64", f),
        (Some(d), _) => ("emulated df64", d),
        (None, Some(f)) => ("native f64", f),
        (None, None) => return None,
    };
    let mut r = ProbeResult::of(FigureKey::DoubleBest)
        .param("size", n)
        .param("fp32_gflops", fp32)
        .param("df64_gflops", df)
        .param("f64_gflops", f64v)
        .param("f16_gflops", f16)
        .param("df64_to_fp32", df.map(|d| d / fp32))
        .param("f64_to_fp32", f64v.map(|f| f / fp32))
        .param("faster_double_path", path);
    r.status = Status::Ok;
    r.value = Summary::of(&[best]);
    r.reason = Some(format!(
        "at {n}^3: FP32 {fp32:.1}{}{}{}; {path} is the faster double",
        df.map_or(String::new(), |d| format!(
            ", df64 {d:.2} (1/{:.0} of FP32)",
            fp32 / d
        )),
        f64v.map_or(String::new(), |f| format!(
            ", f64 {f:.2} (1/{:.1} of FP32)",
            fp32 / f
        )),
        f16.map_or(String::new(), |h| format!(", f16 {h:.1}")),
    ));
    Some(r)
}

/// The double probe, as registered in `probes::REGISTRY`.
pub struct Double;

impl super::Probe for Double {
    fn name(&self) -> &'static str {
        "double"
    }
    fn about(&self) -> &'static str {
        "Double precision: emulated double-float (df64, after an on-adapter self-test) and native f64 matmul, and f16 where offered (GFLOPS, with the error and effective bits)."
    }
    fn budget_share(&self) -> f64 {
        0.2
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[
            FigureKey::MatmulDf64,
            FigureKey::MatmulF64,
            FigureKey::MatmulF16,
            FigureKey::DoubleBest,
        ]
    }
    run_with_async_fn!(opencl);
    fn kernels(&self) -> Vec<KernelSource> {
        kernel_variants()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_float_round_trip_keeps_48_bits() {
        let mut r = Rng::new(3);
        for _ in 0..1000 {
            let x = r.signed_unit() * 2f64.powi((r.next_u64() % 40) as i32 - 20);
            let (h, l) = to_df(x);
            assert!(((from_df(h, l) - x) / x).abs() < 2f64.powi(-47), "{x}");
        }
    }

    #[test]
    fn split_bits_counted() {
        assert_eq!(significant_bits(1.0), 1);
        assert_eq!(significant_bits(1.5), 2);
        assert_eq!(significant_bits(f32::from_bits(0x3f80_0001)), 24);
    }

    #[test]
    fn df64_subgroup_template_writes_out_rows() {
        let src = expand_df64_subgroup(MATMUL_DF64_SUBGROUP_WGSL, 16);
        assert!(!src.lines().any(|l| l.trim_start().starts_with("//@")));
        // 16 rows: one multiply-add, one accumulator and two stores each.
        assert_eq!(src.matches("= madd(").count(), 16);
        assert_eq!(src.matches("var acc_").count(), 16);
        assert_eq!(src.matches("c_lo[(row0 + 15u)").count(), 1);
        // Row 11 is the second load's lane 3.
        assert_eq!(
            src.matches("acc_11 = madd(subgroupBroadcast(ah_1[kk], 3u)")
                .count(),
            1
        );
        assert_eq!(src.matches("let ah_").count(), 2);
        assert_eq!(
            src.matches("let al_1 = a_lo[arow + 1u * 8u * k4 + kb]")
                .count(),
            1
        );
        // A group is written out whole for each row: row 3's two MADD lines are adjacent,
        // the second keeping its extra indentation.
        assert!(src.contains(concat!(
            "            acc_3 = madd(subgroupBroadcast(ah_0[kk], 3u),\n",
            "                subgroupBroadcast(al_0[kk], 3u), b, bs, acc_3);\n"
        )));
        // The two A loads of one row group stay together.
        assert!(src.contains("let ah_1 = a_hi[arow + 1u * 8u * k4 + kb];\n        let al_1"));
    }

    #[test]
    #[should_panic(expected = "multiple of 8")]
    fn df64_subgroup_rows_are_whole_loads() {
        expand_df64_subgroup(MATMUL_DF64_SUBGROUP_WGSL, 12);
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: the df64 self-test with the WGSL test's inputs, outputs and
/// judge (OpenCL's `fma` must round once on a full profile: checked, not assumed), df64 on
/// the product the self-test allows, native f64 (`cl_khr_fp64`) and f16 (`cl_khr_fp16`)
/// through the tiled matmul kernel; the same sizes, inputs (random and adversarial),
/// compensated-f64 reference and tolerances.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl;
