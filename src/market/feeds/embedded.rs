//! The snapshots built into the binary: the same code as `catalog
//! update` run over the public copies of the feeds' files in `tests/fixtures/feeds`, so a
//! fresh machine ranks the market's breadth offline. A user's own snapshot of a source
//! replaces the built-in one; `--offline` uses only these.
//!
//! They are rebuilt, byte for byte, by the test `embedded_snapshot_is_the_fixtures_rebuilt`
//! (tests/it/feeds/snapshot.rs; `GPUVALUE_BLESS=1` writes them): `catalog update --source skypilot
//! --mirror` (and `--source ecb`: the exchange rates) over the fixtures, dated by
//! `SOURCE_DATE_EPOCH` = the day the copies were read.

use super::snapshot::InUse;
use crate::market::catalog::Catalog;

/// Per source: its manifest and its rows (the snapshot's two files).
const BUILT_IN: &[(&str, &str, &str)] = &[
    (
        "skypilot",
        include_str!("../../data/snapshots/skypilot/manifest.json"),
        include_str!("../../data/snapshots/skypilot/catalog.json"),
    ),
    (
        "ecb",
        include_str!("../../data/snapshots/ecb/manifest.json"),
        include_str!("../../data/snapshots/ecb/catalog.json"),
    ),
];

/// The sources with a built-in snapshot.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILT_IN.iter().map(|(n, _, _)| *n)
}

/// The built-in snapshot of `source`, if there is one.
pub fn get(source: &str) -> Option<InUse> {
    let (name, manifest, rows) = BUILT_IN.iter().find(|(n, _, _)| *n == source)?;
    let file = format!("built-in {name} snapshot");
    Some(InUse {
        name: name.to_string(),
        manifest: crate::files::parse_json(manifest, &file).expect("a built-in manifest parses"),
        catalog: Catalog::parse(rows, &file).expect("a built-in snapshot parses"),
        risks: Vec::new(),
        embedded: true,
    })
}
