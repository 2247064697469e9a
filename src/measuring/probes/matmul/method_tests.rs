//! The matmul method on a mock executor: no device, products computed on the host (or
//! deliberately wrong), batch times scripted.

use super::*;
use crate::measuring::probes::executor::mock;
use std::cell::Cell;

/// What the mock knows of its kernels.
struct Kernels {
    configs: Vec<u32>,
    policy: Policy,
    /// Per configuration: its seconds per product, as a multiple of the clock's script.
    slowness: fn(u32) -> f64,
    /// Per configuration: whether its products are wrong (every element doubled).
    wrong: fn(u32) -> bool,
    /// Products prepared so far; those from `wrong_from` on are wrong too.
    prepared: Cell<usize>,
    wrong_from: usize,
    /// The largest M the mock's limits allow.
    max_m: usize,
    /// Whether the device stopped (or the user interrupted).
    stopped: bool,
}

type Mock = mock::Device<Kernels>;

/// wgpu's, but for its trials (one warm-up run, three samples of one product each: the
/// clock's script) and that no candidate is abandoned.
fn policy() -> Policy {
    Policy {
        trial: mock::plan(3, 8),
        abandon_slow: false,
        ..Policy::wgpu()
    }
}

fn mock(configs: &[u32], per_iter_s: &[f64], sizes: &[usize]) -> Mock {
    let kernels = Kernels {
        configs: configs.to_vec(),
        policy: policy(),
        slowness: |_| 1.0,
        wrong: |_| false,
        prepared: Cell::new(0),
        wrong_from: usize::MAX,
        max_m: usize::MAX,
        stopped: false,
    };
    let mut m = mock::Device::new(mock::plan(5, 8), per_iter_s, kernels);
    m.run.sizes = Some(sizes.iter().map(|&n| Dims { m: n, n, k: n }).collect());
    m
}

fn results(m: &Mock) -> Vec<ProbeResult> {
    let mut out = Vec::new();
    pollster::block_on(run_on(m, &mut |r| out.push(r)));
    out
}

/// The labels of a result's trials and whether each was valid.
fn trials(r: &ProbeResult) -> Vec<(String, bool)> {
    r.autotune
        .iter()
        .map(|t| {
            (
                t["config"].as_str().unwrap().to_string(),
                t["valid"] == true,
            )
        })
        .collect()
}

fn gflops_at(seconds: f64) -> f64 {
    2.0 * 8.0 * 8.0 * 8.0 / seconds * 1e-9
}

impl MatmulExecutor for Mock {
    type Config = u32;
    /// The configuration and the product it leaves in C, computed when prepared.
    type Prepared = (u32, Vec<f32>);

    fn policy(&self) -> Policy {
        self.policy.clone()
    }
    fn candidates(&self) -> Vec<u32> {
        self.configs.clone()
    }
    fn label(&self, cfg: &u32) -> String {
        format!("mock {cfg}")
    }
    fn beyond_limits(&self, d: Dims) -> Option<String> {
        (d.m > self.max_m).then(|| "beyond the mock's limits".to_string())
    }
    fn stopped(&self) -> bool {
        self.state.stopped
    }
    /// Rows to multiples of 4, columns to multiples of 8.
    fn padded(&self, _cfg: &u32, d: Dims) -> Result<Dims> {
        Ok(Dims {
            m: d.m.next_multiple_of(4),
            n: d.n.next_multiple_of(8),
            k: d.k,
        })
    }
    fn prepare(
        &self,
        &cfg: &u32,
        _d: Dims,
        p: Dims,
        a: &[f32],
        b: &[f32],
    ) -> Result<Self::Prepared> {
        // Each run replays the script from its start.
        self.clock.next.set(0);
        let n = self.prepared.get();
        self.prepared.set(n + 1);
        let wrong = (self.wrong)(cfg) || n >= self.wrong_from;
        let mut c = vec![0.0f32; p.m * p.n];
        for i in 0..p.m {
            for j in 0..p.n {
                let dot: f64 = (0..p.k)
                    .map(|kk| f64::from(a[i * p.k + kk]) * f64::from(b[kk * p.n + j]))
                    .sum();
                c[i * p.n + j] = if wrong { 2.0 * dot as f32 } else { dot as f32 };
            }
        }
        Ok((cfg, c))
    }
    async fn dispatch(&self, p: &Self::Prepared, iters: u32) -> Result<f64> {
        Ok(self.clock.batch(iters) * (self.slowness)(p.0))
    }
    async fn read(&self, p: &Self::Prepared) -> Result<Vec<f32>> {
        Ok(p.1.clone())
    }
    fn describe(&self, mut res: ProbeResult, cfg: &u32, padded: Dims) -> ProbeResult {
        res.kernel = Some(serde_json::json!({
            "label": format!("mock {cfg}"), "padded": [padded.m, padded.n, padded.k],
        }));
        res
    }
}

#[test]
fn known_times_give_the_gflops_and_the_warm_up_is_not_counted() {
    // Each run: one warm-up run of 1 s a product, then samples of one product each.
    let m = mock(&[1], &[1.0, 0.004, 0.002, 0.001, 0.003, 0.008], &[8]);
    let r = results(&m);
    assert_eq!(r.len(), 1);
    let p = &r[0];
    assert_eq!(p.status, Status::Ok, "{:?}", p.reason);
    assert_eq!(p.name, "matmul_f32 8x8x8");
    let v = p.value.as_ref().expect("a figure");
    assert_eq!(v.n, 5);
    assert!((v.median - gflops_at(0.003)).abs() < 1e-15, "{v:?}");
    assert!((v.max - gflops_at(0.001)).abs() < 1e-15);
    assert!((v.min - gflops_at(0.008)).abs() < 1e-15);
    let t = p.timing.as_ref().unwrap();
    assert_eq!((t.warmup_runs, t.iters_per_sample), (1, 1));
    assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
    // The trial (a warm-up run and three samples), then the measured run.
    assert_eq!(m.clock.batches.borrow().len(), 4 + 6);
    assert_eq!(trials(p), [("mock 1".to_string(), true)]);
    // The trial's median (of 0.004, 0.002, 0.001 s) beside the figure.
    let median = p.params["tuning_trial_median"].as_f64().unwrap();
    assert!((median - gflops_at(0.002)).abs() < 1e-15, "{median}");
    assert_eq!(
        p.kernel,
        Some(serde_json::json!({"label": "mock 1", "padded": [8, 8, 8]}))
    );
    let val = p.validation.as_ref().unwrap();
    assert!(val.passed && val.error < 1e-6, "{val:?}");
    assert_eq!(val.metric, "relative_frobenius");
}

#[test]
fn a_wrong_product_fails_validation_with_no_figure() {
    // Right while tuning, wrong when measured.
    let mut m = mock(&[1], &[0.01], &[8]);
    m.state.wrong_from = 1;
    let r = results(&m);
    let p = &r[0];
    assert_eq!(p.status, Status::Failed);
    assert!(p.value.is_none(), "no figure");
    assert_eq!(trials(p), [("mock 1".to_string(), true)]);
    let v = p.validation.as_ref().expect("the check is recorded");
    assert!(!v.passed, "{v:?}");
    assert_eq!(
        v.detail.as_deref(),
        Some(
            "8 of 8 rows checked exactly (rel. Frobenius 1.00e0); Freivalds check over all rows 1.00e0; 0 non-finite elements"
        )
    );
    assert_eq!(
        p.reason.as_deref(),
        Some("validation failed: error 1.000e0 > tolerance 1e-4")
    );
    // The timing is kept beside the failed check.
    assert!(p.timing.is_some());
}

#[test]
fn tuning_keeps_the_fastest_valid_configuration() {
    // 2 is the fastest and wrong, 3 the fastest right one, 1 slow and right.
    let mut m = mock(&[1, 2, 3], &[0.01], &[8]);
    m.state.slowness = |c| match c {
        1 => 4.0,
        2 => 0.5,
        _ => 1.0,
    };
    m.state.wrong = |c| c == 2;
    let r = results(&m);
    let p = &r[0];
    assert_eq!(p.status, Status::Ok, "{:?}", p.reason);
    assert_eq!(p.kernel.as_ref().unwrap()["label"], "mock 3");
    let labels = ["mock 1", "mock 2", "mock 3"].map(String::from);
    assert_eq!(
        trials(p),
        [
            (labels[0].clone(), true),
            (labels[1].clone(), false),
            (labels[2].clone(), true)
        ]
    );
    let max = |i: usize| p.autotune[i]["gflops_max"].as_f64().unwrap();
    assert!(max(1) > max(2) && max(2) > max(0), "{:?}", p.autotune);
    assert_eq!(p.autotune[1]["note"], "validation failed");
    assert!(p.autotune[0].get("note").is_none(), "{:?}", p.autotune[0]);
    // The chosen one's own trial median is the one recorded.
    let median = p.params["tuning_trial_median"].as_f64().unwrap();
    assert_eq!(Some(median), p.autotune[2]["gflops_median"].as_f64());
}

#[test]
fn no_valid_configuration_gives_the_no_valid_configuration_result() {
    let mut m = mock(&[1, 2], &[0.01], &[8, 8]);
    m.state.wrong = |_| true;
    let r = results(&m);
    assert_eq!(r.len(), 2);
    for p in &r {
        assert_eq!(p.status, Status::Failed);
        assert!(p.value.is_none() && p.validation.is_none() && p.kernel.is_none());
        assert_eq!(
            p.reason.as_deref(),
            Some(
                "no kernel configuration produced a valid result; first reason: validation failed"
            )
        );
        // None valid: the next size tries every candidate again.
        let labels = ["mock 1", "mock 2"].map(String::from);
        assert_eq!(
            trials(p),
            [(labels[0].clone(), false), (labels[1].clone(), false)]
        );
    }
    // Where invalid trials carry no note (OpenCL), the reason has none to quote.
    let mut m = mock(&[1, 2], &[0.01], &[8]);
    m.state.wrong = |_| true;
    m.state.policy.note_invalid = false;
    let r = results(&m);
    assert_eq!(
        r[0].reason.as_deref(),
        Some("no kernel configuration produced a valid result")
    );
    assert!(r[0].autotune.iter().all(|t| t.get("note").is_none()));
}

#[test]
fn later_sizes_retry_the_best_three_within_half_of_the_best() {
    let mut m = mock(&[1, 2, 3, 4, 5], &[0.01], &[8, 8]);
    // 5 is under half the best's speed; 4 within it, but fourth.
    m.state.slowness = |c| [1.0, 1.1, 1.5, 1.9, 3.0][c as usize - 1];
    let r = results(&m);
    assert_eq!(r[0].autotune.len(), 5);
    let second: Vec<String> = trials(&r[1]).into_iter().map(|(l, _)| l).collect();
    assert_eq!(second, ["mock 1", "mock 2", "mock 3"]);
}

#[test]
fn a_stopped_device_leaves_the_candidates_after_the_first_untried() {
    let mut m = mock(&[1, 2, 3], &[0.01], &[8]);
    m.state.stopped = true;
    let r = results(&m);
    let notes: Vec<&str> = r[0].autotune[1..]
        .iter()
        .map(|t| t["note"].as_str().unwrap())
        .collect();
    assert_eq!(notes, ["not tried: time budget spent"; 2]);
    assert_eq!(r[0].status, Status::Ok, "the first is measured");
    // Without time-boxed tuning (OpenCL), every candidate is tried.
    m.state.policy.time_boxed = false;
    let r = results(&m);
    assert!(trials(&r[0]).iter().all(|(_, valid)| *valid));
}

#[test]
fn a_candidate_four_times_slower_than_the_best_is_abandoned() {
    let mut m = mock(&[1, 2], &[1.0, 0.004, 0.002, 0.001, 0.003], &[8]);
    m.state.policy.abandon_slow = true;
    // Two warm-up runs: the second is the one compared with the best so far.
    m.state.policy.trial.min_warmup_runs = 2;
    m.state.slowness = |c| if c == 2 { 10.0 } else { 1.0 };
    let r = results(&m);
    let note = r[0].autotune[1]["note"].as_str().unwrap();
    assert_eq!(
        note,
        "abandoned: one run took 0.040 s, over the 0.004 s limit"
    );
    // Without, it is measured (and not chosen).
    m.state.policy.abandon_slow = false;
    let r = results(&m);
    assert!(trials(&r[0])[1].1, "{:?}", r[0].autotune);
    assert_eq!(r[0].kernel.as_ref().unwrap()["label"], "mock 1");
}

#[test]
fn sizes_beyond_the_limits_stop_the_probe() {
    let mut m = mock(&[1], &[0.01], &[8, 16, 8]);
    m.state.max_m = 8;
    // Given sizes are not checked (wgpu): each is measured.
    let r = results(&m);
    assert_eq!(r.len(), 3);
    // Checked (OpenCL): the first beyond is skipped, and nothing after it is tried.
    m.state.policy.limits_given_sizes = true;
    let r = results(&m);
    let got: Vec<(Status, Option<&str>)> =
        r.iter().map(|p| (p.status, p.reason.as_deref())).collect();
    assert_eq!(
        got,
        [
            (Status::Ok, None),
            (Status::Skipped, Some("beyond the mock's limits"))
        ]
    );
    assert_eq!(r[1].name, "matmul_f32 16x16x16");
}
