//! The double-precision method, once for every executor: the self-test's verdict, the
//! candidates tuned briefly, the best measured on random inputs and checked on adversarial
//! ones, the figures judged. `DoubleKernels` is what an executor's kernels provide.

use super::*;
use crate::measuring::probes::executor::Executor;
use crate::model::TimingMethod;

/// What the double-precision method asks of an executor: the self-test kernel, the matmul
/// kernels over f64 inputs (converted to the kind's format on upload), dispatched and timed
/// a batch at a time, and the product read back.
#[allow(async_fn_in_trait)]
pub trait DoubleKernels {
    /// One kernel candidate (rows per work-item, product, tile).
    type Layout: Copy;
    /// One kernel built over its inputs, ready to dispatch.
    type Prepared;
    /// How `dispatch` times a batch.
    fn method(&self) -> TimingMethod;
    /// The self-test kernel run once over `inputs`: its 14 result vec4s.
    async fn self_test_outputs(&self, inputs: &SelfTestInputs) -> Result<Vec<[f32; 4]>>;
    /// Why `kind` cannot run on this device, if it cannot.
    fn lacks(&self, kind: Kind) -> Option<String>;
    /// The candidates for `kind`, in the order tried (df64: with the product `use_fma`
    /// says).
    fn layouts(&self, kind: Kind, use_fma: bool) -> Vec<Self::Layout>;
    /// A candidate as the results file names it.
    fn label(&self, kind: Kind, l: Self::Layout) -> String;
    /// The measured result's kernel description.
    fn describe(&self, kind: Kind, l: Self::Layout) -> serde_json::Value;
    /// `d` padded to the candidate's blocks, or why the device cannot run it at `d`.
    fn padded(&self, kind: Kind, l: Self::Layout, d: Dims) -> Result<Dims>;
    /// A and B (`p`, f64) uploaded in the kind's format, C poisoned, the kernel built.
    fn prepare(
        &self,
        kind: Kind,
        l: Self::Layout,
        p: Dims,
        a: &[f64],
        b: &[f64],
    ) -> Result<Self::Prepared>;
    /// Runs `iters` products as one batch; the seconds it took.
    async fn dispatch(&self, p: &Self::Prepared, iters: u32) -> Result<f64>;
    /// C (padded to `p`) read back as f64.
    async fn read(&self, p: &Self::Prepared) -> Result<Vec<f64>>;
}

/// The inputs as the device is given them (df64 pairs, f16), which the reference
/// multiplies.
fn exact_inputs(kind: Kind, a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let as_given = |v: &[f64]| -> Vec<f64> {
        match kind {
            Kind::Df64 => v
                .iter()
                .map(|&x| {
                    let (h, l) = to_df(x);
                    from_df(h, l)
                })
                .collect(),
            Kind::F16 => v.iter().map(|&x| half::f16::from_f64(x).to_f64()).collect(),
            Kind::F64 => v.to_vec(),
        }
    };
    (as_given(a), as_given(b))
}

/// The self-test on `k`'s device, judged against exact host arithmetic.
pub async fn self_test_on<K: DoubleKernels>(k: &K) -> Result<SelfTest> {
    let inputs = SelfTestInputs::new();
    let out = k.self_test_outputs(&inputs).await?;
    Ok(judge_self_test(&inputs, &out))
}

/// One double-precision matmul on `k`: fresh inputs, poisoned output, timed batches under
/// `plan`, checked against compensated f64 on the CPU.
pub async fn run_matmul_on<K: DoubleKernels>(
    k: &K,
    (kind, l): (Kind, K::Layout),
    d: Dims,
    inputs: Inputs,
    plan: &Plan,
) -> Result<PrecisionRun> {
    let p = k.padded(kind, l, d)?;
    let (a, b) = matmul_inputs(d, p, inputs);
    let exact = exact_inputs(kind, &a, &b);
    let prepared = k.prepare(kind, l, p, &a, &b)?;
    let timing = measure::measure(plan, &|| k.method(), async |iters| {
        k.dispatch(&prepared, iters).await
    })
    .await?;
    let c = k.read(&prepared).await?;
    let (rel_error, rows_checked) = check_product(d, p, &c, &exact);
    let gflops = crate::measuring::probes::matmul::gflops(d, &timing);
    Ok(PrecisionRun {
        timing,
        gflops,
        rel_error,
        rows_checked,
    })
}

/// Short trials of each candidate on random inputs, recorded in `res.autotune`: the fastest
/// within `tol`. A quick run behind its budget stops at the first valid one.
async fn tune<R: Executor, K: DoubleKernels>(
    run: &R,
    k: &K,
    (kind, d, tol): (Kind, Dims, f64),
    layouts: &[K::Layout],
    res: &mut ProbeResult,
) -> Option<K::Layout> {
    let plan = measure::Plan::trial(16);
    let mut best: Option<(f64, K::Layout)> = None;
    for &l in layouts {
        if best.is_some() && run.run_ctx().shrink() {
            break;
        }
        match run_matmul_on(k, (kind, l), d, Inputs::Random, &plan).await {
            Ok(r) => {
                let valid = r.rel_error <= tol;
                res.autotune.push(serde_json::json!({
                    "config": k.label(kind, l),
                    "gflops_median": r.gflops.median,
                    "error": r.rel_error,
                    "valid": valid,
                }));
                if valid && best.is_none_or(|(g, _)| r.gflops.median > g) {
                    best = Some((r.gflops.median, l));
                }
            }
            Err(e) => res.autotune.push(serde_json::json!({
                "config": k.label(kind, l), "valid": false, "note": format!("{e:#}"),
            })),
        }
    }
    best.map(|(_, l)| l)
}

/// Measures one size: tunes the candidates briefly, measures the best on random inputs,
/// then checks accuracy on adversarial inputs too.
async fn measure_size<R: Executor, K: DoubleKernels>(
    run: &R,
    k: &K,
    (kind, use_fma): (Kind, bool),
    d: Dims,
    self_test: Option<&SelfTest>,
) -> ProbeResult {
    let mut res = result_for(kind, d);
    if let Some(st) = self_test {
        res = res.param("self_test", st);
    }
    let tol = tolerance(kind);
    let layouts = k.layouts(kind, use_fma);
    let Some(l) = tune(run, k, (kind, d, tol), &layouts, &mut res).await else {
        return res.no_valid_configuration();
    };
    let plan = run.run_ctx().plan();
    let main = run_matmul_on(k, (kind, l), d, Inputs::Random, &plan).await;
    // Adversarial exponents (2^-24..2^24) are outside f16's range: f16 gets random inputs twice.
    let adv_inputs = if kind == Kind::F16 {
        Inputs::Random
    } else {
        Inputs::Adversarial
    };
    let adv = run_matmul_on(k, (kind, l), d, adv_inputs, &measure::Plan::trial(16)).await;
    match (main, adv) {
        (Ok(m), Ok(a)) => {
            res.kernel = Some(k.describe(kind, l));
            judge(res, tol, m, a)
        }
        (Err(e), _) | (_, Err(e)) => res.with_status(Status::Failed, format!("{e:#}")),
    }
}

/// Runs the probe: df64 at each size after the self-test, then f64 and f16 where the
/// device has them.
pub async fn run_on<R: Executor, K: DoubleKernels>(
    run: &R,
    k: &K,
    emit: &mut dyn FnMut(ProbeResult),
) {
    let sizes: Vec<Dims> = run
        .run_ctx()
        .sizes
        .clone()
        .unwrap_or_else(|| default_sizes(run.run_ctx().quick));
    run.say("df64 self-test");
    let st = self_test_on(k).await;
    for &d in &sizes {
        if run.halted() {
            emit(result_for(Kind::Df64, d).with_status(Status::Skipped, run.halt_reason()));
            continue;
        }
        run.say(&format!("matmul df64 {}x{}x{}", d.m, d.n, d.k));
        match usable(&st, d) {
            Err(failed) => emit(*failed),
            Ok(s) => emit(measure_size(run, k, (Kind::Df64, s.fma_fused), d, Some(s)).await),
        }
    }
    for kind in [Kind::F64, Kind::F16] {
        for &d in &sizes {
            if let Some(why) = k.lacks(kind) {
                emit(result_for(kind, d).with_status(Status::Unsupported, why));
                continue;
            }
            if run.halted() {
                emit(result_for(kind, d).with_status(Status::Skipped, run.halt_reason()));
                continue;
            }
            run.say(&format!("matmul {kind:?} {}x{}x{}", d.m, d.n, d.k));
            emit(measure_size(run, k, (kind, false), d, None).await);
        }
    }
}
