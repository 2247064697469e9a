//! `--adapter visible` and `--adapter pci:BUS`: the GPUs a scheduler granted, as adapters.
//!
//! Vulkan ignores `CUDA_VISIBLE_DEVICES` and its kin, so a job granted GPU 3 of 8 still sees
//! all eight. The grant is read from the environment (`CUDA_VISIBLE_DEVICES`,
//! `ROCR_VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES`, then Slurm's `GPU_DEVICE_ORDINAL`,
//! `SLURM_STEP_GPUS`, `SLURM_JOB_GPUS`), each entry turned into a PCI bus id through the
//! vendor's own numbering (`nvidia-smi`; on AMD the KFD topology in sysfs, the order ROCm
//! numbers GPUs in), and the bus id matched against the adapters' (`device_pci_bus_id`).
//! Anything that cannot be mapped exactly is said, and the default choice applies: never a
//! guess. [`map`] is pure (environment and vendor table passed in) so it is tested without
//! hardware; [`system_table`] is the one part that asks the machine.

use std::fmt;
use std::str::FromStr;

/// A PCI address, normalised: `nvidia-smi` prints `00000000:3B:00.0`, Vulkan `0000:3b:00.0`,
/// sysfs `0000:3b:00.0`; all are the same bus id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciBusId {
    pub domain: u32,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl FromStr for PciBusId {
    type Err = String;
    /// `[DOMAIN:]BUS:DEVICE.FUNCTION` in hex, any case (the domain defaults to 0).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{}`: expected a PCI bus id DOMAIN:BUS:DEVICE.FUNCTION in hex, e.g. 0000:3b:00.0",
                s.escape_debug()
            )
        };
        let t = s.trim();
        let (head, function) = t.rsplit_once('.').ok_or_else(bad)?;
        let parts: Vec<&str> = head.split(':').collect();
        let (domain, bus, device) = match parts.as_slice() {
            [d, b, v] => (*d, *b, *v),
            [b, v] => ("0", *b, *v),
            _ => return Err(bad()),
        };
        let hex = |x: &str, digits: usize| {
            (!x.is_empty() && x.len() <= digits && x.chars().all(|c| c.is_ascii_hexdigit()))
                .then(|| u32::from_str_radix(x, 16).ok())
                .flatten()
        };
        let id = PciBusId {
            domain: hex(domain, 8).ok_or_else(bad)?,
            bus: hex(bus, 2).ok_or_else(bad)? as u8,
            device: hex(device, 2).filter(|&d| d < 32).ok_or_else(bad)? as u8,
            function: hex(function, 1).filter(|&f| f < 8).ok_or_else(bad)? as u8,
        };
        Ok(id)
    }
}

impl fmt::Display for PciBusId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

/// Whose numbering an environment variable uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
}

impl Vendor {
    fn tool(self) -> &'static str {
        match self {
            Vendor::Nvidia => "nvidia-smi",
            Vendor::Amd => "the KFD topology (/sys/class/kfd/kfd/topology/nodes)",
        }
    }
}

/// One GPU as its vendor numbers it: the ordinal the runtime's `*_VISIBLE_DEVICES` counts
/// in, its UUID where known, its bus id and model name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuSlot {
    pub ordinal: u32,
    pub uuid: Option<String>,
    pub bus: PciBusId,
    pub name: String,
}

/// What `--adapter visible` made of the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Visible {
    /// The granted adapters (indices into the adapter list) and how they were found.
    Mapped { indices: Vec<usize>, how: String },
    /// Why the grant cannot be mapped: the default choice applies.
    Unmapped { why: String },
}

/// The variables read, in order, with the numbering each uses (`None`: either vendor's).
const SOURCES: &[(&str, Option<Vendor>)] = &[
    ("CUDA_VISIBLE_DEVICES", Some(Vendor::Nvidia)),
    ("ROCR_VISIBLE_DEVICES", Some(Vendor::Amd)),
    ("HIP_VISIBLE_DEVICES", Some(Vendor::Amd)),
    ("GPU_DEVICE_ORDINAL", None),
    ("SLURM_STEP_GPUS", None),
    ("SLURM_JOB_GPUS", None),
];

/// Maps the grant in `env` to adapters whose bus ids are `adapters` (index = position in
/// the adapter list; `None` where the adapter reports none). `table` gives a vendor's GPU
/// numbering, or why it cannot. The first variable that maps wins; when none does, every
/// reason is given.
pub fn map(
    adapters: &[Option<PciBusId>],
    env: &dyn Fn(&str) -> Option<String>,
    table: &mut dyn FnMut(Vendor) -> Result<Vec<GpuSlot>, String>,
) -> Visible {
    // Each vendor's tool is asked once.
    let mut known: Vec<(Vendor, Result<Vec<GpuSlot>, String>)> = Vec::new();
    let mut table = |v: Vendor| {
        if let Some((_, r)) = known.iter().find(|k| k.0 == v) {
            return r.clone();
        }
        let r = table(v);
        known.push((v, r.clone()));
        r
    };
    let mut reasons: Vec<(String, String)> = Vec::new();
    for &(var, vendor) in SOURCES {
        let Some(value) = env(var) else { continue };
        // HIP_VISIBLE_DEVICES counts within ROCR_VISIBLE_DEVICES' GPUs: handled with it.
        if var == "HIP_VISIBLE_DEVICES" && env("ROCR_VISIBLE_DEVICES").is_some() {
            continue;
        }
        match grant(var, &value, vendor, env, &mut table) {
            Ok((buses, via)) => match to_adapters(adapters, &buses) {
                Ok(indices) => {
                    let list: Vec<String> = indices.iter().map(|i| format!("#{i}")).collect();
                    let how = format!(
                        "{var}={} -> {} ({via}) -> adapter {}",
                        value.escape_debug(),
                        joined(&buses),
                        list.join(", ")
                    );
                    return Visible::Mapped { indices, how };
                }
                Err(e) => reasons.push((format!("{var}={}", value.escape_debug()), e)),
            },
            Err(e) => reasons.push((format!("{var}={}", value.escape_debug()), e)),
        }
    }
    let why = if reasons.is_empty() {
        let names: Vec<&str> = SOURCES.iter().map(|s| s.0).collect();
        format!(
            "no GPU grant in the environment (none of {} is set)",
            names.join(", ")
        )
    } else {
        merged(reasons)
    };
    Visible::Unmapped { why }
}

/// `VAR=value: reason` items, variables with the same reason named together.
fn merged(reasons: Vec<(String, String)>) -> String {
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    for (var, why) in reasons {
        match out.iter_mut().find(|o| o.1 == why) {
            Some(o) => o.0.push(var),
            None => out.push((vec![var], why)),
        }
    }
    out.iter()
        .map(|(vars, why)| format!("{}: {why}", vars.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

fn joined(buses: &[PciBusId]) -> String {
    buses
        .iter()
        .map(PciBusId::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The bus ids one variable grants, and through which vendor's numbering.
fn grant(
    var: &str,
    value: &str,
    vendor: Option<Vendor>,
    env: &dyn Fn(&str) -> Option<String>,
    table: &mut dyn FnMut(Vendor) -> Result<Vec<GpuSlot>, String>,
) -> Result<(Vec<PciBusId>, &'static str), String> {
    let listed = entries(value)?;
    let (vendor, slots) = match vendor {
        Some(v) => (v, table(v)?),
        None => either_vendor(table)?,
    };
    let mut buses = Vec::new();
    for e in &listed {
        buses.push(slot_of(e, &slots, vendor)?.bus);
    }
    if var == "CUDA_VISIBLE_DEVICES" {
        cuda_order_is_bus_order(&listed, &slots, env)?;
    }
    if var == "ROCR_VISIBLE_DEVICES"
        && let Some(hip) = env("HIP_VISIBLE_DEVICES")
    {
        // HIP counts within the GPUs ROCr left visible.
        let mut picked = Vec::new();
        for e in entries(&hip)? {
            let i: usize = e.parse().map_err(|_| {
                format!(
                    "HIP_VISIBLE_DEVICES entry `{}` under ROCR_VISIBLE_DEVICES: expected an index",
                    e.escape_debug()
                )
            })?;
            picked.push(*buses.get(i).ok_or_else(|| {
                format!(
                    "HIP_VISIBLE_DEVICES index {i}: ROCR_VISIBLE_DEVICES leaves only {} GPU(s)",
                    buses.len()
                )
            })?);
        }
        buses = picked;
    }
    Ok((buses, vendor.tool()))
}

/// The entries of a `*_VISIBLE_DEVICES`-style list, or why it grants nothing usable.
fn entries(value: &str) -> Result<Vec<String>, String> {
    let t = value.trim();
    if t.is_empty() || t == "-1" || t.eq_ignore_ascii_case("NoDevFiles") {
        return Err("grants no GPU".into());
    }
    let v: Vec<String> = t.split(',').map(|e| e.trim().to_string()).collect();
    if let Some(bad) = v.iter().find(|e| e.is_empty()) {
        return Err(format!("empty entry `{}` in the list", bad.escape_debug()));
    }
    if v.iter().any(|e| e.to_ascii_uppercase().starts_with("MIG-")) {
        return Err("a MIG instance is not a Vulkan adapter (Vulkan sees whole GPUs)".into());
    }
    Ok(v)
}

/// The numbering of whichever vendor's tool answers; both answering is a mixed node where
/// a vendor-neutral ordinal is ambiguous.
fn either_vendor(
    table: &mut dyn FnMut(Vendor) -> Result<Vec<GpuSlot>, String>,
) -> Result<(Vendor, Vec<GpuSlot>), String> {
    match (table(Vendor::Nvidia), table(Vendor::Amd)) {
        (Ok(n), Err(_)) => Ok((Vendor::Nvidia, n)),
        (Err(_), Ok(a)) => Ok((Vendor::Amd, a)),
        (Ok(_), Ok(_)) => {
            Err("both NVIDIA and AMD GPUs are present: the ordinals are ambiguous".into())
        }
        (Err(n), Err(a)) => Err(format!("no vendor numbering to map it with ({n}; {a})")),
    }
}

fn slot_of<'a>(entry: &str, slots: &'a [GpuSlot], vendor: Vendor) -> Result<&'a GpuSlot, String> {
    let found = match entry.parse::<u32>() {
        Ok(n) => slots.iter().find(|s| s.ordinal == n),
        Err(_) => slots.iter().find(|s| {
            s.uuid
                .as_deref()
                .is_some_and(|u| u.eq_ignore_ascii_case(entry))
        }),
    };
    found.ok_or_else(|| {
        let known: Vec<String> = slots.iter().map(|s| s.ordinal.to_string()).collect();
        format!(
            "entry `{}` is not a GPU {} lists (it lists {})",
            entry.escape_debug(),
            vendor.tool(),
            if known.is_empty() {
                "none".into()
            } else {
                format!("ordinals {}", known.join(", "))
            }
        )
    })
}

/// CUDA numbers GPUs fastest first unless `CUDA_DEVICE_ORDER=PCI_BUS_ID`; nvidia-smi by bus.
/// The two agree when every GPU is the same model (ties go by bus id); otherwise an index
/// cannot be mapped (a UUID can).
fn cuda_order_is_bus_order(
    entries: &[String],
    slots: &[GpuSlot],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    let by_bus = env("CUDA_DEVICE_ORDER").is_some_and(|o| o.trim() == "PCI_BUS_ID");
    let mixed = slots.iter().any(|s| s.name != slots[0].name);
    let by_index = entries.iter().any(|e| e.parse::<u32>().is_ok());
    if mixed && by_index && !by_bus {
        return Err(
            "GPUs of different models, and CUDA_DEVICE_ORDER is not PCI_BUS_ID: \
             CUDA's indices (fastest first) need not be nvidia-smi's (by bus); \
             set CUDA_DEVICE_ORDER=PCI_BUS_ID or give UUIDs"
                .into(),
        );
    }
    Ok(())
}

/// The adapter of each granted bus id, or why one is missing.
fn to_adapters(adapters: &[Option<PciBusId>], buses: &[PciBusId]) -> Result<Vec<usize>, String> {
    if adapters.iter().all(Option::is_none) {
        return Err(format!(
            "granted {}, but no adapter reports a PCI bus id (the Vulkan driver lacks \
             VK_EXT_pci_bus_info, or the backend reports none)",
            joined(buses)
        ));
    }
    let mut out: Vec<usize> = Vec::new();
    for b in buses {
        match adapters.iter().position(|a| a.as_ref() == Some(b)) {
            Some(i) if !out.contains(&i) => out.push(i),
            Some(_) => {}
            None => {
                let have: Vec<String> = adapters.iter().flatten().map(|a| a.to_string()).collect();
                return Err(format!(
                    "granted GPU {b} is not among the adapters' bus ids ({})",
                    have.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

/// Parses `nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader`.
pub fn parse_nvidia_smi(text: &str) -> Result<Vec<GpuSlot>, String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.splitn(4, ',').map(str::trim).collect();
        let [index, uuid, bus, name] = f.as_slice() else {
            return Err(format!(
                "unexpected nvidia-smi line `{}`",
                line.escape_debug()
            ));
        };
        out.push(GpuSlot {
            ordinal: index
                .parse()
                .map_err(|_| format!("unexpected nvidia-smi index `{}`", index.escape_debug()))?,
            uuid: Some(uuid.to_string()),
            bus: bus.parse()?,
            name: name.to_string(),
        });
    }
    Ok(out)
}

/// One KFD topology node's `properties` file: the GPU's bus id and ROCm UUID, or `None`
/// for a CPU node (no SIMDs).
pub fn parse_kfd_node(properties: &str) -> Option<(PciBusId, Option<String>)> {
    let get = |key: &str| {
        properties.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    if get("simd_count").unwrap_or(0) == 0 {
        return None;
    }
    let loc = get("location_id")?;
    let bus = PciBusId {
        domain: get("domain").unwrap_or(0) as u32,
        bus: (loc >> 8) as u8,
        device: ((loc >> 3) & 0x1f) as u8,
        function: (loc & 7) as u8,
    };
    let uuid = get("unique_id")
        .filter(|&u| u != 0)
        .map(|u| format!("GPU-{u:016x}"));
    Some((bus, uuid))
}

/// The machine's numbering for `vendor`: nvidia-smi's, or the KFD topology's GPU nodes in
/// node order (ROCm's device order).
pub fn system_table(vendor: Vendor) -> Result<Vec<GpuSlot>, String> {
    match vendor {
        Vendor::Nvidia => {
            let out = std::process::Command::new("nvidia-smi")
                .args([
                    "--query-gpu=index,uuid,pci.bus_id,name",
                    "--format=csv,noheader",
                ])
                .output()
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => "nvidia-smi not found".to_string(),
                    _ => format!("cannot run nvidia-smi ({e})"),
                })?;
            if !out.status.success() {
                return Err(format!("nvidia-smi failed ({})", out.status));
            }
            parse_nvidia_smi(&String::from_utf8_lossy(&out.stdout))
        }
        Vendor::Amd => amd_table(std::path::Path::new("/sys/class/kfd/kfd/topology/nodes")),
    }
}

fn amd_table(dir: &std::path::Path) -> Result<Vec<GpuSlot>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("no KFD topology ({} missing)", dir.display()),
        _ => format!("cannot read {} ({e})", dir.display()),
    })?;
    let mut nodes: Vec<(u32, std::path::PathBuf)> = read
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
        .collect();
    nodes.sort();
    let mut out = Vec::new();
    for (_, p) in nodes {
        let text = std::fs::read_to_string(p.join("properties")).unwrap_or_default();
        if let Some((bus, uuid)) = parse_kfd_node(&text) {
            let name = std::fs::read_to_string(p.join("name")).unwrap_or_default();
            out.push(GpuSlot {
                ordinal: out.len() as u32,
                uuid,
                bus,
                name: name.trim().to_string(),
            });
        }
    }
    if out.is_empty() {
        return Err(format!("no GPU node in {}", dir.display()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn bus(s: &str) -> PciBusId {
        s.parse().unwrap()
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    /// nvidia-smi on a 4-GPU node: bus order 1b, 3b, 86, af.
    const SMI: &str = "0, GPU-aaaa, 00000000:1B:00.0, NVIDIA H100 80GB HBM3\n\
                       1, GPU-bbbb, 00000000:3B:00.0, NVIDIA H100 80GB HBM3\n\
                       2, GPU-cccc, 00000000:86:00.0, NVIDIA H100 80GB HBM3\n\
                       3, GPU-dddd, 00000000:AF:00.0, NVIDIA H100 80GB HBM3\n";

    fn nvidia_only(v: Vendor) -> Result<Vec<GpuSlot>, String> {
        match v {
            Vendor::Nvidia => parse_nvidia_smi(SMI),
            Vendor::Amd => Err("no KFD topology".into()),
        }
    }

    /// Adapters as Vulkan lists them (sorted by name, not bus): 86, 1b, af, 3b, lavapipe.
    fn adapters() -> Vec<Option<PciBusId>> {
        vec![
            Some(bus("0000:86:00.0")),
            Some(bus("0000:1b:00.0")),
            Some(bus("0000:af:00.0")),
            Some(bus("0000:3b:00.0")),
            None,
        ]
    }

    #[test]
    fn bus_ids_normalise() {
        assert_eq!(bus("00000000:3B:00.0"), bus("0000:3b:00.0"));
        assert_eq!(bus("3b:00.0").to_string(), "0000:3b:00.0");
        assert_eq!(bus("0001:AF:1f.7").to_string(), "0001:af:1f.7");
        for bad in [
            "",
            "3b",
            "0000:3b:00",
            "0000:3b:20.0",
            "0000:3b:00.8",
            "zz:00.0",
            "0:1:2:3.0",
        ] {
            assert!(bad.parse::<PciBusId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn cuda_visible_devices_1_picks_the_second_gpu_by_bus() {
        let got = map(
            &adapters(),
            &env_of(&[("CUDA_VISIBLE_DEVICES", "1")]),
            &mut nvidia_only,
        );
        let Visible::Mapped { indices, how } = got else {
            panic!("{got:?}")
        };
        assert_eq!(
            indices,
            vec![3],
            "nvidia-smi GPU 1 is 0000:3b:00.0 = adapter #3"
        );
        assert!(
            how.contains("0000:3b:00.0") && how.contains("nvidia-smi"),
            "{how}"
        );
        // Several GPUs, and a UUID.
        let env = env_of(&[("CUDA_VISIBLE_DEVICES", "GPU-dddd,0")]);
        let got = map(&adapters(), &env, &mut nvidia_only);
        assert!(
            matches!(got, Visible::Mapped { ref indices, .. } if indices == &[2, 1]),
            "{got:?}"
        );
    }

    #[test]
    fn without_bus_ids_it_says_why_and_does_not_guess() {
        let none = vec![None, None];
        let got = map(
            &none,
            &env_of(&[("CUDA_VISIBLE_DEVICES", "1")]),
            &mut nvidia_only,
        );
        let Visible::Unmapped { why } = got else {
            panic!("{got:?}")
        };
        assert!(why.contains("no adapter reports a PCI bus id"), "{why}");
    }

    #[test]
    fn nothing_to_map_is_said() {
        let got = map(&adapters(), &env_of(&[]), &mut nvidia_only);
        let Visible::Unmapped { why } = got else {
            panic!()
        };
        assert!(why.contains("none of CUDA_VISIBLE_DEVICES"), "{why}");
        // A grant but no nvidia-smi (the Slurm test on lavapipe).
        let got = map(
            &adapters(),
            &env_of(&[("CUDA_VISIBLE_DEVICES", "0")]),
            &mut |_| Err("cannot run nvidia-smi (not found)".to_string()),
        );
        let Visible::Unmapped { why } = got else {
            panic!()
        };
        assert!(
            why.contains("CUDA_VISIBLE_DEVICES=0: cannot run nvidia-smi"),
            "{why}"
        );
        // An ordinal nvidia-smi does not list, an empty grant, MIG.
        for (v, says) in [
            ("7", "not a GPU nvidia-smi lists"),
            ("", "grants no GPU"),
            ("MIG-1234", "MIG"),
        ] {
            let got = map(
                &adapters(),
                &env_of(&[("CUDA_VISIBLE_DEVICES", v)]),
                &mut nvidia_only,
            );
            let Visible::Unmapped { why } = got else {
                panic!("{v}")
            };
            assert!(why.contains(says), "{v}: {why}");
        }
    }

    #[test]
    fn a_granted_gpu_missing_from_the_adapters_is_not_replaced() {
        let few = vec![Some(bus("0000:1b:00.0"))];
        let got = map(
            &few,
            &env_of(&[("CUDA_VISIBLE_DEVICES", "1")]),
            &mut nvidia_only,
        );
        let Visible::Unmapped { why } = got else {
            panic!()
        };
        assert!(why.contains("0000:3b:00.0 is not among"), "{why}");
    }

    #[test]
    fn mixed_models_need_bus_order_for_cuda_indices() {
        let mixed = "0, GPU-a, 00000000:1B:00.0, NVIDIA L4\n1, GPU-b, 00000000:3B:00.0, NVIDIA H100 80GB HBM3\n";
        let mut t = |_| parse_nvidia_smi(mixed);
        let got = map(
            &adapters(),
            &env_of(&[("CUDA_VISIBLE_DEVICES", "1")]),
            &mut t,
        );
        assert!(matches!(got, Visible::Unmapped { ref why } if why.contains("CUDA_DEVICE_ORDER")));
        let env = env_of(&[
            ("CUDA_VISIBLE_DEVICES", "1"),
            ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
        ]);
        assert!(
            matches!(map(&adapters(), &env, &mut t), Visible::Mapped { ref indices, .. } if indices == &[3])
        );
    }

    #[test]
    fn amd_grants_map_through_the_kfd_topology_and_hip_counts_within_rocr() {
        let amd = |v| match v {
            Vendor::Amd => Ok(vec![
                GpuSlot {
                    ordinal: 0,
                    uuid: Some("GPU-0123456789abcdef".into()),
                    bus: bus("0000:1b:00.0"),
                    name: "gfx942".into(),
                },
                GpuSlot {
                    ordinal: 1,
                    uuid: None,
                    bus: bus("0000:86:00.0"),
                    name: "gfx942".into(),
                },
                GpuSlot {
                    ordinal: 2,
                    uuid: None,
                    bus: bus("0000:af:00.0"),
                    name: "gfx942".into(),
                },
            ]),
            Vendor::Nvidia => Err("cannot run nvidia-smi".to_string()),
        };
        // Slurm sets CUDA_VISIBLE_DEVICES on AMD nodes too: it cannot map, ROCR does.
        let env = env_of(&[("CUDA_VISIBLE_DEVICES", "2"), ("ROCR_VISIBLE_DEVICES", "2")]);
        assert!(
            matches!(map(&adapters(), &env, &mut { amd }), Visible::Mapped { ref indices, .. } if indices == &[2])
        );
        let env = env_of(&[
            ("ROCR_VISIBLE_DEVICES", "GPU-0123456789abcdef,1"),
            ("HIP_VISIBLE_DEVICES", "1"),
        ]);
        assert!(
            matches!(map(&adapters(), &env, &mut { amd }), Visible::Mapped { ref indices, .. } if indices == &[0])
        );
        let env = env_of(&[("SLURM_JOB_GPUS", "0")]);
        assert!(
            matches!(map(&adapters(), &env, &mut { amd }), Visible::Mapped { ref indices, .. } if indices == &[1])
        );
    }

    #[test]
    fn kfd_properties_give_bus_and_uuid() {
        let gpu = "cpu_cores_count 0\nsimd_count 1216\nlocation_id 15104\ndomain 0\nunique_id 81985529216486895\ngpu_id 1234\n";
        let (b, u) = parse_kfd_node(gpu).unwrap();
        assert_eq!(b.to_string(), "0000:3b:00.0"); // 15104 = 0x3b00
        assert_eq!(u.as_deref(), Some("GPU-0123456789abcdef"));
        assert_eq!(
            parse_kfd_node("cpu_cores_count 64\nsimd_count 0\nlocation_id 0\n"),
            None
        );
    }
}
