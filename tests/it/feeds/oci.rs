//! OCI's own price estimator: one price for a shape in every region another feed lists.

use super::*;

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
