//! FP32 matrix multiply: kernel configurations, the autotuner, and the measured run.
//!
//! C = A * B, row-major, any M, N, K: the host zero-pads each matrix to the chosen tile's
//! multiples, so the kernels need no bounds checks (their indexing is in range by
//! construction) and may be built without runtime checks. GFLOPS count only the useful
//! 2*M*N*K operations, never the padding. The method (sizes, tuning, measuring,
//! validation, the figure) is in `method.rs` once, over `MatmulExecutor`; `on_wgpu` and
//! `on_opencl` hold the kernels and how they are dispatched.

use super::Ctx;
use super::measure::{Plan, TimingInfo};
use crate::figure::FigureKey;
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks};
use crate::measuring::gpu::wgsl::{KernelSource, WgslSource};
use crate::measuring::reference::{self, Dims, MatmulCheck, Rng, View};
use crate::results::{ProbeResult, Status, Validation};
use crate::stats::Summary;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

mod config;
mod inputs;
mod method;
#[cfg(test)]
mod method_tests;
mod on_wgpu;
pub use config::*;
use inputs::*;
pub use method::{
    MatmulExecutor, MatmulRun, Policy, Trial, autotune, flops, gflops, run_config, run_on,
};
pub use on_wgpu::{OnWgpu, PipelineCache, Prepared, check_fits, check_grid, padded};

const ROWS_WGSL: &str = include_str!("../../../../shaders/matmul_rows.wgsl");
const TILED_WGSL: &str = include_str!("../../../../shaders/matmul_tiled.wgsl");
const SUBGROUP_WGSL: &str = include_str!("../../../../shaders/matmul_subgroup.wgsl");
const PACK_WGSL: &str = include_str!("../../../../shaders/pack_panels.wgsl");
const PACK_TEXTURE_WGSL: &str = include_str!("../../../../shaders/pack_texture.wgsl");

/// Relative Frobenius error above which an f32 product is wrong (random inputs in [-1, 1]
/// give ~1e-7 to 1e-6 for K up to several thousand).
pub const F32_TOLERANCE: f64 = 1e-4;

/// Options that only tests use.
#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    /// Overwrite one element of C after the timed runs, before validation.
    pub corrupt_output: bool,
}

/// Parses a size: `N` (square) or `MxNxK`.
pub fn parse_size(s: &str) -> Result<Dims, String> {
    let parts: Vec<&str> = s.trim().split(['x', 'X']).collect();
    let nums: Result<Vec<usize>, _> = parts.iter().map(|p| p.trim().parse::<usize>()).collect();
    let nums = nums.map_err(|_| format!("`{s}`: expected N or MxNxK with positive integers"))?;
    let d = match nums.as_slice() {
        [n] => Dims {
            m: *n,
            n: *n,
            k: *n,
        },
        [m, n, k] => Dims {
            m: *m,
            n: *n,
            k: *k,
        },
        _ => return Err(format!("`{s}`: expected N or MxNxK")),
    };
    if d.m == 0 || d.n == 0 || d.k == 0 {
        return Err(format!("`{s}`: sizes must be at least 1"));
    }
    Ok(d)
}

/// The probe on wgpu: autotune and measure at each size, one result per size.
pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    run_on(&OnWgpu::new(ctx), emit).await
}

/// The matmul probe, as registered in `probes::REGISTRY`.
pub struct Matmul;

impl super::Probe for Matmul {
    fn name(&self) -> &'static str {
        "matmul"
    }
    fn about(&self) -> &'static str {
        "Tiled FP32 matrix multiply, autotuned per adapter and size (GFLOPS)."
    }
    fn budget_share(&self) -> f64 {
        0.45
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[FigureKey::MatmulF32]
    }
    run_with_async_fn!(opencl);
    fn kernels(&self) -> Vec<KernelSource> {
        kernel_variants()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_block_expands_to_straight_line_code() {
        let src = expand_register_block(ROWS_WGSL, 2, 2, 1);
        assert!(
            !src.lines().any(|l| l.trim_start().starts_with("//@")),
            "{src}"
        );
        for placeholder in ["{m}", "{j}", "{kk}", "{lane}", "{r}", "{s}"] {
            assert!(!src.contains(placeholder), "{placeholder} left in {src}");
        }
        assert_eq!(src.matches("var acc_").count(), 4);
        // 4 k steps x 2 column groups x 2 rows multiply-adds.
        assert_eq!(src.matches("= fma(").count(), 16);
        assert_eq!(src.matches("let b_").count(), 8);
        assert!(
            src.contains("acc_1_1 = fma(vec4<f32>(a_1.w), b_1, acc_1_1);"),
            "{src}"
        );
        if std::env::var_os("SHOW_KERNEL").is_some() {
            println!("{src}");
        }
        // The subgroup kernel: rows spread over the subgroup, one broadcast per row.
        let src = expand_register_block(SUBGROUP_WGSL, 16, 1, 8);
        assert_eq!(src.matches("let av_").count(), 2);
        assert_eq!(src.matches("subgroupBroadcast(av_1, 7u)").count(), 1);
        assert_eq!(src.matches("= fma(").count(), 16 * 4);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(
            parse_size("64"),
            Ok(Dims {
                m: 64,
                n: 64,
                k: 64
            })
        );
        assert_eq!(parse_size("2x3x4"), Ok(Dims { m: 2, n: 3, k: 4 }));
        assert!(parse_size("0").is_err());
        assert!(parse_size("2x3").is_err());
        assert!(parse_size("abc").is_err());
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: a tiled OpenCL C kernel with register blocks, and
/// barrier-free ones for CPU runtimes, tuned by -D options.
#[cfg(not(target_arch = "wasm32"))]
pub mod on_opencl;
