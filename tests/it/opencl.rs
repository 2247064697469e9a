//! The OpenCL executor on a real OpenCL device (PoCL in CI): listed beside the wgpu
//! adapters, every probe validated, the results file read by the other commands, and the
//! same probe agreeing with lavapipe on the same inputs. Outside CI a machine without an
//! OpenCL device says it skipped; with CI=true that is a failure.

use crate::common::{gpuvalue, in_ci, opencl, run_probe_opencl};
use gpuvalue::figure::FigureKey;
use gpuvalue::measuring::reference::Dims;
use gpuvalue::results::{ResultsFile, Status};

fn dims(n: usize) -> Dims {
    Dims { m: n, n, k: n }
}

#[test]
fn devices_lists_opencl_beside_wgpu_each_with_its_backend() {
    let Some(cl) = opencl() else { return };
    let out = gpuvalue(&["devices", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    let backends: Vec<&str> = list.iter().filter_map(|d| d["backend"].as_str()).collect();
    assert!(backends.contains(&"opencl"), "{backends:?}");
    let entry = list
        .iter()
        .find(|d| d["backend"] == "opencl" && d["name"] == cl.info.name.as_str())
        .expect("the OpenCL device in the list");
    // A CPU device is labelled as the CPU, like lavapipe.
    assert_eq!(
        entry["software"],
        serde_json::json!(cl.info.device_type == "cpu")
    );
    assert!(entry["opencl"]["device_name"].is_string(), "{entry}");
    assert!(
        entry["opencl"]["compute_units"].as_u64().unwrap_or(0) > 0,
        "{entry}"
    );
    // What the probes need is in the JSON: cooperative-matrix shapes, or why there are none.
    for d in &list {
        let f = &d["features"];
        assert!(f["cooperative_matrix"].is_array(), "{d}");
        if f["cooperative_matrix"]
            .as_array()
            .is_some_and(|a| a.is_empty())
        {
            assert!(f["cooperative_matrix_note"].is_string(), "{d}");
        }
    }
    let table = gpuvalue(&["devices", "--backend", "opencl"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(table.status.success() && text.contains("opencl"), "{text}");
}

#[test]
fn every_probe_on_opencl_is_validated_or_says_why_not() {
    let Some(cl) = opencl() else { return };
    for probe in gpuvalue::measuring::probes::names() {
        let sizes = Some(vec![Dims {
            m: 70,
            n: 45,
            k: 33,
        }]);
        let results = run_probe_opencl(&cl, probe, sizes);
        assert!(!results.is_empty(), "{probe} emitted nothing");
        for r in &results {
            let why = r.reason.clone().unwrap_or_default();
            match r.status {
                Status::Ok => {
                    let v = r.validation.as_ref().expect("a validation record");
                    assert!(v.passed, "{probe}: {:?}", r.validation);
                    assert!(r.value.as_ref().is_some_and(|v| v.median > 0.0), "{probe}");
                    let t = r.timing.as_ref().expect("timing");
                    assert!(t.time_per_iter_s.n >= 3, "{probe}: {t:?}");
                }
                Status::Unsupported => assert!(!why.is_empty(), "{probe}: no reason"),
                _ => panic!("{probe} {:?} on {}: {why}", r.figure, cl.info.name),
            }
        }
    }
}

#[test]
fn opencl_bench_file_is_read_by_show_rank_compare_and_report() {
    let Some(_cl) = opencl() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cl.json");
    let f = file.to_str().unwrap();
    let out = gpuvalue(&[
        "bench",
        "--backend",
        "opencl",
        "--quick",
        "--probes",
        "peak,stream,latency",
        "--array-mib",
        "4",
        "-o",
        f,
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = ResultsFile::load(&file).expect("a valid results file");
    assert_eq!(r.adapter.backend, "opencl");
    assert!(r.complete);
    assert!(
        r.probes.iter().all(|p| p.status == Status::Ok),
        "{:?}",
        r.probes
    );
    // Timed by profiling events (or the wall clock, said, after they disagreed).
    let methods: Vec<String> = r
        .probes
        .iter()
        .filter_map(|p| p.timing.as_ref().map(|t| t.method.to_string()))
        .collect();
    assert!(
        methods
            .iter()
            .any(|m| m.contains("opencl profiling events")),
        "{methods:?}"
    );
    for args in [
        vec!["show", f],
        vec!["rank", "--results", f, "--scenario", "inference"],
        vec!["compare", f, f],
        vec![
            "report",
            f,
            "-o",
            dir.path().join("r.html").to_str().unwrap(),
        ],
    ] {
        let out = gpuvalue(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The heading says how the rows were timed, as the rows do.
        if args[0] == "show" {
            let text = String::from_utf8_lossy(&out.stdout).replace("\n  ", " ");
            if let Some(h) = text.lines().find(|l| l.contains("SOFTWARE ADAPTER")) {
                assert!(h.contains("opencl profiling events"), "{h}");
            }
        }
    }
}

#[test]
fn int8_products_agree_between_opencl_and_wgpu_on_the_same_inputs() {
    let Some(cl) = opencl() else { return };
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    for (d, seed) in [
        (dims(64), 1u64),
        (
            Dims {
                m: 37,
                n: 70,
                k: 19,
            },
            2,
        ),
    ] {
        let want = gpuvalue::measuring::probes::int8::product_cpu(d, seed);
        let on_cl =
            gpuvalue::measuring::probes::int8::product_opencl(&cl, d, seed).expect("OpenCL");
        let on_wgpu = pollster::block_on(gpuvalue::measuring::probes::int8::product_wgpu(
            &gpu, d, seed,
        ))
        .expect("wgpu");
        assert_eq!(on_cl.len(), want.len());
        assert_eq!(
            on_cl, on_wgpu,
            "{d}: {} and {} differ",
            cl.info.name, gpu.info.name
        );
        assert_eq!(on_cl, want, "{d}: both differ from the CPU");
    }
}

#[test]
fn the_df64_self_test_judges_both_executors_alike() {
    // The same inputs and judge on both: where both devices are exact, both say usable.
    let Some(cl) = opencl() else { return };
    let r = run_probe_opencl(&cl, "double", Some(vec![dims(64)]));
    let df = r
        .iter()
        .find(|r| r.figure == Some(gpuvalue::figure::FigureKey::MatmulDf64))
        .expect("a df64 result");
    assert_eq!(df.status, Status::Ok, "{:?}", df.reason);
    let st = df.params.get("self_test").expect("the self-test recorded");
    assert_eq!(st["usable"], serde_json::json!(true), "{st}");
    let err = df.validation.as_ref().unwrap().error;
    assert!(err < 1e-12, "df64 error {err:e}");
    if in_ci() {
        assert!(cl.info.features.shader_f64, "PoCL offers cl_khr_fp64");
    }
}

#[test]
fn the_mfma_probe_passes_through_its_emulated_instructions_and_is_unsupported_off_cdna() {
    // The probe's tiling, packing and check on the instructions' exact lane mappings
    // (gfx942's FP16, BF16 and FP64, gfx950's 16x16x32 FP16), each emulated in portable OpenCL C,
    // at a size that pads every dimension; then the probe as a bench runs it here.
    let Some(cl) = opencl() else { return };
    let host = gpuvalue::host::HostInfo::detect();
    let d = Dims {
        m: 70,
        n: 45,
        k: 33,
    };
    let ctx = gpuvalue::measuring::probes::ClCtx {
        cl: &cl,
        run: crate::common::tiny_run(&host, Some(vec![d, dims(128)])),
    };
    let mut out = Vec::new();
    pollster::block_on(gpuvalue::measuring::probes::mfma::run_emulated(
        &ctx,
        &mut |r| out.push(r),
    ));
    assert_eq!(out.len(), 4 * 2, "{out:#?}");
    for r in &out {
        assert_eq!(r.status, Status::Ok, "{}: {:?}", r.name, r.reason);
        let v = r.validation.as_ref().unwrap();
        assert!(v.passed && v.error < 1e-5, "{}: {v:?}", r.name);
        assert!(
            r.params["instruction"]
                .as_str()
                .unwrap()
                .contains("emulated")
        );
        assert!(!r.autotune.is_empty(), "{}", r.name);
        // FP64: its own figure, summed in f64 (an f32 sum would miss by about 1e-7).
        if r.params["inputs"] == "f64" {
            assert_eq!(r.figure, Some(FigureKey::MatmulF64Matrix), "{}", r.name);
            assert!(v.error < 1e-12, "{}: {v:?}", r.name);
        } else {
            assert_eq!(r.figure, Some(FigureKey::MatmulCoop), "{}", r.name);
        }
    }
    let names: std::collections::BTreeSet<_> = out.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names.len(),
        6,
        "FP16 twice (two layouts) share names: {names:?}"
    );
    let bench = run_probe_opencl(&cl, "coop", Some(vec![d]));
    assert_eq!(
        bench.len(),
        2,
        "matrix engines and FP64 matrix engines: {bench:#?}"
    );
    for r in &bench {
        assert_eq!(r.status, Status::Unsupported);
        let why = r.reason.as_deref().unwrap_or("");
        assert!(
            why.contains("not an AMD CDNA part")
                || why.contains("no AMD gfx id")
                || why.contains("AMD CDNA's FP64 MFMA"),
            "{why}"
        );
    }
}

/// The peak probe is the ceiling of the FP32 figures on the CPU devices too: no matmul's
/// median above the peak's best sample in one bench, on PoCL and on lavapipe (where the
/// matmul beat the first peak run, the bench measures the peak again and keeps the higher
/// median). The best sample, not the median: on a 2-core machine whose other core runs
/// other tests (a page build, SwiftShader), a median taken under more load than the
/// matmul's falls below it (PoCL: a 256 matmul's 78.9 GFLOPS over a peak median of 75.6 in
/// a clean clone's run), while a matmul figure too high by its FLOP count would still pass
/// every peak sample.
#[test]
fn the_peak_is_the_ceiling_on_pocl_and_lavapipe() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ["opencl", "vulkan"] {
        let present = match backend {
            "opencl" => opencl().is_some(),
            _ => crate::common::gpu().is_some(),
        };
        if !present {
            continue;
        }
        let file = dir.path().join(format!("{backend}.json"));
        let out = gpuvalue(&[
            "bench",
            "--backend",
            backend,
            "--quick",
            "--probes",
            "peak,matmul",
            "-o",
            file.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = ResultsFile::load(&file).unwrap();
        let peak = r
            .best(gpuvalue::figure::FigureKey::PeakF32)
            .expect("a peak figure");
        let best_sample = r
            .ok(gpuvalue::figure::FigureKey::PeakF32)
            .filter_map(|p| p.value.as_ref().map(|v| v.max))
            .fold(peak, f64::max);
        let matmuls: Vec<(String, f64)> = r
            .ok(gpuvalue::figure::FigureKey::MatmulF32)
            .map(|p| (p.name.clone(), p.value.as_ref().unwrap().median))
            .collect();
        assert!(!matmuls.is_empty(), "{backend}: no matmul measured");
        // The two probes run seconds apart on a CPU device other tests load too: one run of
        // the suite on this 2-vCPU VM measured PoCL's 512^3 matmul 4% over the peak's best
        // sample (121.6 against 116.6 GFLOPS) with the other tests running beside it. A 10%
        // margin keeps that noise out and still catches a figure a timing bug inflates.
        for (name, v) in &matmuls {
            assert!(
                *v <= best_sample * 1.10,
                "{backend}: {name} at {v:.1} GFLOPS is above the peak's best sample \
                 {best_sample:.1} (median {peak:.1})"
            );
        }
    }
}

/// `bench --backend opencl` on a machine whose CPU package has RAPL: each figure carries
/// the package's energy. This machine and CI have no readable RAPL, so the counter is a
/// recorded tree (GPUVALUE_SYSFS_ROOT) whose energy a thread advances at 150 W, wrapping
/// at its range, while the bench runs: the sampler reads it beside PoCL through the binary.
#[test]
fn an_opencl_bench_on_a_rapl_machine_reports_the_packages_energy_per_probe() {
    let Some(_cl) = opencl() else { return };
    let _turn = crate::common::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sysroot");
    let zone = root.join("sys/class/powercap/intel-rapl:0");
    std::fs::create_dir_all(&zone).unwrap();
    std::fs::write(zone.join("name"), "package-0\n").unwrap();
    // A range of 50 J: the counter wraps every third of a second at 150 W.
    let range: u64 = 50_000_000;
    std::fs::write(zone.join("max_energy_range_uj"), format!("{range}\n")).unwrap();
    // Atomically, as sysfs answers a read whole.
    let write = |zone: &std::path::Path, uj: u64| {
        let tmp = zone.join("energy_uj.tmp");
        std::fs::write(&tmp, format!("{uj}\n")).unwrap();
        std::fs::rename(&tmp, zone.join("energy_uj")).unwrap();
    };
    write(&zone, 0);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let zone = zone.clone();
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                write(
                    &zone,
                    (start.elapsed().as_secs_f64() * 150e6) as u64 % range,
                );
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        })
    };
    let file = dir.path().join("cl.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .env(
            "GPUVALUE_HOME",
            std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
        )
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .env("GPUVALUE_SYSFS_ROOT", &root)
        .args([
            "bench",
            "--backend",
            "opencl",
            "--quick",
            "--probes",
            "peak,stream",
        ])
        .args(["--array-mib", "4", "-o", file.to_str().unwrap()])
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace("\n  ", " ");
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("power and clocks from RAPL"), "{text}");
    let r = ResultsFile::load(&file).unwrap();
    let t = r.telemetry.as_ref().expect("telemetry");
    assert_eq!(t.read().map(|s| s.source.as_str()), Some("RAPL"), "{t:?}");
    let mut timed = 0;
    for p in r.probes.iter().filter(|p| p.status == Status::Ok) {
        let e = p
            .energy
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no energy", p.name));
        // A figure shorter than two samples has no interval to read.
        let Some(w) = e.mean_w else { continue };
        timed += 1;
        assert_eq!(
            e.method.as_deref(),
            Some("energy counter"),
            "{}: {e:?}",
            p.name
        );
        // 150 W written, read at 100 ms between samples (the writer's 10 ms steps).
        assert!((w - 150.0).abs() < 20.0, "{}: {w} W", p.name);
        assert!(e.energy_j.is_some_and(|j| j > 0.0), "{}: {e:?}", p.name);
    }
    assert!(timed >= 1, "no figure long enough to read: {:?}", r.probes);
}
