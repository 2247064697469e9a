//! The double-precision method on a mock executor: no device, products computed on the
//! host (or deliberately wrong), batch times scripted.

use super::method::{DoubleKernels, run_on};
use super::*;
use crate::measuring::probes::executor::mock;
use crate::model::TimingMethod;
use std::cell::Cell;

/// What the mock knows of its kernels.
struct Kernels {
    layouts: Vec<u32>,
    /// Products prepared so far; those from `wrong_from` on are off by one part in 1e9.
    prepared: Cell<usize>,
    wrong_from: usize,
}

type Mock = mock::Device<Kernels>;

fn mock(layouts: &[u32], per_iter_s: &[f64]) -> Mock {
    let kernels = Kernels {
        layouts: layouts.to_vec(),
        prepared: Cell::new(0),
        wrong_from: usize::MAX,
    };
    let mut m = mock::Device::new(mock::plan(5, 8), per_iter_s, kernels);
    m.run.sizes = Some(vec![Dims { m: 8, n: 8, k: 8 }]);
    m
}

fn results(m: &Mock) -> Vec<ProbeResult> {
    let mut out = Vec::new();
    pollster::block_on(run_on(m, m, &mut |r| out.push(r)));
    out
}

impl DoubleKernels for Mock {
    type Layout = u32;
    /// The product, computed when prepared.
    type Prepared = Vec<f64>;

    fn method(&self) -> TimingMethod {
        TimingMethod::WallClock
    }
    async fn self_test_outputs(&self, _inputs: &SelfTestInputs) -> Result<Vec<[f32; 4]>> {
        bail!("the mock has no self-test kernel")
    }
    fn lacks(&self, kind: Kind) -> Option<String> {
        (kind == Kind::F16).then(|| "the mock has no f16".to_string())
    }
    fn layouts(&self, _kind: Kind, _use_fma: bool) -> Vec<u32> {
        self.layouts.clone()
    }
    fn label(&self, _kind: Kind, l: u32) -> String {
        format!("mock {l}")
    }
    fn describe(&self, _kind: Kind, l: u32) -> serde_json::Value {
        serde_json::json!({ "label": format!("mock {l}") })
    }
    fn padded(&self, _kind: Kind, _l: u32, d: Dims) -> Result<Dims> {
        Ok(d)
    }
    fn prepare(&self, _kind: Kind, _l: u32, p: Dims, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
        self.clock.next.set(0);
        let n = self.prepared.get();
        self.prepared.set(n + 1);
        let rows: Vec<usize> = (0..p.m).collect();
        let mut c: Vec<f64> = reference_rows(p, a, b, &rows).concat();
        if n >= self.wrong_from {
            c.iter_mut().for_each(|x| *x *= 1.0 + 1e-9);
        }
        Ok(c)
    }
    async fn dispatch(&self, _p: &Vec<f64>, iters: u32) -> Result<f64> {
        Ok(self.clock.batch(iters))
    }
    async fn read(&self, p: &Vec<f64>) -> Result<Vec<f64>> {
        Ok(p.clone())
    }
}

#[test]
fn known_times_give_the_gflops_and_the_warm_up_is_not_counted() {
    // Each run: one warm-up run of 1 s a product, then samples of one product each.
    let m = mock(&[1], &[1.0, 0.004, 0.002, 0.001, 0.003, 0.008]);
    let r = results(&m);
    let names: Vec<(&str, Status)> = r.iter().map(|p| (p.name.as_str(), p.status)).collect();
    assert_eq!(r.len(), 3, "{names:?}");
    assert_eq!(r[0].figure, Some(FigureKey::MatmulDf64));
    assert_eq!(r[0].status, Status::Failed);
    assert_eq!(
        r[0].reason.as_deref(),
        Some("self-test could not run: the mock has no self-test kernel")
    );
    assert_eq!(r[2].status, Status::Unsupported);
    assert_eq!(r[2].reason.as_deref(), Some("the mock has no f16"));
    let f64r = &r[1];
    assert_eq!(f64r.status, Status::Ok, "{:?}", f64r.reason);
    let flops = 2.0 * 8.0 * 8.0 * 8.0;
    let v = f64r.value.as_ref().expect("a figure");
    assert_eq!(v.n, 5);
    assert!((v.median - flops / 0.003 * 1e-9).abs() < 1e-12, "{v:?}");
    assert!((v.max - flops / 0.001 * 1e-9).abs() < 1e-12);
    assert!((v.min - flops / 0.008 * 1e-9).abs() < 1e-12);
    let t = f64r.timing.as_ref().unwrap();
    assert_eq!((t.warmup_runs, t.iters_per_sample), (1, 1));
    assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
    // The trial, the measured run and the adversarial check, each with its warm-up run.
    assert_eq!(m.clock.batches.borrow().len(), 4 + 6 + 4);
    assert_eq!(f64r.autotune.len(), 1);
    assert_eq!(f64r.kernel, Some(serde_json::json!({"label": "mock 1"})));
    let val = f64r.validation.as_ref().unwrap();
    assert_eq!(
        (val.metric.as_str(), val.error),
        ("relative_frobenius", 0.0)
    );
    assert!(
        val.detail
            .as_deref()
            .unwrap()
            .ends_with("8 rows checked against compensated f64")
    );
}

#[test]
fn a_wrong_product_fails_with_no_figure() {
    // Right while tuning and measuring, wrong on the adversarial inputs.
    let mut m = mock(&[1], &[0.01]);
    m.state.wrong_from = 2;
    let f64r = &results(&m)[1];
    assert_eq!(f64r.status, Status::Failed);
    assert!(f64r.value.is_none(), "no figure");
    let v = f64r.validation.as_ref().expect("the check is recorded");
    assert!(!v.passed && v.error > F64_TOLERANCE, "{v:?}");
    assert!(
        f64r.reason
            .as_deref()
            .unwrap()
            .starts_with("validation failed")
    );
    // Wrong from the start: every candidate is invalid.
    let mut m = mock(&[1, 2], &[0.01]);
    m.state.wrong_from = 0;
    let f64r = &results(&m)[1];
    assert_eq!(f64r.status, Status::Failed);
    assert!(f64r.value.is_none() && f64r.validation.is_none());
    let valid: Vec<bool> = f64r.autotune.iter().map(|t| t["valid"] == true).collect();
    assert_eq!(valid, [false, false]);
}
