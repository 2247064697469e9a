//! Commitment prices: sourced reserved and committed-use rows rank, each price with its own
//! date where it has one, and a stale commitment price is flagged on its own date.

use crate::common::gpuvalue;

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
    let od = gpuvalue(&["rank", "--format", "json", "--top", "5000"]);
    let od: serde_json::Value = serde_json::from_slice(&od.stdout).unwrap();
    let od_a2 = od["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["instance_type"] == "a2-highgpu-1g" && r["region"] == a2["region"])
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
    // A finding wrapped to 100 columns continues on lines indented two spaces.
    let out = String::from_utf8_lossy(&o.stdout).replace("\n  ", " ");
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

/// Three identical boxes on spot at 1 USD/h but for their risk: AWS's worst band, its best,
/// and a preemptible that stops after 24 hours; ranked for a job of about a week.
fn spot_boxes(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("spot.json");
    let spot = |risk: &str| {
        format!(
            r#"{{"provider": "mine", "instance_type": "box-{risk}", "region": "home", "gpu": "t4", "gpu_count": 1,
              "vcpu": 16, "ram_gib": 64, "source": "my quote", "as_of": "2026-11", "confidence": "high",
              "prices": {{"on_demand": {{"amount": 3, "currency": "USD", "per": "hour"}},
                "reserved_1y": {{"amount": 2, "currency": "USD", "per": "hour"}},
                "spot": {{"amount": 1, "currency": "USD", "per": "hour", "interruption": {}}}}}}}"#,
            match risk {
                "low" => r#"{"band": "<5%", "as_of": "2026-11", "source": "my advisor"}"#,
                "high" => r#"{"band": ">20%", "as_of": "2026-11", "source": "my advisor"}"#,
                _ =>
                    r#"{"max_run_hours": 24, "as_of": "2026-11", "source": "preemptible VMs stop after 24 hours"}"#,
            }
        )
    };
    std::fs::write(
        &p,
        format!(
            r#"{{"schema_version": 1, "instances": [{}, {}, {}]}}"#,
            spot("low"),
            spot("high"),
            spot("pre")
        ),
    )
    .unwrap();
    p
}

fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_long_job_on_a_high_interruption_band_costs_more_than_its_bare_spot_price() {
    let dir = tempfile::tempdir().unwrap();
    let p = spot_boxes(dir.path());
    // The boxes ranked by spot price, with more options.
    let spot = |extra: &[&str]| {
        let mut args = vec![
            "rank",
            "--catalog-add",
            p.to_str().unwrap(),
            "--provider",
            "mine",
            "--price",
            "spot",
        ];
        args.extend_from_slice(extra);
        gpuvalue(&args)
    };
    let rank = |extra: &[&str]| {
        let v = json_of(&spot(&[&["--format", "json"], extra].concat()));
        let row = |t: &str| {
            v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["instance_type"] == t)
                .unwrap_or_else(|| panic!("no {t} in {v}"))
                .clone()
        };
        (row("box-low"), row("box-high"), row("box-pre"))
    };
    // ResNet-50 training on one T4: days of work, far longer than a 24-hour run.
    let (low, high, pre) = rank(&[]);
    let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap();
    let bare = f(&high["spot"], "bare_hours");
    assert!(bare > 48.0, "{high}");
    // Every box has the same bare time; the cost is the price times the expected time.
    for r in [&low, &high, &pre] {
        assert_eq!(f(&r["spot"], "bare_hours"), bare);
        assert!(
            (f(r, "cost_per_job") - f(r, "hours_per_job")).abs() < 1e-9,
            "{r}"
        );
    }
    assert!(f(&high, "cost_per_job") > bare, "{high}");
    assert!(f(&high, "cost_per_job") > f(&low, "cost_per_job"));
    assert!(f(&low, "cost_per_job") > bare);
    assert!(f(&high["spot"], "expected_interruptions") > f(&low["spot"], "expected_interruptions"));
    assert_eq!(high["spot"]["band"], ">20%");
    assert_eq!(high["spot"]["assumed"], false);
    // The preemptible has no band: the worst is assumed, and it is stopped every 24 hours.
    assert_eq!(pre["spot"]["assumed"], true);
    let stops = pre["spot"]["forced_stops"].as_u64().unwrap();
    assert!(stops as f64 >= (bare / 24.0).floor(), "{pre}");
    assert!(f(&pre, "cost_per_job") > f(&high, "cost_per_job"), "{pre}");
    // Checkpointing less often loses more work per interruption.
    let (_, rare, _) = rank(&["--checkpoint-every", "6h"]);
    assert!(f(&rare, "cost_per_job") > f(&high, "cost_per_job"));
    // The table says the band, the assumption and the stops.
    let o = spot(&["--details", "--wide"]);
    let out = String::from_utf8_lossy(&o.stdout);
    for w in [
        ">20%/month",
        "assumed",
        "forced stops",
        "checkpoint every 30.0 min",
    ] {
        assert!(out.contains(w), "{w:?} not in\n{out}");
    }
    // A bad duration is refused, saying what is expected.
    let o = gpuvalue(&["rank", "--price", "spot", "--checkpoint-every", "soon"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("expected a duration such as 30m"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn side_by_side_shows_each_way_to_pay_and_the_break_even_utilisation() {
    let dir = tempfile::tempdir().unwrap();
    let p = spot_boxes(dir.path());
    let args = |fmt: &str| {
        gpuvalue(&[
            "rank",
            "--catalog-add",
            p.to_str().unwrap(),
            "--provider",
            "mine",
            "--side-by-side",
            "--format",
            fmt,
        ])
    };
    let v = json_of(&args("json"));
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{v}");
    for r in rows {
        let c = &r["costs"];
        // A commitment at 2 of 3 USD/h beats on demand above two thirds of the hours.
        let be = c["reserved_1y"]["break_even"].as_f64().unwrap();
        assert!((be - 2.0 / 3.0).abs() < 1e-9, "{r}");
        let cost = |m: &str| c[m]["cost_per_job"].as_f64().unwrap();
        assert!(cost("on_demand") > cost("reserved_1y") && cost("reserved_1y") > cost("spot"));
        assert_eq!(r["cheapest"], "spot");
        assert!(c.get("reserved_3y").is_none());
    }
    // Cheapest way first: the low band before the high one before the preemptible.
    let order: Vec<&str> = rows
        .iter()
        .map(|r| r["instance_type"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["box-low", "box-high", "box-pre"]);
    let t = String::from_utf8_lossy(&args("table").stdout).to_string();
    for w in ["on demand", "1-year", "@67%", "(<5%)", "(>20%?)"] {
        assert!(t.contains(w), "{w:?} not in\n{t}");
    }
    let csv = String::from_utf8_lossy(&args("csv").stdout).to_string();
    assert!(csv.starts_with("provider,instance_type,region"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 3 * 3, "{csv}");
    // The boxes' prices are fresh: no warning mark.
    assert!(!t.contains("catalog warning"), "{t}");
    let md = String::from_utf8_lossy(&args("markdown").stdout).to_string();
    assert!(md.contains("| 1 | mine box-low (home)"), "{md}");
    // The embedded catalog: every reserved row has its break-even, below 100%.
    let o = gpuvalue(&[
        "rank",
        "--side-by-side",
        "--format",
        "json",
        "--top",
        "5000",
    ]);
    let v = json_of(&o);
    let mut seen = 0;
    for r in v["rows"].as_array().unwrap() {
        for m in ["reserved_1y", "reserved_3y"] {
            if let Some(b) = r["costs"][m]["break_even"].as_f64() {
                assert!(b > 0.2 && b < 1.0, "{r}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 10, "{v}");
    // The embedded Azure spot prices of 2024-12 are stale: marked, and said under the table.
    let t = String::from_utf8_lossy(&gpuvalue(&["rank", "--side-by-side"]).stdout).to_string();
    assert!(
        t.contains("* ") && t.contains("carry a catalog warning"),
        "{t}"
    );
}

/// The GPU families the feeds rent in 2026 have spec entries, so a fresh machine
/// ranks them from the built-in snapshot and the hand-kept rows: Blackwell, the NVL and
/// Grace Hopper parts, the workstation cards, and AMD Instinct at the clouds that rent it.
#[test]
fn the_gpus_the_2026_market_rents_rank_on_a_fresh_machine() {
    let o = gpuvalue(&["rank", "--format", "json", "--top", "100000"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let providers = |gpu: &str| -> std::collections::BTreeSet<String> {
        rows.iter()
            .filter(|r| r["gpu"] == gpu)
            .map(|r| r["provider"].as_str().unwrap().to_string())
            .collect()
    };
    for gpu in [
        "b200",
        "b300",
        "gh200",
        "h100-nvl",
        "rtx-pro-6000-server",
        "rtx-5090",
        "rtx-a6000",
        "a40",
        "l40",
        "rtx-6000-ada",
        "rtx-3090",
        "a800-80gb-sxm",
    ] {
        assert!(!providers(gpu).is_empty(), "{gpu}: no row ranks");
    }
    // MI300X at the clouds that rent it, not only the two 6.00 USD/GPU-hour rows of before.
    let mi300x = providers("mi300x");
    for p in [
        "digitalocean",
        "runpod",
        "crusoe",
        "hotaisle",
        "vultr",
        "oci",
    ] {
        assert!(mi300x.contains(p), "no {p} MI300X in {mi300x:?}");
    }
    let cheapest = rows
        .iter()
        .filter(|r| r["gpu"] == "mi300x")
        .map(|r| r["price_per_hour"].as_f64().unwrap() / r["gpu_count"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(cheapest < 3.0, "MI300X from {cheapest} USD per GPU-hour");
}

/// "spot or 1-year for a job that runs 60% of the time?" answered by
/// `--side-by-side --utilisation 60`: a commitment is paid for every hour of its term, so
/// its cost per job is divided by the share of hours used; on demand and spot pay only the
/// hours used; the cheapest way follows. Without --side-by-side the option is refused.
#[test]
fn utilisation_costs_the_commitments_for_the_hours_they_are_used() {
    let view = |u: Option<&str>| {
        let mut a = vec![
            "rank",
            "--side-by-side",
            "--provider",
            "gcp",
            "--gpu",
            "a100",
            "--format",
            "json",
            "--top",
            "100",
        ];
        if let Some(u) = u {
            a.extend(["--utilisation", u]);
        }
        let o = gpuvalue(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let row = |v: &serde_json::Value| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_type"] == "a2-highgpu-1g")
            .expect("GCP's committed-use A100 row")
            .clone()
    };
    let full = row(&view(None));
    let part = row(&view(Some("30")));
    let cost = |r: &serde_json::Value, m: &str| r["costs"][m]["cost_per_job"].as_f64().unwrap();
    for m in ["on_demand", "spot"] {
        assert_eq!(cost(&full, m), cost(&part, m), "{m}");
    }
    for m in ["reserved_1y", "reserved_3y"] {
        assert!(
            (cost(&part, m) - cost(&full, m) / 0.3).abs() < 1e-9 * cost(&part, m),
            "{m}"
        );
    }
    // At full use the 3-year commitment is the cheapest way here; at 30% it is not.
    assert_eq!(full["cheapest"], "reserved_3y");
    assert_ne!(part["cheapest"], "reserved_3y");
    for bad in ["0", "101", "x"] {
        let o = gpuvalue(&["rank", "--side-by-side", "--utilisation", bad]);
        assert_eq!(o.status.code(), Some(2), "--utilisation {bad}");
    }
    let o = gpuvalue(&["rank", "--utilisation", "60"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--utilisation applies to --side-by-side"));
}

/// A spot price months old does not lead a spot ranking (spot prices move
/// by the hour): left out with the reason unless `--include-reported`, which ranks it
/// marked; and a steady serving rate's side-by-side says what spot's restarts cost the
/// endpoint.
#[test]
fn a_stale_spot_price_does_not_lead_and_spot_serving_says_its_downtime() {
    let spot = |extra: &[&str]| {
        let mut a = vec![
            "rank",
            "--price",
            "spot",
            "--provider",
            "azure",
            "--format",
            "json",
            "--details",
        ];
        a.extend(extra);
        let o = gpuvalue(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let v = spot(&[]);
    let t4 = "azure/Standard_NC4as_T4_v3/eastus";
    let why = v["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["instance"] == t4)
        .expect("the 2024-12 spot price is left out")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(why.starts_with("stale spot price: as of 2024-12"), "{why}");
    assert!(v["rows"].as_array().unwrap().iter().all(|r| {
        gpuvalue::files::months_ago(r["price_as_of"].as_str().unwrap()).unwrap_or(0)
            <= gpuvalue::value::rank::STALE_SPOT_MONTHS
    }));
    let with = spot(&["--include-reported"]);
    assert!(
        with["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["instance_type"] == "Standard_NC4as_T4_v3")
    );
    let o = gpuvalue(&[
        "rank",
        "--side-by-side",
        "--job",
        "llm-serve",
        "--model",
        "8b",
        "--request-rate",
        "5",
    ]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout).replace("\n  ", " ");
    assert!(
        text.contains("Spot for a steady rate: each interruption takes an instance out"),
        "{text}"
    );
}
