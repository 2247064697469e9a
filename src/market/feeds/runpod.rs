//! `runpod`: RunPod's GraphQL API, `POST https://api.runpod.io/graphql` with the public
//! `gpuTypes` query (no key needed; RunPod's own docs script and dstack's gpuhunt send none):
//! per GPU type its `securePrice` and `communityPrice`, USD per GPU-hour, and
//! `maxGpuCount`. Secure Cloud (RunPod's data centres) and Community Cloud (hosts of the
//! community) are different products: each is its own row, named in the instance type
//! (`2x H100 SXM secure`). Rows for 1, 2, 4 and 8 GPUs and the type's maximum. RunPod's list
//! is its whole market: other feeds' `runpod` rows give way to this snapshot.
//!
//! RunPod says the GraphQL API is deprecated and retires in early 2027 (REST v2's catalog
//! declares bearer authentication in its OpenAPI file; not tried).

use super::http::{Client, Request};
use super::offers;
use super::{Fetch, Source};
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;

pub const URL: &str = "https://api.runpod.io/graphql";
const QUERY: &str = "query GpuTypes { gpuTypes { id displayName manufacturer memoryInGb maxGpuCount secureCloud communityCloud securePrice communityPrice } }";

pub struct RunPod;

impl Source for RunPod {
    fn name(&self) -> &'static str {
        "runpod"
    }
    fn about(&self) -> &'static str {
        "RunPod's GraphQL gpuTypes (Secure and Community Cloud prices per GPU), no account needed"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!("{URL} (POST gpuTypes)")]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["runpod"]
    }
    fn whole_market(&self) -> bool {
        true
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let req = Request {
            url: URL.to_string(),
            body: Some(
                serde_json::json!({ "query": QUERY })
                    .to_string()
                    .into_bytes(),
            ),
            headers: Vec::new(),
            mirror: vec![("query".into(), "gpuTypes".into())],
        };
        super::one_answer(http, &req, |body, at, sha| {
            let c = rows(body, at, sha)?;
            let n = c.instances.len();
            Ok((
                c,
                vec![format!("{n} rows (GPU type x count x Secure/Community)")],
            ))
        })
    }
}

#[derive(Deserialize)]
struct Answer {
    data: Option<Data>,
    #[serde(default)]
    errors: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "gpuTypes")]
    gpu_types: Vec<GpuType>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GpuType {
    id: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    memory_in_gb: Option<f64>,
    #[serde(default)]
    max_gpu_count: Option<u32>,
    #[serde(default)]
    secure_cloud: Option<bool>,
    #[serde(default)]
    community_cloud: Option<bool>,
    #[serde(default)]
    secure_price: Option<f64>,
    #[serde(default)]
    community_price: Option<f64>,
}

/// The answer's rows (the fuzz target's entry too).
pub fn rows(body: &[u8], fetched_at: &str, sha256: &str) -> Result<Catalog> {
    let text = std::str::from_utf8(body).context("not UTF-8")?;
    let a: Answer = crate::files::parse_json(text, "graphql")?;
    if !a.errors.is_empty() {
        bail!("RunPod answered with errors: {}", error_messages(&a.errors));
    }
    let Some(data) = a.data else {
        bail!("no data in the answer");
    };
    let specs = offers::specs();
    let mut instances = Vec::new();
    for t in data.gpu_types {
        type_rows(&t, fetched_at, sha256, &specs, &mut instances);
    }
    if instances.is_empty() {
        bail!("no GPU type with a price in the answer");
    }
    Ok(Catalog::of_rows(
        "RunPod GraphQL gpuTypes",
        "runpod graphql",
        instances,
    ))
}

/// The messages of the answer's errors, joined by "; " ("?" for one without a message).
fn error_messages(errors: &[serde_json::Value]) -> String {
    errors
        .iter()
        .map(|e| {
            e.get("message")
                .and_then(|m| m.as_str())
                .unwrap_or("?")
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The GPU counts a type gets rows for: 1, 2, 4 and 8 up to its maximum, and the maximum.
fn counts(max: u32) -> Vec<u32> {
    let mut counts: Vec<u32> = [1, 2, 4, 8].into_iter().filter(|n| *n <= max).collect();
    if !counts.contains(&max) {
        counts.push(max);
    }
    counts
}

/// One GPU type's rows, pushed onto `out`: for Secure and Community Cloud each, where it is
/// offered with a usable price, one row per GPU count.
fn type_rows(
    t: &GpuType,
    fetched_at: &str,
    sha256: &str,
    specs: &[crate::market::catalog::GpuSpec],
    out: &mut Vec<Instance>,
) {
    let max = t.max_gpu_count.unwrap_or(1).max(1);
    let memory = offers::per_gpu_memory(t.memory_in_gb, 1);
    let display = t.display_name.clone().unwrap_or_else(|| t.id.clone());
    // RunPod's id is the more specific name ("NVIDIA A100 80GB PCIe"); then its display name.
    let (gpu, mem, why) = offers::resolve(&[&t.id, &display], memory, 1, specs);
    let counts = counts(max);
    let products = [
        ("secure", "Secure Cloud", t.secure_cloud, t.secure_price),
        (
            "community",
            "Community Cloud",
            t.community_cloud,
            t.community_price,
        ),
    ];
    for (short, long, offered, price) in products {
        let Some(per_gpu) = price.filter(|p| *p > 0.0 && p.is_finite()) else {
            continue;
        };
        if offered == Some(false) {
            continue;
        }
        for &n in &counts {
            let mut prices = BTreeMap::new();
            prices.insert(PricingModel::OnDemand, Price::list_usd(per_gpu * n as f64));
            let what = format!("RunPod GraphQL gpuTypes ({URL})");
            out.push(Instance {
                instance_type: format!("{n}x {display} {short}"),
                region: "any".into(),
                gpu: gpu.clone(),
                gpu_count: n,
                gpu_memory_gb: mem,
                prices,
                notes: Some(format!(
                    "{long} ({}): {per_gpu} USD per GPU-hour x {n}; the price of the type, not of a data centre's stock{}",
                    t.id,
                    offers::why_suffix(&why)
                )),
                ..offers::fetched_row("runpod", &what, fetched_at, sha256, Confidence::High)
            });
        }
    }
}
