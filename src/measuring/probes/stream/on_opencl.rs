//! The STREAM probe's kernels on OpenCL: OpenCL C over floatVEC elements, one per
//! work-item (dot: a run of them, or elements a grid apart).

use super::{Kernel, SCALAR, StreamExecutor, array_bytes_for};
use crate::measuring::gpu::opencl::{Arg, ClBuffer};
use crate::measuring::probes::ClCtx;
use crate::results::ProbeResult;
use anyhow::Result;

const STREAM_CL: &str = include_str!("../../../../shaders/opencl/stream.cl");
/// (floats per element, work-group size) tried per kernel.
const CL_CONFIGS: [(u32, usize); 5] = [(4, 256), (16, 256), (8, 256), (16, 64), (1, 256)];

/// One configuration the tuner tries: floats per element, work-group size, and for dot the
/// layout: `per` 0 sums elements a grid apart (`dot_per` of them), else `per` consecutive
/// ones (`dot_blocked`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cfg {
    vec: u32,
    wg: usize,
    per: usize,
}

impl Cfg {
    fn label(&self, k: Kernel) -> String {
        let layout = match (k, self.per) {
            (Kernel::Dot, 0) => ", products summed a grid apart",
            (Kernel::Dot, _) => ", products summed in runs",
            _ => "",
        };
        let run = if k == Kernel::Dot && self.per > 0 {
            format!(" x{}", self.per)
        } else {
            String::new()
        };
        format!(
            "float{}{run} per work-item, work-groups of {}{layout}",
            self.vec, self.wg
        )
    }
}

/// The configurations tried for a kernel: dot adds the run layout at three widths (work-groups
/// of 1024 and 4096, clpeak's size on PoCL, were tried there and gained nothing beyond the
/// VM's own swings).
fn configs(k: Kernel) -> Vec<Cfg> {
    let mut v: Vec<Cfg> = CL_CONFIGS
        .iter()
        .map(|&(vec, wg)| Cfg { vec, wg, per: 0 })
        .collect();
    if k == Kernel::Dot {
        v.truncate(2);
        for (vec, per) in [(16, 16), (8, 32), (4, 64)] {
            v.push(Cfg { vec, wg: 256, per });
        }
    }
    v
}

fn source(vec: u32) -> crate::measuring::gpu::opencl::ClSource {
    crate::measuring::gpu::opencl::ClSource::new(
        "stream",
        "stream.cl",
        STREAM_CL,
        vec![("VEC", vec.to_string())],
    )
}

/// Every width the tuning can pick (the work-group size is not a compile option).
pub(super) fn cl_sources() -> Vec<crate::measuring::gpu::opencl::ClSource> {
    let mut vecs: Vec<u32> = CL_CONFIGS.iter().map(|c| c.0).collect();
    vecs.sort_unstable();
    vecs.dedup();
    vecs.into_iter().map(source).collect()
}

/// Elements each dot work-item sums: the largest power of two that leaves at least 32
/// work-groups a compute unit (a GPU's to fill, a CPU's to balance), dividing the groups.
/// One element a work-item made the work-group reduction (log2 of its size barriers) the
/// cost on PoCL: 7.4 GB/s against copy's 36 on a 2-vCPU AMD EPYC VM.
fn dot_per(groups: usize, compute_units: u32) -> usize {
    let target = 32 * compute_units.max(1) as usize;
    let mut per = 1;
    while groups.is_multiple_of(per * 2) && groups / (per * 2) >= target {
        per *= 2;
    }
    per
}

/// One kernel built for one configuration: its work-items and work-group size, and dot's
/// partial sums (one a work-group).
pub struct Prepared {
    kernel: opencl3::kernel::Kernel,
    items: usize,
    wg: usize,
    partial: ClBuffer<f32>,
    groups: usize,
    cfg: Cfg,
}

impl StreamExecutor for ClCtx<'_> {
    type Config = Cfg;
    type Arrays = [ClBuffer<f32>; 3];
    type Prepared = Prepared;

    fn array_bytes(&self) -> (u64, String) {
        array_bytes_for(
            &self.cl.info,
            self.cl.max_alloc(self.host.ram_bytes / 3),
            self.quick,
        )
    }

    fn candidates(&self, k: Kernel, _chosen: Option<Cfg>) -> Vec<Cfg> {
        configs(k)
    }

    fn label(&self, k: Kernel, cfg: Cfg) -> String {
        cfg.label(k)
    }

    fn upload(&self, host: &[Vec<f32>; 3]) -> Result<[ClBuffer<f32>; 3]> {
        Ok([
            self.cl.upload("a", &host[0])?,
            self.cl.upload("b", &host[1])?,
            self.cl.upload("c", &host[2])?,
        ])
    }

    fn poison(&self, arrays: &mut [ClBuffer<f32>; 3], which: usize) -> Result<()> {
        self.cl.poison(&mut arrays[which], 0x7fc0_0000)
    }

    fn prepare(
        &self,
        k: Kernel,
        arrays: &[ClBuffer<f32>; 3],
        cfg: Cfg,
        floats: usize,
    ) -> Result<Prepared> {
        let cl = self.cl;
        let (vec, wg) = (cfg.vec, cfg.wg);
        let items = floats / vec as usize;
        if !items.is_multiple_of(wg)
            || wg > cl.info.limits.max_compute_invocations_per_workgroup as usize
        {
            anyhow::bail!("{items} elements do not split into work-groups of {wg}");
        }
        let prog = cl.build_source(&source(vec))?;
        let [a, b, c] = arrays;
        let per = match (k, cfg.per) {
            (Kernel::Dot, 0) => dot_per(
                items / wg,
                cl.info.opencl.as_ref().map_or(1, |o| o.compute_units),
            ),
            (Kernel::Dot, p) if (items / wg).is_multiple_of(p) => p,
            (Kernel::Dot, p) => anyhow::bail!("{items} elements do not split into runs of {p}"),
            _ => 1,
        };
        let items = items / per;
        let groups = items / wg;
        let mut partial = cl.buffer::<f32>("dot partials", groups.max(1))?;
        cl.poison(&mut partial, 0x7fc0_0000)?;
        let args: Vec<Arg<'_>> = match k {
            Kernel::Copy => vec![a.arg(), c.arg()],
            Kernel::Scale => vec![b.arg(), c.arg(), Arg::F32(SCALAR)],
            Kernel::Add => vec![a.arg(), b.arg(), c.arg()],
            Kernel::Triad => vec![a.arg(), b.arg(), c.arg(), Arg::F32(SCALAR)],
            Kernel::Dot => vec![
                a.arg(),
                b.arg(),
                partial.arg(),
                Arg::Local(wg * 4),
                Arg::U32(per as u32),
            ],
        };
        // `dot` is an OpenCL C built-in: the kernel has its own name.
        let name = match (k, cfg.per) {
            (Kernel::Dot, 0) => "dot_partial",
            (Kernel::Dot, _) => "dot_blocked",
            _ => k.name(),
        };
        let kernel = cl.kernel(&prog, name, &args)?;
        Ok(Prepared {
            kernel,
            items,
            wg,
            partial,
            groups,
            cfg,
        })
    }

    async fn dispatch(&self, p: &Prepared, iters: u32) -> Result<f64> {
        self.cl.time(iters, &mut || {
            Ok(self
                .cl
                .dispatch(&p.kernel, &[p.items], Some(&[p.wg]))?
                .into())
        })
    }

    async fn read(
        &self,
        arrays: &[ClBuffer<f32>; 3],
        which: usize,
        floats: usize,
    ) -> Result<Vec<f32>> {
        self.cl.read(&arrays[which], floats)
    }

    async fn dot_sum(&self, p: &Prepared) -> Result<f64> {
        let sums = self.cl.read(&p.partial, p.groups)?;
        Ok(sums.iter().map(|&x| f64::from(x)).sum())
    }

    fn describe(&self, mut res: ProbeResult, k: Kernel, p: &Prepared) -> ProbeResult {
        let cfg = p.cfg;
        res.kernel = Some(serde_json::json!({
            "label": format!("opencl {}", cfg.label(k)),
            "vec": cfg.vec, "work_group": cfg.wg, "per_work_item": cfg.per,
        }));
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_sums_as_many_a_work_item_as_leave_32_groups_a_compute_unit() {
        // 8192 groups on 2 compute units: 64 groups, 128 elements a work-item.
        assert_eq!(dot_per(8192, 2), 128);
        assert_eq!(
            dot_per(8192, 304),
            1,
            "an MI300X's 304 CUs need every group"
        );
        // 96 groups: halved once to 48 (still 32 or more), not again (24).
        assert_eq!(dot_per(96, 1), 2);
        assert_eq!(dot_per(33, 1), 1, "only a split that divides the groups");
    }
}
