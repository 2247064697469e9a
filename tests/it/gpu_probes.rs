//! Real shaders on the default adapter (lavapipe in CI): every probe at small sizes,
//! validated; proof that validation can fail; the autotuner never keeps a wrong kernel.

use crate::common::{run_probe, tiny_plan, with_matmul};
use gpuvalue::measuring::probes::matmul::{self, Faults, MatmulConfig};
use gpuvalue::measuring::reference::Dims;
use gpuvalue::results::{ProbeResult, Status};
use std::time::{Duration, Instant};

fn assert_all_ok(results: &[ProbeResult]) {
    assert!(!results.is_empty());
    for r in results {
        assert_eq!(
            r.status,
            Status::Ok,
            "{}: {:?} {:?}",
            r.name,
            r.reason,
            r.validation
        );
        let v = r.value.as_ref().expect("ok result has a value");
        assert!(
            v.median > 0.0 && v.min <= v.median && v.median <= v.max,
            "{}: {v:?}",
            r.name
        );
        assert!(v.n >= 3);
        // The figure's own spread (value.stddev was once always 0): samples that differ
        // have a standard deviation, and the mean lies between the extremes.
        assert!(
            v.min <= v.mean && v.mean <= v.max && (v.stddev > 0.0) == (v.max > v.min),
            "{}: {v:?}",
            r.name
        );
        assert!(r.validation.as_ref().is_some_and(|v| v.passed));
        assert!(r.timing.is_some());
    }
}

#[test]
fn matmul_is_valid_at_odd_sizes() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let sizes = vec![
        Dims {
            m: 64,
            n: 64,
            k: 64,
        },
        Dims {
            m: 100,
            n: 37,
            k: 67,
        },
        Dims { m: 1, n: 5, k: 3 },
    ];
    let r = run_probe(&gpu, "matmul", Some(sizes), Faults::default());
    assert_eq!(r.len(), 3);
    assert_all_ok(&r);
    // The kernel configuration and the tuning trials are recorded.
    assert!(r[0].kernel.as_ref().and_then(|k| k.get("label")).is_some());
    assert!(!r[0].autotune.is_empty());
}

#[test]
fn every_candidate_kernel_is_correct_checked_and_trusted() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let d = Dims {
        m: 130,
        n: 70,
        k: 36,
    };
    with_matmul(&gpu, |on| {
        for mut cfg in matmul::candidates(&gpu) {
            for trusted in [false, true] {
                cfg.trusted = trusted;
                let run = pollster::block_on(matmul::run_config(on, &cfg, d, &tiny_plan()))
                    .unwrap_or_else(|e| panic!("{}: {e:#}", cfg.label()));
                assert!(run.valid(), "{}: {:?}", cfg.label(), run.check);
            }
        }
    });
}

#[test]
fn corrupted_matmul_output_fails_validation() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let faults = Faults {
        corrupt_output: true,
    };
    let r = run_probe(
        &gpu,
        "matmul",
        Some(vec![Dims {
            m: 96,
            n: 96,
            k: 96,
        }]),
        faults,
    );
    assert_eq!(r[0].status, Status::Failed, "{r:?}");
    assert!(
        r[0].value.is_none(),
        "a failed probe must not carry a figure"
    );
    assert!(r[0].reason.as_deref().unwrap_or("").contains("validation"));
}

#[test]
fn autotuner_never_keeps_an_invalid_configuration() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let good = MatmulConfig::rows(8, 1, 64);
    // The same kernel stopping half-way through K: twice as fast, and wrong.
    let mut broken = good.clone();
    broken.k_skip = 128;
    let d = Dims {
        m: 256,
        n: 256,
        k: 256,
    };
    let until = || Instant::now() + Duration::from_secs(30);
    with_matmul(&gpu, |on| {
        let cands = [broken.clone(), good.clone()];
        let (chosen, trials) = pollster::block_on(matmul::autotune(on, &cands, d, until()));
        assert_eq!(chosen.as_ref(), Some(&good), "trials: {trials:?}");
        assert!(!trials[0].valid && trials[1].valid, "{trials:?}");
        // Only wrong configurations: nothing is chosen.
        let (none, _) = pollster::block_on(matmul::autotune(on, &[broken], d, until()));
        assert!(none.is_none());
    });
}

#[test]
fn peak_is_valid_and_above_the_matmul() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let r = run_probe(&gpu, "peak", None, Faults::default());
    assert_eq!(r.len(), 1);
    assert_all_ok(&r);
    assert_eq!(
        r[0].params["invocations"],
        1 << 14,
        "lavapipe gets the small dispatch"
    );
}

#[test]
fn stream_kernels_are_valid() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let r = run_probe(&gpu, "stream", None, Faults::default());
    assert_eq!(r.len(), 5);
    assert_all_ok(&r);
}

#[test]
fn stream_covers_arrays_larger_than_one_binding() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    // Reopen the adapter with a 1 MiB binding limit so a 2 MiB array needs several windows.
    let small = crate::common::with_limits(&gpu, |l| l.max_storage_buffer_binding_size = 1 << 20);
    let r = run_probe(&small, "stream", None, Faults::default());
    assert_all_ok(&r);
    for p in &r {
        let windows = p
            .params
            .get("bind_windows")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        assert!(windows >= 2, "{}: {windows} windows", p.name);
    }
}

#[test]
fn transfer_and_latency_are_valid() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let r = run_probe(&gpu, "transfer", None, Faults::default());
    assert_eq!(r.len(), 2);
    assert_all_ok(&r);
    let r = run_probe(&gpu, "latency", None, Faults::default());
    assert_eq!(r.len(), 3);
    // Launch latency needs a queued timestamp, which WebGPU does not give.
    let (launch, r): (Vec<_>, Vec<_>) = r
        .into_iter()
        .partition(|p| p.figure == Some(gpuvalue::figure::FigureKey::LatencyLaunch));
    assert_eq!(launch[0].status, gpuvalue::results::Status::Unsupported);
    assert!(launch[0].reason.as_deref().unwrap().contains("OpenCL only"));
    assert_eq!(r.len(), 2);
    assert_all_ok(&r);
    assert!(r.iter().all(|p| p.unit == "us" && !p.higher_is_better));
}

#[test]
fn int8_matmul_is_exact_at_odd_sizes() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let sizes = vec![
        Dims { m: 70, n: 9, k: 13 },
        Dims {
            m: 257,
            n: 64,
            k: 100,
        },
    ];
    let r = run_probe(&gpu, "int8", Some(sizes), Faults::default());
    assert_eq!(r.len(), 2);
    assert_all_ok(&r);
    for p in &r {
        assert_eq!(p.unit, "GOPS");
        let v = p.validation.as_ref().unwrap();
        assert_eq!((v.metric.as_str(), v.error), ("exact", 0.0), "{}", p.name);
        assert!(p.value.as_ref().unwrap().median > 0.0);
    }
}

#[test]
fn adapter_choice_by_index_and_name() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    use gpuvalue::measuring::gpu::{AdapterChoice, adapter};
    let list = adapter::enumerate(None);
    assert_eq!(list.select(&AdapterChoice::Index(0)).unwrap(), vec![0]);
    let part = gpu
        .info
        .name
        .split_whitespace()
        .next()
        .unwrap()
        .to_uppercase();
    let by_name = list.select(&AdapterChoice::Name(part)).unwrap();
    assert_eq!(list.summaries[by_name[0]].name, gpu.info.name);
    let all = list.select(&AdapterChoice::All).unwrap();
    assert_eq!(all.len(), list.summaries.len());
    let err = list
        .select(&AdapterChoice::Index(list.summaries.len()))
        .unwrap_err();
    assert!(err.to_string().contains("out of range"), "{err}");
    let err = list
        .select(&AdapterChoice::Name("no-such-gpu-xyz".into()))
        .unwrap_err();
    assert!(err.to_string().contains("no-such-gpu-xyz"), "{err}");
    // The default adapter's software flag matches its type and name.
    if gpu.info.name.contains("llvmpipe") {
        assert!(gpu.info.software);
    }
}
