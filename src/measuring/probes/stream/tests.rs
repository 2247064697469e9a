//! The STREAM method on a mock executor: no device, kernels computed on the host (or
//! deliberately wrong), batch times scripted.

use super::*;
use crate::measuring::probes::executor::mock;
use crate::model::TimingMethod;

/// What the mock's kernels get wrong.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// One element of the output (or dot's sum) is off by 1%.
    Wrong,
    /// The kernel writes nothing (the output stays poisoned).
    Unwritten,
}

/// What the mock knows of its kernels.
struct Kernels {
    configs: Vec<u32>,
    /// Per configuration: what its kernels get wrong.
    fault: fn(u32) -> Fault,
}

type Mock = mock::Device<Kernels>;

fn mock(plan: measure::Plan, configs: &[u32], per_iter_s: &[f64]) -> Mock {
    let kernels = Kernels {
        configs: configs.to_vec(),
        fault: |_| Fault::None,
    };
    let mut m = mock::Device::new(plan, per_iter_s, kernels);
    m.run.array_bytes = Some(2 * MAX_BLOCK * 16);
    m
}

fn results(m: &Mock) -> Vec<ProbeResult> {
    let mut out = Vec::new();
    pollster::block_on(run_on(m, &mut |r| out.push(r)));
    out
}

impl StreamExecutor for Mock {
    type Config = u32;
    /// The device arrays, and what the last prepared kernel leaves in them.
    type Arrays = std::cell::RefCell<[Vec<f32>; 3]>;
    type Prepared = (Kernel, u32, f64);

    fn array_bytes(&self) -> (u64, String) {
        unreachable!("the mock's sizes are given")
    }
    fn candidates(&self, _k: Kernel, _chosen: Option<u32>) -> Vec<u32> {
        self.configs.clone()
    }
    fn label(&self, _k: Kernel, cfg: u32) -> String {
        format!("mock {cfg}")
    }
    fn upload(&self, host: &[Vec<f32>; 3]) -> Result<Self::Arrays> {
        Ok(std::cell::RefCell::new(host.clone()))
    }
    fn poison(&self, arrays: &mut Self::Arrays, which: usize) -> Result<()> {
        arrays.borrow_mut()[which].fill(f32::NAN);
        Ok(())
    }
    /// Runs the kernel on the host at once (the timed dispatches change nothing more).
    fn prepare(
        &self,
        k: Kernel,
        arrays: &Self::Arrays,
        cfg: u32,
        _n: usize,
    ) -> Result<Self::Prepared> {
        // Each measurement replays the script from its start.
        self.clock.next.set(0);
        let fault = (self.fault)(cfg);
        let mut dev = arrays.borrow_mut();
        let mut dot = 0.0;
        if fault != Fault::Unwritten {
            match expected(k, &dev) {
                Some((which, mut want)) => {
                    if fault == Fault::Wrong {
                        want[7] *= 1.01;
                    }
                    dev[which] = want;
                }
                None => {
                    let (a, b) = (&dev[0], &dev[1]);
                    let products = a.iter().zip(b).map(|(x, y)| f64::from(x * y));
                    let exact: f64 = products.clone().sum();
                    // Wrong: off by 1% of sum |a*b|, what the check measures against.
                    let off: f64 = products.map(f64::abs).sum::<f64>() * 0.01;
                    dot = if fault == Fault::Wrong {
                        exact + off
                    } else {
                        exact
                    };
                }
            }
        } else {
            dot = f64::NAN;
        }
        Ok((k, cfg, dot))
    }
    async fn dispatch(&self, _p: &Self::Prepared, iters: u32) -> Result<f64> {
        Ok(self.clock.batch(iters))
    }
    async fn read(&self, arrays: &Self::Arrays, which: usize, floats: usize) -> Result<Vec<f32>> {
        assert_eq!(arrays.borrow()[which].len(), floats);
        Ok(arrays.borrow()[which].clone())
    }
    async fn dot_sum(&self, p: &Self::Prepared) -> Result<f64> {
        Ok(p.2)
    }
    fn describe(&self, res: ProbeResult, _k: Kernel, p: &Self::Prepared) -> ProbeResult {
        res.param("mock_config", p.1)
    }
}

#[test]
fn traffic_counts() {
    use Kernel::*;
    assert_eq!(Triad.traffic(), (2, 1));
    assert_eq!(Dot.traffic(), (2, 0));
}

#[test]
fn known_times_give_the_bandwidth_and_the_warm_up_is_not_counted() {
    // One configuration (no tuning): one warm-up run of 1 s a dispatch, then five samples of
    // one dispatch each (the warm-up run already lasted the 1 ms target).
    let m = mock(
        mock::plan(5, 8),
        &[1],
        &[1.0, 0.004, 0.002, 0.001, 0.003, 0.008],
    );
    let r = results(&m);
    assert_eq!(r.len(), 5);
    let bytes = 2 * MAX_BLOCK * 16;
    let triad = &r[3];
    assert_eq!(triad.name, "stream triad");
    assert_eq!(triad.status, Status::Ok, "{:?}", triad.reason);
    let moved = 3.0 * bytes as f64;
    let v = triad.value.as_ref().expect("a figure");
    assert_eq!(v.n, 5);
    assert!((v.median - moved / 0.003 * 1e-9).abs() < 1e-12, "{v:?}");
    assert!((v.max - moved / 0.001 * 1e-9).abs() < 1e-12);
    assert!((v.min - moved / 0.008 * 1e-9).abs() < 1e-12);
    let t = triad.timing.as_ref().unwrap();
    assert_eq!(t.warmup_runs, 1);
    assert_eq!(t.iters_per_sample, 1);
    assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
    assert_eq!(t.method, TimingMethod::WallClock);
    // Five kernels, six batches each.
    assert_eq!(m.clock.batches.borrow().len(), 30);
    assert!(triad.autotune.is_empty());
    assert_eq!(triad.params["array_bytes"], bytes);
    assert_eq!(triad.params["mock_config"], 1);
    let dot = &r[4];
    let (mv, dv) = (
        dot.value.as_ref().unwrap(),
        2.0 * bytes as f64 / 0.003 * 1e-9,
    );
    assert!(
        (mv.median - dv).abs() < 1e-12,
        "dot moves two arrays: {mv:?}"
    );
    assert_eq!(dot.validation.as_ref().unwrap().metric, "rel_sum");
}

#[test]
fn a_wrong_result_fails_with_no_figure() {
    for fault in [Fault::Wrong, Fault::Unwritten] {
        let mut m = mock(mock::plan(3, 8), &[1], &[0.01]);
        m.state.fault = if fault == Fault::Wrong {
            |_| Fault::Wrong
        } else {
            |_| Fault::Unwritten
        };
        for r in results(&m) {
            assert_eq!(r.status, Status::Failed, "{}", r.name);
            assert!(r.value.is_none(), "{}: no figure", r.name);
            let v = r.validation.as_ref().expect("the check is recorded");
            assert!(!v.passed && v.error > v.tolerance, "{}: {v:?}", r.name);
            let reason = r.reason.as_deref().unwrap();
            assert!(reason.starts_with("validation failed: error"), "{reason}");
            let detail = v.detail.as_deref().unwrap();
            if r.name == "stream dot" {
                assert!(detail.ends_with(", error relative to sum|a*b|"), "{detail}");
            } else {
                assert_eq!(
                    detail,
                    "largest element-wise relative error over the whole array"
                );
            }
        }
    }
}

#[test]
fn tuning_keeps_the_fastest_valid_configuration() {
    // Configuration 2 is wrong, 3 is slowest: 1 is measured, every trial recorded.
    let mut m = mock(mock::plan(3, 8), &[1, 2, 3], &[0.01]);
    m.state.fault = |c| if c == 2 { Fault::Wrong } else { Fault::None };
    let r = results(&m);
    for p in &r {
        assert_eq!(p.status, Status::Ok, "{}: {:?}", p.name, p.reason);
        assert_eq!(p.params["mock_config"], 1, "{}", p.name);
        let valid: Vec<bool> = p.autotune.iter().map(|t| t["valid"] == true).collect();
        assert_eq!(valid, [true, false, true], "{}", p.name);
        assert_eq!(p.autotune[1]["config"], "mock 2");
        assert!(p.autotune[1]["gbps_median"].is_null());
    }
    assert!(m.said.borrow().iter().any(|s| s.ends_with("): measuring")));
}

#[test]
fn no_valid_configuration_fails_the_kernel() {
    let mut m = mock(mock::plan(3, 8), &[1, 2], &[0.01]);
    m.state.fault = |_| Fault::Wrong;
    for r in results(&m) {
        assert_eq!(r.status, Status::Failed);
        assert!(r.value.is_none() && r.validation.is_none());
        assert_eq!(r.autotune.len(), 2);
        let reason = r.reason.unwrap();
        assert!(reason.contains("validation failed"), "{reason}");
    }
}
