//! The measurement policy shared by every probe: warm-up that is never counted, a batch
//! sized so one sample lasts well above timer resolution, then a fixed number of samples.

use crate::clock::Instant;
pub use crate::model::TimingInfo;
use crate::stats::Summary;
use anyhow::Result;
use std::time::Duration;

/// How long to warm up, how long one sample should last, how many samples to take.
#[derive(Clone, Debug)]
pub struct Plan {
    pub warmup: Duration,
    pub min_warmup_runs: u32,
    pub target_sample: Duration,
    pub samples: usize,
    pub max_iters: u32,
    /// Give up (with an error) when a warm-up run after the first takes longer than this:
    /// the autotuner uses it to drop hopeless candidates early.
    pub abandon_above_s: Option<f64>,
}

impl Plan {
    pub fn full() -> Plan {
        Plan {
            warmup: Duration::from_millis(300),
            min_warmup_runs: 2,
            target_sample: Duration::from_millis(25),
            samples: 15,
            max_iters: 1 << 16,
            abandon_above_s: None,
        }
    }

    /// The least a figure is measured with: what a quick run falls back to when it is
    /// behind its time budget (one uncounted warm-up run, five samples of at least 2 ms).
    pub fn reduced() -> Plan {
        Plan {
            warmup: Duration::ZERO,
            min_warmup_runs: 1,
            // A browser quantizes its clocks to 100 us: 10 ms keeps that under 1%.
            target_sample: Duration::from_millis(if cfg!(target_arch = "wasm32") { 10 } else { 2 }),
            samples: 5,
            max_iters: 1 << 12,
            abandon_above_s: None,
        }
    }

    /// A tuning trial: no warm-up beyond one run, three samples of at least 5 ms, at most
    /// `max_iters` iterations a sample (what the autotuners compare candidates with).
    pub fn trial(max_iters: u32) -> Plan {
        Plan {
            warmup: Duration::ZERO,
            min_warmup_runs: 1,
            target_sample: Duration::from_millis(5),
            samples: 3,
            max_iters,
            abandon_above_s: None,
        }
    }

    pub fn quick() -> Plan {
        Plan {
            warmup: Duration::from_millis(100),
            min_warmup_runs: 2,
            target_sample: Duration::from_millis(10),
            samples: 10,
            max_iters: 1 << 14,
            abandon_above_s: None,
        }
    }
}

/// Runs the plan. `run(iters)` performs `iters` iterations as one timed sample and returns
/// the seconds it took.
pub async fn measure(
    plan: &Plan,
    method: &dyn Fn() -> crate::measuring::gpu::TimingMethod,
    mut run: impl AsyncFnMut(u32) -> Result<f64>,
) -> Result<TimingInfo> {
    // Every run first checks for Ctrl-C (or the page's Stop), so an interrupted bench stops
    // within one sample.
    let mut run = async |iters: u32| -> Result<f64> {
        if crate::interrupt::requested() {
            anyhow::bail!("interrupted");
        }
        run(iters).await
    };
    let start = Instant::now();
    let mut warmup_runs = 0u32;
    // Warm-up: the first run includes shader compilation on some drivers (lavapipe compiles
    // at the first dispatch), and clocks need time to rise.
    let mut last = 0.0;
    while warmup_runs < plan.min_warmup_runs || start.elapsed() < plan.warmup {
        last = run(1).await?;
        warmup_runs += 1;
        if let Some(limit) = plan.abandon_above_s
            && warmup_runs > 1
            && last > limit
        {
            anyhow::bail!("abandoned: one run took {last:.3} s, over the {limit:.3} s limit");
        }
        if last >= plan.target_sample.as_secs_f64() && warmup_runs >= plan.min_warmup_runs {
            break;
        }
    }
    // Batch calibration: grow the iteration count until one sample lasts the target time.
    let target = plan.target_sample.as_secs_f64();
    let mut iters = 1u32;
    let mut t = last;
    while t < target && iters < plan.max_iters {
        let per_iter = (t / f64::from(iters)).max(1e-7);
        let want = ((target * 1.2) / per_iter).ceil();
        let next = want.clamp(f64::from(iters) * 2.0, f64::from(iters) * 64.0);
        iters = (next as u32).min(plan.max_iters);
        t = run(iters).await?;
        warmup_runs += 1;
    }
    let warmup_s = start.elapsed().as_secs_f64();
    let method_used = method();
    let mut per_iter = Vec::with_capacity(plan.samples);
    for _ in 0..plan.samples {
        per_iter.push(run(iters).await? / f64::from(iters));
    }
    let time_per_iter_s = Summary::of(&per_iter)
        .ok_or_else(|| anyhow::anyhow!("timing produced no finite samples"))?;
    let mut note = None;
    if method() != method_used {
        note = Some("timing method changed during sampling".to_string());
    }
    Ok(TimingInfo {
        method: method(),
        iters_per_sample: iters,
        warmup_runs,
        warmup_s,
        time_per_iter_s,
        note,
        samples_s: per_iter,
    })
}
