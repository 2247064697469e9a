//! The double-precision matmul kernels: built over their inputs (df64 planes, f64, f16),
//! read back and checked against the compensated reference.

use super::*;

/// A matmul kernel ready to dispatch, and its output planes.
pub(super) struct MatmulKernel {
    pub(super) pipe: wgpu::ComputePipeline,
    pub(super) bg: wgpu::BindGroup,
    pub(super) outs: Vec<wgpu::Buffer>,
}

/// What every matmul kernel binds besides its matrices.
pub(super) struct KernelCommon<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) p: Dims,
    /// Rows per invocation.
    pub(super) tm: u32,
    pub(super) dims: &'a wgpu::Buffer,
    pub(super) guard: &'a wgpu::Buffer,
}

/// Uploads the inputs, poisons the output and builds the kernel.
pub(super) fn build_kernel(
    gpu: &Gpu,
    v: Variant,
    p: Dims,
    a: &[f64],
    b: &[f64],
) -> Result<MatmulKernel> {
    let dims = gpu.uniform_buffer(
        "dims",
        bytemuck::cast_slice(&[p.m as u32, p.n as u32, p.k as u32, p.k as u32]),
    )?;
    let guard = guard_buffer(gpu)?;
    let common = KernelCommon {
        gpu,
        p,
        tm: v.tm,
        dims: &dims,
        guard: &guard,
    };
    match v.kind {
        Kind::Df64 => df64_kernel(&common, a, b, v.use_fma, v.subgroup),
        // Single-plane kernels: f16 inputs with f32 output, or f64 throughout.
        Kind::F16 | Kind::F64 => typed_kernel(&common, v.kind, a, b),
    }
}

/// The df64 kernel: inputs and output as (hi, lo) planes of f32.
pub(super) fn df64_kernel(
    c: &KernelCommon<'_>,
    a: &[f64],
    b: &[f64],
    use_fma: bool,
    subgroup: bool,
) -> Result<MatmulKernel> {
    let (gpu, p) = (c.gpu, c.p);
    let split = |v: &[f64]| -> (Vec<f32>, Vec<f32>) { v.iter().map(|&x| to_df(x)).unzip() };
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let bufs = [
        gpu.upload("a_hi", &ah)?,
        gpu.upload("a_lo", &al)?,
        gpu.upload("b_hi", &bh)?,
        gpu.upload("b_lo", &bl)?,
        gpu.storage_buffer("c_hi", (p.m * p.n * 4) as u64)?,
        gpu.storage_buffer("c_lo", (p.m * p.n * 4) as u64)?,
    ];
    gpu.poison(&bufs[4], f32::NAN.to_bits());
    let pipe = pipeline(
        gpu,
        if subgroup {
            "matmul df64 subgroup"
        } else {
            "matmul df64"
        },
        if subgroup {
            df64_subgroup_matmul_source(c.tm)
        } else {
            df64_matmul_source(c.tm)
        },
        &[
            ("WG", f64::from(WG)),
            ("USE_FMA", f64::from(u8::from(use_fma))),
        ],
    )?;
    let bg = gpu.bind(
        &pipe,
        &[
            (0, &bufs[0]),
            (1, &bufs[1]),
            (2, &bufs[2]),
            (3, &bufs[3]),
            (4, &bufs[4]),
            (5, &bufs[5]),
            (6, c.dims),
            (7, c.guard),
        ],
    );
    Ok(MatmulKernel {
        pipe,
        bg,
        outs: bufs.into_iter().skip(4).collect::<Vec<_>>(),
    })
}

/// The single-plane kernel: f16 inputs with an f32 output, or f64 throughout.
pub(super) fn typed_kernel(
    c: &KernelCommon<'_>,
    kind: Kind,
    a: &[f64],
    b: &[f64],
) -> Result<MatmulKernel> {
    let (gpu, p) = (c.gpu, c.p);
    let (a_bytes, b_bytes, c_elem, source): (Vec<u8>, Vec<u8>, usize, String) = if kind == Kind::F16
    {
        let ah: Vec<half::f16> = a.iter().map(|&x| half::f16::from_f64(x)).collect();
        let bh: Vec<half::f16> = b.iter().map(|&x| half::f16::from_f64(x)).collect();
        (
            bytemuck::cast_slice(&ah).to_vec(),
            bytemuck::cast_slice(&bh).to_vec(),
            4,
            typed_matmul_source(Kind::F16, c.tm),
        )
    } else {
        (
            bytemuck::cast_slice(a).to_vec(),
            bytemuck::cast_slice(b).to_vec(),
            8,
            typed_matmul_source(Kind::F64, c.tm),
        )
    };
    let bufs = [
        gpu.upload("a", &a_bytes)?,
        gpu.upload("b", &b_bytes)?,
        gpu.storage_buffer("c", (p.m * p.n * c_elem) as u64)?,
    ];
    gpu.poison(&bufs[2], f32::NAN.to_bits());
    let pipe = pipeline(gpu, "matmul", source, &[("WG", f64::from(WG))])?;
    let bg = gpu.bind(
        &pipe,
        &[(0, &bufs[0]), (1, &bufs[1]), (2, &bufs[2]), (3, c.dims)],
    );
    Ok(MatmulKernel {
        pipe,
        bg,
        outs: bufs.into_iter().skip(2).collect::<Vec<_>>(),
    })
}

/// Reads C back as f64 (padded to `p`).
pub(super) async fn read_product(
    gpu: &Gpu,
    kind: Kind,
    outs: &[wgpu::Buffer],
    p: Dims,
) -> Result<Vec<f64>> {
    Ok(match kind {
        Kind::Df64 => {
            let hi: Vec<f32> = gpu.read(&outs[0], p.m * p.n).await?;
            let lo: Vec<f32> = gpu.read(&outs[1], p.m * p.n).await?;
            hi.iter().zip(&lo).map(|(h, l)| from_df(*h, *l)).collect()
        }
        Kind::F64 => gpu.read(&outs[0], p.m * p.n).await?,
        Kind::F16 => gpu
            .read::<f32>(&outs[0], p.m * p.n)
            .await?
            .into_iter()
            .map(f64::from)
            .collect(),
    })
}

/// The relative Frobenius error of the checked rows against compensated f64,
/// and how many rows were checked.
pub(super) fn check_product(
    d: Dims,
    p: Dims,
    c: &[f64],
    exact_inputs: &(Vec<f64>, Vec<f64>),
) -> (f64, usize) {
    // Compensated f64 costs more than the f32 check: half its budget.
    let rows = crate::measuring::reference::rows_to_check(d, 1 << 26);
    let pd = Dims {
        m: p.m,
        n: p.n,
        k: p.k,
    };
    let want = reference_rows(pd, &exact_inputs.0, &exact_inputs.1, &rows);
    let (mut e2, mut r2) = (0.0f64, 0.0f64);
    for (ri, &i) in rows.iter().enumerate() {
        for j in 0..d.n {
            let got = c[i * p.n + j];
            let w = want[ri][j];
            e2 += (got - w) * (got - w);
            r2 += w * w;
        }
    }
    let rel_error = if e2.is_nan() {
        f64::INFINITY
    } else if r2 > 0.0 {
        (e2 / r2).sqrt()
    } else {
        e2.sqrt()
    };
    (rel_error, rows.len())
}
