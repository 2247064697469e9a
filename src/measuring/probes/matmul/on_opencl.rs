//! The matmul kernels on OpenCL: `matmul.cl`'s tiled and barrier-free kernels (tuned by -D
//! options), set up over A, B and C (with A's and B's repacking where a kernel reads
//! panels), dispatched and read back.

use super::*;
use crate::measuring::gpu::opencl::{Arg, ClBuffer, ClGpu, Span};
use crate::measuring::probes::ClCtx;

pub const MATMUL_CL: &str = include_str!("../../../../shaders/opencl/matmul.cl");

/// `matmul.cl` for `cfg` on elements of `ty` ("f32", "f64": `USE_F64`, "f16": `USE_F16`).
pub fn source(cfg: ClConfig, ty: &'static str) -> crate::measuring::gpu::opencl::ClSource {
    let mut defines = cfg.defines();
    match ty {
        "f64" => defines.push(("USE_F64", "1".into())),
        "f16" => defines.push(("USE_F16", "1".into())),
        _ => {}
    }
    crate::measuring::gpu::opencl::ClSource::new(
        format!("matmul {ty}"),
        "matmul.cl",
        MATMUL_CL,
        defines,
    )
}

/// Every candidate the autotuner can pick, in FP32.
pub(super) fn cl_sources() -> Vec<crate::measuring::gpu::opencl::ClSource> {
    CANDIDATES.into_iter().map(|c| source(c, "f32")).collect()
}

/// The OpenCL matmul kernels of `matmul.cl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClKind {
    /// C tiles through local memory, a register block per work-item (what GPUs want).
    Tiled,
    /// Barrier-free: rows x a vector of columns per work-item, B read row-major.
    Direct,
    /// Barrier-free over A and B repacked into row blocks and column panels (unit stride
    /// along K); the work-group spans consecutive panels of one row block.
    Panel,
    /// As `Panel`, the work-group spanning consecutive row blocks of one panel.
    PanelRows,
}

/// A kernel configuration. Tiled: the C tile (TS x TS), the register block (WPT x WPT
/// per work-item) and the K step (TSK) through local memory. The barrier-free kinds:
/// work-groups of TS work-items, WPT rows and a vector of VW columns each (VW in the
/// `tsk` field), no local memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ClConfig {
    pub ts: u32,
    pub wpt: u32,
    pub tsk: u32,
    pub kind: ClKind,
}

impl ClConfig {
    const fn tiled(ts: u32, wpt: u32, tsk: u32) -> ClConfig {
        ClConfig {
            ts,
            wpt,
            tsk,
            kind: ClKind::Tiled,
        }
    }

    const fn vector(kind: ClKind, ts: u32, wpt: u32, vw: u32) -> ClConfig {
        ClConfig {
            ts,
            wpt,
            tsk: vw,
            kind,
        }
    }

    /// True for the kinds without local memory or barriers.
    pub fn barrier_free(&self) -> bool {
        self.kind != ClKind::Tiled
    }

    /// True where A and B are repacked (row blocks, column panels) before the product.
    pub fn packs_b(&self) -> bool {
        matches!(self.kind, ClKind::Panel | ClKind::PanelRows)
    }

    /// Columns per work-item (barrier-free kernels).
    fn vw(&self) -> u32 {
        if self.barrier_free() { self.tsk } else { 1 }
    }

    pub fn kernel_name(&self) -> &'static str {
        match self.kind {
            ClKind::Tiled => "matmul",
            ClKind::Direct => "matmul_direct",
            ClKind::Panel | ClKind::PanelRows => "matmul_panel",
        }
    }

    /// (global, local) work sizes over the padded matrix `p`.
    pub fn grid(&self, p: Dims) -> ([usize; 2], [usize; 2]) {
        let (ts, wpt, vw) = (self.ts as usize, self.wpt as usize, self.vw() as usize);
        match self.kind {
            ClKind::Tiled => {
                let rts = ts / wpt;
                ([p.n / wpt, p.m / wpt], [rts, rts])
            }
            ClKind::Direct | ClKind::Panel => ([p.n / vw, p.m / wpt], [ts, 1]),
            ClKind::PanelRows => ([p.m / wpt, p.n / vw], [ts, 1]),
        }
    }

    pub fn label(&self) -> String {
        let per_item = |what: &str, along: &str| {
            format!(
                "opencl {what}, {} rows x {} columns per work-item, work-groups of {} {along}",
                self.wpt,
                self.vw(),
                self.ts
            )
        };
        match self.kind {
            ClKind::Direct => per_item("barrier-free", "along the columns"),
            ClKind::Panel => per_item("packed A and B", "along the columns"),
            ClKind::PanelRows => per_item("packed A and B", "along the rows"),
            ClKind::Tiled => {
                let rts = self.ts / self.wpt;
                format!(
                    "opencl tile {0}x{0}, {1}x{1} per work-item ({2} work-items), K step {3}",
                    self.ts,
                    self.wpt,
                    rts * rts,
                    self.tsk
                )
            }
        }
    }

    pub fn defines(&self) -> Vec<(&'static str, String)> {
        let mut d = vec![
            ("TS", self.ts.to_string()),
            ("WPT", self.wpt.to_string()),
            ("TSK", self.tsk.to_string()),
            ("VW", self.vw().to_string()),
        ];
        if self.kind == ClKind::PanelRows {
            d.push(("GROUP_ROWS", "1".into()));
        }
        d
    }

    /// Whether the device can run it (work-group size, local memory for `elem`-byte
    /// elements).
    pub fn fits(&self, cl: &ClGpu, elem: u32) -> bool {
        if self.barrier_free() {
            return self.ts <= cl.info.limits.max_compute_invocations_per_workgroup
                && self.ts <= cl.info.limits.max_compute_workgroup_size_x;
        }
        let rts = self.ts / self.wpt;
        let local = elem * (self.ts * (self.tsk + 1) + self.tsk * (self.ts + 1));
        rts * rts <= cl.info.limits.max_compute_invocations_per_workgroup
            && rts <= cl.info.limits.max_compute_workgroup_size_x
            && local <= cl.info.limits.max_compute_workgroup_storage_size
    }
}

/// The candidates: tiled kernels (what GPUs want), then barrier-free ones (what a CPU
/// runtime wants); `candidates` puts the likelier family first.
pub const CANDIDATES: [ClConfig; 19] = [
    ClConfig::tiled(32, 4, 16),
    ClConfig::tiled(64, 8, 16),
    ClConfig::tiled(64, 4, 16),
    ClConfig::tiled(32, 2, 16),
    ClConfig::tiled(128, 8, 16),
    ClConfig::tiled(16, 2, 16),
    ClConfig::vector(ClKind::Panel, 16, 8, 16),
    ClConfig::vector(ClKind::PanelRows, 16, 8, 16),
    ClConfig::vector(ClKind::Panel, 16, 12, 16),
    ClConfig::vector(ClKind::PanelRows, 16, 12, 16),
    ClConfig::vector(ClKind::Direct, 16, 8, 16),
    ClConfig::vector(ClKind::Direct, 16, 4, 16),
    ClConfig::vector(ClKind::Direct, 16, 16, 16),
    ClConfig::vector(ClKind::Direct, 16, 12, 16),
    ClConfig::vector(ClKind::Direct, 64, 8, 4),
    // 8-wide columns: a CPU with 256-bit vectors (AVX2) holds 8-12 rows of them in its 16
    // registers beside B's vector and A's broadcast; 16-wide rows take two registers each.
    ClConfig::vector(ClKind::Panel, 16, 12, 8),
    ClConfig::vector(ClKind::Panel, 16, 8, 8),
    ClConfig::vector(ClKind::Direct, 16, 12, 8),
    ClConfig::vector(ClKind::Direct, 16, 8, 8),
];

/// The candidates (and element bytes) whose kernel spills registers to scratch memory on a
/// CDNA target (gfx90a, gfx942, gfx950, as Clang compiles them: `tests/it/kernels.rs` fails when
/// this list and the compiler disagree; `reports/kernels/resources.md`): 16 rows of 16-wide
/// f64 vectors need 512 VGPRs, CDNA has 256 (and 256 AGPRs, which take the f16 kernel's few
/// spills without scratch). Left out of the tuning on a CDNA device.
pub const CDNA_SPILLS: [(ClConfig, u32); 1] = [(ClConfig::vector(ClKind::Direct, 16, 16, 16), 8)];

/// An AMD Instinct (CDNA) device by its ROCm name (`gfx908`, `gfx90a`, `gfx942:sramecc+`,
/// `gfx950`); RDNA (`gfx1100`) and older GCN (`gfx906`, its own arrays) are not.
pub fn is_cdna(device_name: &str) -> bool {
    let id = device_name.split(':').next().unwrap_or("");
    matches!(
        id,
        "gfx908" | "gfx90a" | "gfx940" | "gfx941" | "gfx942" | "gfx950"
    )
}

/// The candidates the device can run for `elem`-byte elements, the likelier first: a
/// quick run behind its budget keeps the first valid one.
pub fn candidates(cl: &ClGpu, elem: u32) -> Vec<ClConfig> {
    let cdna = cl
        .info
        .opencl
        .as_ref()
        .is_some_and(|o| is_cdna(&o.device_name));
    let mut v: Vec<ClConfig> = CANDIDATES
        .into_iter()
        .filter(|c| c.fits(cl, elem))
        .filter(|c| !(cdna && CDNA_SPILLS.contains(&(*c, elem))))
        .collect();
    if cl.info.software {
        v.sort_by_key(|c| !c.barrier_free());
    }
    v
}

/// `d` padded to the kernel (zeros, exact): tiled, M and N to TS and K to TSK;
/// barrier-free, M to WPT and N to TS vectors, or, where the work-group spans row
/// blocks, M to TS row blocks and N to one vector.
pub fn padded(cfg: ClConfig, d: Dims) -> Dims {
    let (ts, wpt, vw) = (cfg.ts as usize, cfg.wpt as usize, cfg.vw() as usize);
    let (m, n, k) = match cfg.kind {
        ClKind::Tiled => (ts, ts, cfg.tsk as usize),
        ClKind::Direct | ClKind::Panel => (wpt, ts * vw, 1),
        ClKind::PanelRows => (wpt * ts, vw, 1),
    };
    Dims {
        m: d.m.next_multiple_of(m),
        n: d.n.next_multiple_of(n),
        k: d.k.next_multiple_of(k),
    }
}

/// `cfg`'s kernel of a program (built with `cfg.defines()` and the element type's define)
/// set up over A, B and C of the padded size `p`: one product is `enqueue`, with A's and
/// B's repacking where the kernel reads panels (so every timed iteration starts from the
/// row-major inputs).
pub struct ClProduct<'g> {
    cl: &'g ClGpu,
    steps: Vec<(opencl3::kernel::Kernel, Vec<usize>, Option<Vec<usize>>)>,
    _packed: Option<[crate::measuring::gpu::opencl::ClBuffer<u8>; 2]>,
}

impl<'g> ClProduct<'g> {
    /// `elem`: bytes per element of the kernel's T.
    pub fn new(
        cl: &'g ClGpu,
        cfg: ClConfig,
        p: Dims,
        prog: &opencl3::program::Program,
        bufs: [Arg<'_>; 3],
        elem: usize,
    ) -> Result<ClProduct<'g>> {
        let [a, b, c] = bufs;
        let dims = || {
            [
                Arg::U32(p.m as u32),
                Arg::U32(p.n as u32),
                Arg::U32(p.k as u32),
            ]
        };
        let (global, local) = cfg.grid(p);
        let product = |kern| (kern, global.to_vec(), Some(local.to_vec()));
        if !cfg.packs_b() {
            let [m, n, k] = dims();
            let kern = cl.kernel(prog, cfg.kernel_name(), &[m, n, k, a, b, c])?;
            return Ok(ClProduct {
                cl,
                steps: vec![product(kern)],
                _packed: None,
            });
        }
        // Bytes, not elements: the packed buffers' element type is the kernel's T.
        let a_blocks = cl.buffer::<u8>("A row blocks", p.m * p.k * elem)?;
        let b_panels = cl.buffer::<u8>("B panels", p.n * p.k * elem)?;
        let [m, n, k] = dims();
        let (ap, bp) = (a_blocks.arg(), b_panels.arg());
        let kern = cl.kernel(prog, cfg.kernel_name(), &[m, n, k, ap, bp, c])?;
        let [_, n, k] = dims();
        let pack_b = cl.kernel(prog, "pack_panels", &[n, k, b, b_panels.arg()])?;
        let pack_a = cl.kernel(
            prog,
            "pack_row_blocks",
            &[Arg::U32(p.k as u32), a, a_blocks.arg()],
        )?;
        Ok(ClProduct {
            cl,
            steps: vec![
                (pack_a, vec![p.k, p.m], None),
                (pack_b, vec![p.n / cfg.vw() as usize, p.k], None),
                product(kern),
            ],
            _packed: Some([a_blocks, b_panels]),
        })
    }

    /// Enqueues one product; the span of its commands.
    pub fn enqueue(&self) -> Result<Span> {
        let mut first = None;
        let mut last = None;
        for (k, global, local) in &self.steps {
            let e = self.cl.dispatch(k, global, local.as_deref())?;
            if first.is_none() {
                first = Some(e);
            } else {
                last = Some(e);
            }
        }
        let first = first.ok_or_else(|| anyhow::anyhow!("a product of no commands"))?;
        Ok(match last {
            Some(l) => Span::of(first, l),
            None => first.into(),
        })
    }
}

/// One configuration set up over A, B and C of the padded size: one product is
/// `product.enqueue`.
pub struct ClMatmul<'g> {
    product: ClProduct<'g>,
    c: ClBuffer<f32>,
    padded: Dims,
    _inputs: [ClBuffer<f32>; 2],
}

impl<'g> MatmulExecutor for ClCtx<'g> {
    type Config = ClConfig;
    type Prepared = ClMatmul<'g>;

    fn policy(&self) -> Policy {
        Policy::opencl()
    }
    fn candidates(&self) -> Vec<ClConfig> {
        candidates(self.cl, 4)
    }
    fn label(&self, cfg: &ClConfig) -> String {
        cfg.label()
    }
    fn beyond_limits(&self, d: Dims) -> Option<String> {
        let big = padded(ClConfig::tiled(128, 8, 16), d);
        let bytes = (big.m.max(big.n) * big.k * 4) as u64;
        (bytes > self.cl.info.limits.max_buffer_size)
            .then(|| "beyond the device's largest allocation".to_string())
    }
    fn padded(&self, cfg: &ClConfig, d: Dims) -> Result<Dims> {
        Ok(padded(*cfg, d))
    }
    fn prepare(
        &self,
        cfg: &ClConfig,
        _d: Dims,
        p: Dims,
        a: &[f32],
        b: &[f32],
    ) -> Result<ClMatmul<'g>> {
        let cl = self.cl;
        let prog = cl.build_source(&source(*cfg, "f32"))?;
        let (da, db) = (cl.upload("A", a)?, cl.upload("B", b)?);
        let mut dc = cl.buffer::<f32>("C", p.m * p.n)?;
        cl.poison(&mut dc, 0x7fc0_0000)?;
        let bufs = [da.arg(), db.arg(), dc.arg()];
        let product = ClProduct::new(cl, *cfg, p, &prog, bufs, 4)?;
        Ok(ClMatmul {
            product,
            c: dc,
            padded: p,
            _inputs: [da, db],
        })
    }
    async fn dispatch(&self, p: &ClMatmul<'g>, iters: u32) -> Result<f64> {
        self.cl.time(iters, &mut || p.product.enqueue())
    }
    async fn read(&self, p: &ClMatmul<'g>) -> Result<Vec<f32>> {
        self.cl.read(&p.c, p.padded.m * p.padded.n)
    }
    fn describe(&self, mut res: ProbeResult, cfg: &ClConfig, padded: Dims) -> ProbeResult {
        res.kernel = Some(serde_json::json!({
            "label": cfg.label(), "ts": cfg.ts, "wpt": cfg.wpt, "tsk": cfg.tsk,
            "kind": cfg.kind,
            "padded": [padded.m, padded.n, padded.k],
        }));
        res
    }
}

pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    run_on(ctx, emit).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdna_is_known_by_its_gfx_id_and_its_spilling_candidates_are_real_ones() {
        for id in ["gfx90a", "gfx942:sramecc+:xnack-", "gfx950", "gfx908"] {
            assert!(is_cdna(id), "{id}");
        }
        for id in [
            "gfx1100",
            "gfx906",
            "gfx9420",
            "pthread-Intel(R) Xeon(R) Processor",
            "",
        ] {
            assert!(!is_cdna(id), "{id}");
        }
        for (c, elem) in CDNA_SPILLS {
            assert!(
                CANDIDATES.contains(&c) && [2, 4, 8].contains(&elem),
                "{c:?}"
            );
        }
    }
}
