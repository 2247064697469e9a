//! The serving curve (`rank --job llm-serve --sweep`): for every GPU type, at each
//! interactivity (output tokens per second per user), the instance that serves a million
//! output tokens cheapest there, with its throughput per GPU: InferenceX's throughput /
//! interactivity curve, for any model, on every GPU the market rents, at real prices.

use super::*;

/// The interactivities a sweep visits, tokens per second per user.
pub const LEVELS: [f64; 10] = [
    5.0, 10.0, 20.0, 30.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0,
];

/// One GPU type's best point at one interactivity: the cheapest that reaches it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    pub gpu: String,
    pub gpu_name: String,
    /// The target, tokens per second per user.
    pub interactivity: f64,
    /// What the chosen concurrency gives each user (at or above the target).
    pub tok_s_per_user: f64,
    pub tok_s_per_gpu: f64,
    pub total_tok_s_per_gpu: f64,
    pub cost_per_million_tokens: f64,
    pub cost_per_million_total_tokens: f64,
    pub concurrency: f64,
    pub layout: String,
    /// provider, instance type and region of the cheapest instance there.
    pub instance: String,
    pub gpu_count: u32,
    pub basis: Source,
}

/// The whole curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub scenario: String,
    pub job: String,
    pub currency: String,
    pub pricing: PricingModel,
    pub levels: Vec<f64>,
    /// GPU types in order of their cheapest cost per million tokens at the lowest level
    /// any reaches.
    pub gpus: Vec<String>,
    pub points: Vec<SweepPoint>,
}

/// Each GPU type's frontier: at each level, the cheapest of its points (from any level's
/// ranking) whose achieved interactivity reaches the level. A point that serves 60 tokens/s
/// per user serves 50 too, so the cost never falls as the level rises and a layout switch
/// between two levels cannot make a cliff the cheaper layout would not.
fn frontier(points: Vec<SweepPoint>) -> Vec<SweepPoint> {
    let mut out: Vec<SweepPoint> = Vec::new();
    let mut gpus: Vec<&str> = points.iter().map(|p| p.gpu.as_str()).collect();
    gpus.dedup();
    let mut seen = std::collections::BTreeSet::new();
    for g in gpus {
        if !seen.insert(g) {
            continue;
        }
        let mine: Vec<&SweepPoint> = points.iter().filter(|p| p.gpu == g).collect();
        for level in LEVELS {
            let best = mine
                .iter()
                .filter(|p| p.tok_s_per_user >= level * (1.0 - 1e-9))
                .min_by(|a, b| {
                    a.cost_per_million_tokens
                        .total_cmp(&b.cost_per_million_tokens)
                });
            if let Some(p) = best {
                out.push(SweepPoint {
                    interactivity: level,
                    ..(*p).clone()
                });
            }
        }
    }
    out
}

/// The sweep of `scenario` (a served model) over [`LEVELS`].
pub fn sweep(
    checked: &Checked<'_>,
    scenario: &Scenario,
    results: &[(String, ResultsFile)],
    opts: &RankOptions,
) -> Result<Sweep> {
    let Some(serving) = &scenario.serving else {
        anyhow::bail!("--sweep applies to a served model (--job llm-serve)");
    };
    let mut points = Vec::new();
    let mut job = String::new();
    for level in LEVELS {
        let mut s = scenario.clone();
        let mut sv = serving.clone();
        sv.target.interactivity = Some(level);
        sv.target.concurrency = None;
        s.serving = Some(sv);
        let o = RankOptions {
            top: None,
            budget: None,
            ..opts.clone()
        };
        let r = rank(checked, &s, results, &o)?;
        job = r.job.clone();
        let mut best: Vec<&RankRow> = Vec::new();
        for row in &r.rows {
            let Some(sr) = &row.serving else { continue };
            match best.iter_mut().find(|b| b.gpu == row.gpu) {
                Some(b) => {
                    let cur = b
                        .serving
                        .as_ref()
                        .map_or(f64::INFINITY, |x| x.cost_per_million_tokens);
                    if sr.cost_per_million_tokens < cur {
                        *b = row;
                    }
                }
                None => best.push(row),
            }
        }
        for row in best {
            let sr = row.serving.as_ref().expect("filtered");
            points.push(SweepPoint {
                gpu: row.gpu.clone(),
                gpu_name: row.gpu_name.clone(),
                interactivity: level,
                tok_s_per_user: sr.tok_s_per_user,
                tok_s_per_gpu: sr.tok_s_per_gpu,
                total_tok_s_per_gpu: sr.total_tok_s_per_gpu,
                cost_per_million_tokens: sr.cost_per_million_tokens,
                cost_per_million_total_tokens: sr.cost_per_million_total_tokens,
                concurrency: sr.concurrency,
                layout: sr.layout.clone(),
                instance: format!("{} {} ({})", row.provider, row.instance_type, row.region),
                gpu_count: row.gpu_count * row.nodes,
                basis: row.basis,
            });
        }
    }
    let points = frontier(points);
    // GPU types by their cheapest point, the cheapest first.
    let mut gpus: Vec<(String, f64)> = Vec::new();
    for p in &points {
        match gpus.iter_mut().find(|g| g.0 == p.gpu) {
            Some(g) => g.1 = g.1.min(p.cost_per_million_tokens),
            None => gpus.push((p.gpu.clone(), p.cost_per_million_tokens)),
        }
    }
    gpus.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok(Sweep {
        scenario: scenario.id.clone(),
        job,
        currency: opts.currency.clone(),
        pricing: opts.pricing,
        levels: LEVELS.to_vec(),
        gpus: gpus.into_iter().map(|g| g.0).collect(),
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::catalog::Catalog;
    use crate::value::jobs::{Serve, preset};

    #[test]
    fn each_gpu_types_curve_is_its_frontier_monotone_and_reached() {
        let scenario = Serve::chats(preset("deepseek-r1").unwrap(), None)
            .scenario()
            .unwrap();
        let c = Catalog::embedded();
        let s = sweep(&c.checked(), &scenario, &[], &RankOptions::default()).unwrap();
        assert!(s.gpus.len() >= 2, "{:?}", s.gpus);
        for g in &s.gpus {
            let mine: Vec<&SweepPoint> = s.points.iter().filter(|p| &p.gpu == g).collect();
            for w in mine.windows(2) {
                assert!(
                    w[0].interactivity < w[1].interactivity,
                    "{g}: levels in order"
                );
                // A higher level can only cost more: its points serve every lower level.
                assert!(
                    w[1].cost_per_million_tokens >= w[0].cost_per_million_tokens,
                    "{g}: {} at {} under {} at {}",
                    w[1].cost_per_million_tokens,
                    w[1].interactivity,
                    w[0].cost_per_million_tokens,
                    w[0].interactivity
                );
            }
            for p in &mine {
                assert!(p.tok_s_per_user >= p.interactivity * (1.0 - 1e-9), "{p:?}");
            }
        }
    }
}
