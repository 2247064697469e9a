//! OpenCL devices as plain data: what the runtime reports (`Facts`, read once), and the
//! adapter summary every output uses (`summarize`, pure, so it is tested with made-up
//! devices: an MI300X under ROCm, an H200 under NVIDIA's driver, PoCL).

use crate::measuring::gpu::visible::PciBusId;
use crate::model::{AdapterSummary, FeatureSummary, LimitsSummary, OpenClInfo, vendor_name};
use opencl3::device::{
    CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, Device,
};

/// One device the ICD loader offers.
#[derive(Clone, Debug)]
pub struct ClDevice {
    pub device: Device,
    pub facts: Facts,
}

impl ClDevice {
    /// The OpenCL version the device reports (`OpenCL 3.0 PoCL ...` gives 3).
    pub fn version_major(&self) -> u32 {
        self.facts
            .version
            .strip_prefix("OpenCL ")
            .and_then(|v| v.split('.').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
    }
}

/// What the runtime says of a device, read once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    pub platform: String,
    pub platform_version: String,
    /// `CL_DEVICE_NAME`: the gfx id on ROCm (`gfx942:sramecc+:xnack-`).
    pub name: String,
    /// `CL_DEVICE_BOARD_NAME_AMD` (the product, "AMD Instinct MI300X") where offered.
    pub board_name: Option<String>,
    pub vendor: String,
    pub vendor_id: u32,
    /// `gpu`, `cpu`, `accelerator` or `other`.
    pub kind: &'static str,
    pub host_unified_memory: bool,
    pub driver_version: String,
    pub version: String,
    pub c_version: String,
    pub extensions: Vec<String>,
    pub global_mem_bytes: u64,
    pub max_alloc_bytes: u64,
    pub local_mem_bytes: u64,
    pub compute_units: u32,
    pub max_clock_mhz: u32,
    pub max_work_group_size: usize,
    pub max_work_item_sizes: Vec<usize>,
    pub base_addr_align_bits: u32,
    pub pci_bus_id: Option<PciBusId>,
}

impl Facts {
    pub fn has(&self, ext: &str) -> bool {
        self.extensions.iter().any(|e| e == ext)
    }
}

/// Extensions the probes care about, as `devices` lists them.
const EXTENSIONS_OF_NOTE: &[&str] = &[
    "cl_khr_fp64",
    "cl_khr_fp16",
    "cl_khr_integer_dot_product",
    "cl_khr_subgroups",
    "cl_intel_subgroups",
    "cl_khr_pci_bus_info",
    "cl_amd_device_attribute_query",
    "cl_nv_device_attribute_query",
    "cl_amd_copy_buffer_p2p",
];

/// The summary every output and results file uses. A CPU device (PoCL) is a software
/// adapter: its figures describe the CPU.
pub fn summarize(index: usize, f: &Facts) -> AdapterSummary {
    let name = f
        .board_name
        .clone()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| f.name.clone());
    // A CPU device's vendor id is the runtime's choice (PoCL reports Intel's on an AMD
    // EPYC): the CPU vendor string says who made it.
    let vendor = match (f.kind, vendor_name(f.vendor_id)) {
        ("cpu", _) if f.vendor.contains("AMD") => "AMD".to_string(),
        ("cpu", _) if f.vendor.contains("Intel") => "Intel".to_string(),
        ("cpu", _) | (_, "unknown") => f.vendor.clone(),
        (_, v) => v.to_string(),
    };
    let device_type = match f.kind {
        "gpu" if f.host_unified_memory => "integrated",
        "gpu" => "discrete",
        "cpu" => "cpu",
        _ => "other",
    };
    let subgroup = f.has("cl_khr_subgroups") || f.has("cl_intel_subgroups");
    AdapterSummary {
        index,
        name,
        vendor_id: f.vendor_id,
        vendor,
        device_id: 0,
        device_type: device_type.into(),
        backend: "opencl".into(),
        driver: format!("{} {}", f.platform, f.driver_version),
        driver_info: format!("{} ({})", f.version, f.c_version),
        software: f.kind == "cpu",
        pci_bus_id: f.pci_bus_id.map(|b| b.to_string()),
        limits: LimitsSummary {
            max_buffer_size: f.max_alloc_bytes,
            max_storage_buffer_binding_size: f.max_alloc_bytes,
            max_compute_workgroup_storage_size: f.local_mem_bytes.min(u64::from(u32::MAX)) as u32,
            max_compute_invocations_per_workgroup: f.max_work_group_size as u32,
            max_compute_workgroup_size_x: f.max_work_item_sizes.first().copied().unwrap_or(1)
                as u32,
            max_compute_workgroup_size_y: f.max_work_item_sizes.get(1).copied().unwrap_or(1) as u32,
            max_compute_workgroups_per_dimension: u32::MAX,
            min_storage_buffer_offset_alignment: (f.base_addr_align_bits / 8).max(1),
        },
        features: FeatureSummary {
            // Profiling events: the OpenCL counterpart of timestamp queries.
            timestamp_query: true,
            shader_f64: f.has("cl_khr_fp64"),
            shader_f16: f.has("cl_khr_fp16"),
            subgroup,
            subgroup_min_size: 0,
            subgroup_max_size: 0,
            cooperative_matrix: Vec::new(),
            cooperative_matrix_note: Some(
                "OpenCL has no portable cooperative-matrix API; the coop probe is Vulkan's".into(),
            ),
        },
        opencl: Some(OpenClInfo {
            platform: format!("{} ({})", f.platform, f.platform_version),
            device_name: f.name.clone(),
            board_name: f.board_name.clone().filter(|b| !b.trim().is_empty()),
            global_mem_bytes: f.global_mem_bytes,
            compute_units: f.compute_units,
            max_clock_mhz: f.max_clock_mhz,
            integer_dot_product: f.has("cl_khr_integer_dot_product"),
            extensions: EXTENSIONS_OF_NOTE
                .iter()
                .filter(|e| f.has(e))
                .map(|e| e.to_string())
                .collect(),
        }),
        other_paths: Vec::new(),
    }
}

fn read(device: Device, platform: &opencl3::platform::Platform) -> Facts {
    let s = |r: opencl3::Result<String>| {
        r.unwrap_or_default()
            .trim_end_matches('\0')
            .trim()
            .to_string()
    };
    let extensions: Vec<String> = s(device.extensions())
        .split_whitespace()
        .map(String::from)
        .collect();
    let has = |e: &str| extensions.iter().any(|x| x == e);
    let ty = device.dev_type().unwrap_or(0);
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        "gpu"
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        "cpu"
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        "accelerator"
    } else {
        "other"
    };
    let board_name = has("cl_amd_device_attribute_query")
        .then(|| s(device.board_name_amd()))
        .filter(|b| !b.is_empty());
    Facts {
        platform: s(platform.name()),
        platform_version: s(platform.version()),
        name: s(device.name()),
        board_name,
        vendor: s(device.vendor()),
        vendor_id: device.vendor_id().unwrap_or(0),
        kind,
        host_unified_memory: device.host_unified_memory().unwrap_or(false),
        driver_version: s(device.driver_version()),
        version: s(device.version()),
        c_version: s(device.opencl_c_version()),
        global_mem_bytes: device.global_mem_size().unwrap_or(0),
        max_alloc_bytes: device.max_mem_alloc_size().unwrap_or(0),
        local_mem_bytes: device.local_mem_size().unwrap_or(0),
        compute_units: device.max_compute_units().unwrap_or(0),
        max_clock_mhz: device.max_clock_frequency().unwrap_or(0),
        max_work_group_size: device.max_work_group_size().unwrap_or(1),
        max_work_item_sizes: device.max_work_item_sizes().unwrap_or_default(),
        base_addr_align_bits: device.mem_base_addr_align().unwrap_or(1024),
        pci_bus_id: pci_bus_id(&device, &has),
        extensions,
    }
}

/// The PCI address: `cl_khr_pci_bus_info`, else AMD's topology query, else NVIDIA's bus and
/// slot (slot = device << 3 | function).
fn pci_bus_id(device: &Device, has: &dyn Fn(&str) -> bool) -> Option<PciBusId> {
    if has("cl_khr_pci_bus_info")
        && let Ok(b) = device.pcibusinfokhr_intel()
    {
        return Some(PciBusId {
            domain: b.pci_domain,
            bus: b.pci_bus as u8,
            device: b.pci_device as u8,
            function: b.pci_function as u8,
        });
    }
    if has("cl_amd_device_attribute_query")
        && let Ok(t) = device.topology_amd()
    {
        return Some(PciBusId {
            domain: 0,
            bus: t.bus,
            device: t.device,
            function: t.function,
        });
    }
    if has("cl_nv_device_attribute_query")
        && let (Ok(bus), Ok(slot)) = (device.pci_bus_id_nv(), device.pci_slot_id_nv())
    {
        return Some(PciBusId {
            domain: 0,
            bus: bus as u8,
            device: (slot >> 3) as u8,
            function: (slot & 7) as u8,
        });
    }
    None
}

/// Every OpenCL device, or why there are none (no ICD loader, no platform). Asked once per
/// process: PoCL's first platform query is not safe from several threads at once (threads of
/// one test binary saw an empty list), and the devices do not change while it runs.
pub fn enumerate() -> Result<Vec<ClDevice>, String> {
    static DEVICES: std::sync::OnceLock<Result<Vec<ClDevice>, String>> = std::sync::OnceLock::new();
    DEVICES.get_or_init(enumerate_now).clone()
}

fn enumerate_now() -> Result<Vec<ClDevice>, String> {
    if !cl3::is_opencl_runtime_available() {
        return Err("no OpenCL ICD loader (libOpenCL.so.1) on this machine".into());
    }
    let platforms =
        opencl3::platform::get_platforms().map_err(|e| format!("OpenCL: no platform ({e})"))?;
    let mut out = Vec::new();
    for p in &platforms {
        let Ok(ids) = p.get_devices(CL_DEVICE_TYPE_ALL) else {
            continue;
        };
        for id in ids {
            let device = Device::new(id);
            if !device.available().unwrap_or(false) {
                continue;
            }
            out.push(ClDevice {
                facts: read(device, p),
                device,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// ROCm 6 on an MI300X, as clinfo reports it (openmm/openmm#3940, hashcat#4281).
    pub fn mi300x() -> Facts {
        Facts {
            platform: "AMD Accelerated Parallel Processing".into(),
            platform_version: "OpenCL 2.1 AMD-APP (3614.0)".into(),
            name: "gfx942:sramecc+:xnack-".into(),
            board_name: Some("AMD Instinct MI300X".into()),
            vendor: "Advanced Micro Devices, Inc.".into(),
            vendor_id: 0x1002,
            kind: "gpu",
            driver_version: "3614.0 (HSA1.1,LC)".into(),
            version: "OpenCL 2.0".into(),
            c_version: "OpenCL C 2.0".into(),
            extensions: vec![
                "cl_khr_fp64".into(),
                "cl_khr_fp16".into(),
                "cl_amd_device_attribute_query".into(),
            ],
            global_mem_bytes: 192 << 30,
            max_alloc_bytes: 163 << 30,
            local_mem_bytes: 64 << 10,
            compute_units: 304,
            max_clock_mhz: 2100,
            max_work_group_size: 256,
            max_work_item_sizes: vec![1024, 1024, 1024],
            base_addr_align_bits: 1024,
            pci_bus_id: Some("0000:0c:00.0".parse().unwrap()),
            ..Default::default()
        }
    }

    #[test]
    fn rocm_devices_are_named_by_their_board_and_keep_the_gfx_id() {
        let s = summarize(0, &mi300x());
        assert_eq!(s.name, "AMD Instinct MI300X");
        assert_eq!(s.backend, "opencl");
        assert_eq!(s.vendor, "AMD");
        assert_eq!(s.device_type, "discrete");
        assert!(!s.software);
        assert!(s.features.shader_f64 && s.features.shader_f16);
        let cl = s.opencl.as_ref().unwrap();
        assert_eq!(cl.device_name, "gfx942:sramecc+:xnack-");
        assert_eq!(s.pci_bus_id.as_deref(), Some("0000:0c:00.0"));
        assert_eq!(cl.compute_units, 304);
        assert_eq!(cl.gfx_id(), "gfx942");
        assert!(
            cl.matrix_types().contains(&"FP8/BF8"),
            "{:?}",
            cl.matrix_types()
        );
        // `devices` shows the matrix instructions beside the gfx id.
        let table = crate::report::table::devices(std::slice::from_ref(&s));
        assert!(
            table.contains("MFMA FP64") && table.contains("FP8/BF8"),
            "{table}"
        );
    }

    #[test]
    fn a_cpu_device_is_a_software_adapter_named_as_reported() {
        let f = Facts {
            platform: "Portable Computing Language".into(),
            name: "pthread-skylake-avx512-AMD EPYC 7B13".into(),
            vendor: "AuthenticAMD".into(),
            vendor_id: 0x1022,
            kind: "cpu",
            ..Default::default()
        };
        let s = summarize(3, &f);
        assert!(s.software);
        assert_eq!(s.device_type, "cpu");
        assert_eq!(s.vendor, "AMD");
        assert_eq!(s.index, 3);
        assert!(s.label().contains("[software adapter]"), "{}", s.label());
        assert_eq!(s.pci_bus_id, None);
    }

    /// PoCL on an AMD EPYC reports Intel's vendor id: `devices` says the
    /// id is the runtime's instead of printing "AMD 8086:0000".
    #[test]
    fn a_runtime_vendor_id_that_names_another_vendor_is_said_to_be_the_runtimes() {
        let f = Facts {
            platform: "Portable Computing Language".into(),
            name: "pthread-skylake-avx512-AMD EPYC".into(),
            vendor: "AuthenticAMD".into(),
            vendor_id: 0x8086,
            kind: "cpu",
            ..Default::default()
        };
        let cell = crate::report::table::vendor_cell(&summarize(1, &f));
        assert_eq!(cell, "AMD (the runtime reports vendor id 8086)");
        let f = Facts {
            vendor_id: 0x1002,
            kind: "gpu",
            ..Default::default()
        };
        assert_eq!(
            crate::report::table::vendor_cell(&summarize(0, &f)),
            "AMD 1002:0000"
        );
    }

    /// `--adapter visible` on OpenCL: ROCm's runtime applies `ROCR_VISIBLE_DEVICES` itself,
    /// so the OpenCL list holds only the granted GPUs, renumbered from 0. gpuvalue maps the
    /// grant through the KFD topology to bus ids, as on Vulkan, and finds the granted GPU by
    /// its `CL_DEVICE_TOPOLOGY_AMD` bus id whatever the runtime's own numbering.
    #[test]
    fn visible_maps_a_rocm_grant_to_the_opencl_device_by_bus_id() {
        use crate::measuring::gpu::visible::{GpuSlot, Vendor, Visible, map};
        let buses = [
            "0000:0c:00.0",
            "0000:22:00.0",
            "0000:38:00.0",
            "0000:5c:00.0",
        ];
        let kfd = |_: Vendor| -> Result<Vec<GpuSlot>, String> {
            Ok(buses
                .iter()
                .enumerate()
                .map(|(i, b)| GpuSlot {
                    ordinal: i as u32,
                    uuid: None,
                    bus: b.parse().unwrap(),
                    name: "AMD Instinct MI300X".into(),
                })
                .collect())
        };
        // The runtime shows GPUs 1 and 3 of the node (ROCR_VISIBLE_DEVICES=1,3), as devices
        // 0 and 1; HIP_VISIBLE_DEVICES=1 picks the second of those: node GPU 3.
        let listed: Vec<_> = [buses[1], buses[3]]
            .iter()
            .map(|b| {
                let f = Facts {
                    pci_bus_id: Some(b.parse().unwrap()),
                    ..mi300x()
                };
                summarize(0, &f).pci_bus_id.map(|s| s.parse().unwrap())
            })
            .collect();
        let env = |k: &str| match k {
            "ROCR_VISIBLE_DEVICES" => Some("1,3".to_string()),
            "HIP_VISIBLE_DEVICES" => Some("1".to_string()),
            _ => None,
        };
        match map(&listed, &env, &mut { kfd }) {
            Visible::Mapped { indices, .. } => assert_eq!(indices, vec![1]),
            other => panic!("{other:?}"),
        }
        // A device without a bus id cannot be mapped: the default choice, with the reason.
        let unknown = vec![None, None];
        assert!(matches!(
            map(&unknown, &env, &mut { kfd }),
            Visible::Unmapped { .. }
        ));
    }

    #[test]
    fn an_empty_board_name_falls_back_to_the_device_name() {
        let f = Facts {
            board_name: Some("  ".into()),
            ..mi300x()
        };
        assert_eq!(summarize(0, &f).name, "gfx942:sramecc+:xnack-");
    }
}
