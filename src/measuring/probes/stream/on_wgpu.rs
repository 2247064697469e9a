//! The STREAM probe's kernels on wgpu: WGSL over vec4<f32> elements, a workgroup handling
//! `WG x PER_THREAD` of them; arrays larger than one binding are covered by several bind
//! windows, one dispatch each.

use super::{Kernel, SCALAR, StreamExecutor, array_bytes_for};
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::KernelSpec;
use crate::measuring::probes::Ctx;
use crate::results::ProbeResult;
use anyhow::Result;

pub(super) const STREAM_WGSL: &str = include_str!("../../../../shaders/stream.wgsl");
/// (workgroup size, elements per invocation) configurations the tuner tries per kernel. CPU
/// rasterisers differ in which loop shapes they unroll; GPUs are indifferent.
pub const CONFIGS: [(u32, u32); 5] = [(256, 4), (256, 16), (1024, 4), (1024, 1), (512, 8)];
/// The configurations of `CONFIGS` whose workgroup fits the device's limits, in order.
pub fn fitting_configs(l: &wgpu::Limits) -> Vec<(u32, u32)> {
    CONFIGS
        .into_iter()
        .filter(|&(wg, _)| {
            wg <= l.max_compute_invocations_per_workgroup && wg <= l.max_compute_workgroup_size_x
        })
        .collect()
}

/// (bytes per array, how the size was chosen). `quick`: a quick run, which caps a software
/// adapter's arrays at `QUICK_SOFTWARE_CAP`.
pub fn array_bytes(gpu: &Gpu, host: &crate::host::HostInfo, quick: bool) -> (u64, String) {
    array_bytes_for(&gpu.info, gpu.max_alloc(host.ram_bytes / 3), quick)
}

/// One dispatch: its bind group, its grid and its vec4 elements.
pub struct Window {
    bind: wgpu::BindGroup,
    groups: (u32, u32),
    count: u64,
}

/// Splits `count` vec4 elements (a multiple of `block`, the elements one workgroup handles)
/// into windows within the binding limit, the offset alignment and a one-dimensional grid,
/// each a whole number of blocks, so the kernels need no element test.
fn windows(gpu: &Gpu, count: u64, block: u64) -> Vec<(u64, u64)> {
    let align = u64::from(gpu.limits.min_storage_buffer_offset_alignment).max(16) / 16;
    let unit = lcm(align, block);
    let max_bind = gpu.limits.max_storage_buffer_binding_size / 16;
    let max_grid = u64::from(gpu.limits.max_compute_workgroups_per_dimension) * block;
    let step = (max_bind.min(max_grid).min(u64::from(u32::MAX)) / unit * unit).max(unit);
    let mut out = Vec::new();
    let mut s = 0;
    while s < count {
        let n = step.min(count - s);
        out.push((s, n));
        s += n;
    }
    out
}

fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    a / gcd(a, b) * b
}

/// Dot's partial sums: one vec4 per invocation, one `stride`-byte slice per window.
pub struct Partials {
    buf: wgpu::Buffer,
    stride: u64,
}

/// Workgroups that cover `count` vec4 elements in blocks of `block`.
fn groups_of(count: u64, block: u64) -> u32 {
    (count.div_ceil(block)) as u32
}

/// One kernel configuration built over the arrays: its pipeline, windows and (dot) partial
/// sums.
pub struct Prepared {
    pipeline: wgpu::ComputePipeline,
    windows: Vec<Window>,
    partials: Option<Partials>,
    cfg: (u32, u32),
}

impl StreamExecutor for Ctx<'_> {
    /// (invocations per workgroup, vec4s per invocation).
    type Config = (u32, u32);
    type Arrays = [wgpu::Buffer; 3];
    type Prepared = Prepared;

    fn array_bytes(&self) -> (u64, String) {
        array_bytes(self.gpu, self.host, self.quick)
    }

    fn unfit(&self, bytes: u64, why: &str) -> Option<String> {
        // One array is one buffer (bindings beyond the binding limit are split into windows).
        if bytes > self.gpu.limits.max_buffer_size {
            return Some(format!(
                "{} MiB arrays ({why}) exceed the adapter's max_buffer_size ({} MiB)",
                bytes >> 20,
                self.gpu.limits.max_buffer_size >> 20
            ));
        }
        // Configurations whose workgroup the device cannot run are not tried (a browser's
        // WebGPU device allows 256 invocations by default).
        fitting_configs(&self.gpu.limits)
            .is_empty()
            .then(|| "no stream configuration fits the adapter's workgroup limits".to_string())
    }

    /// A quick run behind its budget measures with the configuration chosen for the kernels
    /// so far (else the first) instead of tuning again.
    fn candidates(&self, _k: Kernel, chosen: Option<(u32, u32)>) -> Vec<(u32, u32)> {
        let fitting = fitting_configs(&self.gpu.limits);
        match chosen {
            Some(c) if self.shrink() => vec![c],
            _ if self.shrink() => fitting[..1].to_vec(),
            _ => fitting,
        }
    }

    fn label(&self, _k: Kernel, (wg, per_thread): (u32, u32)) -> String {
        format!("{wg} invocations x {per_thread} vec4")
    }

    fn upload(&self, host: &[Vec<f32>; 3]) -> Result<[wgpu::Buffer; 3]> {
        Ok([
            self.gpu.upload("a", &host[0])?,
            self.gpu.upload("b", &host[1])?,
            self.gpu.upload("c", &host[2])?,
        ])
    }

    fn poison(&self, arrays: &mut [wgpu::Buffer; 3], which: usize) -> Result<()> {
        self.gpu.poison(&arrays[which], f32::NAN.to_bits());
        Ok(())
    }

    fn prepare(
        &self,
        kernel: Kernel,
        arrays: &[wgpu::Buffer; 3],
        (wg, per_thread): (u32, u32),
        floats: usize,
    ) -> Result<Prepared> {
        let gpu = self.gpu;
        let block = u64::from(wg * per_thread);
        let wins = windows(gpu, floats as u64 / 4, block);
        let partials = alloc_partials(gpu, kernel, &wins, block, wg)?;
        if let Some(p) = &partials {
            gpu.poison(&p.buf, f32::NAN.to_bits());
        }
        let (pipeline, layout) = build_pipeline(gpu, kernel, (wg, per_thread))?;
        let windows = bind_windows(gpu, &layout, arrays, &wins, partials.as_ref(), block)?;
        Ok(Prepared {
            pipeline,
            windows,
            partials,
            cfg: (wg, per_thread),
        })
    }

    async fn dispatch(&self, p: &Prepared, iters: u32) -> Result<f64> {
        self.timer
            .time_pass(&mut |pass| {
                pass.set_pipeline(&p.pipeline);
                for _ in 0..iters {
                    for w in &p.windows {
                        pass.set_bind_group(0, &w.bind, &[]);
                        pass.dispatch_workgroups(w.groups.0, w.groups.1, 1);
                    }
                }
            })
            .await
    }

    async fn read(
        &self,
        arrays: &[wgpu::Buffer; 3],
        which: usize,
        floats: usize,
    ) -> Result<Vec<f32>> {
        self.gpu.read(&arrays[which], floats).await
    }

    /// The sum of every window's partial sums.
    async fn dot_sum(&self, p: &Prepared) -> Result<f64> {
        let part = p.partials.as_ref().expect("dot has partials");
        let (wg, per_thread) = p.cfg;
        let block = u64::from(wg * per_thread);
        let mut sum = 0.0f64;
        for (wi, w) in p.windows.iter().enumerate() {
            let sums = groups_of(w.count, block) as usize * wg as usize;
            let bytes = self
                .gpu
                .read_bytes(&part.buf, part.stride * wi as u64, (sums * 16) as u64)
                .await?;
            let v: Vec<f32> = bytemuck::pod_collect_to_vec(&bytes);
            sum += v.iter().map(|&x| f64::from(x)).sum::<f64>();
        }
        Ok(sum)
    }

    fn describe(&self, res: ProbeResult, kernel: Kernel, p: &Prepared) -> ProbeResult {
        let (wg, per_thread) = p.cfg;
        let mut res = res
            .param("kernel", kernel.name())
            .param("element", "vec4<f32>")
            .param("bind_windows", p.windows.len());
        res.kernel = Some(serde_json::json!({
            "workgroup_size": wg,
            "elements_per_invocation": per_thread,
            "label": format!("{wg} invocations x {per_thread} vec4"),
            "runtime_checks": true,
        }));
        res
    }
}

/// Dot only: the buffer for the partial sums of every window.
fn alloc_partials(
    gpu: &Gpu,
    kernel: Kernel,
    wins: &[(u64, u64)],
    block: u64,
    wg: u32,
) -> Result<Option<Partials>> {
    // Dot writes one partial sum (a vec4) per invocation into its own buffer.
    let partial_stride = {
        let align = u64::from(gpu.limits.min_storage_buffer_offset_alignment).max(16);
        wins.iter()
            .map(|&(_, n)| {
                (u64::from(groups_of(n, block)) * u64::from(wg) * 16).next_multiple_of(align)
            })
            .max()
            .unwrap_or(align)
    };
    (kernel == Kernel::Dot)
        .then(|| gpu.storage_buffer("partials", partial_stride * wins.len() as u64))
        .transpose()
        .map(|b| {
            b.map(|buf| Partials {
                buf,
                stride: partial_stride,
            })
        })
}

/// The kernel's pipeline and its bind group layout.
fn build_pipeline(
    gpu: &Gpu,
    kernel: Kernel,
    (wg, per_thread): (u32, u32),
) -> Result<(wgpu::ComputePipeline, wgpu::BindGroupLayout)> {
    let constants = [("WG", f64::from(wg)), ("PER_THREAD", f64::from(per_thread))];
    // An explicit layout: not every entry point uses every binding, and a derived layout
    // would leave the unused ones out.
    let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let storage = wgpu::BufferBindingType::Storage { read_only: false };
    let layout = gpu
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("stream"),
            entries: &[
                entry(0, storage),
                entry(1, storage),
                entry(2, storage),
                entry(3, wgpu::BufferBindingType::Uniform),
            ],
        });
    let pipeline_layout = gpu
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("stream"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    // Runtime checks stay on: the windows' element counts come from a uniform, and the
    // kernels' guards against them are what keeps the last workgroup in range.
    let pipeline = gpu.kernel(&KernelSpec {
        entry: kernel.name(),
        constants: &constants,
        layout: Some(&pipeline_layout),
        ..KernelSpec::new(kernel.name(), STREAM_WGSL)
    })?;
    Ok((pipeline, layout))
}

/// One bind group (and params uniform) per window.
fn bind_windows(
    gpu: &Gpu,
    layout: &wgpu::BindGroupLayout,
    [a, b, c]: &[wgpu::Buffer; 3],
    wins: &[(u64, u64)],
    partials: Option<&Partials>,
    block: u64,
) -> Result<Vec<Window>> {
    fn binding(buf: &wgpu::Buffer, start: u64, count: u64) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: buf,
            offset: start * 16,
            size: std::num::NonZeroU64::new(count * 16),
        })
    }
    let mut windows_v = Vec::new();
    for (wi, &(start, count)) in wins.iter().enumerate() {
        let groups = (groups_of(count, block), 1);
        let params: [u32; 4] = [count as u32, groups.0, SCALAR.to_bits(), 0];
        let ubuf = gpu.uniform_buffer("stream params", bytemuck::cast_slice(&params))?;
        let third = match partials {
            Some(p) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &p.buf,
                offset: p.stride * wi as u64,
                size: std::num::NonZeroU64::new(p.stride),
            }),
            None => binding(c, start, count),
        };
        let resources = [
            binding(a, start, count),
            binding(b, start, count),
            third,
            ubuf.as_entire_binding(),
        ];
        let entries: Vec<wgpu::BindGroupEntry<'_>> = (0u32..)
            .zip(resources)
            .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
            .collect();
        let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("stream window"),
            layout,
            entries: &entries,
        });
        windows_v.push(Window {
            bind,
            groups,
            count,
        });
    }
    Ok(windows_v)
}

#[cfg(test)]
mod tests {
    use super::{CONFIGS, fitting_configs};

    #[test]
    fn configurations_beyond_the_workgroup_limit_are_not_tried() {
        let web = wgpu::Limits::default();
        assert_eq!(web.max_compute_invocations_per_workgroup, 256);
        assert_eq!(fitting_configs(&web), vec![(256, 4), (256, 16)]);
        let big = wgpu::Limits {
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_size_x: 1024,
            ..wgpu::Limits::default()
        };
        assert_eq!(fitting_configs(&big), CONFIGS.to_vec());
    }
}
