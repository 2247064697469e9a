//! Snapshots: an update killed at any moment leaves one that loads, a damaged one is left
//! out with a warning, and the embedded snapshots (SkyPilot, the ECB's rates) are the
//! fixtures rebuilt.

use super::*;

#[test]
fn an_update_killed_at_any_moment_leaves_a_loadable_snapshot() {
    let (_files, home, s, _stamp) = first_snapshot();
    for i in 0..12u64 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
            .args(["catalog", "update", "--force", "--mirror", &s.base])
            .env("GPUVALUE_HOME", home.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5 + i * 9));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let o = run(home.path(), &["catalog", "--format", "json"]);
        assert!(
            o.status.success(),
            "after a kill at {} ms: {}",
            5 + i * 9,
            text(&o)
        );
    }
}

/// A damaged snapshot (its `current` names a folder that is gone) stops no command: its
/// prices are left out with a warning naming the source, the others still rank.
#[test]
fn a_damaged_snapshot_is_left_out_with_a_warning() {
    let (_files, home, _s, _stamp) = first_snapshot();
    std::fs::write(
        home.path().join("sources/skypilot/current"),
        "20990101T000000Z\n",
    )
    .unwrap();
    let o = run(home.path(), &["rank", "--top", "2"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("the skypilot snapshot does not load") && t.contains("--source skypilot"),
        "{t}"
    );
    assert!(
        t.contains("Prices from: snapshots aws") && !t.contains(", skypilot 20"),
        "{t}"
    );
    // The manifest records a missing region's file as missing.
    let aws = std::fs::read_to_string(home.path().join("sources/aws/current")).unwrap();
    let m = std::fs::read_to_string(
        home.path()
            .join("sources/aws")
            .join(aws.trim())
            .join("manifest.json"),
    )
    .unwrap();
    assert!(
        m.contains("\"missing (404)\"") && m.contains("us-west-2/index.csv"),
        "{m}"
    );
}

/// The manifest fields that depend on the run, not the files: the test server's date,
/// ETag and address, and the version of the binary.
fn manifest_of_the_files(m: &mut serde_json::Value) {
    let o = m.as_object_mut().unwrap();
    o.remove("mirror");
    o.remove("gpuvalue_version");
    for f in o["files"].as_array_mut().unwrap() {
        let f = f.as_object_mut().unwrap();
        f.remove("server_date");
        f.remove("etag");
    }
}

/// The day the public copies in tests/fixtures/feeds were read (their README), as
/// SOURCE_DATE_EPOCH: 2026-12-03T00:00:00Z (SkyPilot's files), 2026-12-06T00:00:00Z (the
/// ECB's rates).
const FIXTURES_READ: &[(&str, &str, &str)] = &[
    ("skypilot", "1796256000", "20261203T000000Z"),
    ("ecb", "1796515200", "20261206T000000Z"),
];

#[test]
fn embedded_snapshot_is_the_fixtures_rebuilt() {
    let files = fixtures_copy();
    let home = tempfile::tempdir().unwrap();
    let s = Server::start(files.path());
    for (source, epoch, stamp) in FIXTURES_READ {
        let o = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
            .args(["catalog", "update", "--source", source, "--mirror", &s.base])
            .env("GPUVALUE_HOME", home.path())
            .env("SOURCE_DATE_EPOCH", epoch)
            .env("XDG_RUNTIME_DIR", std::env::temp_dir())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let snap = home.path().join(format!("sources/{source}/{stamp}"));
        let rows = std::fs::read_to_string(snap.join("catalog.json")).unwrap();
        let mut manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(snap.join("manifest.json")).unwrap())
                .unwrap();
        let raw = manifest.clone();
        manifest_of_the_files(&mut manifest);
        let built_in = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/data/snapshots")
            .join(source);
        if std::env::var_os("GPUVALUE_BLESS").is_some() {
            // As built: the run's version; not the test server's date, ETag and address.
            let mut m = raw.clone();
            for f in m["files"].as_array_mut().unwrap() {
                let f = f.as_object_mut().unwrap();
                f.remove("server_date");
                f.remove("etag");
            }
            let day = &stamp[..8];
            m["mirror"] = format!(
                "tests/fixtures/feeds (public copies read {}-{}-{}; see its README)",
                &day[..4],
                &day[4..6],
                &day[6..]
            )
            .into();
            std::fs::create_dir_all(&built_in).unwrap();
            std::fs::write(built_in.join("catalog.json"), &rows).unwrap();
            let m = serde_json::to_string_pretty(&m).unwrap() + "\n";
            std::fs::write(built_in.join("manifest.json"), m).unwrap();
        }
        let want_rows = std::fs::read_to_string(built_in.join("catalog.json")).unwrap();
        let mut want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(built_in.join("manifest.json")).unwrap())
                .unwrap();
        manifest_of_the_files(&mut want);
        assert!(
            rows == want_rows && manifest == want,
            "src/data/snapshots/{source} is not what `catalog update` makes of the fixtures: \
             rebuild it with GPUVALUE_BLESS=1 cargo test --release --test it embedded_snapshot"
        );
    }
    // Offline, a fresh machine ranks the same rows at the same rates: the built-in snapshots
    // are in use.
    let empty = tempfile::tempdir().unwrap();
    let offline = catalog_json_with(empty.path(), &["--offline"]);
    let fetched = catalog_json(home.path());
    assert_eq!(
        offline["instances"].as_array().unwrap().len(),
        fetched["instances"].as_array().unwrap().len()
    );
    assert_eq!(offline["currencies"], fetched["currencies"]);
    assert_eq!(offline["currencies"]["CNY"]["as_of"], "2026-10-30");
}

fn catalog_json_with(home: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["catalog", "--format", "json"];
    args.extend_from_slice(extra);
    let o = run(home, &args);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}
