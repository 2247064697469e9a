//! Import of SkyPilot-style CSV catalogs (`catalogs/v8/<cloud>/vms.csv`): columns are found
//! by header name (their order differs per cloud): InstanceType, AcceleratorName,
//! AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice, Region, AvailabilityZone.
//!
//! One row per availability zone becomes one instance per (type, region): on-demand is the
//! zones' lowest price, spot the zones' median (one zone's outlier must not set the price).
//! GCP lists the host VM and its GPUs as separate rows: a GPU-only row (accelerator, no
//! instance type) is added to the host rows of its region whose machine family carries that
//! GPU and count (`a2-highgpu-2g` + 2 x A100).
//!
//! Before the rows are merged, each line is checked for what real catalogs contain, and every
//! finding names the file and the CSV line: exact duplicate lines (ignored) and conflicting
//! ones; zone prices far from the other zones of the same instance; negative, zero, empty and
//! placeholder prices (the value is left out); a spot price equal to or above on-demand (the
//! spot price is dropped, the row still ranks on demand). The accelerator is resolved with
//! instance-family knowledge first (`p3.*` = V100 SXM2 16 GB, `a2-ultragpu-*` = A100 80 GB
//! SXM), then by an unambiguous name; `GpuInfo`'s `MemoryInfo.SizeInMiB` is kept as the memory
//! per GPU, which `check` compares with the GPU's (80 MiB for an 80 GB card is a unit error).
//! A name that stays ambiguous (`A100-80GB`: SXM or PCIe?) or unknown is an error: the row is
//! never ranked until a `--catalog-add` JSON row says which GPU it is.

mod cells;
mod rows;

use crate::market::catalog::families;
use rows::{Structural, read_rows};

use crate::market::catalog::names::{self, Resolved, StatedMemory};
use crate::market::catalog::{
    Catalog, Confidence, Finding, GpuSpec, Instance, Origin, Price, PricingModel, Severity,
    Unranked,
};
use anyhow::{Result, bail};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The catalog GPU an instance's accelerator is: by its family, else by the one name
/// mapping (`names`), with the memory the row states read in the unit that fits; else an id
/// `check` reports (`ambiguous:`, `unknown:`, `unspecified:`, `mismatch:` and the name).
/// Gives the id, the memory per GPU in GB and what was read or assumed.
fn gpu_id(
    instance: &str,
    r: &Row,
    specs: &[GpuSpec],
    prefer: Option<usize>,
) -> (String, Option<f64>, String) {
    let ty = instance.to_lowercase();
    let accel = r.accel.as_str();
    let family = families::family_gpu(&ty).or_else(|| families::host_gpu(&ty, accel));
    let count = r.count.unwrap_or(0.0);
    let stated = r.gpu_mib.map(|value| StatedMemory {
        value,
        gpu_count: count,
        prefer,
    });
    // The family tells the GPU where the name allows it (a `p3.` V100 is the SXM2 16 GB
    // part); a name that says another GPU outright wins (Spheron's `gpu_1x_a100_SXM4` type
    // looks like Lambda's 40 GB family but its accelerator is `A100_80G_SXM4`).
    let cands = names::candidates(accel);
    let family = family.filter(|id| cands.is_empty() || cands.iter().any(|c| c == id));
    if let Some(id) = family {
        let spec = specs.iter().find(|g| g.id == *id);
        let read = stated.zip(spec).and_then(|(m, g)| names::read_memory(m, g));
        let (mem, note) = match read {
            Some((gb, how)) => (Some(gb), how.to_string()),
            // As stated (MiB): `check` compares it with the GPU's and reports a misfit.
            None => (r.gpu_mib.map(|m| m * 1_048_576.0 / 1e9), String::new()),
        };
        return (id.to_string(), mem, note);
    }
    row_gpu(accel, names::resolve(accel, stated, count as u32, specs))
}

/// [`row_gpu`] of the first of `names` the mapping knows (a feed's specific name first,
/// "NVIDIA A100 80GB PCIe", then its short one), else of the last.
pub fn first_known(
    names: &[&str],
    memory: Option<names::StatedMemory>,
    count: u32,
    specs: &[GpuSpec],
) -> (String, Option<f64>, String) {
    let mut decided = None;
    for n in names {
        let r = names::resolve(n, memory, count, specs);
        let known = !matches!(r, Resolved::Unknown(_));
        decided = Some(row_gpu(n, r));
        if known {
            break;
        }
    }
    decided.unwrap_or_else(|| row_gpu("", Resolved::Unknown(String::new())))
}

/// What a row's `gpu` is for what the mapping decided about the name `accel`: the catalog
/// GPU id, or the name behind the prefix that says why it does not rank; the memory per GPU
/// in GB; and the note (what was read, or why the memory fits no variant). Every feed uses it.
pub fn row_gpu(accel: &str, r: Resolved) -> (String, Option<f64>, String) {
    match r {
        Resolved::Gpu {
            id,
            memory_gb,
            note,
        } => (id, memory_gb, note),
        Resolved::Ambiguous(n) => (Unranked::Ambiguous.id(&n), None, String::new()),
        Resolved::NotSpecified(n) => (Unranked::Unspecified.id(&n), None, String::new()),
        Resolved::Mismatch(why) => (Unranked::Mismatch.id(accel), None, why),
        Resolved::NotGpu(n) => (Unranked::NotGpu.id(&n), None, String::new()),
        Resolved::Unknown(n) => (Unranked::Unknown.id(&n), None, String::new()),
    }
}

/// The file's memory convention: the reading most of its unambiguous rows fit under.
fn file_reading(rows: &[(Row, Vec<usize>, String)], specs: &[GpuSpec]) -> Option<usize> {
    let votes: Vec<usize> = rows
        .iter()
        .filter_map(|(r, _, _)| {
            let m = StatedMemory {
                value: r.gpu_mib.filter(|v| *v > 0.0)?,
                gpu_count: r.count?,
                prefer: None,
            };
            names::reading_of(&r.accel, m, specs)
        })
        .collect();
    names::file_reading(&votes)
}

#[derive(Debug, Clone)]
struct Row {
    line: usize,
    instance: String,
    accel: String,
    count: Option<f64>,
    vcpu: Option<f64>,
    mem: Option<f64>,
    /// `GpuInfo`'s `MemoryInfo.SizeInMiB`: memory per GPU as the file states it.
    gpu_mib: Option<f64>,
    price: Option<f64>,
    spot: Option<f64>,
    region: String,
    zone: String,
    /// The record's fields as written, to find exact duplicates.
    text: Vec<String>,
    /// A share of a GPU (`AcceleratorCount` 0.5): refused, with a finding.
    fraction: bool,
}

impl Row {
    /// Whether the line can become (part of) a GPU instance: it names an accelerator, or it
    /// is a GCP host whose GPUs are priced on their own line.
    fn may_carry_gpu(&self) -> bool {
        !self.accel.is_empty() || families::gcp_gpu_row(&self.instance).is_some()
    }
}

/// A finding on one CSV line, before the rows become instances.
struct LineFinding {
    line: usize,
    severity: Severity,
    column: Option<&'static str>,
    /// (instance type, region) of the line: the instance it is shown beside.
    key: (String, String),
    /// Whether the finding is about the instance row (shown beside it in rankings, and an
    /// error keeps it out) rather than one value of the line that was left out.
    about_row: bool,
    message: String,
}

/// What the line checks found, in the order found.
#[derive(Default)]
struct LineFindings(Vec<LineFinding>);

impl LineFindings {
    fn push(&mut self, r: &Row, severity: Severity, column: Option<&'static str>, msg: String) {
        // A GCP GPU-only line has no instance type: it is named by its accelerator.
        let ty = if r.instance.is_empty() {
            format!("{} GPU line", r.accel)
        } else {
            r.instance.clone()
        };
        self.0.push(LineFinding {
            line: r.line,
            severity,
            column,
            key: (ty, r.region.clone()),
            about_row: false,
            message: msg,
        });
    }

    /// As `push`, for a finding about the row the line becomes part of.
    fn push_row(&mut self, r: &Row, severity: Severity, column: Option<&'static str>, m: String) {
        self.push(r, severity, column, m);
        if let Some(last) = self.0.last_mut() {
            last.about_row = true;
        }
    }
}

/// Imports a CSV file. `provider` defaults to the file's parent directory name (SkyPilot's
/// layout, also when the path is given relative to it: `vms.csv` in `aws/`), else its stem.
pub fn import(path: &Path, as_of: &str) -> Result<Catalog> {
    let (name, data, provider) = read_file(path)?;
    parse(&data, &name, &provider, as_of)
}

/// As [`import`], for `catalog check`: the lines that are no row are among the findings
/// (errors), beside every other finding of the file, instead of refusing it.
pub fn import_for_check(path: &Path, as_of: &str) -> Result<Catalog> {
    let (name, data, provider) = read_file(path)?;
    let (mut c, faults) = parse_all(&data, &name, &provider, as_of)?;
    c.load_findings.extend(
        faults
            .into_iter()
            .map(|f| structural_finding(f, &name, &provider)),
    );
    Ok(c)
}

/// The file's name as shown, its bytes and the provider its place names.
fn read_file(path: &Path) -> Result<(String, Vec<u8>, String)> {
    let name = path.display().to_string();
    // The folder as named, not the target of a symlinked file; `.` for a bare file name.
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    let provider = folder
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .filter(|s| !s.is_empty() && s != ".")
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().to_string()))
        .unwrap_or_else(|| "csv".into());
    let data = crate::files::read_bounded(path, "CSV catalog")?;
    Ok((name, data, provider))
}

/// Most lines that are no row named in one refusal; `catalog check` lists every one.
const FAULTS_SHOWN: usize = 12;

/// Parses CSV text as read from the file `name` of cloud `provider`. A file with lines that
/// are no row is refused, naming every such line (up to [`FAULTS_SHOWN`]).
pub fn parse(data: &[u8], name: &str, provider: &str, as_of: &str) -> Result<Catalog> {
    let (c, faults) = parse_all(data, name, provider, as_of)?;
    if faults.is_empty() {
        return Ok(c);
    }
    let n = faults.len();
    let mut msg = format!(
        "{name}: {n} line{} that {} no row (malformed):",
        if n == 1 { "" } else { "s" },
        if n == 1 { "is" } else { "are" }
    );
    for f in faults.iter().take(FAULTS_SHOWN) {
        msg.push_str(&format!("\n  {}: {}", place(f.line, f.column), f.message));
    }
    if n > FAULTS_SHOWN {
        msg.push_str(&format!(
            "\n  ... and {} more (`gpuvalue catalog check {name}` lists every one)",
            n - FAULTS_SHOWN
        ));
    }
    bail!(msg)
}

/// `line 7, column Price`, or `line 7` for a fault of the whole line.
fn place(line: usize, column: Option<&str>) -> String {
    match column {
        Some(c) => format!("line {line}, column {c}"),
        None => format!("line {line}"),
    }
}

/// A line that is no row as a catalog finding: an error, about no instance.
fn structural_finding(f: Structural, name: &str, provider: &str) -> Finding {
    Finding {
        severity: Severity::Error,
        file: name.to_string(),
        path: place(f.line, f.column),
        row: format!("{provider}/{}/{}", f.key.0, f.key.1),
        message: format!("{}; the line is left out", f.message),
        instance: None,
    }
}

/// The catalog of the file's rows, and the lines that are no row.
fn parse_all(
    data: &[u8],
    name: &str,
    provider: &str,
    as_of: &str,
) -> Result<(Catalog, Vec<Structural>)> {
    let name = name.to_string();
    let mut found = LineFindings::default();
    let (rows, faults) = read_rows(data, &name, &mut found)?;
    let rows = drop_duplicates(rows, &mut found);
    let rows = drop_bad_spot(rows, &mut found);
    // GCP split pricing: add GPU-only rows to the matching host rows of their zone/region.
    let complete = join_split_rows(&rows);
    let specs = Catalog::embedded().gpus;
    let (instances, origins) =
        group_instances(complete, &specs, &name, provider, as_of, &mut found);
    let load_findings = line_findings(found, &instances, &name, provider);
    Ok((
        Catalog {
            schema_version: crate::market::catalog::SCHEMA_VERSION,
            description: Some(format!("imported from {name}")),
            currencies: BTreeMap::new(),
            gpus: Vec::new(),
            instances,
            origins,
            gpu_origins: Vec::new(),
            currency_origins: BTreeMap::new(),
            load_findings,
            prices_from: None,
        },
        faults,
    ))
}

/// Final step: each line finding as a catalog finding naming the file and line, and the
/// instance the line became part of.
fn line_findings(
    found: LineFindings,
    instances: &[Instance],
    name: &str,
    provider: &str,
) -> Vec<Finding> {
    let index: HashMap<(&str, &str), usize> = instances
        .iter()
        .enumerate()
        .map(|(i, x)| ((x.instance_type.as_str(), x.region.as_str()), i))
        .collect();
    let mut out: Vec<Finding> = found
        .0
        .into_iter()
        .map(|f| {
            let (ty, region) = (&f.key.0, &f.key.1);
            let at = index.get(&(ty.as_str(), region.as_str())).copied();
            Finding {
                severity: f.severity,
                file: name.to_string(),
                path: place(f.line, f.column),
                row: format!("{provider}/{ty}/{region}"),
                message: f.message,
                instance: at.filter(|_| f.about_row),
            }
        })
        .collect();
    out.sort_by_key(|f| line_of(&f.path));
    out
}

/// The first line number a finding's place names (`line 7, column Price`).
pub fn line_of(path: &str) -> Option<usize> {
    let rest = path
        .strip_prefix("line ")
        .or_else(|| path.strip_prefix("lines "))?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Duplicate step: a line equal to an earlier one is left out with a warning; a line for the
/// same instance type, region and zone with other values is an error (which is right?).
fn drop_duplicates(rows: Vec<Row>, found: &mut LineFindings) -> Vec<Row> {
    let mut exact: HashMap<Vec<String>, usize> = HashMap::new();
    let mut place: HashMap<(String, String, String), usize> = HashMap::new();
    let mut kept = Vec::with_capacity(rows.len());
    for r in rows {
        if let Some(first) = exact.get(&r.text) {
            if !r.may_carry_gpu() {
                continue;
            }
            found.push(
                &r,
                Severity::Warning,
                None,
                format!("exact duplicate of line {first}; left out"),
            );
            continue;
        }
        exact.insert(r.text.clone(), r.line);
        let key = (r.instance.clone(), r.region.clone(), r.zone.clone());
        if !r.zone.is_empty()
            && !r.instance.is_empty()
            && r.may_carry_gpu()
            && let Some(first) = place.insert(key, r.line)
        {
            found.push_row(
                &r,
                Severity::Error,
                None,
                format!(
                    "same instance type, region and zone as line {first}, with other values: which is right?"
                ),
            );
        }
        kept.push(r);
    }
    kept
}

/// Spot step: a spot price equal to the line's on-demand price means "no spot data", one
/// above it is no spot discount at all: either is dropped with a warning, and the row
/// still ranks on demand.
fn drop_bad_spot(mut rows: Vec<Row>, found: &mut LineFindings) -> Vec<Row> {
    for r in &mut rows {
        let (Some(od), Some(spot)) = (r.price, r.spot) else {
            continue;
        };
        if !r.may_carry_gpu() {
            continue;
        }
        let why = if spot == od {
            "spot equals on-demand: that means no spot data, not no discount"
        } else if spot > od {
            "spot above on-demand: no spot discount, a data error"
        } else {
            continue;
        };
        r.spot = None;
        found.push_row(
            r,
            Severity::Warning,
            Some("SpotPrice"),
            format!(
                "{why} ({spot} vs {od}); the spot price is dropped, the row still ranks on demand"
            ),
        );
    }
    rows
}

/// GCP step: rows with an accelerator as they are, host-only rows summed with their GPU-only
/// row (with a note saying so); host rows no GPU row matches are left out.
fn join_split_rows(rows: &[Row]) -> Vec<(Row, Vec<usize>, String)> {
    let gpu_only: Vec<Row> = rows
        .iter()
        .filter(|r| r.instance.is_empty() && !r.accel.is_empty())
        .cloned()
        .collect();
    let mut complete = Vec::new();
    for r in rows
        .iter()
        .filter(|r| !r.instance.is_empty() && !r.fraction)
    {
        if !r.accel.is_empty() {
            complete.push((r.clone(), vec![r.line], String::new()));
            continue;
        }
        let Some(accel) = families::gcp_gpu_row(&r.instance) else {
            continue;
        };
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
            m.gpu_mib = g.gpu_mib;
            m.price = r.price.zip(g.price).map(|(a, b)| a + b);
            m.spot = r.spot.zip(g.spot).map(|(a, b)| a + b);
            let note = format!(
                "host price + GPU price (lines {} and {}), summed",
                r.line, g.line
            );
            complete.push((m, vec![r.line, g.line], note));
        }
    }
    complete
}

/// A region as people read it: the empty parts of a list dropped (Vast's ", US, NA" for an
/// offer whose host names no city), and "unstated" where the file names none (Seeweb's
/// rows), so that no row reads "(, US, NA)" or "()".
fn region_name(raw: &str) -> String {
    let parts: Vec<&str> = raw
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        "unstated".into()
    } else {
        parts.join(", ")
    }
}

/// Grouping step: one instance per (type, region), in (type, region) order, with the CSV
/// lines it came from.
fn group_instances(
    complete: Vec<(Row, Vec<usize>, String)>,
    specs: &[GpuSpec],
    name: &str,
    provider: &str,
    as_of: &str,
    found: &mut LineFindings,
) -> (Vec<Instance>, Vec<Origin>) {
    type Group = Vec<(Row, Vec<usize>, String)>;
    let prefer = file_reading(&complete, specs);
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for (r, lines, note) in complete {
        groups
            .entry((r.instance.clone(), r.region.clone()))
            .or_default()
            .push((r, lines, note));
    }
    let (mut instances, mut origins) = (Vec::new(), Vec::new());
    for ((ty, region), rs) in groups {
        let first = &rs[0].0;
        let rows: Vec<&Row> = rs.iter().map(|(r, _, _)| r).collect();
        let (prices, mut notes) = zone_prices(&rows, found);
        notes.extend(
            rs.iter()
                .map(|x| x.2.clone())
                .filter(|n| !n.is_empty())
                .take(1),
        );
        let lines: Vec<usize> = rs.iter().flat_map(|x| x.1.iter().copied()).collect();
        notes.insert(0, format!("lines {}", join(&lines)));
        let with_mem = rows
            .iter()
            .find(|r| r.gpu_mib.is_some())
            .copied()
            .unwrap_or(first);
        let (gpu, gpu_memory_gb, how) = gpu_id(&ty, with_mem, specs, prefer);
        if how.contains(names::GB_AS_MIB) {
            // A wrong unit in the file: said at its line (a feed's convention of giving the
            // instance's total is only noted on the row).
            found.push_row(
                with_mem,
                Severity::Warning,
                Some("GpuInfo"),
                format!(
                    "{} MiB per GPU fits no GPU of that name: {how}",
                    with_mem.gpu_mib.unwrap_or(0.0)
                ),
            );
        }
        if !how.is_empty() {
            notes.push(how);
        }
        origins.push(Origin {
            file: name.to_string(),
            index: instances.len(),
            lines,
        });
        instances.push(Instance {
            provider: provider.to_string(),
            instance_type: ty.clone(),
            region,
            gpu,
            gpu_count: first.count.map_or(0, |c| c as u32),
            vcpu: first.vcpu.map(|v| v.round() as u32),
            ram_gib: first.mem,
            gpu_memory_gb,
            prices,
            source: format!("imported from {name}"),
            as_of: as_of.to_string(),
            confidence: Confidence::Medium,
            retired: None,
            notes: Some(notes.join("; ")),
            interconnect: None,
        });
    }
    (instances, origins)
}

fn join(xs: &[usize]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The zones whose `value` is over 2x away from the median of the other zones (three zones
/// or more), each flagged: a data error or a flash price. Returns the lines flagged.
fn zone_outliers(
    rows: &[&Row],
    value: fn(&Row) -> Option<f64>,
    column: &'static str,
    consequence: &str,
    found: &mut LineFindings,
) -> Vec<usize> {
    let mut flagged = Vec::new();
    for r in rows {
        let Some(v) = value(r) else { continue };
        let mut others: Vec<f64> = rows
            .iter()
            .filter(|o| o.line != r.line)
            .filter_map(|o| value(o))
            .collect();
        if others.len() < 2 {
            continue;
        }
        others.sort_by(f64::total_cmp);
        let med = others[others.len() / 2];
        let ratio = v / med;
        if !(0.5..=2.0).contains(&ratio) {
            found.push_row(
                r,
                Severity::Warning,
                Some(column),
                format!(
                    "{v} is {ratio:.2}x the median {med} of the other {} zones of {} in {} ({}..{}): a data error or a flash price; {consequence}",
                    others.len(),
                    r.instance,
                    r.region,
                    others[0],
                    others[others.len() - 1]
                ),
            );
            flagged.push(r.line);
        }
    }
    flagged
}

/// Pricing step for one (type, region): on-demand is the lowest zone price (an outlier zone
/// left out), spot the zones' median; the notes give the spot range.
fn zone_prices(
    rows: &[&Row],
    found: &mut LineFindings,
) -> (BTreeMap<PricingModel, Price>, Vec<String>) {
    let od_out = zone_outliers(
        rows,
        |r| r.price,
        "Price",
        "this zone is left out of the on-demand price",
        found,
    );
    zone_outliers(
        rows,
        |r| r.spot,
        "SpotPrice",
        "the zones' median is used",
        found,
    );
    // A dated snapshot of the providers' own prices.
    let usd = Price::list_usd;
    let mut prices = BTreeMap::new();
    let mut od: Vec<f64> = rows
        .iter()
        .filter(|r| !od_out.contains(&r.line))
        .filter_map(|r| r.price)
        .collect();
    od.sort_by(f64::total_cmp);
    if let Some(&p) = od.first() {
        prices.insert(PricingModel::OnDemand, usd(p));
    }
    let mut spot: Vec<f64> = rows.iter().filter_map(|r| r.spot).collect();
    spot.sort_by(f64::total_cmp);
    let mut notes = Vec::new();
    if !spot.is_empty() {
        prices.insert(PricingModel::Spot, usd(spot[spot.len() / 2]));
    }
    if spot.len() > 1 {
        notes.push(format!(
            "spot: median of {} zones ({:.4}..{:.4})",
            spot.len(),
            spot[0],
            spot[spot.len() - 1]
        ));
    }
    (prices, notes)
}

#[cfg(test)]
mod tests;
