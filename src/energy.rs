//! Power, clocks and temperature beside a run: what the telemetry sampler read (its
//! sources, and why the others were not read) and each measured window's summary (mean
//! power, energy, clocks, the limits it ran at). Part of the data model (the results file
//! carries it): it imports nothing above it. The sampler that fills it lives in
//! `measuring::telemetry`.

use serde::{Deserialize, Serialize};

/// The sampler's record for a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryInfo {
    /// Seconds between samples.
    pub period_s: f64,
    /// Every source tried, read or not (with the reason).
    pub sources: Vec<SourceNote>,
    /// Samples taken and samples lost (a counter that went backwards, a file that vanished
    /// or read garbage, a reading past the physical bound), with the first reasons.
    pub samples: usize,
    pub gaps: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gap_reasons: Vec<String>,
    /// The highest watt a reading may show; past it a reading is a gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<PowerBound>,
}

/// The physical bound on a power reading: 1.5x the GPU's datasheet board power where the
/// catalog knows it (transients above the rating are short and averaged by the drivers),
/// else the largest board or socket there is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerBound {
    pub max_w: f64,
    /// The datasheet board power it comes from, W per adapter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datasheet_w: Option<f64>,
}

impl PowerBound {
    /// The margin over the datasheet board power a reading may reach.
    pub const MARGIN: f64 = 1.5;

    /// In words: `above 1050 W (1.5x the datasheet's 700 W) a reading is a gap`.
    pub fn line(&self) -> String {
        match self.datasheet_w {
            Some(d) => format!(
                "above {:.0} W ({}x the datasheet's {d:.0} W) a reading is a gap",
                self.max_w,
                Self::MARGIN
            ),
            None => format!(
                "above {:.0} W a reading is a gap (no datasheet board power known)",
                self.max_w
            ),
        }
    }
}

impl TelemetryInfo {
    /// The source the windows are measured by, if one was read.
    pub fn read(&self) -> Option<&SourceNote> {
        self.sources.iter().find(|s| s.read)
    }

    /// One line: what was read, or every source tried and why none was.
    pub fn line(&self) -> String {
        match self.read() {
            Some(s) => format!(
                "power and clocks from {} ({}; {}), every {} ms{}",
                s.source,
                s.device,
                s.counters.join(", "),
                (self.period_s * 1e3).round(),
                self.bound
                    .map_or(String::new(), |b| format!("; {}", b.line()))
            ),
            None if self.sources.is_empty() => "no power or clock source tried".into(),
            None => format!(
                "no power or clock counter read: {}",
                self.sources
                    .iter()
                    .map(|s| format!(
                        "{} ({})",
                        s.source,
                        s.reason.as_deref().unwrap_or("not read")
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }
    }
}

/// One source the sampler tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceNote {
    /// `amdgpu hwmon`, `xe hwmon`, `i915 hwmon`, `RAPL`, `amd_energy`, `NVML`.
    pub source: String,
    /// What it reads: a sysfs path, a PCI bus id.
    pub device: String,
    pub read: bool,
    /// Why not read (no device, no permission, no counter), or a caveat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The counters it reads (`power`, `energy`, `graphics clock`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<String>,
}

/// Minimum, median and maximum of a series.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(v: Vec<f64>) -> Option<Spread> {
        let median = crate::stats::median(v.iter().copied())?;
        let finite = v.iter().copied().filter(|x| x.is_finite());
        Some(Spread {
            min: finite.clone().fold(f64::INFINITY, f64::min),
            median,
            max: finite.fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// A measured window's power, energy and clocks (a probe's figure, a burn window).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerWindow {
    /// The source, as in [`SourceNote::source`].
    pub source: String,
    pub seconds: f64,
    /// Samples inside the window, and those lost.
    pub samples: usize,
    #[serde(default)]
    pub gaps: usize,
    /// Mean power, W: the energy counter's rise over its time where there is one, else
    /// the power readings' mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_w: Option<f64>,
    /// Mean power x the window's length, J.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// How the mean was taken: `energy counter` or `power readings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The figure per watt (GFLOPS/W, GB/s per W), where the window measured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_watt: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphics_mhz: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mhz: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<Spread>,
    /// Share of time the GPU was busy, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilisation_pct: Option<Spread>,
    /// Fan speed in revolutions a minute (hwmon) or percent of its maximum (NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_rpm: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_pct: Option<Spread>,
    /// The power limit the device reported, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
    /// The device's highest graphics clock (its top DPM state or boost), MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_graphics_mhz: Option<f64>,
    /// Why the device was held back while measuring, as its driver reported or as the
    /// readings show (`power cap`, `thermal`), each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle: Vec<String>,
}

impl PowerWindow {
    /// Whether the window ran at a power or thermal limit.
    pub fn capped(&self) -> bool {
        self.throttle
            .iter()
            .any(|t| t.contains("power") || t.contains("thermal"))
    }

    /// Whether the graphics clock held near the device's highest (its median at 90% or
    /// more of the top state), where both are known.
    pub fn full_clocks(&self) -> Option<bool> {
        let top = self.max_graphics_mhz?;
        let c = self.graphics_mhz?;
        Some(c.median >= 0.9 * top)
    }

    /// A short line: `412 W, 1.2 kJ, 1,980 MHz (power cap)`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(w) = self.mean_w {
            parts.push(format!("{w:.0} W"));
        }
        if let Some(j) = self.energy_j {
            parts.push(if j >= 1e3 {
                format!("{:.1} kJ", j / 1e3)
            } else {
                format!("{j:.0} J")
            });
        }
        if let Some(c) = self.graphics_mhz {
            parts.push(format!("{:.0} MHz", c.median));
        }
        if let Some(t) = self.temperature_c {
            parts.push(format!("{:.0} C", t.max));
        }
        if let Some(u) = self.utilisation_pct {
            parts.push(format!("{:.0}% busy", u.median));
        }
        let mut s = if parts.is_empty() {
            format!("no reading in {:.1} s", self.seconds)
        } else {
            parts.join(", ")
        };
        if !self.throttle.is_empty() {
            s.push_str(&format!(" ({})", self.throttle.join(", ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_is_min_median_max_and_skips_garbage() {
        let s = Spread::of(vec![3.0, f64::NAN, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((s.min, s.median, s.max), (1.0, 2.5, 10.0));
        assert!(Spread::of(vec![f64::NAN]).is_none());
    }

    #[test]
    fn the_line_says_which_sources_were_tried_when_none_was_read() {
        let t = TelemetryInfo {
            period_s: 0.1,
            sources: vec![SourceNote {
                source: "RAPL".into(),
                device: "/sys/class/powercap".into(),
                read: false,
                reason: Some("no such directory".into()),
                counters: vec![],
            }],
            ..Default::default()
        };
        assert_eq!(
            t.line(),
            "no power or clock counter read: RAPL (no such directory)"
        );
    }
}
