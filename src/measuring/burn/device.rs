//! What the acceptance test asks of an executor, and its wgpu implementation: an exact
//! matmul load (the autotuner's kernels, inputs that make every result exact, a device-side
//! check after every product) and the VRAM test's windows. The method (schedule, windows,
//! verdict) is in `burn/mod.rs` and knows no API.

use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::{KernelSpec, fold_workgroups};
use crate::measuring::probes::matmul::{self, MatmulConfig, PipelineCache, Prepared};
use crate::measuring::reference::Dims;
use crate::model::AdapterSummary;
use anyhow::{Result, bail};
use std::time::{Duration, Instant};

const BURN_WGSL: &str = include_str!("../../../shaders/burn.wgsl");
const VRAM_WGSL: &str = include_str!("../../../shaders/vram.wgsl");

/// Words per VRAM block: one work-group of 256 work-items, 64 words each.
pub const BLOCK_WORDS: u64 = 256 * 64;

/// The counts one VRAM window's verification returns: bad words, the lowest and highest bad
/// word index (u32::MAX / 0 when none), flipped bits by position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VramCounts {
    pub errors: u64,
    pub first: u32,
    pub last: u32,
    pub bits: [u64; 32],
}

impl VramCounts {
    pub fn from_words(w: &[u32]) -> VramCounts {
        let mut bits = [0u64; 32];
        for (b, v) in bits.iter_mut().zip(&w[3..35]) {
            *b = u64::from(*v);
        }
        VramCounts {
            errors: u64::from(w[0]),
            first: w[1],
            last: w[2],
            bits,
        }
    }
}

/// The block visiting order of one verification: block g is read as (g * stride + offset)
/// mod blocks.
#[derive(Clone, Copy, Debug)]
pub struct Order {
    pub stride: u32,
    pub offset: u32,
}

/// One executor's side of the acceptance test.
pub trait BurnDevice {
    fn info(&self) -> &AdapterSummary;
    /// Sets the load up at size `n` over A and B (`n x n`, row-major) with the reference
    /// product `want` (bits, -0 as +0): tries the kernel candidates until `deadline` and
    /// keeps the fastest; returns its label.
    fn prepare_load(
        &mut self,
        n: usize,
        a: &[f32],
        b: &[f32],
        want: &[u32],
        deadline: Instant,
    ) -> Result<String>;
    /// Runs `iters` products, each followed by the check, and waits for them; with
    /// `corrupt_after` = Some(i), one element of product i is changed before its check.
    fn run(&mut self, iters: u32, corrupt_after: Option<u32>) -> Result<()>;
    /// Reads and clears the check's counts: (miscompares, non-finite).
    fn take_counts(&mut self) -> Result<(u64, u64)>;
    /// The last product, `n x n`, read back.
    fn output(&mut self) -> Result<Vec<f32>>;
    /// Drops the load's buffers (before the VRAM test takes the memory).
    fn release_load(&mut self);
    /// The device's memory in bytes where the API says, and the largest window it binds.
    fn memory(&self) -> (Option<u64>, u64);
    /// Allocates `windows` windows of `words` 32-bit words each.
    fn vram_alloc(&mut self, windows: usize, words: u64) -> Result<()>;
    fn vram_write(&mut self, window: usize, pass: u32) -> Result<()>;
    fn vram_verify(&mut self, window: usize, pass: u32, order: Order) -> Result<VramCounts>;
    /// Overwrites one word (fault injection: a flipped bit).
    fn vram_poke(&mut self, window: usize, word: u64, value: u32) -> Result<()>;
    fn vram_release(&mut self);
}

/// The load on wgpu.
struct WgpuLoad {
    prepared: Prepared,
    want: wgpu::Buffer,
    counts: wgpu::Buffer,
    check: wgpu::ComputePipeline,
    corrupt: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    bind_corrupt: wgpu::BindGroup,
    groups: (u32, u32),
    n: usize,
    _dims: wgpu::Buffer,
}

/// The acceptance test on a wgpu adapter.
pub struct WgpuBurn {
    pub gpu: Gpu,
    cache: PipelineCache,
    load: Option<WgpuLoad>,
    vram: Vec<wgpu::Buffer>,
    vram_pipes: Option<(wgpu::ComputePipeline, wgpu::ComputePipeline, wgpu::Buffer)>,
}

impl WgpuBurn {
    pub fn new(gpu: Gpu) -> WgpuBurn {
        WgpuBurn {
            gpu,
            cache: PipelineCache::default(),
            load: None,
            vram: Vec::new(),
            vram_pipes: None,
        }
    }

    fn wait(&self) -> Result<()> {
        pollster::block_on(self.gpu.wait())
    }

    /// Entry `entry` of `src`, its layout from the shader, wgpu's runtime checks on (these
    /// kernels are not the measured ones).
    fn pipeline(&self, src: &str, entry: &str) -> Result<wgpu::ComputePipeline> {
        self.gpu.kernel(&KernelSpec {
            entry,
            ..KernelSpec::new(entry, src)
        })
    }

    /// One candidate set up and timed over two products (after one that compiles and warms).
    fn trial(
        &mut self,
        cfg: &MatmulConfig,
        d: Dims,
        a: &[f32],
        b: &[f32],
    ) -> Result<(f64, Prepared)> {
        let p = matmul::padded(&self.gpu, cfg, d)?;
        let (pa, pb) = (pad(a, d.m, d.k, p.m, p.k), pad(b, d.k, d.n, p.k, p.n));
        let prepared = Prepared::new(&self.gpu, &mut self.cache, cfg, d, &pa, &pb)?;
        let mut time = f64::INFINITY;
        for iters in [1u32, 2] {
            let t0 = Instant::now();
            let mut enc = self.gpu.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                for _ in 0..iters {
                    prepared.encode(&mut pass);
                }
            }
            self.gpu.queue.submit([enc.finish()]);
            self.wait()?;
            time = t0.elapsed().as_secs_f64() / f64::from(iters);
        }
        if let Some(e) = self.gpu.take_error() {
            bail!("{e}");
        }
        Ok((time, prepared))
    }
}

/// The candidate whose trial (seconds per product, and what it set up) is fastest: every
/// candidate is tried until `deadline`, then the best so far is kept (at least one valid).
pub fn fastest<C, L>(
    candidates: Vec<C>,
    deadline: Instant,
    mut trial: impl FnMut(&C) -> Result<(f64, L)>,
) -> Result<(C, L)> {
    let mut best: Option<(f64, C, L)> = None;
    let mut last_err = None;
    for cfg in candidates {
        if best.is_some() && Instant::now() >= deadline {
            break;
        }
        match trial(&cfg) {
            Ok((t, set_up)) if best.as_ref().is_none_or(|(bt, _, _)| t < *bt) => {
                best = Some((t, cfg, set_up))
            }
            Ok(_) => {}
            Err(e) => last_err = Some(e),
        }
    }
    match best {
        Some((_, cfg, set_up)) => Ok((cfg, set_up)),
        None => Err(last_err.unwrap_or_else(|| anyhow::anyhow!("no candidate"))),
    }
}

/// `src` (`rows x cols`, row-major) zero-padded to `pr x pc`.
pub fn pad(src: &[f32], rows: usize, cols: usize, pr: usize, pc: usize) -> Vec<f32> {
    if (rows, cols) == (pr, pc) {
        return src.to_vec();
    }
    let mut out = vec![0.0f32; pr * pc];
    for r in 0..rows {
        out[r * pc..r * pc + cols].copy_from_slice(&src[r * cols..(r + 1) * cols]);
    }
    out
}

impl BurnDevice for WgpuBurn {
    fn info(&self) -> &AdapterSummary {
        &self.gpu.info
    }

    fn prepare_load(
        &mut self,
        n: usize,
        a: &[f32],
        b: &[f32],
        want: &[u32],
        deadline: Instant,
    ) -> Result<String> {
        let d = Dims { m: n, n, k: n };
        let cands = matmul::candidates(&self.gpu);
        let (cfg, prepared) = fastest(cands, deadline, |cfg| self.trial(cfg, d, a, b))
            .map_err(|e| anyhow::anyhow!("no matmul kernel runs at {n}x{n}: {e:#}"))?;
        let gpu = &self.gpu;
        let want_buf = gpu.upload("burn reference", want)?;
        let counts = gpu.upload("burn counts", &[0u32; 4])?;
        let groups = fold_workgroups(
            ((n * n) as u32).div_ceil(256),
            gpu.limits.max_compute_workgroups_per_dimension,
        );
        let dims = [
            n as u32,
            n as u32,
            prepared.padded.n as u32,
            groups.0,
            (n / 2 * prepared.padded.n + n / 3) as u32,
            0,
            0,
            0,
        ];
        let ubuf = gpu.uniform_buffer("burn dims", bytemuck::cast_slice(&dims))?;
        let check = self.pipeline(BURN_WGSL, "check")?;
        let corrupt = self.pipeline(BURN_WGSL, "corrupt")?;
        let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("burn check"),
            layout: &check.get_bind_group_layout(0),
            entries: &[
                entry(0, prepared.c.as_entire_binding()),
                entry(1, want_buf.as_entire_binding()),
                entry(2, counts.as_entire_binding()),
                entry(3, ubuf.as_entire_binding()),
            ],
        });
        // The fault switch's layout (derived from its shader) holds C and the dims only.
        let bind_corrupt = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("burn corrupt"),
            layout: &corrupt.get_bind_group_layout(0),
            entries: &[
                entry(0, prepared.c.as_entire_binding()),
                entry(3, ubuf.as_entire_binding()),
            ],
        });
        self.load = Some(WgpuLoad {
            prepared,
            want: want_buf,
            counts,
            check,
            corrupt,
            bind,
            bind_corrupt,
            groups,
            n,
            _dims: ubuf,
        });
        Ok(format!("wgpu: {}", cfg.label()))
    }

    fn run(&mut self, iters: u32, corrupt_after: Option<u32>) -> Result<()> {
        let Some(l) = &self.load else {
            bail!("the load is not set up")
        };
        let mut enc = self.gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for i in 0..iters {
                l.prepared.encode(&mut pass);
                if corrupt_after == Some(i) {
                    pass.set_pipeline(&l.corrupt);
                    pass.set_bind_group(0, &l.bind_corrupt, &[]);
                    pass.dispatch_workgroups(1, 1, 1);
                }
                pass.set_bind_group(0, &l.bind, &[]);
                pass.set_pipeline(&l.check);
                pass.dispatch_workgroups(l.groups.0, l.groups.1, 1);
            }
        }
        self.gpu.queue.submit([enc.finish()]);
        self.wait()?;
        match self.gpu.take_error() {
            Some(e) => bail!("{e}"),
            None => Ok(()),
        }
    }

    fn take_counts(&mut self) -> Result<(u64, u64)> {
        let Some(l) = &self.load else {
            bail!("the load is not set up")
        };
        let c: Vec<u32> = pollster::block_on(self.gpu.read(&l.counts, 4))?;
        self.gpu
            .queue
            .write_buffer(&l.counts, 0, bytemuck::cast_slice(&[0u32; 4]));
        Ok((u64::from(c[0]), u64::from(c[1])))
    }

    fn output(&mut self) -> Result<Vec<f32>> {
        let Some(l) = &self.load else {
            bail!("the load is not set up")
        };
        let p = l.prepared.padded;
        let c: Vec<f32> = pollster::block_on(self.gpu.read(&l.prepared.c, p.m * p.n))?;
        Ok((0..l.n)
            .flat_map(|r| c[r * p.n..r * p.n + l.n].iter().copied())
            .collect())
    }

    fn release_load(&mut self) {
        if let Some(l) = self.load.take() {
            l.want.destroy();
            l.prepared.c.destroy();
        }
    }

    fn memory(&self) -> (Option<u64>, u64) {
        let l = &self.gpu.limits;
        let window = l
            .max_storage_buffer_binding_size
            .min(l.max_buffer_size)
            .min(1 << 30);
        (None, window / (BLOCK_WORDS * 4) * (BLOCK_WORDS * 4))
    }

    fn vram_alloc(&mut self, windows: usize, words: u64) -> Result<()> {
        if self.vram_pipes.is_none() {
            let out = self.gpu.upload("vram counts", &[0u32; 36])?;
            self.vram_pipes = Some((
                self.pipeline(VRAM_WGSL, "vram_write")?,
                self.pipeline(VRAM_WGSL, "vram_verify")?,
                out,
            ));
        }
        for w in 0..windows {
            let buf = self
                .gpu
                .storage_buffer(&format!("vram window {w}"), words * 4)?;
            // Touch it now: an allocation the driver defers must fail here, not mid-test.
            self.gpu
                .queue
                .write_buffer(&buf, 0, bytemuck::cast_slice(&[0u32; 4]));
            self.vram.push(buf);
        }
        self.wait()?;
        match self.gpu.take_error() {
            Some(e) => bail!("{e}"),
            None => Ok(()),
        }
    }

    fn vram_write(&mut self, window: usize, pass: u32) -> Result<()> {
        self.vram_dispatch(window, pass, None)
    }

    fn vram_verify(&mut self, window: usize, pass: u32, order: Order) -> Result<VramCounts> {
        let Some((_, _, out)) = &self.vram_pipes else {
            bail!("VRAM windows not allocated")
        };
        let mut init = [0u32; 36];
        init[1] = u32::MAX;
        self.gpu
            .queue
            .write_buffer(out, 0, bytemuck::cast_slice(&init));
        self.vram_dispatch(window, pass, Some(order))?;
        let Some((_, _, out)) = &self.vram_pipes else {
            bail!("VRAM windows not allocated")
        };
        let w: Vec<u32> = pollster::block_on(self.gpu.read(out, 36))?;
        Ok(VramCounts::from_words(&w))
    }

    fn vram_poke(&mut self, window: usize, word: u64, value: u32) -> Result<()> {
        self.gpu
            .queue
            .write_buffer(&self.vram[window], word * 4, bytemuck::bytes_of(&value));
        self.wait()
    }

    fn vram_release(&mut self) {
        for b in self.vram.drain(..) {
            b.destroy();
        }
    }
}

impl WgpuBurn {
    fn vram_dispatch(&mut self, window: usize, pass: u32, order: Option<Order>) -> Result<()> {
        let Some((write, verify, out)) = &self.vram_pipes else {
            bail!("VRAM windows not allocated")
        };
        let buf = &self.vram[window];
        let words = buf.size() / 4;
        let blocks = words.div_ceil(BLOCK_WORDS) as u32;
        let groups = fold_workgroups(blocks, self.gpu.limits.max_compute_workgroups_per_dimension);
        let o = order.unwrap_or(Order {
            stride: 1,
            offset: 0,
        });
        let params = [
            words as u32,
            window as u32,
            pass,
            blocks,
            o.stride,
            o.offset,
            groups.0,
            0,
        ];
        let gpu = &self.gpu;
        let ubuf = gpu.uniform_buffer("vram params", bytemuck::cast_slice(&params))?;
        let pipe = if order.is_some() { verify } else { write };
        // The write kernel's layout (derived from its shader) has no counts binding.
        let mut entries = vec![entry(0, buf.as_entire_binding())];
        if order.is_some() {
            entries.push(entry(1, out.as_entire_binding()));
        }
        entries.push(entry(2, ubuf.as_entire_binding()));
        let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("vram"),
            layout: &pipe.get_bind_group_layout(0),
            entries: &entries,
        });
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipe);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        }
        gpu.queue.submit([enc.finish()]);
        self.wait()?;
        match self.gpu.take_error() {
            Some(e) => bail!("{e}"),
            None => Ok(()),
        }
    }
}

fn entry(binding: u32, resource: wgpu::BindingResource<'_>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry { binding, resource }
}

/// How long the warm-up may spend choosing a kernel before it keeps the best so far.
pub fn tuning_share(warmup: Duration) -> Duration {
    warmup.mul_f64(0.5)
}
