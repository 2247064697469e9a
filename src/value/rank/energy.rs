//! A row's energy: what the job draws on the row's hardware, and (for hardware you own or
//! pay power for) what that electricity costs. Each GPU is taken at its datasheet board
//! power (TDP) for the job's busy hours: an upper bound, since no calibrated share of TDP
//! under each job exists yet (a serving step that waits on memory draws less).

use super::RankRow;
use crate::market::catalog::GpuSpec;
use serde::{Deserialize, Serialize};

/// What electricity costs where the hardware runs (`--electricity-price`, `--pue`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Power {
    /// Price of a kWh in the ranking's currency.
    pub price_per_kwh: Option<f64>,
    /// Facility energy over IT energy (cooling, conversion): 1 counts the GPUs alone.
    pub pue: Option<f64>,
}

/// A row's energy for one job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Energy {
    /// Board power a GPU is taken at, W.
    pub watts_per_gpu: f64,
    /// Where that figure comes from.
    pub basis: String,
    /// GPUs drawing it (every instance's).
    pub gpus: u32,
    /// The GPUs' energy for the job, kWh (busy hours only).
    pub kwh_per_job: f64,
    /// Serving: joules per output token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_token: Option<f64>,
    /// The electricity for the job at `--electricity-price` x `--pue`, in the ranking's
    /// currency (not in `cost_per_job`: a rented instance's price already pays it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub electricity_cost_per_job: Option<f64>,
    /// The price and PUE it was costed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_per_kwh: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pue: Option<f64>,
}

/// The row's energy on `gpu`, where its datasheet gives a board power.
pub fn of(row: &RankRow, gpu: &GpuSpec, power: Power) -> Option<Energy> {
    let w = gpu.tdp_w.filter(|w| w.is_finite() && *w > 0.0)?;
    let (instances, busy) = row.steady.map_or((1, 1.0), |s| (s.instances, s.load));
    let gpus = row.gpu_count * row.nodes.max(1) * instances.max(1);
    let kwh = f64::from(gpus) * w * row.hours_per_job * busy / 1e3;
    let joules_per_token = row
        .serving
        .as_ref()
        .filter(|s| s.tok_s_per_gpu > 0.0)
        .map(|s| w / s.tok_s_per_gpu);
    let electricity = power
        .price_per_kwh
        .map(|p| kwh * power.pue.unwrap_or(1.0) * p);
    Some(Energy {
        watts_per_gpu: w,
        basis: format!("{}'s datasheet board power (TDP), an upper bound", gpu.name),
        gpus,
        kwh_per_job: kwh,
        joules_per_token,
        electricity_cost_per_job: electricity,
        price_per_kwh: power.price_per_kwh,
        pue: power.pue,
    })
}

/// The notes' line for the first row: its energy, per token where it serves, and the
/// electricity's cost where a price was given.
pub fn line(row: &RankRow, currency: &str) -> Option<String> {
    let e = row.energy.as_ref()?;
    let mut s = format!(
        "Energy: row {} draws {} kWh a job ({} GPUs at {:.0} W each: {})",
        row.place,
        sig(e.kwh_per_job),
        e.gpus,
        e.watts_per_gpu,
        e.basis
    );
    if let Some(j) = e.joules_per_token {
        s.push_str(&format!(
            ", {} J per output token ({} kWh per million)",
            sig(j),
            sig(j * 1e6 / 3.6e6)
        ));
    }
    if let (Some(c), Some(p)) = (e.electricity_cost_per_job, e.price_per_kwh) {
        s.push_str(&format!(
            "; its electricity at {} {currency}/kWh x PUE {}: {} {currency} a job",
            sig(p),
            e.pue.unwrap_or(1.0),
            sig(c)
        ));
    }
    s.push('.');
    Some(s)
}

/// Three significant figures.
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let d = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.d$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_is_every_gpu_at_its_tdp_for_the_busy_hours_and_per_token_when_serving() {
        let report = crate::value::rank::training_report();
        let mut row = report.rows[0].clone();
        let catalog = crate::market::catalog::Catalog::embedded();
        let gpu = catalog.gpu(&row.gpu).unwrap().clone();
        let w = gpu.tdp_w.unwrap();
        row.nodes = 2;
        row.hours_per_job = 3.0;
        row.steady = None;
        let power = Power {
            price_per_kwh: Some(0.1),
            pue: Some(1.5),
        };
        let e = of(&row, &gpu, power).unwrap();
        let gpus = f64::from(row.gpu_count * 2);
        assert!((e.kwh_per_job - gpus * w * 3.0 / 1e3).abs() < 1e-9);
        assert!((e.electricity_cost_per_job.unwrap() - e.kwh_per_job * 0.15).abs() < 1e-9);
        assert!(e.joules_per_token.is_none());
        // A steady rate: the instances it needs, busy their share of the hour.
        row.steady = Some(crate::value::rank::Steady {
            instances: 3,
            load: 0.5,
        });
        row.nodes = 1;
        let e = of(&row, &gpu, Power::default()).unwrap();
        let gpus = f64::from(row.gpu_count * 3);
        assert!((e.kwh_per_job - gpus * w * 3.0 * 0.5 / 1e3).abs() < 1e-9);
        assert!(e.electricity_cost_per_job.is_none());
        // No datasheet power: no energy rather than a guess.
        let mut bare = gpu.clone();
        bare.tdp_w = None;
        assert!(of(&row, &bare, power).is_none());
    }
}
