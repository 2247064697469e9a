//! A scripted source for `burn --inject-fault slowdown | power-cap`: the telemetry a GPU
//! would report beside the injected slowdown, so the verdict's cause is tested end to end
//! on a machine with no counters (CI). It is named as a script in the results file, never
//! as the device.
//!
//! Before the slowdown it reads like a GPU at work: 300 W of a 400 W limit, the graphics
//! clock at its top state (1,980 MHz), 65 C of a 90 C slowdown point. From the slowdown on,
//! a power cap holds the power at its limit and pulls the clock down to 1,200 MHz (as
//! amdgpu's hwmon shows it: no throttle reason, the limit reached), while a fault keeps the
//! clock at the top with the power falling to 150 W (the load stalls; nothing limits it).

use super::{Reading, Source};
use crate::energy::SourceNote;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The top graphics clock the script reports, MHz.
pub const TOP_MHZ: f64 = 1980.0;
/// The power limit it reports, W.
pub const LIMIT_W: f64 = 400.0;

/// The script: `slowed` is set by the burn when the injected slowdown starts.
pub struct Scripted {
    pub slowed: Arc<AtomicBool>,
    /// A power cap (true) or a fault at full clocks (false).
    pub cap: bool,
}

impl Scripted {
    /// The source note the results file carries.
    pub fn note(&self) -> SourceNote {
        SourceNote {
            source: self.name(),
            device: "none: scripted beside the injected fault".into(),
            read: true,
            reason: Some(
                "--inject-fault: these readings are the script's, not the device's".into(),
            ),
            counters: vec![
                "power".into(),
                "graphics clock".into(),
                "temperature".into(),
                "power limit".into(),
            ],
        }
    }
}

impl Source for Scripted {
    fn name(&self) -> String {
        format!(
            "scripted ({})",
            if self.cap { "power-cap" } else { "slowdown" }
        )
    }

    fn read(&mut self) -> Result<Reading, String> {
        let slowed = self.slowed.load(Ordering::Relaxed);
        let (power, clock) = match (slowed, self.cap) {
            (false, _) => (300.0, TOP_MHZ),
            (true, true) => (LIMIT_W, 1200.0),
            (true, false) => (150.0, TOP_MHZ),
        };
        Ok(Reading {
            power_w: Some(power),
            graphics_mhz: Some(clock),
            max_graphics_mhz: Some(TOP_MHZ),
            temperature_c: Some(65.0),
            thermal_limit_c: Some(90.0),
            power_limit_w: Some(LIMIT_W),
            ..Reading::default()
        })
    }

    fn max_w(&self) -> f64 {
        super::GPU_MAX_W
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measuring::telemetry::{Sample, summarise};

    fn window(cap: bool, slowed: bool) -> crate::energy::PowerWindow {
        let mut s = Scripted {
            slowed: Arc::new(AtomicBool::new(slowed)),
            cap,
        };
        let samples: Vec<Sample> = (0..10)
            .map(|i| Sample {
                t: f64::from(i) * 0.1,
                reading: s.read(),
            })
            .collect();
        summarise(
            &s.name(),
            s.max_w(),
            &samples.iter().collect::<Vec<_>>(),
            1.0,
        )
    }

    #[test]
    fn the_cap_script_reaches_its_limit_with_the_clock_down_and_the_fault_script_does_not() {
        let before = window(true, false);
        assert!(!before.capped() && before.full_clocks() == Some(true));
        let cap = window(true, true);
        assert!(cap.capped(), "{:?}", cap.throttle);
        assert_eq!(cap.full_clocks(), Some(false));
        let fault = window(false, true);
        assert!(!fault.capped());
        assert_eq!(fault.full_clocks(), Some(true));
        assert_eq!(fault.mean_w, Some(150.0));
    }
}
