//! The matmul kernels on wgpu: WGSL tiled, rows and subgroup kernels (`config.rs`), their
//! pipelines cached across sizes, the inputs padded (and packed, `inputs.rs`) for them, and
//! the adapter's limits they are checked against.

use super::*;
use crate::measuring::probes::executor::Executor;
use crate::measuring::probes::{Ctx, Halts, RunCtx};
use crate::model::TimingMethod;
use std::cell::RefCell;

/// Compiled pipelines, one per configuration, reused across sizes.
#[derive(Default)]
pub struct PipelineCache {
    map: HashMap<MatmulConfig, wgpu::ComputePipeline>,
    pack: HashMap<&'static str, wgpu::ComputePipeline>,
}

impl PipelineCache {
    /// `pack_rows` (A into row panels) or `pack_texture` (B into a texture).
    pub(super) fn pack(
        &mut self,
        gpu: &Gpu,
        entry: &'static str,
    ) -> Result<&wgpu::ComputePipeline> {
        if !self.pack.contains_key(entry) {
            let (source, entry_point) = match entry {
                "pack_texture" => (PACK_TEXTURE_WGSL, "main"),
                _ => (PACK_WGSL, entry),
            };
            let p = gpu.kernel(&KernelSpec {
                entry: entry_point,
                ..KernelSpec::new(entry, source)
            })?;
            self.pack.insert(entry, p);
        }
        Ok(&self.pack[entry])
    }

    fn get(&mut self, gpu: &Gpu, cfg: &MatmulConfig) -> Result<&wgpu::ComputePipeline> {
        if !self.map.contains_key(cfg) {
            let constants = cfg.constants();
            let source = cfg.source();
            // Unchecked when trusted: the host pads every matrix to the tile's multiples and
            // sizes the dispatch to the padded matrix, so every index the kernel forms is in
            // range; the k loop runs to a uniform the host sets within the padded K (the
            // register-block loops have constant trip counts).
            let pipeline = gpu
                .kernel(&KernelSpec {
                    constants: &constants,
                    checks: RuntimeChecks::unless(cfg.trusted),
                    ..KernelSpec::new("matmul", &source)
                })
                .map_err(|e| e.context(format!("kernel {}", cfg.label())))?;
            self.map.insert(cfg.clone(), pipeline);
        }
        Ok(&self.map[cfg])
    }
}

/// One configuration set up on the device for given inputs: what a timed pass encodes.
pub struct Prepared {
    /// The product's own size.
    pub dims: Dims,
    /// The padded size the buffers hold.
    pub padded: Dims,
    /// The output, `padded.m x padded.n`, row-major.
    pub c: wgpu::Buffer,
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    grid: (u32, u32),
    packed: Option<SubgroupInputs>,
    _inputs: [wgpu::Buffer; 3],
}

impl Prepared {
    /// Sets up `cfg` for A and B already padded to `padded(gpu, cfg, d)` (zeros outside
    /// `d`); C is poisoned with NaN.
    pub fn new(
        gpu: &Gpu,
        cache: &mut PipelineCache,
        cfg: &MatmulConfig,
        d: Dims,
        a: &[f32],
        b: &[f32],
    ) -> Result<Prepared> {
        let (p, grid) = padded_grid(gpu, cfg, d)?;
        if a.len() != p.m * p.k || b.len() != p.k * p.n {
            bail!("inputs are not padded to {}x{}x{}", p.m, p.n, p.k);
        }
        let abuf = gpu.upload("A", a)?;
        let bbuf = gpu.upload("B", b)?;
        let cbuf = gpu.storage_buffer("C", (p.m * p.n * 4) as u64)?;
        gpu.poison(&cbuf, f32::NAN.to_bits());
        let k_stop = (p.k as u32).saturating_sub(cfg.k_skip);
        let ubuf = gpu.uniform_buffer(
            "dims",
            bytemuck::cast_slice(&[p.m as u32, p.n as u32, p.k as u32, k_stop]),
        )?;
        // The subgroup kernel reads A packed in row panels and B from a texture; the packing
        // runs inside the timed pass, so every timed iteration starts from the row-major
        // inputs.
        let packed = if cfg.kernel == KernelKind::Subgroup {
            Some(pack_subgroup_inputs(gpu, cache, cfg, p, &abuf, &bbuf)?)
        } else {
            None
        };
        let (a_res, b_res) = match &packed {
            Some(s) => (
                s.a_packed.as_entire_binding(),
                wgpu::BindingResource::TextureView(&s.b_view),
            ),
            None => (abuf.as_entire_binding(), bbuf.as_entire_binding()),
        };
        let pipeline = cache.get(gpu, cfg)?.clone();
        let bind = matmul_bind_group(gpu, &pipeline, [a_res, b_res], &cbuf, &ubuf);
        Ok(Prepared {
            dims: d,
            padded: p,
            c: cbuf,
            pipeline,
            bind,
            grid,
            packed,
            _inputs: [abuf, bbuf, ubuf],
        })
    }

    /// Encodes one product (with its packing steps) into `pass`.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>) {
        let packs: &[PackStep] = self.packed.as_ref().map_or(&[], |s| &s.steps);
        for step in packs {
            pass.set_pipeline(&step.pipeline);
            pass.set_bind_group(0, &step.bind, &[]);
            pass.dispatch_workgroups(step.groups.0, step.groups.1, 1);
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind, &[]);
        pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
    }
}

/// The size `cfg` pads `d` to (refused where the adapter cannot run it).
pub fn padded(gpu: &Gpu, cfg: &MatmulConfig, d: Dims) -> Result<Dims> {
    Ok(padded_grid(gpu, cfg, d)?.0)
}

/// Run step 1: refuses sizes and kernels the adapter cannot run, pads the sizes to the
/// kernel's tile and returns them with the dispatch grid.
fn padded_grid(gpu: &Gpu, cfg: &MatmulConfig, d: Dims) -> Result<(Dims, (u32, u32))> {
    if d.m == 0 || d.n == 0 || d.k == 0 {
        bail!(
            "matrix sizes must be at least 1, got {}x{}x{}",
            d.m,
            d.n,
            d.k
        );
    }
    if let Some(why) = cfg.unfit_reason(&gpu.limits) {
        bail!("kernel {}: {why}", cfg.label());
    }
    let (bm, bn, bk) = cfg.tile();
    let p = Dims {
        m: d.m.next_multiple_of(bm as usize),
        n: d.n.next_multiple_of(bn as usize),
        k: d.k.next_multiple_of(bk.max(4) as usize),
    };
    check_fits(gpu, p)?;
    if cfg.kernel == KernelKind::Subgroup {
        let lim = gpu.limits.max_texture_dimension_2d as usize;
        if p.n / 4 > lim || p.k > lim {
            bail!(
                "the subgroup kernel reads B as a {}x{} texture; the adapter's max_texture_dimension_2d is {lim}",
                p.n / 4,
                p.k
            );
        }
    }
    let grid = ((p.n / bn as usize) as u32, (p.m / bm as usize) as u32);
    check_grid(gpu, grid, &format!("{}x{}x{}", d.m, d.n, d.k))?;
    Ok((p, grid))
}

/// Refuses a dispatch of `gx` x `gy` workgroups beyond the adapter's limit per dimension;
/// `what` names the product that needs them.
pub fn check_grid(gpu: &Gpu, (gx, gy): (u32, u32), what: &str) -> Result<()> {
    let maxwg = gpu.limits.max_compute_workgroups_per_dimension;
    if gx > maxwg || gy > maxwg {
        bail!(
            "{what} needs {gx}x{gy} workgroups; the adapter's max_compute_workgroups_per_dimension is {maxwg}"
        );
    }
    Ok(())
}

/// Refuses sizes whose buffers exceed the adapter's binding or buffer limits, naming the limit.
pub fn check_fits(gpu: &Gpu, p: Dims) -> Result<()> {
    // Checked: in a release build `2147483648 * 2147483648 * 4` wraps to 0 bytes.
    let bytes = |a: usize, b: usize| {
        (a as u64)
            .checked_mul(b as u64)
            .and_then(|x| x.checked_mul(4))
    };
    let biggest = [bytes(p.m, p.k), bytes(p.k, p.n), bytes(p.m, p.n)]
        .into_iter()
        .try_fold(0u64, |acc, b| b.map(|b| acc.max(b)));
    let Some(biggest) = biggest else {
        bail!(
            "a {}x{}x{} matmul needs a matrix buffer larger than 2^64 bytes",
            p.m,
            p.n,
            p.k
        );
    };
    let bind = gpu.limits.max_storage_buffer_binding_size;
    let buf = gpu.limits.max_buffer_size;
    if biggest > bind.min(buf) {
        let (what, lim) = if bind <= buf {
            ("max_storage_buffer_binding_size", bind)
        } else {
            ("max_buffer_size", buf)
        };
        bail!(
            "a {}x{}x{} matmul needs a {} MiB matrix buffer; the adapter's {what} is {} MiB",
            p.m,
            p.n,
            p.k,
            biggest >> 20,
            lim >> 20
        );
    }
    Ok(())
}

/// What the browser's candidate list lacks, said on its results.
const WEB_CANDIDATES_NOTE: &str = "subgroup kernel not offered: wgpu's WebGPU backend does not pass subgroups through yet (gfx-rs/wgpu#10146)";

/// wgpu's context with the pipelines compiled so far, as the matmul method's executor.
pub struct OnWgpu<'c, 'a> {
    pub ctx: &'c Ctx<'a>,
    cache: RefCell<PipelineCache>,
}

impl<'c, 'a> OnWgpu<'c, 'a> {
    pub fn new(ctx: &'c Ctx<'a>) -> Self {
        OnWgpu {
            ctx,
            cache: RefCell::default(),
        }
    }
}

impl Halts for OnWgpu<'_, '_> {
    fn halted(&self) -> bool {
        Halts::halted(self.ctx)
    }
    fn halt_reason(&self) -> String {
        Halts::halt_reason(self.ctx)
    }
    fn say(&self, what: &str) {
        self.ctx.say(what)
    }
}

impl Executor for OnWgpu<'_, '_> {
    fn run_ctx(&self) -> &RunCtx<'_> {
        &self.ctx.run
    }
    fn method(&self) -> TimingMethod {
        Executor::method(self.ctx)
    }
    async fn settle(&self) {
        self.ctx.settle().await
    }
    fn keep_tuning(&self, found: bool) -> bool {
        self.ctx.keep_tuning(found)
    }
}

impl MatmulExecutor for OnWgpu<'_, '_> {
    type Config = MatmulConfig;
    type Prepared = Prepared;

    fn policy(&self) -> Policy {
        Policy::wgpu()
    }
    fn candidates(&self) -> Vec<MatmulConfig> {
        let mut cands = candidates(self.ctx.gpu);
        for c in &mut cands {
            c.trusted = self.ctx.trusted;
        }
        cands
    }
    fn label(&self, cfg: &MatmulConfig) -> String {
        cfg.label()
    }
    fn beyond_limits(&self, d: Dims) -> Option<String> {
        let e = check_fits(self.ctx.gpu, d).err()?;
        Some(format!("beyond the adapter's limits: {e:#}"))
    }
    fn stopped(&self) -> bool {
        self.ctx.gpu.halted().is_some() || crate::interrupt::requested()
    }
    fn padded(&self, cfg: &MatmulConfig, d: Dims) -> Result<Dims> {
        padded(self.ctx.gpu, cfg, d)
    }
    fn prepare(
        &self,
        cfg: &MatmulConfig,
        d: Dims,
        _p: Dims,
        a: &[f32],
        b: &[f32],
    ) -> Result<Prepared> {
        let mut cache = self.cache.borrow_mut();
        Prepared::new(self.ctx.gpu, &mut cache, cfg, d, a, b)
    }
    async fn dispatch(&self, p: &Prepared, iters: u32) -> Result<f64> {
        self.ctx
            .timer
            .time_pass(&mut |pass| {
                for _ in 0..iters {
                    p.encode(pass);
                }
            })
            .await
    }
    /// With the test fault `corrupt_output`, one element of the product is overwritten on
    /// the device first.
    async fn read(&self, p: &Prepared) -> Result<Vec<f32>> {
        let gpu = self.ctx.gpu;
        let (d, pd) = (p.dims, p.padded);
        if self.ctx.faults.corrupt_output {
            let idx = (d.m / 2) * pd.n + d.n / 2;
            gpu.queue
                .write_buffer(&p.c, (idx * 4) as u64, bytemuck::bytes_of(&1.0e3f32));
        }
        gpu.read(&p.c, pd.m * pd.n).await
    }
    fn describe(&self, mut res: ProbeResult, cfg: &MatmulConfig, padded: Dims) -> ProbeResult {
        res.kernel = serde_json::to_value(cfg).ok().map(|mut v| {
            if let Some(o) = v.as_object_mut() {
                o.insert("label".into(), cfg.label().into());
                o.insert(
                    "padded".into(),
                    serde_json::json!([padded.m, padded.n, padded.k]),
                );
            }
            v
        });
        if self.ctx.gpu.info.backend == "webgpu" {
            res = res.param("candidates_note", WEB_CANDIDATES_NOTE);
        }
        res
    }
}
