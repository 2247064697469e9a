//! FP32 arithmetic peak: independent multiply-add chains with nothing loaded in the loop,
//! the adapter's own ceiling for compute-bound kernels. It puts the matmul figures in
//! proportion on any adapter (a GPU against its datasheet; lavapipe against its vector width
//! and whether its `fma` is fused) without a BLAS of another vector width as the yardstick.
//! Every invocation's result is checked exactly.

use super::Ctx;
use super::executor::{self, Executor};
use super::measure;
use crate::figure::FigureKey;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks, fold_workgroups};
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::Rng;
use crate::results::{ProbeResult, Status};
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
    res = res
        .param("invocations", count)
        .param("multiply_adds_per_invocation", CHAINS * UNROLL * TRIPS)
        .param("independent_chains", CHAINS);
    let check = (
        wrong as f64 / f64::from(count),
        format!("all {count} invocations checked exactly: {wrong} wrong"),
    );
    super::judged_exactly(
        res,
        timing,
        |t| flops / t * 1e-9,
        check,
        |v| {
            format!(
                "validation failed: {:.3}% of the invocations wrote a wrong sum",
                100.0 * v.error
            )
        },
    )
}

/// What the peak method asks of an executor: the chains kernel over fresh seeds, built for
/// one configuration, dispatched and timed a batch at a time, and its sums read back.
#[allow(async_fn_in_trait)]
pub trait PeakExecutor: Executor {
    /// One kernel configuration (OpenCL: lanes per work-item).
    type Config: Copy;
    /// The kernel built over its seeds, ready to dispatch.
    type Prepared;
    /// Whether the device is a software rasteriser (fewer invocations).
    fn software(&self) -> bool;
    /// The configurations to try; with one, it is measured without trials.
    fn candidates(&self) -> Vec<Self::Config>;
    /// A configuration as the tuning trials record it.
    fn label(&self, cfg: Self::Config) -> String;
    /// Uploads the seeds, poisons the sums, builds the kernel.
    fn prepare(&self, cfg: Self::Config, seeds: &[f32]) -> Result<Self::Prepared>;
    /// Runs `iters` dispatches as one batch; the seconds it took.
    async fn dispatch(&self, p: &Self::Prepared, iters: u32) -> Result<f64>;
    /// Every invocation's (or lane's) sum, read back.
    async fn read(&self, p: &Self::Prepared) -> Result<Vec<f32>>;
    /// The measured result's executor-specific parameters and kernel description.
    fn describe(&self, res: ProbeResult, cfg: Self::Config) -> ProbeResult;
}

/// One configuration on fresh seeds under `plan`: the figure, judged.
async fn measure_config<E: PeakExecutor>(
    exec: &E,
    cfg: E::Config,
    plan: &measure::Plan,
    res: ProbeResult,
) -> Result<ProbeResult> {
    let seeds = seeds(invocations(exec.software()));
    let p = exec.prepare(cfg, &seeds)?;
    let timing = executor::time(exec, plan, async |iters| exec.dispatch(&p, iters).await).await?;
    let got = exec.read(&p).await?;
    Ok(judge(res, &seeds, &got, timing))
}

/// Short trials of each configuration: the fastest valid one, and every trial as recorded.
async fn tune<E: PeakExecutor>(
    exec: &E,
    configs: &[E::Config],
) -> (Option<E::Config>, Vec<serde_json::Value>) {
    let plan = measure::Plan::trial(64);
    let mut trials = Vec::new();
    let mut best: Option<(f64, E::Config)> = None;
    for &cfg in configs {
        if !exec.keep_tuning(best.is_some()) {
            break;
        }
        let r = measure_config(exec, cfg, &plan, ProbeResult::of(FigureKey::PeakF32)).await;
        let (gflops, valid, note) = match r {
            Ok(j) => (j.value.map(|v| v.median), j.status == Status::Ok, j.reason),
            Err(e) => (None, false, Some(format!("{e:#}"))),
        };
        if let (Some(g), true) = (gflops, valid)
            && best.is_none_or(|(b, _)| g > b)
        {
            best = Some((g, cfg));
        }
        trials.push(serde_json::json!({
            "config": exec.label(cfg),
            "gflops_median": gflops, "valid": valid, "note": note,
        }));
    }
    (best.map(|(_, c)| c), trials)
}

async fn measure_on<E: PeakExecutor>(exec: &E) -> Result<ProbeResult> {
    let (best, trials) = match exec.candidates()[..] {
        [only] => (Some(only), Vec::new()),
        ref configs => tune(exec, configs).await,
    };
    let mut res = ProbeResult::of(FigureKey::PeakF32);
    res.autotune = trials;
    let Some(cfg) = best else {
        return Ok(res.no_valid_configuration());
    };
    let res = exec.describe(res, cfg);
    measure_config(exec, cfg, &exec.run_ctx().plan(), res).await
}

/// Runs the probe on `exec`: its one figure.
pub async fn run_on<E: PeakExecutor>(exec: &E, emit: &mut dyn FnMut(ProbeResult)) {
    let f = FigureKey::PeakF32;
    super::step(exec, emit, f, f.info().label, measure_on(exec)).await;
}

/// The wgpu kernel: one invocation a seed, in workgroups of `WG`.
pub struct WgpuPeak {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    groups: (u32, u32),
    out: wgpu::Buffer,
    count: u32,
}

impl PeakExecutor for Ctx<'_> {
    type Config = ();
    type Prepared = WgpuPeak;

    fn software(&self) -> bool {
        self.gpu.info.software
    }
    fn candidates(&self) -> Vec<()> {
        vec![()]
    }
    fn label(&self, _cfg: ()) -> String {
        format!("{WG} invocations")
    }
    fn prepare(&self, _cfg: (), seeds: &[f32]) -> Result<WgpuPeak> {
        let gpu = self.gpu;
        let count = seeds.len() as u32;
        let params: [u32; 4] = [A.to_bits(), B.to_bits(), TRIPS, count];
        let params = gpu.uniform_buffer("peak params", bytemuck::cast_slice(&params))?;
        let seed = gpu.upload("peak seeds", seeds)?;
        let out = gpu.storage_buffer("peak out", u64::from(count) * 4)?;
        gpu.poison(&out, 0x7fc0_0000);
        let src = source();
        let constants = [("WG", f64::from(WG))];
        let pipeline = gpu.kernel(&KernelSpec {
            constants: &constants,
            // Indices: one per invocation, guarded by `count`; the loop runs to a uniform.
            checks: RuntimeChecks::unless(self.trusted),
            ..KernelSpec::new("peak f32", &src)
        })?;
        let bind = gpu.bind(&pipeline, &[(0, &params), (1, &seed), (2, &out)]);
        let groups = fold_workgroups(
            count.div_ceil(WG),
            gpu.limits.max_compute_workgroups_per_dimension,
        );
        Ok(WgpuPeak {
            pipeline,
            bind,
            groups,
            out,
            count,
        })
    }
    async fn dispatch(&self, p: &WgpuPeak, iters: u32) -> Result<f64> {
        super::time_batch(self.timer, &p.pipeline, &p.bind, p.groups, iters).await
    }
    async fn read(&self, p: &WgpuPeak) -> Result<Vec<f32>> {
        self.gpu.read(&p.out, p.count as usize).await
    }
    fn describe(&self, res: ProbeResult, _cfg: ()) -> ProbeResult {
        res.param("runtime_checks", !self.trusted)
    }
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
    run_with_async_fn!(run_on);
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
use on_opencl::cl_sources;

/// The same method on OpenCL: the chains in OpenCL C, VEC lanes per work-item (float to
/// float16, the fastest valid width chosen by short trials), every lane checked exactly.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    use super::*;
    use crate::measuring::gpu::opencl::{Arg, ClBuffer, ClSource};
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

    /// The kernel built over its seeds: VEC lanes a work-item, work-groups of `wg`.
    pub struct ClPeak {
        kernel: opencl3::kernel::Kernel,
        global: [usize; 1],
        wg: usize,
        out: ClBuffer<f32>,
        _seed: ClBuffer<f32>,
    }

    impl PeakExecutor for ClCtx<'_> {
        type Config = u32;
        type Prepared = ClPeak;

        fn software(&self) -> bool {
            self.cl.info.software
        }
        fn candidates(&self) -> Vec<u32> {
            VECS.to_vec()
        }
        fn label(&self, vec: u32) -> String {
            format!("float{vec} lanes per work-item")
        }
        fn prepare(&self, vec: u32, seeds: &[f32]) -> Result<ClPeak> {
            let cl = self.cl;
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
            let kernel = cl.kernel(&prog, "peak", &args)?;
            // Work-groups of 64 (or fewer where the device allows fewer): left to the
            // runtime, PoCL may make one group of the whole range and run it on one core.
            let wg = (cl.info.limits.max_compute_invocations_per_workgroup as usize).clamp(1, 64);
            let global = [(items as usize).next_multiple_of(wg)];
            Ok(ClPeak {
                kernel,
                global,
                wg,
                out,
                _seed: seed,
            })
        }
        async fn dispatch(&self, p: &ClPeak, iters: u32) -> Result<f64> {
            self.cl.time(iters, &mut || {
                Ok(self
                    .cl
                    .dispatch(&p.kernel, &p.global, Some(&[p.wg]))?
                    .into())
            })
        }
        async fn read(&self, p: &ClPeak) -> Result<Vec<f32>> {
            self.cl.read(&p.out, p.out.len)
        }
        fn describe(&self, mut res: ProbeResult, vec: u32) -> ProbeResult {
            res.kernel = Some(
                serde_json::json!({"label": format!("opencl peak, float{vec} lanes"), "vec": vec}),
            );
            res
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measuring::probes::executor::mock;

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

    /// The chains on the host: every sum right, or the first `wrong` ones off by one.
    struct Kernels {
        configs: Vec<u32>,
        wrong: usize,
    }

    type Mock = mock::Device<Kernels>;

    impl PeakExecutor for Mock {
        type Config = u32;
        type Prepared = Vec<f32>;
        fn software(&self) -> bool {
            true
        }
        fn candidates(&self) -> Vec<u32> {
            self.configs.clone()
        }
        fn label(&self, cfg: u32) -> String {
            format!("mock {cfg}")
        }
        fn prepare(&self, _cfg: u32, seeds: &[f32]) -> Result<Vec<f32>> {
            self.clock.next.set(0);
            let sums = seeds.iter().map(|s| expected(*s));
            Ok(sums
                .enumerate()
                .map(|(i, x)| if i < self.wrong { x + 1.0 } else { x })
                .collect())
        }
        async fn dispatch(&self, _p: &Vec<f32>, iters: u32) -> Result<f64> {
            Ok(self.clock.batch(iters))
        }
        async fn read(&self, p: &Vec<f32>) -> Result<Vec<f32>> {
            Ok(p.clone())
        }
        fn describe(&self, res: ProbeResult, cfg: u32) -> ProbeResult {
            res.param("mock_config", cfg)
        }
    }

    fn results(m: &Mock) -> Vec<ProbeResult> {
        let mut out = Vec::new();
        pollster::block_on(run_on(m, &mut |r| out.push(r)));
        out
    }

    fn mock(configs: &[u32], per_iter_s: &[f64], wrong: usize) -> Mock {
        let configs = configs.to_vec();
        mock::Device::new(mock::plan(5, 8), per_iter_s, Kernels { configs, wrong })
    }

    #[test]
    fn known_times_give_the_gflops_and_the_warm_up_is_not_counted() {
        let m = mock(&[1], &[1.0, 0.004, 0.002, 0.001, 0.003, 0.008], 0);
        let r = results(&m);
        assert_eq!(r.len(), 1);
        let p = &r[0];
        assert_eq!(p.status, Status::Ok, "{:?}", p.reason);
        let flops = 2.0 * f64::from(1u32 << 14) * f64::from(CHAINS * UNROLL * TRIPS);
        let v = p.value.as_ref().unwrap();
        assert_eq!(v.n, 5);
        assert!((v.median - flops / 0.003 * 1e-9).abs() < 1e-9, "{v:?}");
        assert!((v.max - flops / 0.001 * 1e-9).abs() < 1e-9);
        assert!((v.min - flops / 0.008 * 1e-9).abs() < 1e-9);
        let t = p.timing.as_ref().unwrap();
        assert_eq!((t.warmup_runs, t.iters_per_sample), (1, 1));
        assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
        assert_eq!(m.clock.batches.borrow().len(), 6);
        assert!(p.autotune.is_empty(), "one candidate: no trials");
        assert_eq!(p.params["invocations"], 1 << 14);
    }

    #[test]
    fn a_wrong_sum_fails_with_no_figure() {
        let r = results(&mock(&[1], &[0.01], 1));
        let p = &r[0];
        assert_eq!(p.status, Status::Failed);
        assert!(p.value.is_none());
        let v = p.validation.as_ref().unwrap();
        assert_eq!(
            v.detail.as_deref(),
            Some("all 16384 invocations checked exactly: 1 wrong")
        );
        assert_eq!(
            p.reason.as_deref(),
            Some("validation failed: 0.006% of the invocations wrote a wrong sum")
        );
        // Every candidate wrong: each trial recorded invalid, no figure.
        let r = results(&mock(&[1, 2], &[0.01], 1));
        assert_eq!(r[0].status, Status::Failed);
        assert!(r[0].value.is_none() && r[0].validation.is_none());
        let valid: Vec<bool> = r[0].autotune.iter().map(|t| t["valid"] == true).collect();
        assert_eq!(valid, [false, false]);
    }

    #[test]
    fn the_unrolled_source_has_every_step() {
        let s = source();
        assert_eq!(s.matches("x7 = fma(x7, a, b);").count(), UNROLL as usize);
        assert!(!s.contains("//@"));
    }
}
