//! The probes: one file each. A probe takes a context (device, timer, plan, budget) and emits
//! one `ProbeResult` per figure; the driver saves the results file after each one.

pub mod latency;
pub mod matmul;
pub mod measure;
pub mod precision;
pub mod stream;
pub mod transfer;

use crate::gpu::{Gpu, Timer};
use crate::reference::Dims;
use crate::results::ProbeResult;
use measure::Plan;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    /// Tiled FP32 matrix multiply, autotuned per adapter and size (GFLOPS).
    Matmul,
    /// STREAM copy, scale, add, triad and a dot-product reduction (GB/s).
    Stream,
    /// Double precision: emulated double-float (df64, after an on-adapter self-test) and
    /// native f64 matmul (GFLOPS, with the error and effective bits).
    Double,
    /// Host-to-device and device-to-host copies (GB/s).
    Transfer,
    /// Dispatch round trip and per-dispatch cost in a batch (microseconds).
    Latency,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 5] = [
        ProbeKind::Matmul,
        ProbeKind::Double,
        ProbeKind::Stream,
        ProbeKind::Transfer,
        ProbeKind::Latency,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Matmul => "matmul",
            ProbeKind::Double => "double",
            ProbeKind::Stream => "stream",
            ProbeKind::Transfer => "transfer",
            ProbeKind::Latency => "latency",
        }
    }

    /// Share of the run's time budget this probe may use.
    fn budget_share(self) -> f64 {
        match self {
            ProbeKind::Matmul => 0.45,
            ProbeKind::Double => 0.2,
            ProbeKind::Stream => 0.2,
            ProbeKind::Transfer => 0.1,
            ProbeKind::Latency => 0.1,
        }
    }

    /// This probe's part of `total`, shared with the probes in `kinds` (itself included).
    pub fn budget(self, total: Duration, kinds: &[ProbeKind]) -> Duration {
        let sum: f64 = kinds.iter().map(|k| k.budget_share()).sum();
        total.mul_f64(self.budget_share() / sum.max(1e-9))
    }
}

/// Everything a probe needs.
pub struct Ctx<'a> {
    pub gpu: &'a Gpu,
    pub timer: &'a Timer<'a>,
    pub plan: Plan,
    pub quick: bool,
    /// Matrix sizes given with `--sizes` (else each probe picks its own).
    pub sizes: Option<Vec<Dims>>,
    /// When this probe should stop starting new work.
    pub deadline: Instant,
    /// Build proven-in-range kernels without runtime bounds checks.
    pub trusted: bool,
    pub host: &'a crate::host::HostInfo,
    pub progress: &'a dyn Fn(&str),
    pub faults: matmul::Faults,
    /// Array size for the stream and transfer probes (else chosen from the cache size).
    pub array_bytes: Option<u64>,
}

impl Ctx<'_> {
    /// True when the probe should start no more work: its time is spent, the device stopped
    /// working (lost, or a watchdog fired), or the user interrupted the run.
    pub fn halted(&self) -> bool {
        Instant::now() > self.deadline
            || self.gpu.halted().is_some()
            || crate::interrupt::requested()
    }

    /// Why `halted` is true, for the results of the work not started.
    pub fn halt_reason(&self) -> String {
        if let Some(h) = self.gpu.halted() {
            format!("not run: {h}")
        } else if crate::interrupt::requested() {
            "not run: interrupted".into()
        } else {
            "time budget spent".into()
        }
    }
}

pub fn run(kind: ProbeKind, ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    match kind {
        ProbeKind::Matmul => matmul::run(ctx, emit),
        ProbeKind::Double => precision::run(ctx, emit),
        ProbeKind::Stream => stream::run(ctx, emit),
        ProbeKind::Transfer => transfer::run(ctx, emit),
        ProbeKind::Latency => latency::run(ctx, emit),
    }
}
