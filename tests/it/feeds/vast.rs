//! Vast's offer search: a row per GPU model and count at the median of its hosts.

use super::*;

/// Vast's offer search: one row per GPU model and count at the median of its hosts, the
/// spread and host count in the notes; SkyPilot's copies of Vast offers give way to it.
#[test]
fn vast_offers_rank_at_the_median_of_their_hosts_and_replace_copies() {
    let (_files, s, home, o) = fresh_update(&["skypilot", "vast"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        s.requests("bundles/?limit=5000&type=on-demand&verified=true"),
        1,
        "{:?}",
        s.log.lock().unwrap()
    );
    let snap = snapshot_rows(home.path(), "vast");
    let r4090 = instance(&snap, ("vast", "1x RTX 4090", "any"));
    // Four hosts: 0.2467 (the real CLI offer), 0.40 three times: the median is 0.40.
    assert_eq!(r4090["gpu"], "rtx-4090", "{r4090}");
    assert_eq!(r4090["prices"]["on_demand"]["amount"], 0.4, "{r4090}");
    let notes = r4090["notes"].as_str().unwrap();
    assert!(
        notes.contains("median of 4 hosts") && notes.contains("min 0.247"),
        "{notes}"
    );
    // The 94 GB card Vast calls H100 NVL is not an H100 SXM.
    let nvl = instance(&snap, ("vast", "1x H100 NVL", "any"));
    assert_ne!(nvl["gpu"], "h100-sxm", "{nvl}");
    // Every vast row in use is the offer search's: SkyPilot's copies gave way.
    let cat = catalog_json(home.path());
    let vast: Vec<&serde_json::Value> = cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["provider"] == "vast")
        .collect();
    assert!(!vast.is_empty());
    for v in vast {
        assert!(
            v["source"]
                .as_str()
                .unwrap()
                .starts_with("Vast.ai offer search"),
            "{v}"
        );
    }
}
