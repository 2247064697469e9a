//! The market band: a price far under what every other provider asks for
//! the same GPU is a data error (Mithril's 8x B200 at cents an hour), not a bargain. Per
//! catalog GPU and pricing model, the median per-GPU hour across providers (each provider's
//! own median first, so a provider with 300 rows counts once); a price under a twentieth of it
//! (marketplaces, spot and old GPUs at neoclouds run 3-15x under list; cents for dollars
//! are 100x and more)
//! is an error (the row does not rank; `catalog check` lists it), one over five times it a
//! warning.

use super::{Catalog, PricingModel, Severity};
use std::collections::BTreeMap;

/// Below this share of the market median a price is refused.
pub const LOW: f64 = 0.05;
/// Above this multiple of it a price is warned about.
pub const HIGH: f64 = 5.0;
/// Providers needed before a median means anything.
const MIN_PROVIDERS: usize = 3;

/// (instance index, pricing model, severity, message) for each price outside the band.
pub fn outside_band(c: &Catalog) -> Vec<(usize, PricingModel, Severity, String)> {
    // (gpu, model) -> provider -> per-GPU USD prices
    type Key = (String, PricingModel);
    let mut by: BTreeMap<Key, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    let per_gpu = |i: usize, m: PricingModel| -> Option<f64> {
        let inst = &c.instances[i];
        let p = inst.prices.get(&m)?;
        let usd = c.convert(p.amount, &p.currency, "USD").ok()?;
        (inst.gpu_count > 0 && usd > 0.0 && inst.retired.is_none())
            .then(|| usd / f64::from(inst.gpu_count))
    };
    for (i, inst) in c.instances.iter().enumerate() {
        if c.gpu(&inst.gpu).is_none() {
            continue;
        }
        for m in inst.prices.keys() {
            if let Some(v) = per_gpu(i, *m) {
                by.entry((inst.gpu.clone(), *m))
                    .or_default()
                    .entry(inst.provider.clone())
                    .or_default()
                    .push(v);
            }
        }
    }
    let medians: BTreeMap<Key, (f64, usize)> = by
        .into_iter()
        .filter(|(_, providers)| providers.len() >= MIN_PROVIDERS)
        .map(|(k, providers)| {
            let n = providers.len();
            let mut meds: Vec<f64> = providers.into_values().map(median).collect();
            meds.sort_by(f64::total_cmp);
            (k, (median(meds), n))
        })
        .collect();
    let mut out = Vec::new();
    for (i, inst) in c.instances.iter().enumerate() {
        for m in inst.prices.keys() {
            let (Some(v), Some((med, n))) = (per_gpu(i, *m), medians.get(&(inst.gpu.clone(), *m)))
            else {
                continue;
            };
            let ratio = v / med;
            let what = format!(
                "{v:.4} USD per GPU-hour is {ratio:.2}x the market median {med:.2} of {n} providers for {} {}",
                inst.gpu,
                m.name().replace('_', "-")
            );
            if ratio < LOW {
                out.push((
                    i,
                    *m,
                    Severity::Error,
                    format!("{what}: under {LOW}x, a data error (cents for dollars?), not ranked"),
                ));
            } else if ratio > HIGH {
                out.push((i, *m, Severity::Warning, format!("{what}: over {HIGH}x")));
            }
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
