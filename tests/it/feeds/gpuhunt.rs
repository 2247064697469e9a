//! dstack's gpuhunt catalogs: a version file, then its zip.

use super::*;

/// dstack's gpuhunt catalogs: the version file, then its catalog.zip; on demand and spot
/// joined; a provider that publishes nothing skipped; a damaged archive fails the source
/// and keeps its last snapshot.
#[test]
fn gpuhunt_catalogs_are_read_from_their_versioned_zips() {
    let (_files, s, home, o) = fresh_update(&["gpuhunt"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("aws: no published catalog (404): skipped"),
        "{t}"
    );
    assert_eq!(s.requests("v3/nebius/20261203-1/catalog.zip"), 1);
    let snap = snapshot_rows(home.path(), "gpuhunt");
    let h100 = instance(
        &snap,
        ("nebius", "gpu-h100-sxm_1gpu-16vcpu-200gb", "eu-north1"),
    );
    assert_eq!(h100["gpu"], "h100-sxm", "{h100}");
    assert_eq!(h100["prices"]["on_demand"]["amount"], 2.95, "{h100}");
    assert_eq!(h100["prices"]["spot"]["amount"], 1.25, "{h100}");
    assert!(
        h100["source"]
            .as_str()
            .unwrap()
            .contains("nebius 20261203-1"),
        "{h100}"
    );
    // lambdalabs is gpuvalue's lambda.
    assert!(
        snap["instances"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["provider"] == "lambda")
    );
    let stamp = std::fs::read_to_string(home.path().join("sources/gpuhunt/current")).unwrap();
    // A damaged archive: the source fails naming the file, the last snapshot stays.
    s.fail_always(
        "v3/oci/20261203-1/catalog.zip",
        Fault::Body(b"PK\x03\x04garbage".to_vec()),
    );
    let o = update(home.path(), &s, &["--source", "gpuhunt"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("gpuhunt: FAILED") && t.contains("oci/20261203-1/catalog.zip"),
        "{t}"
    );
    assert!(t.contains("not a zip archive"), "{t}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("sources/gpuhunt/current")).unwrap(),
        stamp
    );
}
