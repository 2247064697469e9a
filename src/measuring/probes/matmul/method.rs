//! The FP32 matmul method, once for every executor: the sizes and where they stop, the
//! autotuner's trials, the chosen kernel's measured run, its check against the CPU and the
//! GFLOPS. `MatmulExecutor` is what an executor's kernels provide.

use super::*;
use crate::clock::Instant;
use crate::measuring::probes::RunCtx;
use crate::measuring::probes::executor::{self, Executor};
use std::time::Duration;

/// Where the wgpu and OpenCL methods differ: each difference one field, so that the method
/// is written once and each executor keeps what it did.
#[derive(Clone, Debug)]
pub struct Policy {
    /// The plan of one tuning trial.
    pub trial: Plan,
    /// A candidate whose warm-up run is 4x slower than the best so far is dropped.
    pub abandon_slow: bool,
    /// Once a candidate is valid, the candidates left after the tuning window (a third of
    /// the time left, at most 15 s quick or 60 s full) are not tried, nor any once the
    /// device stopped or the user interrupted (`MatmulExecutor::stopped`): each recorded
    /// as not tried. Without it every candidate is tried, until `Executor::keep_tuning`
    /// says stop (the rest unrecorded).
    pub time_boxed: bool,
    /// An invalid trial's note says "validation failed" (else it has none).
    pub note_invalid: bool,
    /// The measured result records its kernel's trial median (`tuning_trial_median`).
    pub trial_median: bool,
    /// Default sizes of a full run also stop where a size's projected time passes the
    /// deadline.
    pub projects_time: bool,
    /// Given sizes are checked against the device's limits too (else only default ones).
    pub limits_given_sizes: bool,
    /// Once the probe must stop, each size left is recorded skipped (else not recorded).
    pub records_halted: bool,
}

impl Policy {
    /// wgpu's: five samples a trial after two warm-up runs, hopeless candidates dropped,
    /// tuning time-boxed, invalid trials noted, the trial median recorded, default sizes
    /// stopped by their projected time.
    pub fn wgpu() -> Policy {
        Policy {
            trial: Plan {
                warmup: Duration::ZERO,
                min_warmup_runs: 2,
                target_sample: Duration::from_millis(5),
                samples: 5,
                max_iters: 64,
                abandon_above_s: None,
            },
            abandon_slow: true,
            time_boxed: true,
            note_invalid: true,
            trial_median: true,
            projects_time: true,
            limits_given_sizes: false,
            records_halted: false,
        }
    }

    /// OpenCL's: the common tuning trial, every candidate tried (a quick run behind its
    /// budget stops at the first valid one: `Executor::keep_tuning`), every size checked
    /// against the largest allocation, the sizes left after a halt recorded.
    pub fn opencl() -> Policy {
        Policy {
            trial: Plan::trial(16),
            abandon_slow: false,
            time_boxed: false,
            note_invalid: false,
            trial_median: false,
            projects_time: false,
            limits_given_sizes: true,
            records_halted: true,
        }
    }
}

/// What the matmul method asks of an executor: its candidate kernels, each set up over
/// padded inputs, dispatched and timed a batch at a time, and C read back.
#[allow(async_fn_in_trait)]
pub trait MatmulExecutor: Executor {
    /// One kernel configuration the autotuner tries.
    type Config: Clone + PartialEq;
    /// A configuration set up over its inputs, ready to dispatch.
    type Prepared;
    /// How this executor's method differs (see `Policy`).
    fn policy(&self) -> Policy;
    /// The configurations the device can run, the likelier first.
    fn candidates(&self) -> Vec<Self::Config>;
    /// A configuration as the trials record it.
    fn label(&self, cfg: &Self::Config) -> String;
    /// Why a product of size `d` is beyond the device (and so is every larger one), if it is.
    fn beyond_limits(&self, d: Dims) -> Option<String>;
    /// True once the device stopped working or the user interrupted.
    fn stopped(&self) -> bool {
        crate::interrupt::requested()
    }
    /// `d` padded to `cfg`'s tiles, or why `cfg` cannot run at `d`.
    fn padded(&self, cfg: &Self::Config, d: Dims) -> Result<Dims>;
    /// A and B (`p`, zeros outside `d`) uploaded, C poisoned with NaN, `cfg` built over them.
    fn prepare(
        &self,
        cfg: &Self::Config,
        d: Dims,
        p: Dims,
        a: &[f32],
        b: &[f32],
    ) -> Result<Self::Prepared>;
    /// Runs `iters` products as one batch; the seconds it took.
    async fn dispatch(&self, p: &Self::Prepared, iters: u32) -> Result<f64>;
    /// C (padded, row-major) read back.
    async fn read(&self, p: &Self::Prepared) -> Result<Vec<f32>>;
    /// The measured result's kernel description (and the executor's own notes on it).
    fn describe(&self, res: ProbeResult, cfg: &Self::Config, padded: Dims) -> ProbeResult;
}

/// One measured run of one configuration at one size.
#[derive(Clone, Debug)]
pub struct MatmulRun {
    pub dims: Dims,
    pub padded: Dims,
    pub timing: TimingInfo,
    pub gflops: Summary,
    pub check: MatmulCheck,
}

impl MatmulRun {
    pub fn valid(&self) -> bool {
        self.check.worst() <= F32_TOLERANCE
    }
}

/// The useful operations of a product of size `d`, never the padding's: 2*M*N*K.
pub fn flops(d: Dims) -> f64 {
    2.0 * d.m as f64 * d.n as f64 * d.k as f64
}

/// The GFLOPS of a product of size `d` timed as `timing`.
pub fn gflops(d: Dims, timing: &TimingInfo) -> Summary {
    let flops = flops(d);
    timing.figure(|t| flops / t * 1e-9)
}

/// Runs one configuration at one size: fresh random inputs, poisoned output, timed batches,
/// validation against the CPU.
pub async fn run_config<E: MatmulExecutor>(
    exec: &E,
    cfg: &E::Config,
    d: Dims,
    plan: &Plan,
) -> Result<MatmulRun> {
    let p = exec.padded(cfg, d)?;
    let mut rng = Rng::fresh();
    let (a, b) = random_inputs(d, p, &mut rng);
    let prepared = exec.prepare(cfg, d, p, &a, &b)?;
    let timing = executor::time(exec, plan, async |iters| {
        exec.dispatch(&prepared, iters).await
    })
    .await?;
    let c = exec.read(&prepared).await?;
    // Every matrix is the padded one, row-major, with its own leading dimension.
    let check = reference::check_matmul(
        d,
        View { data: &a, ld: p.k },
        View { data: &b, ld: p.n },
        View { data: &c, ld: p.n },
        &mut rng,
    );
    let gflops = gflops(d, &timing);
    Ok(MatmulRun {
        dims: d,
        padded: p,
        timing,
        gflops,
        check,
    })
}

/// A tuning trial as recorded in the results file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Trial {
    pub config: String,
    pub gflops_median: Option<f64>,
    #[serde(default)]
    pub gflops_max: Option<f64>,
    pub error: Option<f64>,
    pub valid: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Trial {
    /// A candidate that gave no figure (not tried, or its run failed), and why.
    fn without_figure(config: String, note: String) -> Trial {
        Trial {
            config,
            gflops_median: None,
            gflops_max: None,
            error: None,
            valid: false,
            note: Some(note),
        }
    }

    /// A candidate's run, valid or not (`note_invalid`: an invalid one says so), or why it
    /// failed.
    fn of(config: String, run: &Result<MatmulRun>, note_invalid: bool) -> Trial {
        match run {
            Ok(run) => {
                let valid = run.valid();
                Trial {
                    config,
                    gflops_median: Some(run.gflops.median),
                    gflops_max: Some(run.gflops.max),
                    error: Some(run.check.worst()),
                    valid,
                    note: (note_invalid && !valid).then(|| "validation failed".to_string()),
                }
            }
            Err(e) => Trial::without_figure(config, format!("{e:#}")),
        }
    }
}

/// Tries each candidate briefly at size `d` and returns the fastest valid one with the
/// trials; `until`: the end of the tuning window (`Policy::time_boxed`). Invalid or failing
/// configurations are recorded and never chosen.
pub async fn autotune<E: MatmulExecutor>(
    exec: &E,
    cands: &[E::Config],
    d: Dims,
    until: Instant,
) -> (Option<E::Config>, Vec<Trial>) {
    let policy = exec.policy();
    let mut plan = policy.trial.clone();
    let mut best: Option<(f64, E::Config)> = None;
    let mut trials = Vec::new();
    for (i, cfg) in cands.iter().enumerate() {
        if !exec.keep_tuning(best.is_some()) {
            break;
        }
        if policy.abandon_slow {
            plan.abandon_above_s = best.as_ref().map(|(g, _)| 4.0 * flops(d) / (g * 1e9));
        }
        if policy.time_boxed
            && i > 0
            && (best.is_some() && Instant::now() > until || exec.stopped())
        {
            let note = "not tried: time budget spent".to_string();
            trials.push(Trial::without_figure(exec.label(cfg), note));
            continue;
        }
        let run = run_config(exec, cfg, d, &plan).await;
        if run.is_err() {
            // The web reports a failed build later: let it surface here, with its trial.
            exec.settle().await;
        }
        let t = Trial::of(exec.label(cfg), &run, policy.note_invalid);
        // Ranked by the best sample: short trials on a busy machine are noisy, and the
        // fastest sample is the least disturbed one.
        if let (true, Some(g)) = (t.valid, t.gflops_max)
            && best.as_ref().is_none_or(|(b, _)| g > *b)
        {
            best = Some((g, cfg.clone()));
        }
        trials.push(t);
    }
    (best.map(|(_, c)| c), trials)
}

/// The candidates for the next size: the best three valid ones that came within half of the
/// best (all of them again where none was valid).
fn narrow<C: Clone>(cands: &mut Vec<C>, trials: &[Trial]) {
    let mut ranked: Vec<(f64, C)> = trials
        .iter()
        .zip(cands.iter())
        .filter(|(t, _)| t.valid)
        .filter_map(|(t, c)| t.gflops_max.map(|g| (g, c.clone())))
        .collect();
    ranked.sort_by(|x, y| y.0.total_cmp(&x.0));
    if let Some(&(top, _)) = ranked.first() {
        *cands = ranked
            .into_iter()
            .filter(|(g, _)| *g >= 0.5 * top)
            .take(3)
            .map(|(_, c)| c)
            .collect();
    }
}

/// The end of a time-boxed tuning window: a third of the time left, at most 15 s (quick)
/// or 60 s.
fn tuning_until(run: &RunCtx<'_>) -> Instant {
    let cap = Duration::from_secs(if run.quick { 15 } else { 60 });
    Instant::now() + (run.deadline.saturating_duration_since(Instant::now()) / 3).min(cap)
}

/// The validation record of an FP32 matmul.
fn validation(check: &MatmulCheck, m: usize) -> Validation {
    Validation::within(
        "relative_frobenius",
        check.worst(),
        F32_TOLERANCE,
        format!(
            "{} of {} rows checked exactly (rel. Frobenius {:.2e}); Freivalds check over all rows {:.2e}; {} non-finite elements",
            check.rows_checked, m, check.rel_frobenius, check.freivalds, check.non_finite
        ),
    )
}

/// One size: every candidate tuned (the next size gets the best few), the chosen one
/// measured with the run's plan and judged. The result, and the measured run's median
/// seconds per product where it completed.
async fn measure_size<E: MatmulExecutor>(
    exec: &E,
    cands: &mut Vec<E::Config>,
    d: Dims,
) -> (ProbeResult, Option<f64>) {
    let mut res = ProbeResult::sized(FigureKey::MatmulF32, d.m, d.n, d.k);
    exec.say(&format!("matmul {}x{}x{}: autotuning", d.m, d.n, d.k));
    let (chosen, trials) = autotune(exec, cands, d, tuning_until(exec.run_ctx())).await;
    // The chosen kernel's own trial median, shown beside the final figure: the tuner ranks
    // by each trial's best sample, which reads higher than a median.
    let trial_median = trials
        .iter()
        .zip(cands.iter())
        .find(|(_, c)| chosen.as_ref() == Some(*c))
        .and_then(|(t, _)| t.gflops_median);
    narrow(cands, &trials);
    res.autotune = trials
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect();
    let Some(cfg) = chosen else {
        return (res.no_valid_configuration(), None);
    };
    exec.say(&format!("matmul {}x{}x{}: measuring", d.m, d.n, d.k));
    let run = match run_config(exec, &cfg, d, &exec.run_ctx().plan()).await {
        Ok(run) => run,
        Err(e) => return (res.with_status(Status::Failed, format!("{e:#}")), None),
    };
    let secs = run.timing.time_per_iter_s.median;
    let mut res = exec.describe(res, &cfg, run.padded);
    let validation = validation(&run.check, d.m);
    res.timing = Some(run.timing);
    res = res.validated(validation, run.gflops, Validation::tolerance_exceeded);
    if let (true, Some(t)) = (exec.policy().trial_median, trial_median) {
        res = res.param("tuning_trial_median", t);
    }
    (res, Some(secs))
}

/// Why size number `si`, `d`, and the sizes after it are not measured, if so: beyond the
/// device's limits, or a projected time past the deadline. `last`: the last measured run's
/// median seconds per product and its M*N*K.
fn refused<E: MatmulExecutor>(
    exec: &E,
    (si, d): (usize, Dims),
    given: bool,
    last: Option<(f64, usize)>,
) -> Option<String> {
    let policy = exec.policy();
    if given && !policy.limits_given_sizes {
        return None;
    }
    if let Some(why) = exec.beyond_limits(d) {
        return Some(why);
    }
    if given || !policy.projects_time {
        return None;
    }
    let (secs, n) = last?;
    let run = exec.run_ctx();
    let scale = (d.m * d.n * d.k) as f64 / (n as f64).powi(3);
    let projected = secs * scale * (run.plan.samples as f64 + 6.0);
    // A quick run measures every default size, with less when it is behind.
    (si > 0 && !run.quick && Instant::now() + Duration::from_secs_f64(projected) > run.deadline)
        .then(|| format!("time budget: projected {projected:.0} s for this size"))
}

/// The sizes measured when `--sizes` is not given: 256, 512 (quick), on to 16384 (full, as
/// far as the limits and the budget allow).
fn default_sizes(quick: bool) -> Vec<Dims> {
    let max = if quick { 512 } else { 16384 };
    let mut v = Vec::new();
    let mut n = 256;
    while n <= max {
        v.push(Dims { m: n, n, k: n });
        n *= 2;
    }
    v
}

/// Runs the probe on `exec`: autotune and measure at each size, one result per size.
pub async fn run_on<E: MatmulExecutor>(exec: &E, emit: &mut dyn FnMut(ProbeResult)) {
    let run = exec.run_ctx();
    let given = run.sizes.is_some();
    let sizes = run
        .sizes
        .clone()
        .unwrap_or_else(|| default_sizes(run.quick));
    let records_halted = exec.policy().records_halted;
    let mut cands = exec.candidates();
    let mut last: Option<(f64, usize)> = None;
    for (si, d) in sizes.into_iter().enumerate() {
        let sized = || ProbeResult::sized(FigureKey::MatmulF32, d.m, d.n, d.k);
        if exec.halted() {
            if !records_halted {
                break;
            }
            emit(sized().with_status(Status::Skipped, exec.halt_reason()));
            continue;
        }
        if let Some(why) = refused(exec, (si, d), given, last) {
            emit(sized().with_status(Status::Skipped, why));
            break;
        }
        let (res, secs) = measure_size(exec, &mut cands, d).await;
        if let Some(secs) = secs {
            last = Some((secs, d.m * d.n * d.k));
        }
        emit(res);
    }
}
