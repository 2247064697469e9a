//! The gates an update passes before its snapshot is used: zero and absurd prices never
//! rank, and a source that shrank is refused unless forced.

use super::*;

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
