//! `gpuvalue transfers`: two adapters at once (lavapipe and SwiftShader,
//! two Vulkan drivers on this machine's CPU), each alone and both together in both
//! directions, and the host-staged copies between them, every copy checked; one OpenCL
//! device (PoCL) alone; and the refusals.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// lavapipe's and SwiftShader's Vulkan ICD manifests, where both are installed.
fn two_drivers() -> Option<String> {
    let lvp = std::fs::read_dir("/usr/share/vulkan/icd.d")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p: &PathBuf| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lvp_icd"))
        })?;
    let swiftshader = Path::new("/usr/lib/chromium/vk_swiftshader_icd.json");
    swiftshader
        .exists()
        .then(|| format!("{}:{}", lvp.display(), swiftshader.display()))
}

/// Both drivers, or None after saying the test skipped (a failure under CI, which installs
/// lavapipe from mesa-vulkan-drivers and SwiftShader from chromium).
fn two_drivers_or_skip() -> Option<String> {
    let icds = two_drivers();
    if icds.is_none() {
        assert!(
            !crate::common::in_ci(),
            "CI installs lavapipe (mesa-vulkan-drivers) and SwiftShader (chromium)"
        );
        crate::common::skipped("lavapipe and SwiftShader are not both installed");
    }
    icds
}

fn transfers(icds: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpuvalue"));
    c.arg("transfers").args(args);
    c.env("XDG_RUNTIME_DIR", std::env::temp_dir());
    if let Some(icds) = icds {
        c.env("VK_ICD_FILENAMES", icds);
    }
    c.output().expect("run gpuvalue")
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn gbs(figure: &Value) -> f64 {
    assert_eq!(figure["check"]["passed"], true, "{figure}");
    let s = &figure["gbs"];
    let (median, min, max) = (
        s["median"].as_f64().unwrap(),
        s["min"].as_f64().unwrap(),
        s["max"].as_f64().unwrap(),
    );
    assert!(min > 0.0 && min <= median && median <= max, "{s}");
    assert_eq!(s["n"], 2, "two timed runs asked for: {s}");
    median
}

#[test]
fn two_adapters_copy_alone_and_at_once_and_to_each_other() {
    let Some(icds) = two_drivers_or_skip() else {
        return;
    };
    let out = transfers(
        Some(&icds),
        &[
            "--backend",
            "vulkan",
            "--allow-software",
            "--mib",
            "8",
            "--runs",
            "2",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = json(&out);
    let gpus = t["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2, "{t}");
    let names: Vec<&str> = gpus.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.contains("SwiftShader")), "{names:?}");
    assert!(names.iter().any(|n| n.contains("llvmpipe")), "{names:?}");
    assert_eq!(t["bytes"], 8 << 20);
    for g in gpus {
        for way in ["to_device", "to_host"] {
            let w = &g[way];
            let alone = gbs(&w["alone"]);
            let together = gbs(&w["together"]);
            let ratio = w["together_vs_alone"].as_f64().unwrap();
            assert!((ratio - together / alone).abs() < 1e-9, "{w}");
        }
    }
    for a in t["together"].as_array().unwrap() {
        assert_eq!(a["gpus"], 2);
        let total = a["together_gbs"]["median"].as_f64().unwrap();
        let sum = a["sum_alone_gbs"].as_f64().unwrap();
        assert!(total > 0.0 && sum > 0.0, "{a}");
        assert!((a["ratio"].as_f64().unwrap() - total / sum).abs() < 1e-9);
    }
    let pairs = t["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2, "both ways between two GPUs: {t}");
    for p in pairs {
        assert!(
            p["path"].as_str().unwrap().starts_with("host-staged"),
            "{p}"
        );
        gbs(&p["figure"]);
    }
    assert_ne!(pairs[0]["from"], pairs[0]["to"]);
}

#[test]
fn the_table_names_both_directions_the_total_and_the_staged_copies() {
    let Some(icds) = two_drivers_or_skip() else {
        return;
    };
    let out = transfers(
        Some(&icds),
        &[
            "-b",
            "vulkan",
            "--allow-software",
            "--mib",
            "4",
            "--runs",
            "1",
            "--quiet",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for want in [
        "host-to-device (",
        "device-to-host (",
        "all at once GB/s",
        "all 2 GPUs at once move",
        "GPU to GPU (host-staged",
        "note: software adapters are the CPU",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    assert!(
        out.stderr.is_empty(),
        "--quiet prints no progress: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn one_opencl_device_runs_alone_and_says_why_there_is_no_together_figure() {
    let out = transfers(
        None,
        &[
            "-b",
            "opencl",
            "--allow-software",
            "--mib",
            "8",
            "--runs",
            "2",
            "--json",
        ],
    );
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no GPU") {
        assert!(!crate::common::in_ci(), "CI installs PoCL");
        crate::common::skipped("no OpenCL device");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = json(&out);
    // PoCL may list more than one device where other ICDs are installed: the first one.
    let g = &t["gpus"][0];
    assert_eq!(g["backend"], "opencl");
    assert!(
        g["to_device"]["path"]
            .as_str()
            .unwrap()
            .contains("clEnqueueWriteBuffer")
    );
    gbs(&g["to_device"]["alone"]);
    gbs(&g["to_host"]["alone"]);
    if t["gpus"].as_array().unwrap().len() == 1 {
        assert!(g["to_device"].get("together").is_none());
        assert!(t["pairs"].as_array().unwrap().is_empty());
        let notes = t["notes"].to_string();
        assert!(
            notes.contains("one GPU: nothing runs at the same time"),
            "{notes}"
        );
    }
}

#[test]
fn software_adapters_are_refused_unless_allowed_and_bad_sizes_are_named() {
    let out = transfers(None, &["--mib", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--mib") && err.contains("expected a whole number of MiB"),
        "{err}"
    );
    let out = transfers(None, &["--runs", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--runs"));
    // This machine's adapters are all software ones (lavapipe, PoCL): refused by default.
    let out = transfers(None, &["--quick", "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    if crate::common::in_ci() || err.contains("no GPU to measure") {
        assert_eq!(out.status.code(), Some(2));
        assert!(err.contains("--allow-software"), "{err}");
        assert!(out.stdout.is_empty(), "nothing half-written on stdout");
    }
}
