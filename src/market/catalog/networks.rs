//! The network between nodes of the instance types that publish it (`src/data/networks.json`):
//! what a job on several nodes runs its collectives over (`rank --nodes`).

use serde::Deserialize;
use std::sync::OnceLock;

const EMBEDDED: &str = include_str!("../../data/networks.json");

/// One instance family's network between nodes.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    pub provider: String,
    /// The start of the instance type's name, lower case.
    pub prefix: String,
    /// The node's total for the GPUs' traffic, Gb/s.
    pub gbps: f64,
    pub kind: String,
    pub source: String,
}

impl Network {
    /// The node's total in GB/s (bytes).
    pub fn gb_per_s(&self) -> f64 {
        self.gbps / 8.0
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    schema_version: u32,
    #[allow(dead_code)]
    about: String,
    entries: Vec<Network>,
}

fn all() -> &'static [Network] {
    static ALL: OnceLock<Vec<Network>> = OnceLock::new();
    ALL.get_or_init(|| {
        serde_json::from_str::<File>(EMBEDDED)
            .expect("src/data/networks.json parses (checked by a unit test)")
            .entries
    })
}

/// The network between nodes of `instance_type` at `provider`, where published.
pub fn of(provider: &str, instance_type: &str) -> Option<&'static Network> {
    let p = provider.to_lowercase();
    let t = instance_type.to_lowercase();
    all()
        .iter()
        .find(|n| n.provider == p && t.starts_with(&n.prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_and_names_the_rdma_nodes() {
        assert!(all().len() >= 10);
        for n in all() {
            assert_eq!(n.prefix, n.prefix.to_lowercase(), "{n:?}");
            assert!(n.gbps > 0.0 && n.gbps <= 14_400.0, "{n:?}");
            assert!(n.source.contains("read 2026"), "{n:?}");
        }
        assert_eq!(of("aws", "p5.48xlarge").unwrap().gbps, 3200.0);
        assert_eq!(of("AWS", "p4d.24xlarge").unwrap().gb_per_s(), 50.0);
        assert_eq!(
            of("azure", "Standard_ND96isr_H100_v5").unwrap().gbps,
            3200.0
        );
        // p5en is not p5: the first match is the longer prefix's own entry.
        assert!(of("aws", "p5en.48xlarge").unwrap().kind.contains("16"));
        assert!(of("lambda", "gpu_8x_h100_sxm5").is_none());
        assert!(of("aws", "g5.48xlarge").is_none());
    }
}
