//! What the GPUs of one node do at once (`gpuvalue transfers`): host-to-device and
//! device-to-host copies on each GPU alone and then on every GPU at the same time (a PCIe
//! switch or host link the GPUs share shows as a together rate below the alone one), and
//! GPU-to-GPU copies between every ordered pair.
//!
//! Method. One thread per GPU opens it, allocates one device buffer and keeps two host
//! buffers (its data, filled from a seeded generator, and a destination). All threads walk
//! the same schedule of steps; every run of every step begins at a barrier, so a "together"
//! run starts on every GPU at the same moment and an "alone" run has the others idle. Each
//! copy is timed on the wall clock (what the host waits for), one warm-up run first and not
//! counted. Every copy is checked bit for bit: a device-to-host copy on every run, a
//! host-to-device copy by reading the buffer back after the step, a GPU-to-GPU copy by
//! reading the destination back. A failed copy or check withholds the figure, never shows
//! one. GPU-to-GPU copies are host-staged (device-to-host on the source into one host
//! buffer, then host-to-device on the destination; the figure is bytes over the two copies'
//! times) and labelled so: neither executor has a direct path between two devices.
//!
//! A thread whose device fails keeps meeting the barriers without copying, so the others
//! finish; its error is reported on its row.

pub mod link;

use crate::clock::Instant;
use crate::measuring::gpu::adapter::{self, AdapterChoice, AdapterList, BackendChoice};
use crate::measuring::reference::Rng;
use crate::model::AdapterSummary;
use crate::stats::Summary;
use anyhow::{Result, bail};
use serde::Serialize;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Barrier, Mutex};

/// Untimed runs before the timed ones, per step.
pub const WARMUP_RUNS: usize = 1;

/// What `gpuvalue transfers` was asked for.
#[derive(Clone, Debug)]
pub struct Options {
    pub adapter: AdapterChoice,
    pub backend: Option<BackendChoice>,
    /// Bytes per copy (`--mib`); default 64 MiB with `quick`, else 256 MiB.
    pub mib: Option<u64>,
    /// Timed runs per step; default 5 with `quick`, else 10.
    pub runs: Option<usize>,
    pub quick: bool,
    pub allow_software: bool,
}

/// Which way a copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    ToDevice,
    ToHost,
}

impl Direction {
    pub fn label(self) -> &'static str {
        match self {
            Direction::ToDevice => "host-to-device",
            Direction::ToHost => "device-to-host",
        }
    }
}

/// One step of the schedule every thread walks (GPUs by their slot in the chosen list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Alone(Direction, usize),
    Together(Direction),
    /// Host-staged copy from the first GPU's buffer to the second's.
    Pair(usize, usize),
}

/// A copy's check.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub passed: bool,
    pub detail: String,
}

/// A measured rate and the check behind it.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// GB/s (1e9 bytes per second) over the timed runs; absent when a copy or its check failed.
    pub gbs: Option<Summary>,
    pub check: Check,
}

/// One direction on one GPU: alone, and while every other GPU copies the same way.
#[derive(Clone, Debug, Serialize)]
pub struct Way {
    pub path: String,
    pub alone: Figure,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub together: Option<Figure>,
    /// Median together over median alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub together_vs_alone: Option<f64>,
}

/// One GPU's row.
#[derive(Clone, Debug, Serialize)]
pub struct GpuLinks {
    pub index: usize,
    pub name: String,
    pub backend: String,
    pub software: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    pub to_device: Way,
    pub to_host: Way,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl GpuLinks {
    /// This GPU's figures in one direction.
    pub fn way(&self, d: Direction) -> &Way {
        match d {
            Direction::ToDevice => &self.to_device,
            Direction::ToHost => &self.to_host,
        }
    }
}

/// The node's total in one direction with every GPU copying at once.
#[derive(Clone, Debug, Serialize)]
pub struct Aggregate {
    pub direction: Direction,
    pub gpus: usize,
    /// The GPUs' alone medians added up: what the node would move if nothing were shared.
    pub sum_alone_gbs: Option<f64>,
    /// Per run, the bytes every GPU moved over the span from the first start to the last end.
    pub together_gbs: Option<Summary>,
    /// Median together over the sum of the alone medians.
    pub ratio: Option<f64>,
}

/// A GPU-to-GPU copy (adapter indices as `gpuvalue devices` numbers them).
#[derive(Clone, Debug, Serialize)]
pub struct PairCopy {
    pub from: usize,
    pub to: usize,
    pub path: String,
    pub figure: Figure,
}

/// Everything `gpuvalue transfers` measured.
#[derive(Clone, Debug, Serialize)]
pub struct Transfers {
    pub cpu_model: String,
    pub bytes: u64,
    pub runs: usize,
    pub warmup_runs: usize,
    pub timing: String,
    pub gpus: Vec<GpuLinks>,
    pub together: Vec<Aggregate>,
    pub pairs: Vec<PairCopy>,
    pub notes: Vec<String>,
}

impl Transfers {
    /// True when every GPU opened and every copy and check passed.
    pub fn all_passed(&self) -> bool {
        let way =
            |w: &Way| w.alone.check.passed && w.together.as_ref().is_none_or(|f| f.check.passed);
        self.gpus
            .iter()
            .all(|g| g.error.is_none() && way(&g.to_device) && way(&g.to_host))
            && self.pairs.iter().all(|p| p.figure.check.passed)
    }
}

/// How GPU-to-GPU copies are made, in words.
pub const STAGED: &str = "host-staged: device-to-host on the source into pageable host memory, then host-to-device on the destination";

/// Runs the schedule on the chosen GPUs, one thread each.
pub fn run(opts: &Options, progress: &(dyn Fn(&str) + Sync)) -> Result<Transfers> {
    if opts.runs == Some(0) {
        bail!("--runs must be 1 or more");
    }
    let list = adapter::enumerate(opts.backend);
    let (chosen, mut notes) = choose(&list, opts)?;
    let host = crate::host::HostInfo::detect();
    let infos: Vec<&AdapterSummary> = chosen.iter().map(|&i| &list.summaries[i]).collect();
    let bytes = copy_bytes(opts, &infos, host.ram_bytes, &mut notes)?;
    let runs = opts.runs.unwrap_or(if opts.quick { 5 } else { 10 });
    let steps = schedule(chosen.len());
    let floats = (bytes / 4) as usize;
    let openers: Vec<Opener<'_>> = chosen
        .iter()
        .map(|&i| {
            let (a, info) = (&list.adapters[i], &list.summaries[i]);
            Box::new(move || link::open(a, info, floats)) as Opener<'_>
        })
        .collect();
    let index: Vec<usize> = infos.iter().map(|s| s.index).collect();
    let outs = walk(&openers, &steps, runs, floats, index, progress);
    let n = chosen.len();
    if n == 1 {
        notes.push(
            "one GPU: nothing runs at the same time and there is no GPU-to-GPU copy; \
             the together figures need two or more"
                .into(),
        );
    }
    let p2p = |s: &&AdapterSummary| {
        s.opencl
            .as_ref()
            .is_some_and(|o| o.extensions.iter().any(|e| e == "cl_amd_copy_buffer_p2p"))
    };
    if n >= 2 && infos.iter().all(p2p) {
        notes.push(
            "these devices offer cl_amd_copy_buffer_p2p (direct GPU-to-GPU copies), which \
             gpuvalue does not use yet: the GPU-to-GPU figures are host-staged, a floor under \
             what direct copies reach"
                .into(),
        );
    }
    if infos.iter().any(|s| s.software) {
        notes.push(
            "software adapters are the CPU: their copies are copies within host memory, \
             and two of them share the host's memory bandwidth"
                .into(),
        );
    }
    let result = Results {
        steps: &steps,
        outs: &outs,
        bytes,
        runs,
    };
    let gpus = infos
        .iter()
        .enumerate()
        .map(|(me, info)| result.gpu(me, info))
        .collect::<Vec<_>>();
    let together = if n >= 2 {
        [Direction::ToDevice, Direction::ToHost]
            .into_iter()
            .map(|d| result.aggregate(d, &gpus))
            .collect()
    } else {
        Vec::new()
    };
    let pairs = result.pairs(&infos);
    Ok(Transfers {
        cpu_model: host.cpu_model,
        bytes,
        runs,
        warmup_runs: WARMUP_RUNS,
        timing: format!(
            "wall clock per copy; every run starts at a barrier across the GPUs; {runs} timed run(s) after {WARMUP_RUNS} warm-up per step; median/min/max"
        ),
        gpus,
        together,
        pairs,
        notes,
    })
}

/// The GPUs measured: the choice, one API only (the first usable adapter's backend, unless
/// `--backend` named one), software adapters only when allowed. Notes say what was left out.
fn choose(list: &AdapterList, opts: &Options) -> Result<(Vec<usize>, Vec<String>)> {
    let picked = list.select(&opts.adapter)?;
    let mut notes = Vec::new();
    let mut out = Vec::new();
    let mut backend: Option<String> = None;
    for i in picked {
        let s = &list.summaries[i];
        if s.software && !opts.allow_software {
            notes.push(format!(
                "{} ({}) left out: a software adapter (the CPU); --allow-software measures it",
                s.name, s.backend
            ));
            continue;
        }
        let api = backend.get_or_insert_with(|| s.backend.clone());
        if *api != s.backend {
            notes.push(format!(
                "{} ({}) left out: every GPU is measured through one API ({api}); --backend picks another",
                s.name, s.backend
            ));
            continue;
        }
        out.push(i);
    }
    if out.is_empty() {
        bail!(
            "no GPU to measure: {}",
            if notes.is_empty() {
                "the choice named none".to_string()
            } else {
                notes.join("; ")
            }
        );
    }
    Ok((out, notes))
}

/// Bytes per copy: `--mib`, else 64 MiB (quick) or 256 MiB, within every GPU's largest
/// buffer and a share of host memory (each GPU keeps three host buffers of this size, one
/// staging buffer is shared, and a software adapter's buffers are host memory too).
fn copy_bytes(
    opts: &Options,
    infos: &[&AdapterSummary],
    ram: u64,
    notes: &mut Vec<String>,
) -> Result<u64> {
    let want = opts
        .mib
        .map_or(if opts.quick { 64 << 20 } else { 256 << 20 }, |m| m << 20);
    if want == 0 {
        bail!("--mib must be 1 or more");
    }
    let device = infos
        .iter()
        .map(|s| s.limits.max_buffer_size)
        .min()
        .unwrap_or(want);
    let host = if ram > 0 {
        ram / 2 / (5 * infos.len() as u64 + 1)
    } else {
        want
    };
    let bytes = want.min(device).min(host) / 4096 * 4096;
    if bytes == 0 {
        bail!("no copy size fits: largest buffer {device} bytes, host share {host} bytes");
    }
    if bytes < want {
        notes.push(format!(
            "copies of {} MiB, not {} MiB: the largest buffer every GPU takes, or a share of host memory",
            bytes >> 20,
            want >> 20
        ));
    }
    Ok(bytes)
}

/// Each GPU alone then all together, host-to-device then device-to-host, then every ordered
/// pair.
fn schedule(n: usize) -> Vec<Step> {
    let mut v = Vec::new();
    for d in [Direction::ToDevice, Direction::ToHost] {
        v.extend((0..n).map(|s| Step::Alone(d, s)));
        if n >= 2 {
            v.push(Step::Together(d));
        }
    }
    for a in 0..n {
        v.extend((0..n).filter(|&b| b != a).map(|b| Step::Pair(a, b)));
    }
    v
}

/// A step in words, GPUs by their `gpuvalue devices` index.
fn describe(step: Step, index: &[usize]) -> String {
    match step {
        Step::Alone(d, s) => format!("{} on #{} alone", d.label(), index[s]),
        Step::Together(d) => format!("{} on all {} GPUs at once", d.label(), index.len()),
        Step::Pair(a, b) => format!("#{} to #{} (host-staged)", index[a], index[b]),
    }
}

/// What the threads share.
struct Shared<'a> {
    steps: &'a [Step],
    runs: usize,
    floats: usize,
    seed: u64,
    barrier: Barrier,
    /// The host buffer a GPU-to-GPU copy is staged through, and whether the source's copy
    /// into it succeeded this run.
    staging: Mutex<(Vec<f32>, bool)>,
    epoch: Instant,
    progress: &'a (dyn Fn(&str) + Sync),
    /// Each slot's adapter index, for progress lines.
    index: Vec<usize>,
}

impl Shared<'_> {
    fn data(&self, slot: usize) -> Vec<f32> {
        Rng::new(self.seed.wrapping_add(slot as u64)).fill_f32(self.floats)
    }
}

/// What one thread recorded.
#[derive(Default)]
struct Worker {
    /// (step, timed run) -> (start, end) in seconds since the common epoch.
    spans: HashMap<(usize, usize), (f64, f64)>,
    checks: HashMap<usize, Check>,
    error: Option<String>,
}

impl Worker {
    fn failed(why: &str) -> Worker {
        Worker {
            error: Some(why.into()),
            ..Worker::default()
        }
    }
}

/// Number of elements whose bits differ.
fn differ(a: &[f32], b: &[f32]) -> usize {
    a.iter()
        .zip(b)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count()
        + a.len().abs_diff(b.len())
}

fn check(bad: usize, of: usize, what: &str) -> Check {
    Check {
        passed: bad == 0,
        detail: if bad == 0 {
            what.to_string()
        } else {
            format!("{what}: {bad} of {of} elements differ")
        },
    }
}

/// A device that failed stops copying; its thread still meets every barrier.
struct Slot {
    link: Option<Box<dyn link::Link>>,
    error: Option<String>,
}

impl Slot {
    /// Runs one copy (a panic in the driver counts as its error), timed since the epoch.
    fn copy(
        &mut self,
        epoch: Instant,
        f: impl FnOnce(&mut dyn link::Link) -> Result<()>,
    ) -> Option<(f64, f64)> {
        let link = self.link.as_deref_mut()?;
        if crate::interrupt::requested() {
            self.fail("interrupted".into());
            return None;
        }
        let t0 = epoch.elapsed().as_secs_f64();
        let r = catch_unwind(AssertUnwindSafe(|| f(link)));
        let t1 = epoch.elapsed().as_secs_f64();
        match r {
            Ok(Ok(())) => Some((t0, t1)),
            Ok(Err(e)) => {
                self.fail(format!("{e:#}"));
                None
            }
            Err(_) => {
                self.fail("the driver panicked during a copy".into());
                None
            }
        }
    }

    fn fail(&mut self, e: String) {
        // Releasing a device after a driver error may panic too: contained, so that this
        // thread goes on meeting the barriers.
        let link = self.link.take();
        let _ = catch_unwind(AssertUnwindSafe(|| drop(link)));
        self.error.get_or_insert(e);
    }
}

/// Opens one GPU's link (on the thread that will use it).
type Opener<'a> = Box<dyn Fn() -> Result<Box<dyn link::Link>> + Sync + 'a>;

/// One thread a GPU, every thread walking `steps`; what each recorded.
fn walk(
    openers: &[Opener<'_>],
    steps: &[Step],
    runs: usize,
    floats: usize,
    index: Vec<usize>,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<Worker> {
    let shared = Shared {
        steps,
        runs,
        floats,
        seed: crate::clock::since_epoch().as_nanos() as u64,
        barrier: Barrier::new(openers.len()),
        staging: Mutex::new((Vec::new(), false)),
        epoch: Instant::now(),
        progress,
        index,
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = openers
            .iter()
            .enumerate()
            .map(|(me, open)| {
                let sh = &shared;
                s.spawn(move || worker(me, open.as_ref(), sh))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Worker::failed("the thread panicked"))
            })
            .collect()
    })
}

/// One GPU's thread: opens the device, puts its data there, then walks the schedule.
fn worker(
    me: usize,
    open: &(dyn Fn() -> Result<Box<dyn link::Link>> + Sync),
    sh: &Shared<'_>,
) -> Worker {
    let data = sh.data(me);
    let opened = catch_unwind(AssertUnwindSafe(|| {
        let mut l = open()?;
        l.put(&data)?;
        Ok::<_, anyhow::Error>(l)
    }));
    let slot = match opened {
        Ok(Ok(l)) => Slot {
            link: Some(l),
            error: None,
        },
        Ok(Err(e)) => Slot {
            link: None,
            error: Some(format!("{e:#}")),
        },
        Err(_) => Slot {
            link: None,
            error: Some("the driver panicked while opening the device".into()),
        },
    };
    let mut t = Thread {
        me,
        host: vec![0f32; sh.floats],
        other: data.iter().map(|x| f32::from_bits(!x.to_bits())).collect(),
        data,
        slot,
        w: Worker::default(),
    };
    sh.barrier.wait();
    for (k, &step) in sh.steps.iter().enumerate() {
        if me == 0 {
            let n = sh.steps.len();
            (sh.progress)(&format!("[{}/{n}] {}", k + 1, describe(step, &sh.index)));
        }
        match step {
            Step::Alone(d, s) => t.way(d, s == me, k, sh),
            Step::Together(d) => t.way(d, true, k, sh),
            Step::Pair(a, b) => t.pair((a, b), k, sh),
        }
    }
    t.w.error = t.slot.error;
    t.w
}

/// One GPU's thread's state.
struct Thread {
    me: usize,
    /// What this GPU's buffer holds (put there at the start and after every change).
    data: Vec<f32>,
    /// `data` with every bit flipped: runs alternate the two, the last run `data`, so a copy
    /// that did nothing leaves the other pattern behind and fails its check.
    other: Vec<f32>,
    /// Where copies out land.
    host: Vec<f32>,
    slot: Slot,
    w: Worker,
}

impl Thread {
    /// One direction's step: every run starts at the barrier; active threads copy. Runs
    /// alternate `data` and `other`, the last one `other` (the buffer held `data` before:
    /// a copy that did nothing shows): host-to-device checks the buffer after the step;
    /// device-to-host puts each run's pattern first (untimed, before the barrier) and checks
    /// every copy. Either way the buffer gets `data` back at the end (untimed).
    fn way(&mut self, d: Direction, active: bool, k: usize, sh: &Shared<'_>) {
        let (data, other, host, slot) = (&self.data, &self.other, &mut self.host, &mut self.slot);
        let total = WARMUP_RUNS + sh.runs;
        let pattern = |run: usize| {
            if (total - 1 - run).is_multiple_of(2) {
                other
            } else {
                data
            }
        };
        let mut bad_runs = 0;
        for run in 0..total {
            let want = pattern(run);
            if active && d == Direction::ToHost {
                host.fill(0.0);
                slot.copy(sh.epoch, |l| l.put(want));
            }
            sh.barrier.wait();
            if !active {
                continue;
            }
            let span = match d {
                Direction::ToDevice => slot.copy(sh.epoch, |l| l.put(want)),
                Direction::ToHost => slot.copy(sh.epoch, |l| l.get(host)),
            };
            if d == Direction::ToHost && span.is_some() && differ(host, want) > 0 {
                bad_runs += 1;
            }
            if let Some(span) = span.filter(|_| run >= WARMUP_RUNS) {
                self.w.spans.insert((k, run - WARMUP_RUNS), span);
            }
        }
        if !active || slot.link.is_none() {
            return;
        }
        let c = match d {
            Direction::ToDevice => {
                host.fill(0.0);
                if slot.copy(sh.epoch, |l| l.get(host)).is_none() {
                    return;
                }
                check(
                    differ(host, other),
                    other.len(),
                    "runs alternate two patterns; the buffer read back after the last and compared bit for bit",
                )
            }
            Direction::ToHost => Check {
                passed: bad_runs == 0,
                detail: if bad_runs == 0 {
                    "runs alternate two patterns; every copy compared bit for bit with the one put there".into()
                } else {
                    format!("{bad_runs} of {total} copies arrived changed")
                },
            },
        };
        self.w.checks.insert(k, c);
        slot.copy(sh.epoch, |l| l.put(data));
    }

    /// A host-staged copy from `a` to `b`: `a` reads into the shared staging buffer (zeroed
    /// first, untimed), then (after a barrier) `b` writes from it, unless `a`'s copy failed.
    /// `b` reads its buffer back after every run (untimed) and compares it with `a`'s data,
    /// and puts its own data back at the end.
    fn pair(&mut self, (a, b): (usize, usize), k: usize, sh: &Shared<'_>) {
        let me = self.me;
        let want = (me == b).then(|| sh.data(a));
        let (mut bad, mut source_failed) = (0, false);
        for run in 0..WARMUP_RUNS + sh.runs {
            sh.barrier.wait();
            let mut span = None;
            if me == a {
                let mut st = sh.staging.lock().unwrap_or_else(|p| p.into_inner());
                st.0.clear();
                st.0.resize(sh.floats, 0.0);
                span = self.slot.copy(sh.epoch, |l| l.get(&mut st.0));
                st.1 = span.is_some();
            }
            sh.barrier.wait();
            if let (true, Some(want)) = (me == b, &want) {
                let st = sh.staging.lock().unwrap_or_else(|p| p.into_inner());
                if !st.1 {
                    source_failed = true;
                    continue;
                }
                span = self.slot.copy(sh.epoch, |l| l.put(&st.0));
                drop(st);
                let host = &mut self.host;
                host.fill(0.0);
                if span.is_some() && self.slot.copy(sh.epoch, |l| l.get(host)).is_some() {
                    bad += usize::from(differ(host, want) > 0);
                }
            }
            if let Some(span) = span.filter(|_| run >= WARMUP_RUNS) {
                self.w.spans.insert((k, run - WARMUP_RUNS), span);
            }
        }
        if me != b || self.slot.link.is_none() {
            return;
        }
        let total = WARMUP_RUNS + sh.runs;
        let c = if source_failed {
            Check {
                passed: false,
                detail: format!("not measured: the source GPU (#{}) failed", sh.index[a]),
            }
        } else if bad == 0 {
            Check {
                passed: true,
                detail: "destination read back after every copy and compared bit for bit with the source's data".into(),
            }
        } else {
            Check {
                passed: false,
                detail: format!("{bad} of {total} copies arrived changed"),
            }
        };
        self.w.checks.insert(k, c);
        let data = &self.data;
        self.slot.copy(sh.epoch, |l| l.put(data));
    }
}

/// The threads' records turned into figures.
struct Results<'a> {
    steps: &'a [Step],
    outs: &'a [Worker],
    bytes: u64,
    runs: usize,
}

impl Results<'_> {
    fn step(&self, s: Step) -> usize {
        self.steps
            .iter()
            .position(|&x| x == s)
            .expect("step in schedule")
    }

    /// GB/s per timed run from per-run seconds; None unless every run has one.
    fn rates(&self, secs: impl Iterator<Item = Option<f64>>, bytes: u64) -> Option<Summary> {
        let v: Option<Vec<f64>> = secs
            .map(|t| t.filter(|t| *t > 0.0).map(|t| bytes as f64 / t * 1e-9))
            .collect();
        Summary::of(&v?)
    }

    /// A slot's figure for a step: its runs' own times, withheld unless its check passed.
    fn figure(&self, me: usize, k: usize) -> Figure {
        let w = &self.outs[me];
        let check = w.checks.get(&k).cloned().unwrap_or_else(|| Check {
            passed: false,
            detail: format!(
                "not measured: {}",
                w.error.as_deref().unwrap_or("the copy did not run")
            ),
        });
        let gbs = if check.passed {
            self.rates(
                (0..self.runs).map(|r| w.spans.get(&(k, r)).map(|(s, e)| e - s)),
                self.bytes,
            )
        } else {
            None
        };
        Figure { gbs, check }
    }

    fn way(&self, me: usize, d: Direction, path: &str) -> Way {
        let alone = self.figure(me, self.step(Step::Alone(d, me)));
        let together = self
            .steps
            .contains(&Step::Together(d))
            .then(|| self.figure(me, self.step(Step::Together(d))));
        let ratio = match (&alone.gbs, together.as_ref().and_then(|t| t.gbs.as_ref())) {
            (Some(a), Some(t)) => Some(t.median / a.median),
            _ => None,
        };
        Way {
            path: path.into(),
            alone,
            together,
            together_vs_alone: ratio,
        }
    }

    fn gpu(&self, me: usize, info: &AdapterSummary) -> GpuLinks {
        let (to_device, to_host) = link::paths(info);
        GpuLinks {
            index: info.index,
            name: info.name.clone(),
            backend: info.backend.clone(),
            software: info.software,
            pci_bus_id: info.pci_bus_id.clone(),
            to_device: self.way(me, Direction::ToDevice, to_device),
            to_host: self.way(me, Direction::ToHost, to_host),
            error: self.outs[me].error.clone(),
        }
    }

    fn aggregate(&self, d: Direction, gpus: &[GpuLinks]) -> Aggregate {
        let k = self.step(Step::Together(d));
        let n = self.outs.len();
        let all_checked = gpus
            .iter()
            .all(|g| g.way(d).together.as_ref().is_some_and(|t| t.check.passed));
        let span = |r: usize| -> Option<f64> {
            let spans: Option<Vec<(f64, f64)>> = self
                .outs
                .iter()
                .map(|w| w.spans.get(&(k, r)).copied())
                .collect();
            let spans = spans?;
            let start = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
            let end = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
            Some(end - start)
        };
        let together = if all_checked {
            self.rates((0..self.runs).map(span), self.bytes * n as u64)
        } else {
            None
        };
        let sum_alone: Option<f64> = gpus
            .iter()
            .map(|g| g.way(d).alone.gbs.as_ref().map(|s| s.median))
            .sum();
        Aggregate {
            direction: d,
            gpus: n,
            sum_alone_gbs: sum_alone,
            ratio: match (&together, sum_alone) {
                (Some(t), Some(s)) if s > 0.0 => Some(t.median / s),
                _ => None,
            },
            together_gbs: together,
        }
    }

    fn pairs(&self, infos: &[&AdapterSummary]) -> Vec<PairCopy> {
        self.steps
            .iter()
            .enumerate()
            .filter_map(|(k, s)| match *s {
                Step::Pair(a, b) => Some((k, a, b)),
                _ => None,
            })
            .map(|(k, a, b)| {
                let mut figure = self.figure(b, k);
                if figure.check.passed {
                    // Bytes over the source's read plus the destination's write, per run.
                    let secs = (0..self.runs).map(|r| {
                        let t = |w: &Worker| w.spans.get(&(k, r)).map(|(s, e)| e - s);
                        Some(t(&self.outs[a])? + t(&self.outs[b])?)
                    });
                    figure.gbs = self.rates(secs, self.bytes);
                }
                PairCopy {
                    from: infos[a].index,
                    to: infos[b].index,
                    path: STAGED.into(),
                    figure,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(detail: &str) -> Check {
        Check {
            passed: true,
            detail: detail.into(),
        }
    }

    /// Two GPUs, two timed runs per step: GPU 0 copies 1 GB in 0.5 s alone and 1 s at
    /// once; GPU 1 in 0.25 s alone and 0.5 s at once, starting 0.1 s after GPU 0.
    fn two() -> (Vec<Step>, Vec<Worker>) {
        let steps = schedule(2);
        let mut outs = vec![Worker::default(), Worker::default()];
        for (k, s) in steps.iter().enumerate() {
            for r in 0..2 {
                let t = 10.0 * k as f64 + 3.0 * r as f64;
                let (a, b) = match s {
                    Step::Alone(_, 0) => ((t, t + 0.5), None),
                    Step::Alone(..) => ((t, t), Some((t, t + 0.25))),
                    Step::Together(_) => ((t, t + 1.0), Some((t + 0.1, t + 0.6))),
                    Step::Pair(..) => ((t, t + 0.5), Some((t + 0.6, t + 1.1))),
                };
                if !matches!(s, Step::Alone(_, 1)) {
                    outs[0].spans.insert((k, r), a);
                }
                if let Some(b) = b {
                    outs[1].spans.insert((k, r), b);
                }
            }
            let c = ok("compared");
            match s {
                Step::Alone(_, w) => {
                    outs[*w].checks.insert(k, c);
                }
                Step::Together(_) => {
                    outs[0].checks.insert(k, c.clone());
                    outs[1].checks.insert(k, c);
                }
                Step::Pair(_, b) => {
                    outs[*b].checks.insert(k, c);
                }
            }
        }
        (steps, outs)
    }

    fn results<'a>(steps: &'a [Step], outs: &'a [Worker]) -> Results<'a> {
        Results {
            steps,
            outs,
            bytes: 1_000_000_000,
            runs: 2,
        }
    }

    /// A link over host memory with a defect, for the method's own checks.
    #[derive(Clone, Copy, PartialEq)]
    enum Defect {
        None,
        /// Every put after the first (at open) does nothing.
        NoopPut,
        /// Gets do nothing.
        NoopGet,
        /// The n-th call and every one after fail.
        FailFrom(usize),
    }

    struct Fake {
        buf: Vec<f32>,
        defect: Defect,
        calls: usize,
    }

    impl link::Link for Fake {
        fn put(&mut self, host: &[f32]) -> Result<()> {
            self.calls += 1;
            if let Defect::FailFrom(n) = self.defect
                && self.calls >= n
            {
                anyhow::bail!("injected failure");
            }
            if self.defect != Defect::NoopPut || self.calls == 1 {
                self.buf.copy_from_slice(host);
            }
            Ok(())
        }
        fn get(&mut self, host: &mut [f32]) -> Result<()> {
            self.calls += 1;
            if let Defect::FailFrom(n) = self.defect
                && self.calls >= n
            {
                anyhow::bail!("injected failure");
            }
            if self.defect != Defect::NoopGet {
                host.copy_from_slice(&self.buf);
            }
            Ok(())
        }
    }

    /// The whole method over fake links, two timed runs a step, 1,024 floats.
    fn walk_fakes(defects: &[Defect]) -> (Vec<Step>, Vec<Worker>) {
        let floats = 1024;
        let openers: Vec<Opener<'_>> = defects
            .iter()
            .map(|&defect| {
                Box::new(move || {
                    Ok(Box::new(Fake {
                        buf: vec![0.0; floats],
                        defect,
                        calls: 0,
                    }) as Box<dyn link::Link>)
                }) as Opener<'_>
            })
            .collect();
        let steps = schedule(defects.len());
        let outs = walk(
            &openers,
            &steps,
            2,
            floats,
            (0..defects.len()).collect(),
            &|_| {},
        );
        (steps, outs)
    }

    fn check_of(steps: &[Step], outs: &[Worker], who: usize, s: Step) -> Check {
        let k = steps.iter().position(|&x| x == s).unwrap();
        outs[who].checks[&k].clone()
    }

    #[test]
    fn good_links_pass_every_check_and_copies_that_do_nothing_fail_theirs() {
        let (steps, outs) = walk_fakes(&[Defect::None, Defect::None]);
        for (k, s) in steps.iter().enumerate() {
            let who = match *s {
                Step::Alone(_, w) | Step::Pair(_, w) => vec![w],
                Step::Together(_) => vec![0, 1],
            };
            for w in who {
                assert!(outs[w].checks[&k].passed, "{s:?}: {:?}", outs[w].checks[&k]);
                assert_eq!(
                    (0..2)
                        .filter(|r| outs[w].spans.contains_key(&(k, *r)))
                        .count(),
                    2
                );
            }
        }
        // GPU 1's puts do nothing: its host-to-device check, its device-to-host check (the
        // patterns put before each copy never arrive) and the copy into it fail.
        let (steps, outs) = walk_fakes(&[Defect::None, Defect::NoopPut]);
        let c = |who, s| check_of(&steps, &outs, who, s);
        assert!(!c(1, Step::Alone(Direction::ToDevice, 1)).passed);
        assert!(!c(1, Step::Alone(Direction::ToHost, 1)).passed);
        assert!(!c(1, Step::Pair(0, 1)).passed);
        assert!(c(0, Step::Alone(Direction::ToDevice, 0)).passed);
        assert!(
            c(0, Step::Pair(1, 0)).passed,
            "GPU 1's buffer still holds its data"
        );
        // GPU 0's gets do nothing: device-to-host fails, the copy out of it fails, and so
        // does the copy into it (its read-back cannot confirm what arrived).
        let (steps, outs) = walk_fakes(&[Defect::NoopGet, Defect::None]);
        let c = |who, s| check_of(&steps, &outs, who, s);
        assert!(!c(0, Step::Alone(Direction::ToHost, 0)).passed);
        assert!(!c(1, Step::Pair(0, 1)).passed);
        assert!(!c(0, Step::Pair(1, 0)).passed);
        assert!(c(1, Step::Alone(Direction::ToHost, 1)).passed);
    }

    #[test]
    fn a_gpu_that_fails_midway_stops_alone_and_the_others_finish() {
        // GPU 1 fails at its 10th call (during the first steps); nothing hangs.
        let (steps, outs) = walk_fakes(&[Defect::None, Defect::FailFrom(10), Defect::None]);
        assert_eq!(outs[1].error.as_deref(), Some("injected failure"));
        assert!(outs[0].error.is_none() && outs[2].error.is_none());
        let c = |who, s| check_of(&steps, &outs, who, s);
        assert!(c(0, Step::Pair(2, 0)).passed);
        assert!(c(2, Step::Pair(0, 2)).passed);
        let from_failed = c(0, Step::Pair(1, 0));
        assert!(!from_failed.passed);
        assert!(
            from_failed.detail.contains("the source GPU (#1) failed"),
            "{from_failed:?}"
        );
        let r = results(&steps, &outs);
        let k = steps
            .iter()
            .position(|&x| x == Step::Together(Direction::ToHost))
            .unwrap();
        assert!(r.figure(1, k).gbs.is_none());
    }

    #[test]
    fn the_schedule_runs_each_gpu_alone_then_all_then_every_ordered_pair() {
        let s = schedule(3);
        assert_eq!(s.len(), 2 * (3 + 1) + 6);
        assert_eq!(s[0], Step::Alone(Direction::ToDevice, 0));
        assert_eq!(s[3], Step::Together(Direction::ToDevice));
        assert_eq!(s[7], Step::Together(Direction::ToHost));
        assert!(s.contains(&Step::Pair(2, 0)) && !s.contains(&Step::Pair(1, 1)));
        assert!(!schedule(1).iter().any(|s| matches!(s, Step::Together(_))));
        assert_eq!(schedule(1).len(), 2);
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }

    #[test]
    fn rates_alone_at_once_and_the_total_come_from_the_spans() {
        let (steps, outs) = two();
        let r = results(&steps, &outs);
        let a = r.figure(0, r.step(Step::Alone(Direction::ToDevice, 0)));
        close(a.gbs.unwrap().median, 2.0);
        let g0 = r.way(0, Direction::ToDevice, "p");
        close(g0.together.unwrap().gbs.unwrap().median, 1.0);
        close(g0.together_vs_alone.unwrap(), 0.5);
        let infos = [sample(0), sample(1)];
        let gpus: Vec<GpuLinks> = (0..2).map(|me| r.gpu(me, &infos[me])).collect();
        let agg = r.aggregate(Direction::ToHost, &gpus);
        // 2 GB from the first start to the last end (1 s): 2 GB/s; alone 2 + 4 GB/s.
        close(agg.together_gbs.as_ref().unwrap().median, 2.0);
        close(agg.sum_alone_gbs.unwrap(), 6.0);
        close(agg.ratio.unwrap(), 1.0 / 3.0);
        // The staged copy: 1 GB over 0.5 s + 0.5 s.
        let p = r.pairs(&[&infos[0], &infos[1]]);
        assert_eq!(p.len(), 2);
        close(p[0].figure.gbs.as_ref().unwrap().median, 1.0);
        assert_eq!((p[0].from, p[0].to), (0, 1));
    }

    #[test]
    fn a_failed_check_or_a_missing_run_withholds_the_figure() {
        let (steps, mut outs) = two();
        let k = steps
            .iter()
            .position(|s| *s == Step::Alone(Direction::ToHost, 1))
            .unwrap();
        outs[1].checks.insert(
            k,
            Check {
                passed: false,
                detail: "1 of 5 copies arrived changed".into(),
            },
        );
        let together = steps
            .iter()
            .position(|s| *s == Step::Together(Direction::ToDevice))
            .unwrap();
        outs[0].spans.remove(&(together, 1));
        let r = results(&steps, &outs);
        let f = r.figure(1, k);
        assert!(f.gbs.is_none() && !f.check.passed);
        let infos = [sample(0), sample(1)];
        let gpus: Vec<GpuLinks> = (0..2).map(|me| r.gpu(me, &infos[me])).collect();
        assert!(gpus[1].to_host.together_vs_alone.is_none());
        let agg = r.aggregate(Direction::ToHost, &gpus);
        assert!(agg.sum_alone_gbs.is_none() && agg.ratio.is_none());
        // One run without a span: no together figure on GPU 0, no total.
        assert!(gpus[0].to_device.together.as_ref().unwrap().gbs.is_none());
        assert!(
            r.aggregate(Direction::ToDevice, &gpus)
                .together_gbs
                .is_none()
        );
        let t = Transfers {
            cpu_model: String::new(),
            bytes: 1,
            runs: 2,
            warmup_runs: 1,
            timing: String::new(),
            gpus,
            together: Vec::new(),
            pairs: Vec::new(),
            notes: Vec::new(),
        };
        assert!(!t.all_passed());
    }

    #[test]
    fn a_gpu_that_never_opened_says_why_on_its_row() {
        let (steps, mut outs) = two();
        outs[1] = Worker::failed("OpenCL: cannot create a context on X: -6");
        let r = results(&steps, &outs);
        let g = r.gpu(1, &sample(1));
        assert!(
            g.to_device
                .alone
                .check
                .detail
                .contains("cannot create a context")
        );
        assert_eq!(
            g.error.as_deref(),
            Some("OpenCL: cannot create a context on X: -6")
        );
    }

    #[test]
    fn differing_elements_are_counted_by_their_bits() {
        assert_eq!(differ(&[0.0, 1.0], &[-0.0, 1.0]), 1);
        assert_eq!(differ(&[f32::NAN], &[f32::NAN]), 0);
        assert_eq!(differ(&[1.0], &[1.0, 2.0]), 1);
        assert!(!check(1, 4, "x").passed);
    }

    fn sample(index: usize) -> AdapterSummary {
        let r = crate::results::ResultsFile::parse(include_str!(
            "../../../tests/fixtures/results-lavapipe.json"
        ))
        .unwrap();
        AdapterSummary { index, ..r.adapter }
    }

    #[test]
    fn one_api_only_and_software_adapters_only_when_allowed() {
        let gpu = |index, backend: &str, software| AdapterSummary {
            backend: backend.into(),
            software,
            name: format!("gpu {index}"),
            ..sample(index)
        };
        let list = AdapterList {
            adapters: Vec::new(),
            summaries: vec![
                gpu(0, "vulkan", false),
                gpu(1, "opencl", false),
                gpu(2, "vulkan", false),
                gpu(3, "vulkan", true),
            ],
            searched: "vulkan, opencl".into(),
            requested: None,
        };
        let mut opts = Options {
            adapter: AdapterChoice::All,
            backend: None,
            mib: None,
            runs: None,
            quick: true,
            allow_software: false,
        };
        let (chosen, notes) = choose(&list, &opts).unwrap();
        assert_eq!(chosen, vec![0, 2]);
        assert!(notes[0].contains("gpu 1 (opencl) left out") && notes[0].contains("(vulkan)"));
        assert!(notes[1].contains("--allow-software"));
        opts.allow_software = true;
        assert_eq!(choose(&list, &opts).unwrap().0, vec![0, 2, 3]);
        opts.adapter = AdapterChoice::Index(3);
        opts.allow_software = false;
        let e = choose(&list, &opts).unwrap_err().to_string();
        assert!(
            e.contains("no GPU to measure") && e.contains("--allow-software"),
            "{e}"
        );
    }

    #[test]
    fn the_copy_size_fits_every_gpu_and_host_memory() {
        let mut a = sample(0);
        a.limits.max_buffer_size = 100 << 20;
        let b = sample(1);
        let opts = Options {
            adapter: AdapterChoice::All,
            backend: None,
            mib: Some(512),
            runs: None,
            quick: false,
            allow_software: false,
        };
        let mut notes = Vec::new();
        assert_eq!(
            copy_bytes(&opts, &[&a, &b], 64 << 30, &mut notes).unwrap(),
            100 << 20
        );
        assert!(notes[0].contains("100 MiB, not 512 MiB"));
        // 2 GiB of RAM, two GPUs: 1 GiB over 11 buffers.
        let got = copy_bytes(&opts, &[&b, &b], 2 << 30, &mut notes).unwrap();
        assert_eq!(got, ((1u64 << 30) / 11) / 4096 * 4096);
    }
}
