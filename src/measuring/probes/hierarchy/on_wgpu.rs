//! The hierarchy probe's kernels on wgpu: the WGSL sweep and chase entry points, each bound
//! for one working set.

use super::{CHASE_STEPS, GROUPS, HierarchyExecutor, INVOCATIONS, WG, WGSL, stated};
use crate::measuring::cache_levels::Cache;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks};
use crate::measuring::probes::Ctx;
use anyhow::Result;

/// The sweep's data, its invocations' sums and its pipeline.
pub struct Sweep {
    data: wgpu::Buffer,
    out: wgpu::Buffer,
    pipeline: wgpu::ComputePipeline,
}

/// One pipeline bound for one working set: its grid and the buffer it writes.
pub struct Pass {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    groups: (u32, u32),
    out: wgpu::Buffer,
}

impl HierarchyExecutor for Ctx<'_> {
    type Sweep = Sweep;
    type Pass = Pass;

    fn stated(&self) -> Vec<Cache> {
        stated(&self.gpu.info)
    }
    fn software(&self) -> bool {
        self.gpu.info.software
    }
    fn max_bytes(&self) -> u64 {
        let g = self.gpu;
        g.max_alloc(self.host.ram_bytes)
            .min(g.limits.max_storage_buffer_binding_size)
    }
    fn sweep(&self, data: &[u32]) -> Result<Sweep> {
        let gpu = self.gpu;
        let buf = gpu.upload("hierarchy data", data)?;
        let out = gpu.storage_buffer("hierarchy out", INVOCATIONS * 4)?;
        let pipeline = gpu.kernel(&KernelSpec {
            entry: "sweep",
            constants: &[("WG", f64::from(WG))],
            // Unchecked where trusted: every index is masked into the working set.
            checks: RuntimeChecks::unless(self.trusted),
            ..KernelSpec::new("hierarchy sweep", WGSL)
        })?;
        Ok(Sweep {
            data: buf,
            out,
            pipeline,
        })
    }
    fn sweep_pass(&self, s: &mut Sweep, mask: u32, steps: u32) -> Result<Pass> {
        let gpu = self.gpu;
        let params = [mask, steps, 0, 0];
        let p = gpu.uniform_buffer("hierarchy params", bytemuck::cast_slice(&params))?;
        gpu.poison(&s.out, 0xdead_beef);
        let bind = gpu.bind(&s.pipeline, &[(0, &s.data), (1, &s.out), (2, &p)]);
        Ok(Pass {
            pipeline: s.pipeline.clone(),
            bind,
            groups: (GROUPS, 1),
            out: s.out.clone(),
        })
    }
    async fn sweep_sums(&self, s: &Sweep) -> Result<Vec<u32>> {
        self.gpu.read(&s.out, INVOCATIONS as usize).await
    }
    fn chase(&self, chain: &[u32], start: u32, top: u64) -> Result<Pass> {
        let gpu = self.gpu;
        let buf = gpu.storage_buffer("hierarchy chain", top)?;
        gpu.queue.write_buffer(&buf, 0, bytemuck::cast_slice(chain));
        let out = gpu.storage_buffer("hierarchy out", 16)?;
        gpu.poison(&out, 0xdead_beef);
        let params = [0u32, CHASE_STEPS, start, 0];
        let p = gpu.uniform_buffer("hierarchy params", bytemuck::cast_slice(&params))?;
        let pipeline = gpu.kernel(&KernelSpec {
            entry: "chase",
            // Checked: the chain's words come from the host.
            checks: RuntimeChecks::On,
            ..KernelSpec::new("hierarchy chase", WGSL)
        })?;
        let bind = gpu.bind(&pipeline, &[(3, &buf), (1, &out), (2, &p)]);
        Ok(Pass {
            pipeline,
            bind,
            groups: (1, 1),
            out,
        })
    }
    async fn chase_end(&self, p: &Pass) -> Result<u32> {
        let got: Vec<u32> = self.gpu.read(&p.out, 1).await?;
        Ok(got[0])
    }
    async fn dispatch(&self, p: &Pass, iters: u32) -> Result<f64> {
        crate::measuring::probes::time_batch(self.timer, &p.pipeline, &p.bind, p.groups, iters)
            .await
    }
}
