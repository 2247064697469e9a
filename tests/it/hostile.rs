//! One table-driven test per class of hostile input, fed through the CLI: each
//! case asserts the exit code and that the message names the file, field or option.
//! No GPU needed: these commands read files only.

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary in `cwd`, killing it after 60 s (a hang is a failure, not a stuck CI).
/// Output is at full width (tables unwrapped), so each message is found whole.
fn gv_in(cwd: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .env(
            "GPUVALUE_HOME",
            std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
        )
        .args(args)
        .current_dir(cwd)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .env("COLUMNS", "100000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipes are drained while the child runs: an output larger than a pipe's buffer
    // (a ranking's JSON passes 64 KiB) would otherwise block the child until it is killed.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).map(|_| v)
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("gpuvalue {args:?} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
    }
}

fn gv(args: &[&str]) -> Output {
    gv_in(&std::env::temp_dir(), args)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn fixture() -> Value {
    serde_json::from_str(include_str!("../fixtures/results-lavapipe.json")).unwrap()
}

/// The fixture as if measured on a hardware H100 (so its figures enter the ranking).
fn h100() -> Value {
    let mut r = fixture();
    r["adapter"]["name"] = "NVIDIA H100 80GB HBM3".into();
    r["adapter"]["software"] = false.into();
    r
}

fn write(dir: &Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p.to_str().unwrap().to_string()
}

fn write_text(dir: &Path, name: &str, t: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, t).unwrap();
    p.to_str().unwrap().to_string()
}

fn assert_case(o: &Output, code: i32, wants: &[&str], case: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(code), "{case}: {t}");
    for w in wants {
        assert!(t.contains(w), "{case}: no {w:?} in: {t}");
    }
}

fn gpu(id: &str, fp32: f64) -> Value {
    json!({"id": id, "vendor": "X", "name": id, "aliases": [], "fp32_tflops": fp32,
           "fp64_vector_tflops": 1, "fp64_matrix_tflops": null, "fp16_tensor_tflops": null,
           "memory_gb": 80, "bandwidth_gbps": 3000, "tdp_w": 700, "source": "s", "as_of": "2026-01"})
}

fn instance(provider: &str, ty: &str, gpu: &str, currency: &str, amount: f64) -> Value {
    json!({"provider": provider, "instance_type": ty, "region": "r1", "gpu": gpu,
           "gpu_count": 1, "vcpu": 8, "ram_gib": 64, "source": "s", "as_of": "2026-11",
           "confidence": "high",
           "prices": {"on_demand": {"amount": amount, "currency": currency, "per": "hour"}}})
}

fn fragment(currencies: Value, gpus: Value, instances: Value) -> Value {
    json!({"schema_version": 1, "currencies": currencies, "gpus": gpus, "instances": instances})
}

#[test]
fn class1_results_figures_are_range_checked() {
    let dir = tempfile::tempdir().unwrap();
    type Mutate = fn(&mut Value);
    let cases: &[(&str, Mutate, &[&str])] = &[
        (
            "negative",
            |r| r["probes"][0]["value"]["median"] = (-5.0).into(),
            &["probes[0].value.median", "0 < GFLOPS <= 1e7"],
        ),
        (
            "zero",
            |r| r["probes"][0]["value"]["min"] = 0.0.into(),
            &["probes[0].value.min"],
        ),
        (
            "subnormal",
            |r| r["probes"][2]["value"]["median"] = 5e-324.into(),
            &["probes[2].value.median", "GB/s"],
        ),
        (
            "huge",
            |r| r["probes"][1]["value"]["max"] = 1e308.into(),
            &["probes[1].value.max", "1e7"],
        ),
        (
            "min > median",
            |r| r["probes"][0]["value"]["min"] = 50.0.into(),
            &["min <= median <= max"],
        ),
        (
            "latency 1e-9 us",
            |r| {
                r["probes"][10]["value"]["median"] = 1e-9.into();
                r["probes"][10]["value"]["min"] = 1e-9.into();
            },
            &["probes[10].value.median", "1e-3 <= us <= 1e9"],
        ),
        (
            "MFLOPS",
            |r| r["probes"][0]["unit"] = "MFLOPS".into(),
            &["probes[0].unit", "MFLOPS"],
        ),
    ];
    for (case, mutate, wants) in cases {
        let mut r = h100();
        mutate(&mut r);
        let f = write(dir.path(), "bad-results.json", &r);
        for args in [
            vec!["show", &f],
            vec!["rank", "--scenario", "training", "-r", &f],
        ] {
            let mut w = wants.to_vec();
            w.push("bad-results.json");
            assert_case(&gv(&args), 2, &w, case);
        }
    }
}

#[test]
fn class1_catalog_scenario_and_option_numbers_are_checked_and_blamed_on_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let cur = |rate: f64| json!({"XTS": {"per_usd": rate, "as_of": "2026-01-01", "source": "t"}});
    let cases: Vec<(&str, Value, &[&str])> = vec![
        (
            "negative rate",
            fragment(
                cur(-1.0),
                json!([]),
                json!([instance("me", "a", "h100-sxm", "XTS", 2.0)]),
            ),
            &["currencies.XTS.per_usd", "1e-6..=1e6"],
        ),
        (
            "negative tflops",
            fragment(
                json!({}),
                json!([gpu("mine", -30.3)]),
                json!([instance("me", "a", "mine", "USD", 2.0)]),
            ),
            &["gpus[0].fp32_tflops", "0 < fp32_tflops <= 1e5"],
        ),
        (
            "tiny price",
            fragment(
                json!({}),
                json!([]),
                json!([instance("me", "a", "h100-sxm", "USD", 1e-300)]),
            ),
            &["instances[0].prices.on_demand.amount", "1e-6..=1e7"],
        ),
        (
            "huge price",
            fragment(
                json!({}),
                json!([]),
                json!([instance("me", "a", "h100-sxm", "USD", 1e308)]),
            ),
            &["instances[0].prices.on_demand.amount"],
        ),
    ];
    for (case, cat, wants) in &cases {
        let f = write(dir.path(), "mine.json", cat);
        let o = gv(&["rank", "--scenario", "training", "--catalog-add", &f]);
        let mut w = wants.to_vec();
        w.push("mine.json");
        assert_case(&o, 2, &w, case);
    }
    for (case, date, says) in [
        ("no month 13", "2026-13-45", "month 13"),
        ("words", "not a date", "not a date"),
        ("future", "2099-12-31", "future"),
    ] {
        let mut i = instance("me", "a", "h100-sxm", "USD", 2.0);
        i["as_of"] = date.into();
        let f = write(
            dir.path(),
            "dated.json",
            &fragment(json!({}), json!([]), json!([i])),
        );
        let o = gv(&["rank", "--scenario", "training", "--catalog-add", &f]);
        assert_case(&o, 2, &["dated.json", "instances[0].as_of", says], case);
    }
    // With --skip-bad-rows, an instance whose GPU or currency entry is bad is not ranked.
    let cat = fragment(
        cur(-1.0),
        json!([gpu("mine", -30.3)]),
        json!([
            instance("me", "badgpu", "mine", "USD", 2.0),
            instance("me", "badcur", "h100-sxm", "XTS", 2.0)
        ]),
    );
    let f = write(dir.path(), "skip.json", &cat);
    let o = gv(&[
        "rank",
        "--scenario",
        "training",
        "--catalog-add",
        &f,
        "--skip-bad-rows",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ranked: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["instance_type"].as_str().unwrap())
        .collect();
    assert!(
        !ranked.contains(&"badgpu") && !ranked.contains(&"badcur"),
        "{ranked:?}"
    );
    // Scenario work and options.
    let sc = json!({"schema_version": 1, "scenarios": [{"id": "x", "description": "d",
        "terms": [{"figure": "matmul_f32", "work": 1e308, "unit": "FLOP"}]}]});
    let s = write(dir.path(), "sc.json", &sc);
    assert_case(
        &gv(&["rank", "--scenario", "x", "--scenarios", &s]),
        2,
        &["sc.json", "terms[0].work", "1e24"],
        "work",
    );
    let opts: &[(&[&str], &str)] = &[
        (
            &["rank", "--scenario", "training", "--budget", "1e300"],
            "--budget",
        ),
        (
            &["rank", "--scenario", "training", "--min-gpu-memory", "1e9"],
            "--min-gpu-memory",
        ),
        (
            &[
                "catalog",
                "--catalog-add",
                "x.csv",
                "--csv-as-of",
                "2099-01-01",
            ],
            "--csv-as-of",
        ),
    ];
    for (args, name) in opts {
        let csv = write_text(
            dir.path(),
            "x.csv",
            "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n",
        );
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "x.csv" { csv.as_str() } else { a })
            .collect();
        assert_case(&gv(&args), 2, &[name], name);
    }
}

#[test]
fn class2_report_on_extreme_datasheet_figures_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gpu("huge", 5e304);
    g["aliases"] = json!(["NVIDIA H100 80GB HBM3"]);
    g["bandwidth_gbps"] = 5e304.into();
    let f = write(
        dir.path(),
        "huge.json",
        &fragment(json!({}), json!([g]), json!([])),
    );
    let r = write(dir.path(), "r.json", &h100());
    let out = dir.path().join("rep");
    let t0 = Instant::now();
    let o = gv(&[
        "report",
        &r,
        "--catalog-add",
        &f,
        "--skip-bad-rows",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(t0.elapsed() < Duration::from_secs(30));
    assert!(std::fs::metadata(out.join("report.html")).unwrap().len() < 5_000_000);
}

#[test]
fn class3_report_out_writes_into_the_directory_and_touches_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let r = write(&results, "r.json", &fixture());
    std::fs::write(results.join("keep.txt"), "mine").unwrap();
    let o = gv(&["report", &r, "--out", results.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let mut names: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.txt", "r.json", "report.html", "report.md"]);
    let long = dir.path().join("d".repeat(250));
    let o = gv(&["report", &r, "--out", long.to_str().unwrap()]);
    assert!(
        o.status.success() && long.join("report.md").exists(),
        "{}",
        text(&o)
    );
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    let sub_dot = dir.path().join("nosuch/sub/.");
    let file = dir.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    for (case, p) in [
        ("dangling", &dangling),
        ("sub/.", &sub_dot),
        ("a file", &file),
    ] {
        let o = gv(&["report", &r, "--out", p.to_str().unwrap()]);
        let t = text(&o);
        if case == "sub/." && o.status.success() {
            assert!(p.join("report.md").exists());
            continue;
        }
        assert_case(&o, 2, &[p.to_str().unwrap()], case);
        assert!(
            !t.contains("os error") || t.contains(p.to_str().unwrap()),
            "{t}"
        );
    }
}

#[test]
fn class4_control_and_bidi_characters_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{202e}txt\u{9b}1m";
    let mut r = fixture();
    r["adapter"]["name"] = evil.into();
    r["probes"][0]["name"] = format!("matmul_f32 {evil}").into();
    let f = write(dir.path(), "evil.json", &r);
    let mut i = instance(
        &format!("=HYPERLINK(\"x\")|{evil}"),
        "<b>t|y</b>",
        "h100-sxm",
        "USD",
        2.0,
    );
    i["region"] = "@r".into();
    let cat = write(
        dir.path(),
        "evilcat.json",
        &fragment(json!({}), json!([]), json!([i])),
    );
    let raw = |t: &str| t.contains(['\u{1b}', '\u{7}', '\u{202e}', '\u{9b}']);
    let runs: &[&[&str]] = &[
        &["show", &f],
        &[
            "rank",
            "--scenario",
            "training",
            "-r",
            &f,
            "--catalog-add",
            &cat,
        ],
        &[
            "rank",
            "--scenario",
            "training",
            "-r",
            &f,
            "--catalog-add",
            &cat,
            "--format",
            "markdown",
        ],
        &["catalog", "--catalog-add", &cat],
        &["catalog", "check", &cat],
        &["compare", &f, &f],
        &["compare", &f, &f, "--format", "markdown"],
        &["show", &format!("{}/no{evil}.json", dir.path().display())],
    ];
    for args in runs {
        let o = gv(args);
        assert!(!raw(&text(&o)), "{args:?}: raw escape in {:?}", text(&o));
        if !args.contains(&"check") {
            assert!(
                text(&o).contains("\\u{1b}"),
                "{args:?}: escape not shown: {}",
                text(&o)
            );
        }
    }
    let md = String::from_utf8_lossy(&gv(runs[2]).stdout).into_owned();
    assert!(
        md.contains("&lt;b&gt;t\\|y&lt;/b&gt;") && !md.contains("<b>"),
        "{md}"
    );
    let csv = gv(&[
        "rank",
        "--scenario",
        "training",
        "-r",
        &f,
        "--catalog-add",
        &cat,
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8_lossy(&csv.stdout).into_owned();
    assert!(
        csv.contains("'=HYPERLINK") && csv.contains(",'@r,"),
        "{csv}"
    );
    assert!(
        !csv.contains(",=HYPERLINK") && !csv.contains(",\"=HYPERLINK"),
        "{csv}"
    );
}

#[test]
fn class5_compare_fails_the_gate_on_nothing_measured() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.json", &fixture());
    type Mutate = fn(&mut Value);
    let cases: &[(&str, Mutate, &[&str])] = &[
        (
            "no probes",
            |r| r["probes"] = json!([]),
            &["new.json has no probe results"],
        ),
        (
            "all skipped",
            |r| {
                for p in r["probes"].as_array_mut().unwrap() {
                    p["status"] = "skipped".into();
                    p.as_object_mut().unwrap().remove("value");
                }
            },
            &["measured nothing"],
        ),
        (
            "zero median",
            |r| r["probes"][2]["value"]["median"] = 0.0.into(),
            &["probes[2].value.median", "stream copy"],
        ),
        (
            "negative median",
            |r| r["probes"][0]["value"]["median"] = (-1.0).into(),
            &["probes[0].value.median"],
        ),
        (
            "MFLOPS",
            |r| {
                r["probes"][1]["unit"] = "MFLOPS".into();
                r["probes"][1]["value"]["median"] = 67321.0.into();
            },
            &["UNIT CHANGED", "GFLOPS -> MFLOPS"],
        ),
        (
            "not measured",
            |r| {
                r["probes"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|p| p["name"] != "stream dot");
            },
            &["stream dot", "missing (regression)"],
        ),
    ];
    for (case, mutate, wants) in cases {
        let mut n = fixture();
        mutate(&mut n);
        let new = write(dir.path(), "new.json", &n);
        assert_case(&gv(&["compare", &base, &new]), 1, wants, case);
    }
}

#[test]
fn class6_csv_rows_are_never_lost_silently() {
    let dir = tempfile::tempdir().unwrap();
    let head =
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n";
    let row = |ty: &str| format!("{ty},V100-32GB,1,8,61,3.06,0.9,us-east-1\n");
    let mut stray = head.to_string();
    for i in 0..10 {
        stray.push_str(&if i == 2 {
            "p3.x,\"V100-32GB,1,8,61,3.06,0.9,us-east-1\n".into()
        } else {
            row(&format!("t{i}"))
        });
    }
    let cases: Vec<(&str, String, &[&str])> = vec![
        ("stray quote", stray, &["line 4", "malformed"]),
        (
            "duplicate header",
            format!("InstanceType,Price,{head}"),
            &["line 1", "InstanceType", "twice"],
        ),
        (
            "bad spot",
            format!("{head}p3,V100-32GB,1,8,61,3.06,cheap,r\n"),
            &["line 2", "SpotPrice", "cheap"],
        ),
        (
            "NaN price",
            format!("{head}p3,V100-32GB,1,8,61,NaN,1,r\n"),
            &["line 2", "Price"],
        ),
    ];
    for (case, csv, wants) in &cases {
        let f = write_text(dir.path(), "vms.csv", csv);
        let o = gv(&["catalog", "--catalog-add", &f, "--csv-as-of", "2026-11-01"]);
        let mut w = wants.to_vec();
        w.push("vms.csv");
        assert_case(&o, 2, &w, case);
    }
    // A share of a GPU (Vast and RunPod sell them) is refused line by line, said, and the
    // file's other rows still load.
    let f = write_text(
        dir.path(),
        "vms.csv",
        &format!("{head}p3,V100-32GB,2.7,8,61,3.06,0.9,r\n{}", row("whole")),
    );
    let o = gv(&["catalog", "check", &f, "--csv-as-of", "2026-11-01"]);
    let t = text(&o);
    assert!(
        t.contains("line 2, column AcceleratorCount") && t.contains("2.7 of a GPU"),
        "{t}"
    );
    assert!(t.contains("1 instance rows"), "{t}");
}

/// `catalog check` names every fault of a file in one look, structural
/// ones (a number that is none, a row short of a column) beside the rows' own (a negative
/// price); a CSV row missing its last column is no longer read as a row; a JSON file's
/// faults of type are named together, each with its line.
#[test]
fn catalog_check_names_every_fault_of_a_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let head =
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n";
    let csv = format!(
        "{head}p3.2xlarge,V100,1,8,61,3.06,0.9,us-east-1\n\
         p3.8xlarge,V100,4,32,244,abc,3.6,us-east-1\n\
         p3.16xlarge,V100,8.5x,64,488,24.48,7.3,us-east-1\n\
         p3dn.24xlarge,V100,8,96,768,-31.2,9.3,us-east-1\n\
         g4dn.xlarge,T4,1,4,16,0.526,0.2\n\
         g5.xlarge,A10G,1,4,16,1.006,0.3,us-east-1\n"
    );
    let f = write_text(dir.path(), "vms.csv", &csv);
    let o = gv(&["catalog", "check", &f, "--csv-as-of", "2026-11-01"]);
    assert_case(
        &o,
        1,
        &[
            "line 3, column Price",
            "\"abc\"",
            "line 4, column AcceleratorCount",
            "line 5, column Price",
            "negative price",
            "line 6",
            "7 fields where the header has 8",
            "4 error(s)",
        ],
        "csv check",
    );
    // Ranking with it refuses the file, naming every line that is no row at once.
    let o = gv(&["catalog", "--catalog-add", &f, "--csv-as-of", "2026-11-01"]);
    assert_case(
        &o,
        2,
        &["3 lines that are no row", "line 3", "line 4", "line 6"],
        "csv add",
    );
    let json = r#"{
  "schema_version": 2,
  "instances": [
    {"provider": "p", "instance_type": "a", "region": "r", "gpu": "h100-sxm",
     "gpu_count": 1, "vcpu": 8, "ram_gib": 64, "prices": {}, "source": "s",
     "as_of": "2026-11-01", "confidence": "sure"},
    {"provider": "p", "instance_type": "b", "region": "r", "gpu": "h100-sxm",
     "vcpu": 8, "ram_gib": 64, "prices": {}, "source": "s", "as_of": "2026-11-01",
     "confidence": "high"}
  ]
}"#;
    let f = write_text(dir.path(), "bad.json", json);
    let o = gv(&["catalog", "check", &f]);
    assert_case(
        &o,
        2,
        &[
            "2 faults",
            "line 6, column",
            "instances[0].confidence",
            "`sure`",
            "line 9, column",
            "instances[1]",
            "missing field `gpu_count`",
        ],
        "json check",
    );
}

#[test]
fn class7_special_files_are_refused_before_opening() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let f = fifo.to_str().unwrap();
    let runs: &[&[&str]] = &[
        &["show", f],
        &["rank", "--scenario", "training", "--catalog", f],
        &["rank", "--scenario", "training", "--scenarios", f],
        &["catalog", "check", f],
        &["show", "/dev/zero"],
    ];
    for args in runs {
        let o = gv(args);
        let name = if args.contains(&"/dev/zero") {
            "/dev/zero"
        } else {
            f
        };
        assert_case(&o, 2, &[name, "not a regular file"], &format!("{args:?}"));
    }
}

#[test]
fn class8_sizes_are_checked_arithmetic_and_refusal_leaves_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    for size in [
        "2147483648",
        "999999",
        "4294967296x4294967296x1",
        "18446744073709551615",
    ] {
        let o = gv_in(
            dir.path(),
            &["bench", "--sizes", size, "--probes", "matmul"],
        );
        assert_case(&o, 2, &["--sizes", size], size);
        assert!(
            !dir.path().join("results").exists(),
            "{size}: results/ left behind"
        );
    }
}

#[test]
fn class9_duplicates_bom_long_names_and_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(dir.path(), "r.json", &h100());
    // The same file twice: counted once, with a warning.
    let o = gv(&[
        "rank",
        "--scenario",
        "training",
        "-r",
        &r,
        "-r",
        &format!("{}/./r.json", dir.path().display()),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("given twice"), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["machines"].as_array().unwrap().len(), 1);
    // A BOM before JSON, as before CSV.
    let bom = write_text(
        dir.path(),
        "bom.json",
        &format!(
            "\u{feff}{}",
            include_str!("../fixtures/results-lavapipe.json")
        ),
    );
    assert!(gv(&["show", &bom]).status.success());
    // One key twice in one --catalog-add file: both named.
    let i = instance("me", "a", "h100-sxm", "USD", 2.0);
    let dup = write(
        dir.path(),
        "dup.json",
        &fragment(json!({}), json!([]), json!([i, i])),
    );
    assert_case(
        &gv(&["catalog", "--catalog-add", &dup]),
        2,
        &["dup.json", "instances[0] and instances[1]"],
        "dup key",
    );
    // catalog check on a fragment: merged with the embedded catalog, its own row index.
    let ok = write(
        dir.path(),
        "frag.json",
        &fragment(json!({}), json!([]), json!([i])),
    );
    assert_case(
        &gv(&["catalog", "check", &ok]),
        0,
        &["frag.json: 1 instance rows"],
        "fragment",
    );
    let mut bad = i.clone();
    bad["gpu_count"] = 40.into();
    let one = write(
        dir.path(),
        "one.json",
        &fragment(json!({}), json!([]), json!([bad])),
    );
    let o = gv(&["catalog", "check", &one]);
    assert_case(&o, 1, &["one.json", "instances[0].gpu_count"], "own index");
    assert!(!text(&o).contains("instances[3"), "{}", text(&o));
    // Names capped at 256 characters.
    let mut long = fixture();
    long["adapter"]["name"] = "x".repeat(300).into();
    let f = write(dir.path(), "long.json", &long);
    assert_case(
        &gv(&["show", &f]),
        2,
        &["long.json", "adapter.name", "256"],
        "long name",
    );
    let mut cat = fragment(
        json!({}),
        json!([]),
        json!([instance(&"p".repeat(300), "a", "h100-sxm", "USD", 2.0)]),
    );
    cat["instances"][0]["region"] = "r".into();
    let f = write(dir.path(), "longcat.json", &cat);
    assert_case(
        &gv(&["catalog", "--catalog-add", &f]),
        2,
        &["longcat.json", "instances[0].provider"],
        "long provider",
    );
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 200, failure_persistence: None, ..Default::default() })]

    /// Over any inputs the loaders accept (figures, prices, rates and work anywhere in their
    /// ranges), every cost that is ranked is finite and positive.
    #[test]
    fn every_ranked_cost_is_finite_and_positive(
        gflops in -300i32..=7, gbps in -300i32..=6, us in -3i32..=9,
        price in -6i32..=7, rate in -6i32..=6, work in -300i32..=24, mantissa in 1.0f64..9.99,
    ) {
        use gpuvalue::market::catalog::Catalog;
        use gpuvalue::value::rank::{Filters, RankOptions};
        use gpuvalue::value::scenario::ScenarioFile;
        let e = |x: i32| mantissa * 10f64.powi(x);
        let mut r = h100();
        for p in r["probes"].as_array_mut().unwrap() {
            let v = match p["unit"].as_str().unwrap() {
                "GFLOPS" => e(gflops).min(1e7),
                "GB/s" => e(gbps).min(1e6),
                _ => e(us).min(1e9),
            };
            p["value"] = json!({"n": 3, "median": v, "min": v, "max": v, "mean": v, "stddev": 0.0});
        }
        let Ok(results) = gpuvalue::results::ResultsFile::parse(&r.to_string()) else { return Ok(()) };
        let cat = fragment(
            json!({"XTS": {"per_usd": e(rate).min(1e6), "as_of": "2026-01-01", "source": "t"}}),
            json!([]),
            json!([instance("me", "a", "h100-sxm", "XTS", e(price).min(1e7))]),
        );
        let Ok(user) = Catalog::parse(&cat.to_string(), "p.json") else { return Ok(()) };
        let mut c = Catalog::embedded();
        c.extend(user);
        let checked = c.checked();
        let sc = json!({"schema_version": 1, "scenarios": [{"id": "x", "description": "d",
            "terms": [{"figure": "matmul_f32", "work": e(work).min(1e24), "unit": "FLOP"},
                      {"figure": "latency_dispatch", "work": e(work).min(1e24), "unit": "dispatches"}]}]});
        let Ok(s) = ScenarioFile::parse(&sc.to_string(), "s.json") else { return Ok(()) };
        for currency in ["USD", "XTS"] {
            let opts = RankOptions { pricing: gpuvalue::market::catalog::PricingModel::OnDemand, currency: currency.into(),
                top: None, budget: Some(100.0), filters: Filters::default(), include_reported: false, use_implausible: false, ..RankOptions::default() };
            let named = vec![("r.json".to_string(), results.clone())];
            if let Ok(rep) = gpuvalue::value::rank::rank(&checked, &s.scenarios[0], &named, &opts) {
                for row in &rep.rows {
                    proptest::prop_assert!(row.cost_per_job.is_finite() && row.cost_per_job > 0.0, "{row:?}");
                    proptest::prop_assert!(row.price_per_hour.is_finite() && row.price_per_hour > 0.0);
                }
            }
        }
    }
}
