//! RunPod's GPU types: Secure and Community Cloud as separate products.

use super::*;

/// RunPod's gpuTypes: Secure and Community Cloud are separate rows, named; per-GPU prices
/// times the count; SkyPilot's copies of RunPod give way.
#[test]
fn runpod_secure_and_community_are_separate_products() {
    let (_files, _s, home, o) = fresh_update(&["skypilot", "runpod"]);
    assert!(o.status.success(), "{}", text(&o));
    let cat = catalog_json(home.path());
    let secure = instance(&cat, ("runpod", "2x A100 PCIe secure", "any"));
    assert_eq!(secure["gpu"], "a100-80gb-pcie", "{secure}");
    assert_eq!(secure["prices"]["on_demand"]["amount"], 2.78, "{secure}");
    let community = instance(&cat, ("runpod", "1x A100 PCIe community", "any"));
    assert_eq!(
        community["prices"]["on_demand"]["amount"], 1.59,
        "{community}"
    );
    assert!(
        community["notes"]
            .as_str()
            .unwrap()
            .starts_with("Community Cloud"),
        "{community}"
    );
    // 1, 2, 4, 8 and the type's maximum (9 H100 NVL), never more.
    let snap = snapshot_rows(home.path(), "runpod");
    let nvl: Vec<u64> = snap["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["provider"] == "runpod")
        .filter(|i| i["instance_type"].as_str().unwrap().contains("H100 NVL"))
        .map(|i| i["gpu_count"].as_u64().unwrap())
        .collect();
    assert_eq!(nvl, [1, 2, 4, 8, 9], "{nvl:?}");
    for r in cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["provider"] == "runpod")
    {
        assert!(
            r["source"].as_str().unwrap().starts_with("RunPod GraphQL"),
            "{r}"
        );
    }
}
