//! `oci`: Oracle Cloud's public cost estimator data (no account): `shapes.json` (per shape its
//! GPU count, GPU memory, OCPUs, memory, whether preemptible capacity is offered, and the
//! part numbers it is billed under) and `products.json` (per part number its
//! `PAY_AS_YOU_GO` price per currency), both under
//! `https://www.oracle.com/a/ocom/docs/cloudestimator2/data/`.
//!
//! Kept: active, visible GPU shapes (`subType` gpu). A GPU shape is billed per GPU-hour on the
//! part of its `ocpu` product (BM.GPU.H100.8: 10 USD x 8 GPUs), unless the part's
//! `metricName` says OCPU. OCI prices a shape the same in every commercial region and does
//! not publish where a shape is offered: one row per shape, region `any`; where another feed
//! lists the shape in named regions, those rows take this feed's price (the provider's own).
//! Preemptible capacity, where a shape allows it, costs half the on-demand price (OCI's
//! preemptible instances documentation); that spot price is derived, and said.
//!
//! The estimator's `gpuMemoryQty` is the shape's total for most shapes but the per-GPU figure
//! for a few (BM.GPU.MI355X.8): the name mapping reads it in the unit that fits the GPU's
//! spec, and says which.

use super::http::Client;
use super::{Fetch, Source};
use crate::market::catalog::names::StatedMemory;
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

pub const BASE: &str = "https://www.oracle.com/a/ocom/docs/cloudestimator2/data/";
const PREEMPTIBLE_DOC: &str =
    "https://docs.oracle.com/en-us/iaas/Content/Compute/Concepts/preemptible.htm";

pub struct Oci;

impl Source for Oci {
    fn name(&self) -> &'static str {
        "oci"
    }
    fn about(&self) -> &'static str {
        "Oracle Cloud's cost estimator data (GPU shapes and their list prices), no account needed"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!("{BASE}shapes.json"), format!("{BASE}products.json")]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["oci"]
    }
    fn embedded_marker(&self) -> &'static str {
        "catalogs/v8/oci/vms.csv"
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let fetched_at = super::now();
        let shapes = http
            .get(&format!("{BASE}shapes.json"))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let products = http
            .get(&format!("{BASE}products.json"))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let (catalog, notes) = rows(&shapes.body, &products.body, &fetched_at)
            .with_context(|| format!("{} with {}", shapes.meta.url, products.meta.url))?;
        Ok(Fetch {
            catalog,
            risks: Vec::new(),
            files: vec![
                shapes.meta.record(&fetched_at),
                products.meta.record(&fetched_at),
            ],
            notes,
        })
    }
}

#[derive(Deserialize)]
struct Shapes {
    items: Vec<Shape>,
}

#[derive(Deserialize, Default)]
struct Valued {
    #[serde(default)]
    value: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Shape {
    name: String,
    #[serde(default)]
    hidden: Option<bool>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    allow_preemptible: Option<bool>,
    #[serde(default)]
    bundle_memory_qty: Option<f64>,
    #[serde(default)]
    gpu_qty: Option<f64>,
    #[serde(default)]
    gpu_memory_qty: Option<f64>,
    #[serde(default)]
    processor_type: Option<Valued>,
    #[serde(default)]
    sub_type: Option<Valued>,
    #[serde(default)]
    products: Option<Vec<Part>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    part_number: String,
    #[serde(default)]
    qty: Option<f64>,
    #[serde(rename = "type", default)]
    kind: Option<Valued>,
}

#[derive(Deserialize)]
struct Products {
    items: Vec<Product>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Product {
    part_number: String,
    #[serde(default)]
    metric_name: Option<String>,
    #[serde(default)]
    currency_code_localizations: Vec<Localization>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Localization {
    currency_code: String,
    #[serde(default)]
    prices: Vec<ModelPrice>,
}

#[derive(Deserialize)]
struct ModelPrice {
    model: String,
    value: f64,
}

/// The display name without its suffix: `BM.GPU.GB200.4 (NVL72)` is `BM.GPU.GB200.4`.
fn shape_name(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name).trim()
}

/// The GPU a shape's name spells: `BM.GPU.H100.8` H100, `VM.GPU3.1` V100 (the numbered
/// generations name none), `BM.GPU.A100-v2.8` the 80 GB A100; None: not a GPU shape's name.
fn gpu_of_shape(shape: &str) -> Option<&'static str> {
    let parts: Vec<&str> = shape.split('.').collect();
    let (kind, family, model) = match parts.as_slice() {
        [k, f, _n] => (*k, *f, None),
        [k, f, m, _n] => (*k, *f, Some(*m)),
        _ => return None,
    };
    if !matches!(kind, "BM" | "VM") || !family.starts_with("GPU") {
        return None;
    }
    let token = model.unwrap_or(family);
    Some(match token {
        "GPU2" => "P100",
        "GPU3" => "V100",
        "GPU4" => "A100",
        "A100-v2" => "A100 80GB",
        "RTXPRO" => "RTX PRO 6000 Blackwell Server Edition",
        "A10" => "A10",
        "H100" => "H100 SXM",
        "H200" => "H200 SXM",
        "L40S" => "L40S",
        "B200" => "B200",
        "B300" => "B300",
        "GB200" => "GB200",
        "GB300" => "GB300",
        "MI300X" => "MI300X",
        "MI355X" => "MI355X",
        _ => return None,
    })
}

/// USD `PAY_AS_YOU_GO` price and billing metric per part number.
fn price_list(products: Products) -> HashMap<String, (f64, String)> {
    let mut out = HashMap::new();
    for p in products.items {
        let usd = p
            .currency_code_localizations
            .iter()
            .filter(|l| l.currency_code == "USD")
            .flat_map(|l| &l.prices)
            .find(|m| m.model == "PAY_AS_YOU_GO")
            .map(|m| m.value);
        if let Some(v) = usd {
            out.insert(p.part_number, (v, p.metric_name.unwrap_or_default()));
        }
    }
    out
}

/// The rows of the two files (the fuzz target's entry too: both are untrusted input), and the
/// notes: shapes kept, and each shape left out with why.
pub fn rows(shapes: &[u8], products: &[u8], fetched_at: &str) -> Result<(Catalog, Vec<String>)> {
    let shapes: Shapes = crate::files::parse_json(
        std::str::from_utf8(shapes).context("shapes.json: not UTF-8")?,
        "shapes.json",
    )?;
    let products: Products = crate::files::parse_json(
        std::str::from_utf8(products).context("products.json: not UTF-8")?,
        "products.json",
    )?;
    let prices = price_list(products);
    let specs = Catalog::embedded().gpus;
    let mut instances = Vec::new();
    let mut left_out: Vec<String> = Vec::new();
    for s in shapes.items {
        let is_gpu = s.sub_type.as_ref().and_then(|v| v.value.as_deref()) == Some("gpu");
        if !is_gpu || s.status.as_deref() != Some("ACTIVE") || s.hidden == Some(true) {
            continue;
        }
        match shape_row(&s, &prices, &specs, fetched_at) {
            Ok(i) => instances.push(i),
            Err(why) => left_out.push(format!("{}: {why}", shape_name(&s.name))),
        }
    }
    let mut notes = vec![format!("{} GPU shapes, region any", instances.len())];
    if !left_out.is_empty() {
        notes.push(format!("left out: {}", left_out.join("; ")));
    }
    Ok((
        Catalog::of_rows("OCI cost estimator", "oci cost estimator", instances),
        notes,
    ))
}

/// One GPU shape's row, or why it has none.
fn shape_row(
    s: &Shape,
    prices: &HashMap<String, (f64, String)>,
    specs: &[crate::market::catalog::GpuSpec],
    fetched_at: &str,
) -> std::result::Result<Instance, String> {
    let name = shape_name(&s.name);
    let count = s.gpu_qty.unwrap_or(0.0);
    if !(count >= 1.0 && count.fract() == 0.0 && count <= 64.0) {
        return Err(format!("GPU count {count} is not a whole number of GPUs"));
    }
    let count = count as u32;
    let billed = shape_price(s, prices, count)?;
    let accel = gpu_of_shape(name).map_or_else(|| name.to_string(), str::to_string);
    let memory = s.gpu_memory_qty.filter(|m| *m > 0.0).map(|v| StatedMemory {
        value: v,
        gpu_count: count as f64,
        // The shape's total in GB, most often; a per-GPU figure is read as such where only
        // that fits the GPU.
        prefer: Some(if count > 1 { 3 } else { 1 }),
    });
    let (gpu, mem, why) =
        crate::market::catalog::csv_import::first_known(&[accel.as_str()], memory, count, specs);
    // Grace superchips' cores are Arm cores without SMT; the other shapes' OCPUs are two
    // vCPUs each.
    let arm = name.contains(".GB");
    let vcpu = billed
        .ocpus
        .map(|o| (o * if arm { 1.0 } else { 2.0 }) as u32);
    let processor = s
        .processor_type
        .as_ref()
        .and_then(|v| v.value.clone())
        .unwrap_or_default();
    Ok(Instance {
        provider: "oci".into(),
        instance_type: name.to_string(),
        region: "any".into(),
        gpu,
        gpu_count: count,
        vcpu,
        ram_gib: s.bundle_memory_qty.filter(|m| *m > 0.0),
        gpu_memory_gb: mem,
        prices: price_kinds(billed.amount, s.allow_preemptible == Some(true)),
        source: format!(
            "OCI cost estimator ({BASE}shapes.json, products.json part {}), fetched {fetched_at}",
            billed.part_number
        ),
        as_of: fetched_at[..10].to_string(),
        confidence: Confidence::High,
        retired: None,
        notes: Some(billed.notes(&processor, &why)),
        interconnect: None,
    })
}

/// What a shape is billed: its OCPU part, the part's unit price and metric, the shape's
/// OCPUs, and the price per hour of the whole shape.
struct Billed<'a> {
    part_number: &'a str,
    unit: f64,
    metric: &'a str,
    ocpus: Option<f64>,
    amount: f64,
}

/// A shape's price per hour from its OCPU part's price: per OCPU where the part is billed
/// so, else per GPU; why there is none where a part, a price or an OCPU count is missing.
fn shape_price<'a>(
    s: &'a Shape,
    prices: &'a HashMap<String, (f64, String)>,
    count: u32,
) -> std::result::Result<Billed<'a>, String> {
    let part = s
        .products
        .iter()
        .flatten()
        .find(|p| p.kind.as_ref().and_then(|k| k.value.as_deref()) == Some("ocpu"))
        .ok_or("no ocpu part")?;
    let (unit, metric) = prices
        .get(&part.part_number)
        .ok_or(format!("part {} has no USD price", part.part_number))?;
    let ocpus = part.qty.filter(|q| *q > 0.0);
    let amount = if metric.to_ascii_uppercase().contains("OCPU") {
        unit * ocpus.ok_or("billed per OCPU but no OCPU count")?
    } else {
        unit * count as f64
    };
    Ok(Billed {
        part_number: &part.part_number,
        unit: *unit,
        metric,
        ocpus,
        amount,
    })
}

impl Billed<'_> {
    /// A row's notes: the unit price and how it is billed, the processor and why the GPU
    /// model was read as it was.
    fn notes(&self, processor: &str, why: &str) -> String {
        format!(
            "{} USD, billed {}; the same price in every commercial region{}{}",
            self.unit,
            if self.metric.is_empty() {
                "per GPU-hour"
            } else {
                self.metric
            },
            if processor.is_empty() {
                String::new()
            } else {
                format!("; processor {processor}")
            },
            super::offers::why_suffix(why)
        )
    }
}

/// The on-demand price, and where the shape can be preemptible, a spot price of half it.
fn price_kinds(amount: f64, preemptible: bool) -> BTreeMap<PricingModel, Price> {
    let mut p = BTreeMap::new();
    p.insert(PricingModel::OnDemand, Price::list_usd(amount));
    if preemptible {
        let mut spot = Price::list_usd(amount * 0.5);
        spot.source = Some(format!(
            "half the on-demand price: OCI's preemptible capacity ({PREEMPTIBLE_DOC})"
        ));
        p.insert(PricingModel::Spot, spot);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/feeds/www.oracle.com/a/ocom/docs/cloudestimator2/data")
            .join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn row<'a>(c: &'a Catalog, t: &str) -> &'a Instance {
        c.instances
            .iter()
            .find(|i| i.instance_type == t)
            .unwrap_or_else(|| panic!("{t} not in the rows"))
    }

    #[test]
    fn estimator_shapes_priced_per_gpu_hour_with_memory_in_the_unit_that_fits() {
        let (c, notes) = rows(
            &fixture("shapes.json"),
            &fixture("products.json"),
            "2026-12-05T00:00:00Z",
        )
        .unwrap();
        // The two CPU shapes are no rows; the ten GPU shapes are.
        assert_eq!(c.instances.len(), 10, "{notes:?}");
        let h100 = row(&c, "BM.GPU.H100.8");
        assert_eq!((h100.gpu.as_str(), h100.gpu_count), ("h100-sxm", 8));
        assert_eq!(h100.prices[&PricingModel::OnDemand].amount, 80.0);
        assert_eq!((h100.vcpu, h100.ram_gib), (Some(224), Some(2048.0)));
        assert_eq!(h100.region, "any");
        // 640 GB is the shape's total: 80 per GPU.
        assert!((h100.gpu_memory_gb.unwrap() - 80.0).abs() < 0.5);
        // The estimator's MI355X figure is per GPU (288), not the total: read as such.
        let mi355 = row(&c, "BM.GPU.MI355X.8");
        assert_eq!(mi355.gpu, "mi355x");
        assert!((mi355.prices[&PricingModel::OnDemand].amount - 68.8).abs() < 1e-9);
        // The A100 of BM.GPU4.8 is the 40 GB part, of BM.GPU.A100-v2.8 the 80 GB one.
        assert_eq!(row(&c, "BM.GPU4.8").gpu, "a100-40gb-sxm");
        assert_eq!(row(&c, "BM.GPU.A100-v2.8").gpu, "a100-80gb-sxm");
        assert_eq!(row(&c, "BM.GPU.RTXPRO.8").gpu, "rtx-pro-6000-server");
        // The display suffix goes: the Compute API's name.
        let gb200 = row(&c, "BM.GPU.GB200.4");
        assert_eq!((gb200.gpu.as_str(), gb200.vcpu), ("gb200", Some(128)));
        // No OCPU count: no vCPU figure rather than a guess.
        assert_eq!(row(&c, "BM.GPU.B300.8").vcpu, None);
        // Only the shape that allows preemptible capacity has a spot price: half, said.
        let v100 = row(&c, "VM.GPU3.1");
        let spot = &v100.prices[&PricingModel::Spot];
        assert!((spot.amount - 1.475).abs() < 1e-9);
        assert!(spot.source.as_deref().unwrap().contains("preemptible"));
        assert!(!h100.prices.contains_key(&PricingModel::Spot));
    }

    #[test]
    fn a_shape_without_a_price_or_a_whole_gpu_count_is_left_out_and_said() {
        let shapes = br#"{"items": [
            {"name": "BM.GPU.H100.8", "status": "ACTIVE", "hidden": false, "gpuQty": 8,
             "gpuMemoryQty": 640, "subType": {"value": "gpu"},
             "products": [{"partNumber": "B0", "qty": 112, "type": {"value": "ocpu"}}]},
            {"name": "VM.GPU.A10.1", "status": "ACTIVE", "hidden": false, "gpuQty": 0.5,
             "subType": {"value": "gpu"},
             "products": [{"partNumber": "B1", "qty": 15, "type": {"value": "ocpu"}}]},
            {"name": "BM.GPU.L40S.4", "status": "DEPRECATED", "gpuQty": 4,
             "subType": {"value": "gpu"},
             "products": [{"partNumber": "B1", "qty": 56, "type": {"value": "ocpu"}}]}]}"#;
        let products = br#"{"items": [{"partNumber": "B1", "currencyCodeLocalizations":
            [{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 2}]}]}]}"#;
        let (c, notes) = rows(shapes, products, "2026-12-05T00:00:00Z").unwrap();
        assert!(c.instances.is_empty());
        let n = notes.join(" ");
        assert!(n.contains("BM.GPU.H100.8: part B0 has no USD price"), "{n}");
        assert!(n.contains("VM.GPU.A10.1: GPU count 0.5"), "{n}");
        assert!(
            !n.contains("L40S"),
            "an inactive shape is no row and no fault: {n}"
        );
        assert!(rows(b"{", products, "2026-12-05T00:00:00Z").is_err());
    }
}
