//! The browser build end to end: headless Chromium (Debian `chromium` + `chromium-driver`)
//! runs the page's CI suite on SwiftShader's WebGPU through chromedriver, and the test checks
//! that every probe validated, that the results JSON the page hands to scripts loads in
//! `gpuvalue show` and `gpuvalue rank --results`, that the page drew its table, roofline and
//! standing, and that a screenshot is not blank.
//!
//! The page comes from `GPUVALUE_WEB_DIR` when set, else the test builds it with
//! `scripts/build-web.sh target/web-page` (wasm32 target, wasm-bindgen CLI, a few minutes the first
//! time). Without chromium or chromedriver, or where the build's prerequisites cannot be
//! fetched, the test is skipped, except with CI=true, where it fails.
//! It then runs the same suite natively, compares the two files (`compare --force`) and
//! draws both in one `gpuvalue report`.
//! Artefacts: target/browser-test/{results.json,screenshot.png,native.json,compare.txt,report/}.

mod serve;
mod webdriver;

use gpuvalue::figure::FigureKey;
use gpuvalue::results::{ResultsFile, Status};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use webdriver::{Driver, Session};

/// How long the page may take to finish the CI suite once loaded.
const SUITE_LIMIT: Duration = Duration::from_secs(600);

/// Figures the browser may lack (their results say `unsupported` with a reason): no f64 in
/// WebGPU, `shader-f16` and `packed_4x8_integer_dot_product` where the browser offers them,
/// no cooperative matrices.
const MAY_BE_UNSUPPORTED: [FigureKey; 6] = [
    FigureKey::MatmulF16,
    FigureKey::MatmulF64,
    FigureKey::MatmulInt8,
    FigureKey::MatmulCoop,
    // OpenCL only: WebGPU has no queued timestamp, WGSL no f64 matrices.
    FigureKey::LatencyLaunch,
    FigureKey::MatmulF64Matrix,
];

/// Beside `crate::common::HEADLESS_CHROMIUM`: the flags that give a WebGPU adapter on SwiftShader.
const WEBGPU_ARGS: &[&str] = &[
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
];

/// Skips the test (None) outside CI; fails it under CI=true.
fn skip<T>(why: &str) -> Option<T> {
    if crate::common::in_ci() {
        panic!("CI=true and the browser test cannot run: {why}");
    }
    crate::common::skipped(why);
    None
}

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path)
            .map(|d| d.join(n))
            .find(|p| p.is_file())
    })
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The directory holding the built page: GPUVALUE_WEB_DIR, or a fresh build into
/// target/web-page (not target/web: that is cargo's directory for the web profile).
fn page_dir(root: &Path, target: &Path) -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("GPUVALUE_WEB_DIR") {
        let d = PathBuf::from(d);
        eprintln!("page: {} (GPUVALUE_WEB_DIR)", d.display());
        return Some(d);
    }
    let out = target.join("web-page");
    let t0 = Instant::now();
    let o = Command::new("bash")
        .arg("scripts/build-web.sh")
        .arg(&out)
        .current_dir(root)
        .output()
        .expect("run bash scripts/build-web.sh");
    let log = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
    match o.status.code() {
        Some(0) => {
            eprintln!(
                "page: built into {} in {:.0} s\n{}",
                out.display(),
                t0.elapsed().as_secs_f64(),
                tail(&o.stdout, 3)
            );
            Some(out)
        }
        // The script's code for "a prerequisite could not be fetched" (rustup, crates.io).
        Some(3) => skip(&format!(
            "scripts/build-web.sh could not get its prerequisites:\n{}",
            tail(&log, 15)
        )),
        _ => panic!(
            "scripts/build-web.sh {} failed ({}):\n{}",
            out.display(),
            o.status,
            tail(&log, 60)
        ),
    }
}

/// What is wrong with the page's results: anything not ok (unsupported only for the figures
/// a browser may lack, with a reason), a probe of the suite without a result, an incomplete run.
fn result_problems(file: &ResultsFile) -> Vec<String> {
    let mut out = Vec::new();
    if file.probes.is_empty() {
        out.push("the results file has no results".to_string());
    }
    for p in &file.probes {
        let allowed = match p.status {
            Status::Ok => true,
            Status::Unsupported => {
                p.figure.is_some_and(|f| MAY_BE_UNSUPPORTED.contains(&f))
                    && p.reason.as_deref().is_some_and(|r| !r.trim().is_empty())
            }
            Status::Failed | Status::Skipped => false,
        };
        if !allowed {
            out.push(format!(
                "{} ({:?}): {}{}",
                p.name,
                p.figure,
                p.status,
                p.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ));
        }
    }
    for name in &file.options.probes {
        let Some(probe) = gpuvalue::measuring::probes::find(name) else {
            out.push(format!("options.probes names an unknown probe {name:?}"));
            continue;
        };
        let figures = probe.figures();
        let mine: Vec<_> = file
            .probes
            .iter()
            .filter(|p| p.figure.is_some_and(|f| figures.contains(&f)))
            .collect();
        let optional = figures.iter().all(|f| MAY_BE_UNSUPPORTED.contains(f));
        if mine.is_empty() {
            out.push(format!("probe {name} produced no result"));
        } else if !optional && !mine.iter().any(|p| p.status == Status::Ok) {
            out.push(format!("probe {name} has no ok result"));
        }
    }
    if !file.complete {
        out.push("the results file says complete = false".into());
    }
    if file.interrupted {
        out.push("the results file says interrupted = true".into());
    }
    out
}

/// Distinct colours and the share of pixels that are not the most common colour.
fn screenshot_stats(png_bytes: &[u8]) -> Result<(usize, f64, u32, u32), String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| format!("not a PNG: {e}"))?;
    let size = reader
        .output_buffer_size()
        .ok_or("PNG too large to decode")?;
    let mut buf = vec![0; size];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("PNG frame: {e}"))?;
    let channels = info.color_type.samples();
    let mut counts: HashMap<[u8; 3], usize> = HashMap::new();
    for px in buf[..info.buffer_size()].chunks_exact(channels) {
        let rgb = match channels {
            1 | 2 => [px[0]; 3],
            _ => [px[0], px[1], px[2]],
        };
        *counts.entry(rgb).or_default() += 1;
    }
    let total: usize = counts.values().sum();
    let background = counts.values().copied().max().unwrap_or(0);
    let share = if total == 0 {
        0.0
    } else {
        1.0 - background as f64 / total as f64
    };
    Ok((counts.len(), share, info.width, info.height))
}

fn state(session: &Session) -> Result<(String, String), String> {
    let v = session.execute(
        "const r = document.getElementById('gpuvalue-results');
         const p = document.getElementById('progress-label');
         return [r ? (r.dataset.state || '') : 'missing', p ? p.textContent : ''];",
    )?;
    Ok((
        v[0].as_str().unwrap_or("").to_string(),
        v[1].as_str().unwrap_or("").to_string(),
    ))
}

/// Sizes the window to the whole page (up to 4000 px) and writes the screenshot.
fn screenshot(session: &Session, path: &Path) -> Result<Vec<u8>, String> {
    let height = session
        .execute("return document.documentElement.scrollHeight;")?
        .as_u64()
        .unwrap_or(900);
    let height = u32::try_from(height).unwrap_or(4000).clamp(900, 4000) + 100;
    session.set_window_size(1280, height)?;
    std::thread::sleep(Duration::from_millis(300));
    let png = session.screenshot()?;
    std::fs::write(path, &png).map_err(|e| format!("write {}: {e}", path.display()))?;
    Ok(png)
}

#[test]
fn page_runs_the_ci_suite_in_headless_chromium() {
    let t_start = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(chromium) = on_path(&["chromium", "chromium-browser", "google-chrome"])
        .or_else(|| skip("no chromium on PATH (Debian package chromium)"))
    else {
        return;
    };
    let Some(chromedriver) = on_path(&["chromedriver"])
        .or_else(|| skip("no chromedriver on PATH (Debian package chromium-driver)"))
    else {
        return;
    };
    let target = target_dir(root);
    let Some(web) = page_dir(root, &target) else {
        return;
    };
    let t_built = Instant::now();
    for f in ["index.html", "main.js", "style.css", "gpuvalue.js"] {
        assert!(
            web.join(f).is_file(),
            "{} has no {f}: not a built page",
            web.display()
        );
    }
    let art = target.join("browser-test");
    std::fs::create_dir_all(&art).unwrap();
    let results_path = art.join("results.json");
    let shot_path = art.join("screenshot.png");
    let _ = std::fs::remove_file(&results_path);
    let _ = std::fs::remove_file(&shot_path);
    let _ = std::fs::remove_file(art.join("failure.json"));

    let (addr, requests) = serve::start(web.clone()).expect("start the file server");
    let driver = Driver::start(&chromedriver).unwrap_or_else(|e| panic!("{e}"));
    let profile = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = crate::common::HEADLESS_CHROMIUM
        .iter()
        .chain(WEBGPU_ARGS)
        .map(|s| s.to_string())
        .collect();
    args.push(format!("--user-data-dir={}", profile.path().display()));
    let session = Session::new(
        &driver,
        json!({ "alwaysMatch": {
            "goog:chromeOptions": { "binary": chromium, "args": args },
            "goog:loggingPrefs": { "browser": "ALL" },
            "timeouts": { "script": 30_000, "pageLoad": 120_000 },
        }}),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    session.set_window_size(1280, 900).unwrap();
    let url = format!("http://{addr}/index.html?suite=ci&autostart=1");
    eprintln!(
        "browser: {} via {}; page {url}",
        chromium.display(),
        chromedriver.display()
    );
    let t_page = Instant::now();
    session.navigate(&url).unwrap_or_else(|e| panic!("{e}"));

    // Poll the page's contract element each second; print progress as it changes.
    let mut last_label = String::new();
    let final_state = loop {
        let (st, label) = state(&session).unwrap_or_else(|e| panic!("{e}"));
        if label != last_label {
            eprintln!("  [{:5.1} s] {st}: {label}", t_page.elapsed().as_secs_f64());
            last_label = label;
        }
        if st == "done" || st == "failed" {
            break st;
        }
        if t_page.elapsed() > SUITE_LIMIT {
            break format!("still {st:?} after {} s", SUITE_LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let t_done = t_page.elapsed();
    let text = session
        .execute("return document.getElementById('gpuvalue-results').textContent;")
        .unwrap()
        .as_str()
        .unwrap_or("")
        .to_string();
    let console = session.console_log().unwrap_or_else(|e| {
        eprintln!("(no browser console log: {e})");
        Vec::new()
    });
    for entry in &console {
        eprintln!(
            "  console {}: {}",
            entry["level"].as_str().unwrap_or("?"),
            entry["message"].as_str().unwrap_or("")
        );
    }
    if final_state != "done" {
        let _ = std::fs::write(art.join("failure.json"), &text);
        let _ = screenshot(&session, &shot_path);
        let not_found: Vec<String> = requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| !r.starts_with("200"))
            .cloned()
            .collect();
        // The page's words: {"error": ..., "last": snapshot or null}.
        let said = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| {
                let error = v["error"].as_str()?.to_string();
                let last = v["last"]["probes"].as_array().map_or(0, Vec::len);
                Some(format!("{error} (last snapshot: {last} results)"))
            })
            .unwrap_or_else(|| format!("{text:.500}"));
        panic!(
            "the page did not finish the suite ({final_state}) after {:.0} s: {said}\n\
             requests not served: {not_found:?}; the page's JSON: {}; screenshot: {}",
            t_done.as_secs_f64(),
            art.join("failure.json").display(),
            shot_path.display()
        );
    }

    // The results file: it loads and checks, every probe validated.
    std::fs::write(&results_path, &text).unwrap();
    let file = ResultsFile::parse(&text).unwrap_or_else(|e| {
        panic!(
            "the page's results do not load as a results file: {e:#}\n(see {})",
            results_path.display()
        )
    });
    let problems = result_problems(&file);
    assert!(
        problems.is_empty(),
        "results from the page:\n  {}",
        problems.join("\n  ")
    );
    assert_eq!(
        file.adapter.backend, "webgpu",
        "the results say another backend than WebGPU"
    );
    let ok = file
        .probes
        .iter()
        .filter(|p| p.status == Status::Ok)
        .count();
    eprintln!(
        "results: {} results ({ok} ok) on {:?} ({}), in {:.1} s",
        file.probes.len(),
        file.adapter.name,
        file.adapter.backend,
        t_done.as_secs_f64()
    );

    // The command line takes the file as it takes any other.
    let rp = results_path.to_str().unwrap();
    for args in [vec!["show", rp], vec!["rank", "--results", rp]] {
        let o = crate::common::gpuvalue(&args);
        assert!(
            o.status.success() && !o.stdout.is_empty(),
            "gpuvalue {} on the page's results: {}\n{}",
            args.join(" "),
            o.status,
            tail(&o.stderr, 30)
        );
    }

    // The same suite on the native command line (lavapipe here): the two files compare
    // (different adapters, so --force) and one report draws both.
    let native = art.join("native.json");
    let np = native.to_str().unwrap();
    let o = crate::common::gpuvalue(&[
        "bench",
        "--quick",
        "--quiet",
        "--sizes",
        "64x64x64",
        "--array-mib",
        "1",
        "--out",
        np,
    ]);
    assert!(
        o.status.success(),
        "native bench with the page's suite: {}\n{}",
        o.status,
        tail(&o.stderr, 30)
    );
    let o = crate::common::gpuvalue(&["compare", "--force", np, rp]);
    // 0: nothing slower; 1: slower beyond the noise (the browser adds its own costs). Any
    // other status is a refusal or an error.
    assert!(
        matches!(o.status.code(), Some(0 | 1)) && !o.stdout.is_empty(),
        "compare --force native page: {}\n{}",
        o.status,
        tail(&o.stderr, 30)
    );
    std::fs::write(art.join("compare.txt"), &o.stdout).unwrap();
    let report_dir = art.join("report");
    let o = crate::common::gpuvalue(&["report", "--out", report_dir.to_str().unwrap(), np, rp]);
    assert!(
        o.status.success(),
        "report of both files: {}\n{}",
        o.status,
        tail(&o.stderr, 30)
    );
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(
        html.contains(&file.adapter.name) && html.contains("Measured in a browser through WebGPU"),
        "the report does not draw the page's run"
    );
    assert!(
        html.matches("<section class=\"device\">").count() >= 2,
        "the report does not draw both runs"
    );

    // The page drew everything, and says nothing went wrong.
    let page = session
        .execute(
            "const q = (s) => document.querySelectorAll(s).length;
             const a = document.getElementById('download');
             return {
               rows: q('#table tbody tr') || Math.max(q('#table tr') - 1, 0),
               shapes: q('#roofline svg :is(line, path, rect, polyline, polygon, circle)'),
               standing: q('#standing li'),
               facts: q('#adapter dd'),
               errors: [...document.querySelectorAll('.error')]
                 .filter((e) => e.getClientRects().length > 0)
                 .map((e) => e.textContent),
               download: a.hidden ? null : a.download,
               href: a.getAttribute('href') || '',
               isolated: self.crossOriginIsolated === true,
             };",
        )
        .unwrap();
    let n = |k: &str| page[k].as_u64().unwrap_or(0);
    assert_eq!(page["errors"], json!([]), "the page shows errors");
    assert!(
        n("rows") as usize >= ok,
        "the table has {} rows for {ok} ok results",
        n("rows")
    );
    assert!(n("shapes") > 3, "the roofline is empty: {page}");
    assert!(n("standing") >= 1, "no standing per scenario: {page}");
    assert!(n("facts") >= 3, "the adapter facts are missing: {page}");
    assert!(
        page["download"]
            .as_str()
            .is_some_and(|d| d.starts_with("gpuvalue-browser-") && d.ends_with(".json"))
            && page["href"]
                .as_str()
                .is_some_and(|h| h.starts_with("blob:")),
        "no download link: {page}"
    );
    assert_eq!(
        page["isolated"],
        Value::Bool(true),
        "the page is not cross-origin isolated (COOP/COEP headers)"
    );
    let severe: Vec<&str> = console
        .iter()
        .filter(|e| e["level"] == "SEVERE")
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(severe.is_empty(), "console errors: {severe:?}");

    // Not blank: many colours, and a real share of pixels off the background.
    let png = screenshot(&session, &shot_path).unwrap_or_else(|e| panic!("{e}"));
    let (colours, share, w, h) = screenshot_stats(&png).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        colours > 16 && share > 0.02,
        "screenshot nearly blank: {colours} colours, {:.1} % off the background",
        share * 100.0
    );
    eprintln!(
        "screenshot: {w}x{h}, {} KB, {colours} colours, {:.0} % off the background",
        png.len() / 1024,
        share * 100.0
    );
    drop(session);
    drop(driver);
    eprintln!(
        "browser test: build {:.0} s, suite {:.1} s, total {:.0} s; wrote {} and {}",
        (t_built - t_start).as_secs_f64(),
        t_done.as_secs_f64(),
        t_start.elapsed().as_secs_f64(),
        results_path.display(),
        shot_path.display()
    );
}
