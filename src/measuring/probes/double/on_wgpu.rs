//! The double-precision kernels on wgpu: WGSL df64 (plain, or A by subgroup broadcast),
//! f64 and f16, `tm` rows x 4 columns per invocation.

use super::method::DoubleKernels;
use super::*;
use crate::measuring::gpu::Timer;
use crate::model::TimingMethod;

/// wgpu's device and timer, as the double-precision method's executor.
pub struct OnWgpu<'a> {
    pub gpu: &'a Gpu,
    pub timer: &'a Timer<'a>,
}

/// One kernel built over its inputs: the pipeline and bind group, its grid, and what C
/// is read back as.
pub struct Prepared {
    k: MatmulKernel,
    grid: (u32, u32),
    kind: Kind,
    p: Dims,
}

impl DoubleKernels for OnWgpu<'_> {
    type Layout = Variant;
    type Prepared = Prepared;

    fn method(&self) -> TimingMethod {
        self.timer.method()
    }

    async fn self_test_outputs(&self, inputs: &SelfTestInputs) -> Result<Vec<[f32; 4]>> {
        run_self_test_kernel(self.gpu, Broken::default(), inputs).await
    }

    fn lacks(&self, kind: Kind) -> Option<String> {
        let (feature, fname) = match kind {
            Kind::F64 => (wgpu::Features::SHADER_F64, "SHADER_F64"),
            Kind::F16 => (wgpu::Features::SHADER_F16, "SHADER_F16"),
            Kind::Df64 => return None,
        };
        if self.gpu.has(feature) {
            return None;
        }
        Some(if self.gpu.info.backend == "webgpu" && kind == Kind::F64 {
            "WebGPU has no f64 (no SHADER_F64); df64 is the double figure here".into()
        } else {
            format!("the adapter has no {fname}")
        })
    }

    /// df64 on adapters with subgroups of 8 or more also tries the kernel that shares A by
    /// broadcast, before the plain one: where loads are issued lane by lane (CPU
    /// rasterisers) it is about twice as fast; on GPUs both are tried in a full run. A quick
    /// run behind its budget keeps the first valid kernel, so the likeliest comes first: the
    /// tallest on a CPU rasteriser (more rows share each B load), the shortest on a GPU
    /// (registers).
    fn layouts(&self, kind: Kind, use_fma: bool) -> Vec<Variant> {
        let mut variants: Vec<Variant> = Vec::new();
        if kind == Kind::Df64 && df64_subgroups(self.gpu) {
            let mut rows = SUBGROUP_TM_CHOICES.to_vec();
            if self.gpu.info.software {
                rows.reverse();
            }
            variants.extend(rows.into_iter().map(|tm| Variant {
                kind,
                tm,
                use_fma,
                subgroup: true,
            }));
        }
        variants.extend(TM_CHOICES.map(|tm| Variant {
            kind,
            tm,
            use_fma,
            subgroup: false,
        }));
        variants
    }

    fn label(&self, _kind: Kind, v: Variant) -> String {
        v.label()
    }

    fn describe(&self, _kind: Kind, v: Variant) -> serde_json::Value {
        serde_json::json!({
            "label": v.label(),
            "tm": v.tm, "wg": WG, "product": if v.use_fma { "fma" } else { "split" },
            "a_by_subgroup_broadcast": v.subgroup,
        })
    }

    fn padded(&self, _kind: Kind, v: Variant, d: Dims) -> Result<Dims> {
        let p = padded_dims(self.gpu, v, d)?;
        grid(self.gpu, v.tm, d, p)?;
        Ok(p)
    }

    fn prepare(&self, kind: Kind, v: Variant, p: Dims, a: &[f64], b: &[f64]) -> Result<Prepared> {
        let grid = (
            (p.n / (4 * WG as usize)) as u32,
            (p.m / v.tm as usize) as u32,
        );
        let k = build_kernel(self.gpu, v, p, a, b)?;
        Ok(Prepared { k, grid, kind, p })
    }

    async fn dispatch(&self, p: &Prepared, iters: u32) -> Result<f64> {
        crate::measuring::probes::time_batch(self.timer, &p.k.pipe, &p.k.bg, p.grid, iters).await
    }

    async fn read(&self, p: &Prepared) -> Result<Vec<f64>> {
        read_product(self.gpu, p.kind, &p.k.outs, p.p).await
    }
}

/// Pads the sizes to the kernel's block and checks every matrix plane fits the adapter's
/// buffer limits.
fn padded_dims(gpu: &Gpu, v: Variant, d: Dims) -> Result<Dims> {
    let Variant {
        kind, tm, subgroup, ..
    } = v;
    if d.m == 0 || d.n == 0 || d.k == 0 {
        bail!("matrix sizes must be at least 1");
    }
    if subgroup && !(kind == Kind::Df64 && df64_subgroups(gpu)) {
        bail!(
            "the subgroup kernel is df64 only and needs subgroups of at least 8 invocations; this adapter has {}",
            if gpu.info.features.subgroup {
                format!(
                    "{}..{}",
                    gpu.info.features.subgroup_min_size, gpu.info.features.subgroup_max_size
                )
            } else {
                "none".into()
            }
        );
    }
    let p = Dims {
        m: d.m.next_multiple_of(tm as usize),
        n: d.n.next_multiple_of(4 * WG as usize),
        // The subgroup kernel reads A as vec4s along K.
        k: if subgroup {
            d.k.next_multiple_of(4)
        } else {
            d.k
        },
    };
    let elem = match kind {
        Kind::F64 => 8,
        Kind::Df64 => 4,
        Kind::F16 => 4, // the f32 output is the largest buffer
    };
    let biggest = [p.m * p.k, p.k * p.n, p.m * p.n]
        .into_iter()
        .max()
        .unwrap_or(0) as u64
        * elem;
    let lim = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    if biggest > lim {
        bail!(
            "a {}x{}x{} {} matmul needs {} MiB per matrix plane; the adapter's {} is {} MiB",
            d.m,
            d.n,
            d.k,
            match kind {
                Kind::F64 => "f64",
                Kind::Df64 => "df64",
                Kind::F16 => "f16",
            },
            biggest >> 20,
            if gpu.limits.max_storage_buffer_binding_size <= gpu.limits.max_buffer_size {
                "max_storage_buffer_binding_size"
            } else {
                "max_buffer_size"
            },
            lim >> 20
        );
    }
    Ok(p)
}

/// The dispatch grid, checked against the adapter's workgroup limit.
fn grid(gpu: &Gpu, tm: u32, d: Dims, p: Dims) -> Result<(u32, u32)> {
    let grid = ((p.n / (4 * WG as usize)) as u32, (p.m / tm as usize) as u32);
    let what = format!("a {}x{}x{} matmul", d.m, d.n, d.k);
    crate::measuring::probes::matmul::check_grid(gpu, grid, &what)?;
    Ok(grid)
}
