//! `vast`: Vast.ai's offer search, `POST https://console.vast.ai/api/v0/bundles/` (no key
//! needed), the body dstack's gpuhunt and vast-cli send: verified, rentable, not rented,
//! on-demand offers. The answer is `{"offers": [...]}`, one offer per host: `gpu_name`,
//! `num_gpus`, `gpu_ram` (MB per GPU), `cpu_cores_effective` (the vCPUs the offer gets),
//! `cpu_ram` and `cpu_cores` (the whole machine's), `dph_total` (USD per hour with the default
//! disk), `min_bid` (the interruptible price), `geolocation` ("Region, CC").
//!
//! A host is not an instance type: offers are grouped by GPU model and count, and each group
//! ranks at its **median** price per hour, with the spread (min, quartiles, max) and the
//! number of hosts in the row's notes. Vast's market is its own: with this snapshot in use,
//! other feeds' `vast` rows (SkyPilot's copy of some offers) give way.

use super::http::{Client, Request};
use super::offers;
use super::{Fetch, Source};
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;

pub const URL: &str = "https://console.vast.ai/api/v0/bundles/";
/// Offers asked for (Vast answers one page of at most this many, best first).
const LIMIT: u32 = 5000;

pub struct Vast;

impl Source for Vast {
    fn name(&self) -> &'static str {
        "vast"
    }
    fn about(&self) -> &'static str {
        "Vast.ai's offer search (one offer per host; the median per GPU model and count), no account needed"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!("{URL} (POST)")]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["vast"]
    }
    fn whole_market(&self) -> bool {
        true
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let body = serde_json::json!({
            "verified": {"eq": true},
            "external": {"eq": false},
            "rentable": {"eq": true},
            "rented": {"eq": false},
            "type": "on-demand",
            "order": [["score", "desc"]],
            "limit": LIMIT,
        });
        let req = Request {
            url: URL.to_string(),
            body: Some(body.to_string().into_bytes()),
            headers: Vec::new(),
            mirror: vec![
                ("limit".into(), LIMIT.to_string()),
                ("type".into(), "on-demand".into()),
                ("verified".into(), "true".into()),
            ],
        };
        super::one_answer(http, &req, rows)
    }
}

#[derive(Deserialize)]
struct Answer {
    offers: Vec<Offer>,
}

#[derive(Deserialize)]
struct Offer {
    gpu_name: Option<String>,
    num_gpus: Option<f64>,
    /// MB per GPU.
    gpu_ram: Option<f64>,
    cpu_cores_effective: Option<f64>,
    cpu_cores: Option<f64>,
    /// MB, the whole machine.
    cpu_ram: Option<f64>,
    dph_total: Option<f64>,
    min_bid: Option<f64>,
    #[serde(default)]
    geolocation: Option<String>,
}

/// The value at quantile `q` of sorted `v` (nearest rank).
fn quantile(v: &[f64], q: f64) -> f64 {
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i.min(v.len() - 1)]
}

/// Medians and spread of one group of offers.
#[derive(Default)]
struct Group {
    prices: Vec<f64>,
    bids: Vec<f64>,
    vcpus: Vec<f64>,
    ram_gib: Vec<f64>,
    gpu_mb: Vec<f64>,
    countries: BTreeMap<String, usize>,
}

/// The offers by GPU model and count, and how many could not be ranked (no GPU, a share of
/// one, no price).
fn group(offers: &[Offer]) -> (BTreeMap<(String, u32), Group>, usize) {
    let (mut groups, mut skipped): (BTreeMap<(String, u32), Group>, usize) = (BTreeMap::new(), 0);
    for o in offers {
        let (Some(name), Some(n), Some(price)) = (&o.gpu_name, o.num_gpus, o.dph_total) else {
            skipped += 1;
            continue;
        };
        // A share of a machine's GPU, no GPU, or a price that is not one: not an offer
        // gpuvalue can rank.
        if n < 1.0 || n.fract() != 0.0 || !(price > 0.0 && price.is_finite()) {
            skipped += 1;
            continue;
        }
        let g = groups
            .entry((name.trim().to_string(), n as u32))
            .or_default();
        g.prices.push(price);
        if let Some(b) = o.min_bid.filter(|b| *b > 0.0 && b.is_finite()) {
            g.bids.push(b);
        }
        if let Some(c) = o.cpu_cores_effective.filter(|c| *c > 0.0) {
            g.vcpus.push(c);
            if let (Some(ram), Some(all)) = (o.cpu_ram, o.cpu_cores.filter(|c| *c > 0.0)) {
                g.ram_gib.push(ram * (c / all).min(1.0) / 1024.0);
            }
        }
        if let Some(m) = o.gpu_ram.filter(|m| *m > 0.0) {
            g.gpu_mb.push(m);
        }
        if let Some(cc) = o
            .geolocation
            .as_deref()
            .and_then(|g| g.rsplit(',').next())
            .map(str::trim)
            .filter(|c| c.len() == 2)
        {
            *g.countries.entry(cc.to_string()).or_default() += 1;
        }
    }
    (groups, skipped)
}

/// The answer's offers as one row per GPU model and count (the fuzz target's entry too).
pub fn rows(body: &[u8], fetched_at: &str, sha256: &str) -> Result<(Catalog, Vec<String>)> {
    let text = std::str::from_utf8(body).context("not UTF-8")?;
    let a: Answer = crate::files::parse_json(text, "bundles")?;
    if a.offers.is_empty() {
        bail!("no offers in the answer");
    }
    let (groups, skipped) = group(&a.offers);
    let specs = offers::specs();
    let mut instances = Vec::new();
    for ((name, n), mut g) in groups {
        g.sort();
        instances.push(group_row(&name, n, &g, fetched_at, sha256, &specs));
    }
    let notes = vec![format!(
        "{} offers read, {} grouped into {} GPU model and count rows, {skipped} skipped (no GPU, a share of one, or no price)",
        a.offers.len(),
        a.offers.len() - skipped,
        instances.len()
    )];
    Ok((
        Catalog::of_rows("Vast.ai offer search", "vast bundles", instances),
        notes,
    ))
}

/// The median of sorted values, none for none.
fn median(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| quantile(v, 0.5))
}

impl Group {
    /// Each list of values in ascending order, for its quantiles.
    fn sort(&mut self) {
        for v in [
            &mut self.prices,
            &mut self.bids,
            &mut self.vcpus,
            &mut self.ram_gib,
            &mut self.gpu_mb,
        ] {
            v.sort_by(f64::total_cmp);
        }
    }

    /// The five countries with the most hosts, most first ("US 12").
    fn top_countries(&self) -> Vec<String> {
        let mut c: Vec<(&String, &usize)> = self.countries.iter().collect();
        c.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        c.iter().take(5).map(|(k, v)| format!("{k} {v}")).collect()
    }
}

/// One sorted group's row: its medians, its GPU model resolved from the name and median
/// memory, and the spread of its hosts' prices and their countries in the notes.
fn group_row(
    name: &str,
    n: u32,
    g: &Group,
    fetched_at: &str,
    sha256: &str,
    specs: &[crate::market::catalog::GpuSpec],
) -> Instance {
    let memory = offers::per_gpu_memory(median(&g.gpu_mb), 0);
    let (gpu, _, why) = offers::resolve(&[name], memory, n, specs);
    let mut prices = BTreeMap::new();
    prices.insert(
        PricingModel::OnDemand,
        Price::list_usd(quantile(&g.prices, 0.5)),
    );
    if let Some(b) = median(&g.bids) {
        prices.insert(PricingModel::Spot, Price::list_usd(b));
    }
    let what = format!("Vast.ai offer search ({URL})");
    Instance {
        instance_type: format!("{n}x {name}"),
        region: "any".into(),
        gpu,
        gpu_count: n,
        vcpu: median(&g.vcpus).map(|v| v.round() as u32),
        ram_gib: median(&g.ram_gib),
        gpu_memory_gb: median(&g.gpu_mb).map(|mb| mb * 1_048_576.0 / 1e9),
        prices,
        notes: Some(spread_notes(g, &why)),
        ..offers::fetched_row("vast", &what, fetched_at, sha256, Confidence::Medium)
    }
}

/// A group's notes: how many hosts, the spread of their prices, the spot bids, the top
/// countries and why the GPU model was read as it was.
fn spread_notes(g: &Group, why: &str) -> String {
    let p = &g.prices;
    let top = g.top_countries();
    format!(
        "median of {} host{} (USD/h: min {:.3}, quartiles {:.3}-{:.3}, max {:.3}){}; a host's price, hardware and reliability vary; countries: {}{}",
        p.len(),
        if p.len() == 1 { "" } else { "s" },
        p[0],
        quantile(p, 0.25),
        quantile(p, 0.75),
        p[p.len() - 1],
        if g.bids.is_empty() {
            String::new()
        } else {
            format!("; spot: median of {} interruptible bids", g.bids.len())
        },
        if top.is_empty() {
            "not stated".into()
        } else {
            top.join(", ")
        },
        offers::why_suffix(why)
    )
}
