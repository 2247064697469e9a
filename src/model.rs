//! The plain records a results file stores beside its figures: what adapter ran, how each
//! figure was timed, which other runs were seen. Part of the data model: it imports nothing
//! of the crate above `stats`, so the GPU layer, the probes and the reports all build on it.

use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Limits that matter to the probes (the adapter's own, which gpuvalue requests in full).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimitsSummary {
    pub max_buffer_size: u64,
    pub max_storage_buffer_binding_size: u64,
    pub max_compute_workgroup_storage_size: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroup_size_x: u32,
    pub max_compute_workgroup_size_y: u32,
    pub max_compute_workgroups_per_dimension: u32,
    pub min_storage_buffer_offset_alignment: u32,
}

/// Features that matter to the probes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureSummary {
    pub timestamp_query: bool,
    pub shader_f64: bool,
    pub shader_f16: bool,
    pub subgroup: bool,
    /// Subgroup size range the adapter reports (meaningful when `subgroup` is true).
    pub subgroup_min_size: u32,
    pub subgroup_max_size: u32,
    /// Cooperative-matrix (tensor / matrix engine) shapes the adapter offers, as
    /// `MxNxK A/B->C` (wgpu's `cooperative_matrix_properties`); what the `coop` probe needs.
    #[serde(default)]
    pub cooperative_matrix: Vec<String>,
    /// Why `cooperative_matrix` is empty, where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooperative_matrix_note: Option<String>,
}

/// One adapter, as `gpuvalue devices` shows it and as the results file records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdapterSummary {
    /// Position in the list of `gpuvalue devices` (for `--adapter INDEX`).
    pub index: usize,
    pub name: String,
    /// PCI vendor id (0 where the backend does not report one).
    pub vendor_id: u32,
    pub vendor: String,
    pub device_id: u32,
    /// `discrete`, `integrated`, `virtual`, `cpu` or `other`.
    pub device_type: String,
    /// `vulkan`, `metal`, `dx12`, `gl`, `webgpu` or `opencl`.
    pub backend: String,
    pub driver: String,
    pub driver_info: String,
    /// True for CPU rasterisers (lavapipe/llvmpipe, SwiftShader, WARP) and device type CPU.
    pub software: bool,
    /// PCI bus id, normalised (`0000:3b:00.0`), where the backend reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    pub limits: LimitsSummary,
    pub features: FeatureSummary,
    /// What an OpenCL device reports beyond the common fields (backend `opencl` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opencl: Option<OpenClInfo>,
    /// Other backends that reach the same GPU (same PCI bus id), listed once on this one:
    /// `--backend NAME` picks another path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_paths: Vec<String>,
}

/// An OpenCL device's own facts, as `gpuvalue devices` shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenClInfo {
    /// Platform name and version (`AMD Accelerated Parallel Processing (OpenCL 2.1 ...)`).
    pub platform: String,
    /// `CL_DEVICE_NAME`: ROCm's gfx id (`gfx942:sramecc+:xnack-`), PoCL's `pthread-...`.
    pub device_name: String,
    /// `CL_DEVICE_BOARD_NAME_AMD`: the product name, used as the adapter name where given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_name: Option<String>,
    pub global_mem_bytes: u64,
    pub compute_units: u32,
    pub max_clock_mhz: u32,
    /// `cl_khr_integer_dot_product` (packed int8 dot products in hardware).
    pub integer_dot_product: bool,
    /// The extensions that matter to the probes, of those the device lists.
    pub extensions: Vec<String>,
}

impl OpenClInfo {
    /// The gfx id in a ROCm `CL_DEVICE_NAME` (`gfx942:sramecc+:xnack-` -> `gfx942`); another
    /// platform's device name otherwise.
    pub fn gfx_id(&self) -> &str {
        self.device_name.split(':').next().unwrap_or("").trim()
    }

    /// The matrix (MFMA) instructions of an AMD CDNA device, by input type (AMD's CDNA 1-4
    /// ISA guides); empty for any other device.
    pub fn matrix_types(&self) -> &'static [&'static str] {
        match self.gfx_id() {
            "gfx908" => &["FP32", "FP16", "BF16", "INT8"],
            "gfx90a" => &["FP64", "FP32", "FP16", "BF16", "INT8"],
            "gfx940" | "gfx941" | "gfx942" => {
                &["FP64", "FP32", "XF32", "FP16", "BF16", "FP8/BF8", "INT8"]
            }
            "gfx950" => &[
                "FP64",
                "FP32",
                "FP16",
                "BF16",
                "FP8/BF8",
                "FP6/FP4 (scaled)",
                "INT8",
            ],
            _ => &[],
        }
    }
}

impl AdapterSummary {
    /// A short label for tables: name, backend and a plain software warning.
    pub fn label(&self) -> String {
        let mut s = format!("{} ({})", self.name, self.backend);
        if self.software {
            s.push_str(" [software adapter]");
        }
        s
    }
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {}", self.index, self.label())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingMethod {
    /// Timestamp queries written at the start and end of the compute pass.
    GpuTimestamps,
    /// Host clock from submit until the device reports the work done.
    WallClock,
    /// OpenCL profiling events (`CL_QUEUE_PROFILING_ENABLE`): the first command's start to
    /// the last one's end, cross-checked against the wall clock.
    ProfilingEvents,
}

impl std::fmt::Display for TimingMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimingMethod::GpuTimestamps => "gpu timestamps",
            TimingMethod::WallClock => "wall clock",
            TimingMethod::ProfilingEvents => "opencl profiling events",
        })
    }
}

/// How a figure was timed, recorded beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingInfo {
    pub method: TimingMethod,
    /// Iterations of the kernel (or transfer) inside one timed sample.
    pub iters_per_sample: u32,
    /// Uncounted runs before the samples (warm-up and batch calibration).
    pub warmup_runs: u32,
    pub warmup_s: f64,
    /// Seconds per single iteration over the counted samples.
    pub time_per_iter_s: Summary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The counted samples themselves (seconds per iteration), while the run is in memory:
    /// a figure's own mean and standard deviation come from them (a rate is not the
    /// reciprocal of the mean time, and its spread is not zero).
    #[serde(skip)]
    pub samples_s: Vec<f64>,
}

impl TimingInfo {
    /// The summary of a figure computed from each sample's seconds per iteration (a rate,
    /// a latency): median, min, max, mean and standard deviation of the figure's own values.
    /// Without the samples (a timing read back from a file), mapped from the time's summary.
    pub fn figure(&self, f: impl Fn(f64) -> f64) -> Summary {
        let values: Vec<f64> = self.samples_s.iter().map(|t| f(*t)).collect();
        Summary::of(&values).unwrap_or_else(|| {
            let t = &self.time_per_iter_s;
            self.time_per_iter_s.map(&f, f(t.max) < f(t.min))
        })
    }
}

/// Another run seen while this one was measuring.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtherRun {
    pub pid: u32,
    /// When that run started (RFC 3339).
    pub started: String,
    /// Its results file.
    pub out: String,
    pub adapter: String,
}

/// The cloud instance a run was made on, as `--instance provider:type[:region]` names it
/// (checked against the catalog and spelled as the catalog does when recorded).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceRef {
    pub provider: String,
    pub instance_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
}

impl std::str::FromStr for InstanceRef {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.trim().split(':').map(str::trim).collect();
        match parts.as_slice() {
            [p, t] | [p, t, ""] if !p.is_empty() && !t.is_empty() => Ok(InstanceRef {
                provider: p.to_string(),
                instance_type: t.to_string(),
                region: None,
            }),
            [p, t, r] if !p.is_empty() && !t.is_empty() => Ok(InstanceRef {
                provider: p.to_string(),
                instance_type: t.to_string(),
                region: Some(r.to_string()),
            }),
            _ => Err(format!(
                "`{}`: expected provider:type[:region], e.g. aws:p5.48xlarge:us-east-1",
                s.escape_debug()
            )),
        }
    }
}

impl fmt::Display for InstanceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.instance_type)?;
        if let Some(r) = &self.region {
            write!(f, ":{r}")?;
        }
        Ok(())
    }
}

/// The vendor of a PCI vendor id, for tables.
pub fn vendor_name(id: u32) -> &'static str {
    match id {
        0x10de => "NVIDIA",
        0x1002 | 0x1022 => "AMD",
        0x8086 => "Intel",
        0x106b => "Apple",
        0x13b5 => "ARM",
        0x5143 => "Qualcomm",
        0x1414 => "Microsoft",
        0x10005 => "Mesa",
        0x1ae0 => "Google",
        _ => "unknown",
    }
}

/// Whether a device-timed span is trustworthy beside the wall clock around the same work:
/// not longer than it, nor far shorter on a long run (submit + wait costs well under a
/// millisecond). The one rule for wgpu's timestamps and OpenCL's profiling events.
pub fn timestamps_agree(device_s: f64, wall_s: f64) -> bool {
    device_s > 0.0 && device_s <= wall_s * 1.5 + 1e-3 && device_s >= 0.8 * wall_s - 2e-3
}

#[cfg(test)]
mod tests {
    use super::timestamps_agree;

    #[test]
    fn timestamps_agree_within_the_wall_clock_and_not_far_below_it() {
        assert!(timestamps_agree(0.010, 0.0102));
        // Submit and wake-up cost: a little shorter is fine, on short and long runs.
        assert!(timestamps_agree(0.0005, 0.0020));
        assert!(timestamps_agree(0.085, 0.100));
        // Longer than the wall clock (beyond slack), zero, or far shorter on a long run: no.
        assert!(!timestamps_agree(0.200, 0.100));
        assert!(!timestamps_agree(0.0, 0.100));
        assert!(!timestamps_agree(0.00009, 0.086));
        assert!(!timestamps_agree(0.050, 0.100));
    }
}
