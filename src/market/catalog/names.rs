//! One GPU-name mapping for every price feed and for `--catalog-add`: the
//! spellings live in data (`src/data/gpu_names.json`), and this file decides, for one row,
//! which catalog GPU its accelerator is: by name, then by the memory the row states (read in
//! the unit it really carries: per GPU or the instance's total, MiB or GB, whichever fits a
//! candidate's datasheet memory), then by a stated default. A name no entry has is unknown:
//! never matched to a lookalike.

use super::GpuSpec;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::OnceLock;

const DATA: &str = include_str!("../../data/gpu_names.json");

/// The note of a memory value read as GB although its field says MiB.
pub const GB_AS_MIB: &str =
    "memory field read as GB per GPU (the file writes GB where it says MiB)";

/// How far a stated memory may be from a candidate's datasheet memory and still be it
/// (usable vs datasheet: AWS's A10G 22,888 MiB is 24.0 GB; an H100's 81,559 MiB is 85.5 GB).
const MEMORY_TOLERANCE: f64 = 0.12;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    schema_version: u32,
    #[allow(dead_code)]
    about: String,
    entries: Vec<Entry>,
    not_specified: Vec<String>,
    not_gpu_prefixes: Vec<String>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Entry {
    names: Vec<String>,
    candidates: Vec<String>,
    #[serde(default)]
    default: Option<String>,
    #[serde(default)]
    default_small: Option<String>,
}

struct Names {
    by_name: HashMap<String, Entry>,
    not_specified: Vec<String>,
    not_gpu_prefixes: Vec<String>,
}

fn names() -> &'static Names {
    static N: OnceLock<Names> = OnceLock::new();
    N.get_or_init(|| {
        let f: File = serde_json::from_str(DATA).expect("src/data/gpu_names.json parses");
        let mut by_name = HashMap::new();
        for e in &f.entries {
            for n in &e.names {
                let prev = by_name.insert(normalize(n), e.clone());
                assert!(
                    prev.is_none_or(|p| p.names == e.names),
                    "gpu_names.json: {n:?} in two entries"
                );
            }
        }
        Names {
            by_name,
            not_specified: f.not_specified.iter().map(|n| normalize(n)).collect(),
            not_gpu_prefixes: f.not_gpu_prefixes.iter().map(|n| normalize(n)).collect(),
        }
    })
}

/// A name as the mapping compares it: upper case, no separators, no vendor words.
pub fn normalize(name: &str) -> String {
    let mut s = name.to_uppercase();
    for w in ["NVIDIA", "TESLA", "AMD", "INSTINCT", "GEFORCE", "RADEON"] {
        s = s.replace(w, "");
    }
    s.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_' | '\t'))
        .collect()
}

/// What the mapping decided for one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// A catalog GPU, the memory per GPU in GB where the row stated one (in the unit that
    /// fits), and what was read or assumed, for the row's notes (empty when nothing was).
    Gpu {
        id: String,
        memory_gb: Option<f64>,
        note: String,
    },
    /// A GPU the feeds rent that has no spec entry yet (`not_specified`).
    NotSpecified(String),
    /// A name that could be several GPUs, and nothing on the row tells which.
    Ambiguous(String),
    /// The name is a known GPU, but the row's memory fits none of its variants: another
    /// GPU under a lookalike name (a 94 GB "H100" is an H100 NVL).
    Mismatch(String),
    /// An accelerator that is not a GPU (a TPU, Inferentia, Trainium, Gaudi).
    NotGpu(String),
    /// A name no entry has.
    Unknown(String),
}

/// How a row states the memory of its GPUs (`GpuInfo`'s `MemoryInfo.SizeInMiB` in SkyPilot:
/// per GPU in MiB as documented, but GB per GPU in Shadeform's rows and the instance's
/// total in Vast's, Verda's and Prime Intellect's).
#[derive(Clone, Copy, Debug)]
pub struct StatedMemory {
    pub value: f64,
    pub gpu_count: f64,
    /// The reading this file's rows use ([`file_reading`]), tried first.
    pub prefer: Option<usize>,
}

/// The readings of a stated memory value, in the order they are tried: GB per GPU and what
/// the reading was.
fn readings(m: StatedMemory) -> Vec<(f64, &'static str)> {
    let mib = 1_048_576.0 / 1e9;
    let mut v = vec![(m.value * mib, ""), (m.value, GB_AS_MIB)];
    if m.gpu_count > 1.0 {
        v.push((
            m.value * mib / m.gpu_count,
            "memory field read as the instance's total MiB (divided by the GPU count)",
        ));
        v.push((
            m.value / m.gpu_count,
            "memory field read as the instance's total GB (divided by the GPU count)",
        ));
    }
    if let Some(k) = m.prefer.filter(|k| *k < v.len()) {
        let first = v.remove(k);
        v.insert(0, first);
    }
    v
}

/// The one reading under which a row's memory fits its GPU, where its name has one
/// candidate and only one reading fits (a vote for the file's convention).
pub fn reading_of(name: &str, m: StatedMemory, specs: &[GpuSpec]) -> Option<usize> {
    let entry = names().by_name.get(&normalize(name))?;
    let [id] = entry.candidates.as_slice() else {
        return None;
    };
    let spec = specs.iter().find(|g| &g.id == id)?;
    let m = StatedMemory { prefer: None, ..m };
    let fitting: Vec<usize> = readings(m)
        .iter()
        .enumerate()
        .filter(|(_, (gb, _))| fits(*gb, spec))
        .map(|(i, _)| i)
        .collect();
    match fitting.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// A file's memory convention from its rows' votes ([`reading_of`]): the reading most of
/// them fit under, where at least three voted and 60% agree.
pub fn file_reading(votes: &[usize]) -> Option<usize> {
    let mut n = [0usize; 4];
    for v in votes.iter().filter(|v| **v < 4) {
        n[*v] += 1;
    }
    let (best, count) = n.iter().enumerate().max_by_key(|(_, c)| **c)?;
    (votes.len() >= 3 && *count as f64 >= 0.6 * votes.len() as f64).then_some(best)
}

fn fits(gb: f64, spec: &GpuSpec) -> bool {
    [spec.memory_gb, spec.memory_per_adapter_gb()]
        .into_iter()
        .flatten()
        .any(|model| (gb / model - 1.0).abs() <= MEMORY_TOLERANCE)
}

/// The stated memory read in the first unit that fits `spec`: GB per GPU and how it was read.
pub fn read_memory(m: StatedMemory, spec: &GpuSpec) -> Option<(f64, &'static str)> {
    readings(m).into_iter().find(|(gb, _)| fits(*gb, spec))
}

/// The catalog GPU an accelerator name is, given the specs, the row's stated memory and
/// its GPU count.
pub fn resolve(
    name: &str,
    memory: Option<StatedMemory>,
    count: u32,
    specs: &[GpuSpec],
) -> Resolved {
    let n = names();
    let key = normalize(name);
    let Some(entry) = n.by_name.get(&key) else {
        if n.not_gpu_prefixes
            .iter()
            .any(|p| key.starts_with(p.as_str()))
        {
            return Resolved::NotGpu(name.to_string());
        }
        return if n.not_specified.contains(&key) {
            Resolved::NotSpecified(name.to_string())
        } else {
            Resolved::Unknown(name.to_string())
        };
    };
    let cands: Vec<&GpuSpec> = entry
        .candidates
        .iter()
        .filter_map(|id| specs.iter().find(|g| &g.id == id))
        .collect();
    if cands.is_empty() {
        return Resolved::NotSpecified(name.to_string());
    }
    let Some(m) = memory.filter(|m| m.value.is_finite() && m.value > 0.0) else {
        return by_default(name, entry, &cands, count, None, "");
    };
    for (gb, how) in readings(m) {
        let fitting: Vec<&&GpuSpec> = cands.iter().filter(|g| fits(gb, g)).collect();
        match fitting.len() {
            0 => continue,
            1 => {
                return Resolved::Gpu {
                    id: fitting[0].id.clone(),
                    memory_gb: Some(gb),
                    note: how.to_string(),
                };
            }
            _ => {
                let same: Vec<&GpuSpec> = fitting.into_iter().copied().collect();
                return by_default(name, entry, &same, count, Some(gb), how);
            }
        }
    }
    let variants: Vec<String> = cands
        .iter()
        .map(|g| format!("{} ({} GB)", g.id, g.memory_gb.unwrap_or(f64::NAN)))
        .collect();
    Resolved::Mismatch(format!(
        "{name:?} with {} in its memory field fits no variant of that name ({}) read per GPU or in total, MiB or GB: another GPU under a lookalike name",
        m.value,
        variants.join(", ")
    ))
}

/// Several candidates fit: the entry's default for the instance's size, said in the note.
fn by_default(
    name: &str,
    entry: &Entry,
    cands: &[&GpuSpec],
    count: u32,
    gb: Option<f64>,
    how: &str,
) -> Resolved {
    if cands.len() == 1 {
        return Resolved::Gpu {
            id: cands[0].id.clone(),
            memory_gb: gb,
            note: how.to_string(),
        };
    }
    let pick = if count < 4 {
        entry.default_small.as_ref().or(entry.default.as_ref())
    } else {
        entry.default.as_ref()
    };
    match pick.filter(|p| cands.iter().any(|g| &g.id == *p)) {
        Some(id) => {
            let why = if gb.is_none() {
                "no memory stated"
            } else {
                "form factor not stated"
            };
            let mut note = format!(
                "{name:?} could be {}: {why}; assumed {id} for {count} GPU(s) ({} boards)",
                cands
                    .iter()
                    .map(|g| g.id.as_str())
                    .collect::<Vec<_>>()
                    .join(" or "),
                if count < 4 {
                    "PCIe cards"
                } else {
                    "4- and 8-GPU instances are SXM/OAM"
                }
            );
            if !how.is_empty() {
                note = format!("{how}; {note}");
            }
            Resolved::Gpu {
                id: id.clone(),
                memory_gb: gb,
                note,
            }
        }
        None => Resolved::Ambiguous(name.to_string()),
    }
}

/// Whether the name is an accelerator that is not a GPU (a TPU, Inferentia, Gaudi).
pub fn is_not_gpu(name: &str) -> bool {
    let k = normalize(name);
    names()
        .not_gpu_prefixes
        .iter()
        .any(|p| k.starts_with(p.as_str()))
}

/// The GPUs a name may be (empty for an unknown name).
pub fn candidates(name: &str) -> Vec<String> {
    names()
        .by_name
        .get(&normalize(name))
        .map(|e| e.candidates.clone())
        .unwrap_or_default()
}

/// Every normalised name the mapping knows (tests check the fixtures' names against it).
pub fn known(name: &str) -> bool {
    let n = names();
    let k = normalize(name);
    n.by_name.contains_key(&k)
        || n.not_specified.contains(&k)
        || n.not_gpu_prefixes.iter().any(|p| k.starts_with(p.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::catalog::Catalog;

    fn specs() -> Vec<GpuSpec> {
        Catalog::embedded().gpus
    }

    fn id(r: Resolved) -> String {
        match r {
            Resolved::Gpu { id, .. } => id,
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn every_candidate_and_default_is_a_catalog_gpu() {
        let s = specs();
        let f: File = serde_json::from_str(DATA).unwrap();
        for e in f.entries {
            for c in e
                .candidates
                .iter()
                .chain(&e.default)
                .chain(&e.default_small)
            {
                assert!(s.iter().any(|g| &g.id == c), "{c} in {:?}", e.names);
            }
        }
        names();
    }

    #[test]
    fn spellings_meet_in_one_gpu() {
        let s = specs();
        for n in [
            "H100",
            "H100-80GB",
            "H100-SXM5",
            "NVIDIA H100 80GB HBM3",
            "h100_sxm5",
        ] {
            assert_eq!(id(resolve(n, None, 8, &s)), "h100-sxm", "{n}");
        }
        for n in ["RTX4090", "RTX-4090", "NVIDIA GeForce RTX 4090", "RTX 4090"] {
            assert_eq!(id(resolve(n, None, 1, &s)), "rtx-4090", "{n}");
        }
        assert_eq!(id(resolve("AMD Instinct MI300X", None, 8, &s)), "mi300x");
        assert_eq!(id(resolve("H100-80G-PCIe", None, 1, &s)), "h100-pcie");
        // The 2026 market's spellings: each feed's own, one GPU each.
        for (n, want) in [
            ("H100NVL", "h100-nvl"),
            ("H100_PCIE_NVL", "h100-nvl"),
            ("RTX6000-Ada", "rtx-6000-ada"),
            ("RTX6000ADA_PCIE", "rtx-6000-ada"),
            ("RTXPRO6000S", "rtx-pro-6000-server"),
            ("RTXPRO6000-WK", "rtx-pro-6000-workstation"),
            ("RTXA6000", "rtx-a6000"),
            ("A6000_PCIE_LOW_RAM", "rtx-a6000"),
            ("NVIDIA B200", "b200"),
            ("B300 SXM6 AC", "b300"),
            ("RTX5090_PCIE_BAREMETAL", "rtx-5090"),
        ] {
            assert_eq!(id(resolve(n, None, 1, &s)), want, "{n}");
        }
        // Lambda's RTX6000 is the Turing Quadro RTX 6000, not the Ada card: no spec yet.
        assert!(matches!(
            resolve("RTX6000", None, 1, &s),
            Resolved::NotSpecified(_)
        ));
        assert!(matches!(
            resolve("Foo9000", None, 1, &s),
            Resolved::Unknown(_)
        ));
    }

    #[test]
    fn memory_decides_the_variant_in_the_unit_it_fits() {
        let s = specs();
        let mem = |value, gpu_count| {
            Some(StatedMemory {
                value,
                gpu_count,
                prefer: None,
            })
        };
        // MiB per GPU, as documented.
        assert_eq!(
            id(resolve("A100", mem(81920.0, 8.0), 8, &s)),
            "a100-80gb-sxm"
        );
        assert_eq!(
            id(resolve("A100", mem(40960.0, 8.0), 8, &s)),
            "a100-40gb-sxm"
        );
        // GB written where MiB is meant (Shadeform).
        let r = resolve("A100", mem(80.0, 1.0), 1, &s);
        let Resolved::Gpu { id: got, note, .. } = r else {
            panic!("{r:?}")
        };
        assert_eq!(got, "a100-80gb-sxm");
        assert!(note.contains("GB per GPU"), "{note}");
        // The instance's total (Vast): 8 x 80 GB.
        let r = resolve("H100", mem(655360.0, 8.0), 8, &s);
        assert!(
            matches!(&r, Resolved::Gpu { note, .. } if note.contains("total")),
            "{r:?}"
        );
        // A file whose rows give the instance's total: a 2 x 16 GB V100 row is a 16 GB part.
        let total = StatedMemory {
            value: 32768.0,
            gpu_count: 2.0,
            prefer: file_reading(&[2, 2, 2, 2]),
        };
        // (2 GPUs: taken as PCIe cards, said in the note.)
        assert_eq!(id(resolve("V100", Some(total), 2, &s)), "v100-pcie-16gb");
        assert_eq!(
            id(resolve("V100", mem(32768.0, 2.0), 2, &s)),
            "v100-sxm2-32gb"
        );
        assert_eq!(file_reading(&[2, 2, 0]), Some(2));
        assert_eq!(file_reading(&[2, 0]), None);
        // A 93.6 GB "H100" is no H100 SXM.
        assert!(matches!(
            resolve("H100", mem(95830.0, 1.0), 1, &s),
            Resolved::Mismatch(_)
        ));
        assert!(matches!(
            resolve("H100", mem(93.6, 1.0), 1, &s),
            Resolved::Mismatch(_)
        ));
    }

    #[test]
    fn form_factor_defaults_by_instance_size_and_says_so() {
        let s = specs();
        let r = resolve("A100-80GB", None, 1, &s);
        assert!(
            matches!(&r, Resolved::Gpu { id, note, .. } if id == "a100-80gb-pcie" && note.contains("assumed")),
            "{r:?}"
        );
        assert_eq!(id(resolve("A100-80GB", None, 8, &s)), "a100-80gb-sxm");
        assert_eq!(id(resolve("V100", None, 8, &s)), "v100-sxm2-16gb");
        assert_eq!(
            id(resolve(
                "V100",
                Some(StatedMemory {
                    value: 32768.0,
                    gpu_count: 1.0,
                    prefer: None,
                }),
                1,
                &s
            )),
            "v100-sxm2-32gb"
        );
    }
}
