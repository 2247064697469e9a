//! `ecb`: the European Central Bank's euro foreign exchange reference rates, the source the
//! catalog's exchange rates come from (USD, CNY, EUR and the rest the ECB publishes), no key.
//! `https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip` holds one
//! `eurofxref-hist.csv`: a header `Date,USD,JPY,...,` (every line ends in a comma), then one
//! line a business day, newest first, each rate in units per 1 EUR, `N/A` where the ECB
//! publishes none (a currency it stopped quoting). The whole history rather than the day's
//! file: the newest day is checked against the days before it, so one bad fixing is caught
//! on the first snapshot too.
//!
//! A rate per USD is the currency's rate over USD's on the same day (EUR's is 1 over USD's),
//! rounded to 6 significant figures. The snapshot's rates replace the embedded catalog's where
//! they are newer (`merge`); gates refuse a snapshot older than the last one or with a rate
//! that moved too far from it (`gates::rate_refusals`).

use super::http::Client;
use super::{Fetch, Source};
use crate::market::catalog::{Catalog, Currency};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;

pub const URL: &str = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip";
/// The newest day's rate may differ from the median of the days before it by this share at
/// most: USD's beyond it fails the source (every rate is divided by it); another currency's
/// leaves that currency out, said in the notes.
pub const MAX_DAY_MOVE: f64 = 0.10;
/// The business days before the newest whose median the newest day is checked against.
const DAYS_BEFORE: usize = 10;

pub struct Ecb;

impl Source for Ecb {
    fn name(&self) -> &'static str {
        "ecb"
    }
    fn about(&self) -> &'static str {
        "the European Central Bank's daily euro reference rates: the exchange rates (USD, CNY, EUR, ...), no key"
    }
    fn urls(&self) -> Vec<String> {
        vec![URL.to_string()]
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let req = super::http::Request {
            url: URL.to_string(),
            body: None,
            headers: Vec::new(),
            mirror: Vec::new(),
        };
        super::one_answer(http, &req, |body, at, sha| {
            rates(&super::gpuhunt::csv_of(body, "eurofxref-hist")?, at, sha)
        })
    }
}

/// The day's rates per 1 EUR, by currency (`N/A` left out).
struct Day {
    date: String,
    per_eur: BTreeMap<String, f64>,
}

/// The days of `eurofxref-hist.csv`, newest first.
fn days(text: &str) -> Result<Vec<Day>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .context("empty file: expected the header `Date,USD,...`")?
        .split(',')
        .map(str::trim)
        .collect();
    if header.first() != Some(&"Date") || !header.contains(&"USD") {
        bail!(
            "line 1: expected the header `Date,USD,...` of eurofxref-hist.csv, found {:?}",
            header.iter().take(3).collect::<Vec<_>>()
        );
    }
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let date = cells[0];
        crate::files::check_date(date).map_err(|e| anyhow::anyhow!("line {}: Date: {e}", i + 2))?;
        let mut per_eur = BTreeMap::new();
        for (code, cell) in header.iter().zip(&cells).skip(1) {
            if code.is_empty() || cell.is_empty() || *cell == "N/A" {
                continue;
            }
            let v: f64 = cell.parse().map_err(|_| {
                anyhow::anyhow!(
                    "line {}, {code}: expected a rate per EUR or N/A, found {cell:?}",
                    i + 2
                )
            })?;
            if !(v.is_finite() && v > 0.0) {
                bail!("line {}, {code}: a rate must be positive, found {v}", i + 2);
            }
            per_eur.insert(code.to_string(), v);
        }
        out.push(Day {
            date: date.to_string(),
            per_eur,
        });
    }
    out.sort_by(|a, b| b.date.cmp(&a.date));
    Ok(out)
}

/// `v` to 6 significant figures.
fn sig6(v: f64) -> f64 {
    let digits = 5 - v.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    (v * scale).round() / scale
}

/// The median of `code`'s rate over the days before the newest.
fn median_before(days: &[Day], code: &str) -> Option<f64> {
    let mut v: Vec<f64> = days[1..]
        .iter()
        .filter_map(|d| d.per_eur.get(code).copied())
        .take(DAYS_BEFORE)
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The newest day's rates as a catalog's currencies (per USD), and what was said.
pub fn rates(text: &str, fetched_at: &str, sha256: &str) -> Result<(Catalog, Vec<String>)> {
    let days = days(text)?;
    let Some(newest) = days.first() else {
        bail!("no day's rates in the file");
    };
    let usd = *newest
        .per_eur
        .get("USD")
        .with_context(|| format!("{}: no USD rate on the newest day", newest.date))?;
    let mut notes = Vec::new();
    let jump = |code: &str, v: f64| -> Option<f64> {
        let m = median_before(&days, code)?;
        let d = v / m - 1.0;
        (d.abs() > MAX_DAY_MOVE).then_some(d)
    };
    if let Some(d) = jump("USD", usd) {
        bail!(
            "{}: USD at {usd} per EUR is {:+.1}% from the median of the {DAYS_BEFORE} days before (over {:.0}%): a bad fixing or a bad file",
            newest.date,
            d * 100.0,
            MAX_DAY_MOVE * 100.0
        );
    }
    let source = |what: String| {
        format!(
            "ECB euro foreign exchange reference rates of {} ({URL}, fetched {fetched_at}, sha256 {}): {what}",
            newest.date,
            crate::text::prefix(sha256, 12)
        )
    };
    let mut c = Catalog::of_rows(
        &format!("ECB euro reference rates of {}", newest.date),
        "ecb",
        Vec::new(),
    );
    c.currencies.insert(
        "EUR".into(),
        Currency {
            per_usd: sig6(1.0 / usd),
            as_of: newest.date.clone(),
            source: source(format!("1 / (USD {usd} per EUR)")),
        },
    );
    let mut left_out = Vec::new();
    for (code, &v) in &newest.per_eur {
        if code == "USD" || code == "EUR" {
            continue;
        }
        if let Some(d) = jump(code, v) {
            left_out.push(format!("{code} ({:+.1}%)", d * 100.0));
            continue;
        }
        c.currencies.insert(
            code.clone(),
            Currency {
                per_usd: sig6(v / usd),
                as_of: newest.date.clone(),
                source: source(format!("{code} {v} / USD {usd} per EUR")),
            },
        );
    }
    notes.push(format!(
        "rates of {}: {} currencies per USD (CNY {}, EUR {})",
        newest.date,
        c.currencies.len(),
        c.currencies
            .get("CNY")
            .map_or("none".into(), |x| x.per_usd.to_string()),
        c.currencies["EUR"].per_usd
    ));
    if !left_out.is_empty() {
        notes.push(format!(
            "left out, the newest day over {:.0}% from the median of the {DAYS_BEFORE} before: {}",
            MAX_DAY_MOVE * 100.0,
            left_out.join(", ")
        ));
    }
    Ok((c, notes))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub const HEAD: &str = "Date,USD,JPY,BGN,CNY,TRY,\n\
        2026-10-30,1.1172,175.68,N/A,7.4326,55.8015,\n\
        2026-10-29,1.113,175.92,N/A,7.4144,45.4691,\n\
        2026-10-28,1.1133,175.86,N/A,7.4217,45.4846,\n";

    #[test]
    fn the_newest_day_per_usd_with_n_a_and_a_jump_left_out() {
        let (c, notes) = rates(HEAD, "2026-12-06T00:00:00Z", "abcdef0123456789").unwrap();
        let r = |k: &str| c.currencies[k].per_usd;
        assert_eq!(r("CNY"), 6.65288, "7.4326 / 1.1172");
        assert_eq!(r("EUR"), 0.895095, "1 / 1.1172");
        assert_eq!(r("JPY"), 157.25);
        assert!(!c.currencies.contains_key("BGN"), "N/A is no rate");
        assert!(!c.currencies.contains_key("TRY"), "a 23% jump in a day");
        assert!(notes[1].contains("TRY (+22.7%)"), "{notes:?}");
        assert_eq!(c.currencies["CNY"].as_of, "2026-10-30");
        assert!(
            c.currencies["CNY"]
                .source
                .contains("CNY 7.4326 / USD 1.1172")
        );
    }

    #[test]
    fn a_bad_usd_fixing_or_a_broken_file_fails_the_source() {
        let bad = HEAD.replace("2026-10-30,1.1172", "2026-10-30,11.172");
        let e = rates(&bad, "t", "s").unwrap_err().to_string();
        assert!(e.contains("USD at 11.172 per EUR is +903.5%"), "{e}");
        let e = rates("Day,EUR\n", "t", "s").unwrap_err().to_string();
        assert!(e.contains("expected the header `Date,USD,...`"), "{e}");
        let e = rates(&HEAD.replace("175.68", "17x"), "t", "s")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 2, JPY: expected a rate per EUR or N/A, found \"17x\""),
            "{e}"
        );
    }
}
