//! Trust before a snapshot replaces the last one: the gates a new
//! snapshot of a source must pass, and the diff against the previous one.

use super::snapshot::Counts;
use crate::market::catalog::{Catalog, PricingModel};
use std::collections::BTreeMap;

/// A source's kept rows may fall to this share of the last snapshot's and no further.
const MIN_ROW_SHARE: f64 = 0.5;
/// A GPU with at least this many rows last time is one the source "always has".
const ALWAYS_HAD_ROWS: usize = 3;
/// An exchange rate may move this share from the last snapshot's at most.
const MAX_RATE_MOVE: f64 = 0.10;
/// A price moving more than this share is listed in the diff.
const MOVE_SHARE: f64 = 0.10;

/// Why a new snapshot may not replace the previous one; empty when it may.
pub fn refusals(new: &Counts, prev: &Counts) -> Vec<String> {
    let mut why = Vec::new();
    if prev.kept >= 10 && (new.kept as f64) < MIN_ROW_SHARE * prev.kept as f64 {
        why.push(format!(
            "{} rows kept against {} last time (under {:.0}%)",
            new.kept,
            prev.kept,
            MIN_ROW_SHARE * 100.0
        ));
    }
    let gone: Vec<&str> = prev
        .gpus
        .iter()
        .filter(|(g, n)| **n >= ALWAYS_HAD_ROWS && !new.gpus.contains_key(*g))
        .map(|(g, _)| g.as_str())
        .collect();
    if !gone.is_empty() {
        why.push(format!(
            "GPUs it always had are missing: {}",
            gone.join(", ")
        ));
    }
    why
}

/// Why a new snapshot's rates may not replace the last one's: older rates, or a rate that
/// moved more than [`MAX_RATE_MOVE`]; empty when they may.
pub fn rate_refusals(new: &Catalog, prev: &Catalog) -> Vec<String> {
    let mut why = Vec::new();
    let date = |c: &Catalog| c.currencies.values().map(|x| x.as_of.clone()).max();
    if let (Some(n), Some(p)) = (date(new), date(prev))
        && n < p
    {
        why.push(format!(
            "its rates are of {n}, older than the last snapshot's {p}"
        ));
    }
    let moved: Vec<String> = new
        .currencies
        .iter()
        .filter_map(|(code, x)| {
            let o = prev.currencies.get(code)?.per_usd;
            let d = x.per_usd / o - 1.0;
            (d.abs() > MAX_RATE_MOVE)
                .then(|| format!("{code} {o} -> {} ({:+.0}%)", x.per_usd, d * 100.0))
        })
        .collect();
    if !moved.is_empty() {
        why.push(format!(
            "rates moved more than {:.0}% from the last snapshot: {}",
            MAX_RATE_MOVE * 100.0,
            moved.join(", ")
        ));
    }
    why
}

/// The changes from `prev` to `new`: types that appeared or went, prices that moved more
/// than 10%; one line each, after a summary line.
pub fn diff(prev: Option<&Catalog>, new: &Catalog) -> String {
    let Some(prev) = prev else {
        return if new.currencies.is_empty() {
            format!("first snapshot: {} rows\n", new.instances.len())
        } else {
            format!(
                "first snapshot: {} rows, {} exchange rates\n",
                new.instances.len(),
                new.currencies.len()
            )
        };
    };
    let index = |c: &Catalog| -> BTreeMap<String, BTreeMap<PricingModel, f64>> {
        c.instances
            .iter()
            .map(|i| {
                let p = i.prices.iter().map(|(m, p)| (*m, p.amount)).collect();
                (i.key(), p)
            })
            .collect()
    };
    let (a, b) = (index(prev), index(new));
    let mut lines = Vec::new();
    let (mut added, mut gone, mut moved) = (0, 0, 0);
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        lines.push(format!("+ {k}"));
        added += 1;
    }
    for k in a.keys().filter(|k| !b.contains_key(*k)) {
        lines.push(format!("- {k}"));
        gone += 1;
    }
    for (k, new_p) in &b {
        let Some(old_p) = a.get(k) else { continue };
        for (m, v) in new_p {
            if let Some(o) = old_p.get(m)
                && *o > 0.0
                && ((v - o) / o).abs() > MOVE_SHARE
            {
                lines.push(format!(
                    "~ {k} {}: {o} -> {v} ({:+.0}%)",
                    m.name(),
                    (v - o) / o * 100.0
                ));
                moved += 1;
            }
        }
    }
    let mut summary = format!(
        "{added} types appeared, {gone} went, {moved} prices moved more than {:.0}%",
        MOVE_SHARE * 100.0
    );
    if !new.currencies.is_empty() {
        summary.push_str(&rate_lines(prev, new, &mut lines));
    }
    format!(
        "{summary}\n{}",
        lines.iter().map(|l| format!("{l}\n")).collect::<String>()
    )
}

/// The exchange rates' changes, one line each (every move, the rates being few); the
/// summary's part.
fn rate_lines(prev: &Catalog, new: &Catalog, lines: &mut Vec<String>) -> String {
    let (mut added, mut moved) = (0, 0);
    for (code, x) in &new.currencies {
        match prev.currencies.get(code) {
            None => {
                lines.push(format!("+ rate {code} {} per USD ({})", x.per_usd, x.as_of));
                added += 1;
            }
            Some(o) if o.per_usd != x.per_usd => {
                lines.push(format!(
                    "~ rate {code}: {} ({}) -> {} ({}) per USD ({:+.1}%)",
                    o.per_usd,
                    o.as_of,
                    x.per_usd,
                    x.as_of,
                    (x.per_usd / o.per_usd - 1.0) * 100.0
                ));
                moved += 1;
            }
            Some(_) => {}
        }
    }
    let gone = prev
        .currencies
        .keys()
        .filter(|k| !new.currencies.contains_key(*k))
        .inspect(|k| lines.push(format!("- rate {k}")))
        .count();
    format!("; {added} exchange rates appeared, {gone} went, {moved} moved")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(kept: usize, gpus: &[(&str, usize)]) -> Counts {
        Counts {
            kept,
            gpus: gpus.iter().map(|(g, n)| (g.to_string(), *n)).collect(),
            ..Counts::default()
        }
    }

    #[test]
    fn a_source_that_shrank_or_lost_a_gpu_is_refused() {
        let prev = counts(100, &[("h100-sxm", 20), ("t4", 2)]);
        assert!(
            refusals(&counts(90, &[("h100-sxm", 18)]), &prev).is_empty(),
            "t4 had 2 rows only"
        );
        let r = refusals(&counts(40, &[("h100-sxm", 10)]), &prev);
        assert!(r[0].contains("40 rows kept against 100"), "{r:?}");
        let r = refusals(&counts(95, &[("t4", 2)]), &prev);
        assert!(r[0].contains("h100-sxm"), "{r:?}");
    }

    #[test]
    fn older_rates_or_a_big_move_against_the_last_snapshot_are_refused() {
        let (new, _) = super::super::ecb::rates(super::super::ecb::tests::HEAD, "t", "s").unwrap();
        let mut prev = new.clone();
        assert!(rate_refusals(&new, &prev).is_empty());
        prev.currencies.get_mut("CNY").unwrap().per_usd = 5.0;
        let why = rate_refusals(&new, &prev);
        assert!(why[0].contains("CNY 5 -> 6.65288 (+33%)"), "{why:?}");
        for x in prev.currencies.values_mut() {
            x.as_of = "2026-11-02".into();
        }
        let why = rate_refusals(&new, &prev);
        assert!(
            why[0].contains("older than the last snapshot's 2026-11-02"),
            "{why:?}"
        );
    }
}
