//! The serving model judged where it was not fitted: leave-one-group-out cross-validation.
//! Each source (a benchmark round, a vendor's table at one commit), each model and each GPU
//! type is held out whole in turn, the per-vendor fits are refitted on every other published
//! run, and the held-out group is estimated with them. A random split of points from the
//! same sweeps is nearly in-sample; this is what a buyer meets on a model, GPU or harness the
//! fit never saw. Published times to first token are scored beside the throughput.

use crate::value::calibration::TOLERANCE;
use crate::value::scenario::serving::{Fit, FitFile, VendorFit};
use crate::value::serving_calibration::{Prepared, ServingPoint, TIE_QUANTILE, fit_with_engines};
use serde::Serialize;

/// What a cross-validation holds out whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grouping {
    /// A benchmark round or a vendor's table: one repository at one commit.
    Source,
    Model,
    Gpu,
}

impl Grouping {
    pub const ALL: [Grouping; 3] = [Grouping::Source, Grouping::Model, Grouping::Gpu];

    pub fn name(self) -> &'static str {
        match self {
            Grouping::Source => "source",
            Grouping::Model => "model",
            Grouping::Gpu => "GPU",
        }
    }

    /// The group a published run belongs to.
    pub fn of(self, p: &ServingPoint) -> String {
        match self {
            Grouping::Source => source_group(&p.source),
            Grouping::Model => p.model.clone(),
            Grouping::Gpu => p.gpu.clone(),
        }
    }
}

/// A source's group: the repository and the commit's first 7 hex digits, however the
/// source text writes them ("owner/repo@commit:path#row", "owner/repo path @ commit, ...").
pub fn source_group(source: &str) -> String {
    let repo = source
        .split(|c: char| c.is_whitespace() || c == '@' || c == ',')
        .next()
        .unwrap_or("");
    let commit: Option<String> = source.split_once('@').map(|(_, rest)| {
        rest.trim_start()
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .take(7)
            .collect()
    });
    match commit {
        Some(c) if c.len() == 7 => format!("{repo}@{c}"),
        // No commit: the text up to its first comma or parenthesis.
        _ => crate::text::prefix(source.split([',', '(']).next().unwrap_or(""), 80)
            .trim()
            .to_string(),
    }
}

/// How the model did on one held-out group (or on all of them pooled).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Score {
    pub group: String,
    pub points: usize,
    /// Points the model could not run (counted as misses).
    pub not_run: usize,
    /// Share of the points within 1.5x.
    pub within: f64,
    /// Median estimate / published (NaN without a point the model runs).
    pub median: f64,
    /// Points with a published time to first token.
    pub ttft_points: usize,
    /// Share of those whose estimated TTFT is within 1.5x.
    pub ttft_within: f64,
    pub ttft_median: f64,
}

/// One point's held-out estimate: the throughput and TTFT ratios (None: not run / none
/// published).
#[derive(Clone, Copy, Debug)]
struct Held {
    ratio: Option<f64>,
    ttft_ratio: Option<f64>,
    ttft_published: bool,
}

fn within(r: f64) -> bool {
    (1.0 / TOLERANCE..=TOLERANCE).contains(&r)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 2]
}

fn score(group: String, held: &[Held]) -> Score {
    let ratios: Vec<f64> = held.iter().filter_map(|h| h.ratio).collect();
    let ttfts: Vec<f64> = held.iter().filter_map(|h| h.ttft_ratio).collect();
    let ttft_points = held.iter().filter(|h| h.ttft_published).count();
    Score {
        group,
        points: held.len(),
        not_run: held.len() - ratios.len(),
        within: ratios.iter().filter(|r| within(**r)).count() as f64 / held.len().max(1) as f64,
        median: median(ratios),
        ttft_points,
        ttft_within: ttfts.iter().filter(|r| within(**r)).count() as f64
            / ttft_points.max(1) as f64,
        ttft_median: median(ttfts),
    }
}

impl Held {
    /// One point estimated under `fit`.
    fn of(p: &Prepared, fit: Fit) -> Held {
        let (ratio, ttft_ratio) = match p.estimate(fit) {
            Ok(pt) => (Some(p.figure(&pt) / p.point.published), p.ttft_ratio(&pt)),
            Err(_) => (None, None),
        };
        Held {
            ratio,
            ttft_ratio,
            ttft_published: p.point.ttft_s.is_some_and(|t| t > 0.0),
        }
    }
}

/// Every group of `grouping` held out in turn: the fits refitted (from `start`) without it,
/// then its points estimated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrossValidation {
    pub grouping: Grouping,
    /// Every held-out prediction pooled (each point is held out exactly once).
    pub all: Score,
    pub groups: Vec<Score>,
}

/// Every vendor refitted on the points marked fit (`serving_calibration::refit`) and the
/// tie band recomputed by leave-one-source-out cross-validation, to two decimals: what
/// `calibration --fit-serving` prints as `src/data/serving.json`.
pub fn refit(prepared: &[Prepared], fits: &FitFile) -> FitFile {
    let mut new = crate::value::serving_calibration::refit(prepared, fits);
    if let Some(miss) = cross_validated_miss(prepared, &new) {
        new.held_out_miss = (miss * 100.0).round() / 100.0;
    }
    new
}

/// The tie band: the miss (max(ratio, 1/ratio)) at [`TIE_QUANTILE`] of every point
/// estimated with its whole source held out; a point the model cannot run counts as a
/// miss of 2x. None without points.
pub fn cross_validated_miss(prepared: &[Prepared], start: &FitFile) -> Option<f64> {
    let (_, results) = held_out_groups(prepared, start, Grouping::Source);
    let mut misses: Vec<f64> = results
        .iter()
        .flatten()
        .map(|h| h.ratio.map_or(2.0, |r| r.max(1.0 / r)))
        .collect();
    misses.sort_by(f64::total_cmp);
    let i = ((misses.len().checked_sub(1)?) as f64 * TIE_QUANTILE).round() as usize;
    misses.get(i).copied()
}

pub fn cross_validate(
    prepared: &[Prepared],
    start: &FitFile,
    grouping: Grouping,
) -> CrossValidation {
    let (groups, results) = held_out_groups(prepared, start, grouping);
    let pooled: Vec<Held> = results.iter().flatten().copied().collect();
    CrossValidation {
        grouping,
        all: score("all".into(), &pooled),
        groups: groups
            .into_iter()
            .zip(&results)
            .map(|(g, h)| score(g, h))
            .collect(),
    }
}

/// The disaggregated runs (prefill and decode on separate pools), which the fits never
/// use, estimated with `fits`: how the disaggregated model does out of sample. None
/// without such runs.
pub fn disaggregated(prepared: &[Prepared], fits: &FitFile) -> Option<Score> {
    let held: Vec<Held> = prepared
        .iter()
        .filter(|p| !p.fitted_on())
        .map(|p| Held::of(p, p.fit_in(fits)))
        .collect();
    (!held.is_empty()).then(|| score("disaggregated runs (never fitted)".into(), &held))
}

/// Each group of `grouping` and its points' estimates with the group held out.
fn held_out_groups(
    prepared: &[Prepared],
    start: &FitFile,
    grouping: Grouping,
) -> (Vec<String>, Vec<Vec<Held>>) {
    // Disaggregated runs are scored apart ([`disaggregated`]): the model is not fitted on them.
    let prepared: Vec<&Prepared> = prepared.iter().filter(|p| p.fitted_on()).collect();
    let keys: Vec<String> = prepared.iter().map(|p| grouping.of(p.point)).collect();
    let mut groups: Vec<String> = keys.clone();
    groups.sort();
    groups.dedup();
    let one = |g: &String| -> Vec<Held> {
        let fits = FitFile {
            fits: start
                .fits
                .iter()
                .map(|v| {
                    let train: Vec<&Prepared> = prepared
                        .iter()
                        .zip(&keys)
                        .filter(|(p, k)| *k != g && p.vendor.eq_ignore_ascii_case(&v.vendor))
                        .map(|(p, _)| *p)
                        .collect();
                    // From the prior, never from the stored fits: those saw the held-out
                    // group, and a parameter its points alone decide would keep their value.
                    let (fit, engines) = fit_with_engines(&train, Fit::PRIOR);
                    VendorFit {
                        fit,
                        engines,
                        ..v.clone()
                    }
                })
                .collect(),
            ..start.clone()
        };
        prepared
            .iter()
            .zip(&keys)
            .filter(|(_, k)| *k == g)
            .map(|(p, _)| Held::of(p, p.fit_in(&fits)))
            .collect()
    };
    // Two threads: the refits are independent.
    let results: Vec<Vec<Held>> = std::thread::scope(|s| {
        let (a, b) = groups.split_at(groups.len() / 2);
        let first = s.spawn(|| a.iter().map(one).collect::<Vec<_>>());
        let mut second: Vec<Vec<Held>> = b.iter().map(one).collect();
        let mut all = first.join().expect("a cross-validation thread");
        all.append(&mut second);
        all
    });
    (groups, results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::catalog::Catalog;
    use crate::value::serving_calibration::{PointsFile, prepare_all};

    #[test]
    fn the_engines_named_under_a_ranking_are_those_of_the_points() {
        let file = PointsFile::embedded();
        let fitted: Vec<&ServingPoint> = file
            .points
            .iter()
            .filter(|p| p.disaggregated.is_none())
            .collect();
        let recent = fitted
            .iter()
            .filter(|p| p.date.as_str() >= "2025-09")
            .count() as f64
            / fitted.len() as f64;
        let stated = format!("{:.0}% of them from September 2025", recent * 100.0);
        assert!(
            crate::value::scenario::serving::ENGINES.contains(&stated),
            "{stated}"
        );
    }

    #[test]
    fn the_stored_tie_band_is_the_leave_one_source_out_miss() {
        let file = PointsFile::embedded();
        let prepared = prepare_all(&file, &Catalog::embedded()).unwrap();
        let fits = FitFile::embedded();
        let miss = cross_validated_miss(&prepared, &fits).unwrap();
        assert!(
            (fits.held_out_miss - miss).abs() < 0.006,
            "stored {}, recomputed {miss}",
            fits.held_out_miss
        );
        // Whole sources held out: most runs still land within 1.5x (README quotes it).
        let cv = cross_validate(&prepared, &fits, Grouping::Source);
        assert!(cv.all.within >= 0.75, "{:?}", cv.all);
        let aggregated = file
            .points
            .iter()
            .filter(|p| p.disaggregated.is_none())
            .count();
        assert_eq!(cv.all.points, aggregated);
    }

    #[test]
    fn sources_group_by_repository_and_commit_however_written() {
        assert_eq!(
            source_group("NVIDIA/TensorRT-LLM@258c7540c03517def55d9a5aadfa9288af474e1b:docs/x.md"),
            "NVIDIA/TensorRT-LLM@258c754"
        );
        assert_eq!(
            source_group(
                "NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @ 258c7540c03517def55d9a5aadfa9288af474e1b (data)"
            ),
            "NVIDIA/TensorRT-LLM@258c754"
        );
        assert_eq!(
            source_group(
                "mlcommons/inference_results_v5.1 summary_results.json @ 965182b (2025-09-09), closed/x"
            ),
            source_group(
                "mlcommons/inference_results_v5.1@965182b03376a00fcae415c54e560e1c83937932:summary_results.json"
            )
        );
        assert_eq!(
            source_group("AMD ROCm docs, vLLM table (2025)"),
            "AMD ROCm docs"
        );
    }
}

#[cfg(test)]
mod per_user {
    use crate::market::catalog::Catalog;
    use crate::value::calibration::TOLERANCE;
    use crate::value::scenario::serving::FitFile;
    use crate::value::serving_calibration::{PointsFile, prepare_all};

    /// Per-user speed at low concurrency (1 to 4 requests in flight), where fixed costs
    /// rule: the estimate's tokens/s per user against the published one, per vendor.
    #[test]
    fn per_user_speed_at_a_few_requests_lands_within_1_5x_on_nvidia_and_amd() {
        let file = PointsFile::embedded();
        let prepared = prepare_all(&file, &Catalog::embedded()).unwrap();
        let fits = FitFile::embedded();
        // Measured 2026-12-07: NVIDIA 95% of 239 (median 0.89), AMD 70% of 160 (median 1.24:
        // the AMD fit runs a few requests too fast; docs/ranking-model.md says so).
        for (vendor, floor) in [("NVIDIA", 0.9), ("AMD", 0.65)] {
            let fit = fits.fits.iter().find(|f| f.vendor == vendor).unwrap().fit;
            let ratios: Vec<f64> = prepared
                .iter()
                .filter(|p| p.vendor == vendor)
                .filter(|p| p.point.concurrency.is_some_and(|c| c <= 4.0))
                .filter_map(|p| {
                    let published = p.point.tok_s_per_user?;
                    let pt = p.estimate(fit).ok()?;
                    Some(pt.tok_s_per_user / published)
                })
                .collect();
            assert!(ratios.len() >= 20, "{vendor}: {} points", ratios.len());
            let within = ratios
                .iter()
                .filter(|r| (1.0 / TOLERANCE..=TOLERANCE).contains(*r))
                .count() as f64
                / ratios.len() as f64;
            let mut sorted = ratios.clone();
            sorted.sort_by(f64::total_cmp);
            eprintln!(
                "{vendor}: {within:.2} of {} within 1.5x, median {:.2}",
                ratios.len(),
                sorted[sorted.len() / 2]
            );
            assert!(within >= floor, "{vendor}: {within} of {}", ratios.len());
        }
    }
}
