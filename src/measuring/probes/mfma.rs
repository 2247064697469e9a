//! The matrix-engine probe on AMD Instinct through OpenCL: FP16 and BF16 matrix multiplies
//! with f32 sums, and FP64 with f64 sums, on CDNA's matrix cores (MFMA), from OpenCL C
//! through Clang's `__builtin_amdgcn_mfma_*` builtins (`shaders/opencl/mfma.cl`). FP16 and
//! BF16 under the cooperative-matrix probe's figure (`matmul_coop`), sizes and check, so the
//! ranking takes it as an MI-series GPU's measured matrix-engine rate as it takes the
//! cooperative matrices on NVIDIA; FP64 under `matmul_f64_matrix`, the rate of the HPC jobs'
//! FP64 matrix engines.
//!
//! Chosen when the OpenCL device is a CDNA part (its gfx id, `CL_DEVICE_NAME`); anywhere
//! else the figure is `unsupported`, with the reason. The data layout is proven without an
//! MI-series GPU: the kernel's other build replaces each instruction with a portable OpenCL
//! C emulation of its exact lane mapping, and `run_emulated` runs the whole probe (tiling,
//! packing, validation) through it on any OpenCL device (PoCL in the tests); the builtin
//! build is compiled for gfx90a, gfx942 and gfx950 by `tests/it/kernels.rs`.

use super::ClCtx;
use crate::figure::FigureKey;
use crate::measuring::gpu::opencl::{Arg, ClGpu, ClSource};
use crate::measuring::reference::{Dims, Rng, relative_frobenius};
use crate::results::{ProbeResult, Status, Validation};
use anyhow::{Result, bail};

const MFMA_CL: &str = include_str!("../../../shaders/opencl/mfma.cl");
/// Relative Frobenius error allowed: inputs rounded to 16 bits (checked against the rounded
/// values), sums in f32, as the cooperative-matrix probe; FP64 sums in f64 (K of 8192 terms
/// rounded in any order stay far below it).
const TOLERANCE: f64 = 1e-4;
const TOLERANCE_F64: f64 = 1e-12;
/// Lanes of a CDNA wave: one work-group is one wave.
const WAVE: usize = 64;
/// Tiles of 16 x 16 a wave computes (rows x columns), the likelier faster first; the
/// fastest at each size is kept (`autotune` in the result).
const TILES: [(usize, usize); 2] = [(4, 4), (2, 2)];

/// The input type of the multiply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F16,
    Bf16,
    F64,
}

impl Elem {
    fn name(self) -> &'static str {
        match self {
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::F64 => "f64",
        }
    }
    /// Bytes an input element takes; the results are f32 (f64 for FP64).
    fn bytes(self) -> usize {
        if self == Elem::F64 { 8 } else { 2 }
    }
    fn out_bytes(self) -> usize {
        if self == Elem::F64 { 8 } else { 4 }
    }
    /// The element nearest `v` as the device reads it (little-endian bytes), and its value.
    fn round(self, v: f64, out: &mut [u8]) -> f64 {
        match self {
            Elem::F16 => {
                let h = half::f16::from_f64(v);
                out.copy_from_slice(&h.to_bits().to_le_bytes());
                h.to_f64()
            }
            Elem::Bf16 => {
                let h = half::bf16::from_f64(v);
                out.copy_from_slice(&h.to_bits().to_le_bytes());
                h.to_f64()
            }
            Elem::F64 => {
                out.copy_from_slice(&v.to_le_bytes());
                v
            }
        }
    }
    /// The figure its results go under.
    fn figure(self) -> FigureKey {
        if self == Elem::F64 {
            FigureKey::MatmulF64Matrix
        } else {
            FigureKey::MatmulCoop
        }
    }
    fn tolerance(self) -> f64 {
        if self == Elem::F64 {
            TOLERANCE_F64
        } else {
            TOLERANCE
        }
    }
}

/// How the kernel multiplies its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The MFMA instruction (a CDNA device's own compiler).
    Builtin,
    /// The portable emulation of the instruction's lane mapping (any OpenCL device).
    Emulated,
}

/// One instruction the probe runs: its input type, elements a lane (4: 16x16x16; 8: the
/// 16x16x32 f16 instruction of gfx950) and ISA name on the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instr {
    pub elem: Elem,
    pub per_lane: usize,
    pub name: &'static str,
}

/// The instructions the probe runs on `gfx` (FP16 first: the figure the ranking uses), or
/// why it runs none. gfx908 (MI100) has no 16x16x16 BF16 instruction (its `_1k` form came
/// with gfx90a) and no FP64 MFMA (Clang cannot select it there), gfx950's full-rate FP16
/// instruction is 16x16x32.
pub fn instructions(gfx: &str) -> Result<Vec<Instr>, String> {
    let f16 = |name| Instr {
        elem: Elem::F16,
        per_lane: 4,
        name,
    };
    let bf16 = |name| Instr {
        elem: Elem::Bf16,
        per_lane: 4,
        name,
    };
    let f64 = |name| Instr {
        elem: Elem::F64,
        per_lane: 1,
        name,
    };
    match gfx {
        "gfx908" => Ok(vec![f16("v_mfma_f32_16x16x16f16")]),
        "gfx90a" => Ok(vec![
            f16("v_mfma_f32_16x16x16f16"),
            bf16("v_mfma_f32_16x16x16bf16_1k"),
            f64("v_mfma_f64_16x16x4f64"),
        ]),
        "gfx940" | "gfx941" | "gfx942" => Ok(vec![
            f16("v_mfma_f32_16x16x16_f16"),
            bf16("v_mfma_f32_16x16x16_bf16"),
            f64("v_mfma_f64_16x16x4_f64"),
        ]),
        "gfx950" => Ok(vec![
            Instr {
                elem: Elem::F16,
                per_lane: 8,
                name: "v_mfma_f32_16x16x32_f16",
            },
            bf16("v_mfma_f32_16x16x16_bf16"),
            f64("v_mfma_f64_16x16x4_f64"),
        ]),
        "" => Err(
            "the OpenCL device names no AMD gfx id: MFMA instructions are AMD CDNA's \
                   (gfx908, gfx90a, gfx942, gfx950)"
                .into(),
        ),
        other => Err(format!(
            "the OpenCL device is {other}, not an AMD CDNA part: MFMA instructions exist on \
             gfx908, gfx90a, gfx942 and gfx950 (MI100 to MI355X)"
        )),
    }
}

/// The program for one instruction, tile shape and path.
fn source(instr: Instr, tiles: (usize, usize), path: Path) -> ClSource {
    let mut defines = vec![
        ("TM", tiles.0.to_string()),
        ("TN", tiles.1.to_string()),
        ("KL", instr.per_lane.to_string()),
        ("ELEM", (instr.elem as u32).to_string()),
    ];
    if path == Path::Builtin {
        defines.push(("MFMA_BUILTIN", "1".into()));
    }
    ClSource::new(
        format!("matmul mfma {}", instr.elem.name()),
        "mfma.cl",
        MFMA_CL,
        defines,
    )
}

/// Every variant the probe can build: each CDNA target's instructions with the builtins, and
/// the same shapes emulated.
pub fn cl_sources() -> Vec<ClSource> {
    let mut instrs: Vec<Instr> = ["gfx908", "gfx90a", "gfx942", "gfx950"]
        .iter()
        .flat_map(|g| instructions(g).unwrap_or_default())
        .collect();
    instrs.sort_by_key(|i| (i.elem as u32, i.per_lane));
    instrs.dedup_by_key(|i| (i.elem, i.per_lane));
    let mut out = Vec::new();
    for path in [Path::Builtin, Path::Emulated] {
        for &i in &instrs {
            for t in TILES {
                out.push(source(i, t, path));
            }
        }
    }
    out
}

/// The inputs: A (M x K) and B transposed (N x K), padded with zeros, as the device reads
/// them (16-bit words or doubles, little-endian) and as the values they hold.
struct Inputs {
    padded: Dims,
    a_raw: Vec<u8>,
    bt_raw: Vec<u8>,
    a: Vec<f64>,
    bt: Vec<f64>,
}

fn inputs(d: Dims, instr: Instr, tiles: (usize, usize), rng: &mut Rng) -> Inputs {
    let ki = 4 * instr.per_lane;
    let p = Dims {
        m: d.m.next_multiple_of(16 * tiles.0),
        n: d.n.next_multiple_of(16 * tiles.1),
        k: d.k.next_multiple_of(ki),
    };
    let eb = instr.elem.bytes();
    let mut fill = |rows: usize, live_rows: usize| {
        let (mut raw, mut vals) = (vec![0u8; rows * p.k * eb], vec![0f64; rows * p.k]);
        for r in 0..live_rows {
            for c in 0..d.k {
                let i = r * p.k + c;
                vals[i] = instr
                    .elem
                    .round(rng.signed_unit(), &mut raw[i * eb..(i + 1) * eb]);
            }
        }
        (raw, vals)
    };
    let (a_raw, a) = fill(p.m, d.m);
    let (bt_raw, bt) = fill(p.n, d.n);
    Inputs {
        padded: p,
        a_raw,
        bt_raw,
        a,
        bt,
    }
}

/// Relative Frobenius error of sampled rows of C against f64 sums of the rounded inputs (a
/// non-finite element counts as infinite), and the rows checked.
fn check(inp: &Inputs, got: &[f64], d: Dims) -> (f64, usize) {
    let k = inp.padded.k;
    relative_frobenius(d, inp.padded.n, got, |r, col| {
        let a = &inp.a[r * k..r * k + d.k];
        let b = &inp.bt[col * k..col * k + d.k];
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    })
}

/// The results as read back (f32 or f64, little-endian) in f64.
fn results(raw: &[u8], elem: Elem) -> Vec<f64> {
    match elem {
        Elem::F64 => raw
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect(),
        _ => raw
            .chunks_exact(4)
            .map(|b| f64::from(f32::from_le_bytes(b.try_into().expect("4 bytes"))))
            .collect(),
    }
}

/// One variant set up over its inputs: the kernel, the buffers it names (kept alive: an
/// argument does not retain its buffer), the launch.
struct Setup {
    kernel: opencl3::kernel::Kernel,
    _inputs: [crate::measuring::gpu::opencl::ClBuffer<u8>; 2],
    c: crate::measuring::gpu::opencl::ClBuffer<u8>,
    global: [usize; 2],
}

fn setup(
    cl: &ClGpu,
    inp: &Inputs,
    elem: Elem,
    src: &ClSource,
    tiles: (usize, usize),
) -> Result<Setup> {
    let p = inp.padded;
    let biggest = (p.m.max(p.n) * p.k * elem.bytes()).max(p.m * p.n * elem.out_bytes()) as u64;
    let limit = cl.max_alloc(u64::MAX);
    if biggest > limit {
        bail!("a {p} product needs a {biggest}-byte buffer, above the device's {limit}");
    }
    let prog = cl.build_source(src)?;
    let a = cl.upload("mfma a", &inp.a_raw)?;
    let bt = cl.upload("mfma bt", &inp.bt_raw)?;
    let mut c = cl.buffer::<u8>("mfma c", p.m * p.n * elem.out_bytes())?;
    // f32 NaN words: a NaN as f64 too (0x7fc000007fc00000).
    cl.poison(&mut c, f32::NAN.to_bits())?;
    let args = [
        Arg::U32(p.m as u32),
        Arg::U32(p.n as u32),
        Arg::U32(p.k as u32),
        a.arg(),
        bt.arg(),
        c.arg(),
    ];
    let kernel = cl.kernel(&prog, "matmul_mfma", &args)?;
    let global = [p.n / (16 * tiles.1) * WAVE, p.m / (16 * tiles.0)];
    Ok(Setup {
        kernel,
        _inputs: [a, bt],
        c,
        global,
    })
}

/// The tile shape that ran one product fastest, with each candidate's time (a candidate that
/// fails to build or run is recorded and passed over).
fn tune(
    cl: &ClGpu,
    d: Dims,
    instr: Instr,
    path: Path,
) -> Result<((usize, usize), Vec<serde_json::Value>)> {
    let mut best: Option<((usize, usize), f64)> = None;
    let mut log = Vec::new();
    for t in TILES {
        let inp = inputs(d, instr, t, &mut Rng::new(7));
        let once = setup(cl, &inp, instr.elem, &source(instr, t, path), t).and_then(|s| {
            let run = || cl.dispatch(&s.kernel, &s.global, Some(&[WAVE, 1]));
            run()?;
            cl.finish()?;
            cl.time(1, &mut || run().map(Into::into))
        });
        let tiles = format!("{}x{}", t.0, t.1);
        match once {
            Ok(s) => {
                log.push(serde_json::json!({"tiles": tiles, "seconds": s}));
                if best.is_none_or(|(_, b)| s < b) {
                    best = Some((t, s));
                }
            }
            Err(e) => log.push(serde_json::json!({"tiles": tiles, "error": format!("{e:#}")})),
        }
    }
    match best {
        Some((t, _)) => Ok((t, log)),
        None => bail!("no tile shape built and ran: {log:?}"),
    }
}

/// One product of `instr` at `d`: tuned, timed under the probe's plan, checked.
pub fn measure(ctx: &ClCtx<'_>, d: Dims, instr: Instr, path: Path) -> Result<ProbeResult> {
    let cl = ctx.cl;
    let (tiles, log) = tune(cl, d, instr, path)?;
    let inp = inputs(d, instr, tiles, &mut Rng::fresh());
    let src = source(instr, tiles, path);
    let Setup {
        kernel,
        _inputs: _held,
        c,
        global,
    } = setup(cl, &inp, instr.elem, &src, tiles)?;
    let timing = ctx.time(&ctx.plan(), &mut || {
        cl.dispatch(&kernel, &global, Some(&[WAVE, 1]))
    })?;
    let p = inp.padded;
    let raw: Vec<u8> = cl.read(&c, p.m * p.n * instr.elem.out_bytes())?;
    let (err, rows) = check(&inp, &results(&raw, instr.elem), d);
    let flops = 2.0 * d.m as f64 * d.n as f64 * d.k as f64;
    let value = timing.figure(|t| flops / t * 1e-9);
    // FP16 under the figure's own name (the ranking's rate); BF16 named apart; FP64 under
    // its own figure.
    let elem = match instr.elem {
        Elem::F16 | Elem::F64 => "",
        Elem::Bf16 => " bf16",
    };
    let figure = instr.elem.figure();
    let label = figure.info().label;
    let name = format!("{label}{elem} {}x{}x{}", d.m, d.n, d.k);
    let instruction = match path {
        Path::Builtin => instr.name.to_string(),
        Path::Emulated => format!(
            "{} emulated in portable OpenCL C (its lane mapping; not a matrix engine)",
            instr.name
        ),
    };
    let mut res = ProbeResult::named(figure, name)
        .param("m", d.m)
        .param("n", d.n)
        .param("k", d.k)
        .param("inputs", instr.elem.name())
        .param("instruction", instruction)
        .param(
            "tile",
            format!(
                "{}x16 x {}x16 a wave of 64, K by {}",
                tiles.0,
                tiles.1,
                4 * instr.per_lane
            ),
        );
    res.autotune = log;
    res.timing = Some(timing);
    let validation = Validation::within(
        "relative_frobenius",
        err,
        instr.elem.tolerance(),
        format!(
            "{rows} of {} rows checked against f64 sums of the {} inputs",
            d.m,
            instr.elem.name()
        ),
    );
    Ok(res.validated(validation, value, Validation::tolerance_exceeded))
}

fn sizes(ctx: &ClCtx<'_>) -> Vec<Dims> {
    ctx.sizes.clone().unwrap_or_else(|| {
        let v: &[usize] = if ctx.quick {
            &[1024]
        } else {
            &[1024, 2048, 4096, 8192]
        };
        v.iter().map(|&n| Dims { m: n, n, k: n }).collect()
    })
}

/// The probe over `instrs` on `path`: the first (FP16) at every size, the others at the
/// largest (the rate BF16 training runs at).
async fn run_all(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult), instrs: &[Instr], path: Path) {
    let sizes = sizes(ctx);
    for (i, instr) in instrs.iter().enumerate() {
        let these = if i == 0 {
            &sizes[..]
        } else {
            &sizes[sizes.len() - 1..]
        };
        for &d in these {
            let what = format!("matmul mfma {} {}x{}x{}", instr.elem.name(), d.m, d.n, d.k);
            super::step(ctx, emit, instr.elem.figure(), &what, async {
                measure(ctx, d, *instr, path)
            })
            .await;
        }
    }
}

/// The probe on an OpenCL device: the MFMA instructions on a CDNA part, else `unsupported`
/// with the reason.
pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let gfx = ctx.cl.info.opencl.as_ref().map_or("", |o| o.gfx_id());
    let d = sizes(ctx)[0];
    match instructions(gfx) {
        Ok(instrs) => {
            run_all(ctx, emit, &instrs, Path::Builtin).await;
            if !instrs.iter().any(|i| i.elem == Elem::F64) {
                let r = ProbeResult::sized(FigureKey::MatmulF64Matrix, d.m, d.n, d.k);
                emit(r.with_status(
                    Status::Unsupported,
                    format!("{gfx} has no FP64 MFMA instruction (gfx90a and later do)"),
                ));
            }
        }
        Err(why) => {
            let r = ProbeResult::sized(FigureKey::MatmulCoop, d.m, d.n, d.k);
            emit(r.with_status(Status::Unsupported, why));
            let r = ProbeResult::sized(FigureKey::MatmulF64Matrix, d.m, d.n, d.k);
            emit(r.with_status(
                Status::Unsupported,
                "needs AMD CDNA's FP64 MFMA (gfx90a and later)",
            ));
        }
    }
}

/// The whole probe through the emulated instructions, on any OpenCL device: gfx942's FP16,
/// BF16 and FP64 and gfx950's 16x16x32 FP16 layouts. For the tests; never a figure a bench
/// records (an emulation is not a matrix engine).
pub async fn run_emulated(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let mut instrs = instructions("gfx942").expect("gfx942 has MFMA");
    instrs.extend(
        instructions("gfx950")
            .expect("gfx950 has MFMA")
            .into_iter()
            .filter(|i| i.per_lane == 8),
    );
    // Every instruction at every size: the emulation is there to prove each layout.
    for instr in instrs {
        run_all(ctx, emit, &[instr], Path::Emulated).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdna_parts_have_instructions_and_the_rest_say_why_not() {
        for g in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
            let i = instructions(g).unwrap();
            assert_eq!(i[0].elem, Elem::F16, "{g}: FP16 first");
        }
        assert_eq!(instructions("gfx908").unwrap().len(), 1);
        assert_eq!(instructions("gfx950").unwrap()[0].per_lane, 8);
        for other in ["gfx1100", "gfx906", "pthread-Intel(R) Xeon(R)", ""] {
            let why = instructions(other).unwrap_err();
            assert!(why.contains("CDNA"), "{other}: {why}");
        }
    }

    #[test]
    fn every_shape_is_listed_on_both_paths() {
        let s = cl_sources();
        // f16 x4, bf16 x4, f16 x8, f64 x1; two tile shapes; builtin and emulated.
        assert_eq!(s.len(), 4 * TILES.len() * 2, "{s:?}");
        let builtin = s
            .iter()
            .filter(|v| v.defines.iter().any(|(k, _)| *k == "MFMA_BUILTIN"))
            .count();
        assert_eq!(builtin, s.len() / 2);
    }

    #[test]
    fn inputs_are_padded_with_zeros_and_rounded_to_their_type() {
        let d = Dims {
            m: 70,
            n: 45,
            k: 33,
        };
        let instr = instructions("gfx950").unwrap()[0];
        let inp = inputs(d, instr, (4, 2), &mut Rng::new(3));
        assert_eq!((inp.padded.m, inp.padded.n, inp.padded.k), (128, 64, 64));
        let k = inp.padded.k;
        assert!(inp.a[69 * k..70 * k][33..].iter().all(|&v| v == 0.0));
        assert!(inp.a[70 * k..].iter().all(|&v| v == 0.0));
        assert!(inp.bt[45 * k..].iter().all(|&v| v == 0.0));
        for (raw, v) in inp.a_raw.chunks_exact(2).zip(&inp.a) {
            assert_eq!(half::f16::from_le_bytes([raw[0], raw[1]]).to_f64(), *v);
        }
        let f64s = instructions("gfx942").unwrap()[2];
        assert_eq!((f64s.elem, f64s.per_lane), (Elem::F64, 1));
        let inp = inputs(d, f64s, (2, 2), &mut Rng::new(3));
        assert_eq!((inp.padded.m, inp.padded.n, inp.padded.k), (96, 64, 36));
        assert_eq!(inp.a_raw.len(), 96 * 36 * 8);
        assert_eq!(
            f64::from_le_bytes(inp.a_raw[8..16].try_into().unwrap()),
            inp.a[1]
        );
        assert!(inp.a[1] != 0.0 && inp.a[1].fract() != 0.0);
        assert_eq!(results(&inp.a_raw[..16], Elem::F64), inp.a[..2]);
        assert!(
            instructions("gfx908")
                .unwrap()
                .iter()
                .all(|i| i.elem != Elem::F64)
        );
    }
}
