//! What a probe asks of whatever runs its kernels. A probe's method (tuning, measuring,
//! validation, figures) is written once over a probe-specific executor trait (e.g.
//! `stream::StreamExecutor`) that extends `Executor`; wgpu (`Ctx`), OpenCL (`ClCtx`) and the
//! unit tests' mocks implement it. An executor compiles its kernels, holds its buffers,
//! dispatches and times one batch, reads back; it never chooses a plan, summarises times or
//! checks a result.

use super::measure::{self, Plan, TimingInfo};
use super::{Ctx, Halts, RunCtx};
use crate::clock::Instant;
use crate::model::TimingMethod;
use anyhow::Result;

/// What every executor provides, whatever the probe.
#[allow(async_fn_in_trait)]
pub trait Executor: Halts {
    /// The run's plan, budget, sizes and progress line.
    fn run_ctx(&self) -> &RunCtx<'_>;
    /// How `dispatch` times a batch (GPU timestamps, profiling events or the wall clock).
    fn method(&self) -> TimingMethod;
    /// After a failed tuning trial: lets a build error the device reports late surface
    /// there, with that trial (the web's wgpu), rather than in the next one.
    async fn settle(&self) {}
    /// Whether tuning goes on to the next candidate, given whether a valid one was found
    /// (OpenCL stops at the first valid one once a quick run is behind its budget; wgpu
    /// narrows its candidates before tuning instead).
    fn keep_tuning(&self, _found: bool) -> bool {
        true
    }
    /// The seconds `iters` runs of `once` take on the host's clock: what the host waits
    /// for (a round trip, a copy), whatever the device's timer. The mock scripts them.
    async fn wall_clock(
        &self,
        iters: u32,
        mut once: impl AsyncFnMut() -> Result<()>,
    ) -> Result<f64> {
        let t0 = Instant::now();
        for _ in 0..iters {
            once().await?;
        }
        Ok(t0.elapsed().as_secs_f64())
    }
}

/// Runs `plan` (warm-up, batch sizing, samples) over `batch(iters)`, the seconds one batch of
/// `iters` dispatches took on `exec`.
pub async fn time<E: Executor + ?Sized>(
    exec: &E,
    plan: &Plan,
    mut batch: impl AsyncFnMut(u32) -> Result<f64>,
) -> Result<TimingInfo> {
    measure::measure(plan, &|| exec.method(), async |iters| batch(iters).await).await
}

/// Runs `plan` over batches of `once` timed on the wall clock (`Executor::wall_clock`).
pub async fn time_wall<E: Executor + ?Sized>(
    exec: &E,
    plan: &Plan,
    mut once: impl AsyncFnMut() -> Result<()>,
) -> Result<TimingInfo> {
    let wall = || TimingMethod::WallClock;
    measure::measure(plan, &wall, async |iters| {
        exec.wall_clock(iters, &mut once).await
    })
    .await
}

impl Executor for Ctx<'_> {
    fn run_ctx(&self) -> &RunCtx<'_> {
        &self.run
    }
    fn method(&self) -> TimingMethod {
        self.timer.method()
    }
    async fn settle(&self) {
        let _ = self.gpu.settle().await;
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Executor for super::ClCtx<'_> {
    fn run_ctx(&self) -> &RunCtx<'_> {
        &self.run
    }
    fn method(&self) -> TimingMethod {
        self.cl.method()
    }
    fn keep_tuning(&self, found: bool) -> bool {
        !(found && self.run.shrink())
    }
}

/// A mock executor's clock and context for the probes' unit tests: no device, scripted
/// batch times.
#[cfg(test)]
pub mod mock {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::time::Duration;

    fn quiet(_: &str) {}

    /// A run context with `plan`, a quick run far from its deadline.
    pub fn run_ctx(plan: Plan) -> RunCtx<'static> {
        static HOST: std::sync::OnceLock<crate::host::HostInfo> = std::sync::OnceLock::new();
        RunCtx {
            plan,
            quick: false,
            sizes: None,
            deadline: crate::clock::Instant::now() + Duration::from_secs(3600),
            trusted: false,
            host: HOST.get_or_init(|| crate::host::HostInfo {
                hostname: "mock".into(),
                os: String::new(),
                kernel: String::new(),
                cpu_model: String::new(),
                cpu_threads: 1,
                cpu_cores: None,
                ram_bytes: 0,
            }),
            progress: &quiet,
            array_bytes: None,
            reduced: Default::default(),
        }
    }

    /// A plan with no timed warm-up: one warm-up run, then `samples` samples, batches of at
    /// most `max_iters`, each sample at least 1 ms.
    pub fn plan(samples: usize, max_iters: u32) -> Plan {
        Plan {
            warmup: Duration::ZERO,
            min_warmup_runs: 1,
            target_sample: Duration::from_millis(1),
            samples,
            max_iters,
            abandon_above_s: None,
        }
    }

    /// A mock device: a run context, a scripted clock and what it was told to say, around
    /// `S`, what one probe's mock knows of its kernels. It is the `Halts` and `Executor`
    /// every probe's mock shares; a test implements its probe's executor trait for
    /// `Device<S>` and reads `S`'s fields through it.
    pub struct Device<S> {
        pub run: RunCtx<'static>,
        pub clock: Clock,
        pub said: RefCell<Vec<String>>,
        pub state: S,
    }

    impl<S> Device<S> {
        /// A device with `plan`, the batch times `per_iter_s` and `state`.
        pub fn new(plan: Plan, per_iter_s: &[f64], state: S) -> Device<S> {
            Device {
                run: run_ctx(plan),
                clock: Clock::new(per_iter_s),
                said: RefCell::default(),
                state,
            }
        }
    }

    impl<S> std::ops::Deref for Device<S> {
        type Target = S;
        fn deref(&self) -> &S {
            &self.state
        }
    }

    impl<S> super::super::Halts for Device<S> {
        fn halted(&self) -> bool {
            false
        }
        fn halt_reason(&self) -> String {
            String::new()
        }
        fn say(&self, what: &str) {
            self.said.borrow_mut().push(what.to_string());
        }
    }

    impl<S> Executor for Device<S> {
        fn run_ctx(&self) -> &RunCtx<'_> {
            &self.run
        }
        fn method(&self) -> TimingMethod {
            TimingMethod::WallClock
        }
        /// Runs `once` `iters` times; the batch lasts what the script says.
        async fn wall_clock(
            &self,
            iters: u32,
            mut once: impl AsyncFnMut() -> Result<()>,
        ) -> Result<f64> {
            for _ in 0..iters {
                once().await?;
            }
            Ok(self.clock.batch(iters))
        }
    }

    /// Asserts that `p` failed its check, with no figure, saying `detail` and `reason`.
    pub fn assert_failed(p: &crate::results::ProbeResult, detail: &str, reason: &str) {
        use crate::results::Status;
        assert_eq!(p.status, Status::Failed, "{}: {:?}", p.name, p.reason);
        assert!(p.value.is_none(), "{}: no figure", p.name);
        let v = p.validation.as_ref().expect("the check is recorded");
        assert!(!v.passed && v.error > v.tolerance, "{}: {v:?}", p.name);
        assert_eq!(v.detail.as_deref(), Some(detail), "{}", p.name);
        assert_eq!(p.reason.as_deref(), Some(reason), "{}", p.name);
    }

    /// Scripted batch times: the seconds a batch of `iters` dispatches takes is the next
    /// per-dispatch time of the script (the last repeats) times `iters`; every batch is
    /// recorded as its iteration count.
    #[derive(Default)]
    pub struct Clock {
        pub per_iter_s: RefCell<Vec<f64>>,
        pub next: Cell<usize>,
        pub batches: RefCell<Vec<u32>>,
    }

    impl Clock {
        pub fn new(per_iter_s: &[f64]) -> Clock {
            Clock {
                per_iter_s: RefCell::new(per_iter_s.to_vec()),
                ..Clock::default()
            }
        }

        pub fn batch(&self, iters: u32) -> f64 {
            let script = self.per_iter_s.borrow();
            let i = self.next.get().min(script.len() - 1);
            self.next.set(self.next.get() + 1);
            self.batches.borrow_mut().push(iters);
            script[i] * f64::from(iters)
        }
    }
}
