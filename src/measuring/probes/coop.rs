//! FP16 matrix multiply with f32 accumulation on the matrix engines (tensor cores, AMD
//! matrix cores) through wgpu's cooperative matrices
//! (`Features::EXPERIMENTAL_COOPERATIVE_MATRIX`): the figure mixed-precision training runs
//! on. Where the adapter offers no 16x16x16 f16 -> f32 shape (lavapipe has none; Vulkan
//! needs VK_KHR_cooperative_matrix) the result is `unsupported`, with the reason. On the
//! OpenCL executor the same figure comes from AMD CDNA's MFMA instructions (`probes::mfma`).

use super::Ctx;
use crate::figure::FigureKey;
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks};
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::{Dims, Rng, relative_frobenius};
use crate::results::{ProbeResult, Status, Validation};
use anyhow::Result;
use half::f16;
use wgpu::CooperativeScalarType as S;

const COOP_WGSL: &str = include_str!("../../../shaders/matmul_coop.wgsl");
/// The block of C one workgroup computes, and the K step.
const BLOCK: usize = 32;
const KSTEP: usize = 16;
/// Relative Frobenius error allowed: the inputs are f16 (checked against the f16-rounded
/// values), sums in f32.
const TOLERANCE: f64 = 1e-4;

/// Why this adapter cannot run the kernel, if it cannot.
fn unsupported(gpu: &Gpu) -> Option<String> {
    if gpu.info.backend == "webgpu" {
        return Some("WebGPU has no cooperative matrices".into());
    }
    if !gpu.has(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        return Some(
            "the adapter offers no cooperative matrices (wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX; \
             on Vulkan it needs VK_KHR_cooperative_matrix)"
                .into(),
        );
    }
    if !gpu.has(wgpu::Features::SHADER_F16) {
        return Some("the adapter has no SHADER_F16".into());
    }
    let props = gpu.adapter.cooperative_matrix_properties();
    let found = props.iter().any(|p| {
        (p.m_size, p.n_size, p.k_size) == (16, 16, 16) && p.ab_type == S::F16 && p.cr_type == S::F32
    });
    (!found).then(|| {
        let shapes: Vec<String> = props
            .iter()
            .map(|p| {
                format!(
                    "{}x{}x{} {:?}->{:?}",
                    p.m_size, p.n_size, p.k_size, p.ab_type, p.cr_type
                )
            })
            .collect();
        format!(
            "no 16x16x16 f16->f32 cooperative-matrix shape among the adapter's: [{}]",
            shapes.join(", ")
        )
    })
}

/// Subgroup size: one workgroup is one subgroup.
fn subgroup(gpu: &Gpu) -> u32 {
    let f = &gpu.info.features;
    if f.subgroup {
        f.subgroup_min_size.max(1)
    } else {
        32
    }
}

async fn measure_size(ctx: &Ctx<'_>, d: Dims) -> Result<ProbeResult> {
    let gpu = ctx.gpu;
    let p = Dims {
        m: d.m.next_multiple_of(BLOCK),
        n: d.n.next_multiple_of(BLOCK),
        k: d.k.next_multiple_of(KSTEP),
    };
    super::matmul::check_fits(gpu, p)?;
    let mut rng = Rng::fresh();
    let mut fill = |r: usize, c: usize, live_r: usize, live_c: usize| -> Vec<f16> {
        (0..r * c)
            .map(|i| {
                let live = i / c < live_r && i % c < live_c;
                f16::from_f64(if live { rng.signed_unit() } else { 0.0 })
            })
            .collect()
    };
    let (a, b) = (fill(p.m, p.k, d.m, d.k), fill(p.k, p.n, d.k, d.n));
    let a_buf = gpu.upload("coop a", &a)?;
    let b_buf = gpu.upload("coop b", &b)?;
    let c_buf = gpu.storage_buffer("coop c", (p.m * p.n * 4) as u64)?;
    gpu.poison(&c_buf, f32::NAN.to_bits());
    let dims = [p.m as u32, p.n as u32, p.k as u32, 0];
    let dims = gpu.uniform_buffer("coop dims", bytemuck::cast_slice(&dims))?;
    let zeros = gpu.upload("coop zeros", &[0f32; 256])?;
    let constants = [("SG", f64::from(subgroup(gpu)))];
    let pipeline = gpu.kernel(&KernelSpec {
        constants: &constants,
        // Checked: cooperative loads and stores are bounds-checked per tile by wgpu.
        checks: RuntimeChecks::On,
        ..KernelSpec::new("matmul coop", COOP_WGSL)
    })?;
    let entries = [
        (0, &a_buf),
        (1, &b_buf),
        (2, &c_buf),
        (3, &dims),
        (4, &zeros),
    ];
    let bind = gpu.bind(&pipeline, &entries);
    let groups = ((p.n / BLOCK) as u32, (p.m / BLOCK) as u32);
    let timing = super::time_dispatches(ctx, &pipeline, &bind, groups).await?;
    let got: Vec<f32> = gpu.read(&c_buf, p.m * p.n).await?;
    let (err, rows) = check(&a, &b, &got, d, p);
    let flops = 2.0 * d.m as f64 * d.n as f64 * d.k as f64;
    let value = timing.figure(|t| flops / t * 1e-9);
    let mut res = ProbeResult::sized(FigureKey::MatmulCoop, d.m, d.n, d.k)
        .param("tile", "16x16x16 f16 -> f32, 2x2 tiles per subgroup")
        .param("subgroup", subgroup(gpu));
    res.timing = Some(timing);
    let validation = Validation::within(
        "relative_frobenius",
        err,
        TOLERANCE,
        format!(
            "{rows} of {} rows checked against f64 sums of the f16 inputs",
            d.m
        ),
    );
    Ok(res.validated(validation, value, Validation::tolerance_exceeded))
}

/// Relative Frobenius error of sampled rows of C against f64 sums of the f16 inputs (a
/// non-finite element counts as an infinite error), and the number of rows checked.
fn check(a: &[f16], b: &[f16], got: &[f32], d: Dims, p: Dims) -> (f64, usize) {
    relative_frobenius(d, p.n, got, |r, col| {
        (0..d.k)
            .map(|k| a[r * p.k + k].to_f64() * b[k * p.n + col].to_f64())
            .sum()
    })
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let sizes: Vec<Dims> = ctx.sizes.clone().unwrap_or_else(|| {
        let v: &[usize] = if ctx.quick {
            &[1024]
        } else {
            &[1024, 2048, 4096, 8192]
        };
        v.iter().map(|&n| Dims { m: n, n, k: n }).collect()
    });
    if let Some(why) = unsupported(ctx.gpu) {
        // One line says it: the sizes are not worth a row each.
        let d = sizes[0];
        let r = ProbeResult::sized(FigureKey::MatmulCoop, d.m, d.n, d.k);
        emit(r.with_status(Status::Unsupported, why));
        emit(no_f64(d));
        return;
    }
    let first = sizes[0];
    for d in sizes {
        let what = format!("matmul coop {}x{}x{}", d.m, d.n, d.k);
        super::step(ctx, emit, FigureKey::MatmulCoop, &what, async {
            measure_size(ctx, d).await
        })
        .await;
    }
    emit(no_f64(first));
}

/// WGSL's cooperative matrices have no f64 type (short: a table cell).
fn no_f64(d: Dims) -> ProbeResult {
    ProbeResult::sized(FigureKey::MatmulF64Matrix, d.m, d.n, d.k).with_status(
        Status::Unsupported,
        "OpenCL on AMD CDNA only (WGSL has no f64 matrices)",
    )
}

/// The cooperative-matrix probe, as registered in `probes::REGISTRY`.
pub struct Coop;

impl super::Probe for Coop {
    fn name(&self) -> &'static str {
        "coop"
    }
    fn about(&self) -> &'static str {
        "FP16 matmul with f32 sums on the matrix engines, through cooperative matrices (GFLOPS)."
    }
    fn budget_share(&self) -> f64 {
        0.1
    }
    fn figures(&self) -> &'static [FigureKey] {
        // FP64 matrix engines only through OpenCL on AMD CDNA (WGSL's cooperative matrices
        // have no f64 type): unsupported elsewhere, said.
        &[FigureKey::MatmulCoop, FigureKey::MatmulF64Matrix]
    }
    /// On OpenCL: AMD CDNA's matrix cores through the MFMA builtins (`probes::mfma`),
    /// `unsupported` with the reason on any other device.
    #[cfg(not(target_arch = "wasm32"))]
    fn run_opencl<'a>(
        &'a self,
        ctx: &'a super::ClCtx<'a>,
        emit: &'a mut dyn FnMut(ProbeResult),
    ) -> super::LocalBoxFuture<'a, ()> {
        Box::pin(super::mfma::run_cl(ctx, emit))
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn opencl_kernels(&self) -> Vec<crate::measuring::gpu::opencl::ClSource> {
        super::mfma::cl_sources()
    }
    fn kernels(&self) -> Vec<KernelSource> {
        [16.0, 32.0, 64.0]
            .iter()
            .map(|&sg| KernelSource::new("matmul coop", COOP_WGSL, "main", &[("SG", sg)]))
            .collect()
    }
    run_with_async_fn!();
}
