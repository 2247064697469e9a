//! Int8 matrix multiply through WGSL's packed dot product (`dot4I8Packed`): the figure
//! int8 inference runs on where there is no matrix engine. Inputs are random signed bytes,
//! the output 32-bit sums, checked exactly against the CPU on sampled rows.

use super::Ctx;
use super::executor::{self, Executor};
use crate::figure::FigureKey;
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks};
use crate::measuring::gpu::wgsl::{KernelSource, WgslSource};
use crate::measuring::reference::{Dims, Rng, rows_to_check};
use crate::results::{ProbeResult, Status};
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
pub struct Inputs {
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
pub struct WgpuInt8 {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    c: wgpu::Buffer,
    groups: (u32, u32),
    sums: usize,
}

fn kernel(gpu: &Gpu, inp: &Inputs, trusted: bool) -> Result<WgpuInt8> {
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
    Ok(WgpuInt8 {
        pipeline,
        bind,
        c,
        groups,
        sums: p.m * p.n,
    })
}

/// What the int8 method asks of an executor: the kernel over one set of inputs, dispatched
/// and timed a batch at a time, and its sums read back.
#[allow(async_fn_in_trait)]
pub trait Int8Executor: Executor {
    /// The kernel built over its inputs, ready to dispatch.
    type Prepared;
    /// Why this executor cannot run the kernel, if it cannot.
    fn lacks(&self) -> Option<&'static str> {
        None
    }
    /// Uploads the inputs (packed four to a word), poisons the output, builds the kernel.
    fn prepare(&self, inp: &Inputs) -> Result<Self::Prepared>;
    /// Runs `iters` products as one batch; the seconds it took.
    async fn dispatch(&self, p: &Self::Prepared, iters: u32) -> Result<f64>;
    /// The padded product, read back.
    async fn read(&self, p: &Self::Prepared) -> Result<Vec<i32>>;
    /// The measured result's executor-specific parameters.
    fn describe(&self, res: ProbeResult, p: &Self::Prepared) -> ProbeResult;
}

/// Measures one size: fresh random inputs, a poisoned output, timed batches, then the
/// exact check of sampled rows.
async fn measure_size<E: Int8Executor>(exec: &E, d: Dims) -> Result<ProbeResult> {
    let inp = Inputs::random(d);
    let p = exec.prepare(&inp)?;
    let plan = exec.run_ctx().plan();
    let timing = executor::time(exec, &plan, async |iters| exec.dispatch(&p, iters).await).await?;
    let got = exec.read(&p).await?;
    let res =
        ProbeResult::sized(FigureKey::MatmulInt8, d.m, d.n, d.k).param("rows_per_invocation", TM);
    Ok(judge(exec.describe(res, &p), &inp, d, &got, timing))
}

/// Runs the probe on `exec`: one result per size.
pub async fn run_on<E: Int8Executor>(exec: &E, emit: &mut dyn FnMut(ProbeResult)) {
    let run = exec.run_ctx();
    let sizes: Vec<Dims> = run
        .sizes
        .clone()
        .unwrap_or_else(|| default_sizes(run.quick));
    for d in sizes {
        if let Some(why) = exec.lacks() {
            let res = ProbeResult::sized(FigureKey::MatmulInt8, d.m, d.n, d.k);
            emit(res.with_status(Status::Unsupported, why));
            continue;
        }
        let what = format!("matmul int8 {}x{}x{}", d.m, d.n, d.k);
        super::step(
            exec,
            emit,
            FigureKey::MatmulInt8,
            &what,
            measure_size(exec, d),
        )
        .await;
    }
}

impl Int8Executor for Ctx<'_> {
    type Prepared = WgpuInt8;

    fn lacks(&self) -> Option<&'static str> {
        let packed = wgpu::WgslLanguageFeatures::Packed4x8IntegerDotProduct;
        (!self.gpu.wgsl.contains(packed))
            .then_some("the browser's WGSL lacks packed_4x8_integer_dot_product (dot4I8Packed)")
    }
    fn prepare(&self, inp: &Inputs) -> Result<WgpuInt8> {
        kernel(self.gpu, inp, self.trusted)
    }
    async fn dispatch(&self, p: &WgpuInt8, iters: u32) -> Result<f64> {
        super::time_batch(self.timer, &p.pipeline, &p.bind, p.groups, iters).await
    }
    async fn read(&self, p: &WgpuInt8) -> Result<Vec<i32>> {
        self.gpu.read(&p.c, p.sums).await
    }
    fn describe(&self, res: ProbeResult, _p: &WgpuInt8) -> ProbeResult {
        res.param("runtime_checks", !self.trusted)
    }
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
    res: ProbeResult,
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
    let error = wrong as f64 / checked.max(1) as f64;
    let detail = format!(
        "{} of {} rows checked exactly, {wrong} of {checked} sums wrong",
        rows.len(),
        d.m
    );
    super::judged_exactly(
        res,
        timing,
        |t| ops / t * 1e-9,
        (error, detail),
        |v| {
            format!(
                "validation failed: {:.3}% of the checked sums differ from the CPU's",
                100.0 * v.error
            )
        },
    )
}

/// The sizes measured when `--sizes` is not given.
fn default_sizes(quick: bool) -> Vec<Dims> {
    let v: &[usize] = if quick { &[512] } else { &[512, 1024, 2048] };
    v.iter().map(|&n| Dims { m: n, n, k: n }).collect()
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
    run_with_async_fn!(run_on);
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::cl_sources;
#[cfg(not(target_arch = "wasm32"))]
pub use on_opencl::product_opencl;

/// The same method on OpenCL: the WGSL kernel's layout and inputs, the device's packed dot
/// product where it offers `cl_khr_integer_dot_product`, else widening multiply-adds (said
/// in the result), the same exact check.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    use super::*;
    use crate::measuring::gpu::opencl::{Arg, ClBuffer, ClGpu, ClSource};
    use crate::measuring::probes::ClCtx;

    const INT8_CL: &str = include_str!("../../../shaders/opencl/int8.cl");

    /// The program with the packed dot product (`cl_khr_integer_dot_product`) or without.
    fn source(int_dot: bool) -> ClSource {
        let mut defines = vec![("TM", TM.to_string())];
        if int_dot {
            defines.push(("INT_DOT", "1".into()));
        }
        ClSource::new("matmul int8", "int8.cl", INT8_CL, defines)
    }

    pub(super) fn cl_sources() -> Vec<ClSource> {
        vec![source(false), source(true)]
    }

    /// The kernel over one set of inputs, with the buffers its arguments name (kept alive:
    /// a kernel argument does not retain its buffer).
    pub struct ClInt8 {
        k: opencl3::kernel::Kernel,
        _inputs: [ClBuffer<u32>; 2],
        c: ClBuffer<i32>,
        global: [usize; 2],
        int_dot: bool,
    }

    fn setup(cl: &ClGpu, inp: &Inputs) -> Result<ClInt8> {
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
        Ok(ClInt8 {
            k,
            _inputs: [a, bt],
            c,
            global,
            int_dot,
        })
    }

    /// As `product_wgpu`, on an OpenCL device.
    pub fn product_opencl(cl: &ClGpu, d: Dims, seed: u64) -> Result<Vec<i32>> {
        let inp = Inputs::seeded(d, &mut Rng::new(seed));
        let s = setup(cl, &inp)?;
        cl.dispatch(&s.k, &s.global, Some(&[WG as usize, 1]))?;
        cl.finish()?;
        let got = cl.read(&s.c, s.c.len)?;
        Ok(unpad(&got, d, inp.padded))
    }

    impl Int8Executor for ClCtx<'_> {
        type Prepared = ClInt8;

        fn prepare(&self, inp: &Inputs) -> Result<ClInt8> {
            setup(self.cl, inp)
        }
        async fn dispatch(&self, s: &ClInt8, iters: u32) -> Result<f64> {
            let local = [WG as usize, 1];
            self.cl.time(iters, &mut || {
                Ok(self.cl.dispatch(&s.k, &s.global, Some(&local))?.into())
            })
        }
        async fn read(&self, s: &ClInt8) -> Result<Vec<i32>> {
            self.cl.read(&s.c, s.c.len)
        }
        fn describe(&self, res: ProbeResult, s: &ClInt8) -> ProbeResult {
            let dot = if s.int_dot {
                "cl_khr_integer_dot_product"
            } else {
                "widening multiply-adds (no cl_khr_integer_dot_product)"
            };
            res.param("dot_product", dot)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measuring::probes::executor::mock;

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

    /// The product on the host: every sum exact, but for the first `wrong` (one more).
    struct Kernels {
        wrong: usize,
        lacks: Option<&'static str>,
    }

    type Mock = mock::Device<Kernels>;

    impl Int8Executor for Mock {
        /// The padded product, computed when prepared.
        type Prepared = Vec<i32>;
        fn lacks(&self) -> Option<&'static str> {
            self.state.lacks
        }
        fn prepare(&self, inp: &Inputs) -> Result<Vec<i32>> {
            // Each measurement replays the script from its start.
            self.clock.next.set(0);
            let p = inp.padded;
            let sums = (0..p.m * p.n).map(|i| inp.expected(i / p.n, i % p.n));
            Ok(sums
                .enumerate()
                .map(|(i, x)| if i < self.wrong { x + 1 } else { x })
                .collect())
        }
        async fn dispatch(&self, _p: &Vec<i32>, iters: u32) -> Result<f64> {
            Ok(self.clock.batch(iters))
        }
        async fn read(&self, p: &Vec<i32>) -> Result<Vec<i32>> {
            Ok(p.clone())
        }
        fn describe(&self, res: ProbeResult, _p: &Vec<i32>) -> ProbeResult {
            res.param("mock", true)
        }
    }

    const ODD: Dims = Dims { m: 5, n: 6, k: 7 };

    fn mock(per_iter_s: &[f64], wrong: usize) -> Mock {
        let kernels = Kernels { wrong, lacks: None };
        let mut m = mock::Device::new(mock::plan(5, 8), per_iter_s, kernels);
        m.run.sizes = Some(vec![ODD]);
        m
    }

    fn results(m: &Mock) -> Vec<ProbeResult> {
        let mut out = Vec::new();
        pollster::block_on(run_on(m, &mut |r| out.push(r)));
        out
    }

    #[test]
    fn known_times_give_the_gops_and_the_warm_up_is_not_counted() {
        let m = mock(&[1.0, 0.004, 0.002, 0.001, 0.003, 0.008], 0);
        let r = results(&m);
        assert_eq!(r.len(), 1);
        let p = &r[0];
        assert_eq!(p.status, Status::Ok, "{:?}", p.reason);
        // Operations of the unpadded product.
        let ops = 2.0 * 5.0 * 6.0 * 7.0;
        let v = p.value.as_ref().unwrap();
        assert_eq!(v.n, 5);
        assert!((v.median - ops / 0.003 * 1e-9).abs() < 1e-12, "{v:?}");
        assert!((v.max - ops / 0.001 * 1e-9).abs() < 1e-12);
        assert!((v.min - ops / 0.008 * 1e-9).abs() < 1e-12);
        let t = p.timing.as_ref().unwrap();
        assert_eq!((t.warmup_runs, t.iters_per_sample), (1, 1));
        assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
        assert_eq!(m.clock.batches.borrow().len(), 6);
        assert_eq!(p.params["rows_per_invocation"], TM);
        assert_eq!(p.params["mock"], true);
        let detail = p.validation.as_ref().unwrap().detail.as_deref();
        assert_eq!(
            detail,
            Some("5 of 5 rows checked exactly, 0 of 30 sums wrong")
        );
        assert_eq!(m.said.borrow()[..], ["matmul int8 5x6x7"]);
    }

    #[test]
    fn a_wrong_sum_fails_with_no_figure() {
        let r = results(&mock(&[0.01], 1));
        assert_eq!(r.len(), 1);
        mock::assert_failed(
            &r[0],
            "5 of 5 rows checked exactly, 1 of 30 sums wrong",
            "validation failed: 3.333% of the checked sums differ from the CPU's",
        );
    }

    #[test]
    fn an_executor_without_the_kernel_says_why_for_every_size() {
        let mut m = mock(&[0.01], 0);
        m.state.lacks = Some("mock: no packed dot product");
        m.run.sizes = Some(vec![ODD, Dims { m: 8, n: 8, k: 8 }]);
        let r = results(&m);
        assert_eq!(r.len(), 2);
        for p in &r {
            assert_eq!(p.status, Status::Unsupported);
            assert_eq!(p.reason.as_deref(), Some("mock: no packed dot product"));
        }
        assert!(m.said.borrow().is_empty(), "nothing run");
    }
}
