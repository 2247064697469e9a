//! The acceptance test's record (`gpuvalue burn`): what ran, each window's throughput and
//! exact checks, the VRAM test, the expectation it was held to, and the verdict with its
//! reasons in words. Part of the data model (the results file carries it): it imports
//! nothing above it. The judging rules live here, beside the record they judge, so a record
//! read back from a file is judged the same way.

use serde::{Deserialize, Serialize};

/// One GPU's verdict; the worst of several GPUs' is the run's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Every check passed and the throughput was steady and as expected.
    Pass,
    /// Exact checks passed, but the throughput was unsteady or below what is paid for.
    Warn,
    /// A miscompare, a non-finite result, a VRAM error, or throughput far below expectation.
    Fail,
    /// The test could not run as asked (no device, an allocation refused, a device lost).
    Error,
}

impl Verdict {
    /// The process exit status: PASS 0, WARN 3, FAIL 4, ERROR 5 (1 and 2 are the tool's own
    /// failures and usage errors).
    pub fn exit_code(self) -> u8 {
        self.status().code()
    }

    /// The verdict's exit status.
    pub fn status(self) -> crate::exit::Status {
        use crate::exit::Status;
        match self {
            Verdict::Pass => Status::Success,
            Verdict::Warn => Status::Warn,
            Verdict::Fail => Status::Fail,
            Verdict::Error => Status::Error,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
            Verdict::Error => "ERROR",
        }
    }
}

/// The rules a run is judged by, recorded with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Worst window / best window below this warns (3DMark's stress-test rule: 0.97).
    pub worst_to_best: f64,
    /// A drop from the first to the last window larger than this share warns.
    pub first_to_last_drop: f64,
    /// A coefficient of variation of the windows above this warns.
    pub cv: f64,
    /// Steady rate below this share of the calibrated expectation warns ...
    pub expectation_warn: f64,
    /// ... and below this share fails (DCGM's references are 0.75x).
    pub expectation_fail: f64,
    /// On a node with several GPUs, one this share behind its best sibling warns.
    pub sibling_gap: f64,
    /// Why these numbers (hardware, or the looser ones for a software adapter).
    pub basis: String,
}

impl Thresholds {
    pub fn hardware() -> Thresholds {
        Thresholds {
            worst_to_best: 0.97,
            first_to_last_drop: 0.05,
            cv: 0.02,
            expectation_warn: 0.90,
            expectation_fail: 0.75,
            sibling_gap: 0.10,
            basis: "hardware GPU: 3DMark's 97% stability rule, DCGM's 0.75x reference, \
                    gpu-fryer's 10% sibling rule"
                .into(),
        }
    }

    /// A software adapter shares the CPU with the host, and a VM's CPU with its neighbours:
    /// three quiet `--quick` runs on lavapipe on a 2-vCPU VM gave worst/best windows of 73%,
    /// 87% and 92% and CVs of 13%, 5% and 3%. So 70% worst/best, a 25% first-to-last drop and
    /// 15% CV: a quiet run passes, and a drop of a third (last/first 67%) still warns.
    pub fn software() -> Thresholds {
        Thresholds {
            worst_to_best: 0.70,
            first_to_last_drop: 0.25,
            cv: 0.15,
            basis: "software adapter (the CPU): windows vary with the host's load, so 70% \
                    worst/best, a 25% first-to-last drop and 15% CV (a drop of a third still warns)"
                .into(),
            ..Thresholds::hardware()
        }
    }
}

/// One measured window of the sustained load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub index: usize,
    /// Seconds since the load started (warm-up included) when this window began.
    pub start_s: f64,
    pub seconds: f64,
    pub iterations: u64,
    /// Products per second x FLOP per product, over the window's wall time.
    pub gflops: f64,
    /// Elements that differed from the CPU's reference, over every iteration (device check).
    pub miscompares: u64,
    /// Elements that were NaN or infinite.
    pub non_finite: u64,
    /// Elements of the window's last product that differed when read back and compared on
    /// the host (the device check itself checked).
    pub host_mismatches: u64,
    /// True for the window after the idle gap.
    #[serde(default)]
    pub after_idle: bool,
    /// Power, clocks and limits over the window, where a counter was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::energy::PowerWindow>,
}

impl Window {
    /// Window `i` of a second at `gflops`, clean, no power read (the tests' fixture).
    #[cfg(test)]
    pub(crate) fn for_test(i: usize, gflops: f64) -> Window {
        Window {
            index: i,
            start_s: i as f64,
            seconds: 1.0,
            iterations: 10,
            gflops,
            miscompares: 0,
            non_finite: 0,
            host_mismatches: 0,
            after_idle: false,
            power: None,
        }
    }
}

/// The sustained load: what ran and its windows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    /// The kernel (the autotuner's pick at this size) and the executor.
    pub kernel: String,
    pub size: usize,
    /// How the inputs make every result exact.
    pub inputs: String,
    pub warmup_s: f64,
    pub idle_gap_s: f64,
    pub windows: Vec<Window>,
}

impl LoadRecord {
    pub fn miscompares(&self) -> u64 {
        self.windows.iter().map(|w| w.miscompares).sum()
    }
    pub fn non_finite(&self) -> u64 {
        self.windows.iter().map(|w| w.non_finite).sum()
    }
    pub fn host_mismatches(&self) -> u64 {
        self.windows.iter().map(|w| w.host_mismatches).sum()
    }
    pub fn iterations(&self) -> u64 {
        self.windows.iter().map(|w| w.iterations).sum()
    }
    pub fn seconds(&self) -> f64 {
        self.windows.iter().map(|w| w.seconds).sum()
    }
}

/// The windows' throughput, summarised.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    /// Median of the windows' rates (GFLOPS).
    pub steady_gflops: f64,
    pub best_gflops: f64,
    pub worst_gflops: f64,
    pub worst_to_best: f64,
    pub first_gflops: f64,
    pub last_gflops: f64,
    /// Last window / first window.
    pub last_to_first: f64,
    /// Least-squares slope of the rate over the windows, per window, as a share of the mean.
    pub trend_per_window: f64,
    /// Coefficient of variation of the windows' rates.
    pub cv: f64,
}

impl Stability {
    /// None with fewer than two windows.
    pub fn of(windows: &[Window]) -> Option<Stability> {
        if windows.len() < 2 {
            return None;
        }
        let r: Vec<f64> = windows.iter().map(|w| w.gflops).collect();
        let n = r.len() as f64;
        let mean = r.iter().sum::<f64>() / n;
        let best = r.iter().copied().fold(f64::MIN, f64::max);
        let worst = r.iter().copied().fold(f64::MAX, f64::min);
        let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let xm = (n - 1.0) / 2.0;
        let sxx: f64 = (0..r.len()).map(|i| (i as f64 - xm).powi(2)).sum();
        let sxy: f64 = r
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64 - xm) * (y - mean))
            .sum();
        let mut sorted = r.clone();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        } else {
            sorted[mid]
        };
        let pos = |x: f64| if mean > 0.0 { x / mean } else { 0.0 };
        Some(Stability {
            steady_gflops: median,
            best_gflops: best,
            worst_gflops: worst,
            worst_to_best: if best > 0.0 { worst / best } else { 0.0 },
            first_gflops: r[0],
            last_gflops: r[r.len() - 1],
            last_to_first: if r[0] > 0.0 {
                r[r.len() - 1] / r[0]
            } else {
                0.0
            },
            trend_per_window: pos(sxy / sxx),
            cv: pos(var.sqrt()),
        })
    }
}

/// The VRAM test: address-derived patterns in windows, shuffled read order, one window kept
/// for retention.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VramRecord {
    pub bytes_tested: u64,
    /// Share of the device's memory tested, where the memory size is known.
    pub share_of_memory: Option<f64>,
    /// How the size was chosen, in words.
    pub basis: String,
    pub window_bytes: u64,
    pub windows: usize,
    pub passes: u32,
    /// Words that read back other than written, over every pass and window.
    pub errors: u64,
    /// Byte addresses (offsets into the tested range) of the lowest and highest bad word.
    pub first_bad: Option<u64>,
    pub last_bad: Option<u64>,
    /// Flipped bits by bit position (0 = least significant) over every bad word.
    pub bit_flips: Vec<u64>,
    /// Errors in the window written once and re-read every pass.
    pub retention_errors: u64,
    pub seconds: f64,
    /// Bytes written and read per second over the whole test.
    pub gbps: f64,
}

impl VramRecord {
    /// "14.4 GiB (90% of device memory)"-style size text.
    pub fn describe(&self) -> String {
        let size = if self.bytes_tested >= 1 << 30 {
            format!("{:.1} GiB", self.bytes_tested as f64 / (1u64 << 30) as f64)
        } else {
            format!("{} MiB", self.bytes_tested >> 20)
        };
        match self.share_of_memory {
            Some(s) => format!("{size} ({:.0}% of device memory)", s * 100.0),
            None => size,
        }
    }
}

/// What the buyer pays for: the GPU's datasheet FP32 rate and the calibrated expectation of
/// a matmul on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    pub gpu: String,
    pub datasheet_gflops: f64,
    pub expected_gflops: f64,
    /// Where the expectation's factor comes from.
    pub basis: String,
    /// The datasheet board power per adapter, W: the telemetry's bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_w: Option<f64>,
}

/// One GPU's acceptance test, as the results file and `--format json` carry it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BurnRecord {
    /// `quick`, `standard` or `custom` (a --duration).
    pub mode: String,
    pub planned_s: f64,
    pub elapsed_s: f64,
    /// False when the run was interrupted: the verdict is for what ran.
    pub complete: bool,
    pub thresholds: Thresholds,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<Stability>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vram: Option<VramRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectation: Option<Expectation>,
    /// What stopped the test, where something did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A fault injected for testing the tool, where one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected: Option<String>,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// What the power and clock sampler read beside the load, or why nothing was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::energy::TelemetryInfo>,
    /// What the test covered, in one line ("FP32 matmul 10 min, VRAM 90% x 3 passes").
    pub covered: String,
}

impl BurnRecord {
    /// Judges the record by its thresholds: sets `stability`, `verdict` and `reasons`.
    pub fn judge(&mut self) {
        self.stability = self.load.as_ref().and_then(|l| Stability::of(&l.windows));
        let (v, reasons) = judge(self);
        self.verdict = v;
        self.reasons = reasons;
    }
}

/// Why the last window ran slower than the first, from their power and clocks: a power
/// or thermal cap (the driver said so, or power sat at its limit or the temperature at
/// its slowdown point), or a fault (slow at full clocks with no limit reached); without
/// counters the two look alike.
pub fn slowdown_cause(windows: &[Window]) -> String {
    let last = windows.iter().rev().find_map(|w| w.power.as_ref());
    let Some(p) = last.filter(|p| p.mean_w.is_some() || p.graphics_mhz.is_some()) else {
        return "without power and clock counters a cap and a fault look alike".into();
    };
    let clocks = p.graphics_mhz.map_or(String::new(), |c| {
        format!(
            ", graphics clock {:.0} MHz{}",
            c.median,
            p.max_graphics_mhz
                .map_or(String::new(), |m| format!(" of {m:.0}"))
        )
    });
    let watts = p.mean_w.map_or(String::new(), |w| format!("{w:.0} W"));
    if p.capped() {
        format!(
            "a cap, not a fault: the last window ran at {} ({watts}{clocks})",
            p.throttle.join(", ")
        )
    } else if p.full_clocks() == Some(true) {
        format!("a fault, not a cap: slow at full clocks with no limit reached ({watts}{clocks})")
    } else {
        format!(
            "no power or thermal limit reached ({watts}{clocks}): a clock or load problem, not a cap"
        )
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The verdict and its reasons, worst first.
fn judge(r: &BurnRecord) -> (Verdict, Vec<String>) {
    let mut found: Vec<(Verdict, String)> = Vec::new();
    let t = &r.thresholds;
    if let Some(e) = &r.error {
        found.push((Verdict::Error, e.clone()));
    }
    if let Some(l) = &r.load {
        load_reasons(l, &mut found);
    }
    if let Some(v) = &r.vram {
        vram_reasons(v, &mut found);
    }
    if let Some(s) = &r.stability {
        let windows = r.load.as_ref().map_or(&[][..], |l| &l.windows[..]);
        stability_reasons(s, t, windows, &mut found);
    } else if r.error.is_none() {
        found.push((
            Verdict::Error,
            "fewer than two windows measured: no stability judgement".into(),
        ));
    }
    if let (Some(s), Some(e)) = (&r.stability, &r.expectation) {
        let share = s.steady_gflops / e.expected_gflops;
        let line = format!(
            "steady {:.0} GFLOPS is {} of the {:.0} GFLOPS expected of {} ({} of its {:.0} GFLOPS datasheet FP32)",
            s.steady_gflops,
            pct(share),
            e.expected_gflops,
            e.gpu,
            pct(s.steady_gflops / e.datasheet_gflops),
            e.datasheet_gflops
        );
        if share < t.expectation_fail {
            found.push((
                Verdict::Fail,
                format!("{line}: below {}", pct(t.expectation_fail)),
            ));
        } else if share < t.expectation_warn {
            found.push((
                Verdict::Warn,
                format!("{line}: below {}", pct(t.expectation_warn)),
            ));
        }
    }
    if !r.complete {
        found.push((
            Verdict::Pass,
            "interrupted: the verdict covers only what ran".into(),
        ));
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    let verdict = found.iter().map(|(v, _)| *v).max().unwrap_or(Verdict::Pass);
    (verdict, found.into_iter().map(|(_, s)| s).collect())
}

fn load_reasons(l: &LoadRecord, found: &mut Vec<(Verdict, String)>) {
    let bad: Vec<usize> = l
        .windows
        .iter()
        .filter(|w| w.miscompares + w.non_finite + w.host_mismatches > 0)
        .map(|w| w.index + 1)
        .collect();
    if bad.is_empty() {
        return;
    }
    let first = bad[0];
    let last = bad[bad.len() - 1];
    let windows = if first == last {
        format!("window {first}")
    } else {
        format!("windows {first}..{last}")
    };
    found.push((
        Verdict::Fail,
        format!(
            "{} miscompares and {} non-finite elements in the FP32 matmul over {} iterations ({windows}); {} more on the host's read-back",
            l.miscompares(),
            l.non_finite(),
            l.iterations(),
            l.host_mismatches()
        ),
    ));
}

fn vram_reasons(v: &VramRecord, found: &mut Vec<(Verdict, String)>) {
    if v.errors == 0 {
        return;
    }
    let bits: Vec<String> = v
        .bit_flips
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(b, n)| format!("bit {b} x{n}"))
        .collect();
    let range = match (v.first_bad, v.last_bad) {
        (Some(a), Some(b)) => format!(" at byte offsets {a:#x}..{b:#x}"),
        _ => String::new(),
    };
    found.push((
        Verdict::Fail,
        format!(
            "{} VRAM errors{range} ({} in the retention window); flipped: {}",
            v.errors,
            v.retention_errors,
            bits.join(", ")
        ),
    ));
}

fn stability_reasons(
    s: &Stability,
    t: &Thresholds,
    windows: &[Window],
    found: &mut Vec<(Verdict, String)>,
) {
    if s.last_to_first < 1.0 - t.first_to_last_drop {
        found.push((
            Verdict::Warn,
            format!(
                "sustained throughput drop of {} from the first to the last window ({:.1} -> {:.1} GFLOPS; {})",
                pct(1.0 - s.last_to_first),
                s.first_gflops,
                s.last_gflops,
                slowdown_cause(windows)
            ),
        ));
    }
    if s.worst_to_best < t.worst_to_best {
        found.push((
            Verdict::Warn,
            format!(
                "worst window at {} of the best ({:.1} of {:.1} GFLOPS; the rule is {})",
                pct(s.worst_to_best),
                s.worst_gflops,
                s.best_gflops,
                pct(t.worst_to_best)
            ),
        ));
    }
    if s.cv > t.cv {
        found.push((
            Verdict::Warn,
            format!(
                "windows vary by {} (coefficient of variation; the rule is {})",
                pct(s.cv),
                pct(t.cv)
            ),
        ));
    }
}

/// On a node with several GPUs: a warning for each GPU more than `sibling_gap` behind the
/// best sibling's steady rate, naming it (its PCI bus id where known).
pub fn sibling_reasons(runs: &mut [(String, BurnRecord)]) {
    let best = runs
        .iter()
        .filter_map(|(_, r)| r.stability.as_ref().map(|s| s.steady_gflops))
        .fold(0.0f64, f64::max);
    if best <= 0.0 || runs.len() < 2 {
        return;
    }
    for (name, r) in runs.iter_mut() {
        let Some(s) = &r.stability else { continue };
        let share = s.steady_gflops / best;
        if share < 1.0 - r.thresholds.sibling_gap {
            r.reasons.push(format!(
                "{name} is {} behind its best sibling ({:.0} of {:.0} GFLOPS)",
                pct(1.0 - share),
                s.steady_gflops,
                best
            ));
            r.verdict = r.verdict.max(Verdict::Warn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(i: usize, gflops: f64) -> Window {
        Window::for_test(i, gflops)
    }

    fn record(rates: &[f64], t: Thresholds) -> BurnRecord {
        BurnRecord {
            mode: "quick".into(),
            planned_s: 60.0,
            elapsed_s: 60.0,
            complete: true,
            thresholds: t,
            load: Some(LoadRecord {
                kernel: "k".into(),
                size: 512,
                inputs: "ints".into(),
                warmup_s: 10.0,
                idle_gap_s: 5.0,
                windows: rates
                    .iter()
                    .enumerate()
                    .map(|(i, r)| window(i, *r))
                    .collect(),
            }),
            stability: None,
            vram: Some(VramRecord {
                bit_flips: vec![0; 32],
                ..Default::default()
            }),
            expectation: None,
            error: None,
            injected: None,
            verdict: Verdict::Error,
            reasons: vec![],
            telemetry: None,
            covered: "c".into(),
        }
    }

    fn judged(mut r: BurnRecord) -> BurnRecord {
        r.judge();
        r
    }

    #[test]
    fn steady_windows_pass_and_a_drop_of_a_third_warns_naming_the_drop() {
        let r = judged(record(
            &[100.0, 99.0, 100.5, 99.5, 100.0],
            Thresholds::hardware(),
        ));
        assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
        let r = judged(record(
            &[100.0, 100.0, 67.0, 67.0, 66.0],
            Thresholds::software(),
        ));
        assert_eq!(r.verdict, Verdict::Warn);
        assert!(
            r.reasons[0].contains("drop of 34% from the first to the last window"),
            "{:?}",
            r.reasons
        );
        assert!(!r.reasons.iter().any(|x| x.contains("throttl")));
        // 4% worst/best spread: fine on a software adapter, not on a GPU (3DMark's 97%).
        let rates = [100.0, 96.0, 99.0, 98.0, 100.0];
        assert_eq!(
            judged(record(&rates, Thresholds::software())).verdict,
            Verdict::Pass
        );
        assert_eq!(
            judged(record(&rates, Thresholds::hardware())).verdict,
            Verdict::Warn
        );
    }

    #[test]
    fn a_drop_is_called_a_cap_at_the_power_limit_and_a_fault_at_full_clocks() {
        use crate::energy::{PowerWindow, Spread};
        let at = |w: f64, mhz: f64, throttle: &[&str]| PowerWindow {
            source: "amdgpu hwmon".into(),
            seconds: 1.0,
            samples: 10,
            mean_w: Some(w),
            graphics_mhz: Some(Spread {
                min: mhz,
                median: mhz,
                max: mhz,
            }),
            max_graphics_mhz: Some(2100.0),
            power_limit_w: Some(400.0),
            throttle: throttle.iter().map(|t| t.to_string()).collect(),
            ..PowerWindow::default()
        };
        let rates = [100.0, 100.0, 67.0, 67.0, 66.0];
        // An injected cap: clocks fell with power at its limit.
        let mut r = record(&rates, Thresholds::hardware());
        for (i, w) in r.load.as_mut().unwrap().windows.iter_mut().enumerate() {
            w.power = Some(if i < 2 {
                at(390.0, 2100.0, &[])
            } else {
                at(399.0, 1400.0, &["power cap (399 of 400 W)"])
            });
        }
        let r = judged(r);
        assert_eq!(r.verdict, Verdict::Warn);
        let drop = r.reasons.iter().find(|x| x.contains("drop of")).unwrap();
        assert!(
            drop.contains("a cap, not a fault") && drop.contains("power cap"),
            "{drop}"
        );
        // Slow at full clocks, no limit reached: a fault.
        let mut r = record(&rates, Thresholds::hardware());
        for w in &mut r.load.as_mut().unwrap().windows {
            w.power = Some(at(250.0, 2080.0, &[]));
        }
        let r = judged(r);
        let drop = r.reasons.iter().find(|x| x.contains("drop of")).unwrap();
        assert!(drop.contains("a fault, not a cap"), "{drop}");
        // No counters: said so.
        let r = judged(record(&rates, Thresholds::hardware()));
        assert!(r.reasons.iter().any(|x| x.contains("look alike")));
    }

    #[test]
    fn miscompares_vram_errors_and_errors_outrank_warnings() {
        let mut r = record(&[100.0, 50.0, 100.0], Thresholds::hardware());
        r.load.as_mut().unwrap().windows[1].miscompares = 1;
        let r = judged(r);
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(
            r.reasons[0].contains("1 miscompares") && r.reasons[0].contains("window 2"),
            "{:?}",
            r.reasons
        );
        let mut r = record(&[100.0, 100.0], Thresholds::hardware());
        let v = r.vram.as_mut().unwrap();
        v.errors = 2;
        v.first_bad = Some(0x40);
        v.last_bad = Some(0x1000);
        v.bit_flips[7] = 2;
        let r = judged(r);
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.reasons[0].contains("0x40..0x1000") && r.reasons[0].contains("bit 7 x2"));
        let mut r = record(&[100.0, 100.0], Thresholds::hardware());
        r.error = Some("allocation failed".into());
        assert_eq!(judged(r).verdict, Verdict::Error);
        // No windows at all is never a pass.
        let r = judged(record(&[], Thresholds::hardware()));
        assert_eq!(r.verdict, Verdict::Error);
    }

    #[test]
    fn the_expectation_warns_below_90_and_fails_below_75_percent() {
        let with = |rate: f64| {
            let mut r = record(&[rate, rate, rate], Thresholds::hardware());
            r.expectation = Some(Expectation {
                gpu: "X".into(),
                datasheet_gflops: 200.0,
                expected_gflops: 100.0,
                basis: "b".into(),
                board_w: None,
            });
            judged(r)
        };
        assert_eq!(with(95.0).verdict, Verdict::Pass);
        assert_eq!(with(85.0).verdict, Verdict::Warn);
        let f = with(70.0);
        assert_eq!(f.verdict, Verdict::Fail);
        assert!(
            f.reasons[0].contains("70% of the 100 GFLOPS expected of X"),
            "{:?}",
            f.reasons
        );
    }

    #[test]
    fn exit_codes_are_distinct_and_pass_is_zero() {
        let codes: Vec<u8> = [Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Error]
            .map(Verdict::exit_code)
            .to_vec();
        assert_eq!(codes, vec![0, 3, 4, 5]);
        assert!(Verdict::Error > Verdict::Fail && Verdict::Fail > Verdict::Warn);
    }

    #[test]
    fn a_sibling_more_than_10_percent_behind_warns_by_name() {
        let a = judged(record(&[100.0, 100.0, 100.0], Thresholds::hardware()));
        let b = judged(record(&[85.0, 85.0, 85.0], Thresholds::hardware()));
        let mut runs = vec![
            ("gpu0 (0000:01:00.0)".to_string(), a),
            ("gpu1 (0000:02:00.0)".to_string(), b),
        ];
        sibling_reasons(&mut runs);
        assert_eq!(runs[0].1.verdict, Verdict::Pass);
        assert_eq!(runs[1].1.verdict, Verdict::Warn);
        assert!(
            runs[1]
                .1
                .reasons
                .iter()
                .any(|r| r.contains("gpu1 (0000:02:00.0) is 15% behind"))
        );
    }

    #[test]
    fn stability_measures_trend_and_spread() {
        let s = Stability::of(&[window(0, 100.0), window(1, 90.0), window(2, 80.0)]).unwrap();
        assert!((s.trend_per_window + 0.1111).abs() < 1e-3, "{s:?}");
        assert!((s.worst_to_best - 0.8).abs() < 1e-12);
        assert!((s.last_to_first - 0.8).abs() < 1e-12);
        assert_eq!(s.steady_gflops, 90.0);
        assert!(Stability::of(&[window(0, 1.0)]).is_none());
    }
}
