//! Adapter discovery and selection: every adapter on every backend, described as plain data,
//! and the rule that picks one (hardware before software, discrete before integrated).

use super::visible::{self, PciBusId};
pub use crate::model::{AdapterSummary, FeatureSummary, LimitsSummary, vendor_name};
use serde::{Deserialize, Serialize};

/// Which backends to search. `None` means all that this build supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    Vulkan,
    Metal,
    Dx12,
    Gl,
    /// The second executor: OpenCL C kernels through the ICD loader (ROCm on AMD Instinct,
    /// NVIDIA's driver, PoCL on a CPU).
    Opencl,
}

impl BackendChoice {
    /// The error for a backend that does not exist on the platform this build runs on (Metal
    /// off Apple's systems, DirectX 12 off Windows).
    pub fn elsewhere(self) -> Option<SelectError> {
        let os = std::env::consts::OS;
        let apple = matches!(os, "macos" | "ios");
        let (name, why) = match self {
            BackendChoice::Metal if !apple => ("metal", "Metal exists only on Apple's systems"),
            BackendChoice::Dx12 if os != "windows" => ("dx12", "DirectX 12 exists only on Windows"),
            _ => return None,
        };
        Some(SelectError::Elsewhere {
            backend: name,
            why,
            os: if os == "linux" { "Linux" } else { os },
            extra: if os == "windows" { " (and dx12)" } else { "" },
        })
    }

    /// The wgpu backends this choice searches (none for OpenCL).
    pub fn to_wgpu(self) -> wgpu::Backends {
        match self {
            BackendChoice::Vulkan => wgpu::Backends::VULKAN,
            BackendChoice::Metal => wgpu::Backends::METAL,
            BackendChoice::Dx12 => wgpu::Backends::DX12,
            BackendChoice::Gl => wgpu::Backends::GL,
            BackendChoice::Opencl => wgpu::Backends::empty(),
        }
    }
}

/// A device some executor can open: a wgpu adapter, or an OpenCL device.
#[derive(Clone, Debug)]
pub enum Adapter {
    Wgpu(wgpu::Adapter),
    #[cfg(not(target_arch = "wasm32"))]
    OpenCl(Box<crate::measuring::gpu::opencl::ClDevice>),
}

/// How the user asked for an adapter: `--adapter INDEX|NAME-SUBSTRING|all|visible|pci:BUS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdapterChoice {
    /// The best hardware GPU, else a software adapter.
    Best,
    /// Index into the list printed by `gpuvalue devices`.
    Index(usize),
    /// Case-insensitive substring of the adapter name.
    Name(String),
    /// Every adapter in turn.
    All,
    /// The GPUs the scheduler granted (`CUDA_VISIBLE_DEVICES` and kin, by PCI bus id), else
    /// the default choice, with the reason.
    Visible,
    /// The adapter at this PCI bus id.
    Pci(PciBusId),
}

impl std::str::FromStr for AdapterChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err("expected an adapter index, a part of its name, or `all`".into());
        }
        let lower = t.to_ascii_lowercase();
        if let Some(bus) = lower.strip_prefix("pci:") {
            return bus.parse().map(AdapterChoice::Pci);
        }
        if t.eq_ignore_ascii_case("all") {
            Ok(AdapterChoice::All)
        } else if t.eq_ignore_ascii_case("visible") {
            Ok(AdapterChoice::Visible)
        } else if t.eq_ignore_ascii_case("best") || t.eq_ignore_ascii_case("auto") {
            Ok(AdapterChoice::Best)
        } else if let Ok(i) = t.parse::<usize>() {
            Ok(AdapterChoice::Index(i))
        } else {
            Ok(AdapterChoice::Name(t.to_string()))
        }
    }
}

impl From<&wgpu::Limits> for LimitsSummary {
    fn from(l: &wgpu::Limits) -> Self {
        LimitsSummary {
            max_buffer_size: l.max_buffer_size,
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_compute_workgroup_storage_size: l.max_compute_workgroup_storage_size,
            max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_compute_workgroup_size_x: l.max_compute_workgroup_size_x,
            max_compute_workgroup_size_y: l.max_compute_workgroup_size_y,
            max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
            min_storage_buffer_offset_alignment: l.min_storage_buffer_offset_alignment,
        }
    }
}

/// Names that mark a software rasteriser even when the driver reports another device type.
const SOFTWARE_MARKERS: &[&str] = &[
    "llvmpipe",
    "lavapipe",
    "swiftshader",
    "softpipe",
    "microsoft basic render",
    "warp",
];

pub fn is_software(device_type: wgpu::DeviceType, name: &str, driver: &str) -> bool {
    if device_type == wgpu::DeviceType::Cpu {
        return true;
    }
    let hay = format!("{} {}", name, driver).to_lowercase();
    SOFTWARE_MARKERS.iter().any(|m| {
        // "warp" must be a word of its own: do not flag e.g. "Warpspeed".
        if *m == "warp" {
            hay.split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "warp")
        } else {
            hay.contains(m)
        }
    })
}

fn device_type_name(t: wgpu::DeviceType) -> &'static str {
    match t {
        wgpu::DeviceType::DiscreteGpu => "discrete",
        wgpu::DeviceType::IntegratedGpu => "integrated",
        wgpu::DeviceType::VirtualGpu => "virtual",
        wgpu::DeviceType::Cpu => "cpu",
        wgpu::DeviceType::Other => "other",
    }
}

fn backend_name(b: wgpu::Backend) -> String {
    match b {
        wgpu::Backend::Vulkan => "vulkan".into(),
        wgpu::Backend::Metal => "metal".into(),
        wgpu::Backend::Dx12 => "dx12".into(),
        wgpu::Backend::Gl => "gl".into(),
        wgpu::Backend::BrowserWebGpu => "webgpu".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

pub fn summarize(index: usize, adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    let limits = adapter.limits();
    let features = adapter.features();
    let subgroup = features.contains(wgpu::Features::SUBGROUP);
    AdapterSummary {
        index,
        software: is_software(info.device_type, &info.name, &info.driver),
        vendor: vendor_name(info.vendor).to_string(),
        vendor_id: info.vendor,
        device_id: info.device,
        device_type: device_type_name(info.device_type).to_string(),
        backend: backend_name(info.backend),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        name: info.name.clone(),
        pci_bus_id: info
            .device_pci_bus_id
            .parse::<PciBusId>()
            .ok()
            .map(|b| b.to_string()),
        limits: LimitsSummary::from(&limits),
        features: FeatureSummary {
            timestamp_query: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            shader_f64: features.contains(wgpu::Features::SHADER_F64),
            shader_f16: features.contains(wgpu::Features::SHADER_F16),
            subgroup,
            subgroup_min_size: if subgroup { info.subgroup_min_size } else { 0 },
            subgroup_max_size: if subgroup { info.subgroup_max_size } else { 0 },
            cooperative_matrix: coop_shapes(adapter, features),
            cooperative_matrix_note: (!features
                .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX))
            .then(|| {
                "the adapter offers no cooperative matrices (wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX; on Vulkan VK_KHR_cooperative_matrix)".to_string()
            }),
        },
        opencl: None,
        other_paths: Vec::new(),
    }
}

/// The cooperative-matrix shapes an adapter lists, `MxNxK A/B->C`.
fn coop_shapes(adapter: &wgpu::Adapter, features: wgpu::Features) -> Vec<String> {
    if !features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        return Vec::new();
    }
    adapter
        .cooperative_matrix_properties()
        .iter()
        .map(|p| {
            format!(
                "{}x{}x{} {:?}->{:?}",
                p.m_size, p.n_size, p.k_size, p.ab_type, p.cr_type
            )
            .to_lowercase()
        })
        .collect()
}

/// Preference order for the default choice: higher is better.
fn preference(s: &AdapterSummary) -> (u8, u8, u8) {
    let hw = u8::from(!s.software);
    let ty = match s.device_type.as_str() {
        "discrete" => 4,
        "integrated" => 3,
        "virtual" => 2,
        "other" => 1,
        _ => 0,
    };
    let backend = match s.backend.as_str() {
        "vulkan" | "metal" => 3,
        // A GPU both reach is listed on Vulkan (deduplicated by bus id); OpenCL ranks
        // above GL for what only it reaches (AMD Instinct).
        "dx12" | "opencl" => 2,
        "gl" => 1,
        _ => 0,
    };
    (hw, ty, backend)
}

/// The adapters wgpu and OpenCL find, in a stable order, with their summaries.
pub struct AdapterList {
    pub adapters: Vec<Adapter>,
    pub summaries: Vec<AdapterSummary>,
    /// What was searched, for error messages.
    pub searched: String,
    /// The backend asked for with --backend, if any.
    pub requested: Option<BackendChoice>,
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error(
        "no GPU adapter found (searched backends: {searched}).\n\
         On a Linux machine without a GPU, install Mesa's software Vulkan driver (lavapipe):\n\
         \x20   sudo apt-get update && sudo apt-get install -y mesa-vulkan-drivers\n\
         then check with `vulkaninfo --summary` (package vulkan-tools).\n\
         For OpenCL (`--backend opencl`): a GPU vendor's runtime (ROCm on AMD Instinct), or\n\
         PoCL on the CPU: sudo apt-get install -y pocl-opencl-icd ocl-icd-libopencl1 (check with `clinfo -l`)."
    )]
    NoneFound { searched: String },
    #[error(
        "--backend {backend}: {why}; this gpuvalue runs on {os}, where the backends are vulkan, gl and opencl{extra}"
    )]
    Elsewhere {
        backend: &'static str,
        why: &'static str,
        os: &'static str,
        extra: &'static str,
    },
    #[error("--adapter {index}: index out of range; there are {count} adapter(s):\n{list}")]
    IndexOutOfRange {
        index: usize,
        count: usize,
        list: String,
    },
    #[error("--adapter {name:?}: no adapter name contains this text; adapters found:\n{list}")]
    NameNotFound { name: String, list: String },
    #[error("--adapter pci:{bus}: no adapter has this PCI bus id; adapters found:\n{list}")]
    PciNotFound { bus: String, list: String },
}

pub fn instance(backend: Option<BackendChoice>) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backend.map_or(wgpu::Backends::all(), BackendChoice::to_wgpu);
    // Validation layers would distort timings; keep wgpu's own checks only.
    desc.flags = wgpu::InstanceFlags::empty();
    wgpu::Instance::new(desc)
}

/// Lists every adapter on the requested backends: wgpu's, then OpenCL's devices. The same
/// physical GPU seen through two backends (Vulkan and GL, or Vulkan and OpenCL, by PCI bus
/// id) is listed once, through its preferred backend, with the other named in `other_paths`,
/// unless the user named a backend.
pub fn enumerate(backend: Option<BackendChoice>) -> AdapterList {
    let mut pairs: Vec<(Adapter, AdapterSummary)> = Vec::new();
    if backend != Some(BackendChoice::Opencl) {
        pairs.extend(wgpu_adapters(backend));
    }
    #[cfg_attr(target_arch = "wasm32", allow(unused_mut))]
    let mut searched = searched_wgpu(backend);
    #[cfg(not(target_arch = "wasm32"))]
    if backend.is_none() || backend == Some(BackendChoice::Opencl) {
        match crate::measuring::gpu::opencl::enumerate() {
            Ok(devices) => {
                for d in devices {
                    let s = crate::measuring::gpu::opencl::device::summarize(0, &d.facts);
                    let twin = s.pci_bus_id.as_ref().and_then(|bus| {
                        pairs
                            .iter_mut()
                            .find(|(_, w)| w.pci_bus_id.as_ref() == Some(bus) && !w.software)
                    });
                    match twin {
                        Some((_, w)) if backend.is_none() => w.other_paths.push("opencl".into()),
                        _ => pairs.push((Adapter::OpenCl(Box::new(d)), s)),
                    }
                }
                searched.push("opencl".into());
            }
            Err(why) => searched.push(format!("opencl ({why})")),
        }
    }
    // Stable order: best first, then by name, so indices do not depend on driver order.
    pairs.sort_by(|a, b| {
        preference(&b.1)
            .cmp(&preference(&a.1))
            .then_with(|| a.1.name.cmp(&b.1.name))
    });
    let (adapters, mut summaries): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
    for (i, s) in summaries.iter_mut().enumerate() {
        s.index = i;
    }
    AdapterList {
        adapters,
        summaries,
        searched: searched.join(", "),
        requested: backend,
    }
}

/// wgpu's adapters on the requested backends, one per GPU unless a backend was named.
fn wgpu_adapters(backend: Option<BackendChoice>) -> Vec<(Adapter, AdapterSummary)> {
    let inst = instance(backend);
    let backends = backend.map_or(wgpu::Backends::all(), BackendChoice::to_wgpu);
    let found = pollster::block_on(inst.enumerate_adapters(backends));
    let mut pairs: Vec<(wgpu::Adapter, AdapterSummary)> = found
        .into_iter()
        .map(|a| {
            let s = summarize(0, &a);
            (a, s)
        })
        .collect();
    pairs.sort_by(|a, b| {
        preference(&b.1)
            .cmp(&preference(&a.1))
            .then_with(|| a.1.name.cmp(&b.1.name))
    });
    if backend.is_none() {
        let mut kept: Vec<(wgpu::Adapter, AdapterSummary)> = Vec::new();
        for (a, s) in pairs {
            let info = a.get_info();
            let dup = kept.iter_mut().find(|(ka, ks)| {
                let ki = ka.get_info();
                ks.name == s.name
                    && ki.device == info.device
                    && ki.device_pci_bus_id == info.device_pci_bus_id
                    && ks.backend != s.backend
            });
            match dup {
                Some((_, ks)) => ks.other_paths.push(s.backend.clone()),
                None => kept.push((a, s)),
            }
        }
        pairs = kept;
    }
    pairs
        .into_iter()
        .map(|(a, s)| (Adapter::Wgpu(a), s))
        .collect()
}

/// The wgpu backends searched, for error messages.
fn searched_wgpu(backend: Option<BackendChoice>) -> Vec<String> {
    match backend {
        Some(BackendChoice::Opencl) => Vec::new(),
        Some(b) => vec![format!("{b:?}").to_lowercase()],
        None => {
            let mut v = Vec::new();
            let enabled = wgpu::Instance::enabled_backend_features();
            for (flag, name) in [
                (wgpu::Backends::VULKAN, "vulkan"),
                (wgpu::Backends::METAL, "metal"),
                (wgpu::Backends::DX12, "dx12"),
                (wgpu::Backends::GL, "gl"),
            ] {
                if enabled.contains(flag) {
                    v.push(name.to_string());
                }
            }
            v
        }
    }
}

impl AdapterList {
    fn listing(&self) -> String {
        self.summaries
            .iter()
            .map(|s| match &s.pci_bus_id {
                Some(b) => format!("  {s} at pci:{b}"),
                None => format!("  {s} (no PCI bus id)"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Each adapter's PCI bus id, where reported.
    pub fn bus_ids(&self) -> Vec<Option<PciBusId>> {
        self.summaries
            .iter()
            .map(|s| s.pci_bus_id.as_deref().and_then(|b| b.parse().ok()))
            .collect()
    }

    /// `--adapter visible`: the granted adapters, else the default choice with a note
    /// saying why (on stderr, as every run note).
    fn visible(&self) -> Vec<usize> {
        let env = |k: &str| std::env::var(k).ok();
        match visible::map(&self.bus_ids(), &env, &mut visible::system_table) {
            visible::Visible::Mapped { indices, how } => {
                eprintln!("note: --adapter visible: {how}");
                indices
            }
            visible::Visible::Unmapped { why } => {
                eprintln!(
                    "note: --adapter visible: cannot map the granted GPU to an adapter: {why}; \
                     using the default choice ({})",
                    self.summaries[0].name.escape_debug()
                );
                vec![0]
            }
        }
    }

    /// Indices of the adapters the choice names, best first.
    pub fn select(&self, choice: &AdapterChoice) -> Result<Vec<usize>, SelectError> {
        if self.summaries.is_empty()
            && let Some(e) = self.requested.and_then(BackendChoice::elsewhere)
        {
            return Err(e);
        }
        if self.summaries.is_empty() {
            return Err(SelectError::NoneFound {
                searched: self.searched.clone(),
            });
        }
        match choice {
            // The list is sorted best-first.
            AdapterChoice::Best => Ok(vec![0]),
            AdapterChoice::All => Ok((0..self.summaries.len()).collect()),
            AdapterChoice::Visible => Ok(self.visible()),
            AdapterChoice::Pci(bus) => self
                .bus_ids()
                .iter()
                .position(|b| b.as_ref() == Some(bus))
                .map(|i| vec![i])
                .ok_or_else(|| SelectError::PciNotFound {
                    bus: bus.to_string(),
                    list: self.listing(),
                }),
            AdapterChoice::Index(i) => {
                if *i < self.summaries.len() {
                    Ok(vec![*i])
                } else {
                    Err(SelectError::IndexOutOfRange {
                        index: *i,
                        count: self.summaries.len(),
                        list: self.listing(),
                    })
                }
            }
            AdapterChoice::Name(n) => {
                let needle = n.to_lowercase();
                self.summaries
                    .iter()
                    .position(|s| s.name.to_lowercase().contains(&needle))
                    .map(|i| vec![i])
                    .ok_or_else(|| SelectError::NameNotFound {
                        name: n.clone(),
                        list: self.listing(),
                    })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_names_are_recognised() {
        use wgpu::DeviceType::*;
        assert!(is_software(Cpu, "anything", "whatever"));
        assert!(is_software(
            Other,
            "llvmpipe (LLVM 15.0.6, 256 bits)",
            "llvmpipe"
        ));
        assert!(is_software(
            IntegratedGpu,
            "SwiftShader Device (Subzero)",
            ""
        ));
        assert!(is_software(Other, "Microsoft Basic Render Driver", ""));
        assert!(!is_software(DiscreteGpu, "NVIDIA H200", "NVIDIA"));
        assert!(!is_software(
            DiscreteGpu,
            "AMD Instinct MI300X (Warpspeed)",
            ""
        ));
    }

    #[test]
    fn adapter_choice_parses() {
        assert_eq!("all".parse::<AdapterChoice>(), Ok(AdapterChoice::All));
        assert_eq!("ALL".parse::<AdapterChoice>(), Ok(AdapterChoice::All));
        assert_eq!("2".parse::<AdapterChoice>(), Ok(AdapterChoice::Index(2)));
        assert_eq!(
            "llvm".parse::<AdapterChoice>(),
            Ok(AdapterChoice::Name("llvm".into()))
        );
        assert!("  ".parse::<AdapterChoice>().is_err());
        assert_eq!(
            "visible".parse::<AdapterChoice>(),
            Ok(AdapterChoice::Visible)
        );
        assert_eq!(
            "PCI:00000000:3B:00.0".parse::<AdapterChoice>(),
            Ok(AdapterChoice::Pci("0000:3b:00.0".parse().unwrap()))
        );
        assert!("pci:3b".parse::<AdapterChoice>().is_err());
    }

    #[test]
    fn pci_choice_picks_the_adapter_at_that_bus_and_lists_bus_ids_otherwise() {
        let r = crate::results::ResultsFile::parse(include_str!(
            "../../../tests/fixtures/results-lavapipe.json"
        ))
        .unwrap();
        let gpu = |index, bus: Option<&str>| AdapterSummary {
            index,
            pci_bus_id: bus.map(String::from),
            ..r.adapter.clone()
        };
        let list = AdapterList {
            adapters: Vec::new(),
            summaries: vec![
                gpu(0, Some("0000:1b:00.0")),
                gpu(1, Some("0000:3b:00.0")),
                gpu(2, None),
            ],
            searched: "vulkan".into(),
            requested: None,
        };
        let pick = |s: &str| list.select(&s.parse().unwrap());
        assert_eq!(pick("pci:00000000:3B:00.0").unwrap(), vec![1]);
        let e = pick("pci:0000:86:00.0").unwrap_err().to_string();
        assert!(
            e.contains("pci:0000:86:00.0") && e.contains("at pci:0000:1b:00.0"),
            "{e}"
        );
        assert!(e.contains("(no PCI bus id)"), "{e}");
    }

    #[test]
    fn a_backend_of_another_platform_says_so_instead_of_advising_lavapipe() {
        let list = AdapterList {
            adapters: Vec::new(),
            summaries: Vec::new(),
            searched: "metal".into(),
            requested: Some(BackendChoice::Metal),
        };
        let e = list.select(&AdapterChoice::Best).unwrap_err().to_string();
        if cfg!(target_os = "linux") {
            assert!(e.contains("Metal exists only on Apple's systems"), "{e}");
            assert!(
                e.contains("runs on Linux") && !e.contains("lavapipe"),
                "{e}"
            );
        }
    }
}
