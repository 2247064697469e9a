//! `gpuhunt`: dstack's published catalogs, the way its own client reads them:
//! `https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3/<provider>/version` names the
//! newest version, `.../v3/<provider>/<version>/catalog.zip` holds one `<provider>.csv`
//! (gpuhunt's v2 columns: instance_name, location, price, cpu, memory, gpu_count, gpu_name,
//! gpu_memory (GB per GPU), spot, disk_size, gpu_vendor, flags, cpu_arch, provider_data), spot
//! and on demand as separate rows. Nine providers publish (aws, azure, verda, gcp,
//! lambdalabs, nebius, oci, runpod, cloudrift); one that does not (404) is skipped and said.
//!
//! A zip is untrusted input: at most [`MAX_ENTRIES`] entries, none with a path (no `/`,
//! `\`, `..`), the CSV at most [`MAX_CSV`] bytes unpacked and [`MAX_RATIO`] times its packed
//! size (no zip bomb); read in memory, never extracted to disk.

use super::http::{Client, FetchError};
use super::offers;
use super::snapshot::FileRecord;
use super::{Fetch, Source};
use crate::market::catalog::{Catalog, Confidence, Instance, Price, PricingModel};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::io::Read;

pub const BASE: &str = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3";
/// gpuhunt's offline providers, and the provider name gpuvalue's catalog uses for each.
pub const PROVIDERS: &[(&str, &str)] = &[
    ("aws", "aws"),
    ("azure", "azure"),
    ("verda", "verda"),
    ("gcp", "gcp"),
    ("lambdalabs", "lambda"),
    ("nebius", "nebius"),
    ("oci", "oci"),
    ("runpod", "runpod"),
    ("cloudrift", "cloudrift"),
];
pub const MAX_ENTRIES: usize = 8;
pub const MAX_CSV: u64 = 256 << 20;
pub const MAX_RATIO: u64 = 200;

pub struct Gpuhunt;

impl Source for Gpuhunt {
    fn name(&self) -> &'static str {
        "gpuhunt"
    }
    fn about(&self) -> &'static str {
        "dstack's published gpuhunt catalogs (9 providers, spot and on demand), no account needed"
    }
    fn urls(&self) -> Vec<String> {
        vec![format!(
            "{BASE}/<provider>/version, then <version>/catalog.zip ({})",
            PROVIDERS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
        )]
    }
    fn fetch(&self, http: &Client) -> Result<Fetch> {
        let (mut all, mut files, mut notes) = (Vec::new(), Vec::new(), Vec::new());
        for (provider, ours) in PROVIDERS {
            let fetched_at = super::now();
            let vurl = format!("{BASE}/{provider}/version");
            let v = match http.get(&vurl) {
                Ok(v) => v,
                Err(FetchError::NotFound(u)) => {
                    notes.push(format!("{provider}: no published catalog (404): skipped"));
                    files.push(FileRecord::missing(&u, &fetched_at));
                    continue;
                }
                Err(e) => bail!("{e}"),
            };
            let version = String::from_utf8_lossy(&v.body).trim().to_string();
            if version.is_empty()
                || version.len() > 64
                || !version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                || version.starts_with('.')
            {
                bail!("{vurl}: {version:?} is not a catalog version (YYYYMMDD-N)");
            }
            files.push(v.meta.record(&fetched_at));
            let zurl = format!("{BASE}/{provider}/{version}/catalog.zip");
            let z = match http.get(&zurl) {
                Ok(z) => z,
                Err(FetchError::NotFound(u)) => {
                    bail!("{u}: the version file names {version}, whose catalog.zip is missing")
                }
                Err(e) => bail!("{e}"),
            };
            let text = csv_of(&z.body, provider).with_context(|| z.meta.url.clone())?;
            let (rows, said) = rows(&text, provider, ours, &version, &fetched_at, &z.meta.sha256)
                .with_context(|| format!("{}: {provider}.csv", z.meta.url))?;
            notes.push(format!("{provider} {version}: {said}"));
            files.push(z.meta.record(&fetched_at));
            all.extend(rows);
        }
        if all.is_empty() {
            bail!("no provider's catalog could be read");
        }
        Ok(Fetch {
            catalog: Catalog::of_rows("dstack gpuhunt catalogs", "gpuhunt catalogs", all),
            risks: Vec::new(),
            files,
            notes,
        })
    }
}

/// The `<provider>.csv` of a catalog.zip, within the caps.
pub fn csv_of(zip_bytes: &[u8], provider: &str) -> Result<String> {
    let mut z =
        zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)).context("not a zip archive")?;
    if z.len() > MAX_ENTRIES {
        bail!("{} entries in the archive (at most {MAX_ENTRIES})", z.len());
    }
    let want = format!("{provider}.csv");
    for i in 0..z.len() {
        let name = z
            .by_index_raw(i)
            .context("a damaged entry")?
            .name()
            .context("an entry's name")?
            .to_string();
        if name.contains(['/', '\\']) || name.contains("..") {
            bail!("entry {name:?} has a path: refused");
        }
    }
    let mut f = z
        .by_name(&want)
        .map_err(|_| anyhow::anyhow!("no {want} in the archive"))?;
    let (size, packed) = (f.size(), f.compressed_size().max(1));
    if size > MAX_CSV || size / packed > MAX_RATIO {
        bail!(
            "{want}: {size} bytes from {packed} packed is over the caps ({MAX_CSV} bytes, {MAX_RATIO}x): refused"
        );
    }
    let mut out = Vec::with_capacity(size as usize);
    // The stated size can lie: never read past it.
    (&mut f)
        .take(size.min(MAX_CSV) + 1)
        .read_to_end(&mut out)
        .with_context(|| format!("{want}: cannot unpack"))?;
    if out.len() as u64 > size {
        bail!("{want}: unpacks to more than its stated {size} bytes: refused");
    }
    String::from_utf8(out).map_err(|_| anyhow::anyhow!("{want}: not UTF-8"))
}

/// One provider's rows: one instance per name and location, on demand and spot joined.
pub fn rows(
    text: &str,
    provider: &str,
    ours: &str,
    version: &str,
    fetched_at: &str,
    sha256: &str,
) -> Result<(Vec<Instance>, String)> {
    let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let head = r.headers().context("no header")?.clone();
    let c = columns(&head)?;
    let (by, tally) = join_prices(&mut r, &c)?;
    let what = format!(
        "dstack gpuhunt catalog {provider} {version} ({BASE}/{provider}/{version}/catalog.zip)"
    );
    let specs = offers::specs();
    let mut out = Vec::new();
    for ((name, location), joined) in by {
        if !joined.0.contains_key(&PricingModel::OnDemand)
            && !joined.0.contains_key(&PricingModel::Spot)
        {
            continue;
        }
        let base = offers::fetched_row(ours, &what, fetched_at, sha256, Confidence::Medium);
        out.push(instance(base, provider, name, location, joined, &specs));
    }
    let Tally { read, no_gpu, bad } = tally;
    let said = format!(
        "{read} rows read, {} instances (on demand and spot joined), {no_gpu} without a GPU, {bad} with no usable price or a share of a GPU",
        out.len()
    );
    Ok((out, said))
}

/// The positions of the columns read, in the order instance_name, location, price, cpu,
/// memory, gpu_count, gpu_name, gpu_memory, spot; an error names the first one missing.
fn columns(head: &csv::StringRecord) -> Result<[usize; 9]> {
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .ok_or_else(|| anyhow::anyhow!("no column {name:?} (gpuhunt's v2 columns)"))
    };
    Ok([
        col("instance_name")?,
        col("location")?,
        col("price")?,
        col("cpu")?,
        col("memory")?,
        col("gpu_count")?,
        col("gpu_name")?,
        col("gpu_memory")?,
        col("spot")?,
    ])
}

/// One (name, location)'s prices by kind, its [cpu, memory, gpu_count, gpu_name, gpu_memory]
/// as the first of its lines states them, and that line.
type Joined = (BTreeMap<PricingModel, f64>, [String; 5], usize);

/// The joined lines by (name, location).
type ByPlace = BTreeMap<(String, String), Joined>;

/// How many lines were read, had no GPU, or had no usable price or a share of a GPU.
struct Tally {
    read: usize,
    no_gpu: usize,
    bad: usize,
}

/// The CSV's lines with a GPU and a usable price, on demand and spot joined by (name,
/// location), the first price of each kind kept; an error for a spot that is neither True
/// nor False.
fn join_prices(r: &mut csv::Reader<&[u8]>, c: &[usize; 9]) -> Result<(ByPlace, Tally)> {
    let mut by = ByPlace::new();
    let (mut read, mut no_gpu, mut bad) = (0, 0, 0);
    for (i, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("line {}", i + 2))?;
        read += 1;
        let get = |k: usize| rec.get(c[k]).unwrap_or("").trim();
        let count: f64 = get(5).parse().unwrap_or(0.0);
        if count < 1.0 || get(6).is_empty() {
            no_gpu += 1;
            continue;
        }
        let price: f64 = get(2).parse().unwrap_or(f64::NAN);
        let spot = match get(8).to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            other => bail!("line {}: spot is {other:?}, expected True or False", i + 2),
        };
        if !(price > 0.0 && price.is_finite()) || count.fract() != 0.0 {
            bad += 1;
            continue;
        }
        let e = by
            .entry((get(0).to_string(), get(1).to_string()))
            .or_insert_with(|| {
                (
                    BTreeMap::new(),
                    [get(3), get(4), get(5), get(6), get(7)].map(str::to_string),
                    i + 2,
                )
            });
        let m = if spot {
            PricingModel::Spot
        } else {
            PricingModel::OnDemand
        };
        e.0.entry(m).or_insert(price);
    }
    Ok((by, Tally { read, no_gpu, bad }))
}

/// One joined (name, location) as a catalog row, its GPU model resolved from the GPU name
/// and memory, on the fields `base` shares with the fetch's other rows.
fn instance(
    base: Instance,
    provider: &str,
    name: String,
    location: String,
    (prices, [cpu, ram, count, gpu_name, gpu_gb], line): Joined,
    specs: &[crate::market::catalog::GpuSpec],
) -> Instance {
    let n: u32 = count.parse::<f64>().map_or(0, |v| v as u32);
    let memory = offers::per_gpu_memory(gpu_gb.parse::<f64>().ok(), 1);
    let (gpu, gpu_mem, why) = offers::resolve(&[&gpu_name], memory, n, specs);
    Instance {
        instance_type: name,
        region: location,
        gpu,
        gpu_count: n,
        vcpu: cpu.parse::<f64>().ok().map(|v| v as u32),
        ram_gib: ram.parse().ok(),
        gpu_memory_gb: gpu_mem,
        prices: prices
            .into_iter()
            .map(|(m, p)| (m, Price::list_usd(p)))
            .collect(),
        notes: Some(format!(
            "{provider}.csv line {line}{}",
            offers::why_suffix(&why)
        )),
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(entries: &[(&str, &[u8])], method: zip::CompressionMethod) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        for (name, data) in entries {
            w.start_file(*name, opts).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    const CSV: &str = "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,gpu_vendor,flags,cpu_arch,provider_data\r\n\
        gpu_1x_h100_sxm5,us-east-1,2.99,26,225.0,1,H100,80,False,,nvidia,,x86,{}\r\n\
        gpu_1x_h100_sxm5,us-east-1,1.5,26,225.0,1,H100,80,True,,nvidia,,x86,{}\r\n\
        cpu_4x_general,us-east-1,0.2,4,16.0,0,,,False,,,,x86,{}\r\n";

    #[test]
    fn a_catalog_zip_gives_one_instance_with_on_demand_and_spot() {
        let z = zip_of(
            &[("lambdalabs.csv", CSV.as_bytes())],
            zip::CompressionMethod::Deflated,
        );
        let text = csv_of(&z, "lambdalabs").unwrap();
        let (rows, said) = rows(
            &text,
            "lambdalabs",
            "lambda",
            "20261203-1",
            "2026-12-03T00:00:00Z",
            "ab",
        )
        .unwrap();
        assert_eq!(rows.len(), 1, "{said}");
        let r = &rows[0];
        assert_eq!(
            (r.provider.as_str(), r.gpu.as_str(), r.gpu_count),
            ("lambda", "h100-sxm", 1)
        );
        assert_eq!(r.prices[&PricingModel::OnDemand].amount, 2.99);
        assert_eq!(r.prices[&PricingModel::Spot].amount, 1.5);
        assert!(said.contains("1 without a GPU"), "{said}");
    }

    #[test]
    fn zip_bombs_paths_and_strangers_are_refused() {
        // 64 MB of zeros packs to ~64 KB: a ratio of about 1000, over the cap.
        let zeros = vec![b'0'; 64 << 20];
        let bomb = zip_of(&[("oci.csv", &zeros)], zip::CompressionMethod::Deflated);
        let e = csv_of(&bomb, "oci").unwrap_err().to_string();
        assert!(e.contains("over the caps"), "{e}");
        let path = zip_of(
            &[("../oci.csv", CSV.as_bytes())],
            zip::CompressionMethod::Stored,
        );
        let e = csv_of(&path, "oci").unwrap_err().to_string();
        assert!(e.contains("has a path"), "{e}");
        let many: Vec<(String, &[u8])> = (0..9)
            .map(|i| (format!("f{i}.csv"), CSV.as_bytes()))
            .collect();
        let many: Vec<(&str, &[u8])> = many.iter().map(|(n, d)| (n.as_str(), *d)).collect();
        let e = csv_of(&zip_of(&many, zip::CompressionMethod::Stored), "oci")
            .unwrap_err()
            .to_string();
        assert!(e.contains("9 entries"), "{e}");
        let other = zip_of(
            &[("nebius.csv", CSV.as_bytes())],
            zip::CompressionMethod::Stored,
        );
        let e = csv_of(&other, "oci").unwrap_err().to_string();
        assert!(e.contains("no oci.csv"), "{e}");
        let e = csv_of(b"PK\x03\x04 not really", "oci")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a zip"), "{e}");
    }
}
