//! Entry points for fuzzing the loaders and renderers (used by `fuzz/` and by
//! `tests/it/parsers.rs`): each
//! parses untrusted bytes the way the CLI would and, when they parse, drives what the CLI
//! does next with them (checks, ranking, tables, reports). A panic, a hang or unbounded
//! memory anywhere in here is a bug; a rejection must be an error that says where.

use crate::market::catalog::{Catalog, PricingModel};
use crate::results::ResultsFile;
use crate::value::rank::RankOptions;
use crate::value::scenario::ScenarioFile;

/// The outcome of one input: accepted, or rejected with this message.
pub type Outcome = Result<(), String>;

fn msg(e: anyhow::Error) -> String {
    format!("{e:#}")
}

fn rank_all(c: &Catalog, s: &ScenarioFile, results: &[(String, ResultsFile)]) {
    let checked = c.checked();
    for sc in &s.scenarios {
        for pricing in [PricingModel::OnDemand, PricingModel::Spot] {
            let opts = RankOptions {
                pricing,
                budget: Some(1000.0),
                ..RankOptions::default()
            };
            if let Ok(r) = crate::value::rank::rank(&checked, sc, results, &opts) {
                render_ranking(&r);
            }
        }
    }
}

/// A JSON catalog, as given to `--catalog`.
pub fn catalog_json(data: &[u8]) -> Outcome {
    let text = std::str::from_utf8(data).map_err(|e| format!("fuzz.json: not UTF-8: {e}"))?;
    let c = Catalog::parse(text, "fuzz.json").map_err(msg)?;
    let mut all = Catalog::embedded();
    all.extend(c.clone());
    rank_all(&c, &ScenarioFile::embedded(), &[]);
    rank_all(&all, &ScenarioFile::embedded(), &[]);
    Ok(())
}

/// A SkyPilot-style CSV catalog, as given to `--catalog-add FILE.csv`.
pub fn catalog_csv(data: &[u8]) -> Outcome {
    let c = crate::market::catalog::csv_import::parse(data, "fuzz/aws.csv", "aws", "2026-01-01")
        .map_err(msg)?;
    let mut all = Catalog::embedded();
    all.extend(c);
    rank_all(&all, &ScenarioFile::embedded(), &[]);
    Ok(())
}

/// An AWS Price List offer file, as `catalog update --source aws` streams it; what it keeps
/// is checked as the snapshot's rows would be.
#[cfg(not(target_arch = "wasm32"))]
pub fn aws_offer(data: &[u8]) -> Outcome {
    let offer = crate::market::feeds::aws::parse_reader(data, "us-east-1")
        .map_err(|e| format!("fuzz/index.csv: {e}"))?;
    let mut all = Catalog::embedded();
    all.extend(offer.into_catalog("https://fuzz/index.csv", "2026-01-01T00:00:00Z", "00"));
    let _ = all.check();
    Ok(())
}

/// A page of Azure's Retail Prices API, as `catalog update --source azure` reads each.
#[cfg(not(target_arch = "wasm32"))]
pub fn azure_page(data: &[u8]) -> Outcome {
    let text = std::str::from_utf8(data).map_err(|e| format!("fuzz-page.json: not UTF-8: {e}"))?;
    let (c, _next) = crate::market::feeds::azure::page_rows(text, "fuzz-page.json").map_err(msg)?;
    let mut all = Catalog::embedded();
    all.extend(c);
    let _ = all.check();
    Ok(())
}

/// An answer of a price API (Lambda's instance types, Vast's offers, RunPod's gpuTypes, OCI's estimator files, Alibaba's
/// DescribePrice, Tencent's InquiryPriceRunInstances): every reader of the keyed and POST
/// sources is given the same bytes.
#[cfg(not(target_arch = "wasm32"))]
pub fn feed_answers(data: &[u8]) -> Outcome {
    let name = "fuzz-answer.json";
    let mut all = Catalog::embedded();
    let mut any_ok = false;
    let mut errors = Vec::new();
    match crate::market::feeds::lambda::rows(data, "2026-01-01T00:00:00Z", "00") {
        Ok(c) => {
            all.extend(c);
            any_ok = true;
        }
        Err(e) => errors.push(format!("{name}: lambda: {e:#}")),
    }
    match crate::market::feeds::vast::rows(data, "2026-01-01T00:00:00Z", "00") {
        Ok((c, _)) => {
            all.extend(c);
            any_ok = true;
        }
        Err(e) => errors.push(format!("{name}: vast: {e:#}")),
    }
    match crate::market::feeds::runpod::rows(data, "2026-01-01T00:00:00Z", "00") {
        Ok(c) => {
            all.extend(c);
            any_ok = true;
        }
        Err(e) => errors.push(format!("{name}: runpod: {e:#}")),
    }
    // dstack's gpuhunt: the archive reader, and its CSV reader on the same bytes.
    match crate::market::feeds::gpuhunt::csv_of(data, "oci") {
        Ok(_) => any_ok = true,
        Err(e) => errors.push(format!("{name}: gpuhunt zip: {e:#}")),
    }
    if let Ok(text) = std::str::from_utf8(data) {
        match crate::market::feeds::gpuhunt::rows(
            text,
            "oci",
            "oci",
            "1",
            "2026-01-01T00:00:00Z",
            "00",
        ) {
            Ok((rows, _)) => {
                all.extend(Catalog::of_rows("fuzz", "fuzz", rows));
                any_ok = true;
            }
            Err(e) => errors.push(format!("{name}: gpuhunt csv: {e:#}")),
        }
    }
    // A page of GCP's Billing Catalog.
    match crate::market::feeds::gcp::page(data) {
        Ok((skus, _)) => {
            all.extend(crate::market::feeds::gcp::rows(&skus, "2026-01-01T00:00:00Z").0);
            any_ok = true;
        }
        Err(e) => errors.push(format!("{name}: gcp: {e:#}")),
    }
    // OCI's estimator: the same bytes as its shapes and as its price list.
    match crate::market::feeds::oci::rows(data, data, "2026-01-01T00:00:00Z") {
        Ok((c, _)) => {
            all.extend(c);
            any_ok = true;
        }
        Err(e) => errors.push(format!("{name}: oci: {e:#}")),
    }
    match crate::market::feeds::alibaba::instance_price(data) {
        Ok(_) => any_ok = true,
        Err(e) => errors.push(format!("{name}: alibaba: {e:#}")),
    }
    match crate::market::feeds::tencent::unit_price(data) {
        Ok(_) => any_ok = true,
        Err(e) => errors.push(format!("{name}: tencent: {e:#}")),
    }
    let _ = all.check();
    if any_ok {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// A snapshot manifest, as `catalog update --list` and every command's merge read it.
#[cfg(not(target_arch = "wasm32"))]
pub fn snapshot_manifest(data: &[u8]) -> Outcome {
    let text =
        std::str::from_utf8(data).map_err(|e| format!("fuzz-manifest.json: not UTF-8: {e}"))?;
    let m: crate::market::feeds::snapshot::Manifest =
        crate::files::parse_json(text, "fuzz-manifest.json").map_err(msg)?;
    let _ = crate::market::feeds::merge::provenance(&[crate::market::feeds::snapshot::InUse {
        name: "fuzz".into(),
        manifest: m,
        catalog: crate::market::catalog::Catalog::of_rows("", "", Vec::new()),
        risks: Vec::new(),
        embedded: false,
    }]);
    Ok(())
}

/// A ranking in every format it is shown in: the table (every row, with details), Markdown
/// and CSV.
fn render_ranking(r: &crate::value::rank::RankReport) {
    let view = crate::report::rank::View {
        rows: usize::MAX,
        details: true,
    };
    let _ = crate::report::rank::table(r, view);
    let _ = crate::report::rank::markdown(r);
    let _ = crate::report::rank::csv(r);
}

/// A scenarios file, as given to `--scenarios`.
pub fn scenarios(data: &[u8]) -> Outcome {
    let text =
        std::str::from_utf8(data).map_err(|e| format!("fuzz-scenarios.json: not UTF-8: {e}"))?;
    let s = ScenarioFile::parse(text, "fuzz-scenarios.json").map_err(msg)?;
    rank_all(&Catalog::embedded(), &s, &[]);
    Ok(())
}

/// The bytes as a results file, or the error as `ResultsFile::load` reports it: the
/// file's name, then the parser's message.
fn parse_results(data: &[u8]) -> Result<ResultsFile, String> {
    let text =
        std::str::from_utf8(data).map_err(|e| format!("fuzz-results.json: not UTF-8: {e}"))?;
    ResultsFile::parse(text).map_err(|e| format!("results file fuzz-results.json: {}", msg(e)))
}

/// A results file, as given to `show`, `rank --results`, `compare` and `report`.
pub fn results(data: &[u8]) -> Outcome {
    let r = parse_results(data)?;
    let _ = crate::report::table::results(&r);
    let _ = crate::measuring::probes::double::summary(&r.probes);
    let named = vec![("fuzz-results.json".to_string(), r.clone())];
    rank_all(&Catalog::embedded(), &ScenarioFile::embedded(), &named);
    let c = crate::measuring::compare::compare("a.json", &r, "b.json", &r, 5.0, false);
    let _ = crate::report::compare::table(&c);
    let _ = crate::report::compare::markdown(&c);
    let _ = crate::report::render(&named, &[], &Catalog::embedded());
    Ok(())
}

/// A results file, as given to `report`: both reports (HTML with its SVG charts, and
/// Markdown) with every embedded scenario ranked on it, and the rank table, Markdown and CSV.
pub fn report(data: &[u8]) -> Outcome {
    let r = parse_results(data)?;
    let named = vec![("fuzz-results.json".to_string(), r)];
    let c = Catalog::embedded();
    let checked = c.checked();
    let mut ranks = Vec::new();
    for sc in &ScenarioFile::embedded().scenarios {
        let opts = RankOptions::default();
        if let Ok(r) = crate::value::rank::rank(&checked, sc, &named, &opts) {
            render_ranking(&r);
            ranks.push(r);
        }
    }
    let _ = crate::report::render(&named, &ranks, &c);
    Ok(())
}

/// A results file as NEW in `compare` against the lavapipe fixture as BASE, and the other
/// way round, as `compare` reads them (figures unchecked: the gate names bad ones).
pub fn compare(data: &[u8]) -> Outcome {
    let text =
        std::str::from_utf8(data).map_err(|e| format!("fuzz-results.json: not UTF-8: {e}"))?;
    let new = ResultsFile::parse_unchecked(text)
        .map_err(|e| format!("results file fuzz-results.json: {}", msg(e)))?;
    let base = ResultsFile::parse(include_str!("../tests/fixtures/results-lavapipe.json"))
        .map_err(|e| format!("fixture: {}", msg(e)))?;
    for c in [
        crate::measuring::compare::compare(
            "base.json",
            &base,
            "fuzz-results.json",
            &new,
            0.05,
            false,
        ),
        crate::measuring::compare::compare(
            "fuzz-results.json",
            &new,
            "base.json",
            &base,
            0.05,
            false,
        ),
    ] {
        let _ = crate::report::compare::table(&c);
        let _ = crate::report::compare::markdown(&c);
        let _ = serde_json::to_string(&c);
    }
    Ok(())
}
