//! The telemetry sampler: a thread beside a bench or burn run that reads the device's
//! power, energy counter, clocks and temperature every period, never in the timed path,
//! and summarises any window of the run ([`Sampler::window`]). A reading that fails (a
//! file that vanished or reads garbage, a counter that went backwards, a watt past the
//! physical bound) is a gap with its reason; it never stops the measurement.
//!
//! Sources: NVML for an NVIDIA GPU ([`nvml`]), the amdgpu, xe and i915 hwmon files of the
//! adapter's PCI device (each matched by PCI bus id, never by name), and for a CPU adapter
//! (lavapipe, PoCL) the powercap RAPL package zones and `amd_energy` ([`sysfs`]).

pub mod amdsmi;
pub mod nvml;
pub mod scripted;
pub mod sysfs;

use crate::energy::{PowerBound, PowerWindow, SourceNote, Spread, TelemetryInfo};
use crate::model::AdapterSummary;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between samples: a tenth of a second, finer than the drivers' power averaging
/// (amdgpu and NVML update about every 20-100 ms) and cheap (a few file reads).
pub const PERIOD: Duration = Duration::from_millis(100);

/// The file-system root the live sampler reads `/sys` under: `/`, or the folder
/// `GPUVALUE_SYSFS_ROOT` names (a recorded tree: how a test runs bench and burn end to end
/// over counters this machine lacks; the results file names the paths read).
pub fn live_root() -> std::path::PathBuf {
    std::env::var_os("GPUVALUE_SYSFS_ROOT")
        .filter(|v| !v.is_empty())
        .map_or_else(|| std::path::PathBuf::from("/"), std::path::PathBuf::from)
}

/// The highest board power any GPU reports (B300, MI355X: 1,400 W), with room: a reading
/// above it is garbage.
pub const GPU_MAX_W: f64 = 2000.0;
/// The same for a CPU socket's package (the largest server parts: 500 W), for all sockets.
pub const CPU_MAX_W: f64 = 4000.0;

/// An energy counter in microjoules, unwrapped: a counter that wraps at a known range
/// continues; one that goes backwards otherwise is a gap (and restarts from there).
#[derive(Clone, Debug, Default)]
pub struct Counter {
    last: Option<u64>,
    total_uj: u64,
    range: Option<u64>,
}

impl Counter {
    pub fn wrapping_at(range: Option<u64>) -> Counter {
        Counter {
            range,
            ..Counter::default()
        }
    }

    /// The energy since the first reading, J.
    pub fn advance(&mut self, raw: u64) -> Result<f64, String> {
        let Some(last) = self.last.replace(raw) else {
            return Ok(0.0);
        };
        if raw >= last {
            self.total_uj += raw - last;
        } else {
            match self.range.filter(|r| *r > last) {
                Some(r) => self.total_uj += r - last + raw,
                None => {
                    return Err(format!(
                        "energy counter went backwards ({last} -> {raw} uJ)"
                    ));
                }
            }
        }
        Ok(self.total_uj as f64 / 1e6)
    }
}

/// One reading of a source; a field it does not have is None.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    pub power_w: Option<f64>,
    /// The energy counter, unwrapped, J since the source was opened.
    pub energy_j: Option<f64>,
    pub graphics_mhz: Option<f64>,
    pub memory_mhz: Option<f64>,
    pub temperature_c: Option<f64>,
    pub power_limit_w: Option<f64>,
    /// The temperature at which the device slows down, C.
    pub thermal_limit_c: Option<f64>,
    pub max_graphics_mhz: Option<f64>,
    /// Share of time the GPU was busy, percent.
    pub utilisation_pct: Option<f64>,
    /// Fan speed: revolutions a minute (hwmon) or percent of its maximum (NVML).
    pub fan_rpm: Option<f64>,
    pub fan_pct: Option<f64>,
    /// Throttle reasons the driver reports now.
    pub throttle: Vec<String>,
}

impl Reading {
    /// The counters this reading has, by name, for a source note.
    pub fn counters(&self) -> Vec<String> {
        [
            ("power", self.power_w.is_some()),
            ("energy", self.energy_j.is_some()),
            ("power limit", self.power_limit_w.is_some()),
            ("graphics clock", self.graphics_mhz.is_some()),
            ("memory clock", self.memory_mhz.is_some()),
            ("temperature", self.temperature_c.is_some()),
            ("utilisation", self.utilisation_pct.is_some()),
            ("fan", self.fan_pct.is_some() || self.fan_rpm.is_some()),
        ]
        .into_iter()
        .filter(|(_, has)| *has)
        .map(|(n, _)| n.to_string())
        .collect()
    }
}

/// A power and clock source.
pub trait Source: Send {
    /// What it is (`amdgpu hwmon`, `RAPL`), as [`SourceNote::source`].
    fn name(&self) -> String;
    /// One reading; Err: why none could be taken now (a gap).
    fn read(&mut self) -> Result<Reading, String>;
    /// The highest power it can physically report, W: readings past it are gaps.
    fn max_w(&self) -> f64;
}

/// A reading at a time, or the gap's reason.
#[derive(Clone, Debug)]
pub struct Sample {
    pub t: f64,
    pub reading: Result<Reading, String>,
}

/// The running sampler; [`Sampler::finish`] stops it.
pub struct Sampler {
    start: Instant,
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<Sample>>>,
    handle: Option<JoinHandle<()>>,
    info: TelemetryInfo,
    name: String,
    max_w: f64,
}

impl Sampler {
    /// The sources for `adapter` under the file-system root `root` (`/`, or a recorded
    /// tree in tests), sampled every `period` on a thread of its own.
    /// `board_w`: the GPU's datasheet board power (the caller knows the catalog), which
    /// bounds a hardware adapter's readings at [`PowerBound::MARGIN`] times it.
    pub fn for_adapter(
        adapter: &AdapterSummary,
        root: &Path,
        period: Duration,
        board_w: Option<f64>,
    ) -> Sampler {
        let (source, notes) = sysfs::discover(adapter, root);
        let mut s = Sampler::start(source, notes, period);
        if let Some(w) = board_w.filter(|w| *w > 0.0 && !adapter.software) {
            s.max_w = s.max_w.min(PowerBound::MARGIN * w);
            s.info.bound = Some(PowerBound {
                max_w: s.max_w,
                datasheet_w: Some(w),
            });
        }
        s
    }

    /// Samples `source` (None: nothing readable; the notes say why) every `period`.
    pub fn start(
        source: Option<Box<dyn Source>>,
        notes: Vec<SourceNote>,
        period: Duration,
    ) -> Sampler {
        let start = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (name, max_w) = source
            .as_ref()
            .map_or((String::new(), 0.0), |s| (s.name(), s.max_w()));
        let info = TelemetryInfo {
            period_s: period.as_secs_f64(),
            sources: notes,
            bound: source.as_ref().map(|_| PowerBound {
                max_w,
                datasheet_w: None,
            }),
            ..Default::default()
        };
        let handle = source.map(|mut src| {
            let (stop, samples) = (stop.clone(), samples.clone());
            std::thread::Builder::new()
                .name("gpuvalue-telemetry".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let reading = src.read();
                        let t = start.elapsed().as_secs_f64();
                        if let Ok(mut v) = samples.lock() {
                            v.push(Sample { t, reading });
                        }
                        sleep_unless_stopped(&stop, period);
                    }
                })
                .ok()
        });
        Sampler {
            start,
            stop,
            samples,
            handle: handle.flatten(),
            info,
            name,
            max_w,
        }
    }

    /// Seconds since the sampler started: a window's ends.
    pub fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Whether a source is being read.
    pub fn reading(&self) -> bool {
        self.handle.is_some()
    }

    /// The window from `from` to `to` (seconds since the start); None without a source.
    pub fn window(&self, from: f64, to: f64) -> Option<PowerWindow> {
        if !self.reading() {
            return None;
        }
        let v = self.samples.lock().ok()?;
        let inside: Vec<&Sample> = v.iter().filter(|s| s.t >= from && s.t <= to).collect();
        Some(summarise(&self.name, self.max_w, &inside, to - from))
    }

    /// The last good reading, if any (for a live metrics endpoint).
    pub fn latest(&self) -> Option<Reading> {
        let v = self.samples.lock().ok()?;
        v.iter()
            .rev()
            .find_map(|s| s.reading.as_ref().ok().cloned())
    }

    /// Stops the thread; the record of what was read.
    pub fn finish(&mut self) -> TelemetryInfo {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let mut info = std::mem::take(&mut self.info);
        if let Ok(v) = self.samples.lock() {
            info.samples = v.len();
            let bad: Vec<&String> = v.iter().filter_map(|s| s.reading.as_ref().err()).collect();
            info.gaps = bad.len();
            for r in bad {
                if info.gap_reasons.len() < 5 && !info.gap_reasons.contains(r) {
                    info.gap_reasons.push(r.clone());
                }
            }
        }
        info
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn sleep_unless_stopped(stop: &AtomicBool, period: Duration) {
    let until = Instant::now() + period;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

/// A window's summary from its samples: the energy counter's rise over its time where
/// two good readings hold one (each interval's power within 0..`max_w`, else a gap), else
/// the power readings' mean; clocks and temperatures as spreads; the limits it ran at.
pub fn summarise(source: &str, max_w: f64, samples: &[&Sample], seconds: f64) -> PowerWindow {
    let good: Vec<(f64, &Reading)> = samples
        .iter()
        .filter_map(|s| s.reading.as_ref().ok().map(|r| (s.t, r)))
        .collect();
    let mut gaps = samples.len() - good.len();
    // Energy: the sum of the intervals whose power is physical.
    let counted: Vec<(f64, f64)> = good
        .iter()
        .filter_map(|(t, r)| r.energy_j.map(|e| (*t, e)))
        .collect();
    let (mut joules, mut span) = (0.0, 0.0);
    for w in counted.windows(2) {
        let (dt, de) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
        if dt > 0.0 && de >= 0.0 && de / dt <= max_w {
            joules += de;
            span += dt;
        } else {
            gaps += 1;
        }
    }
    let powers: Vec<f64> = good
        .iter()
        .filter_map(|(_, r)| r.power_w)
        .filter(|w| (0.0..=max_w).contains(w))
        .collect();
    gaps += good.iter().filter(|(_, r)| r.power_w.is_some()).count() - powers.len();
    let (mean_w, method) = if span > 0.0 {
        (Some(joules / span), Some("energy counter"))
    } else if !powers.is_empty() {
        let n = powers.len() as f64;
        (Some(powers.iter().sum::<f64>() / n), Some("power readings"))
    } else {
        (None, None)
    };
    let series = |f: fn(&Reading) -> Option<f64>| {
        Spread::of(good.iter().filter_map(|(_, r)| f(r)).collect())
    };
    let last = |f: fn(&Reading) -> Option<f64>| good.iter().rev().find_map(|(_, r)| f(r));
    let mut w = PowerWindow {
        source: source.to_string(),
        seconds,
        samples: samples.len(),
        gaps,
        mean_w,
        energy_j: mean_w.map(|p| p * seconds),
        method: method.map(String::from),
        per_watt: None,
        graphics_mhz: series(|r| r.graphics_mhz),
        memory_mhz: series(|r| r.memory_mhz),
        temperature_c: series(|r| r.temperature_c),
        utilisation_pct: series(|r| r.utilisation_pct),
        fan_rpm: series(|r| r.fan_rpm),
        fan_pct: series(|r| r.fan_pct),
        power_limit_w: last(|r| r.power_limit_w),
        max_graphics_mhz: last(|r| r.max_graphics_mhz),
        throttle: Vec::new(),
    };
    for (_, r) in &good {
        for t in &r.throttle {
            if !w.throttle.contains(t) {
                w.throttle.push(t.clone());
            }
        }
    }
    let thermal = last(|r| r.thermal_limit_c);
    w.throttle.extend(limits_reached(&w, thermal));
    w
}

/// The limits the readings show the window ran at, where the driver did not say: the
/// mean power at 95% or more of the power limit, the hottest reading within 2 C of the
/// slowdown temperature.
fn limits_reached(w: &PowerWindow, thermal_limit_c: Option<f64>) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(p), Some(cap)) = (w.mean_w, w.power_limit_w)
        && cap > 0.0
        && p >= 0.95 * cap
        && !w.throttle.iter().any(|t| t.contains("power"))
    {
        out.push(format!("power cap ({p:.0} of {cap:.0} W)"));
    }
    if let (Some(t), Some(limit)) = (w.temperature_c, thermal_limit_c)
        && t.max >= limit - 2.0
        && !w.throttle.iter().any(|x| x.contains("thermal"))
    {
        out.push(format!("thermal ({:.0} C, slows at {limit:.0} C)", t.max));
    }
    out
}

#[cfg(test)]
mod tests;
