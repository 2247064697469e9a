//! `aws`: the AWS Price List offer file of Amazon EC2, one CSV per region,
//! `https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.csv`
//! (hundreds of MB each: streamed line by line, never held whole). Five lines of preamble
//! (`FormatVersion`, `Disclaimer`, `Publication Date`, `Version`, `OfferCode`), then a header
//! and one row per SKU and price term, the product's attributes repeated on every row.
//!
//! Kept: GPU instance types (a `GPU` count) on Linux, Shared tenancy, no pre-installed
//! software, `CapacityStatus` Used, bought on demand (`MarketOption` OnDemand): the on-demand
//! hourly price, and the Reserved terms (1 and 3 years, standard class; No, Partial and All
//! Upfront: the upfront fee spread over the term's hours plus the hourly rate), the cheapest
//! of them per term kept with its purchase option in the row's notes. Capacity Block rows
//! carry only the OS fee and never rank: they are counted apart. Spot prices are not in the
//! Price List (SkyPilot's aws rows carry them, and the merge keeps them beside these).
//!
//! Speed: a line is parsed as CSV only when it contains every value a kept row must have
//! (`"Linux"`, `"Shared"`, `"Used"`), found with memchr's SIMD substring search over 4 MB
//! chunks, so most of a file (Windows, RHEL, dedicated hosts, unused reservations) is
//! skipped at memory speed.

use super::http::{BodyError, Client, FetchError};
use super::snapshot::FileRecord;
use super::{Fetch, Source};
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use crate::market::catalog::{Unranked, families};
use anyhow::{Result, bail};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read};

pub const BASE: &str = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current";

/// AWS's Spot Instance Advisor: per region and type, the savings and the interruption band.
pub const ADVISOR: &str = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json";

/// The regions read: the four with the broadest GPU offer (each file is 300-600 MB).
pub const REGIONS: &[&str] = &["us-east-1", "us-east-2", "us-west-2", "eu-west-1"];

pub struct Aws;

impl Source for Aws {
    fn name(&self) -> &'static str {
        "aws"
    }
    fn about(&self) -> &'static str {
        "the AWS Price List (EC2 offer file per region: on demand, 1- and 3-year reserved), no account needed"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!(
            "{BASE}/<region>/index.csv ({})",
            REGIONS.join(", ")
        )]
    }
    fn own_providers(&self) -> &'static [&'static str] {
        &["aws"]
    }
    fn embedded_marker(&self) -> &'static str {
        "AWS Price List"
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let mut all: Option<Catalog> = None;
        let (mut files, mut notes) = (Vec::new(), Vec::new());
        for region in REGIONS {
            let url = format!("{BASE}/{region}/index.csv");
            let fetched_at = super::now();
            let got = http.stream(&url, &mut |r| {
                parse_offer(BufReader::with_capacity(1 << 20, r), region)
            });
            let (offer, meta) = match got {
                Ok(x) => x,
                Err(FetchError::NotFound(u)) => {
                    notes.push(format!("{region}: no offer file (404): skipped"));
                    files.push(FileRecord::missing(&u, &fetched_at));
                    continue;
                }
                Err(e) => bail!("{e}"),
            };
            let shares = offer
                .types
                .values()
                .filter(|t| t.gpus.fract() != 0.0)
                .count();
            notes.push(format!(
                "{region}: {} lines read, {} GPU rows kept, {} Capacity Block rows (never ranked), {shares} types selling a share of a GPU (not imported), publication date {}",
                offer.lines,
                offer.kept_rows,
                offer.capacity_blocks,
                offer.published.as_deref().unwrap_or("not stated")
            ));
            let c = offer.into_catalog(&meta.url, &fetched_at, &meta.sha256);
            files.push(meta.record(&fetched_at));
            match &mut all {
                Some(a) => a.extend(c),
                None => all = Some(c),
            }
        }
        let Some(catalog) = all else {
            bail!("no region's offer file could be read");
        };
        // The interruption bands of the spot prices other feeds carry: their absence
        // costs no price, so it is said, not a failure.
        let fetched_at = super::now();
        let risks = match http.get(ADVISOR) {
            Ok(f) => {
                let risks = spot_advisor(&f.body, &catalog, &fetched_at, &f.meta.sha256)
                    .map_err(|e| anyhow::anyhow!("{ADVISOR}: {e:#}"))?;
                notes.push(format!(
                    "spot advisor: interruption bands for {} type-region pairs of GPU types",
                    risks.len()
                ));
                files.push(f.meta.record(&fetched_at));
                risks
            }
            Err(FetchError::NotFound(u)) => {
                notes.push("spot advisor: no file (404): spot prices keep no band".into());
                files.push(FileRecord::missing(&u, &fetched_at));
                Vec::new()
            }
            Err(e) => bail!("{e}"),
        };
        Ok(Fetch {
            catalog,
            risks,
            files,
            notes,
        })
    }
}

/// The Spot Advisor file (`{"ranges": [{"index", "label", ...}], "spot_advisor": {region:
/// {"Linux": {type: {"s": savings %, "r": range index}}}}, ...}`): the Linux band of every
/// GPU instance type in `rows`, in every region the file has.
pub fn spot_advisor(
    body: &[u8],
    rows: &Catalog,
    fetched_at: &str,
    sha256: &str,
) -> Result<Vec<super::snapshot::Risk>> {
    use crate::market::catalog::spot::{Band, Interruption};
    #[derive(serde::Deserialize)]
    struct Range {
        index: usize,
        label: String,
    }
    #[derive(serde::Deserialize)]
    struct Advice {
        r: usize,
    }
    #[derive(serde::Deserialize)]
    struct File {
        ranges: Vec<Range>,
        spot_advisor: BTreeMap<String, BTreeMap<String, BTreeMap<String, Advice>>>,
    }
    let text = std::str::from_utf8(body).map_err(|e| anyhow::anyhow!("not UTF-8: {e}"))?;
    let f: File = crate::files::parse_json(text, "spot-advisor-data.json")?;
    let mut bands: HashMap<usize, Band> = HashMap::new();
    for r in &f.ranges {
        let b: Band =
            serde_json::from_value(serde_json::Value::String(r.label.clone())).map_err(|_| {
                anyhow::anyhow!(
                    "ranges[{}]: label {:?} is not a known band (<5%, 5-10%, 10-15%, 15-20%, >20%)",
                    r.index,
                    r.label
                )
            })?;
        bands.insert(r.index, b);
    }
    let gpu_types: std::collections::BTreeSet<&str> = rows
        .instances
        .iter()
        .map(|i| i.instance_type.as_str())
        .collect();
    let as_of = fetched_at[..10].to_string();
    let source = format!(
        "AWS Spot Instance Advisor ({ADVISOR}), fetched {fetched_at}, sha256 {}",
        &sha256[..12.min(sha256.len())]
    );
    let mut out = Vec::new();
    for (region, oses) in &f.spot_advisor {
        let Some(linux) = oses.get("Linux") else {
            continue;
        };
        for (t, a) in linux.iter().filter(|(t, _)| gpu_types.contains(t.as_str())) {
            let Some(band) = bands.get(&a.r) else {
                bail!(
                    "spot_advisor.{region}.Linux.{t}: range {} is not in `ranges`",
                    a.r
                );
            };
            out.push(super::snapshot::Risk {
                provider: "aws".into(),
                instance_type: t.clone(),
                region: region.clone(),
                interruption: Interruption {
                    band: Some(*band),
                    max_run_hours: None,
                    as_of: as_of.clone(),
                    source: source.clone(),
                },
            });
        }
    }
    Ok(out)
}

/// One region's GPU rows as read from its offer file.
#[derive(Debug, Default)]
pub struct Offer {
    pub region: String,
    pub published: Option<String>,
    pub lines: u64,
    pub kept_rows: u64,
    pub capacity_blocks: u64,
    /// Instance type -> what its rows said.
    pub types: BTreeMap<String, TypeRows>,
}

#[derive(Debug, Default, Clone)]
pub struct TypeRows {
    pub gpus: f64,
    pub vcpu: Option<u32>,
    pub ram_gib: Option<f64>,
    pub on_demand: Option<f64>,
    /// (years, purchase option) -> (hourly part, upfront fee)
    pub reserved: BTreeMap<(u32, String), (f64, f64)>,
}

/// The columns a kept row needs, by header name.
struct Cols {
    term: usize,
    unit: usize,
    price: usize,
    currency: usize,
    lease: usize,
    purchase: usize,
    class: usize,
    family: usize,
    instance: usize,
    vcpu: usize,
    memory: usize,
    tenancy: usize,
    os: usize,
    preinstalled: usize,
    capacity: usize,
    gpu: usize,
    market: Option<usize>,
}

fn cols(h: &csv::StringRecord) -> Result<Cols, BodyError> {
    let at = |name: &str| {
        h.iter().position(|x| x == name).ok_or_else(|| {
            BodyError::Fatal(format!("no `{name}` column in the offer file's header"))
        })
    };
    Ok(Cols {
        term: at("TermType")?,
        unit: at("Unit")?,
        price: at("PricePerUnit")?,
        currency: at("Currency")?,
        lease: at("LeaseContractLength")?,
        purchase: at("PurchaseOption")?,
        class: at("OfferingClass")?,
        family: at("Product Family")?,
        instance: at("Instance Type")?,
        vcpu: at("vCPU")?,
        memory: at("Memory")?,
        tenancy: at("Tenancy")?,
        os: at("Operating System")?,
        preinstalled: at("Pre Installed S/W")?,
        capacity: at("CapacityStatus")?,
        gpu: at("GPU")?,
        market: at("MarketOption").ok(),
    })
}

/// Reads an offer file: preamble, header, rows (the prefilter first).
pub fn parse_offer<R: BufRead>(mut r: R, region: &str) -> Result<Offer, BodyError> {
    let mut offer = Offer {
        region: region.to_string(),
        ..Offer::default()
    };
    let mut line = Vec::with_capacity(4096);
    let mut header = None;
    // Preamble and header: a handful of lines.
    while header.is_none() {
        line.clear();
        let n = r.read_until(b'\n', &mut line).map_err(|e| read_err(&e))?;
        if n == 0 {
            return Err(BodyError::Fatal(
                "no header line (\"SKU\", ...) in the offer file".into(),
            ));
        }
        offer.lines += 1;
        let rec = record(&line).map_err(|e| match e {
            BodyError::Fatal(m) => BodyError::Fatal(format!("line {}: {m}", offer.lines)),
            other => other,
        })?;
        match rec.get(0) {
            Some("Publication Date") => {
                offer.published = rec.get(1).map(|d| crate::text::prefix(d, 10).to_string())
            }
            Some("SKU") => header = Some(cols(&rec)?),
            _ if offer.lines > 20 => {
                return Err(BodyError::Fatal(
                    "no header line (\"SKU\", ...) in its first 20 lines".into(),
                ));
            }
            _ => {}
        }
    }
    let c = header.expect("found");
    scan_rows(&mut r, &mut offer, &c)?;
    if offer.lines < 7 {
        return Err(BodyError::Fatal(format!(
            "{} lines: an offer file has thousands (truncated?)",
            offer.lines
        )));
    }
    Ok(offer)
}

/// Reads the rows in chunks of 4 MB and parses only the lines that contain `"Linux"` (found
/// over the whole chunk with a SIMD substring search) and also `"Shared"` and `"Used"`: the
/// other lines (most of a file) cost a newline count and nothing else.
fn scan_rows<R: BufRead>(r: &mut R, offer: &mut Offer, c: &Cols) -> Result<(), BodyError> {
    use memchr::{memchr, memmem, memrchr};
    let linux = memmem::Finder::new(b"\"Linux\"");
    let others = [
        memmem::Finder::new(b"\"Shared\""),
        memmem::Finder::new(b"\"Used\""),
    ];
    let mut buf = vec![0u8; 4 << 20];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            // A line longer than the buffer: grow it.
            buf.resize(buf.len() * 2, 0);
        }
        let n = r.read(&mut buf[filled..]).map_err(|e| read_err(&e))?;
        filled += n;
        let done = n == 0;
        // The complete lines of the buffer (all of it at the end of the file).
        let end = if done {
            filled
        } else {
            match memrchr(b'\n', &buf[..filled]) {
                Some(i) => i + 1,
                None => continue,
            }
        };
        let region = &buf[..end];
        let lines_before = offer.lines;
        offer.lines += memchr::memchr_iter(b'\n', region).count() as u64;
        if done && end > 0 && region[end - 1] != b'\n' {
            offer.lines += 1;
        }
        let mut at = 0;
        while let Some(hit) = linux.find(&region[at..]) {
            let pos = at + hit;
            let start = memrchr(b'\n', &region[..pos]).map_or(0, |i| i + 1);
            let stop = memchr(b'\n', &region[pos..]).map_or(region.len(), |i| pos + i);
            let line = &region[start..stop];
            if others.iter().all(|f| f.find(line).is_some()) {
                let rec = record(line).map_err(|e| match e {
                    BodyError::Fatal(m) => {
                        let at = lines_before
                            + memchr::memchr_iter(b'\n', &region[..start]).count() as u64
                            + 1;
                        BodyError::Fatal(format!("line {at}: {m}"))
                    }
                    other => other,
                })?;
                offer.row(&rec, c);
            }
            at = stop.min(region.len());
            if at >= region.len() {
                break;
            }
            at += 1;
        }
        if done {
            return Ok(());
        }
        buf.copy_within(end..filled, 0);
        filled -= end;
    }
}

fn read_err(e: &std::io::Error) -> BodyError {
    super::http::io_error(e)
}

/// One CSV line (RFC 4180: quoted fields with doubled quotes, or bare ones) as a record.
/// Building a csv reader per line cost 86% of the parse (its state machine is built each
/// time); the offer files hold no line breaks inside fields, so a line is a record.
fn record(line: &[u8]) -> Result<csv::StringRecord, BodyError> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut rec = csv::StringRecord::new();
    let mut field = Vec::with_capacity(64);
    let mut i = 0;
    loop {
        field.clear();
        if line.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match line.get(i) {
                    Some(b'"') if line.get(i + 1) == Some(&b'"') => {
                        field.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&b) => {
                        field.push(b);
                        i += 1;
                    }
                    None => {
                        return Err(BodyError::Fatal("malformed CSV: an unclosed quote".into()));
                    }
                }
            }
            if !matches!(line.get(i), None | Some(b',')) {
                return Err(BodyError::Fatal(
                    "malformed CSV: text after a closing quote".into(),
                ));
            }
        } else {
            let stop = memchr::memchr(b',', &line[i..]).map_or(line.len(), |k| i + k);
            field.extend_from_slice(&line[i..stop]);
            i = stop;
        }
        let text = std::str::from_utf8(&field)
            .map_err(|_| BodyError::Fatal("malformed CSV: not UTF-8".into()))?;
        rec.push_field(text);
        if i >= line.len() {
            return Ok(rec);
        }
        i += 1; // the comma
    }
}

impl Offer {
    fn row(&mut self, rec: &csv::StringRecord, c: &Cols) {
        let get = |i: usize| rec.get(i).unwrap_or("").trim();
        let gpus: f64 = match get(c.gpu).parse() {
            Ok(g) if g > 0.0 => g,
            _ => return,
        };
        if get(c.family) != "Compute Instance"
            || get(c.os) != "Linux"
            || get(c.tenancy) != "Shared"
            || get(c.preinstalled) != "NA"
            || get(c.capacity) != "Used"
            || get(c.currency) != "USD"
        {
            return;
        }
        if c.market.is_some_and(|m| get(m) == "CapacityBlock") {
            self.capacity_blocks += 1;
            return;
        }
        let Ok(price) = get(c.price).parse::<f64>() else {
            return;
        };
        let ty = get(c.instance).to_string();
        let t = self.types.entry(ty).or_default();
        t.gpus = gpus;
        t.vcpu = get(c.vcpu).parse().ok();
        t.ram_gib = get(c.memory)
            .trim_end_matches(" GiB")
            .replace(',', "")
            .parse()
            .ok();
        match (get(c.term), get(c.unit)) {
            ("OnDemand", "Hrs") => t.on_demand = Some(price),
            ("Reserved", unit) if get(c.class) == "standard" => {
                let years = match get(c.lease) {
                    "1yr" => 1,
                    "3yr" => 3,
                    _ => return,
                };
                let e = t
                    .reserved
                    .entry((years, get(c.purchase).to_string()))
                    .or_default();
                match unit {
                    "Hrs" => e.0 = price,
                    "Quantity" => e.1 = price,
                    _ => return,
                }
            }
            _ => return,
        }
        self.kept_rows += 1;
    }

    /// The region's instances, dated by the offer's publication date (else the fetch).
    pub fn into_catalog(self, url: &str, fetched_at: &str, sha256: &str) -> Catalog {
        let as_of = self
            .published
            .clone()
            .filter(|d| crate::files::check_date(d).is_ok())
            .unwrap_or_else(|| fetched_at[..10].to_string());
        let mut instances = Vec::new();
        for (ty, t) in &self.types {
            let Some(inst) = self.instance(ty, t, url, fetched_at, sha256, &as_of) else {
                continue;
            };
            instances.push(inst);
        }
        Catalog::of_rows(
            &format!("AWS Price List {}", self.region),
            &format!("aws {}", self.region),
            instances,
        )
    }

    fn instance(
        &self,
        ty: &str,
        t: &TypeRows,
        url: &str,
        fetched_at: &str,
        sha256: &str,
        as_of: &str,
    ) -> Option<Instance> {
        if t.gpus.fract() != 0.0 {
            // A share of a GPU (g6f): not a whole GPU's figures.
            return None;
        }
        let od = t.on_demand?;
        let usd = Price::list_usd;
        let mut prices = BTreeMap::new();
        prices.insert(PricingModel::OnDemand, usd(od));
        let mut notes = Vec::new();
        for (years, model) in [(1, PricingModel::Reserved1y), (3, PricingModel::Reserved3y)] {
            let hours = 8760.0 * f64::from(years);
            let best = t
                .reserved
                .iter()
                .filter(|((y, _), _)| *y == years)
                .map(|((_, option), (hourly, upfront))| (hourly + upfront / hours, option))
                .filter(|(v, _)| *v > 0.0)
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((v, option)) = best {
                prices.insert(model, usd(v));
                notes.push(format!(
                    "{years}-year reserved: standard, {option} (effective hourly)"
                ));
            }
        }
        let gpu = match families::family_gpu(ty) {
            Some(id) => id.to_string(),
            // AWS GPU families with no catalog spec entry: counted, not ranked.
            None => match families::unspecified_family(ty) {
                Some(name) => Unranked::Unspecified.id(name),
                None => Unranked::Unknown.id(ty.split('.').next().unwrap_or(ty)),
            },
        };
        Some(Instance {
            provider: "aws".into(),
            instance_type: ty.to_string(),
            region: self.region.clone(),
            gpu,
            gpu_count: t.gpus as u32,
            vcpu: t.vcpu,
            ram_gib: t.ram_gib,
            gpu_memory_gb: None,
            prices,
            source: format!(
                "AWS Price List AmazonEC2 offer file {} ({url}), fetched {fetched_at}, sha256 {}",
                self.region,
                crate::text::prefix(sha256, 12)
            ),
            as_of: as_of.to_string(),
            confidence: Confidence::High,
            retired: None,
            notes: (!notes.is_empty()).then(|| notes.join("; ")),
            interconnect: None,
        })
    }
}

/// Reads a whole offer file from a reader: for the benchmark and the fuzz target.
pub fn parse_reader<R: Read>(r: R, region: &str) -> Result<Offer, String> {
    parse_offer(BufReader::with_capacity(1 << 20, r), region).map_err(|e| match e {
        BodyError::Fatal(m) | BodyError::Read(m) => m,
        BodyError::TooLarge => "over the cap".into(),
    })
}

/// Used by tests: the kept types of a region, by name.
pub fn kept_types(o: &Offer) -> HashMap<&str, &TypeRows> {
    o.types.iter().map(|(k, v)| (k.as_str(), v)).collect()
}
