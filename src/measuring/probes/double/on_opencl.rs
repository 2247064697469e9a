use super::*;
use crate::measuring::gpu::opencl::{Arg, ClGpu, ClSource};
use crate::measuring::probes::matmul::on_opencl::{
    CANDIDATES, ClConfig, candidates, padded, source, time_kernel,
};
use crate::measuring::probes::{ClCtx, Halts};

const DF64_CL: &str = include_str!("../../../../shaders/opencl/df64.cl");
/// Rows per work-item of the df64 kernel, and its work-group width.
const CL_TM: [u32; 3] = [1, 4, 8];
const CL_WG: usize = 64;

fn self_test_source() -> ClSource {
    let defines = vec![
        ("REAL", "float4".to_string()),
        ("SELF_TEST", "1".to_string()),
        ("USE_FMA", "0".to_string()),
    ];
    ClSource::new("df64 self-test", "df64.cl", DF64_CL, defines)
}

fn df64_source(tm: u32, use_fma: bool) -> ClSource {
    let defines = vec![
        ("TM", tm.to_string()),
        ("USE_FMA", u8::from(use_fma).to_string()),
    ];
    ClSource::new("matmul df64", "df64.cl", DF64_CL, defines)
}

/// The self-test, df64 at every row count with and without FMA, and the tiled matmul's
/// candidates in f64 and f16.
pub(super) fn cl_sources() -> Vec<ClSource> {
    let mut v = vec![self_test_source()];
    for tm in CL_TM {
        v.extend([false, true].map(|fma| df64_source(tm, fma)));
    }
    for ty in ["f64", "f16"] {
        v.extend(CANDIDATES.map(|c| source(c, ty)));
    }
    v
}

fn self_test_cl(cl: &ClGpu) -> Result<SelfTest> {
    let inputs = SelfTestInputs::new();
    let prog = cl.build_source(&self_test_source())?;
    let rows: Vec<f32> = inputs.rows().into_iter().flatten().collect();
    let inp = cl.upload("selftest in", &rows)?;
    let mut outp = cl.buffer::<f32>("selftest out", 14 * 4)?;
    cl.poison(&mut outp, f32::NAN.to_bits())?;
    let k = cl.kernel(&prog, "self_test", &[inp.arg(), outp.arg()])?;
    cl.dispatch(&k, &[1], Some(&[1]))?;
    cl.finish()?;
    let out: Vec<f32> = cl.read(&outp, 14 * 4)?;
    let out: Vec<[f32; 4]> = out.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    Ok(judge_self_test(&inputs, &out))
}

/// One kernel's layout: df64 rows per work-item, or a tile of the typed kernel.
#[derive(Clone, Copy)]
enum Layout {
    Df64 { tm: u32, use_fma: bool },
    Typed(ClConfig),
}

impl Layout {
    fn label(&self, kind: Kind) -> String {
        match self {
            Layout::Df64 { tm, use_fma } => format!(
                "opencl df64, {tm} rows per work-item, {CL_WG} work-items, {} product",
                if *use_fma { "FMA" } else { "split" }
            ),
            Layout::Typed(c) => format!("{} ({kind:?})", c.label()),
        }
    }

    fn padded(&self, d: Dims) -> Dims {
        match self {
            Layout::Df64 { tm, .. } => Dims {
                m: d.m.next_multiple_of(*tm as usize),
                n: d.n.next_multiple_of(CL_WG),
                k: d.k,
            },
            Layout::Typed(c) => padded(*c, d),
        }
    }
}

fn run_matmul_cl(
    ctx: &ClCtx<'_>,
    kind: Kind,
    layout: Layout,
    d: Dims,
    inputs: Inputs,
    plan: &Plan,
) -> Result<PrecisionRun> {
    let cl = ctx.cl;
    let p = layout.padded(d);
    let (a, b) = matmul_inputs(d, p, inputs);
    let dims = [
        Arg::U32(p.m as u32),
        Arg::U32(p.n as u32),
        Arg::U32(p.k as u32),
    ];
    let (timing, c, exact) = match (kind, layout) {
        (Kind::Df64, Layout::Df64 { tm, use_fma }) => {
            let split = |v: &[f64]| -> (Vec<f32>, Vec<f32>) { v.iter().map(|&x| to_df(x)).unzip() };
            let ((ah, al), (bh, bl)) = (split(&a), split(&b));
            let join = |h: &[f32], l: &[f32]| -> Vec<f64> {
                h.iter().zip(l).map(|(h, l)| from_df(*h, *l)).collect()
            };
            let exact = (join(&ah, &al), join(&bh, &bl));
            let prog = cl.build_source(&df64_source(tm, use_fma))?;
            let bufs = [
                cl.upload("A hi", &ah)?,
                cl.upload("A lo", &al)?,
                cl.upload("B hi", &bh)?,
                cl.upload("B lo", &bl)?,
            ];
            let mut ch = cl.buffer::<f32>("C hi", p.m * p.n)?;
            let mut clo = cl.buffer::<f32>("C lo", p.m * p.n)?;
            cl.poison(&mut ch, 0x7fc0_0000)?;
            cl.poison(&mut clo, 0x7fc0_0000)?;
            let mut args: Vec<Arg<'_>> = dims.into();
            args.extend(bufs.iter().map(|b| b.arg()));
            args.extend([ch.arg(), clo.arg()]);
            let k = cl.kernel(&prog, "matmul_df64", &args)?;
            let global = [p.n, p.m / tm as usize];
            let timing = ctx.time(plan, &mut || cl.dispatch(&k, &global, Some(&[CL_WG, 1])))?;
            let (hi, lo) = (cl.read(&ch, p.m * p.n)?, cl.read(&clo, p.m * p.n)?);
            (timing, join(&hi, &lo), exact)
        }
        (Kind::F64, Layout::Typed(cfg)) => {
            let prog = cl.build_source(&source(cfg, "f64"))?;
            let (da, db) = (cl.upload("A", &a)?, cl.upload("B", &b)?);
            let mut dc = cl.buffer::<f64>("C", p.m * p.n)?;
            cl.poison(&mut dc, 0x7ff8_0000)?;
            let bufs = [da.arg(), db.arg(), dc.arg()];
            let timing = time_kernel(ctx, cfg, p, &prog, bufs, 8, plan)?;
            let c = cl.read(&dc, p.m * p.n)?;
            (timing, c, (a, b))
        }
        (Kind::F16, Layout::Typed(cfg)) => {
            let ah: Vec<u16> = a
                .iter()
                .map(|&x| half::f16::from_f64(x).to_bits())
                .collect();
            let bh: Vec<u16> = b
                .iter()
                .map(|&x| half::f16::from_f64(x).to_bits())
                .collect();
            let back = |v: &[u16]| -> Vec<f64> {
                v.iter()
                    .map(|&x| half::f16::from_bits(x).to_f64())
                    .collect()
            };
            let exact = (back(&ah), back(&bh));
            let prog = cl.build_source(&source(cfg, "f16"))?;
            let (da, db) = (cl.upload("A", &ah)?, cl.upload("B", &bh)?);
            let mut dc = cl.buffer::<f32>("C", p.m * p.n)?;
            cl.poison(&mut dc, 0x7fc0_0000)?;
            let bufs = [da.arg(), db.arg(), dc.arg()];
            let timing = time_kernel(ctx, cfg, p, &prog, bufs, 2, plan)?;
            let c: Vec<f64> = cl
                .read(&dc, p.m * p.n)?
                .into_iter()
                .map(f64::from)
                .collect();
            (timing, c, exact)
        }
        _ => bail!("no OpenCL kernel of this layout for {kind:?}"),
    };
    let (rel_error, rows_checked) = check_product(d, p, &c, &exact);
    let flops = 2.0 * d.m as f64 * d.n as f64 * d.k as f64;
    let gflops = timing.figure(|t| flops / t * 1e-9);
    Ok(PrecisionRun {
        timing,
        gflops,
        rel_error,
        rows_checked,
    })
}

fn measure_size_cl(
    ctx: &ClCtx<'_>,
    kind: Kind,
    layouts: &[Layout],
    d: Dims,
    self_test: Option<&SelfTest>,
) -> ProbeResult {
    let mut res = result_for(kind, d);
    if let Some(st) = self_test {
        res = res.param("self_test", st);
    }
    let tol = tolerance(kind);
    let tune = measure::Plan::trial(16);
    let mut best: Option<(f64, Layout)> = None;
    for &l in layouts {
        if best.is_some() && ctx.shrink() {
            break;
        }
        match run_matmul_cl(ctx, kind, l, d, Inputs::Random, &tune) {
            Ok(r) => {
                let valid = r.rel_error <= tol;
                res.autotune.push(serde_json::json!({
                    "config": l.label(kind), "gflops_median": r.gflops.median,
                    "error": r.rel_error, "valid": valid,
                }));
                if valid && best.is_none_or(|(g, _)| r.gflops.median > g) {
                    best = Some((r.gflops.median, l));
                }
            }
            Err(e) => res.autotune.push(
                serde_json::json!({"config": l.label(kind), "valid": false, "note": format!("{e:#}")}),
            ),
        }
    }
    let Some((_, l)) = best else {
        return res.no_valid_configuration();
    };
    let main = run_matmul_cl(ctx, kind, l, d, Inputs::Random, &ctx.plan());
    let adv_inputs = if kind == Kind::F16 {
        Inputs::Random
    } else {
        Inputs::Adversarial
    };
    let adv = run_matmul_cl(ctx, kind, l, d, adv_inputs, &tune);
    match (main, adv) {
        (Ok(m), Ok(a)) => {
            res.kernel = Some(serde_json::json!({"label": l.label(kind)}));
            judge(res, tol, m, a)
        }
        (Err(e), _) | (_, Err(e)) => res.with_status(Status::Failed, format!("{e:#}")),
    }
}

pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let sizes: Vec<Dims> = ctx
        .sizes
        .clone()
        .unwrap_or_else(|| default_sizes(ctx.quick));
    ctx.say("df64 self-test");
    let st = self_test_cl(ctx.cl);
    for &d in &sizes {
        if ctx.halted() {
            emit(result_for(Kind::Df64, d).with_status(Status::Skipped, ctx.halt_reason()));
            continue;
        }
        ctx.say(&format!("matmul df64 {}x{}x{}", d.m, d.n, d.k));
        match usable(&st, d) {
            Err(failed) => emit(*failed),
            Ok(s) => {
                let layouts: Vec<Layout> = CL_TM
                    .iter()
                    .map(|&tm| Layout::Df64 {
                        tm,
                        use_fma: s.fma_fused,
                    })
                    .collect();
                emit(measure_size_cl(ctx, Kind::Df64, &layouts, d, Some(s)))
            }
        }
    }
    let info = &ctx.cl.info;
    for (kind, has, ext, elem) in [
        (Kind::F64, info.features.shader_f64, "cl_khr_fp64", 8),
        (Kind::F16, info.features.shader_f16, "cl_khr_fp16", 2),
    ] {
        let layouts: Vec<Layout> = candidates(ctx.cl, elem)
            .into_iter()
            .take(3)
            .map(Layout::Typed)
            .collect();
        for &d in &sizes {
            if !has {
                emit(result_for(kind, d).with_status(
                    Status::Unsupported,
                    format!("the device does not offer {ext}"),
                ));
                continue;
            }
            if ctx.halted() {
                emit(result_for(kind, d).with_status(Status::Skipped, ctx.halt_reason()));
                continue;
            }
            ctx.say(&format!("matmul {kind:?} {}x{}x{}", d.m, d.n, d.k));
            emit(measure_size_cl(ctx, kind, &layouts, d, None));
        }
    }
}
