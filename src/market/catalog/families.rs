//! Instance families and what their names alone tell (`src/data/instance_families.json`):
//! the GPU a family carries, the GPU count of sizes that do not spell it out, the families
//! with no spec entry yet, and GCP's hosts and split GPU rows. One file; the CSV import,
//! the catalog check and the AWS feed ask it here.

use serde::Deserialize;
use std::sync::OnceLock;

const DATA: &str = include_str!("../../data/instance_families.json");

#[derive(Deserialize)]
struct File {
    gpus: Vec<FamilyGpu>,
    gpu_counts: Vec<FamilyCount>,
    unspecified: Vec<FamilyName>,
    host_gpus: Vec<HostGpu>,
    gcp_gpu_rows: Vec<FamilyName>,
}

#[derive(Deserialize)]
struct FamilyGpu {
    prefix: String,
    #[serde(default)]
    contains: String,
    gpu: String,
}

#[derive(Deserialize)]
struct FamilyCount {
    prefix: String,
    gpus: u32,
}

#[derive(Deserialize)]
struct FamilyName {
    prefix: String,
    accelerator: String,
}

#[derive(Deserialize)]
struct HostGpu {
    prefix: String,
    accelerator: String,
    gpu: String,
}

fn data() -> &'static File {
    static F: OnceLock<File> = OnceLock::new();
    F.get_or_init(|| serde_json::from_str(DATA).expect("src/data/instance_families.json parses"))
}

/// The catalog GPU an instance family carries, whatever the accelerator column says
/// (`p4d.` is the A100 40 GB SXM): for feeds and files that name no GPU model.
pub fn family_gpu(instance_type: &str) -> Option<&'static str> {
    let ty = instance_type.to_lowercase();
    data()
        .gpus
        .iter()
        .find(|f| ty.starts_with(&f.prefix) && ty.contains(&f.contains))
        .map(|f| f.gpu.as_str())
}

/// The catalog GPU an attached accelerator named `accel` is on a host of this type, where
/// the name alone is ambiguous but the host family tells (GCP N1 V100s are SXM2 16 GB).
pub fn host_gpu(instance_type: &str, accel: &str) -> Option<&'static str> {
    let ty = instance_type.to_lowercase();
    data()
        .host_gpus
        .iter()
        .find(|h| ty.starts_with(&h.prefix) && h.accelerator.eq_ignore_ascii_case(accel))
        .map(|h| h.gpu.as_str())
}

/// The GPU count of a size whose name does not spell it out (`p4d.24xlarge`: 8).
pub fn family_gpu_count(instance_type: &str) -> Option<u32> {
    let ty = instance_type.to_lowercase();
    data()
        .gpu_counts
        .iter()
        .find(|f| ty.starts_with(&f.prefix))
        .map(|f| f.gpus)
}

/// The accelerator of a GPU family with no catalog spec entry yet (AWS `g5g.`: T4G).
pub fn unspecified_family(instance_type: &str) -> Option<&'static str> {
    let ty = instance_type.to_lowercase();
    data()
        .unspecified
        .iter()
        .find(|f| ty.starts_with(&f.prefix))
        .map(|f| f.accelerator.as_str())
}

/// The accelerator of a GCP machine family whose GPUs are priced on rows of their own (the
/// count is the type's `-<n>g` suffix).
pub fn gcp_gpu_row(instance_type: &str) -> Option<&'static str> {
    data()
        .gcp_gpu_rows
        .iter()
        .find(|f| instance_type.starts_with(&f.prefix))
        .map(|f| f.accelerator.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_families_file_answers_each_question() {
        assert_eq!(family_gpu("p4de.24xlarge"), Some("a100-80gb-sxm"));
        assert_eq!(family_gpu("p4d.24xlarge"), Some("a100-40gb-sxm"));
        assert_eq!(family_gpu("Standard_ND96isr_H100_v5"), Some("h100-sxm"));
        assert_eq!(family_gpu("m5.large"), None);
        assert_eq!(host_gpu("n1-standard-8", "v100"), Some("v100-sxm2-16gb"));
        assert_eq!(host_gpu("n1-standard-8", "T4"), None);
        assert_eq!(family_gpu_count("p5.48xlarge"), Some(8));
        assert_eq!(family_gpu_count("Standard_NC24ads_A100_v4"), Some(1));
        assert_eq!(unspecified_family("g5g.xlarge"), Some("T4G"));
        assert_eq!(gcp_gpu_row("a3-megagpu-8g"), Some("H100-MEGA"));
    }

    #[test]
    fn every_family_gpu_is_a_catalog_gpu() {
        let catalog = crate::market::catalog::Catalog::embedded();
        for f in data()
            .gpus
            .iter()
            .map(|f| &f.gpu)
            .chain(data().host_gpus.iter().map(|h| &h.gpu))
        {
            assert!(catalog.gpu(f).is_some(), "{f} is in no gpus[] entry");
        }
    }
}
