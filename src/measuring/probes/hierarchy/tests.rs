//! The hierarchy probe's pieces (working sets, the chain, the sweep's sums) and its method
//! on a mock executor: no device, kernels computed on the host (or deliberately wrong),
//! batch times scripted.

use super::*;
use crate::measuring::probes::executor::mock;
use crate::results::Status;
use std::cell::RefCell;

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

/// What the mock's kernels get wrong, and what its chases did.
#[derive(Default)]
struct Kernels {
    /// One invocation's sum is one more than the data gives.
    wrong_sum: bool,
    /// The chase stops one load short.
    short_chase: bool,
    /// The sweep cannot be set up.
    no_sweep: bool,
    /// Each chase: (where it stopped, where the cycle ends).
    chases: RefCell<Vec<(u32, u32)>>,
}

type Mock = mock::Device<Kernels>;

/// The sweep on the host: its data and the invocations' sums of its last pass.
struct HostSweep {
    data: Vec<u32>,
    sums: Vec<u32>,
}

impl HierarchyExecutor for Mock {
    type Sweep = HostSweep;
    /// Where the chase stopped (0 for a sweep).
    type Pass = u32;

    fn stated(&self) -> Vec<Cache> {
        vec![Cache {
            level: "L1".into(),
            bytes: 16 << 10,
            source: "mock".into(),
        }]
    }
    fn software(&self) -> bool {
        true
    }
    fn max_bytes(&self) -> u64 {
        1 << 30
    }
    fn sweep(&self, data: &[u32]) -> Result<HostSweep> {
        if self.no_sweep {
            anyhow::bail!("mock: no sweep");
        }
        let sums = Vec::new();
        Ok(HostSweep {
            data: data.to_vec(),
            sums,
        })
    }
    /// The grid reads the working set's vec4s `INVOCATIONS * steps / (mask + 1)` times: the
    /// first invocation's sum says so, the others' are zero.
    fn sweep_pass(&self, s: &mut HostSweep, mask: u32, steps: u32) -> Result<u32> {
        self.clock.next.set(0);
        let elems = u64::from(mask) + 1;
        let once = s.data[..(elems * 4) as usize]
            .iter()
            .fold(0u32, |a, &w| a.wrapping_add(w));
        let times = INVOCATIONS * u64::from(steps) / elems;
        s.sums = vec![0; INVOCATIONS as usize];
        s.sums[0] = once.wrapping_mul(times as u32);
        if self.wrong_sum {
            s.sums[7] = 1;
        }
        Ok(0)
    }
    async fn sweep_sums(&self, s: &HostSweep) -> Result<Vec<u32>> {
        Ok(s.sums.clone())
    }
    /// Follows the chain on the host.
    fn chase(&self, chain: &[u32], start: u32, _top: u64) -> Result<u32> {
        self.clock.next.set(0);
        let loads = if self.short_chase {
            CHASE_STEPS - 1
        } else {
            CHASE_STEPS
        };
        let follow = |n| (0..n).fold(start, |at, _| chain[at as usize]);
        let (got, end) = (follow(loads), follow(CHASE_STEPS));
        self.chases.borrow_mut().push((got, end));
        Ok(got)
    }
    async fn chase_end(&self, p: &u32) -> Result<u32> {
        Ok(*p)
    }
    async fn dispatch(&self, _p: &u32, iters: u32) -> Result<f64> {
        Ok(self.clock.batch(iters))
    }
}

fn mock(per_iter_s: &[f64], kernels: Kernels) -> Mock {
    mock::Device::new(mock::plan(5, 8), per_iter_s, kernels)
}

fn results(m: &Mock) -> Vec<ProbeResult> {
    let mut out = Vec::new();
    pollster::block_on(run_on(m, &mut |r| out.push(r)));
    out
}

/// The working sets the mock's 16 KiB L1 gives: up to four times it.
const SETS: [u64; 3] = [16 << 10, 32 << 10, 64 << 10];

#[test]
fn known_times_give_both_curves_and_the_warm_up_is_not_counted() {
    let m = mock(
        &[1.0, 0.004, 0.002, 0.001, 0.003, 0.008],
        Kernels::default(),
    );
    let r = results(&m);
    assert_eq!(r.len(), 6, "a read and a latency point a working set");
    for p in &r {
        assert_eq!(p.status, Status::Ok, "{}: {:?}", p.name, p.reason);
        let t = p.timing.as_ref().unwrap();
        assert_eq!((t.warmup_runs, t.iters_per_sample), (1, 1));
        assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
        assert_eq!(p.value.as_ref().unwrap().n, 5);
    }
    // A full run's sweep reads 256 MiB a dispatch: 64 loads of a vec4 an invocation.
    let read = p_read(&r[0]);
    assert_eq!(read, (256u64 << 20) as f64);
    let v = r[0].value.as_ref().unwrap();
    assert!((v.median - read / 0.003 * 1e-9).abs() < 1e-9, "{v:?}");
    assert!((v.max - read / 0.001 * 1e-9).abs() < 1e-9);
    assert!((v.min - read / 0.008 * 1e-9).abs() < 1e-9);
    let v = r[3].value.as_ref().unwrap();
    let ns = |t: f64| t / f64::from(CHASE_STEPS) * 1e9;
    assert!((v.median - ns(0.003)).abs() < 1e-12, "{v:?}");
    assert!((v.min - ns(0.001)).abs() < 1e-12 && (v.max - ns(0.008)).abs() < 1e-12);
    let names: Vec<&str> = r.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "hierarchy read 16 KiB",
            "hierarchy read 32 KiB",
            "hierarchy read 64 KiB",
            "hierarchy latency 16 KiB",
            "hierarchy latency 32 KiB",
            "hierarchy latency 64 KiB",
        ]
    );
    let bytes: Vec<u64> = r[..3]
        .iter()
        .map(|p| p.params["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(bytes, SETS);
    assert_eq!(r[3].params["loads_per_dispatch"], CHASE_STEPS);
    assert_eq!(m.clock.batches.borrow().len(), 36);
    assert_eq!(m.said.borrow()[0], "hierarchy read 16 KiB");
}

fn p_read(p: &ProbeResult) -> f64 {
    p.params["bytes_read_per_dispatch"].as_f64().unwrap()
}

#[test]
fn a_wrong_sum_fails_the_read_with_no_figure() {
    let kernels = Kernels {
        wrong_sum: true,
        ..Kernels::default()
    };
    let r = results(&mock(&[0.01], kernels));
    let (_, sums) = sweep_data(&SETS);
    assert_eq!(r.len(), 6);
    for (p, (bytes, sum)) in r[..3].iter().zip(SETS.iter().zip(sums)) {
        let times = (p_read(p) / 16.0) as u64 / (bytes / 16);
        let want = sum.wrapping_mul(times as u32);
        let got = want.wrapping_add(1);
        let detail = format!(
            "wrapping sum of the invocations' sums {got:#010x}, of the data read {want:#010x}"
        );
        let reason = "validation failed: the sums differ from the data read";
        mock::assert_failed(p, &detail, reason);
    }
    assert!(r[3..].iter().all(|p| p.status == Status::Ok));
}

#[test]
fn a_chase_that_stops_short_fails_the_latency_with_no_figure() {
    let kernels = Kernels {
        short_chase: true,
        ..Kernels::default()
    };
    let m = mock(&[0.01], kernels);
    let r = results(&m);
    assert!(r[..3].iter().all(|p| p.status == Status::Ok));
    let chases = m.chases.borrow();
    assert_eq!(chases.len(), 3);
    for (p, &(got, want)) in r[3..].iter().zip(chases.iter()) {
        assert_ne!(got, want);
        let detail = format!("stopped at word {got}, the cycle gives {want} after 1048576 loads");
        let reason = "validation failed: the chase did not stop where the cycle gives";
        mock::assert_failed(p, &detail, reason);
    }
}

#[test]
fn a_sweep_that_cannot_be_set_up_fails_once_and_the_chase_goes_on() {
    let kernels = Kernels {
        no_sweep: true,
        ..Kernels::default()
    };
    let m = mock(&[0.01], kernels);
    let r = results(&m);
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].name, "hierarchy read");
    assert_eq!(r[0].status, Status::Failed);
    assert_eq!(r[0].reason.as_deref(), Some("mock: no sweep"));
    assert!(r[1..].iter().all(|p| p.status == Status::Ok));
    assert_eq!(m.said.borrow()[0], "hierarchy read");
}
