//! `gpuvalue compare` verdicts and exit codes on constructed pairs of results files.

use std::process::{Command, Output};

fn fixture() -> serde_json::Value {
    serde_json::from_str(include_str!("../fixtures/results-lavapipe.json")).unwrap()
}

/// Sets a probe's median and its spread (min/max at median * (1 -/+ half)).
fn set(v: &mut serde_json::Value, name: &str, median: f64, half_spread: f64) {
    let p = v["probes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["name"] == name)
        .unwrap();
    p["value"]["median"] = median.into();
    p["value"]["mean"] = median.into();
    p["value"]["min"] = (median * (1.0 - half_spread)).into();
    p["value"]["max"] = (median * (1.0 + half_spread)).into();
}

fn write(dir: &std::path::Path, name: &str, v: &serde_json::Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p.to_str().unwrap().to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .env(
            "GPUVALUE_HOME",
            std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
        )
        .args(args)
        .output()
        .unwrap()
}

fn verdicts(
    base: &serde_json::Value,
    new: &serde_json::Value,
    extra: &[&str],
) -> (Option<i32>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let (b, n) = (
        write(dir.path(), "base.json", base),
        write(dir.path(), "new.json", new),
    );
    let mut args = vec!["compare", b.as_str(), n.as_str(), "--json"];
    args.extend_from_slice(extra);
    let o = run(&args);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code(), v)
}

fn verdict_of(c: &serde_json::Value, probe: &str) -> String {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["probe"] == probe)
        .unwrap()["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn faster_slower_noisy_failing_and_missing() {
    let mut base = fixture();
    // Quiet figures: 1% half-spread.
    set(&mut base, "matmul_f32 512x512x512", 100.0, 0.01);
    set(&mut base, "stream copy", 10.0, 0.01);
    set(&mut base, "stream triad", 10.0, 0.01);
    set(&mut base, "latency dispatch round trip", 50.0, 0.01);
    let mut new = base.clone();
    set(&mut new, "matmul_f32 512x512x512", 120.0, 0.01); // faster
    set(&mut new, "stream copy", 9.0, 0.01); // 10% slower: a regression
    set(&mut new, "stream triad", 9.7, 0.08); // 3% slower inside 8% noise
    set(&mut new, "latency dispatch round trip", 40.0, 0.01); // lower latency: faster
    let (code, c) = verdicts(&base, &new, &[]);
    assert_eq!(code, Some(1), "{c}");
    assert_eq!(verdict_of(&c, "matmul_f32 512x512x512"), "faster");
    assert_eq!(verdict_of(&c, "stream copy"), "slower");
    assert_eq!(verdict_of(&c, "stream triad"), "same_within_noise");
    assert_eq!(verdict_of(&c, "latency dispatch round trip"), "faster");
    // A higher threshold forgives the 10% slow-down (still reported as slower).
    let (code, c) = verdicts(&base, &new, &["--threshold", "15"]);
    assert_eq!(code, Some(0), "{c}");
    assert_eq!(verdict_of(&c, "stream copy"), "slower");

    // Newly failing is a regression; a probe missing from NEW is reported, not fatal.
    let mut failing = base.clone();
    {
        let probes = failing["probes"].as_array_mut().unwrap();
        let p = probes
            .iter_mut()
            .find(|p| p["name"] == "stream add")
            .unwrap();
        p["status"] = "failed".into();
        p["reason"] = "validation failed".into();
        p.as_object_mut().unwrap().remove("value");
        probes.retain(|p| p["name"] != "stream dot");
    }
    let (code, c) = verdicts(&base, &failing, &[]);
    assert_eq!(code, Some(1), "{c}");
    assert_eq!(verdict_of(&c, "stream add"), "now_failing");
    assert_eq!(verdict_of(&c, "stream dot"), "missing");
    // Only the missing probe: BASE measured it and NEW did not, a failure of the gate
    // (a probe gone missing could hide a regression); the other way
    // round it shows as added, which passes.
    let mut fewer = base.clone();
    fewer["probes"]
        .as_array_mut()
        .unwrap()
        .retain(|p| p["name"] != "stream dot");
    let (code, c) = verdicts(&base, &fewer, &[]);
    assert_eq!(code, Some(1), "{c}");
    assert_eq!(verdict_of(&c, "stream dot"), "missing");
    let (code, _) = verdicts(&fewer, &base, &[]);
    assert_eq!(code, Some(0));
    let (_, c) = verdicts(&fewer, &base, &[]);
    assert_eq!(verdict_of(&c, "stream dot"), "added");
}

#[test]
fn different_adapters_need_force_and_markdown_works() {
    let base = fixture();
    let mut other = fixture();
    other["adapter"]["name"] = "NVIDIA H200".into();
    let dir = tempfile::tempdir().unwrap();
    let (b, n) = (
        write(dir.path(), "b.json", &base),
        write(dir.path(), "n.json", &other),
    );
    let o = run(&["compare", &b, &n]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different adapters"));
    let o = run(&["compare", &b, &n, "--force", "--markdown"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("| probe | base | new |") && md.contains("different adapters"),
        "{md}"
    );
    let o = run(&[
        "compare",
        &b,
        dir.path().join("nope.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope.json"));
}

#[test]
fn figures_measured_under_different_parameters_are_not_compared_unless_forced() {
    let mut base = fixture();
    set(&mut base, "transfer device->host", 10.0, 0.01);
    set(&mut base, "stream triad", 10.0, 0.01);
    let mut new = base.clone();
    // NEW ran with --array-mib 8: a much "faster" transfer of a smaller array.
    set(&mut new, "transfer device->host", 77.3, 0.01);
    set(&mut new, "stream triad", 10.0, 0.01);
    for p in new["probes"].as_array_mut().unwrap() {
        if p["name"] == "transfer device->host" {
            p["params"]["bytes"] = (8u64 << 20).into();
        }
    }
    new["options"]["array_mib"] = 8.into();
    let (code, c) = verdicts(&base, &new, &[]);
    assert_eq!(code, Some(0), "{c}");
    assert_eq!(verdict_of(&c, "transfer device->host"), "not_comparable");
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["probe"] == "transfer device->host")
        .unwrap();
    assert!(row["speedup"].is_null(), "{row}");
    assert!(
        row["differs"]
            .as_str()
            .unwrap()
            .contains("bytes: BASE 67108864, NEW 8388608"),
        "{row}"
    );
    // A probe measured the same way is still compared.
    assert_eq!(verdict_of(&c, "stream triad"), "same_within_noise");
    // --force compares it anyway, and still says what differs.
    let (_, c) = verdicts(&base, &new, &["--force"]);
    assert_eq!(verdict_of(&c, "transfer device->host"), "faster");
    // The table says it in words.
    let dir = tempfile::tempdir().unwrap();
    let (b, n) = (
        write(dir.path(), "b.json", &base),
        write(dir.path(), "n.json", &new),
    );
    let o = run(&["compare", &b, &n]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("measured under different parameters: transfer device->host: bytes"),
        "{text}"
    );
    assert!(text.contains("--force compares them anyway"), "{text}");
}
