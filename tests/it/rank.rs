//! Ranking arithmetic against hand-computed values, on a small constructed catalog; and a
//! golden Markdown output that must stay stable.

use gpuvalue::market::catalog::{Catalog, PricingModel};
use gpuvalue::results::ResultsFile;
use gpuvalue::value::rank::{Filters, RankOptions, Source, rank};
use gpuvalue::value::scenario::ScenarioFile;

const CATALOG: &str = r#"{
  "schema_version": 1,
  "currencies": {
    "USD": {"per_usd": 1.0, "as_of": "2026-01-01", "source": "base"},
    "CNY": {"per_usd": 7.0, "as_of": "2026-01-01", "source": "test rate"}
  },
  "gpus": [
    {"id": "g1", "vendor": "Test", "name": "G1", "aliases": ["Test GPU One"],
     "fp32_tflops": 10, "fp64_vector_tflops": 5, "fp64_matrix_tflops": null, "fp16_tensor_tflops": 100,
     "memory_gb": 32, "bandwidth_gbps": 1000, "tdp_w": 300, "source": "test", "as_of": "2026-01"},
    {"id": "small", "vendor": "Test", "name": "Small", "aliases": [],
     "fp32_tflops": 100, "fp64_vector_tflops": 5, "fp64_matrix_tflops": null, "fp16_tensor_tflops": 100,
     "memory_gb": 8, "bandwidth_gbps": 1000, "tdp_w": 300, "source": "test", "as_of": "2026-01"}
  ],
  "instances": [
    {"provider": "p", "instance_type": "one", "region": "r1", "gpu": "g1", "gpu_count": 1, "vcpu": 8, "ram_gib": 64,
     "prices": {"on_demand": {"amount": 2.0, "currency": "USD", "per": "hour"},
                "spot": {"amount": 1.0, "currency": "USD", "per": "hour"}},
     "source": "test", "as_of": "2026-01", "confidence": "high"},
    {"provider": "q", "instance_type": "two", "region": "r2", "gpu": "g1", "gpu_count": 2, "vcpu": 16, "ram_gib": 128,
     "prices": {"on_demand": {"amount": 14.0, "currency": "CNY", "per": "hour"}},
     "source": "test", "as_of": "2026-01", "confidence": "low"},
    {"provider": "p", "instance_type": "tiny", "region": "r1", "gpu": "small", "gpu_count": 1, "vcpu": 8, "ram_gib": 64,
     "prices": {"on_demand": {"amount": 0.1, "currency": "USD", "per": "hour"}},
     "source": "test", "as_of": "2026-01", "confidence": "high"},
    {"provider": "p", "instance_type": "bad", "region": "r1", "gpu": "g1", "gpu_count": 1, "vcpu": 8, "ram_gib": 64,
     "prices": {"on_demand": {"amount": 0.0, "currency": "USD", "per": "hour"}},
     "source": "test", "as_of": "2026-01", "confidence": "high"}
  ]
}"#;

const SCENARIOS: &str = r#"{"schema_version": 1, "scenarios": [
  {"id": "flops", "description": "FP32 work", "min_gpu_memory_gb": 16,
   "job": {"name": "3.6e15 FLOP", "assumption": "test"},
   "terms": [{"figure": "matmul_f32", "work": 3.6e15, "unit": "FLOP"}]}
]}"#;

fn opts(pricing: PricingModel, currency: &str, budget: Option<f64>) -> RankOptions {
    RankOptions {
        pricing,
        currency: currency.into(),
        top: None,
        budget,
        filters: Filters::default(),
        // "q two" has a low-confidence (so reported) price: the arithmetic tests rank it.
        include_reported: true,
        use_implausible: false,
        ..RankOptions::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// The lavapipe fixture renamed to a catalog GPU with a chosen FP32 figure.
fn results_for(adapter: &str, software: bool, gflops: f64) -> ResultsFile {
    let mut v: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/results-lavapipe.json")).unwrap();
    v["adapter"]["name"] = adapter.into();
    v["adapter"]["software"] = software.into();
    for p in v["probes"].as_array_mut().unwrap() {
        if p["probe"] == "matmul_f32" {
            for k in ["median", "min", "max", "mean"] {
                p["value"][k] = gflops.into();
            }
        }
    }
    ResultsFile::parse(&v.to_string()).unwrap()
}

#[test]
fn estimates_costs_currency_spot_and_budget_by_hand() {
    let c = Catalog::parse(CATALOG, "test.json").unwrap();
    let s = ScenarioFile::parse(SCENARIOS, "s.json").unwrap();
    let sc = s.get("flops").unwrap();
    let f = c.checked();
    // Estimate: 10 TFLOPS x 0.35 = 3500 GFLOPS; 3.6e15 / 3.5e12 = 1028.571 s = 0.285714 h.
    let r = rank(
        &f,
        sc,
        &[],
        &opts(PricingModel::OnDemand, "USD", Some(10.0)),
    )
    .unwrap();
    let h1 = 3.6e15 / 3.5e12 / 3600.0;
    assert_eq!(r.rows.len(), 2, "{:?}", r.rows);
    // "two": 2 GPUs halve the time; 14 CNY at 7 CNY/USD = 2 USD/h.
    let two = &r.rows[0];
    assert_eq!((two.instance_type.as_str(), two.rank), ("two", 1));
    assert!(close(two.hours_per_job, h1 / 2.0));
    assert!(close(two.price_per_hour, 2.0));
    assert!(close(two.cost_per_job, h1));
    assert!(close(two.jobs_per_currency_unit, 1.0 / h1));
    let one = &r.rows[1];
    assert!(close(one.cost_per_job, 2.0 * h1));
    assert!(close(one.budget_hours.unwrap(), 5.0));
    assert!(close(one.budget_jobs.unwrap(), 5.0 / h1));
    assert_eq!(one.basis, Source::Estimated);
    // The 8 GB GPU is below the scenario's 16 GB; the zero price is a catalog error.
    assert!(
        r.excluded
            .iter()
            .any(|e| e.instance == "p/tiny/r1" && e.reason.contains("16 GB"))
    );
    assert!(
        r.excluded
            .iter()
            .any(|e| e.instance == "p/bad/r1" && e.reason.contains("catalog error"))
    );
    // Spot: only "one" has a spot price (1 USD/h); in CNY at 7 per USD.
    let r = rank(&f, sc, &[], &opts(PricingModel::Spot, "CNY", None)).unwrap();
    assert_eq!(r.rows.len(), 1);
    assert!(close(r.rows[0].price_per_hour, 7.0));
    // No interruption band published: the worst is assumed, and the expected time (the
    // job's h1 with the work an interruption would lose) is what is paid for.
    let risk = r.rows[0]
        .spot
        .as_ref()
        .expect("a spot row carries its risk");
    assert!(risk.assumed && close(risk.bare_hours, h1));
    let expected = gpuvalue::market::catalog::spot::expected(
        h1,
        None,
        gpuvalue::market::catalog::spot::Checkpointing::default(),
        false,
    );
    assert!(expected.expected_hours > h1);
    assert!(close(r.rows[0].hours_per_job, expected.expected_hours));
    assert!(close(r.rows[0].cost_per_job, 7.0 * expected.expected_hours));
    assert!(
        r.excluded
            .iter()
            .any(|e| e.instance == "q/two/r2" && e.reason.contains("no spot price"))
    );
}

#[test]
fn measured_figures_replace_estimates_and_set_the_efficiency() {
    let c = Catalog::parse(CATALOG, "test.json").unwrap();
    let s = ScenarioFile::parse(SCENARIOS, "s.json").unwrap();
    let sc = s.get("flops").unwrap();
    let results = vec![
        (
            "g1.json".to_string(),
            results_for("Test GPU One", false, 5000.0),
        ),
        (
            "cpu.json".to_string(),
            results_for("llvmpipe (LLVM 15.0.6, 256 bits)", true, 50.0),
        ),
    ];
    let r = rank(
        &c.checked(),
        sc,
        &results,
        &opts(PricingModel::OnDemand, "USD", None),
    )
    .unwrap();
    // 5000 GFLOPS measured on a 10 TFLOPS GPU: efficiency 0.5 derived.
    assert!(close(r.efficiencies[0].factor, 0.5));
    assert_eq!(r.efficiencies[0].origin, "derived");
    let one = r.rows.iter().find(|x| x.instance_type == "one").unwrap();
    assert_eq!(one.basis, Source::Measured);
    assert!(close(one.hours_per_job, 3.6e15 / 5e12 / 3600.0));
    // The software adapter is listed as a machine not in the catalog, with its time per job.
    let cpu = r.machines.iter().find(|m| m.software).unwrap();
    assert!(cpu.catalog_gpu.is_none());
    assert!(close(cpu.hours_per_job.unwrap(), 3.6e15 / 50e9 / 3600.0));
    assert_eq!(cpu.instances_faster, Some(2));
}

#[test]
fn golden_markdown_is_stable() {
    let c = Catalog::parse(CATALOG, "test.json").unwrap();
    let s = ScenarioFile::parse(SCENARIOS, "s.json").unwrap();
    let r = rank(
        &c.checked(),
        s.get("flops").unwrap(),
        &[],
        &opts(PricingModel::OnDemand, "USD", None),
    )
    .unwrap();
    let got = gpuvalue::report::rank::markdown(&r);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/rank_flops.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &got).unwrap();
    }
    let want = std::fs::read_to_string(path).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    // A price's age depends on today's date: compared as "N months ago".
    let aged = |s: &str| {
        let words: Vec<&str> = s.split(' ').collect();
        (0..words.len())
            .map(|i| {
                if words.get(i + 1) == Some(&"months") && words.get(i + 2) == Some(&"ago") {
                    "N"
                } else {
                    words[i]
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(aged(&got), aged(&want));
}

#[test]
fn reported_prices_rank_only_when_asked_and_marked_retired_rows_never() {
    let s = ScenarioFile::parse(SCENARIOS, "s.json").unwrap();
    let sc = s.get("flops").unwrap();
    let c = Catalog::parse(CATALOG, "test.json").unwrap();
    let f = c.checked();
    let mut o = opts(PricingModel::OnDemand, "USD", None);
    // By default only list prices rank: "q two" (low confidence, so reported) does not.
    o.include_reported = false;
    let r = rank(&f, sc, &[], &o).unwrap();
    let ranked: Vec<_> = r.rows.iter().map(|x| x.instance_type.as_str()).collect();
    assert_eq!(ranked, ["one"], "{:?}", r.excluded);
    let two = r
        .excluded
        .iter()
        .find(|e| e.instance == "q/two/r2")
        .unwrap();
    assert!(two.reason.contains("reported price"), "{}", two.reason);
    // Asked for, it ranks, marked in every output.
    o.include_reported = true;
    let r = rank(&f, sc, &[], &o).unwrap();
    let two = r.rows.iter().find(|x| x.instance_type == "two").unwrap();
    assert_eq!(two.price_tier, gpuvalue::market::catalog::Tier::Reported);
    assert!(gpuvalue::report::rank::markdown(&r).contains("(REPORTED)"));
    assert!(
        gpuvalue::report::rank::table(&r, gpuvalue::report::rank::View::SHORT).contains("REPORTED")
    );
    assert!(
        gpuvalue::report::rank::csv(&r)
            .unwrap()
            .contains(",reported")
    );
    // A retired row never ranks, whatever is included.
    let retired = CATALOG.replacen(
        r#""confidence": "high"},"#,
        r#""confidence": "high", "retired": "2026-02"},"#,
        1,
    );
    let c = Catalog::parse(&retired, "test.json").unwrap();
    let r = rank(&c.checked(), sc, &[], &o).unwrap();
    assert!(
        !r.rows.iter().any(|x| x.instance_type == "one"),
        "a retired row ranked"
    );
    let one = r
        .excluded
        .iter()
        .find(|e| e.instance == "p/one/r1")
        .unwrap();
    assert!(one.reason.contains("retired on 2026-02"), "{}", one.reason);
}

#[test]
fn many_files_from_one_node_weigh_as_much_as_one_file_from_another() {
    let c = Catalog::parse(CATALOG, "test.json").unwrap();
    let s = ScenarioFile::parse(SCENARIOS, "s.json").unwrap();
    let on = |host: &str, gflops: f64| {
        let mut r = results_for("Test GPU One", false, gflops);
        r.host.hostname = host.into();
        r
    };
    // Node a: three GPUs at 3000 GFLOPS; node b: one at 5000 (both within the plausible
    // band of the 10 TFLOPS datasheet). Per file the median would be 3000; per place it is
    // the median of 3000 and 5000.
    let results: Vec<(String, ResultsFile)> =
        [("a", 3000.0), ("a", 3000.0), ("a", 3000.0), ("b", 5000.0)]
            .iter()
            .enumerate()
            .map(|(i, (h, g))| (format!("{h}{i}.json"), on(h, *g)))
            .collect();
    let r = rank(
        &c.checked(),
        s.get("flops").unwrap(),
        &results,
        &opts(PricingModel::OnDemand, "USD", None),
    )
    .unwrap();
    let one = r.rows.iter().find(|x| x.instance_type == "one").unwrap();
    assert_eq!(one.figures[0].source, Source::Measured);
    assert!(
        close(one.figures[0].value, 4000.0),
        "{}",
        one.figures[0].value
    );
}

/// `--region` is a place. China is every provider's Chinese regions
/// (Tencent's `ap-beijing` beside Alibaba's `cn-*`), `us` is the United States and not any
/// name with "us" in it, an area takes its countries, and the notes say what could not be
/// placed.
#[test]
fn region_filters_by_country_and_area_and_says_what_it_left_out() {
    let run = |region: &str| {
        let o = crate::common::gpuvalue(&[
            "rank", "--region", region, "--format", "json", "--top", "5000",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let pairs = |v: &serde_json::Value| -> Vec<(String, String)> {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["provider"].as_str().unwrap().to_string(),
                    r["region"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let china = run("china");
    let cn = pairs(&china);
    assert!(
        cn.iter().any(|(p, r)| p == "tencent" && r == "ap-beijing"),
        "{cn:?}"
    );
    assert!(cn.iter().any(|(p, _)| p == "alibaba"), "{cn:?}");
    assert!(cn.iter().all(|(p, _)| p != "aws" && p != "gcp"), "{cn:?}");
    assert_eq!(pairs(&run("cn")), cn);
    let note = china["region_note"].as_str().unwrap();
    assert!(
        note.contains("the country CN") && note.contains("cannot place"),
        "{note}"
    );
    let us = pairs(&run("us"));
    assert!(
        us.iter()
            .any(|(p, r)| p == "azure" && r.starts_with("eastus")),
        "{us:?}"
    );
    assert!(!us.iter().any(|(_, r)| r.contains("RU")), "{us:?}");
    let eu = pairs(&run("europe"));
    assert!(
        eu.iter().any(|(p, r)| p == "gcp" && r == "europe-west4"),
        "{eu:?}"
    );
    assert!(!eu.iter().any(|(_, r)| r.starts_with("us-")), "{eu:?}");
    // A part of a name, as before.
    let west = pairs(&run("west"));
    assert!(!west.is_empty() && west.iter().all(|(_, r)| r.to_lowercase().contains("west")));
    // A country with no row: refused, naming it.
    let o = crate::common::gpuvalue(&["rank", "--region", "kz"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no catalog instance is in the country KZ")
    );
}

/// `--gpu a10` is the A10 alone (a catalog id); `--gpu a1` is part of names, takes each GPU
/// that holds it, and says which under the table.
#[test]
fn an_exact_gpu_wins_over_a_part_of_a_name() {
    let rows = |gpu: &str| -> (Vec<String>, String) {
        let o =
            crate::common::gpuvalue(&["rank", "--gpu", gpu, "--format", "json", "--top", "5000"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut g: Vec<String> = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["gpu"].as_str().unwrap().to_string())
            .collect();
        g.sort();
        g.dedup();
        (g, v["gpu_note"].as_str().unwrap_or("").to_string())
    };
    let (a10, note) = rows("a10");
    assert_eq!(a10, ["a10"], "{a10:?}");
    assert!(note.is_empty(), "{note}");
    // Its name, any case, is the same GPU.
    assert_eq!(rows("A10G").0, ["a10g"]);
    let (many, note) = rows("a10");
    assert_eq!(many.len(), 1);
    let (part, note2) = rows("a1");
    assert!(
        part.len() > 3 && part.contains(&"a100-80gb-sxm".to_string()),
        "{part:?}"
    );
    assert!(
        note2.contains("--gpu a1 is part of a name") && note2.contains("A10G"),
        "{note2}"
    );
    let _ = note;
}
