//! `catalog update` from a mirror of every source: what it writes, what `--list` says of
//! each source, and the README's mirror server.

use super::*;

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
