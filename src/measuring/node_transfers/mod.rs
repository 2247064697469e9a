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
mod results;
mod worker;

use results::*;
use worker::*;

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
    notes.extend(caveats(&infos));
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

/// What the figures of these GPUs cannot say: no together or GPU-to-GPU figures with one,
/// direct copies offered but not used, software adapters that share the host's memory.
fn caveats(infos: &[&AdapterSummary]) -> Vec<String> {
    let mut notes = Vec::new();
    let n = infos.len();
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
    notes
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

#[cfg(test)]
mod tests;
