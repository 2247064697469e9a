//! Int8 matrix multiply through WGSL's packed dot product (`dot4I8Packed`): the figure
//! int8 inference runs on where there is no matrix engine. Inputs are random signed bytes,
//! the output 32-bit sums, checked exactly against the CPU on sampled rows.

use super::Ctx;
use crate::figure::FigureKey;
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks};
use crate::measuring::gpu::wgsl::{KernelSource, WgslSource};
use crate::measuring::reference::{Dims, Rng, rows_to_check};
use crate::results::{ProbeResult, Status, Validation};
use anyhow::{Result, bail};

const INT8_WGSL: &str = include_str!("../../../shaders/matmul_int8.wgsl");
/// Rows per invocation, invocations per workgroup, columns per invocation.
const TM: u32 = 4;
const WG: u32 = 64;
const TN: usize = 4;
/// Multiply-adds the exact CPU check may spend.
const CHECK_BUDGET: usize = 1 << 27;

fn source() -> String {
    WgslSource::new(INT8_WGSL).const_u32("TM", TM).build()
}

/// Packs signed bytes four to a word along K (byte i of a word is element 4w + i).
fn pack(rows: &[i8], k: usize) -> Vec<u32> {
    rows.chunks(k)
        .flat_map(|row| {
            row.chunks(4).map(|q| {
                q.iter()
                    .enumerate()
                    .fold(0u32, |w, (i, &b)| w | (u32::from(b as u8) << (8 * i)))
            })
        })
        .collect()
}

/// The matrices as the kernel sees them: padded, A row-major and B transposed.
struct Inputs {
    padded: Dims,
    a: Vec<i8>,
    bt: Vec<i8>,
}

impl Inputs {
    fn random(d: Dims) -> Inputs {
        Inputs::seeded(d, &mut Rng::fresh())
    }

    fn seeded(d: Dims, rng: &mut Rng) -> Inputs {
        let rows = (TM * WG) as usize;
        let padded = Dims {
            m: d.m.next_multiple_of(rows),
            n: d.n.next_multiple_of(TN),
            k: d.k.next_multiple_of(4),
        };
        // Zero padding contributes nothing to the sums.
        let mut fill = |r: usize, c: usize, live_r: usize, live_c: usize| -> Vec<i8> {
            (0..r * c)
                .map(|i| {
                    let live = i / c < live_r && i % c < live_c;
                    if live {
                        (rng.next_u64() >> 56) as u8 as i8
                    } else {
                        0
                    }
                })
                .collect()
        };
        let a = fill(padded.m, padded.k, d.m, d.k);
        let bt = fill(padded.n, padded.k, d.n, d.k);
        Inputs { padded, a, bt }
    }

    /// The exact sum for C[r][c].
    fn expected(&self, r: usize, c: usize) -> i32 {
        let k = self.padded.k;
        let (ar, br) = (&self.a[r * k..(r + 1) * k], &self.bt[c * k..(c + 1) * k]);
        ar.iter()
            .zip(br)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum()
    }
}

/// Refuses a size whose buffers the adapter cannot bind (checked arithmetic throughout).
fn check_fits(gpu: &Gpu, p: Dims) -> Result<()> {
    let words = |r: usize, c: usize| r.checked_mul(c).and_then(|x| x.checked_mul(4));
    let biggest = [words(p.m, p.k / 4), words(p.n, p.k / 4), words(p.m, p.n)]
        .into_iter()
        .try_fold(0usize, |m, x| x.map(|x| m.max(x)));
    let limit = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    match biggest {
        Some(b) if (b as u64) <= limit => Ok(()),
        _ => bail!(
            "a {}x{}x{} int8 matmul needs buffers beyond the adapter's binding limit ({} MiB)",
            p.m,
            p.n,
            p.k,
            limit >> 20
        ),
    }
}

/// The kernel over one set of inputs on wgpu: pipeline, bind group, the output (poisoned)
/// and the workgroup grid.
struct Kernel {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    c: wgpu::Buffer,
    groups: (u32, u32),
}

fn kernel(gpu: &Gpu, inp: &Inputs, trusted: bool) -> Result<Kernel> {
    let p = inp.padded;
    check_fits(gpu, p)?;
    let a = gpu.upload("int8 a", &pack(&inp.a, p.k))?;
    let bt = gpu.upload("int8 bt", &pack(&inp.bt, p.k))?;
    let c = gpu.storage_buffer("int8 c", (p.m * p.n * 4) as u64)?;
    gpu.poison(&c, 0x7fff_fff7);
    let dims = [p.m as u32, p.n as u32, (p.k / 4) as u32, 0];
    let dims = gpu.uniform_buffer("int8 dims", bytemuck::cast_slice(&dims))?;
    let src = source();
    let constants = [("WG", f64::from(WG))];
    let pipeline = gpu.kernel(&KernelSpec {
        constants: &constants,
        // Every index is in range for the padded sizes the dispatch covers; the k loop runs
        // to a uniform the host sets to the padded K / 4.
        checks: RuntimeChecks::unless(trusted),
        ..KernelSpec::new("matmul int8", &src)
    })?;
    let bind = gpu.bind(&pipeline, &[(0, &a), (1, &bt), (2, &c), (3, &dims)]);
    let groups = ((p.m as u32) / (TM * WG), (p.n / TN) as u32);
    Ok(Kernel {
        pipeline,
        bind,
        c,
        groups,
    })
}

/// Measures one size: fresh random inputs, a poisoned output, timed batches, then the
/// exact check of sampled rows.
async fn measure_size(ctx: &Ctx<'_>, d: Dims) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let inp = Inputs::random(d);
    let p = inp.padded;
    let Kernel {
        pipeline,
        bind,
        c,
        groups,
    } = kernel(gpu, &inp, ctx.trusted)?;
    let timing = super::time_dispatches(ctx, &pipeline, &bind, groups).await?;
    let got: Vec<i32> = gpu.read(&c, p.m * p.n).await?;
    let res = ProbeResult::sized(FigureKey::MatmulInt8, d.m, d.n, d.k)
        .param("rows_per_invocation", TM)
        .param("runtime_checks", !ctx.trusted);
    Ok(judge(res, &inp, d, &got, timing))
}

/// The product of the inputs seeded with `seed` (`d` unpadded), computed once on a wgpu
/// adapter with the probe's kernel: what the cross-executor test compares with OpenCL's.
pub async fn product_wgpu(gpu: &Gpu, d: Dims, seed: u64) -> Result<Vec<i32>> {
    let inp = Inputs::seeded(d, &mut Rng::new(seed));
    let p = inp.padded;
    let k = kernel(gpu, &inp, false)?;
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &k.bind, &[]);
        pass.dispatch_workgroups(k.groups.0, k.groups.1, 1);
    }
    gpu.queue.submit([enc.finish()]);
    let got: Vec<i32> = gpu.read(&k.c, p.m * p.n).await?;
    Ok(unpad(&got, d, p))
}

/// The live m x n block of a padded product.
fn unpad(c: &[i32], d: Dims, p: Dims) -> Vec<i32> {
    (0..d.m)
        .flat_map(|r| c[r * p.n..r * p.n + d.n].iter().copied())
        .collect()
}

/// The CPU's exact product of the inputs seeded with `seed`.
pub fn product_cpu(d: Dims, seed: u64) -> Vec<i32> {
    let inp = Inputs::seeded(d, &mut Rng::new(seed));
    (0..d.m)
        .flat_map(|r| (0..d.n).map(move |c| (r, c)))
        .map(|(r, c)| inp.expected(r, c))
        .collect()
}

/// The figure from the sums the device wrote: sampled rows checked exactly.
fn judge(
    mut res: ProbeResult,
    inp: &Inputs,
    d: Dims,
    got: &[i32],
    timing: super::measure::TimingInfo,
) -> ProbeResult {
    let p = inp.padded;
    let rows = rows_to_check(d, CHECK_BUDGET);
    let wrong = rows
        .iter()
        .flat_map(|&r| (0..d.n).map(move |col| (r, col)))
        .filter(|&(r, col)| got[r * p.n + col] != inp.expected(r, col))
        .count();
    let checked = rows.len() * d.n;
    let ops = 2.0 * d.m as f64 * d.n as f64 * d.k as f64;
    let value = timing.figure(|t| ops / t * 1e-9);
    let validation = Validation {
        metric: "exact".into(),
        error: wrong as f64 / checked.max(1) as f64,
        tolerance: 0.0,
        passed: wrong == 0,
        detail: Some(format!(
            "{} of {} rows checked exactly, {wrong} of {checked} sums wrong",
            rows.len(),
            d.m
        )),
    };
    res.timing = Some(timing);
    res.validated(validation, value, |v| {
        format!(
            "validation failed: {:.3}% of the checked sums differ from the CPU's",
            100.0 * v.error
        )
    })
}

/// The sizes measured when `--sizes` is not given.
fn default_sizes(quick: bool) -> Vec<Dims> {
    let v: &[usize] = if quick { &[512] } else { &[512, 1024, 2048] };
    v.iter().map(|&n| Dims { m: n, n, k: n }).collect()
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let sizes: Vec<Dims> = ctx
        .sizes
        .clone()
        .unwrap_or_else(|| default_sizes(ctx.quick));
    for d in sizes {
        if !ctx
            .gpu
            .wgsl
            .contains(wgpu::WgslLanguageFeatures::Packed4x8IntegerDotProduct)
        {
            emit(
                ProbeResult::sized(FigureKey::MatmulInt8, d.m, d.n, d.k).with_status(
                    Status::Unsupported,
                    "the browser's WGSL lacks packed_4x8_integer_dot_product (dot4I8Packed)",
                ),
            );
            continue;
        }
        let what = format!("matmul int8 {}x{}x{}", d.m, d.n, d.k);
        super::step(ctx, emit, FigureKey::MatmulInt8, &what, async {
            measure_size(ctx, d).await
        })
        .await;
    }
}

/// The int8 probe, as registered in `probes::REGISTRY`.
pub struct Int8;

impl super::Probe for Int8 {
    fn name(&self) -> &'static str {
        "int8"
    }
    fn about(&self) -> &'static str {
        "Int8 matrix multiply with 32-bit sums through the packed dot product dot4I8Packed (GOPS)."
    }
    fn budget_share(&self) -> f64 {
        0.05
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[FigureKey::MatmulInt8]
    }
    fn kernels(&self) -> Vec<KernelSource> {
        vec![KernelSource::new(
            "matmul int8",
            source(),
            "main",
            &[("WG", f64::from(WG))],
        )]
    }
    run_with_async_fn!(opencl);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_pack_four_to_a_word_in_order() {
        let w = pack(&[1, -1, 2, -128, 5, 0, 0, 0], 8);
        assert_eq!(w, vec![0x80_02_ff_01, 5]);
    }

    #[test]
    fn padding_adds_nothing_to_the_sums() {
        let inp = Inputs::random(Dims { m: 3, n: 5, k: 7 });
        assert_eq!(inp.padded.k, 8);
        assert!(inp.a.chunks(8).all(|r| r[7] == 0));
        let by_hand: i32 = (0..7)
            .map(|i| i32::from(inp.a[8 + i]) * i32::from(inp.bt[2 * 8 + i]))
            .sum();
        assert_eq!(inp.expected(1, 2), by_hand);
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub use on_opencl::product_opencl;
#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: the WGSL kernel's layout and inputs, the device's packed dot
/// product where it offers `cl_khr_integer_dot_product`, else widening multiply-adds (said
/// in the result), the same exact check.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    use super::*;
    use crate::measuring::gpu::opencl::Arg;
    use crate::measuring::probes::ClCtx;

    const INT8_CL: &str = include_str!("../../../shaders/opencl/int8.cl");

    /// The program with the packed dot product (`cl_khr_integer_dot_product`) or without.
    fn source(int_dot: bool) -> crate::measuring::gpu::opencl::ClSource {
        let mut defines = vec![("TM", TM.to_string())];
        if int_dot {
            defines.push(("INT_DOT", "1".into()));
        }
        crate::measuring::gpu::opencl::ClSource::new("matmul int8", "int8.cl", INT8_CL, defines)
    }

    pub(super) fn cl_sources() -> Vec<crate::measuring::gpu::opencl::ClSource> {
        vec![source(false), source(true)]
    }

    /// The kernel over one set of inputs, with the buffers its arguments name (kept alive:
    /// a kernel argument does not retain its buffer).
    struct Setup {
        k: opencl3::kernel::Kernel,
        _inputs: [crate::measuring::gpu::opencl::ClBuffer<u32>; 2],
        c: crate::measuring::gpu::opencl::ClBuffer<i32>,
        global: [usize; 2],
        int_dot: bool,
    }

    fn setup(cl: &crate::measuring::gpu::opencl::ClGpu, inp: &Inputs) -> Result<Setup> {
        let p = inp.padded;
        let int_dot = cl
            .info
            .opencl
            .as_ref()
            .is_some_and(|o| o.integer_dot_product);
        let prog = cl.build_source(&source(int_dot))?;
        let a = cl.upload("int8 a", &pack(&inp.a, p.k))?;
        let bt = cl.upload("int8 bt", &pack(&inp.bt, p.k))?;
        let mut c = cl.buffer::<i32>("int8 c", p.m * p.n)?;
        cl.poison(&mut c, 0x7fff_fff7)?;
        let args = [
            Arg::U32(p.m as u32),
            Arg::U32(p.n as u32),
            Arg::U32((p.k / 4) as u32),
            a.arg(),
            bt.arg(),
            c.arg(),
        ];
        let k = cl.kernel(&prog, "matmul_int8", &args)?;
        let global = [p.m / TM as usize, p.n / TN];
        Ok(Setup {
            k,
            _inputs: [a, bt],
            c,
            global,
            int_dot,
        })
    }

    /// As `product_wgpu`, on an OpenCL device.
    pub fn product_opencl(
        cl: &crate::measuring::gpu::opencl::ClGpu,
        d: Dims,
        seed: u64,
    ) -> Result<Vec<i32>> {
        let inp = Inputs::seeded(d, &mut Rng::new(seed));
        let s = setup(cl, &inp)?;
        cl.dispatch(&s.k, &s.global, Some(&[WG as usize, 1]))?;
        cl.finish()?;
        let got = cl.read(&s.c, inp.padded.m * inp.padded.n)?;
        Ok(unpad(&got, d, inp.padded))
    }

    fn measure_cl(ctx: &ClCtx<'_>, d: Dims) -> Result<ProbeResult> {
        let cl = ctx.cl;
        let inp = Inputs::random(d);
        let p = inp.padded;
        // The input buffers stay bound for as long as the kernel runs.
        let Setup {
            k,
            _inputs: _held,
            c,
            global,
            int_dot,
        } = setup(cl, &inp)?;
        let timing = ctx.time(&ctx.plan(), &mut || {
            cl.dispatch(&k, &global, Some(&[WG as usize, 1]))
        })?;
        let got: Vec<i32> = cl.read(&c, p.m * p.n)?;
        let res = ProbeResult::sized(FigureKey::MatmulInt8, d.m, d.n, d.k)
            .param("rows_per_invocation", TM)
            .param(
                "dot_product",
                if int_dot {
                    "cl_khr_integer_dot_product"
                } else {
                    "widening multiply-adds (no cl_khr_integer_dot_product)"
                },
            );
        Ok(judge(res, &inp, d, &got, timing))
    }

    pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
        let sizes = ctx
            .sizes
            .clone()
            .unwrap_or_else(|| default_sizes(ctx.quick));
        for d in sizes {
            let what = format!("matmul int8 {}x{}x{}", d.m, d.n, d.k);
            super::super::step(ctx, emit, FigureKey::MatmulInt8, &what, async {
                measure_cl(ctx, d)
            })
            .await;
        }
    }
}
