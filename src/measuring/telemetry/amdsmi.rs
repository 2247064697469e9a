//! AMD SMI (ROCm's `libamd_smi.so`, opened at run time, so the binary starts where ROCm is
//! absent) for an AMD GPU: the board's energy accumulator (exact joules, which the amdgpu
//! hwmon files lack on most boards), the power cap and the graphics engine's activity,
//! joined to the amdgpu hwmon reading of the same device (clocks, temperature and its
//! slowdown point, the top clock state). The device is found by its PCI bus id
//! (`amdsmi_get_processor_handle_from_bdf`), never by name.
//!
//! Only calls whose signatures and structures have held across ROCm 6 and 7 are made:
//! `amdsmi_get_energy_count` (a u64 count and its resolution in microjoules),
//! `amdsmi_get_power_cap_info` (u64 microwatts) and `amdsmi_get_gpu_activity` (u32
//! percentages first). Clocks and temperatures, whose enums and units moved between
//! releases, come from hwmon. A call that fails is a gap in that counter only.

use super::{Counter, Reading, Source};

/// What the sampler asks of AMD SMI (the library, or a script in tests).
pub trait SmiApi: Send {
    /// The energy accumulator in microjoules (count x resolution).
    fn energy_uj(&mut self) -> Result<f64, String>;
    /// The current power cap, W.
    fn power_cap_w(&mut self) -> Result<f64, String>;
    /// The graphics engine's activity, percent.
    fn gfx_activity_pct(&mut self) -> Result<f64, String>;
}

/// AMD SMI's counters over the device's hwmon reading (None: AMD SMI alone).
pub struct SmiSource<A: SmiApi> {
    pub api: A,
    pub hwmon: Option<Box<dyn Source>>,
    energy: Counter,
}

impl<A: SmiApi> SmiSource<A> {
    pub fn new(api: A, hwmon: Option<Box<dyn Source>>) -> Self {
        SmiSource {
            api,
            hwmon,
            energy: Counter::default(),
        }
    }
}

impl<A: SmiApi> Source for SmiSource<A> {
    fn name(&self) -> String {
        match &self.hwmon {
            Some(h) => format!("AMD SMI + {}", h.name()),
            None => "AMD SMI".into(),
        }
    }

    fn read(&mut self) -> Result<Reading, String> {
        // The energy counter is what AMD SMI is read for: without it the reading is a gap.
        let uj = self.api.energy_uj()?;
        if !uj.is_finite() || uj < 0.0 {
            return Err(format!("AMD SMI: energy counter reads {uj} uJ"));
        }
        let energy_j = self.energy.advance(uj as u64)?;
        let mut r = match &mut self.hwmon {
            Some(h) => h.read().unwrap_or_default(),
            None => Reading::default(),
        };
        r.energy_j = Some(energy_j);
        if let Ok(cap) = self.api.power_cap_w() {
            r.power_limit_w = Some(cap);
        }
        if let Ok(busy) = self.api.gfx_activity_pct() {
            r.utilisation_pct = Some(busy);
        }
        Ok(r)
    }

    fn max_w(&self) -> f64 {
        super::GPU_MAX_W
    }
}

/// The library, opened, initialised for AMD GPUs and holding one device.
pub struct Library {
    lib: libloading::Library,
    handle: *mut std::ffi::c_void,
}

// The handle is an opaque pointer the library owns; the sampler's one thread calls it.
unsafe impl Send for Library {}

type Status = i32;
const AMDSMI_INIT_AMD_GPUS: u64 = 1 << 1;

#[repr(C)]
#[derive(Default)]
struct PowerCapInfo {
    power_cap: u64,
    default_power_cap: u64,
    dpm_cap: u64,
    min_power_cap: u64,
    max_power_cap: u64,
    reserved: [u64; 3],
}

#[repr(C)]
#[derive(Default)]
struct EngineUsage {
    gfx_activity: u32,
    umc_activity: u32,
    mm_activity: u32,
    reserved: [u32; 13],
}

/// `0000:c1:00.0` as AMD SMI's BDF word: function in bits 0-2, device 3-7, bus 8-15,
/// domain from bit 16.
pub fn bdf(bus_id: &str) -> Option<u64> {
    let (domain, rest) = bus_id.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (device, function) = rest.split_once('.')?;
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    let (d, b, dev, f) = (hex(domain)?, hex(bus)?, hex(device)?, hex(function)?);
    (b < 256 && dev < 32 && f < 8).then_some(f | dev << 3 | b << 8 | d << 16)
}

impl Library {
    /// Opens ROCm's library and finds the device at `bus_id`; Err: why not.
    pub fn open(bus_id: &str) -> Result<Library, String> {
        let word = bdf(bus_id).ok_or_else(|| format!("PCI bus id {bus_id:?} is not D:B:D.F"))?;
        let lib = ["libamd_smi.so", "/opt/rocm/lib/libamd_smi.so"]
            .iter()
            .find_map(|p| unsafe { libloading::Library::new(p) }.ok())
            .ok_or("libamd_smi.so not found (ROCm's AMD SMI is not installed)")?;
        unsafe {
            let init: libloading::Symbol<unsafe extern "C" fn(u64) -> Status> =
                lib.get(b"amdsmi_init").map_err(|e| e.to_string())?;
            check("amdsmi_init", init(AMDSMI_INIT_AMD_GPUS))?;
            let find: libloading::Symbol<
                unsafe extern "C" fn(u64, *mut *mut std::ffi::c_void) -> Status,
            > = lib
                .get(b"amdsmi_get_processor_handle_from_bdf")
                .map_err(|e| e.to_string())?;
            let mut handle = std::ptr::null_mut();
            check(
                "amdsmi_get_processor_handle_from_bdf",
                find(word, &mut handle),
            )?;
            Ok(Library { lib, handle })
        }
    }
}

fn check(call: &str, status: Status) -> Result<(), String> {
    if status == 0 {
        Ok(())
    } else {
        Err(format!("AMD SMI: {call} returned status {status}"))
    }
}

impl SmiApi for Library {
    fn energy_uj(&mut self) -> Result<f64, String> {
        type F =
            unsafe extern "C" fn(*mut std::ffi::c_void, *mut u64, *mut f32, *mut u64) -> Status;
        let (mut count, mut resolution, mut stamp) = (0u64, 0f32, 0u64);
        unsafe {
            let f: libloading::Symbol<F> = self
                .lib
                .get(b"amdsmi_get_energy_count")
                .map_err(|e| e.to_string())?;
            check(
                "amdsmi_get_energy_count",
                f(self.handle, &mut count, &mut resolution, &mut stamp),
            )?;
        }
        Ok(count as f64 * f64::from(resolution))
    }

    fn power_cap_w(&mut self) -> Result<f64, String> {
        type F = unsafe extern "C" fn(*mut std::ffi::c_void, u32, *mut PowerCapInfo) -> Status;
        let mut info = PowerCapInfo::default();
        unsafe {
            let f: libloading::Symbol<F> = self
                .lib
                .get(b"amdsmi_get_power_cap_info")
                .map_err(|e| e.to_string())?;
            check("amdsmi_get_power_cap_info", f(self.handle, 0, &mut info))?;
        }
        Ok(info.power_cap as f64 / 1e6)
    }

    fn gfx_activity_pct(&mut self) -> Result<f64, String> {
        type F = unsafe extern "C" fn(*mut std::ffi::c_void, *mut EngineUsage) -> Status;
        let mut usage = EngineUsage::default();
        unsafe {
            let f: libloading::Symbol<F> = self
                .lib
                .get(b"amdsmi_get_gpu_activity")
                .map_err(|e| e.to_string())?;
            check("amdsmi_get_gpu_activity", f(self.handle, &mut usage))?;
        }
        Ok(f64::from(usage.gfx_activity))
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        unsafe {
            if let Ok(f) = self
                .lib
                .get::<unsafe extern "C" fn() -> Status>(b"amdsmi_shut_down")
            {
                f();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// AMD SMI scripted: each call answers the next value, then fails as a lost device.
    struct Script {
        energy: VecDeque<Result<f64, String>>,
    }

    impl SmiApi for Script {
        fn energy_uj(&mut self) -> Result<f64, String> {
            self.energy
                .pop_front()
                .unwrap_or_else(|| Err("AMD SMI: amdsmi_get_energy_count returned status 7".into()))
        }
        fn power_cap_w(&mut self) -> Result<f64, String> {
            Ok(750.0)
        }
        fn gfx_activity_pct(&mut self) -> Result<f64, String> {
            Ok(99.0)
        }
    }

    /// An hwmon-like source: clocks and temperature only.
    struct Clocks;
    impl Source for Clocks {
        fn name(&self) -> String {
            "amdgpu hwmon".into()
        }
        fn read(&mut self) -> Result<Reading, String> {
            Ok(Reading {
                graphics_mhz: Some(2100.0),
                max_graphics_mhz: Some(2100.0),
                temperature_c: Some(71.0),
                power_w: Some(600.0),
                ..Reading::default()
            })
        }
        fn max_w(&self) -> f64 {
            super::super::GPU_MAX_W
        }
    }

    #[test]
    fn the_energy_accumulator_gives_exact_joules_over_hwmon_clocks_and_a_failing_call_is_a_gap() {
        // 15.3 uJ a count (MI300X's resolution), 65.36 million counts a reading: 1.000 kJ.
        let counts = [0.0, 65_360_000.0, 130_720_000.0];
        let mut energy: VecDeque<Result<f64, String>> =
            counts.iter().map(|c| Ok(c * 15.3)).collect();
        energy.insert(
            2,
            Err("AMD SMI: amdsmi_get_energy_count returned status 2".into()),
        );
        let mut s = SmiSource::new(Script { energy }, Some(Box::new(Clocks)));
        assert_eq!(s.name(), "AMD SMI + amdgpu hwmon");
        let r = s.read().unwrap();
        assert_eq!(r.energy_j, Some(0.0));
        assert_eq!(
            (r.graphics_mhz, r.power_limit_w, r.utilisation_pct),
            (Some(2100.0), Some(750.0), Some(99.0))
        );
        let r = s.read().unwrap();
        assert!((r.energy_j.unwrap() - 1000.008).abs() < 1e-3, "{r:?}");
        assert!(s.read().unwrap_err().contains("status 2"));
        let r = s.read().unwrap();
        assert!((r.energy_j.unwrap() - 2000.016).abs() < 1e-3, "{r:?}");
        assert!(s.read().unwrap_err().contains("status 7"));
        assert_eq!(
            r.counters(),
            [
                "power",
                "energy",
                "power limit",
                "graphics clock",
                "temperature",
                "utilisation"
            ]
        );
    }

    #[test]
    fn a_bus_id_becomes_amd_smis_bdf_word_and_garbage_is_refused() {
        assert_eq!(bdf("0000:c1:00.0"), Some(0xc1 << 8));
        assert_eq!(bdf("0001:03:1f.7"), Some(7 | 0x1f << 3 | 3 << 8 | 1 << 16));
        for bad in [
            "",
            "c1:00.0",
            "0000:c1:20.0",
            "0000:zz:00.0",
            "0000:c1:00.8",
        ] {
            assert_eq!(bdf(bad), None, "{bad}");
        }
    }
}
