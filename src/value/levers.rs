//! The cost levers side by side (`rank --side-by-side`): per instance, the cost to finish
//! the job on demand, on spot (expected, with the work lost to interruptions) and with each
//! commitment, and the utilisation above which a commitment beats paying on demand. A
//! commitment is paid for every hour of its term, used or not; on demand only the hours
//! used: at utilisation u the commitment costs less when u > committed rate / on-demand
//! rate. The staged plan, made concrete: try on demand, then commit what runs steadily.

use crate::market::catalog::spot::SpotRisk;
use crate::market::catalog::{Checked, PricingModel};
use crate::results::ResultsFile;
use crate::value::rank::{RankOptions, RankReport, rank};
use crate::value::scenario::Scenario;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The pricing models in the order the view shows them.
pub const MODELS: [PricingModel; 4] = [
    PricingModel::OnDemand,
    PricingModel::Spot,
    PricingModel::Reserved1y,
    PricingModel::Reserved3y,
];

/// One pricing model's cost to finish the job on one instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeverCost {
    pub price_per_hour: f64,
    /// On spot the expected time, with the work redone.
    pub hours_per_job: f64,
    pub cost_per_job: f64,
    pub price_as_of: String,
    /// A commitment's break-even utilisation: committed / on-demand price per hour (None
    /// for on demand and spot, or without an on-demand price to compare with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_even: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot: Option<SpotRisk>,
    /// The catalog's warnings on this price (stale, an outlier), as the ranking by this
    /// pricing model gives them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeverRow {
    pub provider: String,
    pub instance_type: String,
    pub region: String,
    pub gpu_name: String,
    pub gpu_count: u32,
    /// The job's time without interruptions.
    pub hours_per_job: f64,
    pub costs: BTreeMap<PricingModel, LeverCost>,
    /// The cheapest way to finish the job here.
    pub cheapest: PricingModel,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Levers {
    pub scenario: String,
    pub job: String,
    pub currency: String,
    /// Every instance with at least one price the ranking could use, cheapest first.
    pub rows: Vec<LeverRow>,
    /// Instances in the view before `top` cut it.
    pub ranked_total: usize,
    /// The share of a commitment's hours the work uses (`--utilisation`, 1.0 by default):
    /// the commitments' costs per job are divided by it.
    #[serde(default = "full")]
    pub utilisation: f64,
    /// The on-demand ranking, for its notes (model, prices, caveats).
    pub on_demand: RankReport,
}

fn full() -> f64 {
    1.0
}

impl LeverRow {
    fn best_cost(&self) -> f64 {
        self.costs[&self.cheapest].cost_per_job
    }
}

/// Ranks the scenario once per pricing model and joins the rows per instance.
pub fn side_by_side(
    catalog: &Checked<'_>,
    scenario: &Scenario,
    results: &[(String, ResultsFile)],
    opts: &RankOptions,
    utilisation: f64,
) -> Result<Levers> {
    let mut by_key: BTreeMap<String, LeverRow> = BTreeMap::new();
    let mut on_demand = None;
    for model in MODELS {
        let o = RankOptions {
            pricing: model,
            top: None,
            ..opts.clone()
        };
        let r = rank(catalog, scenario, results, &o)?;
        join(&mut by_key, &r, model);
        if model == PricingModel::OnDemand {
            on_demand = Some(r);
        }
    }
    let mut rows: Vec<LeverRow> = by_key.into_values().collect();
    for row in &mut rows {
        commit(row, utilisation);
    }
    rows.sort_by(|a, b| {
        a.best_cost()
            .total_cmp(&b.best_cost())
            .then_with(|| a.hours_per_job.total_cmp(&b.hours_per_job))
    });
    let ranked_total = rows.len();
    if let Some(n) = opts.top {
        rows.truncate(n);
    }
    Ok(Levers {
        scenario: scenario.id.clone(),
        job: scenario.job_name(),
        currency: opts.currency.clone(),
        rows,
        ranked_total,
        utilisation,
        on_demand: on_demand.expect("on demand is among the models"),
    })
}

/// Adds the ranking by `model` to the rows joined per instance: its cost on each row (a
/// row first ranked here is made from it).
fn join(by_key: &mut BTreeMap<String, LeverRow>, r: &RankReport, model: PricingModel) {
    for x in &r.rows {
        let row = by_key.entry(x.key()).or_insert_with(|| LeverRow {
            provider: x.provider.clone(),
            instance_type: x.instance_type.clone(),
            region: x.region.clone(),
            gpu_name: x.gpu_name.clone(),
            gpu_count: x.gpu_count,
            hours_per_job: x.spot.as_ref().map_or(x.hours_per_job, |s| s.bare_hours),
            costs: BTreeMap::new(),
            cheapest: model,
        });
        row.costs.insert(
            model,
            LeverCost {
                price_per_hour: x.price_per_hour,
                hours_per_job: x.hours_per_job,
                cost_per_job: x.cost_per_job,
                price_as_of: x.price_as_of.clone(),
                break_even: None,
                spot: x.spot.clone(),
                warnings: x.warnings.clone(),
            },
        );
    }
}

/// A row's commitments against on demand (their break-even utilisation, their cost per job
/// at `utilisation`), then its cheapest way to pay.
fn commit(row: &mut LeverRow, utilisation: f64) {
    let od = row
        .costs
        .get(&PricingModel::OnDemand)
        .map(|c| c.price_per_hour);
    for (m, c) in row.costs.iter_mut() {
        if matches!(m, PricingModel::Reserved1y | PricingModel::Reserved3y) {
            c.break_even = od.map(|o| c.price_per_hour / o);
            // Paid for every hour of the term, used for `utilisation` of them.
            c.cost_per_job /= utilisation;
        }
    }
    row.cheapest = *row
        .costs
        .iter()
        .min_by(|a, b| a.1.cost_per_job.total_cmp(&b.1.cost_per_job))
        .map(|(m, _)| m)
        .expect("a row has the cost it was made with");
}
