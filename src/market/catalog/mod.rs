//! The price catalog: GPU datasheet figures, cloud instances with dated prices, currency
//! rates. Schema (version 1, JSON; the embedded default is `src/data/catalog.json`):
//!
//! ```text
//! schema_version  1 or 2 (2 adds the per-execution-unit figures; 1 files still load)
//! currencies      { CODE: { per_usd, as_of, source } }          units of CODE per 1 USD
//! gpus[]          { id, vendor, name, aliases[], arch?, fp32_tflops, fp32_packed_tflops?,
//!                   fp64_vector_tflops, fp16_vector_tflops?, fp16_tensor_tflops,
//!                   tf32_matrix_tflops?, fp8_matrix_tflops?, int8_matrix_tops?,
//!                   fp6_matrix_tflops?, fp4_matrix_tflops?, fp64_matrix_tflops,
//!                   memory_gb, bandwidth_gbps, adapters_per_package?, tdp_w, link?,
//!                   derived?: { field: how }, source, as_of, notes? }
//!                   figures are dense (no sparsity), per package, and may be null
//! instances[]     { provider, instance_type, region, gpu (a gpus[].id), gpu_count, vcpu,
//!                   ram_gib, gpu_memory_gb?, prices: { on_demand|spot|reserved_1y|
//!                   reserved_3y: { amount, currency, per: "hour", tier?, as_of?,
//!                   source? } }, source, as_of,
//!                   confidence (high|medium|low|estimate), notes?,
//!                   interconnect?: { kind, bus_gbps, source } }   the GPUs' link: the
//!                   all-reduce bus bandwidth nccl-tests reports (busbw), with its source
//! ```
//! Loading checks syntax and types (errors name the file, line and JSON path); `check`
//! then finds the faults public catalogs are known to have, per row and field.

mod check;
pub mod csv_import;
pub mod egress;
pub mod families;
mod filters;
mod gpu_id;
pub mod links;
pub mod load;
pub mod market;
pub mod names;
pub mod networks;
pub mod regions;
pub mod spot;
mod structure;

pub use filters::{Admission, Filters};

pub use check::Checked;
pub(crate) use check::PLACEHOLDER_AMOUNTS;
pub use check::expected_gpu_count;
pub use gpu_id::{GpuId, Unranked};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub const SCHEMA_VERSION: u32 = 2;

/// Longest provider, instance type, region, GPU id or name read from a catalog.
pub const MAX_NAME_CHARS: usize = 256;
const EMBEDDED: &str = include_str!("../../data/catalog.json");

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Currency {
    /// Units of this currency per 1 USD.
    pub per_usd: f64,
    pub as_of: String,
    pub source: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    pub id: String,
    pub vendor: String,
    pub name: String,
    /// Adapter names as drivers report them (Vulkan, Metal, DX12 spellings), matched exactly
    /// (case and spacing aside): near misses such as the 40 GB and 80 GB A100 must not meet.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Architecture generation (`volta`, `ampere`, `hopper`, `cdna3`, ...): efficiency
    /// factors are calibrated per generation where published measurements differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// FP32 on the vector units, without AMD's packed (dual-issue) doubling: one basis for
    /// every vendor.
    pub fp32_tflops: Option<f64>,
    /// AMD's packed-FP32 figure (two FP32 operations per lane per instruction), as the
    /// datasheet headlines it; shown, never used as the FP32 rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_packed_tflops: Option<f64>,
    pub fp64_vector_tflops: Option<f64>,
    /// FP16 on the vector units (no matrix engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16_vector_tflops: Option<f64>,
    /// FP16/BF16 on the matrix engines (tensor cores, matrix cores), dense, FP32 accumulate.
    pub fp16_tensor_tflops: Option<f64>,
    /// TF32 on the matrix engines, dense.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tf32_matrix_tflops: Option<f64>,
    /// FP8 on the matrix engines, dense.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8_matrix_tflops: Option<f64>,
    /// INT8 on the matrix engines, dense, TOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int8_matrix_tops: Option<f64>,
    /// FP6 on the matrix engines, dense (Blackwell, CDNA4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp6_matrix_tflops: Option<f64>,
    /// FP4 on the matrix engines, dense (Blackwell's NVFP4, CDNA4's MXFP4). Blackwell
    /// Ultra's datasheets print a dense figure that is not half the sparse one: the printed
    /// dense figure is the one kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp4_matrix_tflops: Option<f64>,
    /// FP64 on the matrix engines (FP64 tensor cores, AMD matrix cores).
    pub fp64_matrix_tflops: Option<f64>,
    /// Memory of the whole package (an MI250X's two dies together).
    pub memory_gb: Option<f64>,
    pub bandwidth_gbps: Option<f64>,
    /// How many adapters the driver shows for one package (MI250X: 2 dies, 2 adapters);
    /// figures and memory above are per package. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapters_per_package: Option<u32>,
    pub tdp_w: Option<f64>,
    /// The GPU's own links as its datasheet gives them (NVLink / xGMI generation and GB/s per
    /// GPU, or the PCIe generation where it has none); what an instance's GPUs reach between
    /// them is the instance's `interconnect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Figures not printed on a datasheet but derived (field name -> how), e.g. an FP64 rate
    /// from the architecture's FP64:FP32 ratio.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub derived: BTreeMap<String, String>,
    pub source: String,
    pub as_of: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum PricingModel {
    #[value(name = "on_demand", alias = "on-demand")]
    OnDemand,
    Spot,
    #[value(name = "reserved_1y")]
    #[serde(rename = "reserved_1y")]
    Reserved1y,
    #[value(name = "reserved_3y")]
    #[serde(rename = "reserved_3y")]
    Reserved3y,
}

impl PricingModel {
    pub fn name(self) -> &'static str {
        match self {
            PricingModel::OnDemand => "on_demand",
            PricingModel::Spot => "spot",
            PricingModel::Reserved1y => "reserved_1y",
            PricingModel::Reserved3y => "reserved_3y",
        }
    }

    /// A 1- or 3-year commitment.
    pub fn is_commitment(self) -> bool {
        matches!(self, PricingModel::Reserved1y | PricingModel::Reserved3y)
    }
}

/// The providers whose own price feed (`catalog update --source NAME`) reads their 1- and
/// 3-year commitment prices: provider, source.
pub const COMMITMENT_FEEDS: &[(&str, &str)] = &[("aws", "aws"), ("azure", "azure"), ("gcp", "gcp")];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub amount: f64,
    pub currency: String,
    /// Only "hour" is understood.
    pub per: String,
    /// Where the price stands: `list` (a provider's API or pricing page, or a named, dated
    /// catalog snapshot of them) or `reported` (an article, a forum, a quote: unverified).
    /// Absent: `list` for rows of high or medium confidence, else `reported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// This price's own date, where it comes from another source than the row's (a
    /// commitment price from a pricing snapshot of another day): absent, the row's `as_of`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// This price's own source, where it is not the row's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A spot price's interruption risk, where the provider publishes it (only on `spot`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interruption: Option<spot::Interruption>,
}

impl Price {
    /// A list price in USD per hour, dated and sourced by its row (what every feed reads).
    pub fn list_usd(amount: f64) -> Price {
        Price {
            amount,
            currency: "USD".into(),
            per: "hour".into(),
            tier: Some(Tier::List),
            as_of: None,
            source: None,
            interruption: None,
        }
    }

    /// The date this price was read: its own, else its row's.
    pub fn as_of<'a>(&'a self, inst: &'a Instance) -> &'a str {
        self.as_of.as_deref().unwrap_or(&inst.as_of)
    }
}

/// A price's provenance tier. Rankings use `list` prices unless told to include the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    List,
    Reported,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::List => "list",
            Tier::Reported => "reported",
        }
    }
}

/// Prices and exchange rates older than this many months are flagged as stale.
pub const STALE_MONTHS: i64 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
    Estimate,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    pub provider: String,
    pub instance_type: String,
    pub region: String,
    pub gpu: String,
    pub gpu_count: u32,
    pub vcpu: Option<u32>,
    pub ram_gib: Option<f64>,
    /// Memory per GPU as the source lists it, if it does (checked against the GPU model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_gb: Option<f64>,
    #[serde(default)]
    pub prices: BTreeMap<PricingModel, Price>,
    pub source: String,
    pub as_of: String,
    pub confidence: Confidence,
    /// The date the provider stopped selling this type: kept for reference, never ranked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retired: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// How the instance's GPUs talk to each other, where a source states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interconnect: Option<Interconnect>,
}

/// The GPUs' interconnect of a multi-GPU instance: what it is and the bus bandwidth a
/// collective reaches over it (nccl-tests' busbw: time = bytes x (n-1)/n / busbw for an
/// all-gather or reduce-scatter, twice that for an all-reduce).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interconnect {
    /// "NVLink4 / NVSwitch", "PCIe Gen4 x16".
    pub kind: String,
    /// GB/s.
    pub bus_gbps: f64,
    pub source: String,
}

/// A currency code as the catalog spells it: any case, `RMB` for `CNY`.
pub fn currency_code(s: &str) -> String {
    let c = s.trim().to_ascii_uppercase();
    if c == "RMB" { "CNY".into() } else { c }
}

impl GpuSpec {
    /// Every numeric figure with its field name and the top of its physical range.
    pub fn figure_fields(&self) -> [(&'static str, Option<f64>, f64); 14] {
        [
            ("fp32_tflops", self.fp32_tflops, 1e5),
            ("fp32_packed_tflops", self.fp32_packed_tflops, 1e5),
            ("fp64_vector_tflops", self.fp64_vector_tflops, 1e5),
            ("fp16_vector_tflops", self.fp16_vector_tflops, 1e5),
            ("fp16_tensor_tflops", self.fp16_tensor_tflops, 1e5),
            ("tf32_matrix_tflops", self.tf32_matrix_tflops, 1e5),
            ("fp8_matrix_tflops", self.fp8_matrix_tflops, 1e5),
            ("int8_matrix_tops", self.int8_matrix_tops, 1e5),
            ("fp6_matrix_tflops", self.fp6_matrix_tflops, 1e5),
            ("fp4_matrix_tflops", self.fp4_matrix_tflops, 1e5),
            ("fp64_matrix_tflops", self.fp64_matrix_tflops, 1e5),
            ("memory_gb", self.memory_gb, 1e4),
            ("bandwidth_gbps", self.bandwidth_gbps, 1e6),
            ("tdp_w", self.tdp_w, 1e5),
        ]
    }

    /// Adapters the driver shows per package (1 unless the catalog says otherwise).
    pub fn adapters(&self) -> u32 {
        self.adapters_per_package.unwrap_or(1).max(1)
    }

    /// Memory one adapter has: the package's memory split over its adapters.
    pub fn memory_per_adapter_gb(&self) -> Option<f64> {
        self.memory_gb.map(|m| m / f64::from(self.adapters()))
    }

    /// How a figure field was derived, when the catalog says it is not a datasheet value.
    pub fn derivation(&self, field: &str) -> Option<&str> {
        self.derived.get(field).map(String::as_str)
    }
}

impl Instance {
    /// The provenance tier of one of this row's prices (stated, or from the row's confidence).
    pub fn tier(&self, price: &Price) -> Tier {
        price.tier.unwrap_or(match self.confidence {
            Confidence::High | Confidence::Medium => Tier::List,
            Confidence::Low | Confidence::Estimate => Tier::Reported,
        })
    }

    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.provider, self.instance_type, self.region)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub currencies: BTreeMap<String, Currency>,
    #[serde(default)]
    pub gpus: Vec<GpuSpec>,
    #[serde(default)]
    pub instances: Vec<Instance>,
    /// Where each instance row came from (file and index there), parallel to `instances`.
    #[serde(skip)]
    pub origins: Vec<Origin>,
    /// Where each GPU entry came from, parallel to `gpus`.
    #[serde(skip)]
    pub gpu_origins: Vec<Origin>,
    /// The file each currency rate came from.
    #[serde(skip)]
    pub currency_origins: BTreeMap<String, String>,
    /// What loading found and mended before the rows were merged (a CSV line's bad price, a
    /// spot price that only repeats on-demand), each already naming its file and line or
    /// path; `instance` is the row's index in this catalog. `check` reports them first.
    #[serde(skip)]
    pub load_findings: Vec<Finding>,
    /// Where the prices came from when snapshots of the feeds were merged in (`catalog
    /// update`), for the notes under a ranking; None: the files named only.
    #[serde(skip)]
    pub prices_from: Option<String>,
}

/// Where a catalog row came from: the file, and the row's index in that file's list, so
/// findings name the user's own row and not its place in the merged catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    pub file: String,
    pub index: usize,
    /// The lines of a CSV file the row was built from (one per zone, and a GCP host and GPU
    /// line summed); empty for a JSON row, which findings name by its JSON path.
    pub lines: Vec<usize>,
}

impl Origin {
    /// `n` rows of `file`, in order.
    pub fn all(file: &str, n: usize) -> Vec<Origin> {
        (0..n)
            .map(|index| Origin {
                file: file.to_string(),
                index,
                lines: Vec::new(),
            })
            .collect()
    }
}

/// Where a user's catalog file came from, as findings name it; the embedded catalog's
/// findings name `EMBEDDED_NAME`.
pub const EMBEDDED_NAME: &str = "embedded catalog";

/// How snapshot rows' findings name their file: never a user's file, so their errors keep
/// the row out of a ranking without refusing the ranking.
pub const SNAPSHOT_PREFIX: &str = "snapshot ";

use crate::files::{parse_json, read_text};

impl Catalog {
    /// The instances `f` admits, with the GPUs they name and every exchange rate: a catalog
    /// file of its own (`catalog --format json` writes it; `--catalog FILE` reads it back).
    pub fn subset(&self, f: &Filters) -> Catalog {
        let f = &f.clone().settle(self);
        let instances: Vec<Instance> = self
            .instances
            .iter()
            .filter(|i| f.admit(i, self.gpu(&i.gpu), None) == Admission::Admitted)
            .cloned()
            .collect();
        let gpus = self
            .gpus
            .iter()
            .filter(|g| instances.iter().any(|i| i.gpu == g.id))
            .cloned()
            .collect();
        Catalog {
            schema_version: self.schema_version,
            description: self.description.clone(),
            currencies: self.currencies.clone(),
            gpus,
            instances,
            origins: Vec::new(),
            gpu_origins: Vec::new(),
            currency_origins: BTreeMap::new(),
            load_findings: Vec::new(),
            prices_from: self.prices_from.clone(),
        }
    }

    /// A catalog of instance rows only (a feed's), each row's origin `origin`.
    pub fn of_rows(description: &str, origin: &str, instances: Vec<Instance>) -> Catalog {
        let n = instances.len();
        Catalog {
            schema_version: SCHEMA_VERSION,
            description: Some(description.to_string()),
            currencies: BTreeMap::new(),
            gpus: Vec::new(),
            instances,
            origins: Origin::all(origin, n),
            gpu_origins: Vec::new(),
            currency_origins: BTreeMap::new(),
            load_findings: Vec::new(),
            prices_from: None,
        }
    }

    pub fn embedded() -> Catalog {
        Self::parse(EMBEDDED, EMBEDDED_NAME).expect("the embedded catalog parses")
    }

    pub fn parse(text: &str, name: &str) -> Result<Catalog> {
        let mut c: Catalog = match parse_json(text, name) {
            Ok(c) => c,
            Err(first) => match structure::faults(text) {
                Some(all) if all.len() > 1 => bail!(
                    "{name}: {} faults in the file's structure (it loads when each is mended):\n  {}",
                    all.len(),
                    all.join("\n  ")
                ),
                _ => return Err(first),
            },
        };
        if c.schema_version == 0 || c.schema_version > SCHEMA_VERSION {
            bail!(
                "{name}: schema_version {} is not one this gpuvalue reads (1..={SCHEMA_VERSION})",
                c.schema_version
            );
        }
        c.check_name_lengths(name)?;
        c.set_origins(name);
        c.drop_spot_repeating_on_demand(name);
        Ok(c)
    }

    /// A spot price equal to the on-demand price means "no spot data", not "no discount":
    /// it is dropped with a warning, and the row still ranks on its other prices.
    fn drop_spot_repeating_on_demand(&mut self, name: &str) {
        for (i, inst) in self.instances.iter_mut().enumerate() {
            let od = inst.prices.get(&PricingModel::OnDemand);
            let spot = inst.prices.get(&PricingModel::Spot);
            if let (Some(od), Some(spot)) = (od, spot)
                && od.currency == spot.currency
                && od.amount == spot.amount
            {
                self.load_findings.push(Finding {
                    severity: Severity::Warning,
                    file: name.to_string(),
                    path: format!("instances[{i}].prices.spot.amount"),
                    row: inst.key(),
                    message: format!(
                        "spot equals on-demand ({}): that means no spot data, not no discount; the spot price is dropped",
                        od.amount
                    ),
                    instance: Some(i),
                });
                inst.prices.remove(&PricingModel::Spot);
            }
        }
    }

    /// Refuses names over `MAX_NAME_CHARS` (a 50 MB provider name would blow every table up).
    fn check_name_lengths(&self, name: &str) -> Result<()> {
        let long = |s: &str| s.chars().count() > MAX_NAME_CHARS;
        let mut fields: Vec<(String, &str)> = Vec::new();
        for (i, x) in self.instances.iter().enumerate() {
            fields.push((format!("instances[{i}].provider"), &x.provider));
            fields.push((format!("instances[{i}].instance_type"), &x.instance_type));
            fields.push((format!("instances[{i}].region"), &x.region));
            fields.push((format!("instances[{i}].gpu"), &x.gpu));
        }
        for (i, g) in self.gpus.iter().enumerate() {
            fields.push((format!("gpus[{i}].id"), &g.id));
            fields.push((format!("gpus[{i}].name"), &g.name));
        }
        for code in self.currencies.keys() {
            fields.push(("currencies".into(), code));
        }
        if let Some((path, v)) = fields.into_iter().find(|(_, v)| long(v)) {
            bail!(
                "{name}: at JSON path `{path}`: {} characters, more than the {MAX_NAME_CHARS} a name may have",
                v.chars().count()
            );
        }
        Ok(())
    }

    /// Marks every row, GPU and currency as coming from `name`.
    pub fn set_origins(&mut self, name: &str) {
        self.origins = Origin::all(name, self.instances.len());
        self.gpu_origins = Origin::all(name, self.gpus.len());
        self.currency_origins = self
            .currencies
            .keys()
            .map(|k| (k.clone(), name.to_string()))
            .collect();
    }

    /// Instance rows of this one file that share a key: the second of each pair is an
    /// error naming both (merged, the last would silently win).
    pub fn duplicate_keys(&self, name: &str) -> Result<()> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut dups = Vec::new();
        for (i, inst) in self.instances.iter().enumerate() {
            if let Some(prev) = seen.insert(inst.key(), i) {
                dups.push(format!(
                    "instances[{prev}] and instances[{i}] are both {}",
                    inst.key()
                ));
            }
        }
        let mut ids: HashMap<&str, usize> = HashMap::new();
        for (i, g) in self.gpus.iter().enumerate() {
            if let Some(prev) = ids.insert(&g.id, i) {
                dups.push(format!(
                    "gpus[{prev}] and gpus[{i}] are both GPU id {:?}",
                    g.id
                ));
            }
        }
        if !dups.is_empty() {
            bail!(
                "{name}: the same key twice in one file: {}",
                dups.join("; ")
            );
        }
        Ok(())
    }

    pub fn load(path: &Path) -> Result<Catalog> {
        let text = read_text(path, "catalog")?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Adds another catalog's currencies, GPUs and instances; entries with the same id or
    /// key replace the existing ones.
    pub fn extend(&mut self, other: Catalog) {
        for (k, v) in other.currencies {
            if let Some(file) = other.currency_origins.get(&k) {
                self.currency_origins.insert(k.clone(), file.clone());
            }
            self.currencies.insert(k, v);
        }
        let gpu_origins = other
            .gpu_origins
            .into_iter()
            .map(Some)
            .chain(std::iter::repeat(None));
        for (g, origin) in other.gpus.into_iter().zip(gpu_origins) {
            match self.gpus.iter().position(|x| x.id == g.id) {
                Some(i) => {
                    self.gpus[i] = g;
                    if let (Some(o), Some(slot)) = (origin, self.gpu_origins.get_mut(i)) {
                        *slot = o;
                    }
                }
                None => {
                    self.gpus.push(g);
                    if let Some(o) = origin {
                        self.gpu_origins.push(o);
                    }
                }
            }
        }
        let mut moved = Vec::with_capacity(other.instances.len());
        // Each row's key once (a feed snapshot adds thousands of rows: a search per row
        // made this quadratic).
        let mut at: std::collections::HashMap<String, usize> = self
            .instances
            .iter()
            .enumerate()
            .map(|(i, x)| (x.key(), i))
            .collect();
        for (inst, origin) in other.instances.into_iter().zip(other.origins) {
            match at.get(&inst.key()).copied() {
                Some(i) => {
                    // The replaced row's load findings go with it.
                    self.load_findings.retain(|f| f.instance != Some(i));
                    self.instances[i] = inst;
                    self.origins[i] = origin;
                    moved.push(i);
                }
                None => {
                    moved.push(self.instances.len());
                    at.insert(inst.key(), self.instances.len());
                    self.instances.push(inst);
                    self.origins.push(origin);
                }
            }
        }
        for mut f in other.load_findings {
            f.instance = f.instance.and_then(|i| moved.get(i).copied());
            self.load_findings.push(f);
        }
    }

    pub fn gpu(&self, id: &str) -> Option<&GpuSpec> {
        self.gpus.iter().find(|g| g.id == id)
    }

    /// The catalog GPU whose alias (or id or name) equals the adapter name, ignoring case and
    /// runs of spaces. Exact match only: "NVIDIA A100-SXM4-40GB" never becomes the 80 GB part.
    ///
    /// ROCm's OpenCL device name (`gfx908:sramecc+:xnack-`, the adapter name where the
    /// runtime leaves the board name empty) is matched by its gfx id alone, and only where one
    /// product has that id (gfx908 is the MI100; gfx942 is MI300X, MI300A and MI325X alike, so
    /// no catalog entry names it).
    pub fn match_adapter(&self, adapter_name: &str) -> Option<&GpuSpec> {
        let mut want = normalize(adapter_name);
        if want.starts_with("gfx")
            && let Some((id, _features)) = want.split_once(':')
        {
            want = id.to_string();
        }
        self.gpus.iter().find(|g| {
            g.aliases
                .iter()
                .chain([&g.id, &g.name])
                .any(|a| normalize(a) == want)
        })
    }

    /// Converts an amount between currencies through USD.
    pub fn convert(&self, amount: f64, from: &str, to: &str) -> Result<f64> {
        if from == to {
            return Ok(amount);
        }
        let rate = |c: &str| {
            self.currencies
                .get(c)
                .map(|x| x.per_usd)
                .with_context(|| format!("no exchange rate for currency {c} in the catalog"))
        };
        Ok(amount / rate(from)? * rate(to)?)
    }
}

fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The row cannot be used: it never enters a ranking.
    Error,
    /// The row is suspect: it is used, and the warning is shown beside it.
    Warning,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub severity: Severity,
    /// The file the row came from.
    pub file: String,
    /// JSON path of the row or field, e.g. `instances[3].prices.spot.amount`.
    pub path: String,
    /// The instance key (provider/type/region) or GPU id, for people.
    pub row: String,
    pub message: String,
    /// The instance's index in the merged catalog, for an instance row's finding (`path`
    /// names the row's index in its own file).
    #[serde(skip)]
    pub instance: Option<usize>,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{sev}: {}: {} ({}): {}",
            self.file, self.path, self.row, self.message
        )
    }
}

/// Where a finding on a row imported from CSV points: its line(s), and the CSV column that
/// holds the field the JSON path `field` names (`.prices.spot.amount` is `SpotPrice`).
fn csv_place(lines: &[usize], field: &str) -> String {
    let shown: Vec<String> = lines.iter().take(8).map(|l| l.to_string()).collect();
    let more = if lines.len() > 8 { ", ..." } else { "" };
    let at = match lines {
        [one] => format!("line {one}"),
        _ => format!("lines {}{more}", shown.join(", ")),
    };
    let column = match field {
        "" => return at,
        ".gpu" => "AcceleratorName",
        ".gpu_count" => "AcceleratorCount",
        ".vcpu" => "vCPUs",
        ".ram_gib" => "MemoryGiB",
        ".gpu_memory_gb" => "GpuInfo",
        ".as_of" => return format!("{at} (the date given by --csv-as-of)"),
        f if f.starts_with(".prices.on_demand") => "Price",
        f if f.starts_with(".prices.spot") => "SpotPrice",
        other => return format!("{at}, field {}", other.trim_start_matches('.')),
    };
    format!("{at}, column {column}")
}

#[cfg(test)]
mod tests;
