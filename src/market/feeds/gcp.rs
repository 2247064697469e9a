//! `gcp` (needs `GCP_API_KEY`): the Cloud Billing Catalog API's Compute Engine SKUs,
//! `GET https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?key=KEY`, paged by
//! `nextPageToken`. Google prices a GPU machine as the sum of its parts: vCPUs at its family's
//! "Instance Core" SKU, memory at its "Instance Ram" SKU (per GiB-hour) and each GPU at the
//! GPU's SKU, per region (`serviceRegions`). On demand (`usageType` OnDemand), spot
//! (Preemptible: "Spot Preemptible ..." SKUs) and committed use (Commit1Yr, Commit3Yr) each
//! sum their own three parts; a kind with a part missing in a region is not priced there.
//!
//! The machine types are the accelerator-optimized ones whose shape Google documents (A2
//! Standard and Ultra, A3 High, G2): the table below, from the Compute Engine documentation's
//! accelerator-optimized machine family page. A3 machines also carry local SSD, billed
//! apart at the Local SSD SKU and not in these sums (said on each row).
//!
//! The key travels in the query string: it is never recorded (the URL a manifest keeps is the
//! one a mirror is asked, without it), never logged, never in an error.

use super::http::{Client, Request};
use super::{Fetch, Source};
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

pub const SKUS: &str = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus";
const KEY: &str = "GCP_API_KEY";
const PAGE_SIZE: &str = "5000";
const MAX_PAGES: usize = 200;
const DOC: &str = "https://cloud.google.com/compute/docs/accelerator-optimized-machines";

/// A machine type: name, family (the core and RAM SKUs' prefix), GPU SKU name, catalog GPU,
/// GPUs, vCPUs, memory in GiB.
struct Machine {
    name: &'static str,
    family: &'static str,
    gpu_sku: &'static str,
    gpu: &'static str,
    gpus: u32,
    vcpu: u32,
    ram_gib: f64,
}

const fn m(
    name: &'static str,
    family: &'static str,
    gpu_sku: &'static str,
    gpu: &'static str,
    gpus: u32,
    vcpu: u32,
    ram_gib: f64,
) -> Machine {
    Machine {
        name,
        family,
        gpu_sku,
        gpu,
        gpus,
        vcpu,
        ram_gib,
    }
}

#[rustfmt::skip]
const MACHINES: &[Machine] = &[
    m("a2-highgpu-1g", "A2", "A100", "a100-40gb-sxm", 1, 12, 85.0),
    m("a2-highgpu-2g", "A2", "A100", "a100-40gb-sxm", 2, 24, 170.0),
    m("a2-highgpu-4g", "A2", "A100", "a100-40gb-sxm", 4, 48, 340.0),
    m("a2-highgpu-8g", "A2", "A100", "a100-40gb-sxm", 8, 96, 680.0),
    m("a2-megagpu-16g", "A2", "A100", "a100-40gb-sxm", 16, 96, 1360.0),
    m("a2-ultragpu-1g", "A2", "A100 80GB", "a100-80gb-sxm", 1, 12, 170.0),
    m("a2-ultragpu-2g", "A2", "A100 80GB", "a100-80gb-sxm", 2, 24, 340.0),
    m("a2-ultragpu-4g", "A2", "A100 80GB", "a100-80gb-sxm", 4, 48, 680.0),
    m("a2-ultragpu-8g", "A2", "A100 80GB", "a100-80gb-sxm", 8, 96, 1360.0),
    m("a3-highgpu-1g", "A3", "H100 80GB", "h100-sxm", 1, 26, 234.0),
    m("a3-highgpu-2g", "A3", "H100 80GB", "h100-sxm", 2, 52, 468.0),
    m("a3-highgpu-4g", "A3", "H100 80GB", "h100-sxm", 4, 104, 936.0),
    m("a3-highgpu-8g", "A3", "H100 80GB", "h100-sxm", 8, 208, 1872.0),
    m("g2-standard-4", "G2", "L4", "l4", 1, 4, 16.0),
    m("g2-standard-8", "G2", "L4", "l4", 1, 8, 32.0),
    m("g2-standard-12", "G2", "L4", "l4", 1, 12, 48.0),
    m("g2-standard-16", "G2", "L4", "l4", 1, 16, 64.0),
    m("g2-standard-24", "G2", "L4", "l4", 2, 24, 96.0),
    m("g2-standard-32", "G2", "L4", "l4", 1, 32, 128.0),
    m("g2-standard-48", "G2", "L4", "l4", 4, 48, 192.0),
    m("g2-standard-96", "G2", "L4", "l4", 8, 96, 384.0),
];

pub struct Gcp;

impl Source for Gcp {
    fn name(&self) -> &'static str {
        "gcp"
    }
    fn about(&self) -> &'static str {
        "Google Cloud's Billing Catalog (Compute Engine SKUs summed per GPU machine type), with your key: GCP_API_KEY"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!("{SKUS}?key=... (then each nextPageToken)")]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["gcp"]
    }
    fn embedded_marker(&self) -> &'static str {
        "Cyclenerd/google-cloud-pricing-cost-calculator"
    }
    fn needs(&self) -> &'static [&'static str] {
        &[KEY]
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let Some(key) = super::env_key(KEY) else {
            bail!("needs {KEY}");
        };
        let fetched_at = super::now();
        let mut token: Option<String> = None;
        let mut seen = HashSet::new();
        let (mut skus, mut files) = (Vec::new(), Vec::new());
        loop {
            let mut mirror = vec![
                ("currencyCode".to_string(), "USD".to_string()),
                ("pageSize".to_string(), PAGE_SIZE.to_string()),
            ];
            if let Some(t) = &token {
                if !seen.insert(t.clone()) {
                    bail!("nextPageToken {t:?} came back: a loop");
                }
                mirror.push(("pageToken".to_string(), t.clone()));
            }
            if files.len() >= MAX_PAGES {
                bail!("more than {MAX_PAGES} pages: refused");
            }
            let query: Vec<String> =
                std::iter::once(format!("key={}", super::http::query_escape(&key)))
                    .chain(
                        mirror
                            .iter()
                            .map(|(k, v)| format!("{k}={}", super::http::query_escape(v))),
                    )
                    .collect();
            let req = Request {
                url: format!("{SKUS}?{}", query.join("&")),
                body: None,
                headers: Vec::new(),
                mirror,
            };
            let f = http.send(&req).map_err(|e| anyhow::anyhow!("{e}"))?;
            let (page, next) = page(&f.body).with_context(|| f.meta.url.clone())?;
            skus.extend(page);
            files.push(f.meta.record(&fetched_at));
            match next {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        let n = skus.len();
        let (catalog, mut notes) = rows(&skus, &fetched_at);
        notes.insert(
            0,
            format!(
                "{} pages, {n} SKUs, {} machine types and regions",
                files.len(),
                catalog.instances.len()
            ),
        );
        Ok(Fetch {
            catalog,
            risks: Vec::new(),
            files,
            notes,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    #[serde(default)]
    skus: Vec<Sku>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Sku {
    #[serde(default)]
    sku_id: String,
    description: String,
    #[serde(default)]
    category: Category,
    #[serde(default)]
    service_regions: Vec<String>,
    #[serde(default)]
    pricing_info: Vec<PricingInfo>,
}

#[derive(Deserialize, Clone, Default)]
#[serde(rename_all = "camelCase")]
struct Category {
    #[serde(default)]
    resource_group: String,
    #[serde(default)]
    usage_type: String,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct PricingInfo {
    pricing_expression: Expression,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Expression {
    #[serde(default)]
    usage_unit: String,
    #[serde(default)]
    tiered_rates: Vec<Rate>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Rate {
    #[serde(default)]
    start_usage_amount: f64,
    unit_price: Money,
}

/// Google's Money: whole `units` (an int64, sent as a string) and `nanos`.
#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Money {
    #[serde(default)]
    currency_code: String,
    #[serde(default)]
    units: serde_json::Value,
    #[serde(default)]
    nanos: i64,
}

impl Money {
    fn amount(&self) -> Option<f64> {
        let units = match &self.units {
            serde_json::Value::String(s) => s.trim().parse::<i64>().ok()?,
            serde_json::Value::Number(n) => n.as_i64()?,
            serde_json::Value::Null => 0,
            _ => return None,
        };
        if !(0..1_000_000_000).contains(&self.nanos) || units < 0 {
            return None;
        }
        // One division: units + nanos / 1e9 would round twice (2.9339079999999997).
        Some((units as f64 * 1e9 + self.nanos as f64) / 1e9)
    }
}

/// One page: its SKUs and the next page's token (the fuzz target's entry too).
pub fn page(body: &[u8]) -> Result<(Vec<Sku>, Option<String>)> {
    let text = std::str::from_utf8(body).context("not UTF-8")?;
    let p: Page = crate::files::parse_json(text, "skus")?;
    Ok((p.skus, p.next_page_token.filter(|t| !t.trim().is_empty())))
}

/// What a SKU prices: ("core" | "ram" | "gpu", family or GPU name).
fn part_of(description: &str) -> Option<(&'static str, String)> {
    let mut d = description.trim();
    for prefix in [
        "Spot Preemptible ",
        "Preemptible ",
        "Commitment v1: ",
        "Commitment v2: ",
        "Commitment: ",
    ] {
        d = d.strip_prefix(prefix).unwrap_or(d);
    }
    let words: Vec<&str> = d.split_whitespace().collect();
    match words.as_slice() {
        [family, "Instance", "Core", ..] => Some(("core", family.to_ascii_uppercase())),
        [family, "Instance", "Ram", ..] => Some(("ram", family.to_ascii_uppercase())),
        ["Nvidia", rest @ ..] => {
            let end = rest.iter().position(|w| *w == "GPU" || *w == "Gpu")?;
            let name: Vec<&str> = rest[..end]
                .iter()
                .copied()
                .filter(|w| *w != "Tesla")
                .collect();
            (!name.is_empty()).then(|| ("gpu", name.join(" ")))
        }
        _ => None,
    }
}

fn model_of(usage: &str) -> Option<PricingModel> {
    Some(match usage {
        "OnDemand" => PricingModel::OnDemand,
        "Preemptible" => PricingModel::Spot,
        "Commit1Yr" => PricingModel::Reserved1y,
        "Commit3Yr" => PricingModel::Reserved3y,
        _ => return None,
    })
}

/// A part's price per hour (per GiB-hour for RAM): the first tier's, in USD.
fn hourly(s: &Sku, part: &str) -> Option<f64> {
    let info = s.pricing_info.last()?;
    let want = if part == "ram" { "GiBy.h" } else { "h" };
    if info.pricing_expression.usage_unit != want {
        return None;
    }
    let rate = info
        .pricing_expression
        .tiered_rates
        .iter()
        .find(|r| r.start_usage_amount == 0.0)?;
    (rate.unit_price.currency_code == "USD")
        .then(|| rate.unit_price.amount())
        .flatten()
}

type Parts = BTreeMap<(&'static str, String, PricingModel, String), (f64, String)>;

/// The SKUs' rows: one per machine type and region with an on-demand price, and the notes.
pub fn rows(skus: &[Sku], fetched_at: &str) -> (Catalog, Vec<String>) {
    // (part, family or GPU, kind, region) -> (price, SKU id)
    let mut parts: Parts = BTreeMap::new();
    let mut unread = 0;
    for s in skus {
        let (Some((part, what)), Some(model)) =
            (part_of(&s.description), model_of(&s.category.usage_type))
        else {
            continue;
        };
        if part == "gpu"
            && s.category.resource_group != "GPU"
            && !s.category.resource_group.is_empty()
        {
            continue;
        }
        let Some(v) = hourly(s, part) else {
            unread += 1;
            continue;
        };
        for r in &s.service_regions {
            let e = parts
                .entry((part, what.clone(), model, r.clone()))
                .or_insert((v, s.sku_id.clone()));
            if v < e.0 {
                *e = (v, s.sku_id.clone());
            }
        }
    }
    let regions: std::collections::BTreeSet<String> = parts.keys().map(|k| k.3.clone()).collect();
    let mut instances = Vec::new();
    for mt in MACHINES {
        for region in &regions {
            if let Some(i) = machine_row(mt, region, &parts, fetched_at) {
                instances.push(i);
            }
        }
    }
    let mut notes = Vec::new();
    if unread > 0 {
        notes.push(format!(
            "{unread} SKUs of a GPU, core or RAM part with no hourly USD first tier, not used"
        ));
    }
    (
        Catalog::of_rows(
            "GCP Cloud Billing Catalog",
            "gcp billing catalog",
            instances,
        ),
        notes,
    )
}

/// A machine type's row in a region: each kind of price whose three parts are all priced
/// there; None without an on-demand price.
fn machine_row(mt: &Machine, region: &str, parts: &Parts, fetched_at: &str) -> Option<Instance> {
    let mut prices = BTreeMap::new();
    let mut how = String::new();
    for model in [
        PricingModel::OnDemand,
        PricingModel::Spot,
        PricingModel::Reserved1y,
        PricingModel::Reserved3y,
    ] {
        let get = |part: &'static str, what: &str| {
            parts.get(&(part, what.to_string(), model, region.to_string()))
        };
        let (Some(core), Some(ram), Some(gpu)) = (
            get("core", mt.family),
            get("ram", mt.family),
            get("gpu", mt.gpu_sku),
        ) else {
            continue;
        };
        let total = mt.vcpu as f64 * core.0 + mt.ram_gib * ram.0 + mt.gpus as f64 * gpu.0;
        if model == PricingModel::OnDemand {
            how = format!(
                "on demand {} vCPU x {} + {} GiB x {} + {} x {} {} (SKUs {}, {}, {}), summed",
                mt.vcpu,
                core.0,
                mt.ram_gib,
                ram.0,
                mt.gpus,
                mt.gpu_sku,
                gpu.0,
                core.1,
                ram.1,
                gpu.1
            );
        }
        prices.insert(model, Price::list_usd(total));
    }
    if !prices.contains_key(&PricingModel::OnDemand) {
        return None;
    }
    let ssd = if mt.family == "A3" {
        "; its local SSD is billed apart and not included"
    } else {
        ""
    };
    Some(Instance {
        provider: "gcp".into(),
        instance_type: mt.name.into(),
        region: region.to_string(),
        gpu: mt.gpu.into(),
        gpu_count: mt.gpus,
        vcpu: Some(mt.vcpu),
        ram_gib: Some(mt.ram_gib),
        gpu_memory_gb: None,
        prices,
        source: format!(
            "GCP Cloud Billing Catalog API ({SKUS}), fetched {fetched_at}; machine shape from {DOC}"
        ),
        as_of: fetched_at[..10].to_string(),
        confidence: Confidence::High,
        retired: None,
        notes: Some(format!("{how}{ssd}")),
        interconnect: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sku_descriptions_name_their_part_in_every_wording() {
        for (d, want) in [
            (
                "Nvidia Tesla A100 GPU running in Americas",
                Some(("gpu", "A100")),
            ),
            (
                "Nvidia Tesla A100 80GB GPU running in EMEA",
                Some(("gpu", "A100 80GB")),
            ),
            (
                "Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in Americas",
                Some(("gpu", "H100 80GB")),
            ),
            (
                "Nvidia H100 80GB Mega GPU running in Belgium",
                Some(("gpu", "H100 80GB Mega")),
            ),
            (
                "Commitment v1: Nvidia L4 GPU in Frankfurt for 1 Year",
                Some(("gpu", "L4")),
            ),
            (
                "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Warsaw",
                Some(("gpu", "T4")),
            ),
            (
                "Spot Preemptible A3 Instance Core running in Americas",
                Some(("core", "A3")),
            ),
            ("A2 Instance Ram running in Americas", Some(("ram", "A2"))),
            (
                "Commitment v1: A2 Instance Core in Iowa for 3 Years",
                Some(("core", "A2")),
            ),
            ("N2 Instance Core running in Paris", Some(("core", "N2"))),
            ("Network Egress", None),
            ("Nvidia", None),
        ] {
            let got = part_of(d);
            assert_eq!(got.as_ref().map(|(p, w)| (*p, w.as_str())), want, "{d}");
        }
    }

    #[test]
    fn money_is_units_and_nanos_and_refuses_nonsense() {
        let m = |u: serde_json::Value, n: i64| Money {
            currency_code: "USD".into(),
            units: u,
            nanos: n,
        };
        assert_eq!(m("2".into(), 933_908_000).amount(), Some(2.933908));
        assert_eq!(
            m(serde_json::Value::Null, 4_237_000).amount(),
            Some(0.004237)
        );
        assert_eq!(m("x".into(), 0).amount(), None);
        assert_eq!(m("-1".into(), 0).amount(), None);
        assert_eq!(m("0".into(), 2_000_000_000).amount(), None);
    }

    #[test]
    fn a_machine_is_priced_only_where_all_its_parts_are() {
        let sku = |d: &str, usage: &str, unit: &str, units: &str, nanos: i64, r: &[&str]| {
            serde_json::from_value::<Sku>(serde_json::json!({
                "skuId": d, "description": d,
                "category": {"resourceGroup": "", "usageType": usage},
                "serviceRegions": r,
                "pricingInfo": [{"pricingExpression": {"usageUnit": unit, "tieredRates": [
                    {"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": units, "nanos": nanos}}]}}]
            }))
            .unwrap()
        };
        let skus = vec![
            sku(
                "G2 Instance Core running in Iowa",
                "OnDemand",
                "h",
                "0",
                24_988_212,
                &["us-central1", "us-east1"],
            ),
            sku(
                "G2 Instance Ram running in Iowa",
                "OnDemand",
                "GiBy.h",
                "0",
                2_927_448,
                &["us-central1", "us-east1"],
            ),
            sku(
                "Nvidia L4 GPU running in Iowa",
                "OnDemand",
                "h",
                "0",
                560_040_239,
                &["us-central1"],
            ),
            // A RAM SKU in the wrong unit is no RAM price.
            sku(
                "G2 Instance Ram running in Iowa",
                "Commit1Yr",
                "h",
                "0",
                1_000_000,
                &["us-central1"],
            ),
            sku(
                "G2 Instance Core running in Iowa",
                "Commit1Yr",
                "h",
                "0",
                10_000_000,
                &["us-central1"],
            ),
            sku(
                "Nvidia L4 GPU running in Iowa",
                "Commit1Yr",
                "h",
                "0",
                300_000_000,
                &["us-central1"],
            ),
        ];
        let (c, notes) = rows(&skus, "2026-12-05T00:00:00Z");
        // us-east1 has no L4 SKU: no row there.
        assert!(c.instances.iter().all(|i| i.region == "us-central1"));
        let g2 = c
            .instances
            .iter()
            .find(|i| i.instance_type == "g2-standard-4")
            .unwrap();
        assert!((g2.prices[&PricingModel::OnDemand].amount - 0.706832255).abs() < 1e-9);
        assert!(!g2.prices.contains_key(&PricingModel::Reserved1y));
        assert!(notes.join(" ").contains("1 SKUs"), "{notes:?}");
        assert_eq!(c.instances.len(), 8, "the eight G2 shapes");
    }
}
