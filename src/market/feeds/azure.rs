//! `azure`: the Azure Retail Prices API (no account),
//! `https://prices.azure.com/api/retail/prices`, filtered to the N-series virtual machines
//! (the GPU sizes) and paged by `NextPageLink` until it is null. Kept: Linux prices in USD
//! per hour (`productName` without "Windows"); `type` Consumption is on demand, or spot where
//! `skuName`/`meterName` says "Spot" (Low Priority, retired, is skipped); `type` Reservation
//! with `reservationTerm` "1 Year" / "3 Years" is the whole term's price although
//! `unitOfMeasure` says "1 Hour": divided by the term's hours. Azure names no GPU: the size
//! (`armSkuName`) does, through the instance families the CSV import knows; a size of no
//! known family is counted as unknown, never guessed.
//!
//! Pagination is untrusted too: an empty page in the middle is followed (Azure sends them),
//! a link seen twice is a loop, and more than `MAX_PAGES` pages is refused.

use super::http::Client;
use super::{Fetch, Source};
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

pub const FIRST_PAGE: &str = "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter=serviceName%20eq%20%27Virtual%20Machines%27%20and%20contains(armSkuName,%27Standard_N%27)";
const MAX_PAGES: usize = 2000;

#[derive(Deserialize)]
struct Page {
    #[serde(rename = "Items")]
    items: Vec<Item>,
    #[serde(rename = "NextPageLink", default)]
    next: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    currency_code: String,
    retail_price: f64,
    arm_region_name: String,
    #[serde(default)]
    meter_name: String,
    #[serde(default)]
    product_name: String,
    #[serde(default)]
    sku_name: String,
    #[serde(default)]
    unit_of_measure: String,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    arm_sku_name: String,
    #[serde(default)]
    reservation_term: Option<String>,
    #[serde(default)]
    effective_start_date: Option<String>,
}

pub struct Azure;

impl Source for Azure {
    fn name(&self) -> &'static str {
        "azure"
    }
    fn about(&self) -> &'static str {
        "the Azure Retail Prices API (N-series: on demand, spot, 1- and 3-year reservations), no account needed"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!("{FIRST_PAGE} (then each NextPageLink)")]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["azure"]
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let fetched_at = super::now();
        let mut url = Some(FIRST_PAGE.to_string());
        let mut seen = HashSet::new();
        let (mut items, mut files, mut empty) = (Vec::new(), Vec::new(), 0);
        while let Some(u) = url.take() {
            if !seen.insert(u.clone()) {
                bail!(
                    "{}: NextPageLink points back to a page already read (a loop)",
                    super::http::redact_url(&u)
                );
            }
            if seen.len() > MAX_PAGES {
                bail!("more than {MAX_PAGES} pages: refused");
            }
            let f = http.get(&u).map_err(|e| anyhow::anyhow!("{e}"))?;
            let page: Page = crate::files::parse_json(
                std::str::from_utf8(&f.body)
                    .with_context(|| format!("{}: not UTF-8", f.meta.url))?,
                &f.meta.url,
            )?;
            if page.items.is_empty() && page.next.is_some() {
                empty += 1;
            }
            items.extend(page.items);
            url = page.next.filter(|n| !n.trim().is_empty());
            files.push(f.meta.record(&fetched_at));
        }
        let n_items = items.len();
        let catalog = rows(items, &fetched_at);
        let mut notes = vec![format!(
            "{} pages, {n_items} price items, {} sizes and regions",
            files.len(),
            catalog.instances.len()
        )];
        if empty > 0 {
            notes.push(format!(
                "{empty} empty pages in the middle of the paging, followed"
            ));
        }
        Ok(Fetch {
            catalog,
            risks: Vec::new(),
            files,
            notes,
        })
    }
}

/// One page's kept rows (the fuzz target's entry: a page is untrusted input).
pub fn page_rows(text: &str, name: &str) -> Result<(Catalog, Option<String>)> {
    let page: Page = crate::files::parse_json(text, name)?;
    Ok((rows(page.items, "2026-01-01T00:00:00Z"), page.next))
}

/// What one item is, or None for what is not kept.
fn model_of(i: &Item) -> Option<(PricingModel, f64)> {
    if i.currency_code != "USD"
        || i.product_name.contains("Windows")
        || i.product_name.contains("Cloud Services")
        || i.unit_of_measure != "1 Hour"
        || !i.arm_sku_name.starts_with("Standard_N")
    {
        return None;
    }
    let says = |w: &str| i.sku_name.contains(w) || i.meter_name.contains(w);
    if says("Low Priority") || i.retail_price.is_nan() || i.retail_price <= 0.0 {
        return None;
    }
    match (i.kind.as_str(), i.reservation_term.as_deref()) {
        ("Consumption", _) if says("Spot") => Some((PricingModel::Spot, i.retail_price)),
        ("Consumption", _) => Some((PricingModel::OnDemand, i.retail_price)),
        ("Reservation", Some("1 Year")) => {
            Some((PricingModel::Reserved1y, i.retail_price / 8760.0))
        }
        ("Reservation", Some("3 Years")) => {
            Some((PricingModel::Reserved3y, i.retail_price / (3.0 * 8760.0)))
        }
        _ => None,
    }
}

/// The vCPUs an Azure size spells out: `Standard_NC24ads_A100_v4` has 24.
fn vcpus_in_name(sku: &str) -> Option<u32> {
    let rest = sku.strip_prefix("Standard_")?;
    let digits: String = rest
        .chars()
        .skip_while(|c| c.is_ascii_alphabetic())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// The kept items as one instance per (size, region), each price the lowest of its kind.
fn rows(items: Vec<Item>, fetched_at: &str) -> Catalog {
    let mut by: BTreeMap<(String, String), (BTreeMap<PricingModel, f64>, String)> = BTreeMap::new();
    for i in &items {
        let Some((m, v)) = model_of(i) else { continue };
        if i.arm_sku_name.is_empty() {
            continue;
        }
        let e = by
            .entry((i.arm_sku_name.clone(), i.arm_region_name.clone()))
            .or_default();
        let p = e.0.entry(m).or_insert(v);
        *p = p.min(v);
        if let Some(d) = &i.effective_start_date {
            e.1 = e.1.clone().max(d.chars().take(10).collect());
        }
    }
    let mut instances = Vec::new();
    for ((sku, region), (prices, _)) in by {
        // Every GPU size the Azure feed carries has a spec entry (`family_gpu` names them);
        // a size it does not know is counted as unknown, never matched to a lookalike.
        let gpu = match crate::market::catalog::families::family_gpu(&sku) {
            Some(id) => id.to_string(),
            None => crate::market::catalog::Unranked::Unknown.id(&sku),
        };
        let count = crate::market::catalog::expected_gpu_count(&sku).map_or(0, |c| c.0);
        let prices = prices
            .into_iter()
            .map(|(m, amount)| (m, Price::list_usd(amount)))
            .collect();
        let vcpu = vcpus_in_name(&sku);
        instances.push(Instance {
            provider: "azure".into(),
            instance_type: sku,
            region,
            gpu,
            gpu_count: count,
            vcpu,
            ram_gib: None,
            gpu_memory_gb: None,
            prices,
            source: format!("Azure Retail Prices API ({FIRST_PAGE}), fetched {fetched_at}"),
            as_of: fetched_at[..10].to_string(),
            confidence: Confidence::High,
            retired: None,
            notes: Some("reservations: the term's price over its hours".into()),
            interconnect: None,
        });
    }
    Catalog::of_rows("Azure Retail Prices API", "azure retail prices", instances)
}
