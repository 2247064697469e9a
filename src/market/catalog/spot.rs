//! Spot capacity's risk: the interruption band a provider publishes per instance type and
//! region (AWS's Spot Instance Advisor), a preemptible instance's maximum run time (GCP's
//! preemptible VMs stop after 24 hours), and what they cost a job that checkpoints: the work
//! lost since the last checkpoint and the restart, paid for at the spot price.

use serde::{Deserialize, Serialize};

/// AWS Spot Instance Advisor's "frequency of interruption": the share of that type's spot
/// capacity in the region that AWS reclaimed over the trailing month.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Band {
    #[serde(rename = "<5%")]
    Under5,
    #[serde(rename = "5-10%")]
    From5To10,
    #[serde(rename = "10-15%")]
    From10To15,
    #[serde(rename = "15-20%")]
    From15To20,
    #[serde(rename = ">20%")]
    Over20,
}

impl Band {
    pub fn label(self) -> &'static str {
        match self {
            Band::Under5 => "<5%",
            Band::From5To10 => "5-10%",
            Band::From10To15 => "10-15%",
            Band::From15To20 => "15-20%",
            Band::Over20 => ">20%",
        }
    }

    /// The share of instances interrupted per month the cost model takes for the band: its
    /// upper edge (the buyer's side of the band), and 30% for the open ">20%".
    pub fn monthly_share(self) -> f64 {
        match self {
            Band::Under5 => 0.05,
            Band::From5To10 => 0.10,
            Band::From10To15 => 0.15,
            Band::From15To20 => 0.20,
            Band::Over20 => 0.30,
        }
    }

    /// Interruptions per running hour: a monthly share `p` read as the chance that an
    /// instance running a whole month (730 h) is interrupted, with interruptions at a steady
    /// rate (Poisson): -ln(1 - p) / 730.
    pub fn rate_per_hour(self) -> f64 {
        -(1.0 - self.monthly_share()).ln() / HOURS_PER_MONTH
    }
}

/// Hours in a month as AWS and GCP bill them.
pub const HOURS_PER_MONTH: f64 = 730.0;

/// A spot price's risk, with its own date and source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interruption {
    /// The published interruption band; absent where the provider publishes none (the risk
    /// is then unknown, and said, not zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<Band>,
    /// Hours after which the provider stops the instance whatever the demand (GCP
    /// preemptible VMs: 24; GCP Spot VMs and AWS spot have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_run_hours: Option<f64>,
    pub as_of: String,
    pub source: String,
}

/// How a job survives an interruption: it writes a checkpoint every `every_hours` and needs
/// `restart_hours` to get a new instance and resume from the last checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpointing {
    pub every_hours: f64,
    pub restart_hours: f64,
}

impl Default for Checkpointing {
    /// A checkpoint every 30 minutes; 15 minutes to get a new instance, start it and load
    /// the checkpoint.
    fn default() -> Self {
        Checkpointing {
            every_hours: 0.5,
            restart_hours: 0.25,
        }
    }
}

/// What running a job on spot is expected to take, beside its bare time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpotRisk {
    /// The band it was costed with: the published one, or where none is published the
    /// worst (`assumed`), so that an unknown risk never ranks as no risk.
    pub band: Band,
    pub assumed: bool,
    /// Interruptions per running hour taken for the band.
    pub rate_per_hour: f64,
    /// The job's time without interruptions.
    pub bare_hours: f64,
    /// The expected time to finish it, with the work redone and the restarts.
    pub expected_hours: f64,
    pub expected_interruptions: f64,
    /// Stops forced by a maximum run time (a preemptible's 24 hours), and the hours each
    /// costs (the work since the last checkpoint and a restart).
    pub forced_stops: u32,
    pub stop_hours: f64,
    pub checkpointing: Checkpointing,
    /// The interval the job's work is lost over: the checkpoint interval, or for serving
    /// (`stateless`: each request its own unit of work) a request's worth.
    pub unit_hours: f64,
    pub stateless: bool,
}

/// The expected time to finish `bare_hours` of work on spot capacity with risk `risk`
/// (no band published: the worst band, assumed), checkpointing every `cp.every_hours` (or, with `stateless`,
/// losing only the requests in flight).
///
/// Work runs in segments of the checkpoint interval τ (the whole job if shorter); a segment
/// interrupted at the Poisson rate λ restarts after R from its start, so its expected time
/// is e^(λR) (e^(λτ) - 1) / λ (Daly, "A higher order estimate of the optimum checkpoint
/// interval for restart dumps", 2006, without the checkpoint's own write time), and its
/// expected interruptions e^(λτ) - 1. A maximum run time M stops the instance every M
/// hours: each stop loses the work since the last checkpoint (M mod τ) and a restart.
pub fn expected(
    bare_hours: f64,
    risk: Option<&Interruption>,
    cp: Checkpointing,
    stateless: bool,
) -> SpotRisk {
    let (band, assumed) = match risk.and_then(|r| r.band) {
        Some(b) => (b, false),
        None => (Band::Over20, true),
    };
    let lambda = band.rate_per_hour();
    // A request in flight: about a second of work.
    let unit = if stateless {
        (1.0 / 3600.0f64).min(bare_hours)
    } else {
        cp.every_hours.min(bare_hours)
    };
    let segments = bare_hours / unit;
    let per_segment = (lambda * cp.restart_hours).exp() * (lambda * unit).exp_m1() / lambda;
    let interruptions = (lambda * unit).exp_m1();
    let mut hours = segments * per_segment;
    let mut forced = 0u32;
    let mut lost = 0.0;
    if let Some(m) = risk.and_then(|r| r.max_run_hours)
        && m > 0.0
        && hours > m
    {
        // Each run of m hours keeps m less the restart and the work since its last
        // checkpoint; the job takes as many runs as that fits in, stopped between them.
        lost = if stateless { 0.0 } else { m % unit } + cp.restart_hours;
        let kept = (m - lost).max(m * 0.01);
        forced = ((hours / kept).ceil() - 1.0).max(0.0) as u32;
        hours += f64::from(forced) * lost;
    }
    SpotRisk {
        band,
        assumed,
        rate_per_hour: lambda,
        bare_hours,
        expected_hours: hours,
        expected_interruptions: segments * interruptions,
        forced_stops: forced,
        stop_hours: lost,
        checkpointing: cp,
        unit_hours: unit,
        stateless,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aws(band: Band) -> Interruption {
        Interruption {
            band: Some(band),
            max_run_hours: None,
            as_of: "2025-06".into(),
            source: "test".into(),
        }
    }

    #[test]
    fn bands_read_as_rates() {
        // 30% a month: -ln(0.7)/730 = 4.886e-4 per hour.
        assert!((Band::Over20.rate_per_hour() - 4.886e-4).abs() < 1e-6);
        assert!(Band::Under5.rate_per_hour() < Band::From15To20.rate_per_hour());
        let b: Band = serde_json::from_str("\">20%\"").unwrap();
        assert_eq!(b, Band::Over20);
        assert!(serde_json::from_str::<Band>("\"20%\"").is_err());
    }

    #[test]
    fn the_expected_time_grows_with_the_rate_the_interval_and_the_job() {
        let cp = Checkpointing::default();
        let long = 1000.0;
        let low = expected(long, Some(&aws(Band::Under5)), cp, false);
        let high = expected(long, Some(&aws(Band::Over20)), cp, false);
        assert!(low.expected_hours > long && high.expected_hours > low.expected_hours);
        // First order: T (1 + λ (τ/2 + R)) = 1000 x (1 + 4.886e-4 x 0.5) = 1000.244 h.
        let first_order = long * (1.0 + Band::Over20.rate_per_hour() * (0.25 + 0.25));
        assert!(
            (high.expected_hours - first_order).abs() < 0.01,
            "{high:?} vs {first_order}"
        );
        // About λ T interruptions.
        assert!(
            (high.expected_interruptions - 0.4886).abs() < 0.01,
            "{high:?}"
        );
        let rare = Checkpointing {
            every_hours: 24.0,
            restart_hours: 0.25,
        };
        assert!(
            expected(long, Some(&aws(Band::Over20)), rare, false).expected_hours
                > high.expected_hours
        );
        // No band published: the worst band, said to be assumed.
        let unknown = expected(long, None, cp, false);
        assert!(unknown.assumed && unknown.band == Band::Over20);
        assert_eq!(unknown.expected_hours, high.expected_hours);
        // Serving loses only its requests in flight: less than a checkpointed job.
        let serve = expected(long, Some(&aws(Band::Over20)), cp, true);
        assert!(serve.expected_hours > long && serve.expected_hours < high.expected_hours);
    }

    #[test]
    fn a_preemptible_longer_than_its_limit_is_stopped_and_says_so() {
        let cp = Checkpointing {
            every_hours: 5.0,
            restart_hours: 0.5,
        };
        let pre = Interruption {
            band: None,
            max_run_hours: Some(24.0),
            as_of: "2026-12".into(),
            source: "test".into(),
        };
        let r = expected(100.0, Some(&pre), cp, false);
        // Each stop after 24 h loses 4 h since the checkpoint at 20 h and 0.5 h of restart:
        // 100 h of work take 6 runs keeping 19.5 hours each: 5 stops of 4.5 h.
        assert_eq!(r.forced_stops, 5, "{r:?}");
        let unlimited = expected(100.0, None, cp, false).expected_hours;
        assert!(
            (r.expected_hours - (unlimited + 5.0 * 4.5)).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(r.stop_hours, 4.5);
        assert!(r.assumed);
        // A job within the limit is not stopped.
        assert_eq!(expected(20.0, Some(&pre), cp, false).forced_stops, 0);
    }
}
