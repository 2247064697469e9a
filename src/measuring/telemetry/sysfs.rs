//! Power and clock sources read from Linux's sysfs (and, for NVIDIA, [`super::nvml`]), under a root directory (`/`, or a
//! recorded tree in tests):
//! - a GPU's hwmon under its PCI device (`/sys/bus/pci/devices/<bus id>/hwmon/hwmon*`),
//!   driver `amdgpu` (`power1_average` or `power1_input`, `power1_cap`, `temp1_input`,
//!   `temp1_crit`, `freq1_input` / `freq2_input`, and `pp_dpm_sclk` for the top clock),
//!   `xe` or `i915` (`energy1_input`, `power1_max`);
//! - for a CPU adapter, the powercap RAPL package zones
//!   (`/sys/class/powercap/intel-rapl:N/energy_uj`, wrapping at `max_energy_range_uj`;
//!   AMD CPUs have them too), else the `amd_energy` hwmon's socket counters; the cores'
//!   clocks from cpufreq.

use super::{CPU_MAX_W, Counter, GPU_MAX_W, Reading, Source};
use crate::energy::SourceNote;
use crate::model::AdapterSummary;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// A number read from a sysfs file; Err says which file and what went wrong.
pub fn read_num(path: &Path) -> Result<f64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => format!("{} vanished", path.display()),
        ErrorKind::PermissionDenied => format!("no permission to read {}", path.display()),
        _ => format!("{}: {e}", path.display()),
    })?;
    let t = text.trim();
    t.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| {
            format!(
                "{} is not a number ({:?})",
                path.display(),
                crate::text::prefix(t, 40)
            )
        })
}

fn read_counter(path: &Path, c: &mut Counter) -> Result<f64, String> {
    let v = read_num(path)?;
    if v < 0.0 || v > u64::MAX as f64 {
        return Err(format!("{} is out of range ({v})", path.display()));
    }
    c.advance(v as u64)
}

/// A GPU's hwmon (amdgpu, xe, i915).
pub struct GpuHwmon {
    driver: String,
    hwmon: PathBuf,
    energy: Option<Counter>,
    /// The top graphics clock (`pp_dpm_sclk`'s last state): fixed, so read once.
    max_graphics_mhz: Option<f64>,
    /// The device's busy share file (amdgpu's `gpu_busy_percent`).
    busy: PathBuf,
}

impl GpuHwmon {
    fn file(&self, name: &str) -> PathBuf {
        self.hwmon.join(name)
    }
    fn optional(&self, name: &str, scale: f64) -> Option<f64> {
        read_num(&self.file(name)).ok().map(|v| v * scale)
    }
    /// The counters it has, for the note.
    fn counters(&self) -> Vec<String> {
        let has = |n: &str| self.file(n).exists();
        [
            ("power", has("power1_average") || has("power1_input")),
            ("energy", self.energy.is_some()),
            ("power limit", has("power1_cap") || has("power1_max")),
            ("graphics clock", has("freq1_input")),
            ("memory clock", has("freq2_input")),
            ("temperature", has("temp1_input")),
            ("utilisation", self.busy.exists()),
            ("fan", has("fan1_input")),
        ]
        .iter()
        .filter(|(_, h)| *h)
        .map(|(n, _)| n.to_string())
        .collect()
    }
}

impl Source for GpuHwmon {
    fn name(&self) -> String {
        format!("{} hwmon", self.driver)
    }

    fn read(&mut self) -> Result<Reading, String> {
        let power = ["power1_average", "power1_input"]
            .iter()
            .map(|f| self.file(f))
            .find(|p| p.exists())
            .map(|p| read_num(&p).map(|v| v / 1e6))
            .transpose()?;
        let energy = match self.energy.as_mut() {
            Some(c) => Some(read_counter(&self.hwmon.join("energy1_input"), c)?),
            None => None,
        };
        if power.is_none() && energy.is_none() {
            return Err(format!(
                "{}: no power1_average, power1_input or energy1_input",
                self.hwmon.display()
            ));
        }
        Ok(Reading {
            power_w: power,
            energy_j: energy,
            graphics_mhz: self.optional("freq1_input", 1e-6),
            memory_mhz: self.optional("freq2_input", 1e-6),
            temperature_c: self.optional("temp1_input", 1e-3),
            power_limit_w: self
                .optional("power1_cap", 1e-6)
                .or_else(|| self.optional("power1_max", 1e-6)),
            thermal_limit_c: self.optional("temp1_crit", 1e-3),
            max_graphics_mhz: self.max_graphics_mhz,
            utilisation_pct: read_num(&self.busy).ok(),
            fan_rpm: self.optional("fan1_input", 1.0),
            fan_pct: None,
            throttle: Vec::new(),
        })
    }

    fn max_w(&self) -> f64 {
        GPU_MAX_W
    }
}

/// The highest clock amdgpu's `pp_dpm_sclk` lists (`2: 2100Mhz *`), MHz.
pub fn top_dpm_mhz(path: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .filter_map(|l| {
            let v = l.split_whitespace().nth(1)?;
            let digits = v.trim_end_matches(|c: char| !c.is_ascii_digit());
            digits.parse::<f64>().ok()
        })
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

/// The CPU's package energy: RAPL package zones, or `amd_energy` sockets, summed.
pub struct CpuEnergy {
    what: &'static str,
    counters: Vec<(PathBuf, Counter)>,
    cpufreq: Vec<PathBuf>,
}

impl Source for CpuEnergy {
    fn name(&self) -> String {
        self.what.into()
    }

    fn read(&mut self) -> Result<Reading, String> {
        let mut total = 0.0;
        for (p, c) in &mut self.counters {
            total += read_counter(p, c)?;
        }
        let clocks: Vec<f64> = self
            .cpufreq
            .iter()
            .filter_map(|p| read_num(p).ok())
            .map(|khz| khz / 1e3)
            .collect();
        Ok(Reading {
            energy_j: Some(total),
            graphics_mhz: crate::energy::Spread::of(clocks).map(|s| s.median),
            ..Reading::default()
        })
    }

    fn max_w(&self) -> f64 {
        CPU_MAX_W
    }
}

fn note(source: &str, device: &Path, reason: Option<String>, counters: Vec<String>) -> SourceNote {
    SourceNote {
        source: source.into(),
        device: device.display().to_string(),
        read: reason.is_none(),
        reason,
        counters,
    }
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The source for `adapter` under `root`, and a note for every source tried.
pub fn discover(
    adapter: &AdapterSummary,
    root: &Path,
) -> (Option<Box<dyn Source>>, Vec<SourceNote>) {
    let cpu = adapter.software || adapter.device_type == "cpu";
    if cpu {
        return cpu_source(root);
    }
    let Some(bus) = adapter.pci_bus_id.as_deref() else {
        let n = SourceNote {
            source: "hwmon".into(),
            device: adapter.name.clone(),
            read: false,
            reason: Some("the backend reports no PCI bus id, so no counter can be matched to this adapter (never by name)".into()),
            counters: vec![],
        };
        return (None, vec![n]);
    };
    gpu_source(root, bus, adapter.vendor_id)
}

fn gpu_source(
    root: &Path,
    bus: &str,
    vendor_id: u32,
) -> (Option<Box<dyn Source>>, Vec<SourceNote>) {
    let (hwmon, mut notes) = hwmon_source(root, bus, vendor_id);
    // AMD: AMD SMI where ROCm is installed (the live system only), its energy counter over
    // the hwmon reading of the same device.
    if vendor_id == 0x1002 && root == Path::new("/") {
        match super::amdsmi::Library::open(bus) {
            Ok(lib) => {
                let mut src = super::amdsmi::SmiSource::new(lib, hwmon);
                match src.read() {
                    Ok(first) => {
                        // First: the note the windows are measured by.
                        notes.insert(0, note(&src.name(), Path::new(bus), None, first.counters()));
                        return (Some(Box::new(src)), notes);
                    }
                    Err(e) => {
                        notes.push(note("AMD SMI", Path::new(bus), Some(e), vec![]));
                        return (src.hwmon.take(), notes);
                    }
                }
            }
            Err(e) => notes.push(note("AMD SMI", Path::new(bus), Some(e), vec![])),
        }
    }
    (hwmon, notes)
}

fn hwmon_source(
    root: &Path,
    bus: &str,
    vendor_id: u32,
) -> (Option<Box<dyn Source>>, Vec<SourceNote>) {
    let mut notes = Vec::new();
    // NVIDIA: NVML, the system's own library (tried on the live system only, not under a
    // recorded tree).
    if vendor_id == 0x10de && root == Path::new("/") {
        match super::nvml::open(bus) {
            Ok((src, counters)) => {
                notes.push(note("NVML", Path::new(bus), None, counters));
                return (Some(Box::new(src)), notes);
            }
            Err(e) => notes.push(note("NVML", Path::new(bus), Some(e), vec![])),
        }
    }
    let device = root.join("sys/bus/pci/devices").join(bus);
    if !device.is_dir() {
        let why =
            "no such PCI device in sysfs (not Linux, or a container without /sys)".to_string();
        notes.push(note("hwmon", &device, Some(why), vec![]));
        return (None, notes);
    }
    let before = notes.len();
    for hwmon in entries(&device.join("hwmon")) {
        let driver = std::fs::read_to_string(hwmon.join("name")).unwrap_or_default();
        let driver = driver.trim().to_string();
        if !matches!(driver.as_str(), "amdgpu" | "xe" | "i915") {
            let why = format!("hwmon driver {driver:?} is not one gpuvalue reads");
            notes.push(note("hwmon", &hwmon, Some(why), vec![]));
            continue;
        }
        let energy = hwmon.join("energy1_input").exists().then(Counter::default);
        let mut src = GpuHwmon {
            driver: driver.clone(),
            hwmon: hwmon.clone(),
            energy,
            max_graphics_mhz: top_dpm_mhz(&device.join("pp_dpm_sclk")),
            busy: device.join("gpu_busy_percent"),
        };
        let name = src.name();
        match src.read() {
            Ok(_) => {
                notes.push(note(&name, &hwmon, None, src.counters()));
                return (Some(Box::new(src)), notes);
            }
            Err(e) => notes.push(note(&name, &hwmon, Some(e), vec![])),
        }
    }
    if notes.len() == before {
        let why = if vendor_id == 0x10de {
            "the NVIDIA driver publishes no hwmon power files (NVML reads its counters)".to_string()
        } else {
            "the device has no hwmon directory".to_string()
        };
        notes.push(note("hwmon", &device, Some(why), vec![]));
    }
    (None, notes)
}

fn cpu_source(root: &Path) -> (Option<Box<dyn Source>>, Vec<SourceNote>) {
    let cpufreq: Vec<PathBuf> = entries(&root.join("sys/devices/system/cpu"))
        .into_iter()
        .map(|c| c.join("cpufreq/scaling_cur_freq"))
        .filter(|p| p.exists())
        .collect();
    let mut notes = Vec::new();
    // RAPL: the package zones (intel-rapl:N), not their subzones (intel-rapl:N:M).
    let powercap = root.join("sys/class/powercap");
    let zones: Vec<PathBuf> = entries(&powercap)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("intel-rapl:") && n.matches(':').count() == 1)
        })
        .collect();
    let counters = zones
        .iter()
        .map(|z| {
            let range = read_num(&z.join("max_energy_range_uj"))
                .ok()
                .map(|v| v as u64);
            (z.join("energy_uj"), Counter::wrapping_at(range))
        })
        .collect();
    let rapl = CpuEnergy {
        what: "RAPL",
        counters,
        cpufreq: cpufreq.clone(),
    };
    let none = if powercap.is_dir() {
        "no RAPL package zone (intel-rapl:N) under it"
    } else {
        "no such directory (no powercap driver: common in VMs and containers)"
    };
    match try_cpu(rapl, &powercap, none) {
        Ok(s) => return ok_cpu(s, &powercap, notes),
        Err(n) => notes.push(n),
    }
    // amd_energy: a hwmon whose name is amd_energy; its socket counters (label Esocket*).
    let hwmons = root.join("sys/class/hwmon");
    let dir = entries(&hwmons)
        .into_iter()
        .find(|h| std::fs::read_to_string(h.join("name")).is_ok_and(|n| n.trim() == "amd_energy"));
    let counters = dir.as_ref().map_or_else(Vec::new, |d| {
        entries(d)
            .into_iter()
            .filter(|p| {
                let f = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                f.starts_with("energy")
                    && f.ends_with("_label")
                    && std::fs::read_to_string(p).is_ok_and(|l| l.trim().starts_with("Esocket"))
            })
            .map(|p| {
                let input = p.to_string_lossy().replace("_label", "_input");
                (PathBuf::from(input), Counter::default())
            })
            .collect()
    });
    let amd = CpuEnergy {
        what: "amd_energy",
        counters,
        cpufreq,
    };
    let at = dir.unwrap_or(hwmons);
    match try_cpu(amd, &at, "no amd_energy hwmon with a socket counter") {
        Ok(s) => ok_cpu(s, &at, notes),
        Err(n) => {
            notes.push(n);
            (None, notes)
        }
    }
}

fn try_cpu(mut s: CpuEnergy, at: &Path, none: &str) -> Result<CpuEnergy, SourceNote> {
    if s.counters.is_empty() {
        return Err(note(s.what, at, Some(none.into()), vec![]));
    }
    match s.read() {
        Ok(_) => Ok(s),
        Err(e) => {
            let why = if e.starts_with("no permission") {
                format!("{e} (root-only since Linux 5.10: run as root, or make it readable)")
            } else {
                e
            };
            Err(note(s.what, at, Some(why), vec![]))
        }
    }
}

fn ok_cpu(
    s: CpuEnergy,
    at: &Path,
    mut notes: Vec<SourceNote>,
) -> (Option<Box<dyn Source>>, Vec<SourceNote>) {
    let mut counters = vec!["package energy".to_string()];
    if !s.cpufreq.is_empty() {
        counters.push("core clocks".into());
    }
    notes.push(note(s.what, at, None, counters));
    (Some(Box::new(s)), notes)
}
