//! What each provider charges for data moved out of its cloud to the internet
//! (`src/data/egress.json`): the fee no hourly price shows. A job states the
//! data it takes out (`--egress-gb`, or its preset's: a fine-tune's weights, a serving job's
//! responses); each ranked row's cost per job includes that data at its provider's published
//! first-tier price. A provider with no published price is marked on its row, never assumed
//! free. Monthly free allowances are per account and shared with everything else it moves:
//! not subtracted (said).

use serde::Deserialize;
use std::sync::OnceLock;

const EMBEDDED: &str = include_str!("../../data/egress.json");

/// One provider's price of data out to the internet.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Egress {
    pub provider: String,
    /// Price per `unit` of the first paid tier; 0: the provider charges none.
    pub per_unit: f64,
    /// "GB" (10^9 bytes) or "GiB" (2^30 bytes), as the provider prices it.
    pub unit: String,
    pub currency: String,
    /// GB a month free per account before the price applies, where published.
    #[serde(default)]
    pub free_gb_per_month: Option<f64>,
    /// What the price is: tier, regions, destination.
    pub tier: String,
    pub source: String,
    pub as_of: String,
    /// The provider's own page could not be read; the price is a copy elsewhere.
    #[serde(default)]
    pub secondary: bool,
}

impl Egress {
    /// The price per GB (10^9 bytes), whatever unit the provider prices in.
    pub fn per_gb(&self) -> f64 {
        match self.unit.as_str() {
            "GiB" => self.per_unit * 1e9 / (1u64 << 30) as f64,
            _ => self.per_unit,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    schema_version: u32,
    #[allow(dead_code)]
    about: String,
    providers: Vec<Egress>,
}

fn parse(text: &str) -> anyhow::Result<Vec<Egress>> {
    let f: File = crate::files::parse_json(text, "src/data/egress.json")?;
    for (i, e) in f.providers.iter().enumerate() {
        if !(e.per_unit.is_finite() && (0.0..10.0).contains(&e.per_unit)) {
            anyhow::bail!(
                "src/data/egress.json: providers[{i}].per_unit {}: expected 0 to 10",
                e.per_unit
            );
        }
        if !matches!(e.unit.as_str(), "GB" | "GiB") {
            anyhow::bail!(
                "src/data/egress.json: providers[{i}].unit {:?}: expected \"GB\" or \"GiB\"",
                e.unit
            );
        }
        if let Err(why) = crate::files::check_date(&e.as_of) {
            anyhow::bail!("src/data/egress.json: providers[{i}].as_of: {why}");
        }
        if e.source.trim().is_empty() || e.as_of.trim().is_empty() {
            anyhow::bail!(
                "src/data/egress.json: providers[{i}]: a price needs its source and date"
            );
        }
        if f.providers[..i].iter().any(|x| x.provider == e.provider) {
            anyhow::bail!(
                "src/data/egress.json: providers[{i}]: {} listed twice",
                e.provider
            );
        }
    }
    Ok(f.providers)
}

fn all() -> &'static [Egress] {
    static ALL: OnceLock<Vec<Egress>> = OnceLock::new();
    ALL.get_or_init(|| parse(EMBEDDED).expect("src/data/egress.json parses (unit test)"))
}

/// The published price of data out of `provider`'s cloud, if any.
pub fn of(provider: &str) -> Option<&'static Egress> {
    let p = provider.to_lowercase();
    all().iter().find(|e| e.provider == p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_prices_parse_each_with_its_source_and_date() {
        let all = parse(EMBEDDED).unwrap();
        assert!(all.len() >= 8);
        let aws = of("AWS").unwrap();
        assert_eq!((aws.per_gb(), aws.currency.as_str()), (0.09, "USD"));
        assert!(aws.secondary);
        // GCP prices per GiB: 0.12 per GiB is 0.1118 per GB.
        assert!((of("gcp").unwrap().per_gb() - 0.111_758).abs() < 1e-5);
        assert_eq!(of("runpod").unwrap().per_gb(), 0.0);
        assert!(of("no-such-cloud").is_none());
    }

    #[test]
    fn a_price_without_a_source_or_out_of_range_is_refused() {
        let bad = r#"{"schema_version": 1, "about": "", "providers": [
            {"provider": "x", "per_unit": 0.1, "unit": "GB", "currency": "USD", "tier": "", "source": "", "as_of": "2026-01"}]}"#;
        assert!(parse(bad).unwrap_err().to_string().contains("source"));
        let good = bad.replace("\"source\": \"\"", "\"source\": \"s\"");
        assert_eq!(parse(&good).unwrap()[0].per_gb(), 0.1);
        let e = parse(&good.replace("\"per_unit\": 0.1", "\"per_unit\": -1")).unwrap_err();
        assert!(e.to_string().contains("per_unit"), "{e}");
        let e = parse(&good.replace("\"GB\"", "\"TB\"")).unwrap_err();
        assert!(e.to_string().contains("providers[0].unit"), "{e}");
        let e = parse(&good.replace("2026-01", "Jan 2026")).unwrap_err();
        assert!(e.to_string().contains("as_of"), "{e}");
    }
}
