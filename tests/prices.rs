//! Commitment prices: sourced reserved and committed-use rows rank, each price with its own
//! date where it has one, and a stale commitment price is flagged on its own date.

mod common;

use common::gpuvalue;

#[test]
fn reserved_prices_rank_aws_and_gcp_rows_dated_by_their_own_snapshot() {
    let o = gpuvalue(&[
        "rank",
        "--price",
        "reserved_1y",
        "--format",
        "json",
        "--top",
        "50",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    for p in ["aws", "gcp"] {
        assert!(rows.iter().any(|r| r["provider"] == p), "no {p} row: {v}");
    }
    let a2 = rows
        .iter()
        .find(|r| r["instance_type"] == "a2-highgpu-1g")
        .expect("GCP's committed-use A100 ranks");
    assert_eq!(a2["price_as_of"], "2026-08");
    assert_eq!(a2["pricing"], "reserved_1y");
    // A commitment is cheaper per hour than on demand for the same row.
    let od = gpuvalue(&["rank", "--format", "json", "--top", "50"]);
    let od: serde_json::Value = serde_json::from_slice(&od.stdout).unwrap();
    let od_a2 = od["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["instance_type"] == "a2-highgpu-1g")
        .unwrap();
    assert!(a2["price_per_hour"].as_f64() < od_a2["price_per_hour"].as_f64());
}

#[test]
fn a_stale_commitment_price_is_flagged_on_its_own_date_and_only_in_its_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mine.json");
    std::fs::write(
        &p,
        r#"{"schema_version": 1, "instances": [{"provider": "mine", "instance_type": "box", "region": "home",
            "gpu": "h100-sxm", "gpu_count": 1, "vcpu": 16, "ram_gib": 128, "source": "my quote", "as_of": "2026-11",
            "confidence": "high", "prices": {
              "on_demand": {"amount": 3, "currency": "USD", "per": "hour"},
              "reserved_1y": {"amount": 2, "currency": "USD", "per": "hour", "as_of": "2024-01", "source": "an old quote"}}}]}"#,
    )
    .unwrap();
    let o = gpuvalue(&["catalog", "check", p.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("prices.reserved_1y.as_of") && out.contains("stale reserved_1y price"),
        "{out}"
    );
    let rank = |price: &str| {
        let o = gpuvalue(&[
            "rank",
            "--catalog-add",
            p.to_str().unwrap(),
            "--provider",
            "mine",
            "--price",
            price,
            "--format",
            "json",
        ]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["rows"][0].clone()
    };
    let reserved = rank("reserved_1y");
    assert_eq!(reserved["price_as_of"], "2024-01");
    assert!(
        reserved["warnings"]
            .to_string()
            .contains("stale reserved_1y price")
    );
    let on_demand = rank("on_demand");
    assert_eq!(on_demand["price_as_of"], "2026-11");
    assert!(
        !on_demand["warnings"].to_string().contains("reserved_1y"),
        "{on_demand}"
    );
}
