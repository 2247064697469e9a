//! The binary's behaviour on good and bad input: exit codes, messages, files left behind.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn gpuvalue(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .args(args)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run gpuvalue")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// True when an adapter exists; under CI=true its absence fails the test.
fn have_adapter() -> bool {
    common::gpu().is_some()
}

#[test]
fn devices_json_lists_adapters_with_limits_and_features() {
    if !have_adapter() {
        return;
    }
    let o = gpuvalue(&["devices", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("devices --json is JSON");
    let first = &v[0];
    for key in [
        "name",
        "vendor",
        "device_type",
        "backend",
        "driver",
        "software",
        "limits",
        "features",
    ] {
        assert!(first.get(key).is_some(), "missing {key} in {first}");
    }
    assert!(
        first["limits"]["max_storage_buffer_binding_size"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(first["features"].get("timestamp_query").is_some());
}

#[test]
fn bad_adapter_choices_are_refused_with_a_specific_message() {
    if !have_adapter() {
        return;
    }
    let o = gpuvalue(&["bench", "--adapter", "99", "--probes", "latency"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("out of range"), "{}", stderr(&o));
    let o = gpuvalue(&[
        "bench",
        "--adapter",
        "no-such-gpu-xyz",
        "--probes",
        "latency",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no-such-gpu-xyz"), "{}", stderr(&o));
}

#[test]
fn bad_sizes_are_refused() {
    let o = gpuvalue(&["bench", "--sizes", "0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("at least 1"), "{}", stderr(&o));
    let o = gpuvalue(&["bench", "--sizes", "12xx4"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("MxNxK"), "{}", stderr(&o));
    if !have_adapter() {
        return;
    }
    // 100000^2 floats = 40 GB: beyond any adapter's binding limit.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = gpuvalue(&[
        "bench",
        "--sizes",
        "100000",
        "--probes",
        "matmul",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("max_storage_buffer_binding_size") || e.contains("max_buffer_size"),
        "{e}"
    );
    assert!(!out.exists(), "no results file for a refused run");
}

#[test]
fn unwritable_output_is_refused_before_running() {
    if !have_adapter() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = gpuvalue(&[
        "bench",
        "--probes",
        "latency",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    let o = gpuvalue(&[
        "bench",
        "--probes",
        "latency",
        "--out",
        "/proc/gpuvalue/r.json",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--out"), "{}", stderr(&o));
}

#[test]
fn bench_writes_a_results_file_that_show_reads_back() {
    if !have_adapter() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub").join("r.json");
    let o = gpuvalue(&[
        "bench",
        "--quick",
        "--probes",
        "latency,matmul",
        "--sizes",
        "64,33x17x9",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    // Not a terminal: no progress bar output.
    assert!(
        !stderr(&o).contains('\r'),
        "progress drawn off a TTY: {}",
        stderr(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["complete"], true);
    let names: Vec<&str> = v["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"matmul_f32 33x17x9"), "{names:?}");
    assert!(names.contains(&"latency dispatch round trip"), "{names:?}");
    assert!(v["host"]["cpu_threads"].as_u64().unwrap() >= 1);
    assert!(v["adapter"]["name"].as_str().is_some());
    let shown = gpuvalue(&["show", out.to_str().unwrap()]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(stdout(&shown).contains("matmul_f32 33x17x9"));
    if v["adapter"]["software"] == true {
        assert!(stdout(&o).contains("SOFTWARE ADAPTER"));
        assert!(stdout(&shown).contains("SOFTWARE ADAPTER"));
    }
}

#[test]
fn show_refuses_malformed_and_newer_files() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let check = |p: &Path, want: &str| {
        let o = gpuvalue(&["show", p.to_str().unwrap()]);
        assert!(!o.status.success());
        let e = stderr(&o);
        assert!(
            e.contains(p.file_name().unwrap().to_str().unwrap()),
            "file not named: {e}"
        );
        assert!(e.contains(want), "expected {want:?} in: {e}");
    };
    check(&write("syntax.json", "{\"schema_version\": 1,"), "JSON");
    check(
        &write("newer.json", "{\"schema_version\": 7, \"probes\": []}"),
        "newer",
    );
    check(
        &write("types.json", "{\"schema_version\": 1, \"tool\": 5}"),
        "tool",
    );
    check(&dir.path().join("missing.json"), "cannot read");
}

#[cfg(target_os = "linux")]
#[test]
fn no_adapter_explains_how_to_get_lavapipe() {
    // Linux has no Metal adapter: the search finds nothing.
    let o = gpuvalue(&["bench", "--backend", "metal", "--probes", "latency"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("no GPU adapter found"), "{e}");
    assert!(e.contains("metal"), "{e}");
    assert!(e.contains("mesa-vulkan-drivers"), "{e}");
}
