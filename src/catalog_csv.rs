//! Import of SkyPilot-style CSV catalogs (`catalogs/v8/<cloud>/vms.csv`): columns are found
//! by header name (their order differs per cloud): InstanceType, AcceleratorName,
//! AcceleratorCount, vCPUs, MemoryGiB, Price, SpotPrice, Region, AvailabilityZone.
//!
//! One row per availability zone becomes one instance per (type, region): on-demand is the
//! zones' lowest price, spot the zones' median (one zone's outlier must not set the price).
//! GCP lists the host VM and its GPUs as separate rows: a GPU-only row (accelerator, no
//! instance type) is added to the host rows of its region whose machine family carries that
//! GPU and count (`a2-highgpu-2g` + 2 x A100). Names that do not say which GPU model is meant
//! (`A100-80GB`: SXM or PCIe?) become an unknown GPU id, which `check` reports as an error:
//! such a row is never ranked until a `--catalog-add` JSON row says which GPU it is.

use crate::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::Path;

/// SkyPilot accelerator names that identify one catalog GPU.
const GPU_NAMES: &[(&str, &str)] = &[
    ("T4", "t4"),
    ("A10G", "a10g"),
    ("A10", "a10"),
    ("L4", "l4"),
    ("L40S", "l40s"),
    ("A100", "a100-40gb-sxm"),
    ("H100", "h100-sxm"),
    ("H200", "h200-sxm"),
    ("MI300X", "mi300x"),
    ("V100-32GB", "v100-sxm2-32gb"),
];

/// GCP machine families and the accelerator they carry; the count is the `-<n>g` suffix.
const GCP_FAMILIES: &[(&str, &str)] = &[
    ("a2-highgpu-", "A100"),
    ("a2-megagpu-", "A100"),
    ("a2-ultragpu-", "A100-80GB"),
    ("a3-highgpu-", "H100"),
    ("a3-megagpu-", "H100-MEGA"),
];

fn gpu_id(accel: &str) -> String {
    GPU_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(accel))
        .map(|(_, id)| id.to_string())
        .unwrap_or_else(|| format!("ambiguous-or-unknown:{accel}"))
}

#[derive(Debug, Clone)]
struct Row {
    line: usize,
    instance: String,
    accel: String,
    count: Option<f64>,
    vcpu: Option<f64>,
    mem: Option<f64>,
    price: Option<f64>,
    spot: Option<f64>,
    region: String,
    zone: String,
}

/// Imports a CSV file. `provider` defaults to the file's parent directory name (SkyPilot's
/// layout), else its stem.
pub fn import(path: &Path, as_of: &str) -> Result<Catalog> {
    let name = path.display().to_string();
    let provider = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|s| s.to_string_lossy().to_string())
        .filter(|s| !s.is_empty() && s != ".")
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().to_string()))
        .unwrap_or_else(|| "csv".into());
    let data = crate::files::read_bounded(path, "CSV catalog")?;
    parse(&data, &name, &provider, as_of)
}

/// Column positions, found by header name.
struct Columns {
    ty: usize,
    acc: usize,
    cnt: usize,
    price: usize,
    region: usize,
    spot: Option<usize>,
    vcpu: Option<usize>,
    mem: Option<usize>,
    zone: Option<usize>,
}

/// Parses CSV text as read from the file `name` of cloud `provider`.
pub fn parse(data: &[u8], name: &str, provider: &str, as_of: &str) -> Result<Catalog> {
    let name = name.to_string();
    let rows = read_rows(data, &name)?;
    // GCP split pricing: add GPU-only rows to the matching host rows of their zone/region.
    let complete = join_split_rows(&rows);
    let instances = group_instances(complete, &name, provider, as_of);
    let n = instances.len();
    Ok(Catalog {
        schema_version: crate::catalog::SCHEMA_VERSION,
        description: Some(format!("imported from {name}")),
        currencies: BTreeMap::new(),
        gpus: Vec::new(),
        instances,
        origins: crate::catalog::Origin::all(&name, n),
        gpu_origins: Vec::new(),
        currency_origins: BTreeMap::new(),
    })
}

/// Parse step: maps the header to column positions, then reads every record into a row.
fn read_rows(data: &[u8], name: &str) -> Result<Vec<Row>> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(data);
    let headers = rdr
        .headers()
        .with_context(|| format!("{name}: no header line"))?
        .clone();
    let cols = columns(&headers, name)?;
    let mut rows = Vec::new();
    let mut next_line = 2;
    for rec in rdr.records() {
        let rec = rec.with_context(|| format!("{name}: line {next_line}: malformed CSV"))?;
        let line = rec.position().map_or(next_line, |p| p.line() as usize);
        // A stray quote swallows the line breaks up to the next quote: the record then
        // holds several lines in one field and the rows between are lost.
        if rec.iter().any(|f| f.contains(['\n', '\r'])) {
            bail!(
                "{name}: line {line}: malformed record: a field runs over several lines (a stray `\"`?)"
            );
        }
        next_line = line + 1;
        rows.push(row(&rec, &cols, name, line)?);
    }
    Ok(rows)
}

/// Header step: finds each column by name; the first five are required.
fn columns(headers: &csv::StringRecord, name: &str) -> Result<Columns> {
    let mut seen = std::collections::HashSet::new();
    for h in headers.iter() {
        if !seen.insert(h.trim().to_lowercase()) {
            bail!(
                "{name}: line 1: column `{}` appears twice in the header",
                h.trim()
            );
        }
    }
    let col = |h: &str| {
        headers
            .iter()
            .position(|x| x.trim().eq_ignore_ascii_case(h))
    };
    let need = |h: &str| {
        col(h).with_context(|| {
            format!(
                "{name}: no `{h}` column in the header ({})",
                headers.iter().collect::<Vec<_>>().join(",")
            )
        })
    };
    Ok(Columns {
        ty: need("InstanceType")?,
        acc: need("AcceleratorName")?,
        cnt: need("AcceleratorCount")?,
        price: need("Price")?,
        region: need("Region")?,
        spot: col("SpotPrice"),
        vcpu: col("vCPUs"),
        mem: col("MemoryGiB"),
        zone: col("AvailabilityZone"),
    })
}

/// A numeric field: empty is `None`; anything else must be a finite number in `range`
/// (and whole, for counts), else an error naming the line and column.
fn field(
    text: &str,
    column: &str,
    whole: bool,
    range: (f64, f64),
    at: (&str, usize),
) -> Result<Option<f64>> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let (name, line) = at;
    let v: f64 = t
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .with_context(|| {
            format!("{name}: line {line}, column {column}: expected a number, found {t:?}")
        })?;
    if whole && v.fract() != 0.0 {
        bail!("{name}: line {line}, column {column}: expected a whole number, found {t}");
    }
    if !(range.0..=range.1).contains(&v) {
        bail!(
            "{name}: line {line}, column {column}: {t} is outside the range {}..={}",
            range.0,
            range.1
        );
    }
    Ok(Some(v))
}

/// Row step: one record's fields; every numeric field that is present must be a number in
/// its range (counts whole).
fn row(rec: &csv::StringRecord, cols: &Columns, name: &str, line: usize) -> Result<Row> {
    let get = |c: Option<usize>| c.and_then(|c| rec.get(c)).unwrap_or("").trim().to_string();
    let at = (name, line);
    if let Some(long) = rec
        .iter()
        .find(|f| f.chars().count() > crate::catalog::MAX_NAME_CHARS)
    {
        bail!(
            "{name}: line {line}: a field of {} characters, more than the {} a name may have",
            long.chars().count(),
            crate::catalog::MAX_NAME_CHARS
        );
    }
    Ok(Row {
        line,
        instance: get(Some(cols.ty)),
        accel: get(Some(cols.acc)),
        count: field(
            &get(Some(cols.cnt)),
            "AcceleratorCount",
            true,
            (0.0, 64.0),
            at,
        )?,
        vcpu: field(&get(cols.vcpu), "vCPUs", true, (0.0, 1e5), at)?,
        mem: field(&get(cols.mem), "MemoryGiB", false, (0.0, 1e6), at)?,
        price: field(&get(Some(cols.price)), "Price", false, (0.0, 1e7), at)?,
        spot: field(&get(cols.spot), "SpotPrice", false, (0.0, 1e7), at)?,
        region: get(Some(cols.region)),
        zone: get(cols.zone),
    })
}

/// GCP step: rows with an accelerator as they are, host-only rows summed with their GPU-only
/// row (with a note saying so); host rows no GPU row matches are left out.
fn join_split_rows(rows: &[Row]) -> Vec<(Row, String)> {
    let gpu_only: Vec<Row> = rows
        .iter()
        .filter(|r| r.instance.is_empty() && !r.accel.is_empty())
        .cloned()
        .collect();
    let mut complete: Vec<(Row, String)> = Vec::new();
    for r in rows.iter().filter(|r| !r.instance.is_empty()) {
        if !r.accel.is_empty() {
            complete.push((r.clone(), String::new()));
            continue;
        }
        let family = GCP_FAMILIES.iter().find(|(f, _)| r.instance.starts_with(f));
        let Some((_, accel)) = family else { continue };
        let n: Option<f64> = r
            .instance
            .rsplit('-')
            .next()
            .and_then(|s| s.strip_suffix('g'))
            .and_then(|s| s.parse().ok());
        let gpu = gpu_only.iter().find(|g| {
            g.accel.eq_ignore_ascii_case(accel)
                && g.count == n
                && g.region == r.region
                && (g.zone.is_empty() || r.zone.is_empty() || g.zone == r.zone)
        });
        if let Some(g) = gpu {
            let mut m = r.clone();
            m.accel = g.accel.clone();
            m.count = g.count;
            m.price = r.price.zip(g.price).map(|(a, b)| a + b);
            m.spot = r.spot.zip(g.spot).map(|(a, b)| a + b);
            let note = format!(
                "host price + GPU price (lines {} and {}), summed",
                r.line, g.line
            );
            complete.push((m, note));
        }
    }
    complete
}

/// Grouping step: one instance per (type, region), in (type, region) order.
fn group_instances(
    complete: Vec<(Row, String)>,
    name: &str,
    provider: &str,
    as_of: &str,
) -> Vec<Instance> {
    let mut groups: BTreeMap<(String, String), Vec<(Row, String)>> = BTreeMap::new();
    for (r, note) in complete {
        groups
            .entry((r.instance.clone(), r.region.clone()))
            .or_default()
            .push((r, note));
    }
    let mut instances = Vec::new();
    for ((ty, region), rs) in groups {
        let first = &rs[0].0;
        let (prices, notes) = zone_prices(&rs);
        instances.push(Instance {
            provider: provider.to_string(),
            instance_type: ty,
            region,
            gpu: gpu_id(&first.accel),
            gpu_count: first.count.map_or(0, |c| c as u32),
            vcpu: first.vcpu.map(|v| v as u32),
            ram_gib: first.mem,
            gpu_memory_gb: None,
            prices,
            source: format!("imported from {name}"),
            as_of: as_of.to_string(),
            confidence: Confidence::Medium,
            retired: None,
            notes: Some(notes.join("; ")),
        });
    }
    instances
}

/// Pricing step for one (type, region): on-demand is the zones' lowest price, spot their
/// median; the notes name the source lines, the spot range and any summing.
fn zone_prices(rs: &[(Row, String)]) -> (BTreeMap<PricingModel, Price>, Vec<String>) {
    let mut prices = BTreeMap::new();
    let mut od: Vec<f64> = rs.iter().filter_map(|(r, _)| r.price).collect();
    od.sort_by(f64::total_cmp);
    if let Some(&p) = od.first() {
        prices.insert(
            PricingModel::OnDemand,
            Price {
                amount: p,
                currency: "USD".into(),
                per: "hour".into(),
                // A dated snapshot of the providers' own prices.
                tier: Some(crate::catalog::Tier::List),
            },
        );
    }
    let mut spot: Vec<f64> = rs.iter().filter_map(|(r, _)| r.spot).collect();
    spot.sort_by(f64::total_cmp);
    if !spot.is_empty() {
        let med = spot[spot.len() / 2];
        prices.insert(
            PricingModel::Spot,
            Price {
                amount: med,
                currency: "USD".into(),
                per: "hour".into(),
                // A dated snapshot of the providers' own prices.
                tier: Some(crate::catalog::Tier::List),
            },
        );
    }
    let mut notes = vec![format!(
        "lines {}",
        rs.iter()
            .map(|(r, _)| r.line.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )];
    if spot.len() > 1 {
        notes.push(format!(
            "spot: median of {} zones ({:.4}..{:.4})",
            spot.len(),
            spot[0],
            spot[spot.len() - 1]
        ));
    }
    notes.extend(
        rs.iter()
            .map(|(_, n)| n.clone())
            .filter(|n| !n.is_empty())
            .take(1),
    );
    (prices, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let d = dir.join("aws");
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn columns_by_header_zones_merged_and_faults_caught() {
        let dir = tempfile::tempdir().unwrap();
        // Column order differs from SkyPilot's AWS file on purpose.
        let p = write(
            dir.path(),
            "vms.csv",
            "Region,AvailabilityZone,InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice\n\
             us-east-1,use1-az1,p4d.24xlarge,A100,8,96,1152,,21.957642,7.88\n\
             us-east-1,use1-az2,p4d.24xlarge,A100,8,96,1152,,21.957642,8.19\n\
             us-east-1,use1-az3,p4d.24xlarge,A100,8,96,1152,,21.957642,2.4655\n\
             eastus,z1,Standard_ND96isr_H100_v5,H100,12,96,1900,,98.32,98.32\n\
             eastus,z1,Standard_NC24ads_A100_v4,A100-80GB,1,24,220,,3.673,0.444433\n",
        );
        let mut c = Catalog::embedded();
        c.instances.clear();
        c.origins.clear();
        c.extend(import(&p, "2026-11").unwrap());
        let p4d = c
            .instances
            .iter()
            .find(|i| i.instance_type == "p4d.24xlarge")
            .unwrap();
        assert_eq!(p4d.provider, "aws");
        assert_eq!((p4d.gpu.as_str(), p4d.gpu_count), ("a100-40gb-sxm", 8));
        // Median of the zones, not the 2.4655 outlier.
        assert_eq!(p4d.prices[&PricingModel::Spot].amount, 7.88);
        let f: Vec<String> = c.check().iter().map(|x| x.to_string()).collect();
        assert!(
            f.iter()
                .any(|x| x.contains("Standard_ND96isr_H100_v5") && x.contains("no spot data")),
            "{f:?}"
        );
        assert!(
            f.iter()
                .any(|x| x.contains("Standard_NC24ads_A100_v4") && x.contains("unknown GPU id")),
            "{f:?}"
        );
    }

    #[test]
    fn gcp_host_and_gpu_rows_are_summed() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "gcp.csv",
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone\n\
             a2-highgpu-1g,,,12,85,0.73948,0.2,us-central1,us-central1-a\n\
             ,A100,1,,,2.93391,1.60385,us-central1,us-central1-a\n\
             ,A100,2,,,5.86782,3.2077,us-central1,us-central1-a\n",
        );
        let c = import(&p, "2026-11").unwrap();
        assert_eq!(c.instances.len(), 1);
        let a2 = &c.instances[0];
        assert_eq!((a2.gpu.as_str(), a2.gpu_count), ("a100-40gb-sxm", 1));
        assert!((a2.prices[&PricingModel::OnDemand].amount - 3.67339).abs() < 1e-9);
        assert!((a2.prices[&PricingModel::Spot].amount - 1.80385).abs() < 1e-9);
    }

    #[test]
    fn missing_columns_and_bad_numbers_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.csv", "InstanceType,Price,Region\nx,1,r\n");
        let e = import(&p, "2026").unwrap_err().to_string();
        assert!(e.contains("AcceleratorName"), "{e}");
        let p = write(
            dir.path(),
            "b.csv",
            "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx,T4,1,cheap,r\n",
        );
        let e = import(&p, "2026").unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("Price") && e.contains("cheap"),
            "{e}"
        );
    }
}
