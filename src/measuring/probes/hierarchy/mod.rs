//! The memory hierarchy a buyer pays for: read bandwidth and dependent-load latency against
//! working-set size, from 16 KiB to four times the largest stated cache (read-only passes;
//! a pointer chase over a random single cycle of 64-byte slots), on both executors. The
//! steps of each curve are found and named by `crate::measuring::cache_levels` after the stated caches
//! (the host's, from sysfs, on a software adapter; the catalog's for a GPU), which each
//! result carries (`stated_caches`).
//!
//! Every point is checked: the sweep's per-invocation sums must add up to the exact
//! (wrapping) sum of what the grid read; the chase must stop at the slot the cycle gives.

use super::executor::{self, Executor};
use super::measure::TimingInfo;
use crate::figure::FigureKey;
use crate::measuring::cache_levels::{Cache, size};
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::Rng;
use crate::results::ProbeResult;
use anyhow::Result;

const WGSL: &str = include_str!("../../../../shaders/hierarchy.wgsl");
/// Invocations a work-group and work-groups a sweep: 2^18 invocations fill the largest GPUs.
const WG: u32 = 256;
const GROUPS: u32 = 1024;
const INVOCATIONS: u64 = (GROUPS * WG) as u64;
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

/// A point's result: its figure if what the device wrote (`got`) is what the data or the
/// cycle gives (`want`).
fn judged(
    res: ProbeResult,
    timing: TimingInfo,
    figure: impl Fn(f64) -> f64,
    (got, want): (u32, u32),
    detail: String,
    failed: &'static str,
) -> ProbeResult {
    let error = f64::from(got != want);
    super::judged_exactly(res, timing, figure, (error, detail), |_| failed.into())
}

fn sweep_result(
    bytes: u64,
    steps: u32,
    (got, want): (u32, u32),
    timing: TimingInfo,
    stated: &[Cache],
) -> ProbeResult {
    let read = INVOCATIONS as f64 * f64::from(steps) * 16.0;
    let res = point(FigureKey::HierarchyRead, bytes, stated)
        .param("bytes_read_per_dispatch", read)
        .param("invocations", INVOCATIONS);
    let detail =
        format!("wrapping sum of the invocations' sums {got:#010x}, of the data read {want:#010x}");
    let failed = "validation failed: the sums differ from the data read";
    judged(
        res,
        timing,
        |t| read / t * 1e-9,
        (got, want),
        detail,
        failed,
    )
}

fn chase_result(
    bytes: u64,
    (got, want): (u32, u32),
    timing: TimingInfo,
    stated: &[Cache],
) -> ProbeResult {
    let res = point(FigureKey::HierarchyLatency, bytes, stated)
        .param("loads_per_dispatch", CHASE_STEPS)
        .param("slot_bytes", SLOT);
    let detail = format!("stopped at word {got}, the cycle gives {want} after {CHASE_STEPS} loads");
    let failed = "validation failed: the chase did not stop where the cycle gives";
    let ns = |t| t / f64::from(CHASE_STEPS) * 1e9;
    judged(res, timing, ns, (got, want), detail, failed)
}

/// Bytes the sweep reads a dispatch at least: enough to time, little on a software adapter.
fn sweep_target(quick: bool) -> u64 {
    if quick { 64 << 20 } else { 256 << 20 }
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

/// What the hierarchy method asks of an executor: the sweep's kernel over its data and its
/// invocations' sums, the chase's over one chain, each bound for one working set,
/// dispatched and timed a batch at a time, and what they wrote read back.
#[allow(async_fn_in_trait)]
pub trait HierarchyExecutor: Executor {
    /// The sweep's data on the device, the buffer of its invocations' sums, its kernel.
    type Sweep;
    /// One kernel bound to its buffers for one working set, ready to dispatch.
    type Pass;
    /// The caches stated for the device (`stated`).
    fn stated(&self) -> Vec<Cache>;
    /// Whether the device is a software adapter (the host's CPU).
    fn software(&self) -> bool;
    /// The largest buffer the probe may use.
    fn max_bytes(&self) -> u64;
    /// Uploads the sweep's data, makes its sums (a word for each of the `INVOCATIONS`),
    /// builds its kernel.
    fn sweep(&self, data: &[u32]) -> Result<Self::Sweep>;
    /// The sweep over the data's first `mask + 1` vec4s, `steps` loads an invocation, its
    /// sums poisoned.
    fn sweep_pass(&self, s: &mut Self::Sweep, mask: u32, steps: u32) -> Result<Self::Pass>;
    /// Every invocation's sum, read back.
    async fn sweep_sums(&self, s: &Self::Sweep) -> Result<Vec<u32>>;
    /// The chase over `chain` from word `start`, `CHASE_STEPS` loads, where it stops
    /// poisoned (`top`: the largest working set's bytes).
    fn chase(&self, chain: &[u32], start: u32, top: u64) -> Result<Self::Pass>;
    /// The word where the chase stopped, read back.
    async fn chase_end(&self, p: &Self::Pass) -> Result<u32>;
    /// Runs `iters` dispatches as one batch; the seconds it took.
    async fn dispatch(&self, p: &Self::Pass, iters: u32) -> Result<f64>;
}

/// One sweep point: the working set read whole a number of times, the sums checked.
async fn sweep_point<E: HierarchyExecutor>(
    exec: &E,
    sweep: &mut E::Sweep,
    (bytes, sum): (u64, u32),
    stated: &[Cache],
) -> Result<ProbeResult> {
    let steps = sweep_steps(bytes, INVOCATIONS, sweep_target(exec.run_ctx().quick));
    let p = exec.sweep_pass(sweep, (bytes / 16 - 1) as u32, steps)?;
    let plan = exec.run_ctx().plan();
    let timing = executor::time(exec, &plan, async |iters| exec.dispatch(&p, iters).await).await?;
    let sums = exec.sweep_sums(sweep).await?;
    let got = sums.iter().fold(0u32, |a, &w| a.wrapping_add(w));
    let times = (INVOCATIONS * u64::from(steps)) / (bytes / 16);
    let want = sum.wrapping_mul(times as u32);
    Ok(sweep_result(bytes, steps, (got, want), timing, stated))
}

/// The read bandwidth at each working set; a sweep that cannot be set up fails once.
async fn sweep_on<E: HierarchyExecutor>(
    exec: &E,
    emit: &mut dyn FnMut(ProbeResult),
    sets: &[u64],
    stated: &[Cache],
) {
    let (data, sums) = sweep_data(sets);
    let mut sweep = match exec.sweep(&data) {
        Ok(s) => s,
        Err(e) => {
            let f = FigureKey::HierarchyRead;
            let failed = async { Err::<ProbeResult, _>(e) };
            return super::step(exec, emit, f, f.info().label, failed).await;
        }
    };
    drop(data);
    for (&bytes, &sum) in sets.iter().zip(&sums) {
        let what = format!("hierarchy read {}", size(bytes));
        let point = sweep_point(exec, &mut sweep, (bytes, sum), stated);
        super::step(exec, emit, FigureKey::HierarchyRead, &what, point).await;
    }
}

/// One chase point: a fresh cycle over the working set, where it stops checked.
async fn chase_point<E: HierarchyExecutor>(
    exec: &E,
    (bytes, top): (u64, u64),
    rng: &mut Rng,
    stated: &[Cache],
) -> Result<ProbeResult> {
    let (words, start, want) = chain(bytes, rng);
    let p = exec.chase(&words, start, top)?;
    drop(words);
    let plan = exec.run_ctx().plan();
    let timing = executor::time(exec, &plan, async |iters| exec.dispatch(&p, iters).await).await?;
    let got = exec.chase_end(&p).await?;
    Ok(chase_result(bytes, (got, want), timing, stated))
}

/// The dependent-load latency at each working set.
async fn chase_on<E: HierarchyExecutor>(
    exec: &E,
    emit: &mut dyn FnMut(ProbeResult),
    sets: &[u64],
    stated: &[Cache],
) {
    let top = sets.last().copied().unwrap_or(MIN_BYTES);
    let mut rng = Rng::fresh();
    for &bytes in sets {
        let what = format!("hierarchy latency {}", size(bytes));
        let point = chase_point(exec, (bytes, top), &mut rng, stated);
        super::step(exec, emit, FigureKey::HierarchyLatency, &what, point).await;
    }
}

/// Runs the probe on `exec`: both curves over the working sets its caches and limits give.
pub async fn run_on<E: HierarchyExecutor>(exec: &E, emit: &mut dyn FnMut(ProbeResult)) {
    let stated = exec.stated();
    let run = exec.run_ctx();
    let quick_sw = run.quick && exec.software();
    let sets = working_sets(&stated, limit(exec.max_bytes(), run.array_bytes, quick_sw));
    sweep_on(exec, emit, &sets, &stated).await;
    chase_on(exec, emit, &sets, &stated).await;
}

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
    run_with_async_fn!(run_on);
}

/// The kernels in OpenCL C (`shaders/opencl/hierarchy.cl`), one work-item a WGSL invocation.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl;
#[cfg(not(target_arch = "wasm32"))]
use on_opencl::cl_sources;
mod on_wgpu;
#[cfg(test)]
mod tests;
