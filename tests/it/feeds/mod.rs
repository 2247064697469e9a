//! `catalog update` against real feed files (SkyPilot's v8 CSVs, copied into
//! tests/fixtures/feeds by host, as `--mirror` reads them) served from 127.0.0.1, with the
//! faults a live feed has: each leaves the previous snapshot in use and names the source
//! and the fault.

use crate::common::feedserver::{Fault, Server, fixtures_copy};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SKY: &str = "raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8";

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .args(args)
        .env("GPUVALUE_HOME", home)
        .env_remove("GPUVALUE_MIRROR")
        // One message, one line: the assertions look for whole phrases.
        .env("COLUMNS", "10000")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run gpuvalue")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn update(home: &Path, s: &Server, extra: &[&str]) -> Output {
    let mut args = vec!["catalog", "update", "--mirror", &s.base];
    if !extra.contains(&"--timeout") {
        args.extend(["--timeout", "5"]);
    }
    args.extend_from_slice(extra);
    run(home, &args)
}

/// The stamp `current` names for the skypilot source.
fn current(home: &Path) -> String {
    std::fs::read_to_string(home.join("sources/skypilot/current"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn catalog_json(home: &Path) -> serde_json::Value {
    let o = run(home, &["catalog", "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn clouds_in_fixtures() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/feeds")
        .join(SKY);
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("vms.csv").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// A good first snapshot, for the fault tests.
fn first_snapshot() -> (tempfile::TempDir, tempfile::TempDir, Server, String) {
    let files = fixtures_copy();
    let home = tempfile::tempdir().unwrap();
    let s = Server::start(files.path());
    let o = update(home.path(), &s, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let stamp = current(home.path());
    assert!(!stamp.is_empty());
    (files, home, s, stamp)
}

#[test]
fn update_from_a_mirror_then_rank_the_market() {
    let (_files, home, _s, stamp) = first_snapshot();
    let snap = home.path().join("sources/skypilot").join(&stamp);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("manifest.json")).unwrap())
            .unwrap();
    let files = manifest["files"].as_array().unwrap();
    let ok: Vec<&serde_json::Value> = files.iter().filter(|f| f["status"] == "ok").collect();
    assert_eq!(ok.len(), clouds_in_fixtures().len(), "{manifest}");
    for f in &ok {
        assert_eq!(f["sha256"].as_str().unwrap().len(), 64);
        assert!(
            f["url"]
                .as_str()
                .unwrap()
                .starts_with("https://raw.githubusercontent.com/")
        );
        assert_eq!(f["etag"], "\"fixture\"");
    }
    // Every provider in the files is in the snapshot (yotta's rows all wait for a GPU
    // datasheet entry: kept there, counted, not listed by `catalog`).
    let cat = catalog_json(home.path());
    let snap_rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("catalog.json")).unwrap()).unwrap();
    let providers: std::collections::BTreeSet<String> = snap_rows["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["provider"].as_str().unwrap().to_string())
        .collect();
    for cloud in clouds_in_fixtures() {
        assert!(
            providers.contains(&cloud),
            "{cloud} missing from {providers:?}"
        );
    }
    // An H100 at the market's price: the cheapest per GPU-hour is under 2.5 USD.
    let o = run(
        home.path(),
        &[
            "rank", "--gpu", "h100-sxm", "--format", "json", "--top", "200",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = r["rows"].as_array().expect("rows");
    let cheapest = rows
        .iter()
        .map(|x| x["price_per_hour"].as_f64().unwrap() / x["gpu_count"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(cheapest < 2.5, "cheapest H100 per GPU-hour {cheapest}");
    // No lookalike: Vast's 94 GB "H100" (an H100 NVL) is not ranked as an H100 SXM.
    assert!(
        !rows.iter().any(|x| x["instance_type"]
            .as_str()
            .unwrap_or("")
            .contains("H100_NVL")),
        "an H100 NVL ranked as an H100 SXM"
    );
    // AWS's own feed wins for its rows, with its reserved terms; SkyPilot's spot price of
    // the same instance stays beside them, naming its source.
    let p4d = cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| {
            i["provider"] == "aws"
                && i["instance_type"] == "p4d.24xlarge"
                && i["region"] == "us-east-1"
        })
        .expect("aws p4d.24xlarge us-east-1");
    assert!(
        p4d["source"]
            .as_str()
            .unwrap()
            .starts_with("AWS Price List"),
        "{p4d}"
    );
    for m in ["on_demand", "reserved_1y", "reserved_3y", "spot"] {
        assert!(p4d["prices"][m]["amount"].as_f64().is_some(), "{m}: {p4d}");
    }
    assert!(
        p4d["prices"]["spot"]["source"]
            .as_str()
            .unwrap()
            .contains("SkyPilot"),
        "{p4d}"
    );
    // ... with the interruption band AWS's Spot Advisor publishes for it (us-east-1, Linux:
    // `{"s": 67, "r": 2}`, range 2 = "10-15%").
    let risk = &p4d["prices"]["spot"]["interruption"];
    assert_eq!(risk["band"], "10-15%", "{p4d}");
    assert!(
        risk["source"]
            .as_str()
            .unwrap()
            .starts_with("AWS Spot Instance Advisor"),
        "{p4d}"
    );
    // The notes say which snapshot the prices came from.
    let o = run(home.path(), &["rank", "--top", "3"]);
    let t = text(&o);
    assert!(
        t.contains("Prices from: snapshots aws 20") && t.contains(", skypilot 20"),
        "{t}"
    );
    // The AWS Price List carries the 3-year terms: they rank.
    let aws_3y = |extra: &str| {
        run(
            home.path(),
            &["rank", "--price", "reserved_3y", "--provider", "aws", extra],
        )
    };
    let o = aws_3y("--format=json");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["rows"].as_array().is_some_and(|r| !r.is_empty()),
        "{}",
        text(&o)
    );
    // Without it (offline: no public copy of AWS's 3-year prices is built in), the reason
    // names the command that reads them.
    let o = aws_3y("--offline");
    let t = text(&o).replace("\n    ", " ");
    assert!(
        t.contains("no reserved_3y price here: `gpuvalue catalog update --source aws` reads"),
        "{t}"
    );
    // --offline ignores them: only the snapshot built into the binary.
    let o = run(home.path(), &["rank", "--top", "3", "--offline"]);
    let t = text(&o);
    assert!(
        t.contains("Prices from: snapshots ecb 2026-12-06 00:00:00 UTC (built in, 29 exchange")
            && t.contains("skypilot 2026-12-03 00:00:00 UTC (built in,")
            && !t.contains("aws 20"),
        "{t}"
    );
}

/// After a failed or refused update: exit status 1, the source and the fault named, the
/// previous snapshot still current and the catalog still loading from it.
fn assert_kept(home: &Path, o: &Output, stamp: &str, words: &[&str]) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("skypilot:"), "{t}");
    for w in words {
        assert!(t.contains(w), "{w:?} not in {t}");
    }
    assert!(
        t.contains(&format!("the previous snapshot ({stamp}) stays in use")),
        "{t}"
    );
    assert_eq!(current(home), stamp);
    let o = run(home, &["rank", "--top", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("Prices from: snapshots") && t.contains("skypilot 20"),
        "{t}"
    );
}

#[test]
fn a_truncated_file_and_a_500_keep_the_last_snapshot() {
    let (_files, home, s, stamp) = first_snapshot();
    std::thread::sleep(Duration::from_millis(1100)); // a new stamp would differ
    s.fail_always("vast/vms.csv", Fault::Truncate);
    s.fail_always("nebius/vms.csv", Fault::Status(500));
    let o = update(home.path(), &s, &[]);
    assert_kept(
        home.path(),
        &o,
        &stamp,
        &["FAILED", "HTTP 500", "after 3 attempts"],
    );
    assert_eq!(
        s.requests("nebius/vms.csv"),
        1 + 3,
        "one good fetch, then three tries"
    );
}

#[test]
fn a_500_then_success_is_retried_and_a_429_waits_its_retry_after() {
    let (_files, home, s, stamp) = first_snapshot();
    std::thread::sleep(Duration::from_millis(1100));
    s.fail("cudo/vms.csv", vec![Fault::Status(500)]);
    s.fail("verda/vms.csv", vec![Fault::RetryAfter(2)]);
    let t0 = Instant::now();
    let o = update(home.path(), &s, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        t0.elapsed() >= Duration::from_secs(2),
        "Retry-After not honoured"
    );
    assert_ne!(current(home.path()), stamp, "the new snapshot is current");
    assert_eq!(s.requests("verda/vms.csv"), 2 + 1);
}

#[test]
fn connection_refused_and_timeouts_name_the_fault() {
    let (_files, home, s, stamp) = first_snapshot();
    // A port nothing listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = run(
        home.path(),
        &[
            "catalog",
            "update",
            "--mirror",
            &format!("http://127.0.0.1:{port}"),
        ],
    );
    assert_kept(home.path(), &o, &stamp, &["connection refused"]);
    s.fail_always("lium/vms.csv", Fault::Hang(Duration::from_secs(4)));
    let o = update(home.path(), &s, &["--timeout", "1"]);
    assert_kept(home.path(), &o, &stamp, &["timed out"]);
}

#[test]
fn malformed_csv_and_a_renamed_column_fail_the_source_naming_the_file() {
    let (_files, home, s, stamp) = first_snapshot();
    s.fail_always(
        "yotta/vms.csv",
        Fault::Body(b"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Cost,Region\nx,H100,1,8,64,2.0,us\n".to_vec()),
    );
    let o = update(home.path(), &s, &[]);
    assert_kept(
        home.path(),
        &o,
        &stamp,
        &["yotta/vms.csv", "no `Price` column"],
    );
    s.clear();
    s.fail_always(
        "yotta/vms.csv",
        Fault::Body(b"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region\nx,H100,\"1,8,64,2.0,us\ny,H100,1,8,64,2.0,us\n".to_vec()),
    );
    let o = update(home.path(), &s, &[]);
    assert_kept(home.path(), &o, &stamp, &["yotta/vms.csv", "malformed"]);
}

#[test]
fn a_body_over_the_cap_and_redirect_loops_are_refused() {
    let (_files, home, s, stamp) = first_snapshot();
    s.fail_always("seeweb/vms.csv", Fault::Body(vec![b'x'; 2_100_000]));
    let o = update(home.path(), &s, &["--max-download", "2"]);
    assert_kept(home.path(), &o, &stamp, &["over the 2 MB cap"]);
    s.clear();
    let loop_to = format!("{}/{SKY}/seeweb/vms.csv", s.base);
    s.fail_always("seeweb/vms.csv", Fault::Redirect(loop_to));
    let o = update(home.path(), &s, &[]);
    assert_kept(home.path(), &o, &stamp, &["redirects (a loop?)"]);
    s.clear();
    s.fail_always(
        "seeweb/vms.csv",
        Fault::Redirect("http://example.invalid/x".into()),
    );
    let o = update(home.path(), &s, &[]);
    assert_kept(home.path(), &o, &stamp, &["another host", "refused"]);
}

#[test]
fn a_spot_market_s_price_is_never_ranked_as_on_demand() {
    // Mithril sells by spot auction; SkyPilot's file repeats the auction price as Price.
    let files = fixtures_copy();
    let home = tempfile::tempdir().unwrap();
    let s = Server::start(files.path());
    let o = update(home.path(), &s, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let json = |price: &str| -> serde_json::Value {
        let o = run(
            home.path(),
            &[
                "rank",
                "--provider",
                "mithril",
                "--price",
                price,
                "--format",
                "json",
            ],
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let on_demand = json("on-demand");
    assert!(
        on_demand["rows"].as_array().unwrap().is_empty(),
        "{on_demand}"
    );
    let spot = json("spot");
    let rows = spot["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{spot}");
    assert!(rows.iter().all(|r| r["pricing"] == "spot"), "{spot}");
}

#[test]
fn zero_and_absurd_prices_never_rank_and_catalog_check_lists_them() {
    let files = fixtures_copy();
    let home = tempfile::tempdir().unwrap();
    // Mithril's file as a live one was seen: 8x H100 at cents an hour, and a zero.
    let mithril = files.path().join(SKY).join("mithril/vms.csv");
    let csv = std::fs::read_to_string(&mithril).unwrap();
    let csv = csv
        .replace(
            "h100-80gb.sxm.8x,H100,8,168,1814,8.0,8.0",
            "h100-80gb.sxm.8x,H100,8,168,1814,0.08,0.01",
        )
        .replace(
            "h100-80gb.sxm.1x,H100,1,20,226,1.0,1.0",
            "h100-80gb.sxm.1x,H100,1,20,226,0,0",
        );
    assert!(
        csv.contains("0.08,0.01"),
        "fixture changed: update this test"
    );
    std::fs::write(&mithril, csv).unwrap();
    let s = Server::start(files.path());
    let o = update(home.path(), &s, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(home.path(), &["catalog", "check"]);
    let t = text(&o);
    assert!(
        t.contains("mithril/h100-80gb.sxm.8x")
            && t.contains("market median")
            && t.contains("not ranked"),
        "{t}"
    );
    let o = run(
        home.path(),
        &[
            "rank",
            "--provider",
            "mithril",
            "--price",
            "spot",
            "--format",
            "json",
            "--top",
            "50",
        ],
    );
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for row in r["rows"].as_array().unwrap() {
        assert!(row["price_per_hour"].as_f64().unwrap() > 0.5, "{row}");
    }
}

#[test]
fn a_source_that_shrank_is_refused_by_the_gates_unless_forced() {
    let (files, home, s, stamp) = first_snapshot();
    std::thread::sleep(Duration::from_millis(1100));
    for c in ["vast", "shadeform", "cudo", "lium", "daytona"] {
        std::fs::remove_file(files.path().join(SKY).join(c).join("vms.csv")).unwrap();
    }
    let o = update(home.path(), &s, &[]);
    assert_kept(
        home.path(),
        &o,
        &stamp,
        &["REFUSED by the gates", "always had are missing"],
    );
    let o = update(home.path(), &s, &["--force"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_ne!(current(home.path()), stamp);
}

#[test]
fn an_update_killed_at_any_moment_leaves_a_loadable_snapshot() {
    let (_files, home, s, _stamp) = first_snapshot();
    for i in 0..12u64 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
            .args(["catalog", "update", "--force", "--mirror", &s.base])
            .env("GPUVALUE_HOME", home.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5 + i * 9));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let o = run(home.path(), &["catalog", "--format", "json"]);
        assert!(
            o.status.success(),
            "after a kill at {} ms: {}",
            5 + i * 9,
            text(&o)
        );
    }
}

#[test]
fn list_names_each_source_its_url_and_last_success() {
    let (_files, home, _s, _stamp) = first_snapshot();
    let o = run(home.path(), &["catalog", "update", "--list"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("skypilot:") && t.contains("last snapshot 20") && t.contains("old"),
        "{t}"
    );
    assert!(t.contains("https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/<cloud>/vms.csv"), "{t}");
}

/// Every CSV file of the fixtures, with its cloud.
fn fixture_csvs() -> Vec<(String, std::path::PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/feeds")
        .join(SKY);
    clouds_in_fixtures()
        .into_iter()
        .map(|c| (c.clone(), dir.join(&c).join("vms.csv")))
        .collect()
}

/// The name mapping knows every accelerator name in the real files: a spelling of a catalog
/// GPU, a GPU without a spec entry yet, or an accelerator that is no GPU; none is unknown.
#[test]
fn every_accelerator_name_in_the_feeds_is_in_the_name_mapping() {
    let mut unknown = Vec::new();
    let mut names = 0;
    for (cloud, path) in fixture_csvs() {
        let mut rdr = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(&path)
            .unwrap();
        let col = rdr
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "AcceleratorName")
            .unwrap();
        for rec in rdr.records() {
            let rec = rec.unwrap();
            let name = rec.get(col).unwrap_or("").trim().to_string();
            if name.is_empty() {
                continue;
            }
            names += 1;
            if !gpuvalue::market::catalog::names::known(&name) {
                unknown.push(format!("{cloud}: {name}"));
            }
        }
    }
    unknown.sort();
    unknown.dedup();
    assert!(names > 1000, "{names} names read");
    assert!(
        unknown.is_empty(),
        "not in src/data/gpu_names.json: {unknown:?}"
    );
}

/// `--catalog-add` of each real SkyPilot file ranks without `--skip-bad-rows`: rows of GPUs
/// without a spec entry are counted and left out, not a reason to refuse the file.
#[test]
fn each_skypilot_file_adds_to_a_ranking_without_skip_bad_rows() {
    let home = tempfile::tempdir().unwrap();
    for (cloud, path) in fixture_csvs() {
        // SkyPilot's layout: the folder names the provider.
        let dir = home.path().join("add").join(&cloud);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("vms.csv");
        std::fs::copy(&path, &file).unwrap();
        let o = run(
            home.path(),
            &[
                "rank",
                "--offline",
                "--catalog-add",
                file.to_str().unwrap(),
                "--csv-as-of",
                "2026-12-03",
                "--format",
                "json",
            ],
        );
        assert!(o.status.success(), "{cloud}: {}", text(&o));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ranked = r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["provider"] == cloud.as_str())
            .count();
        // Every cloud of these files rents a GPU the catalog has specs for (Yotta only RTX
        // 5090s and B200s, which have had one since issue 34).
        assert!(ranked > 0, "{cloud}: no row ranked");
    }
}

const AWS_FIXTURE: &str =
    "pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv";

/// The AWS offer file's filters and terms: Linux, Shared, no pre-installed software, Used
/// capacity; the cheapest standard reserved option per term as an effective hourly price
/// (upfront spread over the term); Capacity Block rows counted, never priced.
#[test]
fn aws_offer_file_keeps_linux_shared_on_demand_and_reserved_terms() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/feeds")
        .join(AWS_FIXTURE);
    let offer =
        gpuvalue::market::feeds::aws::parse_reader(std::fs::File::open(path).unwrap(), "us-east-1")
            .unwrap();
    assert_eq!(offer.published.as_deref(), Some("2026-12-01"));
    let types = gpuvalue::market::feeds::aws::kept_types(&offer);
    let p5 = types["p5.48xlarge"];
    assert_eq!(
        (p5.gpus, p5.vcpu, p5.ram_gib),
        (8.0, Some(192), Some(2048.0))
    );
    // Not the Windows (x1.4), Dedicated (x1.1), SQL or Capacity Block rows' prices.
    assert_eq!(p5.on_demand, Some(55.04));
    assert_eq!(
        offer.capacity_blocks, 6,
        "the six 8-GPU types' Capacity Block rows"
    );
    assert!(!types.contains_key("c6i.large"), "no GPU: not kept");
    let c = offer.into_catalog("https://x", "2026-12-03T00:00:00Z", "00");
    let p5 = c
        .instances
        .iter()
        .find(|i| i.instance_type == "p5.48xlarge")
        .unwrap();
    let price = |m: &str| {
        let v = serde_json::to_value(&p5.prices).unwrap();
        v[m]["amount"].as_f64().unwrap()
    };
    // All Upfront at 0.58 (1 year) and 0.40 (3 years) of on demand: the cheapest standard
    // option, the convertible ones (x1.08) never. (The fee is written in whole dollars.)
    assert!(
        (price("reserved_1y") - 0.58 * 55.04).abs() < 1e-3,
        "{}",
        price("reserved_1y")
    );
    assert!(
        (price("reserved_3y") - 0.40 * 55.04).abs() < 1e-3,
        "{}",
        price("reserved_3y")
    );
    assert_eq!(p5.gpu, "h100-sxm");
    let b200 = c
        .instances
        .iter()
        .find(|i| i.instance_type == "p6-b200.48xlarge")
        .unwrap();
    // p6-b200 carries B200s (issue 34 gave them a spec entry); the family tells.
    assert_eq!(b200.gpu, "b200");
}

/// A cut or malformed offer file fails the aws source, naming it; a missing region (404)
/// is skipped and said.
#[test]
fn aws_faults_name_the_offer_file() {
    let (_files, home, s, _stamp) = first_snapshot();
    let o = update(home.path(), &s, &["--source", "aws"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("us-west-2: no offer file (404): skipped"), "{t}");
    assert!(t.contains("6 Capacity Block rows (never ranked)"), "{t}");
    s.fail_always("us-east-1/index.csv", Fault::Truncate);
    let o = update(home.path(), &s, &["--source", "aws"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("aws: FAILED") && t.contains("us-east-1/index.csv"),
        "{t}"
    );
    s.clear();
    s.fail_always(
        "us-east-1/index.csv",
        Fault::Body(
            b"\"FormatVersion\",\"v1.0\"\n\"OfferCode\",\"AmazonEC2\"\n\"SKU\",\"TermType\"\n"
                .to_vec(),
        ),
    );
    let o = update(home.path(), &s, &["--source", "aws"]);
    assert!(text(&o).contains("no `Unit` column"), "{}", text(&o));
}

const AZURE: &str = "prices.azure.com/api/retail/prices";

fn instance<'a>(cat: &'a serde_json::Value, key: (&str, &str, &str)) -> &'a serde_json::Value {
    cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["provider"] == key.0 && i["instance_type"] == key.1 && i["region"] == key.2)
        .unwrap_or_else(|| panic!("no {key:?}"))
}

/// Azure's retail prices (real items, three pages): on demand, spot from `skuName`, a
/// reservation's term price over its hours; Windows, Low Priority, DevTest and a 10-year
/// term left out; the sizes' GPUs from their families.
#[test]
fn azure_pages_give_on_demand_spot_and_reservations_per_hour() {
    let (_files, home, _s, _stamp) = first_snapshot();
    let cat = catalog_json(home.path());
    let a100 = instance(&cat, ("azure", "Standard_NC48ads_A100_v4", "eastus2"));
    assert_eq!(a100["gpu"], "a100-80gb-pcie");
    assert_eq!(a100["gpu_count"], 2);
    assert_eq!(a100["vcpu"], 48);
    let p = |v: &serde_json::Value, m: &str| v["prices"][m]["amount"].as_f64().unwrap();
    assert_eq!(p(a100, "on_demand"), 7.346);
    assert!((p(a100, "reserved_1y") - 42066.0 / 8760.0).abs() < 1e-9);
    assert!((p(a100, "reserved_3y") - 71642.0 / 26280.0).abs() < 1e-9);
    let spot = instance(
        &cat,
        ("azure", "Standard_ND96ams_A100_v4", "switzerlandwest"),
    );
    assert_eq!(p(spot, "spot"), 15.83894);
    assert!(spot["prices"].get("on_demand").is_none());
    let json = cat.to_string();
    for gone in [
        "Standard_NC80adis_H100_v5",
        "Standard_NC64as_T4_v3",
        "italynorth",
        "Standard_D4as_v7",
    ] {
        assert!(!json.contains(gone), "{gone} kept");
    }
}

/// An empty page in the middle of the paging is followed (Azure sends them); a link back
/// to a page already read is a loop: the source fails, its last snapshot stays.
#[test]
fn azure_paging_survives_an_empty_page_and_refuses_a_loop() {
    let (_files, home, s, _stamp) = first_snapshot();
    s.fail_always(
        "prices@skip=100&page=2",
        Fault::Body(br#"{"BillingCurrency":"USD","Items":[],"NextPageLink":"https://prices.azure.com:443/api/retail/prices?$skip=200&page=3","Count":0}"#.to_vec()),
    );
    let o = update(home.path(), &s, &["--source", "azure"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("1 empty pages in the middle of the paging, followed"),
        "{t}"
    );
    assert!(t.contains("3 pages"), "{t}");
    let stamp = std::fs::read_to_string(home.path().join("sources/azure/current")).unwrap();
    s.clear();
    s.fail_always(
        "prices@skip=100&page=2",
        Fault::Body(br#"{"Items":[],"NextPageLink":"https://prices.azure.com/api/retail/prices?$skip=100&page=2","Count":0}"#.to_vec()),
    );
    let o = update(home.path(), &s, &["--source", "azure"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("azure: FAILED") && t.contains("a loop"), "{t}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("sources/azure/current")).unwrap(),
        stamp
    );
    let _ = AZURE;
}

/// The README's run: `scripts/mirror-server.py` over the fixtures (a static server that also
/// answers Azure's paging by query), then `catalog update --mirror` takes every source.
#[test]
fn the_readme_mirror_server_serves_every_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut server = match Command::new("python3")
        .arg(root.join("scripts/mirror-server.py"))
        .arg(root.join("tests/fixtures/feeds"))
        .arg("0")
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if !crate::common::in_ci() => {
            return crate::common::skipped(&format!("no python3: {e}"));
        }
        Err(e) => panic!("CI=true and python3 cannot run: {e}"),
    };
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let base = line.trim().rsplit(' ').next().unwrap().to_string();
    let home = tempfile::tempdir().unwrap();
    let o = run(home.path(), &["catalog", "update", "--mirror", &base]);
    server.kill().ok();
    server.wait().ok();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for s in [
        "skypilot: 1504 rows read",
        "aws: 15 rows read",
        "azure: 6 rows read",
        "3 pages",
        "oci: 10 rows read",
    ] {
        assert!(t.contains(s), "{s:?} not in {t}");
    }
}

/// A damaged snapshot (its `current` names a folder that is gone) stops no command: its
/// prices are left out with a warning naming the source, the others still rank.
#[test]
fn a_damaged_snapshot_is_left_out_with_a_warning() {
    let (_files, home, _s, _stamp) = first_snapshot();
    std::fs::write(
        home.path().join("sources/skypilot/current"),
        "20990101T000000Z\n",
    )
    .unwrap();
    let o = run(home.path(), &["rank", "--top", "2"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("the skypilot snapshot does not load") && t.contains("--source skypilot"),
        "{t}"
    );
    assert!(
        t.contains("Prices from: snapshots aws") && !t.contains(", skypilot 20"),
        "{t}"
    );
    // The manifest records a missing region's file as missing.
    let aws = std::fs::read_to_string(home.path().join("sources/aws/current")).unwrap();
    let m = std::fs::read_to_string(
        home.path()
            .join("sources/aws")
            .join(aws.trim())
            .join("manifest.json"),
    )
    .unwrap();
    assert!(
        m.contains("\"missing (404)\"") && m.contains("us-west-2/index.csv"),
        "{m}"
    );
}

/// A first update of `sources` from a fresh copy of the fixtures into an empty home: the
/// files (kept alive), the server, the home and what the command said.
fn fresh_update(sources: &[&str]) -> (tempfile::TempDir, Server, tempfile::TempDir, Output) {
    let files = fixtures_copy();
    let s = Server::start(files.path());
    let home = tempfile::tempdir().unwrap();
    let mut args = Vec::new();
    for src in sources {
        args.extend(["--source", src]);
    }
    let o = update(home.path(), &s, &args);
    (files, s, home, o)
}

/// The manifest fields that depend on the run, not the files: the test server's date,
/// ETag and address, and the version of the binary.
fn manifest_of_the_files(m: &mut serde_json::Value) {
    let o = m.as_object_mut().unwrap();
    o.remove("mirror");
    o.remove("gpuvalue_version");
    for f in o["files"].as_array_mut().unwrap() {
        let f = f.as_object_mut().unwrap();
        f.remove("server_date");
        f.remove("etag");
    }
}

/// The day the public copies in tests/fixtures/feeds were read (their README), as
/// SOURCE_DATE_EPOCH: 2026-12-03T00:00:00Z (SkyPilot's files), 2026-12-06T00:00:00Z (the
/// ECB's rates).
const FIXTURES_READ: &[(&str, &str, &str)] = &[
    ("skypilot", "1796256000", "20261203T000000Z"),
    ("ecb", "1796515200", "20261206T000000Z"),
];

#[test]
fn embedded_snapshot_is_the_fixtures_rebuilt() {
    let files = fixtures_copy();
    let home = tempfile::tempdir().unwrap();
    let s = Server::start(files.path());
    for (source, epoch, stamp) in FIXTURES_READ {
        let o = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
            .args(["catalog", "update", "--source", source, "--mirror", &s.base])
            .env("GPUVALUE_HOME", home.path())
            .env("SOURCE_DATE_EPOCH", epoch)
            .env("XDG_RUNTIME_DIR", std::env::temp_dir())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let snap = home.path().join(format!("sources/{source}/{stamp}"));
        let rows = std::fs::read_to_string(snap.join("catalog.json")).unwrap();
        let mut manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(snap.join("manifest.json")).unwrap())
                .unwrap();
        let raw = manifest.clone();
        manifest_of_the_files(&mut manifest);
        let built_in = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/data/snapshots")
            .join(source);
        if std::env::var_os("GPUVALUE_BLESS").is_some() {
            // As built: the run's version; not the test server's date, ETag and address.
            let mut m = raw.clone();
            for f in m["files"].as_array_mut().unwrap() {
                let f = f.as_object_mut().unwrap();
                f.remove("server_date");
                f.remove("etag");
            }
            let day = &stamp[..8];
            m["mirror"] = format!(
                "tests/fixtures/feeds (public copies read {}-{}-{}; see its README)",
                &day[..4],
                &day[4..6],
                &day[6..]
            )
            .into();
            std::fs::create_dir_all(&built_in).unwrap();
            std::fs::write(built_in.join("catalog.json"), &rows).unwrap();
            let m = serde_json::to_string_pretty(&m).unwrap() + "\n";
            std::fs::write(built_in.join("manifest.json"), m).unwrap();
        }
        let want_rows = std::fs::read_to_string(built_in.join("catalog.json")).unwrap();
        let mut want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(built_in.join("manifest.json")).unwrap())
                .unwrap();
        manifest_of_the_files(&mut want);
        assert!(
            rows == want_rows && manifest == want,
            "src/data/snapshots/{source} is not what `catalog update` makes of the fixtures: \
             rebuild it with GPUVALUE_BLESS=1 cargo test --release --test it embedded_snapshot"
        );
    }
    // Offline, a fresh machine ranks the same rows at the same rates: the built-in snapshots
    // are in use.
    let empty = tempfile::tempdir().unwrap();
    let offline = catalog_json_with(empty.path(), &["--offline"]);
    let fetched = catalog_json(home.path());
    assert_eq!(
        offline["instances"].as_array().unwrap().len(),
        fetched["instances"].as_array().unwrap().len()
    );
    assert_eq!(offline["currencies"], fetched["currencies"]);
    assert_eq!(offline["currencies"]["CNY"]["as_of"], "2026-10-30");
}

fn catalog_json_with(home: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["catalog", "--format", "json"];
    args.extend_from_slice(extra);
    let o = run(home, &args);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Fake keys, each a value no fixture contains.
const KEYS: &[(&str, &str)] = &[
    ("LAMBDA_API_KEY", "secret_lambda_7f3a9c1e55"),
    ("GCP_API_KEY", "AIzaSecretGcp3e9f0c"),
    ("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI5tSecretId9b2c"),
    ("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "aliSecretKey4d8e1f"),
    ("TENCENTCLOUD_SECRET_ID", "AKIDsecretTencent0c4a"),
    ("TENCENTCLOUD_SECRET_KEY", "tcSecretKey6e1b9d"),
];

fn run_keyed(home: &Path, args: &[&str], keys: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpuvalue"));
    c.args(args)
        .env("GPUVALUE_HOME", home)
        .env_remove("GPUVALUE_MIRROR")
        .env("COLUMNS", "10000")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir());
    for (k, v) in KEYS {
        if keys {
            c.env(k, v);
        } else {
            c.env_remove(k);
        }
    }
    c.output().expect("run gpuvalue")
}

/// Every file under `dir`, as text.
fn everything_under(dir: &Path, out: &mut String) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            everything_under(&p, out);
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
}

#[test]
fn keyed_sources_skip_without_keys_and_never_write_a_key() {
    let files = fixtures_copy();
    let s = Server::start(files.path());
    let home = tempfile::tempdir().unwrap();
    let keyed = [
        "catalog",
        "update",
        "--source",
        "lambda",
        "--source",
        "alibaba",
        "--source",
        "tencent",
        "--source",
        "gcp",
        "--mirror",
        &s.base,
        "--timeout",
        "5",
    ];
    // Without their keys: skipped and said, not a failure; nothing written for them.
    let o = run_keyed(home.path(), &keyed, false);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("lambda: skipped: set LAMBDA_API_KEY"), "{t}");
    assert!(
        t.contains("tencent: skipped: set TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY"),
        "{t}"
    );
    assert!(t.contains("gcp: skipped: set GCP_API_KEY"), "{t}");
    assert!(!home.path().join("sources/lambda").exists());
    // With them (fake keys; the mirror answers from files): every source priced.
    let mut all = String::new();
    let o = run_keyed(home.path(), &keyed, true);
    all.push_str(&text(&o));
    assert!(o.status.success(), "{}", text(&o));
    for args in [
        &["catalog", "--format", "json"][..],
        &["catalog", "update", "--list"],
        &["rank", "--provider", "tencent", "--currency", "CNY"],
        &["catalog", "check"],
    ] {
        let o = run_keyed(home.path(), args, true);
        all.push_str(&text(&o));
    }
    let cat = catalog_json(home.path());
    let h100 = instance(&cat, ("lambda", "gpu_8x_h100_sxm5", "asia-northeast-1"));
    assert_eq!(h100["prices"]["on_demand"]["amount"], 31.92, "{h100}");
    assert!(
        h100["source"]
            .as_str()
            .unwrap()
            .starts_with("Lambda Cloud API")
    );
    let a10 = instance(&cat, ("alibaba", "ecs.gn7i-c8g1.2xlarge", "cn-beijing"));
    assert_eq!(a10["prices"]["on_demand"]["amount"], 9.5326, "{a10}");
    assert!(
        a10["source"].as_str().unwrap().contains("DescribePrice"),
        "{a10}"
    );
    assert_eq!(a10["as_of"], cat_day(&a10["source"]));
    // GCP: a machine's price is its vCPUs, memory and GPUs at their SKUs, summed, per
    // region of the SKUs; a kind with a part missing (spot A2: only a core SKU) is not
    // priced.
    let p = |v: &serde_json::Value, m: &str| v["prices"][m]["amount"].as_f64().unwrap();
    let a2 = instance(&cat, ("gcp", "a2-highgpu-1g", "us-west1"));
    assert!((p(a2, "on_demand") - 3.673385).abs() < 1e-9, "{a2}");
    assert!(a2["prices"].get("spot").is_none(), "{a2}");
    assert_eq!(a2["gpu"], "a100-40gb-sxm");
    let a3 = instance(&cat, ("gcp", "a3-highgpu-8g", "us-east4"));
    assert!((p(a3, "on_demand") - (8.0 * 9.796550569 + 8.0 * 1.18251)).abs() < 1e-5);
    let g2 = instance(&cat, ("gcp", "g2-standard-48", "us-central1"));
    assert!((p(g2, "on_demand") - 4.001665148).abs() < 1e-9, "{g2}");
    assert!(
        cat["instances"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["provider"] != "gcp" || i["region"] != "global"),
        "a licence SKU's region made a row"
    );
    // Zone 1 answers "sold out", zone 2 has no answer, zone 3 sells it.
    let gn7 = instance(&cat, ("tencent", "GN7.2XLARGE32", "ap-beijing"));
    assert!(
        gn7["source"].as_str().unwrap().contains("ap-beijing-3"),
        "{gn7}"
    );
    // No key in anything written or shown, nor in anything the mirror received.
    everything_under(home.path(), &mut all);
    all.push_str(&s.seen.lock().unwrap().join("\n"));
    for (var, value) in KEYS {
        assert!(
            !all.contains(value),
            "{var}'s value was written or sent to the mirror"
        );
    }
}

/// The day in a source's "fetched YYYY-MM-DDT..." text.
fn cat_day(source: &serde_json::Value) -> String {
    let s = source.as_str().unwrap();
    let i = s.find("fetched ").unwrap() + 8;
    s[i..i + 10].to_string()
}

/// Vast's offer search: one row per GPU model and count at the median of its hosts, the
/// spread and host count in the notes; SkyPilot's copies of Vast offers give way to it.
#[test]
fn vast_offers_rank_at_the_median_of_their_hosts_and_replace_copies() {
    let (_files, s, home, o) = fresh_update(&["skypilot", "vast"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        s.requests("bundles/?limit=5000&type=on-demand&verified=true"),
        1,
        "{:?}",
        s.log.lock().unwrap()
    );
    let snap = snapshot_rows(home.path(), "vast");
    let r4090 = instance(&snap, ("vast", "1x RTX 4090", "any"));
    // Four hosts: 0.2467 (the real CLI offer), 0.40 three times: the median is 0.40.
    assert_eq!(r4090["gpu"], "rtx-4090", "{r4090}");
    assert_eq!(r4090["prices"]["on_demand"]["amount"], 0.4, "{r4090}");
    let notes = r4090["notes"].as_str().unwrap();
    assert!(
        notes.contains("median of 4 hosts") && notes.contains("min 0.247"),
        "{notes}"
    );
    // The 94 GB card Vast calls H100 NVL is not an H100 SXM.
    let nvl = instance(&snap, ("vast", "1x H100 NVL", "any"));
    assert_ne!(nvl["gpu"], "h100-sxm", "{nvl}");
    // Every vast row in use is the offer search's: SkyPilot's copies gave way.
    let cat = catalog_json(home.path());
    let vast: Vec<&serde_json::Value> = cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["provider"] == "vast")
        .collect();
    assert!(!vast.is_empty());
    for v in vast {
        assert!(
            v["source"]
                .as_str()
                .unwrap()
                .starts_with("Vast.ai offer search"),
            "{v}"
        );
    }
}

/// RunPod's gpuTypes: Secure and Community Cloud are separate rows, named; per-GPU prices
/// times the count; SkyPilot's copies of RunPod give way.
#[test]
fn runpod_secure_and_community_are_separate_products() {
    let (_files, _s, home, o) = fresh_update(&["skypilot", "runpod"]);
    assert!(o.status.success(), "{}", text(&o));
    let cat = catalog_json(home.path());
    let secure = instance(&cat, ("runpod", "2x A100 PCIe secure", "any"));
    assert_eq!(secure["gpu"], "a100-80gb-pcie", "{secure}");
    assert_eq!(secure["prices"]["on_demand"]["amount"], 2.78, "{secure}");
    let community = instance(&cat, ("runpod", "1x A100 PCIe community", "any"));
    assert_eq!(
        community["prices"]["on_demand"]["amount"], 1.59,
        "{community}"
    );
    assert!(
        community["notes"]
            .as_str()
            .unwrap()
            .starts_with("Community Cloud"),
        "{community}"
    );
    // 1, 2, 4, 8 and the type's maximum (9 H100 NVL), never more.
    let snap = snapshot_rows(home.path(), "runpod");
    let nvl: Vec<u64> = snap["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["provider"] == "runpod")
        .filter(|i| i["instance_type"].as_str().unwrap().contains("H100 NVL"))
        .map(|i| i["gpu_count"].as_u64().unwrap())
        .collect();
    assert_eq!(nvl, [1, 2, 4, 8, 9], "{nvl:?}");
    for r in cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["provider"] == "runpod")
    {
        assert!(
            r["source"].as_str().unwrap().starts_with("RunPod GraphQL"),
            "{r}"
        );
    }
}

/// The rows of a source's current snapshot, as written.
fn snapshot_rows(home: &Path, source: &str) -> serde_json::Value {
    let dir = home.join("sources").join(source);
    let stamp = std::fs::read_to_string(dir.join("current")).unwrap();
    let text = std::fs::read_to_string(dir.join(stamp.trim()).join("catalog.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// dstack's gpuhunt catalogs: the version file, then its catalog.zip; on demand and spot
/// joined; a provider that publishes nothing skipped; a damaged archive fails the source
/// and keeps its last snapshot.
#[test]
fn gpuhunt_catalogs_are_read_from_their_versioned_zips() {
    let (_files, s, home, o) = fresh_update(&["gpuhunt"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("aws: no published catalog (404): skipped"),
        "{t}"
    );
    assert_eq!(s.requests("v3/nebius/20261203-1/catalog.zip"), 1);
    let snap = snapshot_rows(home.path(), "gpuhunt");
    let h100 = instance(
        &snap,
        ("nebius", "gpu-h100-sxm_1gpu-16vcpu-200gb", "eu-north1"),
    );
    assert_eq!(h100["gpu"], "h100-sxm", "{h100}");
    assert_eq!(h100["prices"]["on_demand"]["amount"], 2.95, "{h100}");
    assert_eq!(h100["prices"]["spot"]["amount"], 1.25, "{h100}");
    assert!(
        h100["source"]
            .as_str()
            .unwrap()
            .contains("nebius 20261203-1"),
        "{h100}"
    );
    // lambdalabs is gpuvalue's lambda.
    assert!(
        snap["instances"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["provider"] == "lambda")
    );
    let stamp = std::fs::read_to_string(home.path().join("sources/gpuhunt/current")).unwrap();
    // A damaged archive: the source fails naming the file, the last snapshot stays.
    s.fail_always(
        "v3/oci/20261203-1/catalog.zip",
        Fault::Body(b"PK\x03\x04garbage".to_vec()),
    );
    let o = update(home.path(), &s, &["--source", "gpuhunt"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("gpuhunt: FAILED") && t.contains("oci/20261203-1/catalog.zip"),
        "{t}"
    );
    assert!(t.contains("not a zip archive"), "{t}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("sources/gpuhunt/current")).unwrap(),
        stamp
    );
}

/// OCI's own estimator prices a shape once for every region: the rows SkyPilot lists in
/// named regions take its price (a disagreement over 5% reported, the provider's own kept),
/// and no region-less duplicate is ranked beside them.
#[test]
fn oci_s_own_price_reaches_every_region_another_feed_lists() {
    let (_files, home, s, _stamp) = first_snapshot();
    let p = |v: &serde_json::Value, m: &str| v["prices"][m]["amount"].as_f64().unwrap();
    let cat = catalog_json(home.path());
    let h100 = instance(&cat, ("oci", "BM.GPU.H100.8", "af-casablanca-1"));
    assert_eq!(p(h100, "on_demand"), 80.0);
    let src = h100["prices"]["on_demand"]["source"].as_str().unwrap_or("");
    assert!(src.contains("OCI cost estimator"), "{h100}");
    let any_rows = cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["provider"] == "oci" && i["region"] == "any")
        .count();
    assert_eq!(any_rows, 0, "region-less OCI rows beside the regional ones");
    // OCI raises its H100 part to 11 USD per GPU-hour: every region follows, said.
    let products = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/fixtures/feeds/www.oracle.com/a/ocom/docs/cloudestimator2/data/products.json",
    ))
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&products).unwrap();
    for item in v["items"].as_array_mut().unwrap() {
        if item["partNumber"] == "B98415" {
            item["currencyCodeLocalizations"][0]["prices"][0]["value"] = 11.into();
        }
    }
    s.fail_always("products.json", Fault::Body(v.to_string().into_bytes()));
    let o = update(home.path(), &s, &["--source", "oci"]);
    assert!(o.status.success(), "{}", text(&o));
    let cat = catalog_json(home.path());
    for region in ["af-casablanca-1", "af-johannesburg-1"] {
        assert_eq!(
            p(
                instance(&cat, ("oci", "BM.GPU.H100.8", region)),
                "on_demand"
            ),
            88.0
        );
    }
    let o = run(home.path(), &["catalog", "check"]);
    let t = text(&o);
    assert!(
        t.contains("disagree on its price by 10%"),
        "the disagreement is not reported: {t}"
    );
}
