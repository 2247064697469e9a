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
use crate::gpu::Gpu;
use crate::gpu::wgsl::{KernelSource, WgslSource};
use crate::reference::{Dims, Rng};
use crate::results::{ProbeResult, Status, Validation};
use crate::stats::Summary;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// Rows per invocation the matmul kernels are tuned over.
const TM_CHOICES: [u32; 3] = [4, 8, 16];
const DF64_WGSL: &str = include_str!("../../../shaders/df64.wgsl");
const SELFTEST_WGSL: &str = include_str!("../../../shaders/df64_selftest.wgsl");
const MATMUL_DF64_WGSL: &str = include_str!("../../../shaders/matmul_df64.wgsl");
const MATMUL_DF64_SUBGROUP_WGSL: &str = include_str!("../../../shaders/matmul_df64_subgroup.wgsl");
/// Rows per invocation of the df64 subgroup kernel (multiples of the 8 lanes that load A).
const SUBGROUP_TM_CHOICES: [u32; 3] = [8, 16, 32];
const MATMUL_TYPED_WGSL: &str = include_str!("../../../shaders/matmul_typed.wgsl");
const OPS_WGSL: &str = include_str!("../../../shaders/df64_ops.wgsl");

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

// ---------- self-test ----------

/// What the self-test found on this adapter; recorded in the results file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelfTest {
    /// TwoSum(1, 2^-30) kept its error term (no reassociation).
    pub two_sum_exact: bool,
    /// fma(1+2^-12, 1+2^-12, -(1+2^-11)) == 2^-24 (fma rounds once).
    pub fma_fused: bool,
    /// Veltkamp split hi has at most 12 significant bits and hi + lo == a (no contraction).
    pub split_exact: bool,
    /// A subnormal times 1.0 survived (no flush to zero).
    pub subnormals_kept: bool,
    /// The product the kernels will use is exact on random operands.
    pub product_exact: bool,
    pub split_product_exact: bool,
    /// Largest relative error of df_add / df_mul on random operands.
    pub df_add_error: f64,
    pub df_mul_error: f64,
    /// `fma` or `split`.
    pub product: String,
    /// Whether df64 can be trusted here; if not, `reason` says why.
    pub usable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Deliberately broken variants, for the tests that prove the self-test can fail.
#[derive(Clone, Copy, Debug, Default)]
pub struct Broken {
    pub unguarded_sum: bool,
    pub plain_product: bool,
}

fn guard_buffer(gpu: &Gpu) -> Result<wgpu::Buffer> {
    gpu.uniform_buffer(
        "df64 guard",
        bytemuck::cast_slice(&[1.0f32, 4097.0, 0.0, 0.0]),
    )
}

fn ops_source() -> String {
    WgslSource::new(OPS_WGSL).include(DF64_WGSL).build()
}

/// The df64 matmul: `TM` rows per invocation, the df64 library, the kernel.
fn df64_matmul_source(tm: u32) -> String {
    WgslSource::new(MATMUL_DF64_WGSL)
        .const_u32("TM", tm)
        .include(DF64_WGSL)
        .build()
}

/// The df64 subgroup matmul (A through subgroup broadcasts): `TM` rows per invocation, its
/// `//@` lines expanded into straight-line code (a broadcast's lane must be a constant).
fn df64_subgroup_matmul_source(tm: u32) -> String {
    WgslSource::new(expand_df64_subgroup(MATMUL_DF64_SUBGROUP_WGSL, tm))
        .const_u32("TM", tm)
        .include(DF64_WGSL)
        .build()
}

/// Expands the df64 subgroup kernel's template for `tm` rows. Consecutive lines with the same
/// `//@TAG` form one group, written out once per row {m} (`ACC_DECL`, `MADD`, `STORE`) or
/// once per 8-row load {r} (`A_LOAD`); row m lives in load {r} = m / 8 of lane {s} = m % 8.
fn expand_df64_subgroup(template: &str, tm: u32) -> String {
    assert!(
        tm.is_multiple_of(8) && tm > 0,
        "df64 subgroup rows must be a multiple of 8, not {tm}"
    );
    // (tag, indent, text after the tag) for a template line; None for a plain line.
    let parse = |line: &str| -> Option<(String, String, String)> {
        let t = line.trim_start();
        let rest = t.strip_prefix("//@")?;
        let (tag, text) = rest.split_once(' ').unwrap_or((rest, ""));
        let indent = line[..line.len() - t.len()].to_string();
        Some((tag.to_string(), indent, text.to_string()))
    };
    let lines: Vec<&str> = template.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((tag, ..)) = parse(lines[i]) else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        };
        let mut group = Vec::new();
        while let Some(l) = lines.get(i).and_then(|l| parse(l)).filter(|l| l.0 == tag) {
            group.push(l);
            i += 1;
        }
        // The group keeps its own relative indentation under the comment's.
        let cut = group
            .iter()
            .map(|(_, _, t)| t.len() - t.trim_start().len())
            .min()
            .unwrap_or(0);
        let rows: Vec<u32> = match tag.as_str() {
            "ACC_DECL" | "MADD" | "STORE" => (0..tm).collect(),
            "A_LOAD" => (0..tm).step_by(8).collect(),
            other => panic!("unknown df64 template tag //@{other}"),
        };
        for m in rows {
            for (_, indent, text) in &group {
                let filled = text[cut..]
                    .replace("{m}", &m.to_string())
                    .replace("{r}", &(m / 8).to_string())
                    .replace("{s}", &(m % 8).to_string());
                out.push_str(indent);
                out.push_str(&filled);
                out.push('\n');
            }
        }
    }
    out
}

/// The single-plane matmul: f16 inputs with f32 sums, or f64 throughout.
fn typed_matmul_source(kind: Kind, tm: u32) -> String {
    let src = WgslSource::new(MATMUL_TYPED_WGSL);
    let src = match kind {
        Kind::F16 => src.enable("f16").alias("In", "f16").alias("Acc", "f32"),
        _ => src.alias("In", "f64").alias("Acc", "f64"),
    };
    src.const_u32("TM", tm).build()
}

/// Every kernel this probe can build, with the override constants it sets.
fn kernel_variants() -> Vec<KernelSource> {
    let flag = |b: bool| f64::from(u8::from(b));
    let mut out = Vec::new();
    for (sum, prod) in [(false, false), (true, false), (false, true), (true, true)] {
        out.push(KernelSource::new(
            "df64 self-test",
            WgslSource::new(SELFTEST_WGSL).include(DF64_WGSL).build(),
            "main",
            &[("BROKEN_SUM", flag(sum)), ("BROKEN_PROD", flag(prod))],
        ));
    }
    out.push(KernelSource::new("df64 ops", ops_source(), "main", &[]));
    for tm in TM_CHOICES {
        for fma in [false, true] {
            let constants = [("WG", f64::from(WG)), ("USE_FMA", flag(fma))];
            out.push(KernelSource::new(
                "matmul df64",
                df64_matmul_source(tm),
                "main",
                &constants,
            ));
        }
        for kind in [Kind::F16, Kind::F64] {
            let src = typed_matmul_source(kind, tm);
            out.push(KernelSource::new(
                "matmul",
                src,
                "main",
                &[("WG", f64::from(WG))],
            ));
        }
    }
    for tm in SUBGROUP_TM_CHOICES {
        for fma in [false, true] {
            out.push(KernelSource::new(
                "matmul df64 subgroup",
                df64_subgroup_matmul_source(tm),
                "main",
                &[("WG", f64::from(WG)), ("USE_FMA", flag(fma))],
            ));
        }
    }
    out
}

/// Whether the adapter can run the df64 subgroup kernel: subgroups of at least 8.
pub fn df64_subgroups(gpu: &Gpu) -> bool {
    let f = &gpu.info.features;
    f.subgroup && f.subgroup_min_size >= 8 && gpu.has(wgpu::Features::SUBGROUP)
}

fn pipeline(
    gpu: &Gpu,
    label: &str,
    source: String,
    constants: &[(&str, f64)],
) -> Result<wgpu::ComputePipeline> {
    gpu.wgsl_pipeline(label, &source, constants)
}

fn significant_bits(x: f32) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let m = (x.to_bits() & 0x7f_ffff) | 0x80_0000;
    24 - m.trailing_zeros()
}

/// The self-test's operands, one vec4 per test: random lanes for the product and split
/// checks, random double-floats of varied magnitude for add and multiply.
struct SelfTestInputs {
    xa: [f32; 4],
    xb: [f32; 4],
    split_in: [f32; 4],
    subnormal: f32,
    /// x and y as (hi, lo) planes.
    dx: ([f32; 4], [f32; 4]),
    dy: ([f32; 4], [f32; 4]),
}

impl SelfTestInputs {
    /// Self-test step 1: draws fresh operands.
    fn new() -> SelfTestInputs {
        let mut rng = Rng::fresh();
        let mut rand4 = || -> [f32; 4] { std::array::from_fn(|_| rng.signed_unit() as f32) };
        let (xa, xb) = (rand4(), rand4());
        let mk_df = |r: &mut Rng| -> ([f32; 4], [f32; 4]) {
            let v: [(f32, f32); 4] = std::array::from_fn(|_| {
                to_df(r.signed_unit() * 2f64.powi((r.next_u64() % 20) as i32 - 10))
            });
            (v.map(|p| p.0), v.map(|p| p.1))
        };
        let mut rng2 = Rng::fresh();
        let dx = mk_df(&mut rng2);
        let dy = mk_df(&mut rng2);
        let subnormal = f32::from_bits(0x0000_1234);
        let split_in = rand4();
        SelfTestInputs {
            xa,
            xb,
            split_in,
            subnormal,
            dx,
            dy,
        }
    }

    /// The input buffer, in the order the self-test kernel reads it.
    fn rows(&self) -> Vec<[f32; 4]> {
        let splat = |x: f32| [x; 4];
        let one_plus = 1.0f32 + 2f32.powi(-12);
        vec![
            splat(1.0),
            splat(2f32.powi(-30)),
            splat(one_plus),
            splat(-(1.0 + 2f32.powi(-11))),
            self.split_in,
            splat(self.subnormal),
            self.xa,
            self.xb,
            self.dx.0,
            self.dx.1,
            self.dy.0,
            self.dy.1,
        ]
    }
}

pub async fn self_test(gpu: &Gpu, broken: Broken) -> Result<SelfTest> {
    let inputs = SelfTestInputs::new();
    let out = run_self_test_kernel(gpu, broken, &inputs).await?;
    Ok(judge_self_test(&inputs, &out))
}

/// Self-test step 2: runs the self-test kernel once and reads its 14 result vec4s.
async fn run_self_test_kernel(
    gpu: &Gpu,
    broken: Broken,
    inputs: &SelfTestInputs,
) -> Result<Vec<[f32; 4]>> {
    let inp = gpu.upload("selftest in", &inputs.rows())?;
    let outp = gpu.storage_buffer("selftest out", 14 * 16)?;
    gpu.poison(&outp, f32::NAN.to_bits());
    let guard = guard_buffer(gpu)?;
    let p = pipeline(
        gpu,
        "df64 self-test",
        WgslSource::new(SELFTEST_WGSL).include(DF64_WGSL).build(),
        &[
            ("BROKEN_SUM", f64::from(u8::from(broken.unguarded_sum))),
            ("BROKEN_PROD", f64::from(u8::from(broken.plain_product))),
        ],
    )?;
    let bg = gpu.bind(&p, &[(0, &inp), (1, &outp), (7, &guard)]);
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    gpu.queue.submit([enc.finish()]);
    let out: Vec<[f32; 4]> = gpu.read(&outp, 14).await?;
    if let Some(e) = gpu.take_error() {
        bail!("df64 self-test: {e}");
    }
    Ok(out)
}

/// Self-test step 3: compares the kernel's outputs with exact host arithmetic.
fn judge_self_test(inputs: &SelfTestInputs, out: &[[f32; 4]]) -> SelfTest {
    let SelfTestInputs {
        xa,
        xb,
        split_in,
        subnormal,
        dx: (dxh, dxl),
        dy: (dyh, dyl),
    } = *inputs;
    let all = |f: &dyn Fn(usize) -> bool| (0..4).all(f);
    let two_sum_exact =
        all(&|l| out[1][l] != 0.0 && from_df(out[0][l], out[1][l]) == 1.0 + 2f64.powi(-30));
    let fma_fused = all(&|l| out[2][l] == 2f32.powi(-24));
    let split_exact = all(&|l| {
        significant_bits(out[3][l]) <= 12
            && f64::from(out[3][l]) + f64::from(out[4][l]) == f64::from(split_in[l])
    });
    let subnormals_kept = all(&|l| out[5][l] == subnormal);
    let exact_prod = |hi: usize, lo: usize| {
        all(&|l| from_df(out[hi][l], out[lo][l]) == f64::from(xa[l]) * f64::from(xb[l]))
    };
    let rel = |got: f64, want: f64| {
        if want == 0.0 {
            got.abs()
        } else {
            ((got - want) / want).abs()
        }
    };
    let df_add_error = (0..4)
        .map(|l| {
            rel(
                from_df(out[10][l], out[11][l]),
                from_df(dxh[l], dxl[l]) + from_df(dyh[l], dyl[l]),
            )
        })
        .fold(0.0, f64::max);
    let df_mul_error = (0..4)
        .map(|l| {
            rel(
                from_df(out[12][l], out[13][l]),
                from_df(dxh[l], dxl[l]) * from_df(dyh[l], dyl[l]),
            )
        })
        .fold(0.0, f64::max);
    let mut st = SelfTest {
        two_sum_exact,
        fma_fused,
        split_exact,
        subnormals_kept,
        product_exact: exact_prod(6, 7),
        split_product_exact: exact_prod(8, 9),
        df_add_error,
        df_mul_error,
        product: if fma_fused { "fma" } else { "split" }.to_string(),
        usable: true,
        reason: None,
    };
    let problems = self_test_problems(&st);
    st.usable = problems.is_empty();
    st.reason = (!problems.is_empty()).then(|| problems.join("; "));
    st
}

/// Self-test step 4: the reasons, if any, why df64 cannot be trusted on these findings.
fn self_test_problems(st: &SelfTest) -> Vec<&'static str> {
    let mut problems = Vec::new();
    if !st.two_sum_exact {
        problems.push("TwoSum lost its error term (the compiler reassociates sums)");
    }
    if !st.product_exact {
        problems.push("the error-free product is not exact");
    }
    if !st.fma_fused && !st.split_exact {
        problems.push("no exact product: fma is not fused and the Veltkamp split is contracted");
    }
    if st.df_add_error > 1e-13
        || st.df_mul_error > 1e-13
        || !st.df_add_error.is_finite()
        || !st.df_mul_error.is_finite()
    {
        problems.push("double-float add or multiply is not accurate to ~2^-44");
    }
    problems
}

/// The building blocks' outputs for one pair of double-floats (for tests): TwoSum and
/// TwoProduct of the high parts, df_add and df_mul of the pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpsOut {
    pub two_sum: (f32, f32),
    pub two_prod: (f32, f32),
    pub add: (f32, f32),
    pub mul: (f32, f32),
}

/// Runs the building blocks on the GPU for every pair (x, y) of double-floats.
pub async fn run_ops(gpu: &Gpu, xs: &[(f32, f32)], ys: &[(f32, f32)]) -> Result<Vec<OpsOut>> {
    assert_eq!(xs.len(), ys.len());
    let n4 = xs.len().div_ceil(4).max(1);
    let plane = |v: &[(f32, f32)], hi: bool| -> Vec<f32> {
        let mut out: Vec<f32> = v.iter().map(|p| if hi { p.0 } else { p.1 }).collect();
        out.resize(n4 * 4, 0.0);
        out
    };
    let bufs = [
        gpu.upload("x_hi", &plane(xs, true))?,
        gpu.upload("x_lo", &plane(xs, false))?,
        gpu.upload("y_hi", &plane(ys, true))?,
        gpu.upload("y_lo", &plane(ys, false))?,
    ];
    let out = gpu.storage_buffer("ops out", (n4 * 8 * 16) as u64)?;
    let guard = guard_buffer(gpu)?;
    let p = pipeline(gpu, "df64 ops", ops_source(), &[])?;
    let bg = gpu.bind(
        &p,
        &[
            (0, &bufs[0]),
            (1, &bufs[1]),
            (2, &bufs[2]),
            (3, &bufs[3]),
            (4, &out),
            (7, &guard),
        ],
    );
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups((n4 as u32).div_ceil(64), 1, 1);
    }
    gpu.queue.submit([enc.finish()]);
    let v: Vec<[f32; 4]> = gpu.read(&out, n4 * 8).await?;
    if let Some(e) = gpu.take_error() {
        bail!("df64 ops kernel: {e}");
    }
    Ok((0..xs.len())
        .map(|i| {
            let (blk, lane) = (i / 4, i % 4);
            let at = |r: usize| v[blk * 8 + r][lane];
            OpsOut {
                two_sum: (at(0), at(1)),
                two_prod: (at(2), at(3)),
                add: (at(4), at(5)),
                mul: (at(6), at(7)),
            }
        })
        .collect())
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

/// Runs one double-precision matmul: fresh inputs, poisoned output, timed batches, checked
/// against compensated f64 on the CPU.
pub async fn run_matmul(
    gpu: &Gpu,
    timer: &crate::gpu::Timer<'_>,
    v: Variant,
    d: Dims,
    inputs: Inputs,
    plan: &Plan,
) -> Result<PrecisionRun> {
    let p = padded_dims(gpu, v, d)?;
    let (a, b) = matmul_inputs(d, p, inputs);
    let (gx, gy) = grid(gpu, v.tm, d, p)?;
    let k = build_kernel(gpu, v, p, &a, &b)?;
    let timing = measure::measure(plan, &|| timer.method(), async |iters| {
        timer
            .time_pass(&mut |pass| {
                pass.set_pipeline(&k.pipe);
                pass.set_bind_group(0, &k.bg, &[]);
                for _ in 0..iters {
                    pass.dispatch_workgroups(gx, gy, 1);
                }
            })
            .await
    })
    .await?;
    let c = read_product(gpu, v.kind, &k.outs, p).await?;
    let (rel_error, rows_checked) = check_product(d, p, &c, &k.exact_inputs);
    let flops = 2.0 * d.m as f64 * d.n as f64 * d.k as f64;
    let gflops = timing.figure(|t| flops / t * 1e-9);
    Ok(PrecisionRun {
        timing,
        gflops,
        rel_error,
        rows_checked,
    })
}

/// Matmul step 1: pads the sizes to the kernel's block and checks every matrix plane fits
/// the adapter's buffer limits.
fn padded_dims(gpu: &Gpu, v: Variant, d: Dims) -> Result<Dims> {
    let Variant {
        kind, tm, subgroup, ..
    } = v;
    if d.m == 0 || d.n == 0 || d.k == 0 {
        bail!("matrix sizes must be at least 1");
    }
    if subgroup && !(kind == Kind::Df64 && df64_subgroups(gpu)) {
        bail!(
            "the subgroup kernel is df64 only and needs subgroups of at least 8 invocations; this adapter has {}",
            if gpu.info.features.subgroup {
                format!(
                    "{}..{}",
                    gpu.info.features.subgroup_min_size, gpu.info.features.subgroup_max_size
                )
            } else {
                "none".into()
            }
        );
    }
    let p = Dims {
        m: d.m.next_multiple_of(tm as usize),
        n: d.n.next_multiple_of(4 * WG as usize),
        // The subgroup kernel reads A as vec4s along K.
        k: if subgroup {
            d.k.next_multiple_of(4)
        } else {
            d.k
        },
    };
    let elem = match kind {
        Kind::F64 => 8,
        Kind::Df64 => 4,
        Kind::F16 => 4, // the f32 output is the largest buffer
    };
    let biggest = [p.m * p.k, p.k * p.n, p.m * p.n]
        .into_iter()
        .max()
        .unwrap_or(0) as u64
        * elem;
    let lim = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    if biggest > lim {
        bail!(
            "a {}x{}x{} {} matmul needs {} MiB per matrix plane; the adapter's {} is {} MiB",
            d.m,
            d.n,
            d.k,
            match kind {
                Kind::F64 => "f64",
                Kind::Df64 => "df64",
                Kind::F16 => "f16",
            },
            biggest >> 20,
            if gpu.limits.max_storage_buffer_binding_size <= gpu.limits.max_buffer_size {
                "max_storage_buffer_binding_size"
            } else {
                "max_buffer_size"
            },
            lim >> 20
        );
    }
    Ok(p)
}

/// Matmul step 2: fresh A and B in f64, zero-padded to `p`.
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

/// Matmul step 3: the dispatch grid, checked against the adapter's workgroup limit.
fn grid(gpu: &Gpu, tm: u32, d: Dims, p: Dims) -> Result<(u32, u32)> {
    let gx = (p.n / (4 * WG as usize)) as u32;
    let gy = (p.m / tm as usize) as u32;
    let maxwg = gpu.limits.max_compute_workgroups_per_dimension;
    if gx > maxwg || gy > maxwg {
        bail!(
            "a {}x{}x{} matmul needs {gx}x{gy} workgroups; the adapter's max_compute_workgroups_per_dimension is {maxwg}",
            d.m,
            d.n,
            d.k
        );
    }
    Ok((gx, gy))
}

/// A matmul kernel ready to dispatch: its output planes, and the inputs as the GPU was
/// given them (rounded to df64 or f16), which the reference multiplies.
struct MatmulKernel {
    pipe: wgpu::ComputePipeline,
    bg: wgpu::BindGroup,
    outs: Vec<wgpu::Buffer>,
    exact_inputs: (Vec<f64>, Vec<f64>),
}

/// What every matmul kernel binds besides its matrices.
struct KernelCommon<'a> {
    gpu: &'a Gpu,
    p: Dims,
    /// Rows per invocation.
    tm: u32,
    dims: &'a wgpu::Buffer,
    guard: &'a wgpu::Buffer,
}

/// Matmul step 4: uploads the inputs, poisons the output and builds the kernel.
fn build_kernel(gpu: &Gpu, v: Variant, p: Dims, a: &[f64], b: &[f64]) -> Result<MatmulKernel> {
    let dims = gpu.uniform_buffer(
        "dims",
        bytemuck::cast_slice(&[p.m as u32, p.n as u32, p.k as u32, p.k as u32]),
    )?;
    let guard = guard_buffer(gpu)?;
    let common = KernelCommon {
        gpu,
        p,
        tm: v.tm,
        dims: &dims,
        guard: &guard,
    };
    match v.kind {
        Kind::Df64 => df64_kernel(&common, a, b, v.use_fma, v.subgroup),
        // Single-plane kernels: f16 inputs with f32 output, or f64 throughout.
        Kind::F16 | Kind::F64 => typed_kernel(&common, v.kind, a, b),
    }
}

/// The df64 kernel: inputs and output as (hi, lo) planes of f32.
fn df64_kernel(
    c: &KernelCommon<'_>,
    a: &[f64],
    b: &[f64],
    use_fma: bool,
    subgroup: bool,
) -> Result<MatmulKernel> {
    let (gpu, p) = (c.gpu, c.p);
    let split = |v: &[f64]| -> (Vec<f32>, Vec<f32>) { v.iter().map(|&x| to_df(x)).unzip() };
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    // The reference multiplies the values the GPU was given.
    let exact_inputs = (
        ah.iter()
            .zip(&al)
            .map(|(h, l)| from_df(*h, *l))
            .collect::<Vec<_>>(),
        bh.iter()
            .zip(&bl)
            .map(|(h, l)| from_df(*h, *l))
            .collect::<Vec<_>>(),
    );
    let bufs = [
        gpu.upload("a_hi", &ah)?,
        gpu.upload("a_lo", &al)?,
        gpu.upload("b_hi", &bh)?,
        gpu.upload("b_lo", &bl)?,
        gpu.storage_buffer("c_hi", (p.m * p.n * 4) as u64)?,
        gpu.storage_buffer("c_lo", (p.m * p.n * 4) as u64)?,
    ];
    gpu.poison(&bufs[4], f32::NAN.to_bits());
    let pipe = pipeline(
        gpu,
        if subgroup {
            "matmul df64 subgroup"
        } else {
            "matmul df64"
        },
        if subgroup {
            df64_subgroup_matmul_source(c.tm)
        } else {
            df64_matmul_source(c.tm)
        },
        &[
            ("WG", f64::from(WG)),
            ("USE_FMA", f64::from(u8::from(use_fma))),
        ],
    )?;
    let bg = gpu.bind(
        &pipe,
        &[
            (0, &bufs[0]),
            (1, &bufs[1]),
            (2, &bufs[2]),
            (3, &bufs[3]),
            (4, &bufs[4]),
            (5, &bufs[5]),
            (6, c.dims),
            (7, c.guard),
        ],
    );
    Ok(MatmulKernel {
        pipe,
        bg,
        outs: bufs.into_iter().skip(4).collect::<Vec<_>>(),
        exact_inputs,
    })
}

/// The single-plane kernel: f16 inputs with an f32 output, or f64 throughout.
fn typed_kernel(c: &KernelCommon<'_>, kind: Kind, a: &[f64], b: &[f64]) -> Result<MatmulKernel> {
    let (gpu, p) = (c.gpu, c.p);
    let exact_inputs;
    let (a_bytes, b_bytes, c_elem, source): (Vec<u8>, Vec<u8>, usize, String) = if kind == Kind::F16
    {
        let ah: Vec<half::f16> = a.iter().map(|&x| half::f16::from_f64(x)).collect();
        let bh: Vec<half::f16> = b.iter().map(|&x| half::f16::from_f64(x)).collect();
        exact_inputs = (
            ah.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
            bh.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
        );
        (
            bytemuck::cast_slice(&ah).to_vec(),
            bytemuck::cast_slice(&bh).to_vec(),
            4,
            typed_matmul_source(Kind::F16, c.tm),
        )
    } else {
        exact_inputs = (a.to_vec(), b.to_vec());
        (
            bytemuck::cast_slice(a).to_vec(),
            bytemuck::cast_slice(b).to_vec(),
            8,
            typed_matmul_source(Kind::F64, c.tm),
        )
    };
    let bufs = [
        gpu.upload("a", &a_bytes)?,
        gpu.upload("b", &b_bytes)?,
        gpu.storage_buffer("c", (p.m * p.n * c_elem) as u64)?,
    ];
    gpu.poison(&bufs[2], f32::NAN.to_bits());
    let pipe = pipeline(gpu, "matmul", source, &[("WG", f64::from(WG))])?;
    let bg = gpu.bind(
        &pipe,
        &[(0, &bufs[0]), (1, &bufs[1]), (2, &bufs[2]), (3, c.dims)],
    );
    Ok(MatmulKernel {
        pipe,
        bg,
        outs: bufs.into_iter().skip(2).collect::<Vec<_>>(),
        exact_inputs,
    })
}

/// Matmul step 5: reads C back as f64 (padded to `p`).
async fn read_product(gpu: &Gpu, kind: Kind, outs: &[wgpu::Buffer], p: Dims) -> Result<Vec<f64>> {
    Ok(match kind {
        Kind::Df64 => {
            let hi: Vec<f32> = gpu.read(&outs[0], p.m * p.n).await?;
            let lo: Vec<f32> = gpu.read(&outs[1], p.m * p.n).await?;
            hi.iter().zip(&lo).map(|(h, l)| from_df(*h, *l)).collect()
        }
        Kind::F64 => gpu.read(&outs[0], p.m * p.n).await?,
        Kind::F16 => gpu
            .read::<f32>(&outs[0], p.m * p.n)
            .await?
            .into_iter()
            .map(f64::from)
            .collect(),
    })
}

/// Matmul step 6: relative Frobenius error of the checked rows against compensated f64,
/// and how many rows were checked.
fn check_product(d: Dims, p: Dims, c: &[f64], exact_inputs: &(Vec<f64>, Vec<f64>)) -> (f64, usize) {
    // Compensated f64 costs more than the f32 check: half its budget.
    let rows = crate::reference::rows_to_check(d, 1 << 26);
    let pd = Dims {
        m: p.m,
        n: p.n,
        k: p.k,
    };
    let want = reference_rows(pd, &exact_inputs.0, &exact_inputs.1, &rows);
    let (mut e2, mut r2) = (0.0f64, 0.0f64);
    for (ri, &i) in rows.iter().enumerate() {
        for j in 0..d.n {
            let got = c[i * p.n + j];
            let w = want[ri][j];
            e2 += (got - w) * (got - w);
            r2 += w * w;
        }
    }
    let rel_error = if e2.is_nan() {
        f64::INFINITY
    } else if r2 > 0.0 {
        (e2 / r2).sqrt()
    } else {
        e2.sqrt()
    };
    (rel_error, rows.len())
}

fn result_for(kind: Kind, d: Dims) -> ProbeResult {
    let figure = match kind {
        Kind::Df64 => FigureKey::MatmulDf64,
        Kind::F64 => FigureKey::MatmulF64,
        Kind::F16 => FigureKey::MatmulF16,
    };
    ProbeResult::sized(figure, d.m, d.n, d.k)
}

/// Measures one size: tunes the rows per invocation briefly, measures the best on random
/// inputs, then checks accuracy on adversarial inputs too.
async fn measure_size(
    ctx: &Ctx<'_>,
    kind: Kind,
    use_fma: bool,
    d: Dims,
    self_test: Option<&SelfTest>,
) -> ProbeResult {
    let mut res = result_for(kind, d);
    if let Some(st) = self_test {
        res = res.param("self_test", st);
    }
    let tol = tolerance(kind);
    let tune = measure::Plan::trial(16);
    // df64 on adapters with subgroups of 8 or more also tries the kernel that shares A by
    // broadcast, before the plain one: where loads are issued lane by lane (CPU rasterisers)
    // it is about twice as fast; on GPUs both are tried in a full run. A quick run behind
    // its budget keeps the first valid kernel, so the likeliest comes first: the tallest on
    // a CPU rasteriser (more rows share each B load), the shortest on a GPU (registers).
    let mut variants: Vec<Variant> = Vec::new();
    if kind == Kind::Df64 && df64_subgroups(ctx.gpu) {
        let mut rows = SUBGROUP_TM_CHOICES.to_vec();
        if ctx.gpu.info.software {
            rows.reverse();
        }
        variants.extend(rows.into_iter().map(|tm| Variant {
            kind,
            tm,
            use_fma,
            subgroup: true,
        }));
    }
    variants.extend(TM_CHOICES.map(|tm| Variant {
        kind,
        tm,
        use_fma,
        subgroup: false,
    }));
    let mut best: Option<(f64, Variant)> = None;
    for v in variants {
        // A quick run behind its budget stops tuning at the first valid kernel.
        if best.is_some() && ctx.shrink() {
            break;
        }
        match run_matmul(ctx.gpu, ctx.timer, v, d, Inputs::Random, &tune).await {
            Ok(r) => {
                let valid = r.rel_error <= tol;
                res.autotune.push(serde_json::json!({
                    "config": v.label(),
                    "gflops_median": r.gflops.median,
                    "error": r.rel_error,
                    "valid": valid,
                }));
                if valid && best.is_none_or(|(g, _)| r.gflops.median > g) {
                    best = Some((r.gflops.median, v));
                }
            }
            Err(e) => res.autotune.push(
                serde_json::json!({"config": v.label(), "valid": false, "note": format!("{e:#}")}),
            ),
        }
    }
    let Some((_, v)) = best else {
        return res.no_valid_configuration();
    };
    let main = run_matmul(ctx.gpu, ctx.timer, v, d, Inputs::Random, &ctx.plan()).await;
    // Adversarial exponents (2^-24..2^24) are outside f16's range: f16 gets random inputs twice.
    let adv_inputs = if kind == Kind::F16 {
        Inputs::Random
    } else {
        Inputs::Adversarial
    };
    let adv = run_matmul(ctx.gpu, ctx.timer, v, d, adv_inputs, &tune).await;
    match (main, adv) {
        (Ok(m), Ok(a)) => {
            res.kernel = Some(serde_json::json!({
                "label": v.label(),
                "tm": v.tm, "wg": WG, "product": if use_fma { "fma" } else { "split" },
                "a_by_subgroup_broadcast": v.subgroup,
            }));
            judge(res, tol, m, a)
        }
        (Err(e), _) | (_, Err(e)) => res.with_status(Status::Failed, format!("{e:#}")),
    }
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
    let validation = Validation {
        metric: "relative_frobenius".into(),
        error: worst,
        tolerance: tol,
        passed: worst <= tol,
        detail: Some(format!(
            "random inputs {:.2e} ({:.1} bits), adversarial inputs {:.2e} ({:.1} bits); {} rows checked against compensated f64",
            m.rel_error,
            bits(m.rel_error),
            a.rel_error,
            bits(a.rel_error),
            m.rows_checked
        )),
    };
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
    let sizes: Vec<Dims> = ctx
        .sizes
        .clone()
        .unwrap_or_else(|| default_sizes(ctx.quick));
    (ctx.progress)("df64 self-test");
    let st = self_test(ctx.gpu, Broken::default()).await;
    for &d in &sizes {
        if ctx.halted() {
            emit(result_for(Kind::Df64, d).with_status(Status::Skipped, ctx.halt_reason()));
            continue;
        }
        (ctx.progress)(&format!("matmul df64 {}x{}x{}", d.m, d.n, d.k));
        match usable(&st, d) {
            Err(failed) => emit(*failed),
            Ok(s) => emit(measure_size(ctx, Kind::Df64, s.fma_fused, d, Some(s)).await),
        }
    }
    for (kind, feature, fname) in [
        (Kind::F64, wgpu::Features::SHADER_F64, "SHADER_F64"),
        (Kind::F16, wgpu::Features::SHADER_F16, "SHADER_F16"),
    ] {
        for &d in &sizes {
            if !ctx.gpu.has(feature) {
                let why = if ctx.gpu.info.backend == "webgpu" && kind == Kind::F64 {
                    "WebGPU has no f64 (no SHADER_F64); df64 is the double figure here".into()
                } else {
                    format!("the adapter has no {fname}")
                };
                emit(result_for(kind, d).with_status(Status::Unsupported, why));
                continue;
            }
            if ctx.halted() {
                emit(result_for(kind, d).with_status(Status::Skipped, ctx.halt_reason()));
                continue;
            }
            (ctx.progress)(&format!("matmul {kind:?} {}x{}x{}", d.m, d.n, d.k));
            emit(measure_size(ctx, kind, false, d, None).await);
        }
    }
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
