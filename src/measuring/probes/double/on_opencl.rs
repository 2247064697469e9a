//! The double-precision kernels on OpenCL: OpenCL C df64 (`tm` rows a work-item), and
//! the tiled matmul's candidates in f64 and f16.

use super::method::DoubleKernels;
use super::*;
use crate::measuring::gpu::opencl::{Arg, ClBuffer, ClGpu, ClSource};
use crate::measuring::probes::ClCtx;
use crate::measuring::probes::matmul::on_opencl::{
    CANDIDATES, ClConfig, ClProduct, candidates, padded, source,
};
use crate::model::TimingMethod;

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

/// One kernel's layout: df64 rows per work-item, or a tile of the typed kernel.
#[derive(Clone, Copy)]
pub enum Layout {
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

/// One kernel built over its inputs (kept alive while the kernel runs).
pub enum Prepared<'g> {
    Df64 {
        kernel: opencl3::kernel::Kernel,
        global: [usize; 2],
        c: [ClBuffer<f32>; 2],
        _inputs: [ClBuffer<f32>; 4],
    },
    F64 {
        product: ClProduct<'g>,
        c: ClBuffer<f64>,
        _inputs: [ClBuffer<f64>; 2],
    },
    F16 {
        product: ClProduct<'g>,
        c: ClBuffer<f32>,
        _inputs: [ClBuffer<u16>; 2],
    },
}

impl<'a> DoubleKernels for ClCtx<'a> {
    type Layout = Layout;
    type Prepared = Prepared<'a>;

    fn method(&self) -> TimingMethod {
        self.cl.method()
    }

    async fn self_test_outputs(&self, inputs: &SelfTestInputs) -> Result<Vec<[f32; 4]>> {
        let cl = self.cl;
        let prog = cl.build_source(&self_test_source())?;
        let rows: Vec<f32> = inputs.rows().into_iter().flatten().collect();
        let inp = cl.upload("selftest in", &rows)?;
        let mut outp = cl.buffer::<f32>("selftest out", 14 * 4)?;
        cl.poison(&mut outp, f32::NAN.to_bits())?;
        let k = cl.kernel(&prog, "self_test", &[inp.arg(), outp.arg()])?;
        cl.dispatch(&k, &[1], Some(&[1]))?;
        cl.finish()?;
        let out: Vec<f32> = cl.read(&outp, 14 * 4)?;
        Ok(out.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
    }

    fn lacks(&self, kind: Kind) -> Option<String> {
        let f = &self.cl.info.features;
        let (has, ext) = match kind {
            Kind::F64 => (f.shader_f64, "cl_khr_fp64"),
            Kind::F16 => (f.shader_f16, "cl_khr_fp16"),
            Kind::Df64 => return None,
        };
        (!has).then(|| format!("the device does not offer {ext}"))
    }

    fn layouts(&self, kind: Kind, use_fma: bool) -> Vec<Layout> {
        let elem = match kind {
            Kind::Df64 => {
                return CL_TM
                    .iter()
                    .map(|&tm| Layout::Df64 { tm, use_fma })
                    .collect();
            }
            Kind::F64 => 8,
            Kind::F16 => 2,
        };
        candidates(self.cl, elem)
            .into_iter()
            .take(3)
            .map(Layout::Typed)
            .collect()
    }

    fn label(&self, kind: Kind, l: Layout) -> String {
        l.label(kind)
    }

    fn describe(&self, kind: Kind, l: Layout) -> serde_json::Value {
        serde_json::json!({"label": l.label(kind)})
    }

    fn padded(&self, _kind: Kind, l: Layout, d: Dims) -> Result<Dims> {
        Ok(l.padded(d))
    }

    fn prepare(
        &self,
        kind: Kind,
        l: Layout,
        p: Dims,
        a: &[f64],
        b: &[f64],
    ) -> Result<Prepared<'a>> {
        match (kind, l) {
            (Kind::Df64, Layout::Df64 { tm, use_fma }) => {
                df64_prepared(self.cl, (tm, use_fma), p, a, b)
            }
            (Kind::F64, Layout::Typed(cfg)) => {
                let cl = self.cl;
                let prog = cl.build_source(&source(cfg, "f64"))?;
                let (da, db) = (cl.upload("A", a)?, cl.upload("B", b)?);
                let mut dc = cl.buffer::<f64>("C", p.m * p.n)?;
                cl.poison(&mut dc, 0x7ff8_0000)?;
                let product = ClProduct::new(cl, cfg, p, &prog, [da.arg(), db.arg(), dc.arg()], 8)?;
                Ok(Prepared::F64 {
                    product,
                    c: dc,
                    _inputs: [da, db],
                })
            }
            (Kind::F16, Layout::Typed(cfg)) => {
                let cl = self.cl;
                let to_f16 = |v: &[f64]| -> Vec<u16> {
                    v.iter()
                        .map(|&x| half::f16::from_f64(x).to_bits())
                        .collect()
                };
                let prog = cl.build_source(&source(cfg, "f16"))?;
                let (da, db) = (cl.upload("A", &to_f16(a))?, cl.upload("B", &to_f16(b))?);
                let mut dc = cl.buffer::<f32>("C", p.m * p.n)?;
                cl.poison(&mut dc, 0x7fc0_0000)?;
                let product = ClProduct::new(cl, cfg, p, &prog, [da.arg(), db.arg(), dc.arg()], 2)?;
                Ok(Prepared::F16 {
                    product,
                    c: dc,
                    _inputs: [da, db],
                })
            }
            _ => bail!("no OpenCL kernel of this layout for {kind:?}"),
        }
    }

    async fn dispatch(&self, p: &Prepared<'a>, iters: u32) -> Result<f64> {
        match p {
            Prepared::Df64 { kernel, global, .. } => self.cl.time(iters, &mut || {
                Ok(self.cl.dispatch(kernel, global, Some(&[CL_WG, 1]))?.into())
            }),
            Prepared::F64 { product, .. } | Prepared::F16 { product, .. } => {
                self.cl.time(iters, &mut || product.enqueue())
            }
        }
    }

    async fn read(&self, p: &Prepared<'a>) -> Result<Vec<f64>> {
        let cl = self.cl;
        Ok(match p {
            Prepared::Df64 { c: [hi, lo], .. } => {
                let n = hi.len;
                let (hi, lo) = (cl.read(hi, n)?, cl.read(lo, n)?);
                hi.iter().zip(&lo).map(|(h, l)| from_df(*h, *l)).collect()
            }
            Prepared::F64 { c, .. } => cl.read(c, c.len)?,
            Prepared::F16 { c, .. } => cl.read(c, c.len)?.into_iter().map(f64::from).collect(),
        })
    }
}

/// The df64 kernel over A and B split into (hi, lo) planes, C's planes poisoned.
fn df64_prepared<'g>(
    cl: &'g ClGpu,
    (tm, use_fma): (u32, bool),
    p: Dims,
    a: &[f64],
    b: &[f64],
) -> Result<Prepared<'g>> {
    let split = |v: &[f64]| -> (Vec<f32>, Vec<f32>) { v.iter().map(|&x| to_df(x)).unzip() };
    let ((ah, al), (bh, bl)) = (split(a), split(b));
    let prog = cl.build_source(&df64_source(tm, use_fma))?;
    let inputs = [
        cl.upload("A hi", &ah)?,
        cl.upload("A lo", &al)?,
        cl.upload("B hi", &bh)?,
        cl.upload("B lo", &bl)?,
    ];
    let mut ch = cl.buffer::<f32>("C hi", p.m * p.n)?;
    let mut clo = cl.buffer::<f32>("C lo", p.m * p.n)?;
    cl.poison(&mut ch, 0x7fc0_0000)?;
    cl.poison(&mut clo, 0x7fc0_0000)?;
    let mut args: Vec<Arg<'_>> = vec![
        Arg::U32(p.m as u32),
        Arg::U32(p.n as u32),
        Arg::U32(p.k as u32),
    ];
    args.extend(inputs.iter().map(|b| b.arg()));
    args.extend([ch.arg(), clo.arg()]);
    let kernel = cl.kernel(&prog, "matmul_df64", &args)?;
    Ok(Prepared::Df64 {
        kernel,
        global: [p.n, p.m / tm as usize],
        c: [ch, clo],
        _inputs: inputs,
    })
}

pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    super::method::run_on(ctx, ctx, emit).await
}
