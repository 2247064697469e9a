//! The HTML report in headless Chromium: it loads without console errors, every chart is
//! present and drawn, and a screenshot is not blank. Also the report command's bad input.
//! Chromium comes from Debian's `chromium` package (installed by .ci/run); without it the
//! browser test is skipped, except with CI=true, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/results-lavapipe.json"
    )
    .to_string()
}

fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(o) = Command::new("which").arg(name).output()
            && o.status.success()
        {
            return Some(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
        }
    }
    if crate::common::in_ci() {
        panic!("CI=true and no Chromium found: install Debian's chromium package");
    }
    crate::common::skipped("no chromium on PATH");
    None
}

fn browser(bin: &Path, profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    let mut args = crate::common::HEADLESS_CHROMIUM.to_vec();
    args.extend(["--disable-gpu", "--enable-logging=stderr", "--v=0"]);
    let profile_arg = format!("--user-data-dir={}", profile.display());
    args.push(&profile_arg);
    args.extend_from_slice(extra);
    args.push(url);
    Command::new(bin)
        .args(&args)
        .output()
        .expect("run chromium")
}

#[test]
fn report_renders_in_chromium_with_every_chart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    let o = crate::common::gpuvalue(&["report", &fixture(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    // Self-contained: no script, nothing fetched (the SVG namespace URI is not a fetch).
    assert!(!html.contains("<script"));
    for fetch in ["src=\"http", "href=\"http", "url(http", "@import", "<link"] {
        assert!(!html.contains(fetch), "report fetches something: {fetch}");
    }
    assert!(md.contains("## Scenario training") && md.contains("| probe | status |"));
    let Some(bin) = chromium() else { return };
    let url = format!("file://{}", out.join("report.html").display());
    let o = browser(&bin, &dir.path().join("p1"), &["--dump-dom"], &url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "console messages from the report: {console:?}"
    );
    // One roofline per device, a value and a cost chart per scenario.
    let scenarios = gpuvalue::value::scenario::ScenarioFile::embedded()
        .scenarios
        .len();
    let rooflines = dom.matches("class=\"chart roofline\"").count();
    let bars = dom.matches("class=\"chart bars\"").count();
    assert_eq!((rooflines, bars), (1, 2 * scenarios), "charts in the DOM");
    for chunk in dom.split("<svg").skip(1) {
        let svg = &chunk[..chunk.find("</svg>").unwrap()];
        assert!(
            svg.matches("<line").count() + svg.matches("<rect").count() > 3,
            "empty chart: {svg:.200}"
        );
    }
    let shot = dir.path().join("shot.png");
    let o = browser(
        &bin,
        &dir.path().join("p2"),
        &[
            "--window-size=1280,2000",
            &format!("--screenshot={}", shot.display()),
        ],
        &url,
    );
    assert!(
        o.status.success() && shot.exists(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Not blank: a real share of the pixels is not white.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    let non_white = px
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|&c| c < 200))
        .count();
    let total = px.len() / channels;
    assert!(
        non_white * 100 > total,
        "screenshot nearly blank: {non_white} of {total} pixels"
    );
}

#[test]
fn report_bad_input_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    // Missing results file: error naming it, no output directory.
    let out = dir.path().join("rep");
    let o = crate::common::gpuvalue(&[
        "report",
        "/nonexistent/r.json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/r.json"));
    assert!(!out.exists());
    // Malformed results file.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 1, \"probes\": 3}").unwrap();
    let o = crate::common::gpuvalue(&[
        "report",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    // Unwritable output: a parent that does not exist.
    let o = crate::common::gpuvalue(&["report", &fixture(), "--out", "/nonexistent/dir/rep"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--out"));
    // No temporary directories left beside the output.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn the_roofline_of_a_catalog_gpu_draws_its_matrix_engine_ceilings_per_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    // An MI250X package is two adapters: each gets half of the package's peaks.
    v["adapter"]["name"] = "AMD Instinct MI250X".into();
    v["adapter"]["software"] = false.into();
    let file = dir.path().join("mi250x.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let out = dir.path().join("rep");
    let o = crate::common::gpuvalue(&[
        "report",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for label in [
        "FP32 vector datasheet",
        "FP64 vector datasheet",
        "FP16 matrix engines datasheet",
        "FP64 matrix engines datasheet",
    ] {
        assert!(html.contains(label), "no {label:?} ceiling");
    }
    // 383 TFLOPS FP16 matrix per package, 191.5 per adapter: in GFLOPS on the chart.
    assert!(
        html.contains("191500") || html.contains("191.5"),
        "per-adapter ceiling"
    );
}
