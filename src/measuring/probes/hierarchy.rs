//! The memory hierarchy a buyer pays for: read bandwidth and dependent-load latency against
//! working-set size, from 16 KiB to four times the largest stated cache (read-only passes;
//! a pointer chase over a random single cycle of 64-byte slots), on both executors. The
//! steps of each curve are found and named by `crate::measuring::cache_levels` after the stated caches
//! (the host's, from sysfs, on a software adapter; the catalog's for a GPU), which each
//! result carries (`stated_caches`).
//!
//! Every point is checked: the sweep's per-invocation sums must add up to the exact
//! (wrapping) sum of what the grid read; the chase must stop at the slot the cycle gives.

use super::Ctx;
use crate::figure::FigureKey;
use crate::measuring::cache_levels::{Cache, size};
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks};
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::Rng;
use crate::results::{ProbeResult, Validation};
use anyhow::Result;

const WGSL: &str = include_str!("../../../shaders/hierarchy.wgsl");
/// Invocations a work-group and work-groups a sweep: 2^18 invocations fill the largest GPUs.
const WG: u32 = 256;
const GROUPS: u32 = 1024;
/// The smallest working set (below every GPU's L1) and the chase's slot (a cache line).
const MIN_BYTES: u64 = 16 << 10;
const SLOT: u64 = 64;
/// The chase's page: every slot of one is visited before the next page.
const PAGE: u64 = 4096;
/// Where no cache is stated: four times this is the largest working set.
const DEFAULT_LARGEST: u64 = 256 << 20;
/// Dependent loads a chase dispatch makes (enough that a dispatch's own cost is small
/// beside them even at L1 latency): 32 an iteration, 32,768 iterations, under the ~65,500
/// iterations lavapipe lets one invocation's loops run.
const CHASE_STEPS: u32 = 1 << 20;
const _: () = assert!(CHASE_STEPS.is_multiple_of(32) && CHASE_STEPS / 32 < 65_000);

/// The caches stated for the device: the host's (sysfs) for a software adapter, which is
/// the CPU, else the GPU's as its maker states them (`crate::measuring::cache_levels::gpu_caches`).
pub fn stated(info: &crate::model::AdapterSummary) -> Vec<Cache> {
    if info.software {
        crate::measuring::cache_levels::host_caches()
    } else {
        crate::measuring::cache_levels::gpu_caches(&info.name)
    }
}

/// The working sets measured: powers of two from 16 KiB to the largest at or below four
/// times the largest stated cache (never below twice it), within `limit` bytes.
pub fn working_sets(stated: &[Cache], limit: u64) -> Vec<u64> {
    let largest = stated
        .iter()
        .map(|c| c.bytes)
        .max()
        .unwrap_or(DEFAULT_LARGEST);
    let prev_pow2 = |x: u64| 1u64 << (63 - x.max(1).leading_zeros());
    let top = prev_pow2(largest.saturating_mul(4)).min(prev_pow2(limit));
    std::iter::successors(Some(MIN_BYTES), |b| Some(b * 2))
        .take_while(|&b| b <= top)
        .collect()
}

/// The sweep's data: word w of the buffer.
fn word(w: u64) -> u32 {
    let mut z = w.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z ^= z >> 29;
    (z.wrapping_mul(0xbf58_476d_1ce4_e5b9) >> 32) as u32
}

/// The sweep's data for the largest working set, and the wrapping sum of every prefix of
/// the sizes measured (`sums[i]` for `sets[i]`).
fn sweep_data(sets: &[u64]) -> (Vec<u32>, Vec<u32>) {
    let top = sets.last().copied().unwrap_or(MIN_BYTES);
    let words = (top / 4) as usize;
    let data: Vec<u32> = (0..words as u64).map(word).collect();
    let mut sums = Vec::with_capacity(sets.len());
    let (mut acc, mut done) = (0u32, 0usize);
    for &s in sets {
        let end = (s / 4) as usize;
        acc = data[done..end].iter().fold(acc, |a, &w| a.wrapping_add(w));
        done = end;
        sums.push(acc);
    }
    (data, sums)
}

/// Loads a sweep invocation makes over `bytes`: a power of two, so that the grid reads the
/// working set a whole number of times, at least four times, and `target` bytes in all.
fn sweep_steps(bytes: u64, invocations: u64, target: u64) -> u32 {
    let elems = bytes / 16;
    let want = (target / 16).max(4 * elems);
    want.div_ceil(invocations).next_power_of_two().max(1) as u32
}

/// The chase's chain over `bytes`: a random single cycle through its 64-byte slots (each
/// slot's first word the word index of the next slot), the word it starts at and the word
/// where `CHASE_STEPS` loads end. The cycle visits the 4 KiB pages in a random order and
/// every slot of a page, in a random order, before the next page: a page's translation is
/// then missed once in 64 loads, not on every load, so the steps are the caches', not the
/// TLB's (a random cycle over all slots measured 140 ns from 8 MiB on this VM, where the
/// page-grouped one stays in L3).
fn chain(bytes: u64, rng: &mut Rng) -> (Vec<u32>, u32, u32) {
    let per_page = (PAGE / SLOT) as u32;
    let pages = (bytes / PAGE) as u32;
    let per = (SLOT / 4) as u32;
    let mut shuffle = |v: &mut [u32]| {
        for i in (1..v.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    };
    let mut page_order: Vec<u32> = (0..pages).collect();
    shuffle(&mut page_order);
    let mut order = Vec::with_capacity((pages * per_page) as usize);
    let mut in_page: Vec<u32> = (0..per_page).collect();
    for p in page_order {
        shuffle(&mut in_page);
        order.extend(in_page.iter().map(|s| p * per_page + s));
    }
    let slots = order.len();
    let mut words = vec![0u32; (bytes / 4) as usize];
    for i in 0..slots {
        let next = order[(i + 1) % slots];
        words[(order[i] * per) as usize] = next * per;
    }
    let end = order[CHASE_STEPS as usize % slots] * per;
    (words, order[0] * per, end)
}

fn point(figure: FigureKey, bytes: u64, stated: &[Cache]) -> ProbeResult {
    ProbeResult::named(figure, format!("{} {}", figure.info().label, size(bytes)))
        .param("bytes", bytes)
        .param("stated_caches", stated)
}

fn sweep_result(
    bytes: u64,
    steps: u32,
    invocations: u64,
    got: u32,
    want: u32,
    timing: super::measure::TimingInfo,
    stated: &[Cache],
) -> ProbeResult {
    let read = invocations as f64 * f64::from(steps) * 16.0;
    let mut res = point(FigureKey::HierarchyRead, bytes, stated)
        .param("bytes_read_per_dispatch", read)
        .param("invocations", invocations);
    let value = timing.figure(|t| read / t * 1e-9);
    res.timing = Some(timing);
    let validation = Validation {
        metric: "exact".into(),
        error: f64::from(got != want),
        tolerance: 0.0,
        passed: got == want,
        detail: Some(format!(
            "wrapping sum of the invocations' sums {got:#010x}, of the data read {want:#010x}"
        )),
    };
    res.validated(validation, value, |_| {
        "validation failed: the sums differ from the data read".into()
    })
}

fn chase_result(
    bytes: u64,
    got: u32,
    want: u32,
    timing: super::measure::TimingInfo,
    stated: &[Cache],
) -> ProbeResult {
    let mut res = point(FigureKey::HierarchyLatency, bytes, stated)
        .param("loads_per_dispatch", CHASE_STEPS)
        .param("slot_bytes", SLOT);
    let value = timing.figure(|t| t / f64::from(CHASE_STEPS) * 1e9);
    res.timing = Some(timing);
    let validation = Validation {
        metric: "exact".into(),
        error: f64::from(got != want),
        tolerance: 0.0,
        passed: got == want,
        detail: Some(format!(
            "stopped at word {got}, the cycle gives {want} after {CHASE_STEPS} loads"
        )),
    };
    res.validated(validation, value, |_| {
        "validation failed: the chase did not stop where the cycle gives".into()
    })
}

/// Bytes the sweep reads a dispatch at least: enough to time, little on a software adapter.
fn sweep_target(quick: bool) -> u64 {
    if quick { 64 << 20 } else { 256 << 20 }
}

async fn sweep_wgpu(
    ctx: &Ctx<'_>,
    emit: &mut dyn FnMut(ProbeResult),
    sets: &[u64],
    stated: &[Cache],
) {
    let gpu = ctx.gpu;
    let (data, sums) = sweep_data(sets);
    let setup = || -> Result<_> {
        let buf = gpu.upload("hierarchy data", &data)?;
        let out = gpu.storage_buffer("hierarchy out", u64::from(GROUPS * WG) * 4)?;
        let pipeline = gpu.kernel(&KernelSpec {
            entry: "sweep",
            constants: &[("WG", f64::from(WG))],
            // Unchecked where trusted: every index is masked into the working set.
            checks: RuntimeChecks::unless(ctx.trusted),
            ..KernelSpec::new("hierarchy sweep", WGSL)
        })?;
        Ok((buf, out, pipeline))
    };
    let (buf, out, pipeline) = match setup() {
        Ok(s) => s,
        Err(e) => {
            let f = FigureKey::HierarchyRead;
            return super::step(ctx, emit, f, f.info().label, async {
                Err::<ProbeResult, _>(e)
            })
            .await;
        }
    };
    drop(data);
    let invocations = u64::from(GROUPS * WG);
    for (i, &bytes) in sets.iter().enumerate() {
        let what = format!("hierarchy read {}", size(bytes));
        super::step(ctx, emit, FigureKey::HierarchyRead, &what, async {
            let steps = sweep_steps(bytes, invocations, sweep_target(ctx.quick));
            let params = [(bytes / 16 - 1) as u32, steps, 0, 0];
            let p = gpu.uniform_buffer("hierarchy params", bytemuck::cast_slice(&params))?;
            gpu.poison(&out, 0xdead_beef);
            let bind = gpu.bind(&pipeline, &[(0, &buf), (1, &out), (2, &p)]);
            let timing = super::time_dispatches(ctx, &pipeline, &bind, (GROUPS, 1)).await?;
            let got: Vec<u32> = gpu.read(&out, invocations as usize).await?;
            let got = got.iter().fold(0u32, |a, &w| a.wrapping_add(w));
            let times = (invocations * u64::from(steps)) / (bytes / 16);
            let want = sums[i].wrapping_mul(times as u32);
            Ok(sweep_result(
                bytes,
                steps,
                invocations,
                got,
                want,
                timing,
                stated,
            ))
        })
        .await;
    }
}

async fn chase_wgpu(
    ctx: &Ctx<'_>,
    emit: &mut dyn FnMut(ProbeResult),
    sets: &[u64],
    stated: &[Cache],
) {
    let gpu = ctx.gpu;
    let top = sets.last().copied().unwrap_or(MIN_BYTES);
    let mut rng = Rng::fresh();
    for &bytes in sets {
        let what = format!("hierarchy latency {}", size(bytes));
        super::step(ctx, emit, FigureKey::HierarchyLatency, &what, async {
            let (words, start, want) = chain(bytes, &mut rng);
            let buf = gpu.storage_buffer("hierarchy chain", top)?;
            gpu.queue
                .write_buffer(&buf, 0, bytemuck::cast_slice(&words));
            drop(words);
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
            let timing = super::time_dispatches(ctx, &pipeline, &bind, (1, 1)).await?;
            let got: Vec<u32> = gpu.read(&out, 1).await?;
            Ok(chase_result(bytes, got[0], want, timing, stated))
        })
        .await;
    }
}

/// The largest buffer the probe may use on a wgpu adapter.
fn wgpu_limit(ctx: &Ctx<'_>) -> u64 {
    let g = ctx.gpu;
    g.max_alloc(ctx.host.ram_bytes)
        .min(g.limits.max_storage_buffer_binding_size)
}

/// The device's limit, or the run's array size where it sets one (the tests' tiny runs);
/// a quick run on a software adapter stops at the STREAM probe's cap for it (a CPU's
/// steps past a VM's stated L3 take a full run).
fn limit(device: u64, array_bytes: Option<u64>, quick_software: bool) -> u64 {
    let cap = if quick_software {
        super::stream::QUICK_SOFTWARE_CAP
    } else {
        u64::MAX
    };
    device
        .min(array_bytes.unwrap_or(u64::MAX))
        .min(cap)
        .max(2 * MIN_BYTES)
}

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let stated = stated(&ctx.gpu.info);
    let quick_sw = ctx.quick && ctx.gpu.info.software;
    let sets = working_sets(&stated, limit(wgpu_limit(ctx), ctx.array_bytes, quick_sw));
    sweep_wgpu(ctx, emit, &sets, &stated).await;
    chase_wgpu(ctx, emit, &sets, &stated).await;
}

#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    use super::*;
    use crate::measuring::gpu::opencl::{Arg, ClSource};
    use crate::measuring::probes::ClCtx;

    const CL: &str = include_str!("../../../shaders/opencl/hierarchy.cl");

    pub(super) fn cl_sources() -> Vec<ClSource> {
        vec![ClSource::new("hierarchy", "hierarchy.cl", CL, vec![])]
    }

    async fn sweep(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult), sets: &[u64], st: &[Cache]) {
        let cl = ctx.cl;
        let (data, sums) = sweep_data(sets);
        let invocations = u64::from(GROUPS * WG);
        let setup = || -> Result<_> {
            let prog = cl.build_source(&cl_sources()[0])?;
            let buf = cl.upload("hierarchy data", &data)?;
            let out = cl.buffer::<u32>("hierarchy out", invocations as usize)?;
            Ok((prog, buf, out))
        };
        let (prog, buf, mut out) = match setup() {
            Ok(s) => s,
            Err(e) => {
                let f = FigureKey::HierarchyRead;
                let failed = async { Err::<ProbeResult, _>(e) };
                return super::super::step(ctx, emit, f, f.info().label, failed).await;
            }
        };
        drop(data);
        for (i, &bytes) in sets.iter().enumerate() {
            let what = format!("hierarchy read {}", size(bytes));
            super::super::step(ctx, emit, FigureKey::HierarchyRead, &what, async {
                let steps = sweep_steps(bytes, invocations, sweep_target(ctx.quick));
                cl.poison(&mut out, 0xdead_beef)?;
                let args = [
                    buf.arg(),
                    out.arg(),
                    Arg::U32((bytes / 16 - 1) as u32),
                    Arg::U32(steps),
                ];
                let k = cl.kernel(&prog, "sweep", &args)?;
                let global = [invocations as usize];
                let local = [WG as usize];
                let timing =
                    ctx.time(&ctx.plan(), &mut || cl.dispatch(&k, &global, Some(&local)))?;
                let got: Vec<u32> = cl.read(&out, invocations as usize)?;
                let got = got.iter().fold(0u32, |a, &w| a.wrapping_add(w));
                let times = (invocations * u64::from(steps)) / (bytes / 16);
                let want = sums[i].wrapping_mul(times as u32);
                Ok(sweep_result(
                    bytes,
                    steps,
                    invocations,
                    got,
                    want,
                    timing,
                    st,
                ))
            })
            .await;
        }
    }

    async fn chase(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult), sets: &[u64], st: &[Cache]) {
        let cl = ctx.cl;
        let mut rng = Rng::fresh();
        for &bytes in sets {
            let what = format!("hierarchy latency {}", size(bytes));
            super::super::step(ctx, emit, FigureKey::HierarchyLatency, &what, async {
                let prog = cl.build_source(&cl_sources()[0])?;
                let (words, start, want) = chain(bytes, &mut rng);
                let buf = cl.upload("hierarchy chain", &words)?;
                drop(words);
                let mut out = cl.buffer::<u32>("hierarchy out", 4)?;
                cl.poison(&mut out, 0xdead_beef)?;
                let args = [buf.arg(), out.arg(), Arg::U32(start), Arg::U32(CHASE_STEPS)];
                let k = cl.kernel(&prog, "chase", &args)?;
                let timing = ctx.time(&ctx.plan(), &mut || cl.dispatch(&k, &[1], Some(&[1])))?;
                let got: Vec<u32> = cl.read(&out, 1)?;
                Ok(chase_result(bytes, got[0], want, timing, st))
            })
            .await;
        }
    }

    pub async fn run_cl(ctx: &ClCtx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
        let stated = stated(&ctx.cl.info);
        let device = ctx.cl.max_alloc(ctx.host.ram_bytes / 4);
        let quick_sw = ctx.quick && ctx.cl.info.software;
        let sets = working_sets(&stated, limit(device, ctx.array_bytes, quick_sw));
        sweep(ctx, emit, &sets, &stated).await;
        chase(ctx, emit, &sets, &stated).await;
    }
}
#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The hierarchy probe, as registered in `probes::REGISTRY`.
pub struct Hierarchy;

impl super::Probe for Hierarchy {
    fn name(&self) -> &'static str {
        "hierarchy"
    }
    fn about(&self) -> &'static str {
        "Read bandwidth and load latency against working-set size: the caches' steps (GB/s, ns)."
    }
    fn budget_share(&self) -> f64 {
        0.1
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[FigureKey::HierarchyRead, FigureKey::HierarchyLatency]
    }
    fn kernels(&self) -> Vec<KernelSource> {
        vec![
            KernelSource::new("hierarchy sweep", WGSL, "sweep", &[("WG", f64::from(WG))]),
            KernelSource::new("hierarchy chase", WGSL, "chase", &[]),
        ]
    }
    run_with_async_fn!(opencl);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn working_sets_reach_four_times_the_largest_cache_within_the_limit() {
        let c = |b| Cache {
            level: "L3".into(),
            bytes: b,
            source: "t".into(),
        };
        let s = working_sets(&[c(260 << 20)], u64::MAX);
        assert_eq!(s.first(), Some(&(16 << 10)));
        assert_eq!(
            s.last(),
            Some(&(1 << 30)),
            "4 x 260 MiB, down to a power of two"
        );
        let s = working_sets(&[c(32 << 20)], 64 << 20);
        assert_eq!(s.last(), Some(&(64 << 20)), "the limit");
        assert_eq!(working_sets(&[], u64::MAX).last(), Some(&(1 << 30)));
    }

    #[test]
    fn the_chain_is_one_cycle_through_every_slot() {
        let bytes = 64 << 10;
        let (w, start, end) = chain(bytes, &mut Rng::new(5));
        let (mut at, mut seen) = (start, std::collections::HashSet::new());
        for step in 0..(bytes / SLOT) {
            assert!(seen.insert(at), "slot {at} again at step {step}");
            at = w[at as usize];
        }
        assert_eq!(at, start, "back at the start after every slot");
        let mut at = start;
        for _ in 0..CHASE_STEPS {
            at = w[at as usize];
        }
        assert_eq!(at, end);
    }

    #[test]
    fn sweeps_read_whole_working_sets_and_the_prefix_sums_agree() {
        let sets = [16 << 10, 32 << 10, 64 << 10];
        let (data, sums) = sweep_data(&sets);
        for (s, sum) in sets.iter().zip(&sums) {
            let want = data[..(*s / 4) as usize]
                .iter()
                .fold(0u32, |a, &w| a.wrapping_add(w));
            assert_eq!(*sum, want);
        }
        let inv = u64::from(GROUPS * WG);
        for &b in &sets {
            let st = u64::from(sweep_steps(b, inv, 1 << 20));
            assert_eq!((inv * st) % (b / 16), 0, "{b}");
            assert!(inv * st * 16 >= 4 * b);
        }
    }
}
