//! Requests beyond the adapter's limits are split or refused with a message naming the
//! limit. Each test reopens the adapter with limits lowered on purpose, so that the paths a
//! large request takes on a real GPU run here at small sizes.

use crate::common::{run_probe, tiny_plan, with_limits, with_matmul};
use gpuvalue::measuring::probes::matmul::{self, Faults};
use gpuvalue::measuring::reference::Dims;
use gpuvalue::results::Status;

fn square(n: usize) -> Dims {
    Dims { m: n, n, k: n }
}

fn all_ok(r: &[gpuvalue::results::ProbeResult]) {
    assert!(!r.is_empty());
    for p in r {
        assert_eq!(p.status, Status::Ok, "{}: {:?}", p.name, p.reason);
    }
}

#[test]
fn workgroups_per_dimension_are_folded_or_refused_by_name() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let small = with_limits(&gpu, |l| l.max_compute_workgroups_per_dimension = 8);
    // STREAM over 2 MiB needs far more than 8 workgroups: split into windows, still valid.
    let r = run_probe(&small, "stream", None, Faults::default());
    all_ok(&r);
    assert!(
        r.iter()
            .all(|p| p.params.get("bind_windows").and_then(|v| v.as_u64()) > Some(1)),
        "{:?}",
        r.iter().map(|p| &p.params).collect::<Vec<_>>()
    );
    // A matmul whose tile grid exceeds the limit is refused, naming it.
    let cfg = matmul::MatmulConfig::rows(8, 1, 64);
    let e = with_matmul(&small, |on| {
        pollster::block_on(matmul::run_config(on, &cfg, square(1024), &tiny_plan())).unwrap_err()
    });
    assert!(
        format!("{e:#}").contains("max_compute_workgroups_per_dimension is 8"),
        "{e:#}"
    );
    // The probe reports it as the reason, with no figure.
    // 2048 needs at least 16 workgroups a side even with the largest (128-wide) tiles.
    let r = run_probe(
        &small,
        "matmul",
        Some(vec![square(2048)]),
        Faults::default(),
    );
    assert_eq!(r[0].status, Status::Failed);
    assert!(r[0].value.is_none());
    assert!(
        r[0].reason
            .as_deref()
            .unwrap_or("")
            .contains("max_compute_workgroups_per_dimension"),
        "{:?}",
        r[0].reason
    );
    // Sizes within the limit still run.
    all_ok(&run_probe(
        &small,
        "matmul",
        Some(vec![square(64)]),
        Faults::default(),
    ));
}

#[test]
fn workgroup_memory_limit_drops_the_kernels_that_need_more() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let limit = 2048;
    let small = with_limits(&gpu, |l| l.max_compute_workgroup_storage_size = limit);
    let fitting = matmul::candidates(&small);
    assert!(!fitting.is_empty());
    assert!(fitting.iter().all(|c| c.workgroup_bytes() <= limit));
    let big = matmul::candidates(&gpu)
        .into_iter()
        .find(|c| c.workgroup_bytes() > limit)
        .expect("the full adapter has a kernel using more workgroup memory");
    let e = with_matmul(&small, |on| {
        pollster::block_on(matmul::run_config(on, &big, square(64), &tiny_plan())).unwrap_err()
    });
    assert!(
        format!("{e:#}").contains("max_compute_workgroup_storage_size 2048"),
        "{e:#}"
    );
    all_ok(&run_probe(
        &small,
        "matmul",
        Some(vec![square(96)]),
        Faults::default(),
    ));
}

#[test]
fn buffer_and_binding_limits_are_named() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    // Binding limit below the buffer limit: a matrix that fits a buffer but not a binding.
    let small = with_limits(&gpu, |l| {
        l.max_storage_buffer_binding_size = 1 << 20;
        l.max_buffer_size = 4 << 20;
    });
    let e = matmul::check_fits(&small, square(1024)).unwrap_err();
    assert!(
        format!("{e:#}").contains("max_storage_buffer_binding_size is 1 MiB"),
        "{e:#}"
    );
    let r = run_probe(
        &small,
        "double",
        Some(vec![square(1024)]),
        Faults::default(),
    );
    assert!(!r.is_empty());
    for p in r.iter().filter(|p| p.probe.starts_with("matmul_")) {
        assert_ne!(p.status, Status::Ok, "{}", p.name);
        if p.status == Status::Failed {
            assert!(
                p.reason
                    .as_deref()
                    .unwrap_or("")
                    .contains("max_storage_buffer_binding_size"),
                "{}: {:?}",
                p.name,
                p.reason
            );
        }
    }
    // Buffer limit below the binding limit: named as such.
    let tiny = with_limits(&gpu, |l| {
        l.max_storage_buffer_binding_size = 1 << 20;
        l.max_buffer_size = 1 << 19;
    });
    let e = matmul::check_fits(&tiny, square(512)).unwrap_err();
    assert!(format!("{e:#}").contains("max_buffer_size"), "{e:#}");
    // STREAM arrays beyond the buffer limit are refused, with no figure.
    let r = run_probe(&tiny, "stream", None, Faults::default());
    assert_eq!(r.len(), 5);
    for p in &r {
        assert_eq!(p.status, Status::Failed);
        assert!(
            p.reason
                .as_deref()
                .unwrap_or("")
                .contains("max_buffer_size (0 MiB)"),
            "{:?}",
            p.reason
        );
    }
    // The transfer probe shrinks its copy to what one buffer may hold, and says how big.
    let r = run_probe(&tiny, "transfer", None, Faults::default());
    all_ok(&r);
    for p in &r {
        let bytes = p.params.get("bytes").and_then(|v| v.as_u64()).unwrap();
        assert!(bytes <= 1 << 19, "{bytes}");
    }
}
