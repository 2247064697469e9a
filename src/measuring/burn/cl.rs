//! The acceptance test on the OpenCL executor: the bench's OpenCL matmul kernels (the same
//! candidates, `ClProduct` with its repacking), and `shaders/opencl/burn.cl` for the check,
//! the fault switch and the VRAM windows.

use super::device::{BLOCK_WORDS, BurnDevice, Order, VramCounts};
use crate::measuring::gpu::opencl::{Arg, ClBuffer, ClGpu};
use crate::measuring::probes::matmul::on_opencl::{ClConfig, ClProduct, candidates, padded};
use crate::measuring::reference::Dims;
use crate::model::AdapterSummary;
use anyhow::{Result, bail};
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use std::time::Instant;

const BURN_CL: &str = include_str!("../../../shaders/opencl/burn.cl");

/// The burn's own program (its load is the bench's matmul, listed there).
pub fn opencl_kernels() -> Vec<crate::measuring::gpu::opencl::ClSource> {
    vec![crate::measuring::gpu::opencl::ClSource::new(
        "burn",
        "burn.cl",
        BURN_CL,
        vec![],
    )]
}

/// Work-items per VRAM work-group (burn.cl's WG).
const VRAM_WG: usize = 256;

struct ClLoad<'g> {
    product: ClProduct<'g>,
    check: Kernel,
    corrupt: Kernel,
    counts: ClBuffer<u32>,
    c: ClBuffer<f32>,
    n: usize,
    padded: Dims,
    _bufs: (ClBuffer<f32>, ClBuffer<f32>, ClBuffer<u32>),
    _prog: Program,
}

/// The acceptance test on an OpenCL device.
pub struct ClBurn<'g> {
    cl: &'g ClGpu,
    burn: Program,
    load: Option<ClLoad<'g>>,
    vram: Vec<ClBuffer<u32>>,
    vram_out: Option<ClBuffer<u32>>,
}

impl<'g> ClBurn<'g> {
    pub fn new(cl: &'g ClGpu) -> Result<ClBurn<'g>> {
        Ok(ClBurn {
            cl,
            burn: cl.build_source(&opencl_kernels()[0])?,
            load: None,
            vram: Vec::new(),
            vram_out: None,
        })
    }

    /// One candidate set up for the inputs, and its time per product over two (after one
    /// that compiles and warms).
    fn trial(&self, cfg: ClConfig, n: usize, a: &[f32], b: &[f32]) -> Result<(f64, ClLoad<'g>)> {
        let cl = self.cl;
        let d = Dims { m: n, n, k: n };
        let p = padded(cfg, d);
        let prog = cl.build_source(&crate::measuring::probes::matmul::on_opencl::source(
            cfg, "f32",
        ))?;
        let da = cl.upload("A", &super::device::pad(a, n, n, p.m, p.k))?;
        let db = cl.upload("B", &super::device::pad(b, n, n, p.k, p.n))?;
        let mut dc = cl.buffer::<f32>("C", p.m * p.n)?;
        cl.poison(&mut dc, 0x7fc0_0000)?;
        let product = ClProduct::new(cl, cfg, p, &prog, [da.arg(), db.arg(), dc.arg()], 4)?;
        let mut time = f64::INFINITY;
        for iters in [1u32, 2] {
            let t0 = Instant::now();
            for _ in 0..iters {
                product.enqueue()?;
            }
            cl.finish()?;
            time = t0.elapsed().as_secs_f64() / f64::from(iters);
        }
        let counts = cl.upload("burn counts", &[0u32; 4])?;
        let want = cl.buffer::<u32>("burn reference", n * n)?;
        let dims = [n as u32, n as u32, p.n as u32].map(Arg::U32);
        let [m, nn, ld] = dims;
        let check = cl.kernel(
            &self.burn,
            "check",
            &[dc.arg(), want.arg(), counts.arg(), m, nn, ld],
        )?;
        let at = (n / 2 * p.n + n / 3) as u32;
        let corrupt = cl.kernel(&self.burn, "corrupt", &[dc.arg(), Arg::U32(at)])?;
        Ok((
            time,
            ClLoad {
                product,
                check,
                corrupt,
                counts,
                c: dc,
                n,
                padded: p,
                _bufs: (da, db, want),
                _prog: prog,
            },
        ))
    }

    fn vram_out(&self) -> Result<&ClBuffer<u32>> {
        self.vram_out
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("VRAM windows not allocated"))
    }
}

impl BurnDevice for ClBurn<'_> {
    fn info(&self) -> &AdapterSummary {
        &self.cl.info
    }

    fn prepare_load(
        &mut self,
        n: usize,
        a: &[f32],
        b: &[f32],
        want: &[u32],
        deadline: Instant,
    ) -> Result<String> {
        let cands = candidates(self.cl, 4);
        let (cfg, mut load) =
            super::device::fastest(cands, deadline, |cfg| self.trial(*cfg, n, a, b))
                .map_err(|e| anyhow::anyhow!("no OpenCL matmul kernel runs at {n}x{n}: {e:#}"))?;
        self.cl.write(&mut load._bufs.2, want)?;
        self.load = Some(load);
        Ok(format!("opencl: {}", cfg.label()))
    }

    fn run(&mut self, iters: u32, corrupt_after: Option<u32>) -> Result<()> {
        let Some(l) = &self.load else {
            bail!("the load is not set up")
        };
        let items = [(l.n * l.n).next_multiple_of(256)];
        for i in 0..iters {
            l.product.enqueue()?;
            if corrupt_after == Some(i) {
                self.cl.dispatch(&l.corrupt, &[1], Some(&[1]))?;
            }
            self.cl.dispatch(&l.check, &items, Some(&[256]))?;
        }
        self.cl.finish()
    }

    fn take_counts(&mut self) -> Result<(u64, u64)> {
        let Some(l) = &mut self.load else {
            bail!("the load is not set up")
        };
        let c: Vec<u32> = self.cl.read(&l.counts, 4)?;
        self.cl.write(&mut l.counts, &[0u32; 4])?;
        Ok((u64::from(c[0]), u64::from(c[1])))
    }

    fn output(&mut self) -> Result<Vec<f32>> {
        let Some(l) = &self.load else {
            bail!("the load is not set up")
        };
        let p = l.padded;
        let c: Vec<f32> = self.cl.read(&l.c, p.m * p.n)?;
        Ok((0..l.n)
            .flat_map(|r| c[r * p.n..r * p.n + l.n].iter().copied())
            .collect())
    }

    fn release_load(&mut self) {
        self.load = None;
    }

    fn memory(&self) -> (Option<u64>, u64) {
        let mem = self.cl.info.opencl.as_ref().map(|o| o.global_mem_bytes);
        let window = self.cl.info.limits.max_buffer_size.min(1 << 30);
        (mem, window / (BLOCK_WORDS * 4) * (BLOCK_WORDS * 4))
    }

    fn vram_alloc(&mut self, windows: usize, words: u64) -> Result<()> {
        if self.vram_out.is_none() {
            self.vram_out = Some(self.cl.upload("vram counts", &[0u32; 36])?);
        }
        for w in 0..windows {
            let mut buf = self
                .cl
                .buffer::<u32>(&format!("vram window {w}"), words as usize)?;
            // Touch it now: a runtime that allocates lazily must fail here, not mid-test.
            self.cl.write(&mut buf, &[0u32; 4])?;
            self.vram.push(buf);
        }
        Ok(())
    }

    fn vram_write(&mut self, window: usize, pass: u32) -> Result<()> {
        let buf = &self.vram[window];
        let words = buf.len as u64;
        let args = [
            buf.arg(),
            Arg::U32(words as u32),
            Arg::U32(window as u32),
            Arg::U32(pass),
        ];
        let k = self.cl.kernel(&self.burn, "vram_write", &args)?;
        let groups = words.div_ceil(BLOCK_WORDS) as usize;
        self.cl
            .dispatch(&k, &[groups * VRAM_WG], Some(&[VRAM_WG]))?;
        self.cl.finish()
    }

    fn vram_verify(&mut self, window: usize, pass: u32, order: Order) -> Result<VramCounts> {
        let mut init = [0u32; 36];
        init[1] = u32::MAX;
        let out_arg = self.vram_out()?.arg();
        if let Some(out) = &mut self.vram_out {
            self.cl.write(out, &init)?;
        }
        let buf = &self.vram[window];
        let words = buf.len as u64;
        let blocks = words.div_ceil(BLOCK_WORDS);
        let args = [
            buf.arg(),
            out_arg,
            Arg::U32(words as u32),
            Arg::U32(window as u32),
            Arg::U32(pass),
            Arg::U32(blocks as u32),
            Arg::U32(order.stride),
            Arg::U32(order.offset),
        ];
        let k = self.cl.kernel(&self.burn, "vram_verify", &args)?;
        self.cl
            .dispatch(&k, &[blocks as usize * VRAM_WG], Some(&[VRAM_WG]))?;
        self.cl.finish()?;
        let w: Vec<u32> = self.cl.read(self.vram_out()?, 36)?;
        Ok(VramCounts::from_words(&w))
    }

    fn vram_poke(&mut self, window: usize, word: u64, value: u32) -> Result<()> {
        self.cl
            .write_at(&mut self.vram[window], word as usize, &[value])
    }

    fn vram_release(&mut self) {
        self.vram.clear();
    }
}
