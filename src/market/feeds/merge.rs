//! The catalog a command ranks: the embedded one (GPU specs, currencies, calibration, the
//! hand-kept rows no feed carries) with the prices of each source's current snapshot. A
//! snapshot's row replaces the embedded copy of the same feed (the embedded rows typed in
//! from SkyPilot's files, for the clouds the snapshot carries); the same instance from two
//! feeds is one row, the provider's own feed preferred, a disagreement over 5% reported.

use super::snapshot::{self, InUse};
use crate::market::catalog::{Catalog, Finding, PricingModel, SNAPSHOT_PREFIX, Severity};
use anyhow::Result;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// Two feeds' prices of one instance further apart than this are reported.
const DISAGREE: f64 = 0.05;

/// What a merged catalog's prices came from, for the notes under a ranking.
pub fn provenance(snaps: &[InUse]) -> String {
    let parts: Vec<String> = snaps
        .iter()
        .map(|s| {
            let m = &s.manifest;
            let ok = m.files.iter().filter(|f| f.status == "ok").count();
            format!(
                "{} {} UTC ({}{}, {ok} file{})",
                s.name,
                m.taken_at.replace('T', " ").trim_end_matches('Z'),
                if s.embedded { "built in, " } else { "" },
                snapshot::kept(&m.counts),
                if ok == 1 { "" } else { "s" }
            )
        })
        .collect();
    format!("snapshots {}; the rest hand-kept", parts.join(", "))
}

/// The snapshots in use: per source, the current one under `home` (`catalog update`), else
/// the one built into the binary; `home` None (`--offline`): the built-in ones only. A
/// snapshot that does not load is left out with a warning finding.
pub fn in_use(home: Option<&Path>) -> (Vec<InUse>, Vec<Finding>) {
    let mut snaps = Vec::new();
    let mut unreadable = Vec::new();
    let mut names: BTreeSet<String> = super::embedded::names().map(str::to_string).collect();
    if let Some(h) = home {
        names.extend(snapshot::sources_with_snapshots(h));
    }
    for name in names {
        // A damaged snapshot (edited by hand, a disk error) must not stop every command:
        // its prices are left out, and the catalog's findings say so.
        let own = home.map(|h| snapshot::current(h, &name)).transpose();
        match own {
            Ok(Some(Some(s))) => snaps.push(InUse {
                name,
                manifest: s.manifest,
                catalog: s.catalog,
                risks: s.risks,
                embedded: false,
            }),
            Ok(_) => snaps.extend(super::embedded::get(&name)),
            Err(e) => unreadable.push(Finding {
                severity: Severity::Warning,
                file: format!("{SNAPSHOT_PREFIX}{name}"),
                path: "current".into(),
                row: name.clone(),
                message: format!(
                    "the {name} snapshot does not load ({e:#}): its prices are not used; `gpuvalue catalog update --source {name}` takes a new one"
                ),
                instance: None,
            }),
        }
    }
    (snaps, unreadable)
}

/// `base` with the snapshots in use (see [`in_use`]); the second value names them (None
/// when there are none).
pub fn with_snapshots(mut base: Catalog, home: Option<&Path>) -> Result<(Catalog, Option<String>)> {
    let (snaps, unreadable) = in_use(home);
    base.load_findings.extend(unreadable);
    if snaps.is_empty() {
        return Ok((base, None));
    }
    // The hand-kept rows' prices of kinds no snapshot has (a commitment price from another
    // source) stay, on the snapshot's row of the same instance, after every feed's own.
    let hand: HashMap<String, crate::market::catalog::Instance> = base
        .instances
        .iter()
        .map(|i| (i.key(), i.clone()))
        .collect();
    drop_superseded(&mut base, &snaps);
    let mut from: HashMap<String, String> = HashMap::new();
    let mut manifests = Vec::new();
    let risks: Vec<snapshot::Risk> = snaps.iter().flat_map(|s| s.risks.clone()).collect();
    for mut s in snaps {
        let name = s.name.clone();
        let own = super::find(&name).map_or(&[][..], |x| x.own_providers());
        let mut c = std::mem::replace(&mut s.catalog, Catalog::of_rows("", "", Vec::new()));
        c.set_origins(&format!(
            "{SNAPSHOT_PREFIX}{name} {}{}",
            s.manifest.stamp,
            if s.embedded { " (built in)" } else { "" }
        ));
        let kept = reconcile(&mut base, &mut c, &name, own, &mut from);
        retain_rows(&mut c, &kept);
        keep_newer_rates(&mut c, &base);
        base.extend(c);
        manifests.push(s);
    }
    drop_copies_of_whole_markets(&mut base, &manifests);
    own_price_in_every_region(&mut base, &manifests);
    for inst in &mut base.instances {
        if let Some(h) = hand.get(&inst.key()) {
            fill_missing(inst, h);
        }
    }
    apply_risks(&mut base, &risks);
    Ok((base, Some(provenance(&manifests))))
}

/// One snapshot's rows `c` against the rows `base` has so far: whether to keep each. A row
/// no earlier snapshot gave is kept; for one that another gave (`from` says which), a price
/// disagreement is a warning, and the provider's own feed (`own`) wins, the other's prices
/// of kinds it lacks filled in.
fn reconcile(
    base: &mut Catalog,
    c: &mut Catalog,
    name: &str,
    own: &[&str],
    from: &mut HashMap<String, String>,
) -> Vec<bool> {
    let mut kept = Vec::with_capacity(c.instances.len());
    let index: HashMap<String, usize> = base
        .instances
        .iter()
        .enumerate()
        .map(|(i, x)| (x.key(), i))
        .collect();
    for inst in c.instances.iter_mut() {
        let key = inst.key();
        let (Some(prev_source), Some(&j)) = (from.get(&key), index.get(&key)) else {
            from.insert(key, name.to_string());
            kept.push(true);
            continue;
        };
        let ours = own.contains(&inst.provider.as_str());
        if let Some(d) = disagree(&base.instances[j].prices, &inst.prices) {
            base.load_findings.push(Finding {
                severity: Severity::Warning,
                file: format!("{SNAPSHOT_PREFIX}{name}"),
                path: "instances".into(),
                row: key.clone(),
                message: format!(
                    "{name} and {prev_source} disagree on this instance's price by {:.0}%; {} kept",
                    d * 100.0,
                    if ours { name } else { prev_source.as_str() }
                ),
                instance: Some(j),
            });
        }
        // The provider's own feed wins; the kinds of price it lacks (spot: the AWS Price
        // List has none) stay from the other feed, each with its source.
        if ours {
            fill_missing(inst, &base.instances[j]);
            from.insert(key, name.to_string());
            kept.push(true);
        } else {
            let other = inst.clone();
            fill_missing(&mut base.instances[j], &other);
            kept.push(false);
        }
    }
    kept
}

/// Leaves out of a snapshot's exchange rates those no newer than the catalog's own (a
/// built-in snapshot older than a rate typed into the embedded catalog never replaces it).
fn keep_newer_rates(c: &mut Catalog, base: &Catalog) {
    c.currencies.retain(|code, x| {
        base.currencies
            .get(code)
            .is_none_or(|own| x.as_of.as_str() > own.as_of.as_str())
    });
    c.currency_origins
        .retain(|code, _| c.currencies.contains_key(code));
}

/// Gives each spot price without a published risk the one a feed gives its instance type
/// and region (the spot price from SkyPilot's file, the band from AWS's Spot Advisor).
fn apply_risks(c: &mut Catalog, risks: &[snapshot::Risk]) {
    if risks.is_empty() {
        return;
    }
    let by_key: HashMap<(&str, &str, &str), &snapshot::Risk> = risks
        .iter()
        .map(|r| {
            (
                (
                    r.provider.as_str(),
                    r.instance_type.as_str(),
                    r.region.as_str(),
                ),
                r,
            )
        })
        .collect();
    for inst in &mut c.instances {
        let key = (
            inst.provider.as_str(),
            inst.instance_type.as_str(),
            inst.region.as_str(),
        );
        if let Some(r) = by_key.get(&key)
            && let Some(spot) = inst.prices.get_mut(&PricingModel::Spot)
            && spot.interruption.as_ref().is_none_or(|i| i.band.is_none())
        {
            spot.interruption = Some(r.interruption.clone());
        }
    }
}

/// Drops the embedded rows a snapshot supersedes: the same feed's rows typed in by hand, for
/// the instance types the snapshot carries (a type it lacks, as in a filtered copy, keeps its
/// hand-kept row).
fn drop_superseded(base: &mut Catalog, snaps: &[InUse]) {
    let mut superseded: BTreeSet<(String, String, &'static str)> = BTreeSet::new();
    for s in snaps {
        if let Some(src) = super::find(&s.name).filter(|x| !x.embedded_marker().is_empty()) {
            for i in &s.catalog.instances {
                superseded.insert((
                    i.provider.clone(),
                    i.instance_type.clone(),
                    src.embedded_marker(),
                ));
            }
        }
    }
    let keep: Vec<bool> = base
        .instances
        .iter()
        .map(|i| {
            !superseded.iter().any(|(p, t, marker)| {
                *p == i.provider && *t == i.instance_type && i.source.contains(marker)
            })
        })
        .collect();
    retain_rows(base, &keep);
}

/// A feed that is its providers' whole market (Vast's own search) replaces what other feeds
/// copied of it.
fn drop_copies_of_whole_markets(base: &mut Catalog, snaps: &[InUse]) {
    let whole: Vec<(String, String)> = snaps
        .iter()
        .filter_map(|s| super::find(&s.name).filter(|x| x.whole_market()))
        .flat_map(|x| {
            x.own_providers()
                .iter()
                .map(move |p| (p.to_string(), format!("{SNAPSHOT_PREFIX}{} ", x.name())))
        })
        .collect();
    if whole.is_empty() {
        return;
    }
    let keep: Vec<bool> = base
        .instances
        .iter()
        .zip(&base.origins)
        .map(|(i, o)| {
            !whole
                .iter()
                .any(|(p, own)| *p == i.provider && !o.file.starts_with(own.as_str()))
        })
        .collect();
    retain_rows(base, &keep);
}

/// A provider's own feed that prices an instance type the same everywhere (region `any`:
/// OCI's estimator) gives that price to the rows other feeds list in named regions (the
/// regions where the type is offered), a disagreement over 5% reported; its own row then
/// stands for them and goes. Where no other feed names a region, its row stays.
fn own_price_in_every_region(base: &mut Catalog, snaps: &[InUse]) {
    let mut keep = vec![true; base.instances.len()];
    for s in snaps {
        let Some(src) = super::find(&s.name) else {
            continue;
        };
        let own_prefix = format!("{SNAPSHOT_PREFIX}{} ", s.name);
        let anywhere: Vec<usize> = (0..base.instances.len())
            .filter(|&i| {
                let r = &base.instances[i];
                r.region == "any"
                    && src.own_providers().contains(&r.provider.as_str())
                    && base.origins[i].file.starts_with(&own_prefix)
            })
            .collect();
        for i in anywhere {
            let own = base.instances[i].clone();
            let mut used = false;
            for j in 0..base.instances.len() {
                let r = &base.instances[j];
                if j == i
                    || r.region == "any"
                    || r.provider != own.provider
                    || r.instance_type != own.instance_type
                    || base.origins[j].file.starts_with(&own_prefix)
                {
                    continue;
                }
                if let Some(d) = disagree(&r.prices, &own.prices) {
                    base.load_findings.push(Finding {
                        severity: Severity::Warning,
                        file: format!("{SNAPSHOT_PREFIX}{}", s.name),
                        path: "instances".into(),
                        row: r.key(),
                        message: format!(
                            "{} (the provider's own feed, one price for every region) and this row's feed disagree on its price by {:.0}%; {} kept",
                            s.name,
                            d * 100.0,
                            s.name
                        ),
                        instance: Some(j),
                    });
                }
                let row = &mut base.instances[j];
                for (m, p) in &own.prices {
                    let mut p = p.clone();
                    p.source.get_or_insert_with(|| own.source.clone());
                    p.as_of.get_or_insert_with(|| own.as_of.clone());
                    row.prices.insert(*m, p);
                }
                used = true;
            }
            if used {
                keep[i] = false;
            }
        }
    }
    retain_rows(base, &keep);
}

/// Adds to `row` the kinds of price only `other` has, naming their source and date.
fn fill_missing(
    row: &mut crate::market::catalog::Instance,
    other: &crate::market::catalog::Instance,
) {
    for (m, p) in &other.prices {
        if !row.prices.contains_key(m) {
            let mut p = p.clone();
            p.source.get_or_insert_with(|| other.source.clone());
            p.as_of.get_or_insert_with(|| other.as_of.clone());
            row.prices.insert(*m, p);
        }
    }
}

/// The largest relative difference between two rows' prices of the same kind, if over 5%.
fn disagree(
    a: &std::collections::BTreeMap<PricingModel, crate::market::catalog::Price>,
    b: &std::collections::BTreeMap<PricingModel, crate::market::catalog::Price>,
) -> Option<f64> {
    a.iter()
        .filter_map(|(m, p)| {
            let q = b.get(m)?;
            (p.currency == q.currency && p.amount > 0.0)
                .then(|| ((q.amount - p.amount) / p.amount).abs())
        })
        .filter(|d| *d > DISAGREE)
        .reduce(f64::max)
}

/// Leaves out the snapshot rows whose checks failed (a GPU without a datasheet entry yet, a
/// flagged price: hundreds in a feed), and says how many; `catalog check` lists each.
pub fn drop_flagged_snapshot_rows(c: &mut Catalog) -> usize {
    let mut keep = vec![true; c.instances.len()];
    for x in c.check().iter().filter(|x| x.severity == Severity::Error) {
        if let Some(i) = x.instance
            && x.file.starts_with(SNAPSHOT_PREFIX)
        {
            keep[i] = false;
        }
    }
    let left_out = keep.iter().filter(|k| !**k).count();
    retain_rows(c, &keep);
    left_out
}

/// Keeps the rows marked true, with their origins and load findings (renumbered).
pub fn retain_rows(c: &mut Catalog, keep: &[bool]) {
    let mut new_index = vec![None; keep.len()];
    let mut n = 0;
    for (i, k) in keep.iter().enumerate() {
        if *k {
            new_index[i] = Some(n);
            n += 1;
        }
    }
    let mut it = keep.iter();
    c.instances.retain(|_| *it.next().unwrap_or(&true));
    let mut it = keep.iter();
    c.origins.retain(|_| *it.next().unwrap_or(&true));
    c.load_findings.retain_mut(|f| match f.instance {
        Some(i) => match new_index.get(i).copied().flatten() {
            Some(j) => {
                f.instance = Some(j);
                true
            }
            None => false,
        },
        None => true,
    });
}
