//! A row's energy: what the job draws on the row's hardware, and (for hardware you own or
//! pay power for) what that electricity costs. Each GPU is taken for the job's busy hours
//! at the board power a results file measured; else, serving, at the share of its datasheet
//! board power (TDP) that published serving runs measured at the row's requests in flight
//! ([`ServingShare`]: a decode step that waits on memory draws well under TDP); else (training,
//! fine-tuning, HPC: compute-bound) at its TDP, an upper bound.

use super::RankRow;
use crate::market::catalog::{Catalog, GpuSpec};
use crate::results::ResultsFile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A GPU's board power under load as a results file measured it: W, and the file.
pub type Watts = BTreeMap<String, (f64, String)>;

/// Each catalog GPU's measured board power under load: the highest mean power any figure
/// of its results files drew (a hardware GPU's, matched to the catalog by name), and the
/// file it came from.
pub fn measured_watts(catalog: &Catalog, results: &[(String, ResultsFile)]) -> Watts {
    let mut out = Watts::new();
    for (name, r) in results.iter().filter(|(_, r)| !r.adapter.software) {
        let Some(gpu) = catalog.match_adapter(r.catalog_name()) else {
            continue;
        };
        let most = r
            .probes
            .iter()
            .filter_map(|p| p.energy.as_ref()?.mean_w)
            .filter(|w| w.is_finite() && *w > 0.0)
            .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w))));
        if let Some(w) = most
            && out.get(&gpu.id).is_none_or(|(have, _)| w > *have)
        {
            out.insert(gpu.id.clone(), (w, name.clone()));
        }
    }
    out
}

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
    /// Whether the board power was measured (a results file's figures under load).
    #[serde(default)]
    pub measured: bool,
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

const SERVING_POWER: &str = include_str!("../../data/serving_power.json");

/// `src/data/serving_power.json`: published serving runs with their measured board power.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PowerFile {
    #[allow(dead_code)]
    schema_version: u32,
    #[allow(dead_code)]
    description: String,
    rows: Vec<PowerRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct PowerRow {
    gpu: String,
    framework: String,
    precision: String,
    mtp: bool,
    tp: u32,
    concurrency: f64,
    prompt_tokens: f64,
    output_tokens: f64,
    /// Mean board power per GPU over the run, W.
    avg_power_w: f64,
    total_tok_s_per_gpu: f64,
    date: String,
    source: String,
}

/// The share of TDP a GPU draws while serving, against requests in flight per copy:
/// share = a + b log2(concurrency), fitted by Theil-Sen (the median of the pairwise slopes,
/// then the median intercept: one overloaded run cannot tilt it) on the published runs'
/// measured power over their GPU's TDP, held within 20%..100%.
#[derive(Clone, Debug, PartialEq)]
pub struct ServingShare {
    pub a: f64,
    pub b: f64,
    /// The runs it was fitted on, and their GPU types.
    pub runs: usize,
    pub gpus: Vec<String>,
    /// The shares measured, lowest and highest.
    pub lo: f64,
    pub hi: f64,
}

impl ServingShare {
    /// The fit of the built-in runs (`src/data/serving_power.json`), once.
    pub fn embedded() -> &'static ServingShare {
        static SHARE: std::sync::OnceLock<ServingShare> = std::sync::OnceLock::new();
        SHARE.get_or_init(|| {
            let file: PowerFile =
                crate::files::parse_json(SERVING_POWER, "src/data/serving_power.json")
                    .expect("the embedded serving power parses (tested)");
            let catalog = Catalog::embedded();
            let points: Vec<(f64, f64)> = file
                .rows
                .iter()
                .filter_map(|r| {
                    let tdp = catalog.gpu(&r.gpu)?.tdp_w?;
                    Some((r.concurrency.max(1.0).log2(), r.avg_power_w / tdp))
                })
                .collect();
            let mut gpus: Vec<String> = file
                .rows
                .iter()
                .map(|r| {
                    catalog
                        .gpu(&r.gpu)
                        .map_or(r.gpu.clone(), |g| g.name.clone())
                })
                .collect();
            gpus.sort();
            gpus.dedup();
            ServingShare::fit(&points, gpus)
        })
    }

    /// The Theil-Sen fit of (log2 concurrency, share) points.
    pub fn fit(points: &[(f64, f64)], gpus: Vec<String>) -> ServingShare {
        let mut slopes = Vec::new();
        for (i, p) in points.iter().enumerate() {
            for q in &points[i + 1..] {
                if (q.0 - p.0).abs() > 1e-9 {
                    slopes.push((q.1 - p.1) / (q.0 - p.0));
                }
            }
        }
        let b = crate::stats::median(slopes).unwrap_or(0.0);
        let intercepts: Vec<f64> = points.iter().map(|(x, y)| y - b * x).collect();
        let a = crate::stats::median(intercepts).unwrap_or(1.0);
        let shares = points.iter().map(|p| p.1);
        ServingShare {
            a,
            b,
            runs: points.len(),
            gpus,
            lo: shares.clone().fold(f64::INFINITY, f64::min),
            hi: shares.fold(0.0, f64::max),
        }
    }

    /// The share of TDP at `concurrency` requests in flight per copy.
    pub fn at(&self, concurrency: f64) -> f64 {
        (self.a + self.b * concurrency.max(1.0).log2()).clamp(0.2, 1.0)
    }
}

/// The row's energy on `gpu`: at its measured board power where a results file holds one,
/// else, serving, at the measured share of its datasheet board power at the row's load,
/// else at its datasheet board power.
pub fn of(
    row: &RankRow,
    gpu: &GpuSpec,
    power: Power,
    measured: Option<&(f64, String)>,
) -> Option<Energy> {
    let (w, basis, is_measured) = match measured {
        Some((w, file)) => (
            *w,
            format!("measured: the highest mean power of a figure in {file}"),
            true,
        ),
        None => {
            let tdp = gpu.tdp_w.filter(|w| w.is_finite() && *w > 0.0)?;
            match &row.serving {
                Some(s) => {
                    let f = ServingShare::embedded();
                    let share = f.at(s.concurrency);
                    (
                        tdp * share,
                        format!(
                            "{:.0}% of {}'s datasheet board power ({tdp:.0} W) at {:.0} requests a copy: the share of TDP measured while serving ({} InferenceX runs on {}, {:.0}-{:.0}%, fitted on requests in flight; the only published serving runs with power)",
                            share * 100.0,
                            gpu.name,
                            s.concurrency,
                            f.runs,
                            f.gpus.join(", "),
                            f.lo * 100.0,
                            f.hi * 100.0
                        ),
                        false,
                    )
                }
                None => (
                    tdp,
                    format!("{}'s datasheet board power (TDP), an upper bound", gpu.name),
                    false,
                ),
            }
        }
    };
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
        basis,
        measured: is_measured,
        gpus,
        kwh_per_job: kwh,
        joules_per_token,
        electricity_cost_per_job: electricity,
        price_per_kwh: power.price_per_kwh,
        pue: power.pue,
    })
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
        let e = of(&row, &gpu, power, None).unwrap();
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
        let e = of(&row, &gpu, Power::default(), None).unwrap();
        let gpus = f64::from(row.gpu_count * 3);
        assert!((e.kwh_per_job - gpus * w * 3.0 * 0.5 / 1e3).abs() < 1e-9);
        assert!(e.electricity_cost_per_job.is_none());
        // No datasheet power: no energy rather than a guess.
        let mut bare = gpu.clone();
        bare.tdp_w = None;
        assert!(of(&row, &bare, power, None).is_none());
        // A results file's measured watts replace the datasheet's, marked measured.
        let e = of(&row, &bare, power, Some(&(412.0, "h100.json".into()))).unwrap();
        assert!(e.measured && e.watts_per_gpu == 412.0 && e.basis.contains("h100.json"));
    }

    #[test]
    fn serving_draws_the_measured_share_of_tdp_rising_with_requests_in_flight() {
        let f = ServingShare::embedded();
        assert!(f.runs >= 20, "{f:?}");
        // Published: 36-48% of TDP at 4 clients, 50-70% at 64-256.
        assert!((0.36..=0.50).contains(&f.at(4.0)), "{}", f.at(4.0));
        assert!((0.55..=0.75).contains(&f.at(256.0)), "{}", f.at(256.0));
        assert!(f.at(1.0) < f.at(64.0) && f.at(1e9) <= 1.0);
        // One overloaded run (a tenth of the share at 512 clients) cannot tilt the fit.
        let mut pts: Vec<(f64, f64)> = (2..9)
            .map(|c| (f64::from(c), 0.3 + 0.05 * f64::from(c)))
            .collect();
        pts.push((9.0, 0.05));
        let robust = ServingShare::fit(&pts, vec![]);
        assert!(
            (robust.b - 0.05).abs() < 1e-9 && (robust.a - 0.3).abs() < 1e-9,
            "{robust:?}"
        );
        // A serving row draws the share at its concurrency, said in the basis.
        let mut row = crate::value::rank::training_report().rows[0].clone();
        let catalog = crate::market::catalog::Catalog::embedded();
        let gpu = catalog.gpu(&row.gpu).unwrap().clone();
        row.serving = Some(crate::value::rank::ServeRow {
            concurrency: 4.0,
            tok_s_per_gpu: 100.0,
            ..Default::default()
        });
        let e = of(&row, &gpu, Power::default(), None).unwrap();
        assert!((e.watts_per_gpu - gpu.tdp_w.unwrap() * f.at(4.0)).abs() < 1e-9);
        assert!(
            e.basis.contains("at 4 requests a copy") && !e.measured,
            "{}",
            e.basis
        );
    }

    #[test]
    fn the_measured_watts_are_a_hardware_gpu_files_highest_figure_power() {
        let catalog = crate::market::catalog::Catalog::embedded();
        let mut r = ResultsFile::parse(include_str!(
            "../../../tests/fixtures/results-lavapipe.json"
        ))
        .unwrap();
        let window = |w: f64| crate::energy::PowerWindow {
            source: "NVML".into(),
            mean_w: Some(w),
            ..Default::default()
        };
        r.probes[0].energy = Some(window(380.0));
        r.probes[1].energy = Some(window(655.0));
        // A software adapter's watts are the CPU's: never a GPU's.
        let files = vec![("cpu.json".to_string(), r.clone())];
        assert!(measured_watts(&catalog, &files).is_empty());
        r.adapter.software = false;
        r.adapter.name = "NVIDIA H100 80GB HBM3".into();
        let files = vec![("h100.json".to_string(), r)];
        let w = measured_watts(&catalog, &files);
        let (gpu, (watts, file)) = w.iter().next().unwrap();
        assert_eq!(
            (gpu.as_str(), *watts, file.as_str()),
            ("h100-sxm", 655.0, "h100.json")
        );
    }
}
