//! `catalog update` against real feed files (public copies in tests/fixtures/feeds, laid
//! out by host as `--mirror` reads them) served from 127.0.0.1, with the faults a live feed
//! has: each leaves the previous snapshot in use and names the source and the fault. A module
//! per source (as in `src/market/feeds/`), and modules for the update itself, its HTTP
//! faults, its gates and the snapshots; the helpers they share are here.

mod aws;
mod azure;
mod gates;
mod gpuhunt;
mod http;
mod keyed;
mod oci;
mod runpod;
mod skypilot;
mod snapshot;
mod update;
mod vast;

use crate::common::feedserver::{Fault, Server, fixtures_copy};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SKY: &str = "raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8";

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .args(args)
        .env("GPUVALUE_HOME", home)
        .env_remove("GPUVALUE_MIRROR")
        // One message, one line: the assertions look for whole phrases.
        .env("COLUMNS", "10000")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run gpuvalue")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn update(home: &Path, s: &Server, extra: &[&str]) -> Output {
    let mut args = vec!["catalog", "update", "--mirror", &s.base];
    if !extra.contains(&"--timeout") {
        args.extend(["--timeout", "5"]);
    }
    args.extend_from_slice(extra);
    run(home, &args)
}

/// The stamp `current` names for the skypilot source.
fn current(home: &Path) -> String {
    std::fs::read_to_string(home.join("sources/skypilot/current"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn catalog_json(home: &Path) -> serde_json::Value {
    let o = run(home, &["catalog", "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn clouds_in_fixtures() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/feeds")
        .join(SKY);
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("vms.csv").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// A good first snapshot, for the fault tests.
fn first_snapshot() -> (tempfile::TempDir, tempfile::TempDir, Server, String) {
    let files = fixtures_copy();
    let home = tempfile::tempdir().unwrap();
    let s = Server::start(files.path());
    let o = update(home.path(), &s, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let stamp = current(home.path());
    assert!(!stamp.is_empty());
    (files, home, s, stamp)
}

/// After a failed or refused update: exit status 1, the source and the fault named, the
/// previous snapshot still current and the catalog still loading from it.
fn assert_kept(home: &Path, o: &Output, stamp: &str, words: &[&str]) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("skypilot:"), "{t}");
    for w in words {
        assert!(t.contains(w), "{w:?} not in {t}");
    }
    assert!(
        t.contains(&format!("the previous snapshot ({stamp}) stays in use")),
        "{t}"
    );
    assert_eq!(current(home), stamp);
    let o = run(home, &["rank", "--top", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("Prices from: snapshots") && t.contains("skypilot 20"),
        "{t}"
    );
}

fn instance<'a>(cat: &'a serde_json::Value, key: (&str, &str, &str)) -> &'a serde_json::Value {
    cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["provider"] == key.0 && i["instance_type"] == key.1 && i["region"] == key.2)
        .unwrap_or_else(|| panic!("no {key:?}"))
}

/// A first update of `sources` from a fresh copy of the fixtures into an empty home: the
/// files (kept alive), the server, the home and what the command said.
fn fresh_update(sources: &[&str]) -> (tempfile::TempDir, Server, tempfile::TempDir, Output) {
    let files = fixtures_copy();
    let s = Server::start(files.path());
    let home = tempfile::tempdir().unwrap();
    let mut args = Vec::new();
    for src in sources {
        args.extend(["--source", src]);
    }
    let o = update(home.path(), &s, &args);
    (files, s, home, o)
}

/// The rows of a source's current snapshot, as written.
fn snapshot_rows(home: &Path, source: &str) -> serde_json::Value {
    let dir = home.join("sources").join(source);
    let stamp = std::fs::read_to_string(dir.join("current")).unwrap();
    let text = std::fs::read_to_string(dir.join(stamp.trim()).join("catalog.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}
