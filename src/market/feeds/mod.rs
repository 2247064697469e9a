//! Live prices: the public price feeds behind one trait, one file per source,
//! and `catalog update`, which fetches them (several at once), checks what came back
//! against the last snapshot and writes a new dated snapshot per source.
//!
//! A new source is one file and one line in [`registry`].

pub mod alibaba;
pub mod aws;
pub mod azure;
pub mod china;
pub mod ecb;
pub mod embedded;
pub mod gates;
pub mod gcp;
pub mod gpuhunt;
pub mod http;
pub mod lambda;
pub mod merge;
pub mod oci;
pub mod offers;
pub mod runpod;
pub mod sign;
pub mod skypilot;
pub mod snapshot;
pub mod tencent;
pub mod vast;

use crate::market::catalog::{Catalog, Severity};
use anyhow::Result;
use snapshot::{Counts, FileRecord};
use std::collections::BTreeMap;

/// What a source read: its rows (instances only; GPU specs and currencies are the
/// embedded catalog's), the files it read and what it said.
pub struct Fetch {
    pub catalog: Catalog,
    /// Spot interruption risk per instance type and region, for any feed's spot price of
    /// it (AWS's Spot Instance Advisor publishes bands but no prices).
    pub risks: Vec<snapshot::Risk>,
    pub files: Vec<FileRecord>,
    pub notes: Vec<String>,
}

/// One price feed.
pub trait Source: Sync {
    /// The name `--source` takes.
    fn name(&self) -> &'static str;
    /// One line: what it is.
    fn about(&self) -> &'static str;
    /// The URLs it reads (patterns where it reads many), for `--list`.
    fn urls(&self) -> Vec<String>;
    /// The providers whose own feed this is: preferred where another feed lists the same
    /// instance.
    fn own_providers(&self) -> &'static [&'static str] {
        &[]
    }
    /// Text in the `source` of the embedded rows this feed supersedes (rows typed in from
    /// an older copy of the same feed); empty: none.
    fn embedded_marker(&self) -> &'static str {
        ""
    }
    /// Whether the feed is the whole market of its own providers (Vast's offer search): with
    /// its snapshot in use, other feeds' rows of those providers give way.
    fn whole_market(&self) -> bool {
        false
    }
    /// The environment variables (keys) it needs: without them it is skipped, and said.
    fn needs(&self) -> &'static [&'static str] {
        &[]
    }
    /// Fetches and parses the feed. An error fails the source (its last snapshot stays).
    fn fetch(&self, http: &http::Client) -> Result<Fetch>;
}

/// The time a fetch is recorded at: now, or `SOURCE_DATE_EPOCH` (seconds) when set, the
/// reproducible-builds convention: the embedded snapshot is rebuilt from the public copies
/// in tests/fixtures/feeds dated by the day they were read, byte for byte.
pub fn now() -> String {
    match std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        Some(secs) => humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
        )
        .to_string(),
        None => crate::files::now_rfc3339(),
    }
}

/// A key from the environment (set and not blank).
pub fn env_key(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

/// The fetch of a source that reads one answer: the request sent, the body read into rows
/// and notes by `read(body, fetched_at, sha256)` (an error names the URL), the file recorded.
pub fn one_answer(
    http: &http::Client,
    req: &http::Request,
    read: impl FnOnce(&[u8], &str, &str) -> Result<(Catalog, Vec<String>)>,
) -> Result<Fetch> {
    use anyhow::Context;
    let fetched_at = now();
    let f = http.send(req).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (catalog, notes) =
        read(&f.body, &fetched_at, &f.meta.sha256).with_context(|| f.meta.url.clone())?;
    Ok(Fetch {
        catalog,
        risks: Vec::new(),
        files: vec![f.meta.record(&fetched_at)],
        notes,
    })
}

/// Every source, in `--list` order.
pub fn registry() -> Vec<&'static dyn Source> {
    vec![
        &skypilot::SkyPilot,
        &aws::Aws,
        &azure::Azure,
        &vast::Vast,
        &runpod::RunPod,
        &oci::Oci,
        &gpuhunt::Gpuhunt,
        &lambda::Lambda,
        &gcp::Gcp,
        &alibaba::Alibaba,
        &tencent::Tencent,
        &ecb::Ecb,
    ]
}

pub fn find(name: &str) -> Option<&'static dyn Source> {
    registry().into_iter().find(|s| s.name() == name)
}

/// The counts of a source's rows as the catalog's checks see them, on the embedded GPU
/// specs and currencies: kept (no error), refused by reason, unmatched accelerators.
pub fn count(rows: &Catalog) -> Counts {
    let mut all = Catalog::embedded();
    all.instances.clear();
    all.origins.clear();
    all.load_findings.clear();
    all.extend(rows.clone());
    let findings = all.check();
    let mut refused_rows: BTreeMap<usize, String> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.severity == Severity::Error) {
        if let Some(i) = f.instance {
            refused_rows
                .entry(i)
                .or_insert_with(|| reason(&all.instances[i].gpu, &f.message));
        }
    }
    let mut c = Counts {
        read: all.instances.len(),
        rates: rows.currencies.len(),
        ..Counts::default()
    };
    for (i, inst) in all.instances.iter().enumerate() {
        match refused_rows.get(&i) {
            Some(r) => {
                *c.refused.entry(r.clone()).or_default() += 1;
                if let crate::market::catalog::GpuId::Unranked(_, name) =
                    crate::market::catalog::GpuId::parse(&inst.gpu)
                {
                    let e = c
                        .unmatched
                        .entry(crate::market::catalog::names::normalize(name))
                        .or_default();
                    e.0 += 1;
                    if !e.1.contains(&inst.provider) {
                        e.1.push(inst.provider.clone());
                    }
                }
            }
            None => {
                c.kept += 1;
                *c.gpus.entry(inst.gpu.clone()).or_default() += 1;
            }
        }
    }
    c
}

/// A refused row's reason, as a short category.
fn reason(gpu: &str, message: &str) -> String {
    if let Some(u) = crate::market::catalog::GpuId::parse(gpu).unranked() {
        u.category().into()
    } else if message.contains("market") {
        "price outside the market band".into()
    } else if message.contains("price") || message.contains("spot") {
        "bad price".into()
    } else {
        "other error".into()
    }
}

pub mod update;
