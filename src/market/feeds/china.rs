//! What the two keyed China sources share: the rows they refresh (the catalog's hand-kept
//! rows of that provider: the instance types the product's first users asked about), a
//! refreshed row, and a nonce.

use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel, Tier};

/// The embedded catalog's priced rows of `provider`, one per instance type and region.
pub fn rows_to_refresh(provider: &str) -> Vec<Instance> {
    Catalog::embedded()
        .instances
        .into_iter()
        .filter(|i| i.provider == provider && !i.prices.is_empty() && i.retired.is_none())
        .collect()
}

/// `row` with a new on-demand list price in CNY, dated and sourced by this fetch.
pub fn refreshed(
    row: &Instance,
    cny: f64,
    source: String,
    fetched_at: &str,
    notes: String,
) -> Instance {
    let mut r = row.clone();
    r.prices.clear();
    r.prices.insert(
        PricingModel::OnDemand,
        Price {
            amount: cny,
            currency: "CNY".into(),
            per: "hour".into(),
            tier: Some(Tier::List),
            as_of: None,
            source: None,
            interruption: None,
        },
    );
    r.source = source;
    r.as_of = fetched_at[..10].to_string();
    r.confidence = Confidence::High;
    r.notes = Some(notes);
    r
}

/// A fresh nonce per call (Alibaba refuses a repeated `SignatureNonce`): the time in
/// nanoseconds, the process and a counter.
pub fn nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}-{}",
        crate::clock::since_epoch().as_nanos(),
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}
