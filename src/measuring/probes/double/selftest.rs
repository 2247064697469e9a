//! The df64 self-test: the building blocks checked on the adapter itself (reassociation,
//! fused FMA, split contraction, subnormal flushing) before the df64 probe, and the kernel
//! sources both paths build.

use super::*;

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

pub(super) fn guard_buffer(gpu: &Gpu) -> Result<wgpu::Buffer> {
    gpu.uniform_buffer(
        "df64 guard",
        bytemuck::cast_slice(&[1.0f32, 4097.0, 0.0, 0.0]),
    )
}

pub(super) fn ops_source() -> String {
    WgslSource::new(OPS_WGSL).include(DF64_WGSL).build()
}

/// The df64 matmul: `TM` rows per invocation, the df64 library, the kernel.
pub(super) fn df64_matmul_source(tm: u32) -> String {
    WgslSource::new(MATMUL_DF64_WGSL)
        .const_u32("TM", tm)
        .include(DF64_WGSL)
        .build()
}

/// The df64 subgroup matmul (A through subgroup broadcasts): `TM` rows per invocation, its
/// `//@` lines expanded into straight-line code (a broadcast's lane must be a constant).
pub(super) fn df64_subgroup_matmul_source(tm: u32) -> String {
    WgslSource::new(expand_df64_subgroup(MATMUL_DF64_SUBGROUP_WGSL, tm))
        .const_u32("TM", tm)
        .include(DF64_WGSL)
        .build()
}

/// Expands the df64 subgroup kernel's template for `tm` rows. Consecutive lines with the same
/// `//@TAG` form one group, written out once per row {m} (`ACC_DECL`, `MADD`, `STORE`) or
/// once per 8-row load {r} (`A_LOAD`); row m lives in load {r} = m / 8 of lane {s} = m % 8.
pub(super) fn expand_df64_subgroup(template: &str, tm: u32) -> String {
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
pub(super) fn typed_matmul_source(kind: Kind, tm: u32) -> String {
    let src = WgslSource::new(MATMUL_TYPED_WGSL);
    let src = match kind {
        Kind::F16 => src.enable("f16").alias("In", "f16").alias("Acc", "f32"),
        _ => src.alias("In", "f64").alias("Acc", "f64"),
    };
    src.const_u32("TM", tm).build()
}

/// Every kernel this probe can build, with the override constants it sets.
pub(super) fn kernel_variants() -> Vec<KernelSource> {
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

pub(super) fn pipeline(
    gpu: &Gpu,
    label: &str,
    source: String,
    constants: &[(&str, f64)],
) -> Result<wgpu::ComputePipeline> {
    gpu.wgsl_pipeline(label, &source, constants)
}

pub(super) fn significant_bits(x: f32) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let m = (x.to_bits() & 0x7f_ffff) | 0x80_0000;
    24 - m.trailing_zeros()
}

/// The self-test's operands, one vec4 per test: random lanes for the product and split
/// checks, random double-floats of varied magnitude for add and multiply.
pub struct SelfTestInputs {
    pub(super) xa: [f32; 4],
    pub(super) xb: [f32; 4],
    pub(super) split_in: [f32; 4],
    pub(super) subnormal: f32,
    /// x and y as (hi, lo) planes.
    pub(super) dx: ([f32; 4], [f32; 4]),
    pub(super) dy: ([f32; 4], [f32; 4]),
}

impl SelfTestInputs {
    /// Self-test step 1: draws fresh operands.
    pub(super) fn new() -> SelfTestInputs {
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
    pub(super) fn rows(&self) -> Vec<[f32; 4]> {
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
pub(super) async fn run_self_test_kernel(
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
pub(super) fn judge_self_test(inputs: &SelfTestInputs, out: &[[f32; 4]]) -> SelfTest {
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
pub(super) fn self_test_problems(st: &SelfTest) -> Vec<&'static str> {
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
