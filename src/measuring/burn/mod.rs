//! `gpuvalue burn`: is the GPU I am paying for healthy? A vendor-neutral acceptance test on
//! either executor: a sustained FP32 matmul load whose every product is checked exactly,
//! a VRAM test, stability judged from throughput alone (windows after a warm-up, an idle gap
//! before the last), the steady rate against what the catalog says is paid for, and one
//! verdict per GPU (`health::Verdict`). The method lives here; `device.rs` (wgpu) and
//! `cl.rs` (OpenCL) only set up, dispatch and read back.

pub mod cl;
pub mod device;
pub mod vram;

use crate::health::{BurnRecord, Expectation, LoadRecord, Thresholds, Verdict, Window};
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::adapter::{self, Adapter, AdapterChoice, BackendChoice};
use crate::measuring::reference::Rng;
use crate::model::AdapterSummary;
use anyhow::{Result, bail};
use device::{BurnDevice, WgpuBurn};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A fault injected to test the tool itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BurnFault {
    /// One element of product N (counted from the start of the windows) is changed
    /// before its check: the run must FAIL with the miscompare counted.
    Miscompare(u64),
    /// One bit of one VRAM word flipped after it was written: FAIL with its address.
    VramFlip,
    /// From the middle window on, the load idles two thirds of the time, with scripted
    /// telemetry at full clocks and below the power limit: WARN, a fault, not a cap.
    Slowdown,
    /// The same slowdown with scripted telemetry at the power limit and the clock down:
    /// WARN, a cap, not a fault.
    PowerCap,
}

impl std::str::FromStr for BurnFault {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        if let Some(n) = t.strip_prefix("miscompare@") {
            return n
                .parse()
                .map(BurnFault::Miscompare)
                .map_err(|_| format!("miscompare@N: N must be a product count, got `{n}`"));
        }
        match t.as_str() {
            "miscompare" => Ok(BurnFault::Miscompare(3)),
            "vram-flip" => Ok(BurnFault::VramFlip),
            "slowdown" => Ok(BurnFault::Slowdown),
            "power-cap" => Ok(BurnFault::PowerCap),
            _ => Err(format!(
                "unknown fault `{s}`: expected miscompare[@N], vram-flip, slowdown or power-cap"
            )),
        }
    }
}

impl std::fmt::Display for BurnFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BurnFault::Miscompare(n) => write!(f, "miscompare@{n}"),
            BurnFault::VramFlip => f.write_str("vram-flip"),
            BurnFault::Slowdown => f.write_str("slowdown"),
            BurnFault::PowerCap => f.write_str("power-cap"),
        }
    }
}

/// Validated options of one burn.
#[derive(Clone, Debug)]
pub struct BurnOptions {
    pub adapter: AdapterChoice,
    pub backend: Option<BackendChoice>,
    pub quick: bool,
    /// Total seconds (the mode's default where None).
    pub duration: Option<f64>,
    pub allow_software: bool,
    pub quiet: bool,
    pub inject: Option<BurnFault>,
    /// Matrix size of the load (default: 512 on a software adapter, else 4096).
    pub size: Option<usize>,
    /// MiB of VRAM to test (default: 90% of the device's memory; a small share of host
    /// memory on a software adapter).
    pub vram_mib: Option<u64>,
    /// Where each window is published as it ends, for a live metrics endpoint.
    pub live: Option<Live>,
}

/// The burn so far, shared with a reader (`burn --metrics-port`): each adapter's windows
/// and its latest power and clock reading.
pub type Live = std::sync::Arc<std::sync::Mutex<Vec<LiveAdapter>>>;

/// One adapter's burn so far.
#[derive(Clone, Debug)]
pub struct LiveAdapter {
    pub adapter: AdapterSummary,
    pub windows: Vec<Window>,
    pub reading: Option<crate::measuring::telemetry::Reading>,
}

/// Publishes `windows` and the sampler's latest reading for `adapter`.
fn publish(
    live: Option<&Live>,
    adapter: &AdapterSummary,
    windows: &[Window],
    sampler: &crate::measuring::telemetry::Sampler,
) {
    let Some(mut v) = live.and_then(|l| l.lock().ok()) else {
        return;
    };
    let now = LiveAdapter {
        adapter: adapter.clone(),
        windows: windows.to_vec(),
        reading: sampler.latest(),
    };
    match v.iter_mut().find(|a| a.adapter.index == adapter.index) {
        Some(a) => *a = now,
        None => v.push(now),
    }
}

/// The run's phases, in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub mode: &'static str,
    pub planned_s: f64,
    pub warmup_s: f64,
    pub window_s: f64,
    pub windows: usize,
    pub gap_s: f64,
    pub vram_passes: u32,
}

impl Schedule {
    /// Standard: 10 minutes, a 30 s warm-up (power takes that long to settle), 20 s
    /// windows, a 15 s idle gap before the last (errors show when clocks switch), 3 VRAM
    /// passes. Quick: about 60 s (10 s warm-up, 8 s windows, 5 s gap, 1 pass). A
    /// --duration of 5 minutes or more keeps the standard phases with more windows; a
    /// shorter one scales the quick phases.
    pub fn new(quick: bool, duration: Option<f64>) -> Schedule {
        let total = duration.unwrap_or(if quick { 60.0 } else { 600.0 });
        let mode = match (duration, quick) {
            (Some(_), _) => "custom",
            (None, true) => "quick",
            (None, false) => "standard",
        };
        if total >= 300.0 {
            // 30 s of the total are left to the VRAM test.
            let windows = ((total - 30.0 - 15.0 - 30.0) / 20.0).floor().max(3.0) as usize;
            return Schedule {
                mode,
                planned_s: total,
                warmup_s: 30.0,
                window_s: 20.0,
                windows,
                gap_s: 15.0,
                vram_passes: 3,
            };
        }
        let f = total / 60.0;
        Schedule {
            mode,
            planned_s: total,
            warmup_s: 10.0 * f,
            window_s: 8.0 * f,
            windows: 5,
            gap_s: 5.0 * f,
            vram_passes: if total >= 120.0 { 2 } else { 1 },
        }
    }
}

/// One GPU's outcome: its adapter and record.
pub struct BurnOutcome {
    pub adapter: AdapterSummary,
    pub record: BurnRecord,
}

/// The worst verdict of the outcomes (ERROR when there are none).
pub fn worst(outcomes: &[BurnOutcome]) -> Verdict {
    outcomes
        .iter()
        .map(|o| o.record.verdict)
        .max()
        .unwrap_or(Verdict::Error)
}

/// What an adapter is held to: the figure the buyer pays for, where it is known (the value
/// layer knows it: the catalog's datasheet times the calibration).
pub type Expect<'a> = &'a dyn Fn(&AdapterSummary) -> Option<Expectation>;

/// Runs the acceptance test on every chosen adapter, one after the other.
pub fn run(
    opts: &BurnOptions,
    expect: Expect<'_>,
    progress: &dyn Fn(&str),
) -> Result<Vec<BurnOutcome>> {
    let list = adapter::enumerate(opts.backend);
    let chosen = list.select(&opts.adapter)?;
    let mut out = Vec::new();
    for idx in chosen {
        if crate::interrupt::requested() {
            break;
        }
        let info = list.summaries[idx].clone();
        let sched = Schedule::new(opts.quick, opts.duration);
        let mut record = empty_record(&sched, &info);
        record.injected = opts.inject.map(|f| f.to_string());
        if info.software && !opts.allow_software {
            record.error = Some(format!(
                "refused: adapter {} is a software adapter (the CPU: {} backend, driver {}), not a GPU; \
                 no GPU was found{}. --allow-software tests it anyway (tests and CI)",
                info.name,
                info.backend,
                if info.driver_info.is_empty() {
                    &info.driver
                } else {
                    &info.driver_info
                },
                if info.backend == "opencl" {
                    ""
                } else {
                    " through wgpu (on AMD Instinct try --backend opencl)"
                }
            ));
        } else {
            record.expectation = expect(&info);
            let t0 = Instant::now();
            let r = open_and_burn(
                &list.adapters[idx],
                &info,
                opts,
                &sched,
                &mut record,
                progress,
            );
            if let Err(e) = r {
                record.error = Some(format!("{e:#}"));
            }
            record.elapsed_s = t0.elapsed().as_secs_f64();
        }
        record.complete = record.complete && !crate::interrupt::requested();
        record.judge();
        out.push(BurnOutcome {
            adapter: info,
            record,
        });
    }
    let mut named: Vec<(String, BurnRecord)> = out
        .iter()
        .map(|o| (gpu_name(&o.adapter), o.record.clone()))
        .collect();
    crate::health::sibling_reasons(&mut named);
    for (o, (_, r)) in out.iter_mut().zip(named) {
        o.record = r;
    }
    Ok(out)
}

/// Saves each GPU's verdict as a results file of its own (no probes, the burn record):
/// one file per GPU (the adapter's index before the extension when several).
pub fn save(out: &std::path::Path, outcomes: &[BurnOutcome]) -> Result<()> {
    let host = crate::host::HostInfo::detect();
    for o in outcomes {
        let path = if outcomes.len() > 1 {
            let stem = out.file_stem().unwrap_or_default().to_string_lossy();
            out.with_file_name(format!("{stem}-{}.json", o.adapter.index))
        } else {
            out.to_path_buf()
        };
        let options = crate::results::RunOptions {
            quick: o.record.mode == "quick",
            probes: Vec::new(),
            sizes: None,
            array_mib: None,
            time_budget_s: o.record.planned_s,
            trusted_shaders: true,
            timestamps: false,
            args: std::env::args().collect(),
        };
        let mut file = crate::results::ResultsFile::new(host.clone(), o.adapter.clone(), options);
        file.complete = o.record.complete;
        file.interrupted = !o.record.complete;
        file.burn = Some(o.record.clone());
        file.save(&path)?;
    }
    Ok(())
}

/// An adapter as the verdict names it: its name and PCI bus id where known.
pub fn gpu_name(a: &AdapterSummary) -> String {
    match &a.pci_bus_id {
        Some(bus) => format!("{} ({bus})", a.name),
        None => a.name.clone(),
    }
}

fn empty_record(s: &Schedule, info: &AdapterSummary) -> BurnRecord {
    BurnRecord {
        mode: s.mode.into(),
        planned_s: s.planned_s,
        elapsed_s: 0.0,
        complete: true,
        thresholds: if info.software {
            Thresholds::software()
        } else {
            Thresholds::hardware()
        },
        load: None,
        stability: None,
        vram: None,
        expectation: None,
        error: None,
        injected: None,
        verdict: Verdict::Error,
        reasons: Vec::new(),
        telemetry: None,
        covered: String::new(),
    }
}

fn open_and_burn(
    adapter: &Adapter,
    info: &AdapterSummary,
    opts: &BurnOptions,
    sched: &Schedule,
    record: &mut BurnRecord,
    progress: &dyn Fn(&str),
) -> Result<()> {
    match adapter {
        Adapter::Wgpu(a) => {
            let gpu = pollster::block_on(Gpu::open(a.clone(), info.clone()))?;
            let mut dev = WgpuBurn::new(gpu);
            burn_one(&mut dev, opts, sched, record, progress)
        }
        Adapter::OpenCl(d) => {
            let cl = crate::measuring::gpu::opencl::ClGpu::open((**d).clone(), info.clone())?;
            let mut dev = cl::ClBurn::new(&cl)?;
            burn_one(&mut dev, opts, sched, record, progress)
        }
    }
}

/// The load's inputs: entries in {-2, -1, 1, 2} (no zeros: zeros run faster and hide
/// unwritten outputs), so every product and partial sum is an integer below 2^24 for
/// n <= 2^21 and exact in any summation order; the reference is summed in integers.
pub fn exact_inputs(n: usize, rng: &mut Rng) -> (Vec<f32>, Vec<f32>, Vec<u32>) {
    const VALUES: [i32; 4] = [-2, -1, 1, 2];
    let mut draw = |len: usize| -> Vec<i32> {
        (0..len)
            .map(|_| VALUES[(rng.next_u64() >> 62) as usize])
            .collect()
    };
    let (a, b) = (draw(n * n), draw(n * n));
    let want = integer_product(n, &a, &b);
    let f = |v: &[i32]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let bits = want.iter().map(|&x| (x as f32).to_bits()).collect();
    (f(&a), f(&b), bits)
}

/// C = A B in integers, rows split over the host's threads.
fn integer_product(n: usize, a: &[i32], b: &[i32]) -> Vec<i32> {
    let mut c = vec![0i32; n * n];
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let rows_per = n.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (chunk, rows) in c.chunks_mut(rows_per * n).enumerate() {
            s.spawn(move || {
                for (ri, row) in rows.chunks_mut(n).enumerate() {
                    let i = chunk * rows_per + ri;
                    for k in 0..n {
                        let aik = a[i * n + k];
                        let brow = &b[k * n..(k + 1) * n];
                        for (x, y) in row.iter_mut().zip(brow) {
                            *x += aik * y;
                        }
                    }
                }
            });
        }
    });
    c
}

/// The load size: --size, else 512 on a software adapter and 4096 on a GPU (an n^3 product
/// long enough to keep any GPU busy for tens of milliseconds).
fn load_size(opts: &BurnOptions, info: &AdapterSummary) -> usize {
    opts.size.unwrap_or(if info.software { 512 } else { 4096 })
}

fn burn_one(
    dev: &mut dyn BurnDevice,
    opts: &BurnOptions,
    sched: &Schedule,
    record: &mut BurnRecord,
    progress: &dyn Fn(&str),
) -> Result<()> {
    let n = load_size(opts, dev.info());
    progress(&format!(
        "{}: preparing the {n}x{n} exact load",
        dev.info().name
    ));
    let (a, b, want) = exact_inputs(n, &mut Rng::fresh());
    let slowed = Arc::new(AtomicBool::new(false));
    let board_w = record.expectation.as_ref().and_then(|e| e.board_w);
    let mut sampler = sampler_for(dev.info(), opts.inject, &slowed, board_w);
    let t0 = Instant::now();
    let warm_end = t0 + Duration::from_secs_f64(sched.warmup_s);
    let kernel = dev.prepare_load(
        n,
        &a,
        &b,
        &want,
        t0 + device::tuning_share(Duration::from_secs_f64(sched.warmup_s)),
    )?;
    let mut load = LoadRecord {
        kernel,
        size: n,
        inputs: "integers in {-2,-1,1,2}: every sum exact in any order, checked bit for bit".into(),
        warmup_s: sched.warmup_s,
        idle_gap_s: sched.gap_s,
        windows: Vec::new(),
    };
    progress("warming up");
    let iters = warm_up(dev, warm_end)?;
    // The warm-up's checks count too: a bad GPU is bad from the first product.
    let warm = dev.take_counts()?;
    let running = Running {
        n,
        want: &want,
        iters,
        warm,
        t0,
        sampler: &sampler,
        slowed: &slowed,
    };
    let all = all_windows(dev, opts, sched, &running, &mut load.windows, progress)?;
    record.telemetry = Some(sampler.finish());
    if !all {
        record.complete = false;
    }
    dev.release_load();
    let covered_load = format!(
        "FP32 matmul {n}x{n} exact-checked for {:.0} s over {} windows",
        load.seconds(),
        load.windows.len()
    );
    record.load = Some(load);
    if crate::interrupt::requested() {
        record.complete = false;
        record.covered = covered_load;
        return Ok(());
    }
    progress("VRAM test");
    vram_after_load(dev, opts, sched, record, covered_load, progress)
}

/// The load as the windows run it: its size, the product every run must write, the batch
/// size the warm-up found, the warm-up's miscompares and non-finite values, and when it
/// started.
struct Running<'a> {
    n: usize,
    want: &'a [u32],
    iters: u32,
    warm: (u64, u64),
    t0: Instant,
    sampler: &'a crate::measuring::telemetry::Sampler,
    /// Set when an injected slowdown starts (the scripted telemetry follows it).
    slowed: &'a AtomicBool,
}

/// The sampler beside a burn: the device's sources, or with an injected slowdown or power
/// cap the script that reports what a GPU would beside it (named as a script).
fn sampler_for(
    info: &AdapterSummary,
    inject: Option<BurnFault>,
    slowed: &Arc<AtomicBool>,
    board_w: Option<f64>,
) -> crate::measuring::telemetry::Sampler {
    use crate::measuring::telemetry::{PERIOD, Sampler, scripted::Scripted};
    match inject {
        Some(f @ (BurnFault::Slowdown | BurnFault::PowerCap)) => {
            let s = Scripted {
                slowed: slowed.clone(),
                cap: f == BurnFault::PowerCap,
            };
            let note = s.note();
            Sampler::start(Some(Box::new(s)), vec![note], PERIOD)
        }
        _ => Sampler::for_adapter(
            info,
            &crate::measuring::telemetry::live_root(),
            PERIOD,
            board_w,
        ),
    }
}

/// The schedule's windows one after another (an idle gap before the last where it has one),
/// each checked against the host; false where an interrupt stopped them.
fn all_windows(
    dev: &mut dyn BurnDevice,
    opts: &BurnOptions,
    sched: &Schedule,
    at: &Running<'_>,
    out: &mut Vec<Window>,
    progress: &dyn Fn(&str),
) -> Result<bool> {
    let flops = 2.0 * (at.n as f64).powi(3);
    let mut done = 0u64;
    for w in 0..sched.windows {
        if crate::interrupt::requested() {
            return Ok(false);
        }
        let last = w + 1 == sched.windows;
        if last && sched.gap_s > 0.0 {
            progress(&format!(
                "idle gap of {:.0} s before the last window",
                sched.gap_s
            ));
            std::thread::sleep(Duration::from_secs_f64(sched.gap_s));
        }
        progress(&format!("window {}/{}", w + 1, sched.windows));
        let slow = matches!(opts.inject, Some(BurnFault::Slowdown | BurnFault::PowerCap))
            && w >= sched.windows / 2;
        if slow {
            at.slowed.store(true, Ordering::Relaxed);
        }
        let from = at.sampler.now();
        let mut win = window(
            dev,
            opts,
            w,
            sched.window_s,
            at.iters,
            &mut done,
            slow,
            at.t0,
        )?;
        win.power = at.sampler.window(from, at.sampler.now());
        win.gflops = win.iterations as f64 * flops / win.seconds * 1e-9;
        win.after_idle = last && sched.gap_s > 0.0;
        if w == 0 {
            win.miscompares += at.warm.0;
            win.non_finite += at.warm.1;
        }
        let c = dev.output()?;
        win.host_mismatches = c
            .iter()
            .zip(at.want)
            .filter(|(x, w)| canonical(x.to_bits()) != **w)
            .count() as u64;
        out.push(win);
        publish(opts.live.as_ref(), dev.info(), out, at.sampler);
    }
    Ok(true)
}

/// Warm-up: batches until `end`, doubling the batch until one lasts 100 ms or more; the
/// batch size the windows then run.
fn warm_up(dev: &mut dyn BurnDevice, end: Instant) -> Result<u32> {
    let mut iters = 1u32;
    while Instant::now() < end && !crate::interrupt::requested() {
        let t = Instant::now();
        dev.run(iters, None)?;
        if t.elapsed() < Duration::from_millis(100) && iters < 1 << 16 {
            iters *= 2;
        }
    }
    Ok(iters)
}

/// The VRAM test after the load, and what the whole burn covered, in words.
fn vram_after_load(
    dev: &mut dyn BurnDevice,
    opts: &BurnOptions,
    sched: &Schedule,
    record: &mut BurnRecord,
    covered_load: String,
    progress: &dyn Fn(&str),
) -> Result<()> {
    let v = vram::test(dev, opts, sched, progress)?;
    record.covered = format!(
        "{covered_load}; VRAM {} x {} pass(es){}",
        v.describe(),
        v.passes,
        if v.retention_errors == 0 {
            ", retention window re-read each pass"
        } else {
            ""
        }
    );
    record.vram = Some(v);
    Ok(())
}

fn canonical(bits: u32) -> u32 {
    if bits == 0x8000_0000 { 0 } else { bits }
}

/// One window: batches of `iters` products until `seconds` pass; with `slow`, the load
/// idles two thirds of the window (the injected slowdown: a third of the rate, a drop that
/// the noise of a shared CPU cannot hide).
#[allow(clippy::too_many_arguments)]
fn window(
    dev: &mut dyn BurnDevice,
    opts: &BurnOptions,
    index: usize,
    seconds: f64,
    iters: u32,
    done: &mut u64,
    slow: bool,
    t0: Instant,
) -> Result<Window> {
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut n = 0u64;
    while Instant::now() < end {
        let corrupt = match opts.inject {
            Some(BurnFault::Miscompare(k)) if (*done..*done + u64::from(iters)).contains(&k) => {
                Some((k - *done) as u32)
            }
            _ => None,
        };
        let t = Instant::now();
        dev.run(iters, corrupt)?;
        if slow {
            std::thread::sleep(t.elapsed() * 2);
        }
        n += u64::from(iters);
        *done += u64::from(iters);
        if crate::interrupt::requested() {
            break;
        }
    }
    let (bad, nan) = dev.take_counts()?;
    Ok(Window {
        index,
        start_s: start.duration_since(t0).as_secs_f64(),
        seconds: start.elapsed().as_secs_f64(),
        iterations: n,
        gflops: 0.0,
        miscompares: bad,
        non_finite: nan,
        host_mismatches: 0,
        after_idle: false,
        power: None,
    })
}

/// Refuses options that cannot work before anything runs.
pub fn check_options(opts: &BurnOptions) -> Result<()> {
    if let Some(n) = opts.size
        && !(64..=16384).contains(&n)
    {
        bail!(
            "--size {n}: expected 64..16384 (the exact inputs need n <= 2^21; buffers bound the rest)"
        );
    }
    if let Some(d) = opts.duration
        && d < 5.0
    {
        bail!("--duration {d}: expected at least 5 seconds (a warm-up, windows and an idle gap)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_inputs_give_the_reference_a_float_product_reaches_in_any_order() {
        let n = 37;
        let (a, b, want) = exact_inputs(n, &mut Rng::new(3));
        assert!(
            a.iter()
                .chain(&b)
                .all(|x| [-2.0, -1.0, 1.0, 2.0].contains(x))
        );
        for i in [0, 5, 36] {
            for j in [0, 17, 36] {
                // Forwards and backwards in f32: the same bits (every partial sum exact).
                let fwd = (0..n).fold(0.0f32, |s, k| a[i * n + k].mul_add(b[k * n + j], s));
                let bwd = (0..n)
                    .rev()
                    .fold(0.0f32, |s, k| s + a[i * n + k] * b[k * n + j]);
                assert_eq!(fwd.to_bits(), want[i * n + j]);
                assert_eq!(canonical(bwd.to_bits()), want[i * n + j]);
            }
        }
    }

    #[test]
    fn schedules_follow_the_modes() {
        let q = Schedule::new(true, None);
        assert_eq!(
            (q.mode, q.warmup_s, q.window_s, q.windows, q.gap_s),
            ("quick", 10.0, 8.0, 5, 5.0)
        );
        assert!(q.warmup_s + q.window_s * q.windows as f64 + q.gap_s <= 60.0);
        let s = Schedule::new(false, None);
        assert_eq!(
            (s.mode, s.warmup_s, s.window_s, s.gap_s, s.vram_passes),
            ("standard", 30.0, 20.0, 15.0, 3)
        );
        assert!(s.warmup_s + s.window_s * s.windows as f64 + s.gap_s <= 600.0);
        let long = Schedule::new(false, Some(3600.0));
        assert!(long.windows > 100 && long.window_s == 20.0);
        let short = Schedule::new(false, Some(12.0));
        assert_eq!(short.mode, "custom");
        assert!((short.window_s - 1.6).abs() < 1e-9);
    }

    #[test]
    fn faults_parse_and_unknown_ones_say_what_is_expected() {
        assert_eq!("miscompare@7".parse(), Ok(BurnFault::Miscompare(7)));
        assert_eq!("VRAM-FLIP".parse(), Ok(BurnFault::VramFlip));
        assert_eq!("power-cap".parse(), Ok(BurnFault::PowerCap));
        let e = "melt".parse::<BurnFault>().unwrap_err();
        assert!(
            e.contains("miscompare[@N], vram-flip, slowdown or power-cap"),
            "{e}"
        );
    }
}
