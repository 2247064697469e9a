//! Typed figure keys: what a probe result measures, as a key that probes produce and that
//! scenarios, rank, reports and compare consume. Display names are for people only; code
//! never finds a figure by its display string. Part of the data model: imports nothing.

use serde::{Deserialize, Serialize};

/// One kind of measured figure. Stored in each probe result as `figure` (schema 3); older
/// results files are given theirs from the probe family and name when read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureKey {
    /// FP32 multiply-add peak (independent chains, nothing loaded), GFLOPS.
    PeakF32,
    /// Tiled FP32 matrix multiply (one result per size), GFLOPS.
    MatmulF32,
    /// FP16 matrix multiply with FP32 accumulation, GFLOPS.
    MatmulF16,
    /// Native f64 matrix multiply (`SHADER_F64`), GFLOPS.
    MatmulF64,
    /// Emulated double-float (df64) matrix multiply, GFLOPS.
    MatmulDf64,
    /// Int8 matrix multiply with 32-bit sums (packed dot products), GOPS.
    MatmulInt8,
    /// FP16 matrix multiply with f32 sums on the matrix engines (cooperative matrices).
    MatmulCoop,
    /// The faster double path at the largest common size (a summary, not a measurement).
    DoubleBest,
    StreamCopy,
    StreamScale,
    StreamAdd,
    StreamTriad,
    /// Dot-product reduction over two arrays, GB/s.
    StreamDot,
    /// Host-to-device copy, GB/s.
    TransferToDevice,
    /// Device-to-host copy, GB/s.
    TransferToHost,
    /// One dispatch submitted and waited for, microseconds.
    LatencyRoundTrip,
    /// Per-dispatch cost inside a batch, microseconds.
    LatencyDispatch,
    /// FP64 matrix multiply on the matrix engines (AMD CDNA's FP64 MFMA through OpenCL),
    /// GFLOPS.
    MatmulF64Matrix,
    /// From enqueue to the kernel's start, one dispatch at a time, by the runtime's own
    /// profiling timestamps (what clpeak calls kernel launch latency); OpenCL only, us.
    LatencyLaunch,
    /// Read-only bandwidth at one working-set size (results carry `bytes`), GB/s.
    HierarchyRead,
    /// Dependent-load latency at one working-set size (results carry `bytes`), ns.
    HierarchyLatency,
}

/// What a figure key says about its result: family, unit, direction.
pub struct FigureInfo {
    /// The probe family recorded in the results file (`probe` field).
    pub family: &'static str,
    pub unit: &'static str,
    /// True for throughputs (larger is better), false for latencies.
    pub higher_is_better: bool,
    /// The display name (fixed names only; sized results add their size).
    pub label: &'static str,
}

impl FigureKey {
    pub const ALL: [FigureKey; 21] = [
        FigureKey::PeakF32,
        FigureKey::MatmulF32,
        FigureKey::MatmulInt8,
        FigureKey::MatmulCoop,
        FigureKey::MatmulF16,
        FigureKey::MatmulF64,
        FigureKey::MatmulDf64,
        FigureKey::DoubleBest,
        FigureKey::StreamCopy,
        FigureKey::StreamScale,
        FigureKey::StreamAdd,
        FigureKey::StreamTriad,
        FigureKey::StreamDot,
        FigureKey::TransferToDevice,
        FigureKey::TransferToHost,
        FigureKey::LatencyRoundTrip,
        FigureKey::LatencyDispatch,
        FigureKey::LatencyLaunch,
        FigureKey::MatmulF64Matrix,
        FigureKey::HierarchyRead,
        FigureKey::HierarchyLatency,
    ];

    pub const fn info(self) -> FigureInfo {
        use FigureKey::*;
        let (family, unit, higher_is_better, label) = match self {
            PeakF32 => ("peak_f32", "GFLOPS", true, "peak_f32 multiply-add"),
            MatmulF32 => ("matmul_f32", "GFLOPS", true, "matmul_f32"),
            MatmulF16 => ("matmul_f16", "GFLOPS", true, "matmul_f16"),
            MatmulF64 => ("matmul_f64", "GFLOPS", true, "matmul_f64"),
            MatmulF64Matrix => ("matmul_f64_matrix", "GFLOPS", true, "matmul_f64_matrix"),
            MatmulDf64 => ("matmul_df64", "GFLOPS", true, "matmul_df64"),
            MatmulInt8 => ("matmul_int8", "GOPS", true, "matmul_int8"),
            MatmulCoop => ("matmul_coop", "GFLOPS", true, "matmul_coop"),
            DoubleBest => (
                "double_precision",
                "GFLOPS",
                true,
                "double precision: best path",
            ),
            StreamCopy => ("stream", "GB/s", true, "stream copy"),
            StreamScale => ("stream", "GB/s", true, "stream scale"),
            StreamAdd => ("stream", "GB/s", true, "stream add"),
            StreamTriad => ("stream", "GB/s", true, "stream triad"),
            StreamDot => ("stream", "GB/s", true, "stream dot"),
            TransferToDevice => ("transfer", "GB/s", true, "transfer host->device"),
            TransferToHost => ("transfer", "GB/s", true, "transfer device->host"),
            LatencyRoundTrip => ("latency", "us", false, "latency dispatch round trip"),
            LatencyDispatch => ("latency", "us", false, "latency per dispatch in a batch"),
            LatencyLaunch => (
                "latency_launch",
                "us",
                false,
                "latency from enqueue to start",
            ),
            HierarchyRead => ("hierarchy", "GB/s", true, "hierarchy read"),
            HierarchyLatency => ("hierarchy", "ns", false, "hierarchy latency"),
        };
        FigureInfo {
            family,
            unit,
            higher_is_better,
            label,
        }
    }

    /// True for matrix multiplies whose results carry their size (`m`, `n`, `k` params).
    pub fn is_sized(self) -> bool {
        matches!(
            self,
            FigureKey::MatmulF32
                | FigureKey::MatmulF16
                | FigureKey::MatmulF64
                | FigureKey::MatmulDf64
                | FigureKey::MatmulInt8
                | FigureKey::MatmulCoop
                | FigureKey::MatmulF64Matrix
        )
    }

    /// Bytes per input and per output element of a matrix multiply (for its arithmetic
    /// intensity); None for other figures.
    pub fn element_bytes(self) -> Option<(f64, f64)> {
        match self {
            FigureKey::MatmulF32 => Some((4.0, 4.0)),
            FigureKey::MatmulF64 | FigureKey::MatmulDf64 | FigureKey::MatmulF64Matrix => {
                Some((8.0, 8.0))
            }
            FigureKey::MatmulF16 | FigureKey::MatmulCoop => Some((2.0, 4.0)),
            _ => None,
        }
    }

    /// The key of a result written before figure keys were stored (schema 1 and 2): from
    /// its family and display name, the only place such strings are read.
    pub fn from_legacy(family: &str, name: &str) -> Option<FigureKey> {
        FigureKey::ALL.into_iter().find(|k| {
            let i = k.info();
            i.family == family && (k.is_sized() || i.label == name)
        })
    }
}

impl std::fmt::Display for FigureKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.info().label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_found_again_from_its_legacy_strings() {
        for k in FigureKey::ALL {
            let i = k.info();
            let name = if k.is_sized() {
                format!("{} 256x256x256", i.label)
            } else {
                i.label.to_string()
            };
            assert_eq!(FigureKey::from_legacy(i.family, &name), Some(k), "{k:?}");
        }
        assert_eq!(FigureKey::from_legacy("stream", "stream quadruple"), None);
        assert_eq!(FigureKey::from_legacy("matmul", "matmul probe"), None);
    }

    #[test]
    fn keys_serialize_as_snake_case_ids() {
        let s = serde_json::to_string(&FigureKey::TransferToDevice).unwrap();
        assert_eq!(s, "\"transfer_to_device\"");
        let labels: std::collections::HashSet<_> =
            FigureKey::ALL.iter().map(|k| k.info().label).collect();
        assert_eq!(labels.len(), FigureKey::ALL.len(), "labels are unique");
    }
}
