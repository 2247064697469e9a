//! `alibaba` (needs `ALIBABA_CLOUD_ACCESS_KEY_ID` and `ALIBABA_CLOUD_ACCESS_KEY_SECRET`):
//! Alibaba Cloud ECS `DescribePrice` (RPC API 2014-05-26, signed with HMAC-SHA1 as its
//! documentation specifies), pay-as-you-go, Linux, VPC, per hour, for each Alibaba GPU type
//! and region the catalog lists: the instance's own price (`DetailInfos`, resource
//! `instance`), without the system disk, as the hand-kept rows were.

use super::http::{Client, Request};
use super::snapshot::FileRecord;
use super::{Fetch, Source, china};
use crate::market::catalog::Catalog;
use anyhow::{Context, Result, bail};

pub const ENDPOINT: &str = "https://ecs.aliyuncs.com/";
const ID: &str = "ALIBABA_CLOUD_ACCESS_KEY_ID";
const SECRET: &str = "ALIBABA_CLOUD_ACCESS_KEY_SECRET";

pub struct Alibaba;

impl Source for Alibaba {
    fn name(&self) -> &'static str {
        "alibaba"
    }
    fn about(&self) -> &'static str {
        "Alibaba Cloud ECS DescribePrice (China list prices, CNY), with your key: ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!(
            "{ENDPOINT}?Action=DescribePrice (signed, per type and region)"
        )]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["alibaba"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &[ID, SECRET]
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let (Some(id), Some(secret)) = (super::env_key(ID), super::env_key(SECRET)) else {
            bail!("needs {ID} and {SECRET}");
        };
        let (mut rows, mut files, mut notes) = (Vec::new(), Vec::new(), Vec::new());
        for row in china::rows_to_refresh("alibaba") {
            let fetched_at = super::now();
            let public: Vec<(String, String)> = [
                ("Action", "DescribePrice"),
                ("Version", "2014-05-26"),
                ("Format", "JSON"),
                ("RegionId", row.region.as_str()),
                ("ResourceType", "instance"),
                ("InstanceType", row.instance_type.as_str()),
                ("PriceUnit", "Hour"),
                ("InstanceNetworkType", "vpc"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let mut signed = public.clone();
            signed.extend(
                [
                    ("AccessKeyId", id.clone()),
                    ("SignatureMethod", "HMAC-SHA1".into()),
                    ("SignatureVersion", "1.0".into()),
                    ("SignatureNonce", china::nonce()),
                    ("Timestamp", fetched_at.clone()),
                ]
                .map(|(k, v)| (k.to_string(), v)),
            );
            let (_, sig) = super::sign::alibaba("GET", &signed, &secret);
            signed.push(("Signature".into(), sig));
            let query: Vec<String> = signed
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}={}",
                        super::sign::ali_escape(k),
                        super::sign::ali_escape(v)
                    )
                })
                .collect();
            let req = Request {
                url: format!("{ENDPOINT}?{}", query.join("&")),
                body: None,
                headers: Vec::new(),
                mirror: public,
            };
            let f = http.send(&req).map_err(|e| anyhow::anyhow!("{e}"))?;
            let what = format!("{} in {}", row.instance_type, row.region);
            let (cny, total) =
                instance_price(&f.body).with_context(|| format!("{}: {what}", f.meta.url))?;
            rows.push(china::refreshed(
                &row,
                cny,
                format!("Alibaba Cloud ECS DescribePrice ({ENDPOINT}), fetched {fetched_at}, sha256 {}", &f.meta.sha256[..12]),
                &fetched_at,
                format!("pay-as-you-go, Linux, VPC: the instance's TradePrice; {total} CNY/h with the default system disk"),
            ));
            files.push(f.meta.record(&fetched_at));
        }
        notes.push(format!("{} Alibaba types and regions priced", rows.len()));
        let _: &[FileRecord] = &files;
        Ok(Fetch {
            catalog: Catalog::of_rows("Alibaba Cloud DescribePrice", "alibaba describeprice", rows),
            risks: Vec::new(),
            files,
            notes,
        })
    }
}

/// The instance's hourly TradePrice in CNY from a DescribePrice answer, and the whole
/// TradePrice (instance and system disk).
pub fn instance_price(body: &[u8]) -> Result<(f64, f64)> {
    let v: serde_json::Value = serde_json::from_slice(body).context("not JSON")?;
    if let Some(code) = v.get("Code").and_then(|c| c.as_str()) {
        bail!(
            "Alibaba Cloud answered {code}: {}",
            v.get("Message").and_then(|m| m.as_str()).unwrap_or("")
        );
    }
    let price = v
        .pointer("/PriceInfo/Price")
        .context("no PriceInfo.Price")?;
    let currency = price.get("Currency").and_then(|c| c.as_str()).unwrap_or("");
    if currency != "CNY" {
        bail!("PriceInfo.Price.Currency is {currency:?}, expected CNY (the China site)");
    }
    let total = price
        .get("TradePrice")
        .and_then(|p| p.as_f64())
        .context("no PriceInfo.Price.TradePrice")?;
    let instance = price
        .pointer("/DetailInfos/ResourcePriceModel")
        .and_then(|m| m.as_array())
        .and_then(|a| {
            a.iter()
                .find(|r| r.get("Resource").and_then(|x| x.as_str()) == Some("instance"))
        })
        .and_then(|r| r.get("TradePrice"))
        .and_then(|p| p.as_f64())
        .unwrap_or(total);
    if !(instance > 0.0 && instance.is_finite()) {
        bail!("the instance's TradePrice is {instance}: not a price");
    }
    Ok((instance, total))
}
