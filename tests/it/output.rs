//! Output a person can read: every text output fits the terminal's width (100 columns for a
//! pipe), the same answer (budget, ties, notes) in every format, and the documented options
//! are the options the binary takes.

use std::process::{Command, Output};

const FIXTURE: &str = "tests/fixtures/results-lavapipe.json";

fn run_with(args: &[&str], columns: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpuvalue"));
    c.env(
        "GPUVALUE_HOME",
        std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
    );
    c.args(args).env("XDG_RUNTIME_DIR", std::env::temp_dir());
    match columns {
        Some(w) => c.env("COLUMNS", w),
        None => c.env_remove("COLUMNS"),
    };
    c.output().expect("run gpuvalue")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The longest line, in characters (every output here is drawn with single-width ones).
fn widest(s: &str) -> (usize, String) {
    s.lines()
        .map(|l| (l.chars().count(), l.to_string()))
        .max_by_key(|(n, _)| *n)
        .unwrap_or_default()
}

/// The commands that need no adapter, each as a person would type it.
fn commands() -> Vec<Vec<&'static str>> {
    let mut v: Vec<Vec<&str>> = Vec::new();
    for s in ["training", "inference", "int8_inference", "hpc"] {
        v.push(vec!["rank", "--scenario", s]);
        v.push(vec!["rank", "--scenario", s, "--results", FIXTURE]);
    }
    v.push(vec!["rank", "--details"]);
    v.push(vec![
        "rank",
        "--budget",
        "500",
        "--currency",
        "cny",
        "--price",
        "spot",
    ]);
    v.push(vec!["rank", "--include-reported", "--top", "40"]);
    v.push(vec!["rank", "--price", "spot", "--details"]);
    v.push(vec!["rank", "--side-by-side"]);
    v.push(vec![
        "rank",
        "--side-by-side",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--top",
        "30",
    ]);
    v.push(vec!["catalog"]);
    v.push(vec!["catalog", "--price", "spot", "--currency", "eur"]);
    v.push(vec!["calibration"]);
    v.push(vec!["show", FIXTURE]);
    v.push(vec!["compare", FIXTURE, FIXTURE]);
    v
}

#[test]
fn every_text_output_fits_100_columns_in_a_pipe_and_in_a_100_column_terminal() {
    for args in commands() {
        for columns in [None, Some("100")] {
            let o = run_with(&args, columns);
            let t = text(&o);
            assert!(o.status.code().is_some_and(|c| c <= 1), "{args:?}: {t}");
            let (n, line) = widest(&t);
            assert!(
                n <= 100,
                "{args:?} (COLUMNS={columns:?}): {n} columns:\n{line}"
            );
        }
    }
}

#[test]
fn a_narrow_terminal_narrows_the_tables_and_wide_lifts_the_limit() {
    for args in [&["rank"][..], &["rank", "--details"], &["calibration"]] {
        let o = run_with(args, Some("90"));
        let (n, line) = widest(&text(&o));
        assert!(n <= 90, "{args:?}: {n}: {line}");
    }
    let o = run_with(&["catalog", "--wide"], Some("100"));
    assert!(widest(&text(&o)).0 > 100, "--wide keeps the full width");
}

#[test]
fn the_short_answer_is_ten_rows_and_details_show_every_figure() {
    let o = run_with(&["rank"], None);
    let t = text(&o);
    let rows = t
        .lines()
        .filter(|l| l.starts_with("│ ") && !l.starts_with("│ #"))
        .count();
    assert!(rows >= 10, "{t}");
    assert!(t.contains("more ranked (--top N)"), "{t}");
    assert!(
        !t.contains("Efficiency of"),
        "short answer without the factors: {t}"
    );
    let d = text(&run_with(&["rank", "--details"], None));
    assert!(d.contains("Efficiency of") && d.contains("TFLOPS x"), "{d}");
    assert!(d.contains("Not ranked ("), "{d}");
}

#[test]
fn ties_within_the_model_uncertainty_share_a_place_in_every_format() {
    let o = run_with(&["rank", "--format", "json", "--top", "40"], None);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let u = v["uncertainty"].as_f64().unwrap();
    assert!((1.05..2.0).contains(&u), "{u}");
    let rows = v["rows"].as_array().unwrap();
    // Identical hardware (GPU type, basis, time per job) is one estimate: price decides.
    let twins = |a: &serde_json::Value, b: &serde_json::Value| {
        a["gpu"] == b["gpu"]
            && a["basis"] == b["basis"]
            && a["hours_per_job"].as_f64() == b["hours_per_job"].as_f64()
    };
    let mut group: Vec<&serde_json::Value> = vec![&rows[0]];
    let mut twin_rows = 0;
    for r in &rows[1..] {
        let cost = r["cost_per_job"].as_f64().unwrap();
        let lead = group[0];
        let lead_cost = lead["cost_per_job"].as_f64().unwrap();
        let within = cost <= lead_cost * u * 1.000001;
        let twin = group.iter().find(|g| twins(g, r));
        if r["place"] == r["rank"] {
            match twin {
                Some(t) if within => {
                    // Behind a cheaper row of the same estimate, on its own place.
                    assert!(t["cost_per_job"].as_f64().unwrap() < cost, "{r}");
                    assert_eq!(r["tied"], false, "{r}");
                    twin_rows += 1;
                    group.push(r);
                }
                _ => group = vec![r],
            }
        } else {
            assert!(within, "{r}");
            assert_eq!(r["tied"], true);
            match twin {
                // The same estimate at the same cost shares that row's place.
                Some(t) => {
                    assert_eq!(t["cost_per_job"].as_f64(), Some(cost), "{r}");
                    assert_eq!(r["place"], t["place"]);
                }
                None => assert_eq!(r["place"], lead["rank"]),
            }
            group.push(r);
        }
    }
    assert!(
        twin_rows > 0,
        "the embedded catalog has the same GPU at several prices"
    );
    let tied = rows
        .iter()
        .find(|r| r["tied"] == true)
        .expect("the embedded catalog has ties");
    let shown = format!("{}=", tied["place"]);
    let md = text(&run_with(
        &["rank", "--format", "markdown", "--top", "40"],
        None,
    ));
    assert!(md.contains(&format!("| {shown} |")), "{md}");
    let table = text(&run_with(&["rank", "--top", "40"], None));
    assert!(table.contains(&format!("│ {shown}")), "{table}");
}

#[test]
fn the_budget_reaches_markdown_csv_and_the_report() {
    let md = text(&run_with(
        &["rank", "--format", "markdown", "--budget", "500"],
        None,
    ));
    assert!(md.contains("budget buys"), "{md}");
    assert!(md.contains("Budget: 500 USD"), "{md}");
    let csv = text(&run_with(
        &["rank", "--format", "csv", "--budget", "500"],
        None,
    ));
    assert!(csv.lines().next().unwrap().contains("budget_jobs"), "{csv}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = run_with(
        &[
            "report",
            FIXTURE,
            "--out",
            out.to_str().unwrap(),
            "--budget",
            "10000",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("budget buys") && md.contains("Budget: 10,000 USD"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("budget buys") && html.contains("Budget: 10,000 USD"));
    // The software adapter keeps its mark in the HTML report's machine lines.
    assert!(html.contains("[software adapter]"), "software mark missing");
}

#[test]
fn a_stale_exchange_rate_is_said_in_every_format() {
    // The built-in ECB snapshot's rates are current; a user's rate of 2025 is not.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old-rate.json");
    std::fs::write(
        &old,
        r#"{"schema_version": 1, "currencies": {"CNY": {"per_usd": 7.3, "as_of": "2025-01-02", "source": "an old quote"}}}"#,
    )
    .unwrap();
    for f in ["table", "markdown"] {
        let t = text(&run_with(
            &[
                "rank",
                "--currency",
                "CNY",
                "--catalog-add",
                old.to_str().unwrap(),
                "--format",
                f,
            ],
            None,
        ));
        assert!(t.contains("stale exchange rate"), "{f}: {t}");
    }
    let fresh = text(&run_with(&["rank", "--currency", "CNY"], None));
    assert!(!fresh.contains("stale exchange rate"), "{fresh}");
    assert!(
        fresh.contains("6.65288 CNY per USD, as of 2026-10-30"),
        "{fresh}"
    );
}

/// Every long option `--help` lists for a command is named in the README or in
/// docs/commands.md, so the two cannot drift apart silently.
#[test]
fn every_option_in_help_is_documented() {
    let docs = std::fs::read_to_string("README.md").unwrap()
        + &std::fs::read_to_string("docs/commands.md").unwrap();
    let mut missing = Vec::new();
    for cmd in [
        "devices",
        "bench",
        "show",
        "catalog",
        "rank",
        "run",
        "compare",
        "report",
        "burn",
        "calibration",
    ] {
        let help = String::from_utf8(run_with(&[cmd, "--help"], None).stdout).unwrap();
        for word in help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']') {
            let Some(opt) = word.strip_prefix("--") else {
                continue;
            };
            let opt: String = opt
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if opt.is_empty() || ["help", "version"].contains(&opt.as_str()) {
                continue;
            }
            if !docs.contains(&format!("--{opt}")) {
                missing.push(format!("{cmd} --{opt}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "options not in README or docs/commands.md: {missing:?}"
    );
}

/// With an adapter: `devices` and the bench table fit too (a short bench of two probes).
#[test]
fn devices_and_the_bench_table_fit_100_columns() {
    if crate::common::gpu().is_none() {
        return;
    }
    let o = run_with(&["devices"], None);
    let (n, line) = widest(&text(&o));
    assert!(o.status.success() && n <= 100, "devices: {n}: {line}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.json");
    let o = run_with(
        &[
            "bench",
            "--quick",
            "-q",
            "--probes",
            "latency,stream",
            "--array-mib",
            "8",
            "--out",
            out.to_str().unwrap(),
        ],
        Some("100"),
    );
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    let (n, line) = widest(&t);
    assert!(o.status.success() && n <= 100, "bench: {n}: {line}\n{t}");
    assert!(t.contains("stream triad"), "{t}");
}

/// Two runs of one adapter get two headings in the report, each naming its file and the
/// software mark.
#[test]
fn report_device_sections_name_their_file_and_software_mark() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["first.json", "second.json"] {
        std::fs::copy(FIXTURE, dir.path().join(n)).unwrap();
    }
    let out = dir.path().join("r");
    let o = run_with(
        &[
            "report",
            dir.path().to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-s",
            "training",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let headings: Vec<&str> = md
        .lines()
        .filter(|l| l.contains("software adapter): "))
        .collect();
    assert_eq!(headings.len(), 2, "{md}");
    assert!(headings[0].ends_with("first.json") && headings[1].ends_with("second.json"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("software adapter): first.json</h2>"),
        "{html}"
    );
}

/// The same instance type in two regions gets two bars in a chart; each
/// says its region instead of two identical labels.
#[test]
fn chart_bars_of_one_type_in_two_regions_name_their_region() {
    let dir = tempfile::tempdir().unwrap();
    let row = |region: &str, price: f64| {
        format!(
            r#"{{"provider": "zzcloud", "instance_type": "g1.a100", "region": "{region}",
            "gpu": "a100-80gb-pcie", "gpu_count": 1, "vcpu": 22, "ram_gib": 120.0,
            "prices": {{"on_demand": {{"amount": {price}, "currency": "USD", "per": "hour"}}}},
            "source": "test", "as_of": "2026-12-01", "confidence": "high"}}"#
        )
    };
    let cat = dir.path().join("two.json");
    std::fs::write(
        &cat,
        format!(
            r#"{{"schema_version": 2, "instances": [{}, {}]}}"#,
            row("north-1", 0.30),
            row("south-1", 0.32)
        ),
    )
    .unwrap();
    let out = dir.path().join("r");
    let o = run_with(
        &[
            "report",
            FIXTURE,
            "--catalog-add",
            cat.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-s",
            "training",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for region in ["north-1", "south-1"] {
        assert!(
            html.contains(&format!("zzcloud g1.a100 in {region} (1x")),
            "no bar for {region}"
        );
    }
    assert!(!html.contains("zzcloud g1.a100 (1x"), "an unnamed region");
}

/// Every command's `--help` fits the width it is read at: 100 columns through a pipe, 80
/// with `COLUMNS=80` (clap wraps the descriptions with its `wrap_help`).
#[test]
fn every_help_fits_100_columns_through_a_pipe_and_80_when_asked() {
    let commands: [&[&str]; 15] = [
        &[],
        &["devices"],
        &["bench"],
        &["show"],
        &["catalog"],
        &["catalog", "update"],
        &["catalog", "check"],
        &["rank"],
        &["run"],
        &["compare"],
        &["report"],
        &["burn"],
        &["calibration"],
        &["transfers"],
        &["help"],
    ];
    for cmd in commands {
        let mut args = cmd.to_vec();
        if cmd != ["help"] {
            args.push("--help");
        }
        for (columns, width) in [(None, 100), (Some("80"), 80)] {
            let o = run_with(&args, columns);
            assert!(o.status.success(), "{args:?}");
            let out = String::from_utf8(o.stdout).unwrap();
            assert!(out.lines().count() > 3, "{args:?}: {out}");
            for l in out.lines() {
                assert!(
                    l.chars().count() <= width,
                    "{args:?} at {width} columns: {} columns: {l}",
                    l.chars().count()
                );
            }
        }
    }
}

/// `catalog check` prints each finding as a paragraph fitted to 100 columns through a pipe
/// (80 with `COLUMNS=80`), broken only at spaces, so `\n  ` joins one back.
#[test]
fn catalog_check_findings_fit_the_width() {
    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/skypilot/aws/vms.csv"
    );
    for args in [
        vec!["catalog", "check"],
        vec!["catalog", "check", csv, "--csv-as-of", "2026-11-01"],
    ] {
        for (columns, width) in [(None, 100), (Some("80"), 80)] {
            let o = run_with(&args, columns);
            let out = String::from_utf8(o.stdout).unwrap();
            assert!(out.lines().count() > 2, "{args:?}: {out}");
            for l in out.lines() {
                assert!(l.chars().count() <= width, "{args:?} at {width}: {l}");
            }
            // Every finding names its severity at the start of its first line.
            let joined = out.replace("\n  ", " ");
            assert!(
                joined.lines().all(|l| l.starts_with("warning: ")
                    || l.starts_with("error: ")
                    || l.contains(" instance rows, ")),
                "{joined}"
            );
        }
    }
}

/// The bench table gives the memory hierarchy one row a level found (named after the stated
/// cache, the largest set beyond every cache as memory); `show --all` and the Markdown
/// report keep the rest where they belong: every size in --all, one row a level in Markdown.
#[test]
fn the_memory_hierarchy_is_one_row_a_level_and_every_size_with_all() {
    let file = "reports/matrix/lavapipe-25.0.json";
    let r = gpuvalue::results::ResultsFile::load(std::path::Path::new(file)).unwrap();
    let names = |all: bool| -> Vec<String> {
        gpuvalue::report::hierarchy::shown(&r, all)
            .into_iter()
            .map(|s| s.name)
            .filter(|n| n.starts_with("hierarchy"))
            .collect()
    };
    assert_eq!(
        names(false),
        [
            "hierarchy read: memory at 128 MiB",
            "hierarchy latency: L2 to 512 KiB",
            "hierarchy latency: level 2 to 4 MiB",
            "hierarchy latency: memory at 128 MiB"
        ]
    );
    assert_eq!(names(true).len(), 28, "every size with --all");
    let shown = text(&run_with(&["show", file], None));
    assert_eq!(shown.matches("│ hierarchy").count(), 4, "{shown}");
    let all = text(&run_with(&["show", "--all", file], None));
    assert_eq!(all.matches("│ hierarchy").count(), 28, "{all}");
    assert!(shown.lines().count() + 100 < all.lines().count());
    // A size whose check failed is never folded into a level: it stays, as failed.
    let mut failed = r.clone();
    let p = failed
        .probes
        .iter_mut()
        .find(|p| p.name == "hierarchy latency 2 MiB")
        .unwrap();
    p.status = gpuvalue::results::Status::Failed;
    let n = gpuvalue::report::hierarchy::shown(&failed, false);
    assert!(n.iter().any(|s| s.name == "hierarchy latency 2 MiB"));
    let (_, md) = gpuvalue::report::render(
        &[(file.to_string(), r.clone())],
        &[],
        &gpuvalue::market::catalog::Catalog::embedded(),
    );
    assert!(
        md.contains("hierarchy latency: L2 to 512 KiB (1 MiB stated; 14 sizes"),
        "{md}"
    );
}

/// Errors and warnings on standard error fit 100 columns through a pipe too (80 with
/// `COLUMNS=80`), broken only at spaces: `\n  ` joins a message back into one line.
#[test]
fn errors_and_warnings_fit_the_width_through_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad-config.json");
    std::fs::write(&bad, r#"{"model_type": "llama", "hidden_size": "wide"}"#).unwrap();
    let failing: [&[&str]; 6] = [
        // Only software adapters here: the transfers probe says why it cannot run.
        &["transfers"],
        &[
            "rank",
            "--gpu",
            "no-such-gpu-at-all-anywhere-in-this-catalog",
        ],
        &["rank", "--currency", "XYZ"],
        &[
            "rank",
            "--job",
            "llm-serve",
            "--model-config",
            bad.to_str().unwrap(),
        ],
        &[
            "show",
            "/no/such/results/file/at/this/very/long/path/results.json",
        ],
        &["compare", "/no/such/new.json", "/no/such/base.json"],
    ];
    let mut long_seen = false;
    for args in failing {
        for (columns, width) in [(None, 100), (Some("80"), 80)] {
            let o = run_with(args, columns);
            assert!(!o.status.success(), "{args:?} should fail");
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            assert!(!err.trim().is_empty(), "{args:?}: no message");
            for l in err.lines() {
                assert!(
                    l.chars().count() <= width,
                    "{args:?} at {width} columns: {} columns: {l}",
                    l.chars().count()
                );
            }
            long_seen |= err.contains("\n  ");
        }
    }
    assert!(
        long_seen,
        "no message was long enough to wrap: the test proves nothing"
    );
}
