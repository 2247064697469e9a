//! The hierarchy probe's kernels on OpenCL: `sweep` and `chase` in OpenCL C, each built
//! over its buffers for one working set.

use super::{CHASE_STEPS, HierarchyExecutor, INVOCATIONS, WG, stated};
use crate::measuring::cache_levels::Cache;
use crate::measuring::gpu::opencl::{Arg, ClBuffer, ClSource};
use crate::measuring::probes::ClCtx;
use anyhow::Result;

const CL: &str = include_str!("../../../../shaders/opencl/hierarchy.cl");

pub(super) fn cl_sources() -> Vec<ClSource> {
    vec![ClSource::new("hierarchy", "hierarchy.cl", CL, vec![])]
}

/// The sweep's program, data and invocations' sums.
pub struct Sweep {
    prog: opencl3::program::Program,
    data: ClBuffer<u32>,
    out: ClBuffer<u32>,
}

/// One kernel over its buffers for one working set, `global` work-items in work-groups of
/// `local`; a chase's holds its chain and where it stops (a kernel argument does not
/// retain its buffer).
pub struct Pass {
    kernel: opencl3::kernel::Kernel,
    global: usize,
    local: usize,
    chase: Option<[ClBuffer<u32>; 2]>,
}

impl HierarchyExecutor for ClCtx<'_> {
    type Sweep = Sweep;
    type Pass = Pass;

    fn stated(&self) -> Vec<Cache> {
        stated(&self.cl.info)
    }
    fn software(&self) -> bool {
        self.cl.info.software
    }
    fn max_bytes(&self) -> u64 {
        self.cl.max_alloc(self.host.ram_bytes / 4)
    }
    fn sweep(&self, data: &[u32]) -> Result<Sweep> {
        let cl = self.cl;
        let prog = cl.build_source(&cl_sources()[0])?;
        let buf = cl.upload("hierarchy data", data)?;
        let out = cl.buffer::<u32>("hierarchy out", INVOCATIONS as usize)?;
        Ok(Sweep {
            prog,
            data: buf,
            out,
        })
    }
    fn sweep_pass(&self, s: &mut Sweep, mask: u32, steps: u32) -> Result<Pass> {
        let cl = self.cl;
        cl.poison(&mut s.out, 0xdead_beef)?;
        let args = [s.data.arg(), s.out.arg(), Arg::U32(mask), Arg::U32(steps)];
        let kernel = cl.kernel(&s.prog, "sweep", &args)?;
        Ok(Pass {
            kernel,
            global: INVOCATIONS as usize,
            local: WG as usize,
            chase: None,
        })
    }
    async fn sweep_sums(&self, s: &Sweep) -> Result<Vec<u32>> {
        self.cl.read(&s.out, INVOCATIONS as usize)
    }
    fn chase(&self, chain: &[u32], start: u32, _top: u64) -> Result<Pass> {
        let cl = self.cl;
        let prog = cl.build_source(&cl_sources()[0])?;
        let buf = cl.upload("hierarchy chain", chain)?;
        let mut out = cl.buffer::<u32>("hierarchy out", 4)?;
        cl.poison(&mut out, 0xdead_beef)?;
        let args = [buf.arg(), out.arg(), Arg::U32(start), Arg::U32(CHASE_STEPS)];
        let kernel = cl.kernel(&prog, "chase", &args)?;
        Ok(Pass {
            kernel,
            global: 1,
            local: 1,
            chase: Some([buf, out]),
        })
    }
    async fn chase_end(&self, p: &Pass) -> Result<u32> {
        let [_, out] = p.chase.as_ref().expect("a chase's pass");
        let got: Vec<u32> = self.cl.read(out, 1)?;
        Ok(got[0])
    }
    async fn dispatch(&self, p: &Pass, iters: u32) -> Result<f64> {
        let (global, local) = ([p.global], [p.local]);
        self.cl.time(iters, &mut || {
            Ok(self.cl.dispatch(&p.kernel, &global, Some(&local))?.into())
        })
    }
}
