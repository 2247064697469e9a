//! The matmul run's inputs: random A and B, zero-padded to the kernel, packed into
//! panels (or a texture) for the subgroup kernel, and bound.

use super::*;

/// Run step 2: random A and B in [-1, 1], zero-padded to `p`.
pub(super) fn random_inputs(d: Dims, p: Dims, rng: &mut Rng) -> (Vec<f32>, Vec<f32>) {
    let mut a = vec![0.0f32; p.m * p.k];
    for i in 0..d.m {
        for kk in 0..d.k {
            a[i * p.k + kk] = rng.signed_unit() as f32;
        }
    }
    let mut b = vec![0.0f32; p.k * p.n];
    for kk in 0..d.k {
        for j in 0..d.n {
            b[kk * p.n + j] = rng.signed_unit() as f32;
        }
    }
    (a, b)
}

/// The subgroup kernel's inputs: A in row panels, B as a texture, and the packing
/// dispatches that fill them from the row-major buffers.
pub(super) struct SubgroupInputs {
    pub(super) a_packed: wgpu::Buffer,
    pub(super) b_view: wgpu::TextureView,
    pub(super) steps: Vec<PackStep>,
}

/// Run step 3 (subgroup kernel only): allocates the packed A and the B texture and
/// prepares the packing dispatches.
pub(super) fn pack_subgroup_inputs(
    gpu: &Gpu,
    cache: &mut PipelineCache,
    cfg: &MatmulConfig,
    p: Dims,
    abuf: &wgpu::Buffer,
    bbuf: &wgpu::Buffer,
) -> Result<SubgroupInputs> {
    let a_packed = gpu.storage_buffer("A panels", (p.m * p.k * 4) as u64)?;
    let (w, h) = ((p.n / 4) as u32, p.k as u32);
    let tex = gpu.scoped(
        || format!("allocating texture 'B texture' ({w}x{h} rgba32float)"),
        || {
            gpu.device.create_texture(&wgpu::TextureDescriptor {
                label: Some("B texture"),
                size: wgpu::Extent3d {
                    width: w,
                    height: h,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba32Float,
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::STORAGE_BINDING,
                view_formats: &[],
            })
        },
    )?;
    let b_view = tex.create_view(&Default::default());
    let steps = vec![
        pack_step(
            gpu,
            cache,
            "pack_rows",
            abuf,
            a_packed.as_entire_binding(),
            [(p.k / 4) as u32, 0, cfg.tm],
            (p.m * p.k / 4) as u32,
        )?,
        pack_step(
            gpu,
            cache,
            "pack_texture",
            bbuf,
            wgpu::BindingResource::TextureView(&b_view),
            [h, w, 0],
            w * h,
        )?,
    ];
    Ok(SubgroupInputs {
        a_packed,
        b_view,
        steps,
    })
}

/// Run step 4: binds A and B (buffers or packed forms), C and the dims uniform.
pub(super) fn matmul_bind_group(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    [a_res, b_res]: [wgpu::BindingResource<'_>; 2],
    cbuf: &wgpu::Buffer,
    ubuf: &wgpu::Buffer,
) -> wgpu::BindGroup {
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("matmul"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: a_res,
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: b_res,
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: cbuf.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: ubuf.as_entire_binding(),
            },
        ],
    })
}

/// One packing dispatch that runs before the matmul in each timed iteration.
pub(super) struct PackStep {
    pub(super) pipeline: wgpu::ComputePipeline,
    pub(super) bind: wgpu::BindGroup,
    pub(super) groups: (u32, u32),
}

pub(super) fn pack_step(
    gpu: &Gpu,
    cache: &mut PipelineCache,
    entry: &'static str,
    src: &wgpu::Buffer,
    dst: wgpu::BindingResource<'_>,
    fields: [u32; 3],
    total_vec4: u32,
) -> Result<PackStep> {
    let groups = crate::measuring::gpu::context::fold_workgroups(
        total_vec4.div_ceil(256),
        gpu.limits.max_compute_workgroups_per_dimension,
    );
    let ubuf = gpu.uniform_buffer(
        "pack dims",
        bytemuck::cast_slice(&[fields[0], fields[1], fields[2], groups.0]),
    )?;
    let pipeline = cache.pack(gpu, entry)?.clone();
    let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(entry),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: src.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: dst,
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: ubuf.as_entire_binding(),
            },
        ],
    });
    Ok(PackStep {
        pipeline,
        bind,
        groups,
    })
}
