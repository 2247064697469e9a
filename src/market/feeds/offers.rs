//! What the offer feeds (RunPod, Vast.ai, dstack's gpuhunt) share in turning an API's records
//! into catalog rows: the stated memory per GPU, the GPU model a name resolves to, and the
//! fields every row of one fetch has alike (provider, source, date, confidence).

use crate::market::catalog::names::StatedMemory;
use crate::market::catalog::{Catalog, Confidence, GpuSpec, Instance};
use std::collections::BTreeMap;

/// The GPU models names resolve against: the embedded catalog's.
pub fn specs() -> Vec<GpuSpec> {
    Catalog::embedded().gpus
}

/// A memory value a feed states for one GPU, read in the `prefer` reading first; none where
/// it is missing or not positive.
pub fn per_gpu_memory(value: Option<f64>, prefer: usize) -> Option<StatedMemory> {
    value.filter(|v| *v > 0.0).map(|v| StatedMemory {
        value: v,
        gpu_count: 1.0,
        prefer: Some(prefer),
    })
}

/// The first of `names` that resolves to a known GPU model: the model, the memory per GPU
/// it settles on and why, if a name or the memory needed a reading.
pub fn resolve(
    names: &[&str],
    memory: Option<StatedMemory>,
    count: u32,
    specs: &[GpuSpec],
) -> (String, Option<f64>, String) {
    crate::market::catalog::csv_import::first_known(names, memory, count, specs)
}

/// `"; why"` to end a row's notes with, or nothing where there is no why.
pub fn why_suffix(why: &str) -> String {
    if why.is_empty() {
        String::new()
    } else {
        format!("; {why}")
    }
}

/// A row with the fields one fetch's rows share: `provider`, the source (`what`, the time
/// fetched and the answer's short sha256), the fetch's date and `confidence`. The rest is
/// empty, for the feed to fill.
pub fn fetched_row(
    provider: &str,
    what: &str,
    fetched_at: &str,
    sha256: &str,
    confidence: Confidence,
) -> Instance {
    Instance {
        provider: provider.to_string(),
        instance_type: String::new(),
        region: String::new(),
        gpu: String::new(),
        gpu_count: 0,
        vcpu: None,
        ram_gib: None,
        gpu_memory_gb: None,
        prices: BTreeMap::new(),
        source: format!(
            "{what}, fetched {fetched_at}, sha256 {}",
            &sha256[..12.min(sha256.len())]
        ),
        as_of: fetched_at[..10].to_string(),
        confidence,
        retired: None,
        notes: None,
        interconnect: None,
    }
}
