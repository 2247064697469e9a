//! A fleet's results files taken together: grouped by the instance they ran on (or, without
//! `--instance`, the host) and the GPU model, the median of each figure per group, and the
//! adapters that fall behind their siblings (the slow GPU of an 8-GPU node). Also the check
//! of `bench --instance` against the catalog. Pure functions over loaded files.

use crate::figure::FigureKey;
use crate::market::catalog::Catalog;
use crate::model::InstanceRef;
use crate::results::ResultsFile;
use crate::stats::median;
use serde::Serialize;
use std::collections::BTreeMap;

/// An adapter more than this fraction below its group's median on a figure is flagged.
pub const OUTLIER_SHORTFALL: f64 = 0.15;

/// `--instance` checked against the catalog: provider, type and region (if given) must be
/// listed; the result is spelled as the catalog spells it. The error names the unknown part
/// and what the catalog has instead.
pub fn check_instance(catalog: &Catalog, want: &InstanceRef) -> Result<InstanceRef, String> {
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    let rows = &catalog.instances;
    let Some(provider) = rows.iter().find(|i| same(&i.provider, &want.provider)) else {
        return Err(format!(
            "--instance {want}: unknown provider `{}`; the catalog has {}",
            want.provider,
            listing(rows.iter().map(|i| i.provider.as_str()))
        ));
    };
    let provider = provider.provider.clone();
    let of_provider = || rows.iter().filter(|i| i.provider == provider);
    let Some(ty) = of_provider().find(|i| same(&i.instance_type, &want.instance_type)) else {
        return Err(format!(
            "--instance {want}: unknown instance type `{}` for provider {provider}; the catalog has {}",
            want.instance_type,
            listing(of_provider().map(|i| i.instance_type.as_str()))
        ));
    };
    let instance_type = ty.instance_type.clone();
    let of_type = || of_provider().filter(|i| i.instance_type == instance_type);
    let region = match &want.region {
        None => None,
        Some(r) => match of_type().find(|i| same(&i.region, r)) {
            Some(i) => Some(i.region.clone()),
            None => {
                return Err(format!(
                    "--instance {want}: region `{r}` is not listed for {provider}:{instance_type}; the catalog has {}",
                    listing(of_type().map(|i| i.region.as_str()))
                ));
            }
        },
    };
    Ok(InstanceRef {
        provider,
        instance_type,
        region,
    })
}

/// Distinct names, sorted, at most 12 shown.
fn listing<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut v: Vec<&str> = names.collect();
    v.sort_unstable();
    v.dedup();
    let more = v.len().saturating_sub(12);
    let mut s = v[..v.len().min(12)].join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    if s.is_empty() {
        s = "none".into();
    }
    s
}

/// When a hardware adapter is a catalog GPU other than the one the instance has: the
/// warning (a mislabelled run, or the wrong `--instance`).
pub fn gpu_mismatch(catalog: &Catalog, r: &ResultsFile) -> Option<String> {
    let inst = r.instance.as_ref()?;
    if r.adapter.software {
        return None;
    }
    let gpu = catalog.match_adapter(r.catalog_name())?;
    let listed: Vec<&str> = catalog
        .instances
        .iter()
        .filter(|i| i.provider == inst.provider && i.instance_type == inst.instance_type)
        .map(|i| i.gpu.as_str())
        .collect();
    (!listed.is_empty() && !listed.contains(&gpu.id.as_str())).then(|| {
        format!(
            "adapter {} is catalog GPU {}, but {inst} has {}",
            r.adapter.name,
            gpu.id,
            listing(listed.into_iter())
        )
    })
}

/// One results file in a group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Member {
    pub file: String,
    pub host: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
}

/// Sibling adapters: the same instance (or host, without one) and the same GPU model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    /// `provider:type`, or `host NAME` for files recorded without an instance.
    pub place: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<InstanceRef>,
    /// The regions the members recorded (the group spans them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<String>,
    pub adapter: String,
    pub software: bool,
    pub members: Vec<Member>,
    /// Per figure, the median over the members of each one's best result.
    pub medians: BTreeMap<FigureKey, f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// An adapter more than `OUTLIER_SHORTFALL` behind its group's median (3+ siblings).
    Outlier,
    /// Two siblings that differ by more than that: which one is slow cannot be told.
    Disagree,
    /// The adapter is not the GPU the recorded instance has.
    GpuMismatch,
}

/// Something a reader of a fleet's ranking must know, naming the file and adapter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub file: String,
    pub adapter: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    pub place: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure: Option<FigureKey>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_median: Option<f64>,
    /// How far behind the group's median, in percent (slower is positive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behind_percent: Option<f64>,
    pub message: String,
}

/// The fleet view of a set of results files.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Fleet {
    pub groups: Vec<Group>,
    pub findings: Vec<Finding>,
}

impl Fleet {
    /// Whether there is anything beyond one file per machine to say.
    pub fn is_notable(&self) -> bool {
        !self.findings.is_empty()
            || self
                .groups
                .iter()
                .any(|g| g.members.len() > 1 || g.instance.is_some())
    }

    /// One line per group and per finding, for the terminal and Markdown.
    pub fn lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        for g in &self.groups {
            let regions = if g.regions.is_empty() {
                String::new()
            } else {
                format!(" ({})", g.regions.join(", "))
            };
            let software = if g.software {
                " [software adapter]"
            } else {
                ""
            };
            v.push(format!(
                "fleet: {}{regions}: {} x {}{software}, median per figure over {} file(s)",
                g.place,
                g.members.len(),
                g.adapter,
                g.members.len()
            ));
        }
        for f in &self.findings {
            v.push(format!("fleet {}: {}", kind_name(f.kind), f.message));
        }
        v
    }
}

fn kind_name(k: FindingKind) -> &'static str {
    match k {
        FindingKind::Outlier => "OUTLIER",
        FindingKind::Disagree => "SPREAD",
        FindingKind::GpuMismatch => "MISMATCH",
    }
}

/// Figures compared between siblings (the derived double-precision summary repeats
/// measured ones).
fn compared() -> impl Iterator<Item = FigureKey> {
    FigureKey::ALL
        .into_iter()
        .filter(|k| *k != FigureKey::DoubleBest)
}

/// Groups `results` (file name, contents) and finds the adapters behind their siblings.
/// `catalog`, when given, also flags adapters that are not their instance's GPU.
pub fn analyse(results: &[(String, ResultsFile)], catalog: Option<&Catalog>) -> Fleet {
    let mut by_key: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, (_, r)) in results.iter().enumerate() {
        by_key
            .entry((place(r), r.adapter.name.clone()))
            .or_default()
            .push(i);
    }
    let mut fleet = Fleet::default();
    for ((place, adapter), idx) in by_key {
        let members: Vec<&(String, ResultsFile)> = idx.iter().map(|&i| &results[i]).collect();
        let mut regions: Vec<String> = members
            .iter()
            .filter_map(|m| m.1.instance.as_ref()?.region.clone())
            .collect();
        regions.sort();
        regions.dedup();
        let group = Group {
            instance: members[0]
                .1
                .instance
                .clone()
                .map(|i| InstanceRef { region: None, ..i }),
            regions,
            software: members[0].1.adapter.software,
            members: members
                .iter()
                .map(|(f, r)| Member {
                    file: f.clone(),
                    host: r.host.hostname.clone(),
                    pci_bus_id: r.adapter.pci_bus_id.clone(),
                })
                .collect(),
            medians: compared()
                .filter_map(|k| Some((k, median(members.iter().filter_map(|m| m.1.best(k)))?)))
                .collect(),
            place,
            adapter,
        };
        fleet.findings.extend(behind(&group, &members));
        fleet.groups.push(group);
    }
    if let Some(c) = catalog {
        for (file, r) in results {
            if let Some(message) = gpu_mismatch(c, r) {
                fleet.findings.push(Finding {
                    kind: FindingKind::GpuMismatch,
                    file: file.clone(),
                    adapter: r.adapter.name.clone(),
                    pci_bus_id: r.adapter.pci_bus_id.clone(),
                    place: place(r),
                    figure: None,
                    value: None,
                    group_median: None,
                    behind_percent: None,
                    message: format!("{file}: {message}"),
                });
            }
        }
    }
    fleet
}

/// Where a file ran, for grouping: the instance type (the region does not change the
/// hardware), else the host.
pub fn place(r: &ResultsFile) -> String {
    match &r.instance {
        Some(i) => format!("{}:{}", i.provider, i.instance_type),
        None => format!("host {}", r.host.hostname),
    }
}

/// How far `value` is behind `reference`, as a fraction (positive: slower), by the
/// figure's direction.
fn shortfall(k: FigureKey, value: f64, reference: f64) -> f64 {
    if k.info().higher_is_better {
        1.0 - value / reference
    } else {
        1.0 - reference / value
    }
}

/// The group's members that fall behind: against the median with 3 or more siblings;
/// with 2, a gap beyond the threshold is reported without naming a culprit.
fn behind(g: &Group, members: &[&(String, ResultsFile)]) -> Vec<Finding> {
    let mut out = Vec::new();
    if members.len() < 2 {
        return out;
    }
    for (&k, &m) in &g.medians {
        let unit = k.info().unit;
        let vals: Vec<(&(String, ResultsFile), f64)> = members
            .iter()
            .filter_map(|x| Some((*x, x.1.best(k)?)))
            .collect();
        if vals.len() == 2 {
            let (a, b) = (&vals[0], &vals[1]);
            let (slow, fast) = if shortfall(k, a.1, b.1) > 0.0 {
                (a, b)
            } else {
                (b, a)
            };
            let gap = shortfall(k, slow.1, fast.1);
            if gap > OUTLIER_SHORTFALL {
                out.push(finding(FindingKind::Disagree, g, slow.0, k, slow.1, m, gap, format!(
                    "{} and {} ({} on {}) differ on {k}: {} vs {} {unit} ({:.0}% apart); with two files the slow one cannot be told from a fast outlier",
                    slow.0.0, fast.0.0, g.adapter, g.place, num(slow.1), num(fast.1), gap * 100.0
                )));
            }
            continue;
        }
        if vals.len() < 3 {
            continue;
        }
        for (x, v) in vals {
            let s = shortfall(k, v, m);
            if s > OUTLIER_SHORTFALL {
                out.push(finding(FindingKind::Outlier, g, x, k, v, m, s, format!(
                    "{} ({}{}) on {}: {k} {} {unit} is {:.0}% behind the median of its group of {} ({})",
                    x.0,
                    g.adapter,
                    x.1.adapter.pci_bus_id.as_deref().map(|b| format!(" at {b}")).unwrap_or_default(),
                    g.place, num(v), s * 100.0, g.members.len(), num(m)
                )));
            }
        }
    }
    out
}

/// A figure with three or four significant digits (`2400`, `11.22`, `0.0571`).
fn num(x: f64) -> String {
    let digits = if x.abs() >= 100.0 {
        0
    } else {
        (2 - x.abs().log10().floor() as i32).clamp(1, 6) as usize
    };
    format!("{x:.digits$}")
}

#[allow(clippy::too_many_arguments)]
fn finding(
    kind: FindingKind,
    g: &Group,
    x: &(String, ResultsFile),
    k: FigureKey,
    value: f64,
    median: f64,
    short: f64,
    message: String,
) -> Finding {
    Finding {
        kind,
        file: x.0.clone(),
        adapter: g.adapter.clone(),
        pci_bus_id: x.1.adapter.pci_bus_id.clone(),
        place: g.place.clone(),
        figure: Some(k),
        value: Some(value),
        group_median: Some(median),
        behind_percent: Some(short * 100.0),
        message,
    }
}

/// One GPU's acceptance-test verdict found among the results files.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BurnVerdict {
    pub file: String,
    pub host: String,
    pub adapter: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    pub verdict: crate::health::Verdict,
    pub complete: bool,
    pub reasons: Vec<String>,
    pub covered: String,
}

/// The burns among the results files, and the bench files left out because their GPU's
/// burn failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BurnGate {
    pub verdicts: Vec<BurnVerdict>,
    /// One message per bench file left out of the ranking.
    pub excluded: Vec<String>,
}

impl BurnGate {
    pub fn is_empty(&self) -> bool {
        self.verdicts.is_empty() && self.excluded.is_empty()
    }

    /// One line per verdict and per file left out, for the terminal and Markdown.
    pub fn lines(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .verdicts
            .iter()
            .map(|b| {
                let bus = b
                    .pci_bus_id
                    .as_deref()
                    .map(|x| format!(" at {x}"))
                    .unwrap_or_default();
                let why = if b.reasons.is_empty() {
                    b.covered.clone()
                } else {
                    b.reasons.join("; ")
                };
                format!(
                    "burn {}{}: {}{bus} on {} ({}): {why}",
                    b.verdict.name(),
                    if b.complete { "" } else { " (incomplete)" },
                    b.adapter,
                    b.host,
                    b.file
                )
            })
            .collect();
        v.extend(self.excluded.iter().map(|e| format!("burn EXCLUDED: {e}")));
        v
    }
}

/// True when two files are of the same GPU: the same host, and the same PCI bus id where
/// both have one (a GPU burned through OpenCL and benched through Vulkan has two names),
/// else the same adapter name.
fn same_gpu(a: &ResultsFile, b: &ResultsFile) -> bool {
    a.host.hostname == b.host.hostname
        && match (&a.adapter.pci_bus_id, &b.adapter.pci_bus_id) {
            (Some(x), Some(y)) => x == y,
            _ => a.adapter.name == b.adapter.name,
        }
}

/// Splits the burns off the measurements: a file that records only a burn carries no
/// figure and leaves the ranking's inputs; a bench file of a GPU whose burn ended FAIL or
/// ERROR is left out too, and said, unless `use_failed`.
pub fn burn_gate(
    results: Vec<(String, ResultsFile)>,
    use_failed: bool,
) -> (Vec<(String, ResultsFile)>, BurnGate) {
    use crate::health::Verdict;
    let mut gate = BurnGate::default();
    let burns: Vec<(String, ResultsFile)> = results
        .iter()
        .filter(|(_, r)| r.burn.is_some())
        .cloned()
        .collect();
    for (file, r) in &burns {
        let Some(b) = &r.burn else { continue };
        gate.verdicts.push(BurnVerdict {
            file: file.clone(),
            host: r.host.hostname.clone(),
            adapter: r.adapter.name.clone(),
            pci_bus_id: r.adapter.pci_bus_id.clone(),
            verdict: b.verdict,
            complete: b.complete,
            reasons: b.reasons.clone(),
            covered: b.covered.clone(),
        });
    }
    let mut kept = Vec::new();
    for (file, r) in results {
        if r.probes.is_empty() && r.burn.is_some() {
            continue;
        }
        let failed = burns.iter().find(|(_, b)| {
            b.burn.as_ref().is_some_and(|x| x.verdict >= Verdict::Fail) && same_gpu(b, &r)
        });
        match failed {
            Some((bf, b)) if !use_failed => gate.excluded.push(format!(
                "{file}: {} on {} is not ranked: its burn ended {} ({bf}); --use-failed ranks it anyway",
                r.adapter.name,
                r.host.hostname,
                b.burn.as_ref().map_or("?", |x| x.verdict.name())
            )),
            _ => kept.push((file, r)),
        }
    }
    (kept, gate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{ProbeResult, Status};
    use crate::stats::Summary;

    fn file(inst: Option<&str>, adapter: &str, bus: &str, triad: f64, latency: f64) -> ResultsFile {
        let mut r =
            ResultsFile::parse(include_str!("../../tests/fixtures/results-lavapipe.json")).unwrap();
        r.instance = inst.map(|s| s.parse().unwrap());
        r.adapter.name = adapter.into();
        r.adapter.software = false;
        r.adapter.pci_bus_id = Some(bus.into());
        r.probes.clear();
        for (k, v) in [
            (FigureKey::StreamTriad, triad),
            (FigureKey::LatencyRoundTrip, latency),
        ] {
            let mut p = ProbeResult::of(k);
            p.status = Status::Ok;
            p.value = Summary::of(&[v]);
            r.probes.push(p);
        }
        r
    }

    fn node() -> Vec<(String, ResultsFile)> {
        let h100 = "NVIDIA H100 80GB HBM3";
        let p5 = Some("aws:p5.48xlarge:us-east-1");
        let mut v: Vec<(String, ResultsFile)> = (0..8)
            .map(|i| {
                let triad = if i == 5 { 2400.0 } else { 3200.0 + i as f64 };
                let lat = if i == 2 { 30.0 } else { 20.0 };
                (
                    format!("runs/gpu{i}.json"),
                    file(p5, h100, &format!("0000:{:02x}:00.0", 0x10 + i), triad, lat),
                )
            })
            .collect();
        // Another instance's single GPU, and a file without an instance.
        v.push((
            "runs/l4.json".into(),
            file(
                Some("gcp:g2-standard-4"),
                "NVIDIA L4",
                "0000:01:00.0",
                250.0,
                25.0,
            ),
        ));
        v.push((
            "home.json".into(),
            file(None, h100, "0000:01:00.0", 100.0, 25.0),
        ));
        v
    }

    #[test]
    fn groups_by_instance_and_adapter_with_medians() {
        let f = analyse(&node(), None);
        assert_eq!(f.groups.len(), 3, "{:#?}", f.groups);
        let p5 = f
            .groups
            .iter()
            .find(|g| g.place == "aws:p5.48xlarge")
            .unwrap();
        assert_eq!(p5.members.len(), 8);
        assert_eq!(p5.regions, vec!["us-east-1".to_string()]);
        // Medians of 3200..3207 without 3205, plus 2400: the 4th and 5th of 8 values.
        assert_eq!(p5.medians[&FigureKey::StreamTriad], 0.5 * (3202.0 + 3203.0));
        assert_eq!(p5.medians[&FigureKey::LatencyRoundTrip], 20.0);
        assert!(f.groups.iter().any(|g| g.place.starts_with("host ")));
        assert!(f.is_notable());
    }

    #[test]
    fn the_slow_gpu_of_a_node_is_named_with_how_far_behind() {
        let f = analyse(&node(), None);
        assert_eq!(f.findings.len(), 2, "{:#?}", f.findings);
        let triad = f
            .findings
            .iter()
            .find(|x| x.figure == Some(FigureKey::StreamTriad))
            .unwrap();
        assert_eq!(triad.kind, FindingKind::Outlier);
        assert_eq!(triad.file, "runs/gpu5.json");
        assert_eq!(triad.pci_bus_id.as_deref(), Some("0000:15:00.0"));
        let pct = triad.behind_percent.unwrap();
        assert!((pct - 25.04).abs() < 0.1, "{pct}");
        assert!(
            triad.message.contains("runs/gpu5.json") && triad.message.contains("25% behind"),
            "{}",
            triad.message
        );
        // Latency: lower is better; 30 us against 20 is 33% behind.
        let lat = f
            .findings
            .iter()
            .find(|x| x.figure == Some(FigureKey::LatencyRoundTrip))
            .unwrap();
        assert_eq!(lat.file, "runs/gpu2.json");
        assert!((lat.behind_percent.unwrap() - 100.0 / 3.0).abs() < 0.1);
    }

    #[test]
    fn figures_in_messages_keep_three_significant_digits() {
        assert_eq!(num(2400.0), "2400");
        assert_eq!(num(3202.5), "3202"); // rounds half to even
        assert_eq!(num(11.2168), "11.2");
        assert_eq!(num(5.665), "5.67");
        assert_eq!(num(0.05712), "0.0571");
    }

    #[test]
    fn two_siblings_that_disagree_are_reported_without_a_culprit() {
        let p = Some("aws:p4d.24xlarge");
        let two = vec![
            (
                "a.json".to_string(),
                file(p, "A100", "0000:01:00.0", 1000.0, 20.0),
            ),
            (
                "b.json".to_string(),
                file(p, "A100", "0000:02:00.0", 1300.0, 20.0),
            ),
        ];
        let f = analyse(&two, None);
        assert_eq!(f.findings.len(), 1);
        assert_eq!(f.findings[0].kind, FindingKind::Disagree);
        assert!(
            f.findings[0].message.contains("a.json and b.json"),
            "{}",
            f.findings[0].message
        );
        // Within 15%: nothing to say, and one file per machine is not notable.
        let close = vec![
            two[0].clone(),
            (
                "c.json".into(),
                file(p, "A100", "0000:03:00.0", 1100.0, 21.0),
            ),
        ];
        assert!(analyse(&close, None).findings.is_empty());
        let mut single = file(None, "A100", "0000:01:00.0", 1.0, 1.0);
        single.host.hostname = "x".into();
        assert!(!analyse(&[("s.json".into(), single)], None).is_notable());
    }

    #[test]
    fn instances_are_checked_against_the_catalog_naming_the_unknown_part() {
        let c = Catalog::embedded();
        let ok = check_instance(&c, &"AWS:P5.48XLARGE:US-EAST-1".parse().unwrap()).unwrap();
        assert_eq!(ok.to_string(), "aws:p5.48xlarge:us-east-1");
        assert_eq!(
            check_instance(&c, &"aws:p5.48xlarge".parse().unwrap())
                .unwrap()
                .region,
            None
        );
        let e = check_instance(&c, &"awz:p5.48xlarge".parse().unwrap()).unwrap_err();
        assert!(
            e.contains("unknown provider `awz`") && e.contains("aws, azure"),
            "{e}"
        );
        let e = check_instance(&c, &"aws:p9.48xlarge".parse().unwrap()).unwrap_err();
        assert!(
            e.contains("unknown instance type `p9.48xlarge` for provider aws")
                && e.contains("p5.48xlarge"),
            "{e}"
        );
        let e = check_instance(&c, &"aws:p5.48xlarge:mars-1".parse().unwrap()).unwrap_err();
        assert!(
            e.contains("region `mars-1`") && e.contains("us-east-1"),
            "{e}"
        );
        for bad in ["aws", "aws:", ":p5", "a:b:c:d"] {
            assert!(bad.parse::<InstanceRef>().is_err(), "{bad}");
        }
    }

    #[test]
    fn an_adapter_that_is_not_the_instances_gpu_is_flagged() {
        let c = Catalog::embedded();
        let r = file(
            Some("aws:p5.48xlarge"),
            "NVIDIA L4",
            "0000:01:00.0",
            1.0,
            1.0,
        );
        let f = analyse(&[("x.json".into(), r)], Some(&c));
        assert_eq!(f.findings.len(), 1, "{:#?}", f.findings);
        assert_eq!(f.findings[0].kind, FindingKind::GpuMismatch);
        assert!(
            f.findings[0].message.contains("h100-sxm"),
            "{}",
            f.findings[0].message
        );
    }

    fn burned(bus: &str, verdict: crate::health::Verdict) -> ResultsFile {
        let mut r = file(None, "NVIDIA H100 80GB HBM3", bus, 0.0, 0.0);
        r.probes.clear();
        let mut b: crate::health::BurnRecord = serde_json::from_value(serde_json::json!({
            "mode": "quick", "planned_s": 60.0, "elapsed_s": 60.0, "complete": true,
            "thresholds": crate::health::Thresholds::hardware(),
            "verdict": "PASS", "reasons": [], "covered": "FP32 matmul"
        }))
        .unwrap();
        b.verdict = verdict;
        b.reasons = vec!["1 miscompares".into()];
        r.burn = Some(b);
        r
    }

    #[test]
    fn a_failed_burn_keeps_its_gpus_figures_out_of_the_ranking_unless_asked() {
        use crate::health::Verdict;
        let mut all = node();
        all.push((
            "burn/gpu3.json".into(),
            burned("0000:13:00.0", Verdict::Fail),
        ));
        all.push((
            "burn/gpu4.json".into(),
            burned("0000:14:00.0", Verdict::Pass),
        ));
        let n = all.len();
        let (kept, gate) = burn_gate(all.clone(), false);
        // Both burn-only files leave the inputs, and the bench file of GPU 3 with them.
        assert_eq!(kept.len(), n - 3);
        assert!(kept.iter().all(|(f, _)| f != "runs/gpu3.json"));
        assert_eq!(gate.verdicts.len(), 2);
        assert_eq!(gate.excluded.len(), 1);
        assert!(gate.excluded[0].contains("runs/gpu3.json") && gate.excluded[0].contains("FAIL"));
        let lines = gate.lines();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("burn FAIL: NVIDIA H100 80GB HBM3 at 0000:13:00.0"))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("burn EXCLUDED: runs/gpu3.json"))
        );
        let (kept, gate) = burn_gate(all, true);
        assert_eq!(kept.len(), n - 2);
        assert!(gate.excluded.is_empty());
    }
}
