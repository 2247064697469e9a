//! How the GPUs of one instance reach each other (`src/data/links.json`):
//! the interconnect the instance's row states, else the baseboard every instance of an
//! SXM/OAM GPU is built on, else PCIe of the GPU's generation, assumed and said so.

use super::{GpuSpec, Instance};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

const EMBEDDED: &str = include_str!("../../data/links.json");

/// Where an instance's link comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkBasis {
    /// The instance's catalog row states it.
    Stated,
    /// The GPU's baseboard (HGX, OAM): every multi-GPU instance of it has this link.
    Board,
    /// Nothing known: PCIe of the GPU's generation, at NCCL's model of it (an upper bound).
    Assumed,
}

/// The link an instance's collectives run over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub kind: String,
    /// GB/s, nccl-tests' bus bandwidth.
    pub bus_gbps: f64,
    pub basis: LinkBasis,
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Board {
    gpus: Vec<String>,
    kind: String,
    bus_gbps: f64,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Generation {
    #[serde(rename = "gen")]
    generation: u32,
    bus_gbps: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pcie {
    source: String,
    generations: Vec<Generation>,
    arch_default: std::collections::BTreeMap<String, u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    schema_version: u32,
    #[allow(dead_code)]
    about: String,
    boards: Vec<Board>,
    pcie: Pcie,
}

fn table() -> &'static File {
    static ALL: OnceLock<File> = OnceLock::new();
    ALL.get_or_init(|| {
        serde_json::from_str(EMBEDDED).expect("src/data/links.json parses (checked by a unit test)")
    })
}

/// The PCIe generation of a GPU: the one its datasheet's link names ("PCIe Gen5 x16"),
/// else its architecture's, else 4.
pub fn pcie_generation(gpu: &GpuSpec) -> u32 {
    let named = gpu.link.as_deref().and_then(|l| {
        let at = l.find("PCIe Gen")? + "PCIe Gen".len();
        l[at..].chars().next()?.to_digit(10)
    });
    named
        .or_else(|| {
            let arch = gpu.arch.as_deref()?;
            table().pcie.arch_default.get(arch).copied()
        })
        .unwrap_or(4)
}

/// The link between the GPUs of `inst` (of `gpu`); None for an instance of one GPU.
pub fn of(inst: &Instance, gpu: &GpuSpec) -> Option<Link> {
    if inst.gpu_count < 2 {
        return None;
    }
    if let Some(l) = &inst.interconnect {
        return Some(Link {
            kind: l.kind.clone(),
            bus_gbps: l.bus_gbps,
            basis: LinkBasis::Stated,
            source: l.source.clone(),
        });
    }
    Some(of_gpu(gpu))
}

/// The link between several `gpu`s where no instance states one: its baseboard's, else
/// PCIe of its generation (assumed).
pub fn of_gpu(gpu: &GpuSpec) -> Link {
    let t = table();
    if let Some(b) = t.boards.iter().find(|b| b.gpus.contains(&gpu.id)) {
        return Link {
            kind: b.kind.clone(),
            bus_gbps: b.bus_gbps,
            basis: LinkBasis::Board,
            source: b.source.clone(),
        };
    }
    let generation = pcie_generation(gpu);
    let bus = t
        .pcie
        .generations
        .iter()
        .find(|g| g.generation == generation)
        .or_else(|| t.pcie.generations.iter().find(|g| g.generation == 4))
        .map_or(24.0, |g| g.bus_gbps);
    Link {
        kind: format!("PCIe Gen{generation} x16"),
        bus_gbps: bus,
        basis: LinkBasis::Assumed,
        source: t.pcie.source.clone(),
    }
}

/// The GPU ids the baseboard table names (checked against the catalog by a test).
pub fn board_gpus() -> Vec<&'static str> {
    table()
        .boards
        .iter()
        .flat_map(|b| b.gpus.iter().map(String::as_str))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::catalog::Catalog;

    fn spec(id: &str) -> GpuSpec {
        Catalog::embedded()
            .gpus
            .into_iter()
            .find(|g| g.id == id)
            .unwrap()
    }

    fn instance(gpu: &str, count: u32) -> Instance {
        let c = Catalog::embedded();
        let mut i = c.instances[0].clone();
        i.gpu = gpu.into();
        i.gpu_count = count;
        i.interconnect = None;
        i
    }

    #[test]
    fn the_embedded_table_parses_and_names_only_catalog_gpus() {
        let c = Catalog::embedded();
        for id in board_gpus() {
            assert!(
                c.gpus.iter().any(|g| g.id == id),
                "{id} is not in the catalog"
            );
        }
        for b in &table().boards {
            assert!(b.bus_gbps > 50.0 && b.bus_gbps < 2000.0, "{}", b.kind);
            assert!(
                b.source.contains("http") || b.source.contains('/'),
                "{}",
                b.kind
            );
        }
    }

    #[test]
    fn a_row_s_own_link_wins_then_the_baseboard_then_pcie_of_the_generation() {
        let mut p5 = instance("h100-sxm", 8);
        let h100 = spec("h100-sxm");
        let board = of(&p5, &h100).unwrap();
        assert_eq!((board.basis, board.bus_gbps), (LinkBasis::Board, 370.0));
        p5.interconnect = Some(crate::market::catalog::Interconnect {
            kind: "NVLink4 / NVSwitch".into(),
            bus_gbps: 300.0,
            source: "a test".into(),
        });
        let stated = of(&p5, &h100).unwrap();
        assert_eq!((stated.basis, stated.bus_gbps), (LinkBasis::Stated, 300.0));
        // The V100 SXM2 boards have NVLink; the PCIe cards of each generation do not.
        let v100 = of(&instance("v100-sxm2-16gb", 8), &spec("v100-sxm2-16gb")).unwrap();
        assert_eq!(v100.basis, LinkBasis::Board);
        assert!(v100.kind.contains("NVLink2"));
        for (gpu, generation, bus) in [
            ("v100-pcie-16gb", 3, 12.0),
            ("l40s", 4, 24.0),
            ("rtx-5090", 5, 48.0),
            ("h100-pcie", 5, 48.0),
        ] {
            let l = of(&instance(gpu, 4), &spec(gpu)).unwrap();
            assert_eq!(l.basis, LinkBasis::Assumed, "{gpu}");
            assert_eq!(l.kind, format!("PCIe Gen{generation} x16"), "{gpu}");
            assert_eq!(l.bus_gbps, bus, "{gpu}");
        }
        assert!(of(&instance("h100-sxm", 1), &h100).is_none());
    }
}
