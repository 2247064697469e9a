//! NVIDIA's counters through NVML (`libnvidia-ml.so.1`, loaded at run time by the
//! `nvml-wrapper` crate, so the binary starts where the driver is absent): board power
//! (mW), the total energy counter (mJ, Volta and later), graphics and memory clocks and the
//! highest graphics clock, temperature and its slowdown point, the enforced power limit,
//! and the clock-event (throttle) reasons. The device is found by PCI bus id.
//!
//! [`NvmlApi`] is the seam: the real library behind it here, a scripted fake in the tests.

use super::{Counter, GPU_MAX_W, Reading, Source};

/// One set of NVML's raw answers; a query the device does not support is None.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NvRaw {
    pub power_mw: Option<u32>,
    pub energy_mj: Option<u64>,
    pub graphics_mhz: Option<u32>,
    pub memory_mhz: Option<u32>,
    pub max_graphics_mhz: Option<u32>,
    pub temperature_c: Option<u32>,
    pub slowdown_c: Option<u32>,
    pub power_limit_mw: Option<u32>,
    /// `nvmlClocksEventReason*` bits.
    pub reasons: Option<u64>,
    /// Percent of the last sample period a kernel ran.
    pub utilisation_pct: Option<u32>,
    /// The first fan's speed, percent of its maximum.
    pub fan_pct: Option<u32>,
}

/// What the sampler asks of NVML.
pub trait NvmlApi: Send {
    /// One reading of the device; Err: why none (the device lost, the library failing).
    fn raw(&mut self) -> Result<NvRaw, String>;
}

/// The clock-event reasons that hold a GPU back, by NVML's bit: each a power or thermal
/// limit, or a setting (idle is not a reason to report).
const REASONS: [(u64, &str); 8] = [
    (0x2, "application clocks setting"),
    (0x4, "power cap (software)"),
    (0x8, "hardware slowdown (power or thermal)"),
    (0x10, "sync boost"),
    (0x20, "thermal (software slowdown)"),
    (0x40, "thermal (hardware slowdown)"),
    (0x80, "power brake (hardware)"),
    (0x100, "display clocks setting"),
];

/// The reasons set in `bits`, in NVML's order.
pub fn reason_names(bits: u64) -> Vec<String> {
    REASONS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// NVML as a power and clock source.
pub struct NvmlSource<A: NvmlApi> {
    api: A,
    energy: Counter,
}

impl<A: NvmlApi> NvmlSource<A> {
    pub fn new(api: A) -> Self {
        NvmlSource {
            api,
            energy: Counter::default(),
        }
    }
}

impl<A: NvmlApi> Source for NvmlSource<A> {
    fn name(&self) -> String {
        "NVML".into()
    }

    fn read(&mut self) -> Result<Reading, String> {
        let r = self.api.raw()?;
        if r.power_mw.is_none() && r.energy_mj.is_none() {
            return Err("NVML gave neither power usage nor the energy counter".into());
        }
        let energy = match r.energy_mj {
            Some(mj) => Some(self.energy.advance(mj.saturating_mul(1000))?),
            None => None,
        };
        let f = |v: Option<u32>| v.map(f64::from);
        Ok(Reading {
            power_w: r.power_mw.map(|mw| f64::from(mw) / 1e3),
            energy_j: energy,
            graphics_mhz: f(r.graphics_mhz),
            memory_mhz: f(r.memory_mhz),
            temperature_c: f(r.temperature_c),
            power_limit_w: r.power_limit_mw.map(|mw| f64::from(mw) / 1e3),
            thermal_limit_c: f(r.slowdown_c),
            max_graphics_mhz: f(r.max_graphics_mhz),
            utilisation_pct: f(r.utilisation_pct),
            fan_rpm: None,
            fan_pct: f(r.fan_pct),
            throttle: reason_names(r.reasons.unwrap_or(0)),
        })
    }

    fn max_w(&self) -> f64 {
        GPU_MAX_W
    }
}

/// The real library, the device found again by bus id at each reading (a handle does not
/// survive a driver reset; the lookup is cheap).
pub struct RealNvml {
    nvml: nvml_wrapper::Nvml,
    bus: String,
}

impl NvmlApi for RealNvml {
    fn raw(&mut self) -> Result<NvRaw, String> {
        use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor, TemperatureThreshold};
        let d = self
            .nvml
            .device_by_pci_bus_id(self.bus.as_str())
            .map_err(|e| format!("NVML: device {}: {e}", self.bus))?;
        Ok(NvRaw {
            power_mw: d.power_usage().ok(),
            energy_mj: d.total_energy_consumption().ok(),
            graphics_mhz: d.clock_info(Clock::Graphics).ok(),
            memory_mhz: d.clock_info(Clock::Memory).ok(),
            max_graphics_mhz: d.max_clock_info(Clock::Graphics).ok(),
            temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
            slowdown_c: d.temperature_threshold(TemperatureThreshold::Slowdown).ok(),
            power_limit_mw: d.enforced_power_limit().ok(),
            reasons: d.current_throttle_reasons().ok().map(|r| r.bits()),
            utilisation_pct: d.utilization_rates().ok().map(|u| u.gpu),
            fan_pct: d.fan_speed(0).ok(),
        })
    }
}

/// NVML for the GPU at PCI `bus`; Err: why not (no library, no such device, no counter).
pub fn open(bus: &str) -> Result<(NvmlSource<RealNvml>, Vec<String>), String> {
    let nvml = nvml_wrapper::Nvml::init().map_err(|e| format!("NVML did not load: {e}"))?;
    let mut src = NvmlSource::new(RealNvml {
        nvml,
        bus: bus.to_string(),
    });
    let first = src.read()?;
    let mut counters = first.counters();
    counters.push("throttle reasons".into());
    Ok((src, counters))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVML scripted: each call answers the next reading, then fails as a lost device.
    struct Script(std::collections::VecDeque<Result<NvRaw, String>>);

    impl NvmlApi for Script {
        fn raw(&mut self) -> Result<NvRaw, String> {
            self.0
                .pop_front()
                .unwrap_or_else(|| Err("NVML: GPU is lost".into()))
        }
    }

    fn at(energy_mj: u64, reasons: u64) -> NvRaw {
        NvRaw {
            power_mw: Some(699_500),
            energy_mj: Some(energy_mj),
            graphics_mhz: Some(1_755),
            memory_mhz: Some(2_619),
            max_graphics_mhz: Some(1_980),
            temperature_c: Some(74),
            slowdown_c: Some(90),
            power_limit_mw: Some(700_000),
            reasons: Some(reasons),
            utilisation_pct: Some(100),
            fan_pct: None,
        }
    }

    #[test]
    fn nvml_readings_are_exact_and_a_lost_device_is_a_gap() {
        let script = [
            Ok(at(1_000_000, 0x1)),
            Ok(at(1_070_000, 0x4)),
            Err("NVML: Unknown Error".to_string()),
            Ok(at(1_140_000, 0x4 | 0x40)),
        ];
        let mut s = NvmlSource::new(Script(script.into_iter().collect()));
        let r = s.read().unwrap();
        assert_eq!(r.power_w, Some(699.5));
        assert_eq!(r.energy_j, Some(0.0));
        assert_eq!(r.power_limit_w, Some(700.0));
        assert_eq!(r.max_graphics_mhz, Some(1980.0));
        assert_eq!(r.utilisation_pct, Some(100.0));
        assert!(r.throttle.is_empty(), "idle is no reason: {:?}", r.throttle);
        let r = s.read().unwrap();
        assert_eq!(r.energy_j, Some(70.0));
        assert_eq!(r.throttle, ["power cap (software)"]);
        assert!(s.read().unwrap_err().contains("Unknown Error"));
        let r = s.read().unwrap();
        assert_eq!(r.energy_j, Some(140.0));
        assert_eq!(
            r.throttle,
            ["power cap (software)", "thermal (hardware slowdown)"]
        );
        assert!(s.read().unwrap_err().contains("lost"));
    }

    #[test]
    fn a_window_of_nvml_readings_at_its_power_cap_is_capped() {
        let script = (0..5).map(|i| Ok(at(i * 70_000, 0x4))).collect();
        let mut s = NvmlSource::new(Script(script));
        let samples: Vec<super::super::Sample> = (0..5)
            .map(|i| super::super::Sample {
                t: f64::from(i) * 0.1,
                reading: s.read(),
            })
            .collect();
        let refs: Vec<&super::super::Sample> = samples.iter().collect();
        let w = super::super::summarise("NVML", GPU_MAX_W, &refs, 0.4);
        // 70 J every 0.1 s: 700 W from the energy counter.
        assert!((w.mean_w.unwrap() - 700.0).abs() < 1e-6, "{w:?}");
        assert!(w.capped());
        assert_eq!(w.full_clocks(), Some(false));
    }
}
