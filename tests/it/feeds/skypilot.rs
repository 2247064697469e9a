//! The SkyPilot catalog's CSVs (v8, one per cloud): a malformed file or a renamed column
//! fails the source naming the file, every accelerator name is in the name mapping, each
//! file ranks as `--catalog-add`, and a spot market's price is never taken as on demand.

use super::*;

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
        // 5090s and B200s, which have had one since the 2026 GPUs were added).
        assert!(ranked > 0, "{cloud}: no row ranked");
    }
}
