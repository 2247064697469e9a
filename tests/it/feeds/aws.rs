//! The AWS offer files: which rows and terms are kept, and the faults that name the file.

use super::*;

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
    // p6-b200 carries B200s (they have a spec entry); the family tells.
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
