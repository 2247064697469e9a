//! Trust before a snapshot replaces the last one (issue 33, item 3): the gates a new
//! snapshot of a source must pass, and the diff against the previous one.

use super::snapshot::Counts;
use crate::catalog::{Catalog, PricingModel};
use std::collections::BTreeMap;

/// A source's kept rows may fall to this share of the last snapshot's and no further.
const MIN_ROW_SHARE: f64 = 0.5;
/// A GPU with at least this many rows last time is one the source "always has".
const ALWAYS_HAD_ROWS: usize = 3;
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

/// The changes from `prev` to `new`: types that appeared or went, prices that moved more
/// than 10%; one line each, after a summary line.
pub fn diff(prev: Option<&Catalog>, new: &Catalog) -> String {
    let Some(prev) = prev else {
        return format!("first snapshot: {} rows\n", new.instances.len());
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
    format!(
        "{added} types appeared, {gone} went, {moved} prices moved more than {:.0}%\n{}",
        MOVE_SHARE * 100.0,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>()
    )
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
}
