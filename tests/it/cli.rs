//! The binary's behaviour on good and bad input: exit codes, messages, files left behind.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::gpuvalue;

/// Standard error with each message joined back into one line (through a pipe a message
/// is wrapped to 100 columns at spaces, continued on lines indented two columns).
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).replace("\n  ", " ")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// True when an adapter exists; under CI=true its absence fails the test.
fn have_adapter() -> bool {
    crate::common::gpu().is_some()
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
    assert_eq!(v["schema_version"], gpuvalue::results::SCHEMA_VERSION);
    assert!(
        v["probes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["figure"].is_string())
    );
    assert_eq!(v["interrupted"], false);
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
    // The power and clock sampler ran beside it: every source it tried is named, read or
    // with the reason it was not, and the table says so; a figure measured while a
    // counter was read carries its power.
    let sources = v["telemetry"]["sources"].as_array().expect("telemetry");
    assert!(!sources.is_empty());
    for src in sources {
        assert!(src["read"] == true || src["reason"].is_string(), "{src}");
    }
    let read = sources.iter().any(|s| s["read"] == true);
    assert!(
        stdout(&o).contains(if read {
            "power and clocks from"
        } else {
            "no power or clock counter read"
        }),
        "{}",
        stdout(&o)
    );
    if read {
        assert!(
            v["probes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["energy"]["samples"].is_u64())
        );
    }
    // At full width: a 100-column table may wrap a name between its words.
    let shown = gpuvalue(&["show", "--wide", out.to_str().unwrap()]);
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
    // No Vulkan driver at all (the loader pointed at a driver list that does not exist): the
    // search finds nothing. (`--backend metal` on Linux says Metal is Apple's instead.)
    let o = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .env(
            "GPUVALUE_HOME",
            std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
        )
        .args(["bench", "--backend", "vulkan", "--probes", "latency"])
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .env("VK_ICD_FILENAMES", "/nonexistent/gpuvalue-no-driver.json")
        .env("VK_DRIVER_FILES", "/nonexistent/gpuvalue-no-driver.json")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("no GPU adapter found"), "{e}");
    assert!(e.contains("vulkan"), "{e}");
    assert!(e.contains("mesa-vulkan-drivers"), "{e}");
}

#[test]
fn catalog_lists_filters_and_converts() {
    let o = gpuvalue(&["catalog", "--gpu", "h100", "--currency", "CNY", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The JSON is a catalog file of the selected rows: it reads back as one.
    let cat: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = cat["instances"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["gpu"].as_str().unwrap().to_lowercase().contains("h100"))
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h100.json");
    std::fs::write(&file, &o.stdout).unwrap();
    let back = gpuvalue(&[
        "catalog",
        "--catalog",
        file.to_str().unwrap(),
        "--currency",
        "CNY",
    ]);
    assert!(back.status.success(), "{}", stderr(&back));
    assert!(stdout(&back).contains("H100"), "{}", stdout(&back));
    let check = gpuvalue(&["catalog", "check", file.to_str().unwrap()]);
    assert!(check.status.success(), "{}", stdout(&check));
    let o = gpuvalue(&["catalog", "--currency", "XYZ"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("XYZ"), "{}", stderr(&o));
    // Fit and finish: a warning says which; no "(16 GB)" after a name
    // that says 16GB, no number parted from its unit; no "1 USD per USD".
    let t = stdout(&gpuvalue(&["catalog", "--price", "spot"]));
    assert!(
        t.contains("│ warning:") && t.contains("interruption"),
        "{t}"
    );
    assert!(!t.contains("│ warning "), "{t}");
    let t = stdout(&gpuvalue(&["catalog"]));
    assert!(t.contains("1 x T4 16GB") && t.contains("SXM2 16GB"), "{t}");
    assert!(!t.contains("16GB (16 GB)") && !t.contains("(16 GB)"), "{t}");
    assert!(
        t.contains("prices per hour in USD") && !t.contains("USD per USD"),
        "{t}"
    );
    // The on-demand listing does not warn about a row's stale spot band.
    let g4 = t.lines().find(|l| l.contains("aws g4dn.xlarge")).unwrap();
    assert!(g4.contains("│ ok"), "{g4}");
    let c = stdout(&gpuvalue(&["calibration"]));
    assert!(c.contains("(1 point)") && !c.contains("(1 points)"), "{c}");
}

#[test]
fn catalog_check_reports_bad_rows_with_file_path_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mine.json");
    std::fs::write(
        &p,
        r#"{"schema_version": 1,
            "currencies": {"USD": {"per_usd": 1, "as_of": "2026-01-01", "source": "base"}},
            "gpus": [],
            "instances": [{"provider": "x", "instance_type": "y", "region": "z", "gpu": "nope", "gpu_count": 1,
              "vcpu": 1, "ram_gib": 1, "source": "s", "as_of": "2026", "confidence": "high",
              "prices": {"on_demand": {"amount": 1, "currency": "USD", "per": "hour"},
                         "spot": {"amount": 1, "currency": "USD", "per": "hour"}}}]}"#,
    )
    .unwrap();
    let o = gpuvalue(&["catalog", "check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("mine.json")
            && out.contains("instances[0].gpu")
            && out.contains("unknown GPU id"),
        "{out}"
    );
    assert!(out.contains("instances[0].prices.spot.amount"), "{out}");
    // Without a file: the catalog commands use. Its hand-kept rows have no errors (stale
    // rows are warnings); the built-in feed snapshot's rows that cannot rank are listed,
    // and do not fail the check (they only stay out of rankings).
    let o = gpuvalue(&["catalog", "check"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("skypilot 2026-12-03"), "{out}");
    assert!(!out.contains("error: embedded catalog"), "{out}");
    assert!(
        out.lines()
            .filter(|l| l.starts_with("error:"))
            .all(|l| l.starts_with("error: snapshot skypilot")),
        "{out}"
    );
    std::fs::write(&p, "{\"schema_version\": 1, \"gpus\": [{\"id\": 3}]}").unwrap();
    let o = gpuvalue(&["catalog", "check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("gpus[0].id") && stderr(&o).contains("line 1"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn rank_outputs_and_errors() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/results-lavapipe.json"
    );
    let o = gpuvalue(&[
        "rank",
        "--scenario",
        "inference",
        "--results",
        fixture,
        "--json",
        "--top",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 3);
    assert_eq!(v["machines"][0]["catalog_gpu"], serde_json::Value::Null);
    let o = gpuvalue(&["rank", "--scenario", "training", "--csv", "--price", "spot"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("rank,provider,instance_type"));
    let o = gpuvalue(&[
        "rank",
        "--scenario",
        "hpc",
        "--markdown",
        "--currency",
        "EUR",
        "--budget",
        "500",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("| 1 |") || stdout(&o).contains("| 1= |"));
    let o = gpuvalue(&["rank", "--scenario", "mining"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("mining") && stderr(&o).contains("training"),
        "{}",
        stderr(&o)
    );
    let o = gpuvalue(&["rank", "--budget", "-5"]);
    assert!(!o.status.success());
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("scen.json");
    std::fs::write(&bad, r#"{"schema_version": 1, "scenarios": [{"id": "x", "description": "", "terms": [{"figure": "matmul_f32", "work": "lots", "unit": "FLOP"}]}]}"#).unwrap();
    let o = gpuvalue(&[
        "rank",
        "--scenarios",
        bad.to_str().unwrap(),
        "--scenario",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("scenarios[0].terms[0].work"),
        "{}",
        stderr(&o)
    );
}

/// The faults real catalogs contain, one per line of a SkyPilot-style CSV fixture: each is
/// found at its line, before the rows are merged, with the provider as the file's folder names it.
#[test]
fn catalog_check_finds_each_fault_of_a_skypilot_csv_at_its_line() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/skypilot/aws/vms.csv"
    );
    let o = gpuvalue(&["catalog", "check", fixture, "--csv-as-of", "2026-11-01"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A finding wrapped to 100 columns continues on lines indented two spaces.
    let out = stdout(&o).replace("\n  ", " ");
    // (severity, place, row, words of the message)
    let wants: &[(&str, &str, &str, &[&str])] = &[
        (
            "warning",
            "line 5, column SpotPrice",
            "p4d.24xlarge",
            &["2.4655", "0.31x", "median 8.05", "flash price"],
        ),
        (
            "warning",
            "line 6",
            "p4d.24xlarge",
            &["exact duplicate of line 3"],
        ),
        (
            "error",
            "line 7, column Price",
            "g4dn.xlarge",
            &["zero price"],
        ),
        (
            "warning",
            "line 8, column Price",
            "g5.xlarge",
            &["empty on-demand price"],
        ),
        (
            "error",
            "line 9, column Price",
            "g6.xlarge",
            &["negative price -0.8048"],
        ),
        (
            "error",
            "line 10, column Price",
            "g6e.4xlarge",
            &["700.0", "placeholder"],
        ),
        (
            "error",
            "line 11, column SpotPrice",
            "p3.2xlarge",
            &["\"N/A\" is a placeholder"],
        ),
        (
            "error",
            "line 12, column AcceleratorCount",
            "p3.16xlarge",
            &["4 GPUs", "has 8"],
        ),
        (
            // 80 in `SizeInMiB` is 80 GB per GPU written in the wrong unit (Shadeform's
            // rows do this): read as GB, and said.
            "warning",
            "line 13, column GpuInfo",
            "p5.48xlarge",
            &["80", "read as GB per GPU"],
        ),
        (
            "error",
            "line 14, column AcceleratorName",
            "dl1.24xlarge",
            &["\"Gaudi\" is not a GPU"],
        ),
        (
            "warning",
            "line 15, column SpotPrice",
            "p5.4xlarge",
            &["spot equals on-demand", "dropped"],
        ),
    ];
    // (Once 2026-11 is over six months ago, every row is also flagged stale: not counted.)
    let lines: Vec<&str> = out.lines().filter(|l| !l.contains("stale price")).collect();
    for (severity, place, row, words) in wants {
        let head = format!("{severity}: {fixture}: {place} (aws/{row}/us-east-1): ");
        let hit = lines.iter().find(|l| l.starts_with(&head));
        let hit = hit.unwrap_or_else(|| panic!("no `{head}` in\n{out}"));
        for w in *words {
            assert!(hit.contains(w), "{w:?} not in {hit}");
        }
    }
    // Nothing else is flagged: the p4d zones and p3.2xlarge's family-resolved V100 are clean,
    // and no finding names a merged `instances[N]` index.
    assert_eq!(lines.len(), wants.len() + 1, "{out}");
    assert!(!out.contains("instances["), "{out}");
    assert!(
        out.contains("10 instance rows, 0 GPUs: 6 error(s), "),
        "{out}"
    );

    // Ranked with --skip-bad-rows: the row whose spot price only repeated on-demand still
    // ranks on demand; the unknown accelerator and the wrong count do not rank.
    let o = gpuvalue(&[
        "rank",
        "--scenario",
        "training",
        "--catalog-add",
        fixture,
        "--csv-as-of",
        "2026-11-01",
        "--skip-bad-rows",
        "--provider",
        "aws",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ranked: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["instance_type"].as_str())
        .collect();
    assert!(ranked.contains(&"p5.4xlarge"), "{ranked:?}");
    assert!(!ranked.contains(&"dl1.24xlarge"), "{ranked:?}");
    assert!(!ranked.contains(&"p3.16xlarge"), "{ranked:?}");
}

#[test]
fn rank_refuses_user_catalogs_with_bad_rows_unless_told_to_skip_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("extra.json");
    std::fs::write(
        &p,
        r#"{"schema_version": 1, "instances": [{"provider": "mine", "instance_type": "box", "region": "home",
            "gpu": "h100-sxm", "gpu_count": 1, "vcpu": 8, "ram_gib": 64, "source": "my invoice", "as_of": "2026-11",
            "confidence": "high", "prices": {"on_demand": {"amount": -3, "currency": "USD", "per": "hour"}}}]}"#,
    )
    .unwrap();
    let o = gpuvalue(&["rank", "--catalog-add", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("extra.json") && e.contains("prices.on_demand.amount") && e.contains("-3"),
        "{e}"
    );
    let o = gpuvalue(&[
        "rank",
        "--catalog-add",
        p.to_str().unwrap(),
        "--skip-bad-rows",
        "--details",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("mine/box/home: catalog error"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn format_option_and_its_hidden_aliases() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/results-lavapipe.json"
    );
    let ok = |args: &[&str]| {
        let o = gpuvalue(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o)
    };
    // Each alias prints exactly what its --format prints; no flag means table.
    for (format, alias) in [
        ("json", "--json"),
        ("csv", "--csv"),
        ("markdown", "--markdown"),
    ] {
        let by_format = ok(&["rank", "-s", "hpc", "--top", "4", "--format", format]);
        assert_eq!(by_format, ok(&["rank", "-s", "hpc", "--top", "4", alias]));
        assert_ne!(by_format, ok(&["rank", "-s", "hpc", "--top", "4"]));
    }
    assert_eq!(
        ok(&["rank", "-s", "hpc", "--top", "4", "--format", "table"]),
        ok(&["rank", "-s", "hpc", "--top", "4"])
    );
    assert!(ok(&["rank", "--format", "csv"]).starts_with("rank,provider,instance_type"));
    let json = ok(&["catalog", "--gpu", "h100", "--format", "json"]);
    assert_eq!(json, ok(&["catalog", "--gpu", "h100", "--json"]));
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    let json = ok(&["show", fixture, "--format", "json"]);
    assert_eq!(json, ok(&["show", fixture, "--json"]));
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    assert!(ok(&["show", fixture, "--format", "table"]).contains("stream triad"));

    // A format the command cannot print: a usage error naming the formats it can.
    for (args, supported) in [
        (
            vec!["catalog", "--format", "csv"],
            "[possible values: table, json]",
        ),
        (
            vec!["show", fixture, "--format", "markdown"],
            "[possible values: table, json]",
        ),
        (
            vec!["devices", "--format", "csv"],
            "[possible values: table, json]",
        ),
        (
            vec!["compare", fixture, fixture, "--format", "csv"],
            "[possible values: table, json, markdown]",
        ),
        (
            vec!["rank", "--format", "html"],
            "[possible values: table, json, csv, markdown]",
        ),
    ] {
        let o = gpuvalue(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("--format") && stderr(&o).contains(supported),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
    }
    // Aliases for formats a command never had do not exist.
    let o = gpuvalue(&["catalog", "--markdown"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--markdown"), "{}", stderr(&o));

    // At most one of --format and the aliases.
    for args in [
        &["rank", "--format", "csv", "--json"][..],
        &["rank", "--json", "--csv"],
        &["rank", "--csv", "--markdown"],
        &["compare", fixture, fixture, "--json", "--markdown"],
        &[
            "compare",
            fixture,
            fixture,
            "--format",
            "table",
            "--markdown",
        ],
        &["catalog", "--format", "json", "--json"],
    ] {
        let o = gpuvalue(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("cannot be used with"),
            "{args:?}: {}",
            stderr(&o)
        );
    }

    // --help shows --format and its values, not the hidden aliases.
    let help = ok(&["rank", "--help"]);
    assert!(
        help.contains("--format <FORMAT>") && help.contains("csv"),
        "{help}"
    );
    assert!(
        !help.contains("--json") && !help.contains("--markdown"),
        "{help}"
    );
    let help = ok(&["compare", "--help"]);
    assert!(
        help.contains("--format <FORMAT>") && !help.contains("--json"),
        "{help}"
    );
}

/// A quick run never drops a figure for time: over its budget it measures every figure with
/// the reduced plan and says so on each one.
#[test]
fn a_quick_run_over_its_budget_still_measures_every_figure() {
    if !have_adapter() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("q.json");
    let o = gpuvalue(&[
        "bench",
        "--quick",
        "-q",
        "--time-budget",
        "0.2",
        "--array-mib",
        "8",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let r = gpuvalue::results::ResultsFile::load(&out).unwrap();
    let skipped: Vec<_> = r
        .probes
        .iter()
        .filter(|p| p.status == gpuvalue::results::Status::Skipped)
        .map(|p| (&p.name, &p.reason))
        .collect();
    assert!(skipped.is_empty(), "skipped in a quick run: {skipped:?}");
    // Every figure of every probe is there (ok, or unsupported by the adapter).
    for probe in gpuvalue::measuring::probes::REGISTRY {
        for f in probe.figures() {
            assert!(
                r.probes.iter().any(|p| p.figure == Some(*f)),
                "{f:?} missing"
            );
        }
    }
    let reduced: Vec<_> = r
        .probes
        .iter()
        .filter(|p| p.params.contains_key("reduced_plan"))
        .collect();
    assert!(!reduced.is_empty(), "a 0.2 s budget reduced nothing");
    for p in reduced {
        assert!(
            p.warnings.iter().any(|w| w.contains("reduced plan")),
            "{}",
            p.name
        );
    }
}

/// A folder of results files (a fleet's, say) is one argument to show, rank and report; an
/// empty one is refused by name.
#[test]
fn directories_of_results_files_are_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/results-lavapipe.json"
    );
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    for name in ["a.json", "b.json"] {
        std::fs::copy(fixture, runs.join(name)).unwrap();
    }
    std::fs::write(runs.join("notes.txt"), "not a results file").unwrap();
    let runs_s = runs.to_str().unwrap();
    let o = gpuvalue(&["show", runs_s, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().map(|a| a.len()), Some(2), "{v}");
    let o = gpuvalue(&["rank", "--results", runs_s, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["machines"].as_array().map(|a| a.len()), Some(2));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = gpuvalue(&["show", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("empty") && stderr(&o).contains("no results files"),
        "{}",
        stderr(&o)
    );
}

/// `rank --results DIR` groups a fleet's files by instance and GPU model and names the
/// adapter that falls behind its siblings, in the table and in the JSON.
#[test]
fn rank_names_the_slow_gpu_of_an_instance() {
    let dir = tempfile::tempdir().unwrap();
    let fixture: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/results-lavapipe.json"
    )))
    .unwrap();
    for (i, scale) in [1.0, 1.02, 0.98, 0.5].into_iter().enumerate() {
        let mut v = fixture.clone();
        v["instance"] = serde_json::json!({"provider": "aws", "instance_type": "p5.48xlarge"});
        v["adapter"]["pci_bus_id"] = format!("0000:{:02x}:00.0", 0x10 + i).into();
        for p in v["probes"].as_array_mut().unwrap() {
            if p["name"] == "stream triad" {
                for k in ["median", "min", "max", "mean"] {
                    let x = p["value"][k].as_f64().unwrap();
                    p["value"][k] = (x * scale).into();
                }
            }
        }
        std::fs::write(dir.path().join(format!("gpu{i}.json")), v.to_string()).unwrap();
    }
    let d = dir.path().to_str().unwrap();
    let o = gpuvalue(&["rank", "-s", "inference", "--results", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The note is wrapped to the width: its continuation lines are indented.
    let start = out
        .find("fleet OUTLIER")
        .unwrap_or_else(|| panic!("no outlier line in\n{out}"));
    let line: String = out[start..]
        .lines()
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.starts_with("  "))
        .map(|(_, l)| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        line.contains("gpu3.json") && line.contains("0000:13:00.0") && line.contains("49% behind"),
        "{line}"
    );
    let o = gpuvalue(&[
        "rank",
        "-s",
        "inference",
        "--results",
        d,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["fleet"]["groups"][0]["members"].as_array().unwrap().len(),
        4
    );
    assert_eq!(v["fleet"]["findings"][0]["kind"], "outlier");
    assert!(
        v["fleet"]["findings"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("gpu3.json")
    );
    assert!(
        v["rows"].is_array(),
        "the ranking's own fields stay at the top level"
    );
}

/// `--instance` (or GPUVALUE_INSTANCE) is checked against the catalog before anything runs.
#[test]
fn bench_refuses_an_instance_the_catalog_does_not_list() {
    let o = gpuvalue(&[
        "bench",
        "--instance",
        "aws:p9.99xlarge",
        "-o",
        "/nonexistent/x.json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown instance type `p9.99xlarge` for provider aws"),
        "{}",
        stderr(&o)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .env(
            "GPUVALUE_HOME",
            std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
        )
        .args(["bench", "-o", "/nonexistent/x.json"])
        .env("GPUVALUE_INSTANCE", "nocloud:x1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown provider `nocloud`"),
        "{}",
        stderr(&o)
    );
    let o = gpuvalue(&["bench", "--instance", "aws", "-o", "/nonexistent/x.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("provider:type[:region]"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_results_directory_may_hold_other_json_such_as_device_bench_devices_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        "tests/fixtures/results-lavapipe.json",
        dir.path().join("lavapipe.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("devices.json"), "[{\"index\": 0}]").unwrap();
    // A catalog (and a scenarios file) carries a schema_version too.
    std::fs::copy("src/data/catalog.json", dir.path().join("catalog.json")).unwrap();
    std::fs::copy("src/data/scenarios.json", dir.path().join("scenarios.json")).unwrap();
    let d = dir.path().to_str().unwrap();
    let o = gpuvalue(&["rank", "--results", d, "--top", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["devices.json", "catalog.json", "scenarios.json"] {
        assert!(
            stderr(&o).contains(&format!("{f}: not a gpuvalue results file")),
            "{}",
            stderr(&o)
        );
    }
    // Named on its own, the same file is still refused, saying what it is missing.
    let f = dir.path().join("devices.json");
    let o = gpuvalue(&["show", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_filter_that_matches_nothing_says_so_with_the_valid_values() {
    for (flag, bad, listed) in [
        ("--provider", "awz", "aws"),
        ("--region", "mars-1", "regions in AE, AU"),
    ] {
        for cmd in ["rank", "catalog"] {
            let o = gpuvalue(&[cmd, flag, bad]);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{cmd} {flag} {bad}: {}",
                stdout(&o)
            );
            let e = stderr(&o);
            assert!(
                e.contains(&format!("{flag} {bad}: matches no catalog instance")),
                "{e}"
            );
            assert!(e.contains(listed), "{e}");
        }
    }
    // Currencies in any case, RMB for CNY.
    for c in ["cny", "RMB", "usd"] {
        let o = gpuvalue(&["rank", "--currency", c, "--top", "1"]);
        assert!(o.status.success(), "--currency {c}: {}", stderr(&o));
    }
    let o = gpuvalue(&[
        "rank",
        "--currency",
        "rmb",
        "--top",
        "1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["currency"], "CNY");
}

#[test]
fn options_read_as_a_person_writes_them() {
    let o = gpuvalue(&["bench", "--array-mib", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected a whole number of MiB from 1"),
        "{}",
        stderr(&o)
    );
    if cfg!(target_os = "linux") {
        let o = gpuvalue(&["devices", "--backend", "metal"]);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(
            e.contains("Metal exists only on Apple's systems") && !e.contains("lavapipe"),
            "{e}"
        );
    }
    // `run` takes the rank options it passes on, and checks them before measuring anything.
    let t = std::time::Instant::now();
    let o = gpuvalue(&["run", "--quick", "--currency", "XTS", "--top", "3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("--currency XTS"), "{}", stderr(&o));
    assert!(
        t.elapsed().as_secs() < 20,
        "run measured before refusing its options"
    );
    let help = gpuvalue(&["report", "--help"]);
    assert!(!stdout(&help).contains("replaced as a whole"));
    let help = gpuvalue(&["rank", "--help"]);
    assert!(stdout(&help).contains("int8_inference"));
}

/// An option the rest of the command line makes moot is refused, naming what it applies to
/// instead of an answer that silently ignored it.
#[test]
fn options_that_would_be_ignored_are_refused() {
    for (args, says) in [
        (
            &["--tokens", "1e9"][..],
            "--tokens applies to --job llm-finetune",
        ),
        (
            &["--model", "70b"],
            "--model applies to --job llm-finetune or llm-serve",
        ),
        (
            &["--job", "llm-finetune", "--request-rate", "5"],
            "--request-rate applies to --job llm-serve, not llm-finetune",
        ),
        (
            &["--job", "llm-serve", "--method", "full"],
            "--method applies to --job llm-finetune, not llm-serve",
        ),
        (
            &["--side-by-side", "--price", "spot"],
            "--price is not used with --side-by-side",
        ),
    ] {
        let mut a = vec!["rank"];
        a.extend_from_slice(args);
        let o = gpuvalue(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(stderr(&o).contains(says), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("gpuvalue rank"), "{}", stderr(&o));
    }
    // What applies stays accepted, and so do defaults.
    for args in [
        &["--job", "llm-finetune", "--tokens", "2e9", "--top", "1"][..],
        &["--job", "llm-serve", "--request-rate", "5", "--top", "1"],
        &["--side-by-side", "--top", "1"],
        &["--price", "spot", "--top", "1"],
    ] {
        let mut a = vec!["rank"];
        a.extend_from_slice(args);
        let o = gpuvalue(&a);
        assert!(o.status.success(), "{a:?}: {}", stderr(&o));
    }
}

/// Without a graphical session, looking for adapters prints no libwayland "error:" line:
/// the first run of a new user starts without a false error.
#[test]
fn no_session_no_false_error_on_stderr() {
    for args in [&["devices"][..], &["devices", "--json"]] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
            .args(args)
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET")
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(!e.contains("XDG_RUNTIME_DIR"), "{args:?}: {e}");
    }
}

/// `catalog check` counted more GPUs than the listing showed. It now says
/// which have specs only (no instance rents them here: kept for calibration points, results
/// files and `--catalog-add` rows), and a `--catalog-add` row of such a GPU ranks.
#[test]
fn check_names_the_gpus_with_specs_only_and_an_added_row_can_use_one() {
    let o = gpuvalue(&["catalog", "check"]);
    let out = stdout(&o).replace("\n  ", " ");
    let last = out.lines().last().unwrap();
    assert!(
        last.contains("with specs only") && last.contains("mi100"),
        "{last}"
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("mine.csv");
    std::fs::write(
        &csv,
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\nmy-mi100,MI100,1,16,64,1.10,,us-east-1\n",
    )
    .unwrap();
    let o = gpuvalue(&[
        "rank",
        "--catalog-add",
        csv.to_str().unwrap(),
        "--csv-as-of",
        "2026-12-01",
        "--gpu",
        "mi100",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"][0]["instance_type"], "my-mi100", "{v}");
}

#[test]
fn a_negative_number_gets_the_option_s_range_not_a_parse_error() {
    // clap reads "-5" as an unknown flag unless told otherwise; each option's own check
    // must answer instead, naming the option and its range.
    let o = gpuvalue(&["rank", "--job", "llm-finetune", "--tokens", "-5"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("--tokens -5") && e.contains("expected"), "{e}");
    assert!(!e.contains("unexpected argument"), "{e}");
    let o = gpuvalue(&["burn", "--duration", "-30"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("positive number of seconds") && e.contains("-30"),
        "{e}"
    );
    let o = gpuvalue(&["bench", "--time-budget", "-1"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("positive number of seconds"),
        "{}",
        stderr(&o)
    );
}

fn gpuvalue_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .current_dir(cwd)
        .env(
            "GPUVALUE_HOME",
            std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
        )
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .args(args)
        .output()
        .expect("run gpuvalue")
}

/// Where the default results folder cannot be made, `run` and `bench` say
/// it is the default place, not "--out", which the user never typed.
#[test]
fn an_unwritable_default_results_place_does_not_blame_out() {
    if !have_adapter() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A file where the folder would go (root ignores permissions: this fails for anyone).
    std::fs::write(dir.path().join("results"), "in the way").unwrap();
    for cmd in ["run", "bench"] {
        let o = gpuvalue_in(dir.path(), &[cmd, "-q"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("the results file results/") && e.contains("the default place"),
            "{cmd}: {e}"
        );
        assert!(!e.contains("--out results"), "{cmd}: {e}");
    }
}

/// Each `run` writes its full report beside its results file, named after
/// it, so the last run's report is kept. A whole quick bench (about 40 s on lavapipe): run by
/// name in CI (.ci/run), with the long tests.
#[test]
#[ignore]
fn run_keeps_each_report_beside_its_results_file() {
    // Minutes of load beside the other long tests otherwise.
    let _turn = crate::common::one_at_a_time();
    if !have_adapter() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = gpuvalue_in(dir.path(), &["run", "-q", "--top", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The main job asks which instance serves a dense 70B and a MoE model cheapest at a
    // stated interactivity, not a 7B model at batch 1.
    for job in ["llm-serve-70b-fp8:", "llm-serve-deepseek-r1-fp8:"] {
        assert!(stdout(&o).contains(job), "no {job} in {}", stdout(&o));
    }
    assert!(!stdout(&o).contains("7B-parameter"), "{}", stdout(&o));
    let names: Vec<String> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let json = names
        .iter()
        .find(|n| n.ends_with(".json"))
        .expect("results");
    let stem = json.trim_end_matches(".json");
    for ext in ["html", "md"] {
        let want = format!("{stem}-report.{ext}");
        assert!(names.contains(&want), "no {want} in {names:?}");
    }
    assert!(!names.iter().any(|n| n == "report.html"), "{names:?}");
    assert!(
        stdout(&o).contains(&format!("{stem}-report.html")),
        "{}",
        stdout(&o)
    );
}
