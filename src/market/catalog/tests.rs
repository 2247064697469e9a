//! The catalog's unit tests (moved out of mod.rs to keep it readable).

use super::*;

#[test]
fn embedded_catalog_is_clean_and_sourced() {
    let c = Catalog::embedded();
    let findings = c.check();
    let errors: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    for g in &c.gpus {
        assert!(!g.source.is_empty() && !g.as_of.is_empty(), "{}", g.id);
    }
    for i in &c.instances {
        assert!(!i.source.is_empty() && !i.as_of.is_empty(), "{}", i.key());
        assert!(c.gpu(&i.gpu).is_some(), "{}", i.key());
    }
    for (code, cur) in &c.currencies {
        assert!(!cur.source.is_empty() && !cur.as_of.is_empty(), "{code}");
    }
}

/// A user can follow every source: none names a file outside the repository (the
/// developers' notes in shared/ are not shipped).
#[test]
fn no_catalog_source_names_a_file_outside_the_repository() {
    let text = include_str!("../../data/catalog.json");
    for bad in ["shared/", "catalog-facts"] {
        let at: Vec<&str> = text.lines().filter(|l| l.contains(bad)).collect();
        assert!(at.is_empty(), "{bad:?} in {at:#?}");
    }
}

#[test]
fn reference_article_instances_carry_their_true_gpus() {
    let c = Catalog::embedded();
    let gpu_of = |provider: &str, ty: &str| {
        c.instances
            .iter()
            .find(|i| i.provider == provider && i.instance_type == ty)
            .map(|i| i.gpu.clone())
            .unwrap_or_else(|| panic!("{provider} {ty} missing"))
    };
    assert_eq!(gpu_of("alibaba", "ecs.gn6i-c4g1.xlarge"), "t4");
    assert_eq!(gpu_of("alibaba", "ecs.gn7e-c16g1.4xlarge"), "a100-80gb-sxm");
    assert_eq!(gpu_of("tencent", "GN7.2XLARGE32"), "t4");
    assert_eq!(gpu_of("tencent", "GT4.4XLARGE96"), "a100-40gb-sxm");
    assert_eq!(gpu_of("huawei", "pi2.2xlarge.4"), "t4");
    assert_eq!(gpu_of("aws", "p4d.24xlarge"), "a100-40gb-sxm");
    // Configurations whose names hide their GPU, with their true GPUs.
    assert_eq!(gpu_of("aws", "p3.16xlarge"), "v100-sxm2-16gb");
    assert_eq!(gpu_of("lambda", "gpu_8x_v100"), "v100-sxm2-16gb");
    assert_eq!(gpu_of("lambda", "gpu_4x_a100"), "a100-40gb-pcie");
    assert_eq!(gpu_of("lambda", "gpu_1x_a100"), "a100-40gb-pcie");
    assert_eq!(gpu_of("gcp", "n1-standard-8 + 1x T4"), "t4");
    let mi250x = c.gpu("mi250x").unwrap();
    assert_eq!(mi250x.fp64_vector_tflops, Some(47.9));
    assert_eq!(c.gpu("a100-40gb-sxm").unwrap().fp32_tflops, Some(19.5));
}

#[test]
fn adapter_names_match_exactly_and_near_misses_do_not() {
    let c = Catalog::embedded();
    let id = |name: &str| c.match_adapter(name).map(|g| g.id.clone());
    let cases = [
        ("NVIDIA A100-SXM4-40GB", Some("a100-40gb-sxm")),
        ("NVIDIA A100-SXM4-80GB", Some("a100-80gb-sxm")),
        ("NVIDIA A100 80GB PCIe", Some("a100-80gb-pcie")),
        ("NVIDIA H100 80GB HBM3", Some("h100-sxm")),
        ("NVIDIA H100 PCIe", Some("h100-pcie")),
        ("nvidia  h100   pcie", Some("h100-pcie")),
        ("NVIDIA H200", Some("h200-sxm")),
        ("Tesla T4", Some("t4")),
        ("AMD Instinct MI250X", Some("mi250x")),
        ("AMD Instinct MI300X", Some("mi300x")),
        ("AMD Instinct MI210", Some("mi210")),
        ("gfx942:sramecc+:xnack-", None),
        ("gfx908:sramecc+:xnack-", Some("mi100")),
        ("gfx950", Some("mi355x")),
        ("NVIDIA GeForce RTX 4090", Some("rtx-4090")),
        ("Tesla V100-SXM2-16GB", Some("v100-sxm2-16gb")),
        ("NVIDIA A100-PCIE-40GB", Some("a100-40gb-pcie")),
        // Near misses: another memory size, form factor or product must not match.
        ("NVIDIA A100", None),
        ("NVIDIA H100 NVL", Some("h100-nvl")),
        ("NVIDIA H200 NVL", Some("h200-nvl")),
        ("NVIDIA H20-3e", None),
        ("NVIDIA GeForce RTX 4090 D", None),
        ("AMD Instinct MI250", None),
        ("llvmpipe (LLVM 15.0.6, 256 bits)", None),
        ("Apple M2", None),
    ];
    for (name, want) in cases {
        assert_eq!(id(name).as_deref(), want, "{name}");
    }
}

fn one_instance(json_instance: &str) -> Catalog {
    let text = format!(
        r#"{{"schema_version": 1,
            "currencies": {{"USD": {{"per_usd": 1, "as_of": "2026-01-01", "source": "t"}}}},
            "gpus": [{{"id": "h100-sxm", "vendor": "NVIDIA", "name": "H100", "fp32_tflops": 67,
                      "fp64_vector_tflops": 34, "fp64_matrix_tflops": null, "fp16_tensor_tflops": null,
                      "memory_gb": 80, "bandwidth_gbps": 3350, "tdp_w": 700, "source": "s", "as_of": "2026"}}],
            "instances": [{json_instance}]}}"#
    );
    Catalog::parse(&text, "user.json").unwrap()
}

fn messages(c: &Catalog) -> Vec<String> {
    c.check().iter().map(|f| f.to_string()).collect()
}

#[test]
fn an_interruption_risk_is_checked_where_it_stands() {
    let with = |price: &str, risk: &str| {
        messages(&one_instance(&format!(
            r#"{{"provider": "p", "instance_type": "t", "region": "r", "gpu": "h100-sxm", "gpu_count": 1,
                "vcpu": 8, "ram_gib": 64, "source": "s", "as_of": "2026-11", "confidence": "high",
                "prices": {{"on_demand": {{"amount": 3, "currency": "USD", "per": "hour"}},
                  "{price}": {{"amount": 1, "currency": "USD", "per": "hour", "interruption": {risk}}}}}}}"#
        )))
    };
    let good = r#"{"band": ">20%", "as_of": "2026-11", "source": "advisor"}"#;
    assert!(with("spot", good).is_empty(), "{:?}", with("spot", good));
    let hit = |m: &[String], path: &str, words: &str| {
        assert!(
            m.iter().any(|x| x.contains(path) && x.contains(words)),
            "{path} {words:?} not in {m:#?}"
        )
    };
    let m = with("reserved_1y", good);
    hit(&m, "prices.reserved_1y.interruption", "only spot capacity");
    let m = with("spot", r#"{"as_of": "2026-11", "source": "advisor"}"#);
    hit(&m, "prices.spot.interruption", "says nothing");
    let m = with(
        "spot",
        r#"{"band": "<5%", "as_of": "2026-11", "source": " "}"#,
    );
    hit(&m, "interruption.source", "empty source");
    let m = with(
        "spot",
        r#"{"max_run_hours": -24, "as_of": "2026-11", "source": "docs"}"#,
    );
    hit(&m, "interruption.max_run_hours", "positive number of hours");
    let m = with(
        "spot",
        r#"{"band": "<5%", "as_of": "2024-01", "source": "advisor"}"#,
    );
    hit(
        &m,
        "warning: user.json: instances[0].prices.spot.interruption.as_of",
        "stale interruption band",
    );
    let m = with(
        "spot",
        r#"{"band": "<5%", "as_of": "last week", "source": "advisor"}"#,
    );
    hit(
        &m,
        "error: user.json: instances[0].prices.spot.interruption.as_of",
        "",
    );
}

#[test]
fn each_known_fault_is_reported_with_file_path_and_field() {
    let base = |over: &str| {
        format!(
            r#"{{"provider": "azure", "instance_type": "Standard_ND96isr_H100_v5", "region": "eastus",
                "gpu": "h100-sxm", "gpu_count": 8, "vcpu": 96, "ram_gib": 1900,
                "source": "skypilot", "as_of": "2026-11", "confidence": "high", {over}}}"#
        )
    };
    let price = |od: f64, spot: f64| {
        format!(
            r#""prices": {{"on_demand": {{"amount": {od}, "currency": "USD", "per": "hour"}}, "spot": {{"amount": {spot}, "currency": "USD", "per": "hour"}}}}"#
        )
    };
    let m = messages(&one_instance(&base(&price(98.32, 98.32))));
    assert!(
        m.iter().any(|x| x.contains("user.json")
            && x.contains("instances[0].prices.spot.amount")
            && x.contains("no spot data")),
        "{m:?}"
    );
    let m = messages(&one_instance(&base(&price(1.8462, 1.964))));
    assert!(m.iter().any(|x| x.contains("above on-demand")), "{m:?}");
    let m = messages(&one_instance(&base(&price(0.0, 0.0))));
    assert!(m.iter().any(|x| x.contains("must be positive")), "{m:?}");
    let m = messages(&one_instance(&base(&price(700.0, 1.0))));
    assert!(m.iter().any(|x| x.contains("placeholder")), "{m:?}");
    let c = one_instance(&base(
        r#""prices": {"on_demand": {"amount": 5, "currency": "GBP", "per": "hour"}}"#,
    ));
    assert!(
        messages(&c)
            .iter()
            .any(|x| x.contains("prices.on_demand.currency") && x.contains("GBP"))
    );
    let c = one_instance(&base(r#""gpu_memory_gb": 0.08"#));
    assert!(
        messages(&c).iter().any(|x| x.contains("wrong unit")),
        "{:?}",
        messages(&c)
    );
    let c = one_instance(
        &base("\"notes\": \"x\"").replace("\"gpu\": \"h100-sxm\"", "\"gpu\": \"h100\""),
    );
    assert!(
        messages(&c)
            .iter()
            .any(|x| x.contains("instances[0].gpu") && x.contains("unknown GPU id"))
    );
    let c = one_instance(
        &base("\"notes\": \"x\"").replace("\"as_of\": \"2026-11\"", "\"as_of\": \"\""),
    );
    assert!(
        messages(&c)
            .iter()
            .any(|x| x.contains("undated") || x.contains("no as-of"))
    );
    // Lambda's name says 8 GPUs; a row with 12 is caught.
    let c = one_instance(
        &base("\"notes\": \"x\"")
            .replace("Standard_ND96isr_H100_v5", "gpu_8x_h100_sxm5")
            .replace("\"gpu_count\": 8", "\"gpu_count\": 12"),
    );
    assert!(
        messages(&c).iter().any(|x| x.contains("gpu_count")),
        "{:?}",
        messages(&c)
    );
}

#[test]
fn duplicates_and_outliers() {
    let row = |region: &str, spot: f64| {
        format!(
            r#"{{"provider": "aws", "instance_type": "p4d.24xlarge", "region": "{region}", "gpu": "h100-sxm",
                "gpu_count": 8, "vcpu": 96, "ram_gib": 1152, "source": "s", "as_of": "2026-11", "confidence": "high",
                "prices": {{"on_demand": {{"amount": 21.96, "currency": "USD", "per": "hour"}},
                           "spot": {{"amount": {spot}, "currency": "USD", "per": "hour"}}}}}}"#
        )
    };
    let rows = [
        row("a", 7.88),
        row("b", 8.19),
        row("c", 8.0),
        row("d", 2.4655),
        row("a", 7.9),
    ]
    .join(",");
    let c = one_instance(&rows);
    let m = messages(&c);
    assert!(
        m.iter()
            .any(|x| x.contains("instances[3].prices.spot.amount") && x.contains("outlier")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|x| x.contains("instances[4]") && x.contains("duplicate of instances[0]")),
        "{m:?}"
    );
    // Row 4 has an error finding, so it is never ranked.
    assert!(
        c.check()
            .iter()
            .any(|f| f.severity == Severity::Error && f.instance == Some(4))
    );
}

#[test]
fn malformed_files_name_line_path_and_field() {
    let e = Catalog::parse(
        "{\"schema_version\": 1, \"gpus\": [{\"id\": 5}]}",
        "bad.json",
    )
    .unwrap_err();
    let s = format!("{e:#}");
    assert!(
        s.contains("bad.json") && s.contains("gpus[0].id") && s.contains("line 1"),
        "{s}"
    );
    let e = Catalog::parse("{\"schema_version\": 1, \"colour\": 1}", "bad.json").unwrap_err();
    assert!(format!("{e:#}").contains("colour"), "{e:#}");
    let e = Catalog::parse("{\"schema_version\": 1,,}", "bad.json").unwrap_err();
    assert!(format!("{e:#}").contains("line 1"), "{e:#}");
    let e = Catalog::parse("{\"schema_version\": 9}", "new.json").unwrap_err();
    assert!(format!("{e:#}").contains("schema_version 9"), "{e:#}");
}

#[test]
fn currency_conversion_uses_the_dated_rates() {
    let c = Catalog::embedded();
    let cny = c.convert(1.0, "USD", "CNY").unwrap();
    assert!((cny - 7.0197).abs() < 1e-9);
    let back = c.convert(cny, "CNY", "USD").unwrap();
    assert!((back - 1.0).abs() < 1e-12);
    assert!(c.convert(1.0, "USD", "XYZ").is_err());
}
