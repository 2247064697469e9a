//! `tencent` (needs `TENCENTCLOUD_SECRET_ID` and `TENCENTCLOUD_SECRET_KEY`): Tencent Cloud
//! CVM `InquiryPriceRunInstances` (API 3.0, version 2017-03-12, signed with TC3-HMAC-SHA256
//! as its documentation specifies), pay by the hour, for each Tencent GPU type and region the
//! catalog lists: the instance's list `UnitPrice` per hour (CNY on the China site), tried in
//! the region's zones until one sells it.

use super::http::{Client, Request};
use super::{Fetch, Source, china};
use crate::market::catalog::Catalog;
use anyhow::{Context, Result, bail};

pub const HOST: &str = "cvm.tencentcloudapi.com";
const ID: &str = "TENCENTCLOUD_SECRET_ID";
const KEY: &str = "TENCENTCLOUD_SECRET_KEY";
/// The public image the price is asked with (the documentation's example image; the
/// instance price does not depend on it).
const IMAGE: &str = "img-pmqg1cw7";
/// Zones tried per region, in order.
const ZONES: u32 = 7;

pub struct Tencent;

impl Source for Tencent {
    fn name(&self) -> &'static str {
        "tencent"
    }
    fn about(&self) -> &'static str {
        "Tencent Cloud CVM InquiryPriceRunInstances (China list prices, CNY), with your key: TENCENTCLOUD_SECRET_ID, TENCENTCLOUD_SECRET_KEY"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!(
            "https://{HOST}/ (POST InquiryPriceRunInstances, signed, per type and zone)"
        )]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["tencent"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &[ID, KEY]
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let (Some(id), Some(key)) = (super::env_key(ID), super::env_key(KEY)) else {
            bail!("needs {ID} and {KEY}");
        };
        let (mut rows, mut files, mut notes) = (Vec::new(), Vec::new(), Vec::new());
        for row in china::rows_to_refresh("tencent") {
            let mut answer = None;
            let mut refusals = Vec::new();
            for n in 1..=ZONES {
                let zone = format!("{}-{n}", row.region);
                let fetched_at = super::now();
                let req = inquiry(
                    &id,
                    &key,
                    &row.instance_type,
                    &row.region,
                    &zone,
                    &fetched_at,
                );
                let f = match http.send(&req) {
                    Ok(f) => f,
                    // A mirror without this zone's answer: the zone sells nothing here.
                    Err(super::http::FetchError::NotFound(_)) => continue,
                    Err(e) => bail!("{e}"),
                };
                match unit_price(&f.body) {
                    Ok(Price::Sold(list, discounted)) => {
                        files.push(f.meta.record(&fetched_at));
                        answer = Some((list, discounted, zone, fetched_at, f.meta.sha256));
                        break;
                    }
                    Ok(Price::NotSold(code)) => refusals.push(format!("{zone}: {code}")),
                    Err(e) => {
                        return Err(
                            e.context(format!("{}: {} in {zone}", f.meta.url, row.instance_type))
                        );
                    }
                }
            }
            match answer {
                Some((list, discounted, zone, fetched_at, sha)) => rows.push(china::refreshed(
                    &row,
                    list,
                    format!("Tencent Cloud CVM InquiryPriceRunInstances (https://{HOST}/, {zone}), fetched {fetched_at}, sha256 {}", &sha[..12]),
                    &fetched_at,
                    format!("pay by the hour: UnitPrice (list); {discounted} CNY/h after this account's discount (UnitPriceDiscount)"),
                )),
                None => notes.push(format!(
                    "{} in {}: no zone sells it ({}): the hand-kept row stays",
                    row.instance_type,
                    row.region,
                    if refusals.is_empty() { "no answer".to_string() } else { refusals.join(", ") }
                )),
            }
        }
        if rows.is_empty() {
            bail!(
                "no zone priced any of the catalog's Tencent types: {}",
                notes.join("; ")
            );
        }
        notes.push(format!("{} Tencent types priced", rows.len()));
        Ok(Fetch {
            catalog: Catalog::of_rows(
                "Tencent Cloud InquiryPriceRunInstances",
                "tencent inquiryprice",
                rows,
            ),
            risks: Vec::new(),
            files,
            notes,
        })
    }
}

/// The signed InquiryPriceRunInstances request for one instance type in one zone of its
/// region: one instance, paid by the hour, signed (TC3) at `fetched_at`.
fn inquiry(
    id: &str,
    key: &str,
    instance_type: &str,
    region: &str,
    zone: &str,
    fetched_at: &str,
) -> Request {
    let payload = serde_json::json!({
        "Placement": {"Zone": zone},
        "ImageId": IMAGE,
        "InstanceChargeType": "POSTPAID_BY_HOUR",
        "InstanceType": instance_type,
        "InstanceCount": 1
    })
    .to_string();
    let signer = super::sign::Tc3 {
        secret_id: id,
        secret_key: key,
        service: "cvm",
        host: HOST,
        action: "InquiryPriceRunInstances",
        version: "2017-03-12",
        region: Some(region),
        timestamp: unix(fetched_at),
    };
    Request {
        url: format!("https://{HOST}/"),
        headers: signer.headers(&payload),
        body: Some(payload.into_bytes()),
        mirror: vec![
            ("Action".into(), "InquiryPriceRunInstances".into()),
            ("InstanceType".into(), instance_type.to_string()),
            ("Region".into(), region.to_string()),
            ("Zone".into(), zone.to_string()),
        ],
    }
}

/// Seconds since the epoch of an RFC 3339 time.
fn unix(rfc3339: &str) -> u64 {
    humantime::parse_rfc3339(rfc3339)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

/// What an InquiryPriceRunInstances answer says.
#[derive(Debug, PartialEq)]
pub enum Price {
    /// The list price per hour and the price after the account's discount.
    Sold(f64, f64),
    /// An error code that means this zone does not sell the type (try the next zone).
    NotSold(String),
}

/// Reads `Response.Price.InstancePrice` (`ChargeUnit` HOUR), or the error in `Response.Error`.
pub fn unit_price(body: &[u8]) -> Result<Price> {
    let v: serde_json::Value = serde_json::from_slice(body).context("not JSON")?;
    let r = v.get("Response").context("no Response")?;
    if let Some(e) = r.get("Error") {
        let code = e
            .get("Code")
            .and_then(|c| c.as_str())
            .unwrap_or("")
            .to_string();
        let msg = e.get("Message").and_then(|c| c.as_str()).unwrap_or("");
        // Authentication and request errors fail the source; capacity and zone errors
        // only mean "not here".
        if code.starts_with("AuthFailure")
            || code.starts_with("InvalidParameter") && !code.contains("Zone")
        {
            bail!("Tencent Cloud answered {code}: {msg}");
        }
        return Ok(Price::NotSold(code));
    }
    let p = r
        .pointer("/Price/InstancePrice")
        .context("no Response.Price.InstancePrice")?;
    let unit = p.get("ChargeUnit").and_then(|c| c.as_str()).unwrap_or("");
    if unit != "HOUR" {
        bail!("Response.Price.InstancePrice.ChargeUnit is {unit:?}, expected HOUR");
    }
    let list = p
        .get("UnitPrice")
        .and_then(|x| x.as_f64())
        .context("no UnitPrice")?;
    let disc = p
        .get("UnitPriceDiscount")
        .and_then(|x| x.as_f64())
        .unwrap_or(list);
    if !(list > 0.0 && list.is_finite()) {
        bail!("UnitPrice is {list}: not a price");
    }
    Ok(Price::Sold(list, disc))
}
