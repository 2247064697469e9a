//! `lambda` (needs `LAMBDA_API_KEY`): Lambda Cloud's API, `GET /api/v1/instance-types`
//! (Bearer key; `{"data": {name: {"instance_type": {name, description, gpu_description,
//! price_cents_per_hour, specs: {vcpus, memory_gib, storage_gib, gpus}},
//! "regions_with_capacity_available": [{name, description}]}}}`). One row per type and region
//! with capacity (Lambda's price is the same in every region), or region `any` where none
//! has capacity now.

use super::http::{Client, Request};
use super::{Fetch, Source};
use crate::market::catalog::names::StatedMemory;
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;

pub const URL: &str = "https://cloud.lambdalabs.com/api/v1/instance-types";
const KEY: &str = "LAMBDA_API_KEY";

pub struct Lambda;

impl Source for Lambda {
    fn name(&self) -> &'static str {
        "lambda"
    }
    fn about(&self) -> &'static str {
        "Lambda Cloud's instance types and prices, with your key: LAMBDA_API_KEY"
    }
    fn urls(&self) -> Vec<String> {
        vec![URL.to_string()]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["lambda"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &[KEY]
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let Some(key) = super::env_key(KEY) else {
            bail!("needs {KEY}");
        };
        let req = Request {
            url: URL.to_string(),
            body: None,
            headers: vec![("Authorization".into(), format!("Bearer {key}"))],
            mirror: Vec::new(),
        };
        super::one_answer(http, &req, |body, at, sha| {
            let c = rows(body, at, sha)?;
            let n = c.instances.len();
            Ok((c, vec![format!("{n} rows (type x region with capacity)")]))
        })
    }
}

#[derive(Deserialize)]
struct Answer {
    data: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
struct Entry {
    instance_type: Type,
    #[serde(default)]
    regions_with_capacity_available: Vec<Region>,
}

#[derive(Deserialize)]
struct Type {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    gpu_description: Option<String>,
    price_cents_per_hour: f64,
    specs: Specs,
}

#[derive(Deserialize)]
struct Specs {
    vcpus: u32,
    memory_gib: f64,
    gpus: u32,
}

#[derive(Deserialize)]
struct Region {
    name: String,
}

/// The GPU a description names: `H100 (80 GB SXM5)` or `8x H100 (80 GB SXM5)`: the name,
/// its form factor, and the memory per GPU in GB.
fn gpu_of(desc: &str) -> (String, Option<String>, Option<f64>) {
    let d = desc.trim();
    let d = match d.split_once("x ") {
        Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => rest,
        _ => d,
    };
    let (name, paren) = match d.split_once(" (") {
        Some((n, p)) => (n.trim(), Some(p.trim_end_matches(')'))),
        None => (d, None),
    };
    let (mut gb, mut form) = (None, None);
    if let Some(p) = paren {
        let words: Vec<&str> = p.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if (*w == "GB" || *w == "GiB") && i > 0 {
                gb = words[i - 1].parse::<f64>().ok();
            }
        }
        form = words
            .iter()
            .rev()
            .find(|w| w.chars().any(|c| c.is_ascii_alphabetic()) && **w != "GB" && **w != "GiB")
            .map(|w| w.to_string());
    }
    (name.to_string(), form, gb)
}

/// The answer's rows (the fuzz target's entry too: the body is untrusted input).
pub fn rows(body: &[u8], fetched_at: &str, sha256: &str) -> Result<Catalog> {
    let text = std::str::from_utf8(body).context("not UTF-8")?;
    let a: Answer = crate::files::parse_json(text, "instance-types")?;
    let specs = Catalog::embedded().gpus;
    let mut instances = Vec::new();
    for (key, e) in a.data {
        let t = e.instance_type;
        if t.name != key {
            bail!("data.{key}: instance_type.name is {:?}", t.name);
        }
        if t.specs.gpus == 0 {
            continue;
        }
        let desc = t.gpu_description.clone().unwrap_or(t.description.clone());
        let (name, form, gb) = gpu_of(&desc);
        let memory = gb.map(|v| StatedMemory {
            value: v,
            gpu_count: 1.0,
            prefer: Some(1),
        });
        let tries: Vec<String> = match &form {
            Some(f) => vec![format!("{name} {f}"), name.clone()],
            None => vec![name.clone()],
        };
        // The name with its form factor first ("H100 SXM5"), then the bare name.
        let tries: Vec<&str> = tries.iter().map(String::as_str).collect();
        let (gpu, mem, why) =
            crate::market::catalog::csv_import::first_known(&tries, memory, t.specs.gpus, &specs);
        let mut regions: Vec<String> = e
            .regions_with_capacity_available
            .into_iter()
            .map(|r| r.name)
            .collect();
        if regions.is_empty() {
            regions.push("any".into());
        }
        for region in regions {
            let mut prices = BTreeMap::new();
            prices.insert(
                PricingModel::OnDemand,
                Price::list_usd(t.price_cents_per_hour / 100.0),
            );
            instances.push(Instance {
                provider: "lambda".into(),
                instance_type: t.name.clone(),
                region,
                gpu: gpu.clone(),
                gpu_count: t.specs.gpus,
                vcpu: Some(t.specs.vcpus),
                ram_gib: Some(t.specs.memory_gib),
                gpu_memory_gb: mem,
                prices,
                source: format!(
                    "Lambda Cloud API ({URL}), fetched {fetched_at}, sha256 {}",
                    &sha256[..12.min(sha256.len())]
                ),
                as_of: fetched_at[..10].to_string(),
                confidence: Confidence::High,
                retired: None,
                notes: Some(format!(
                    "{desc}; region: capacity available when fetched{}",
                    if why.is_empty() {
                        String::new()
                    } else {
                        format!("; {why}")
                    }
                )),
                interconnect: None,
            });
        }
    }
    Ok(Catalog::of_rows(
        "Lambda Cloud API",
        "lambda api",
        instances,
    ))
}
