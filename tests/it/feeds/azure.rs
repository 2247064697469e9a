//! Azure's retail prices API: on demand, spot and reservations per hour, and its paging.

use super::*;

const AZURE: &str = "prices.azure.com/api/retail/prices";

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
