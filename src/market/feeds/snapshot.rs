//! Snapshots of the price feeds: one folder per source and fetch,
//! with the rows (the catalog's JSON schema, instances only) and a manifest; a `current` file
//! names the snapshot in use. Layout, under `GPUVALUE_HOME` or the platform's data directory:
//!
//! ```text
//! sources/<source>/<stamp>/catalog.json    the rows kept, in the catalog's schema
//! sources/<source>/<stamp>/manifest.json   URLs, fetch times, server dates, ETags, sha256,
//!                                          parser version, rows read / kept / refused
//! sources/<source>/<stamp>/diff.txt        what changed against the previous snapshot
//! sources/<source>/<stamp>/risks.json      spot interruption bands (where a feed has them)
//! sources/<source>/current                 the stamp in use (replaced atomically)
//! ```
//! A new snapshot is written into a hidden temporary folder, synced, renamed to its stamp,
//! and only then named in `current` (an atomic rename): an update killed at any point leaves
//! the last good snapshot loadable. Folders of killed updates are removed by the next one.

use crate::market::catalog::Catalog;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The version of the feed parsers, recorded in each manifest: a snapshot taken by another
/// parser version says so.
pub const PARSER_VERSION: u32 = 1;
/// Snapshots kept per source (the current one and the ones before it).
const KEEP: usize = 5;

/// One file a source read.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FileRecord {
    /// The feed's URL (secrets redacted), not a mirror's.
    pub url: String,
    pub fetched_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Empty for a file that was missing (404).
    pub sha256: String,
    pub bytes: u64,
    /// `ok`, or why the file gave nothing (`missing (404)`).
    pub status: String,
}

impl FileRecord {
    /// A file the feed did not have (404).
    pub fn missing(url: &str, fetched_at: &str) -> FileRecord {
        FileRecord {
            url: url.to_string(),
            fetched_at: fetched_at.to_string(),
            server_date: None,
            etag: None,
            sha256: String::new(),
            bytes: 0,
            status: "missing (404)".into(),
        }
    }
}

/// What a source's fetch read, kept and refused.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    /// Instance rows built from the feed (one per type and region).
    pub read: usize,
    /// Rows that rank: no error finding.
    pub kept: usize,
    /// Rows refused, by reason.
    pub refused: BTreeMap<String, usize>,
    /// Kept rows per catalog GPU.
    pub gpus: BTreeMap<String, usize>,
    /// Accelerators no catalog GPU is: name -> (rows, providers).
    #[serde(default)]
    pub unmatched: BTreeMap<String, (usize, Vec<String>)>,
    /// Exchange rates read (a source of rates, not of instances).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rates: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub source: String,
    pub stamp: String,
    pub taken_at: String,
    pub parser_version: u32,
    pub gpuvalue_version: String,
    /// The mirror the files came through, if one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<String>,
    pub files: Vec<FileRecord>,
    pub counts: Counts,
    /// What the source said while reading (clouds skipped, rows refused).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One source's snapshot in use: the user's own (`catalog update`) or the one built in.
pub struct InUse {
    pub name: String,
    pub manifest: Manifest,
    pub catalog: Catalog,
    pub risks: Vec<Risk>,
    /// Built into the binary (no `catalog update` has replaced it).
    pub embedded: bool,
}

/// A spot price's interruption risk for one instance type in one region, applied to the
/// spot price any feed gives it (`risks.json` in a snapshot).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Risk {
    pub provider: String,
    pub instance_type: String,
    pub region: String,
    pub interruption: crate::market::catalog::spot::Interruption,
}

/// What a snapshot holds, in words: "1447 rows kept", or a source of exchange rates' "29
/// exchange rates".
pub fn kept(counts: &Counts) -> String {
    if counts.read == 0 && counts.rates > 0 {
        format!("{} exchange rates", counts.rates)
    } else {
        format!("{} rows kept", counts.kept)
    }
}

/// Where snapshots live: `GPUVALUE_HOME`, else the platform's data directory.
pub fn home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("GPUVALUE_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    directories::ProjectDirs::from("", "", "gpuvalue")
        .map(|d| d.data_dir().to_path_buf())
        .context("no home directory to keep price snapshots in: set GPUVALUE_HOME")
}

fn source_dir(home: &Path, source: &str) -> PathBuf {
    home.join("sources").join(source)
}

/// A source's snapshot in use: its stamp, manifest and rows.
pub struct Snapshot {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub catalog: Catalog,
    pub risks: Vec<Risk>,
}

/// The snapshot `current` names for `source`, if any. A `current` naming a folder that is
/// not there or does not load is an error naming it.
pub fn current(home: &Path, source: &str) -> Result<Option<Snapshot>> {
    let dir = source_dir(home, source);
    let cur = dir.join("current");
    let stamp = match std::fs::read_to_string(&cur) {
        Ok(s) => s.trim().to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", cur.display())),
    };
    if stamp.is_empty() || stamp.contains(['/', '\\']) || stamp.starts_with('.') {
        anyhow::bail!("{}: not a snapshot name: {stamp:?}", cur.display());
    }
    let snap = dir.join(&stamp);
    let manifest: Manifest = crate::files::parse_json(
        &crate::files::read_text(&snap.join("manifest.json"), "snapshot manifest")?,
        &snap.join("manifest.json").display().to_string(),
    )?;
    let catalog = Catalog::load(&snap.join("catalog.json"))?;
    let risks_file = snap.join("risks.json");
    let risks = if risks_file.is_file() {
        crate::files::parse_json(
            &crate::files::read_text(&risks_file, "snapshot risks")?,
            &risks_file.display().to_string(),
        )?
    } else {
        Vec::new()
    };
    Ok(Some(Snapshot {
        dir: snap,
        manifest,
        catalog,
        risks,
    }))
}

/// Writes a new snapshot of `source` and makes it current; returns its folder.
pub fn write(
    home: &Path,
    manifest: &Manifest,
    catalog: &Catalog,
    risks: &[Risk],
    diff: &str,
) -> Result<PathBuf> {
    let dir = source_dir(home, &manifest.source);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    remove_leftovers(&dir);
    let tmp = dir.join(format!(".tmp-{}-{}", manifest.stamp, std::process::id()));
    std::fs::create_dir(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    crate::interrupt::register_temp(&tmp);
    let written = (|| -> Result<PathBuf> {
        let json = serde_json::to_string_pretty(catalog)?;
        crate::files::write_atomic(&tmp.join("catalog.json"), json.as_bytes())?;
        let m = serde_json::to_string_pretty(manifest)?;
        crate::files::write_atomic(&tmp.join("manifest.json"), m.as_bytes())?;
        crate::files::write_atomic(&tmp.join("diff.txt"), diff.as_bytes())?;
        if !risks.is_empty() {
            let r = serde_json::to_string_pretty(risks)?;
            crate::files::write_atomic(&tmp.join("risks.json"), r.as_bytes())?;
        }
        let fin = dir.join(&manifest.stamp);
        if fin.exists() {
            std::fs::remove_dir_all(&fin).ok();
        }
        std::fs::rename(&tmp, &fin)
            .with_context(|| format!("cannot rename {} to {}", tmp.display(), fin.display()))?;
        if let Ok(d) = std::fs::File::open(&dir) {
            d.sync_all().ok();
        }
        crate::files::write_atomic(
            &dir.join("current"),
            format!("{}\n", manifest.stamp).as_bytes(),
        )?;
        Ok(fin)
    })();
    crate::interrupt::unregister_temp(&tmp);
    if written.is_err() {
        std::fs::remove_dir_all(&tmp).ok();
    }
    let fin = written?;
    prune(&dir, &manifest.stamp);
    Ok(fin)
}

/// Temporary folders of updates that were killed.
fn remove_leftovers(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with(".tmp-") {
            std::fs::remove_dir_all(e.path()).ok();
        }
    }
}

/// Keeps the newest `KEEP` snapshots (the current one always).
fn prune(dir: &Path, current: &str) {
    let mut stamps: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.'))
        .collect();
    stamps.sort();
    let excess = stamps.len().saturating_sub(KEEP);
    for s in stamps.into_iter().take(excess).filter(|s| s != current) {
        std::fs::remove_dir_all(dir.join(s)).ok();
    }
}

/// A folder name for a snapshot taken at `rfc3339` (`2026-12-03T12:01:02Z` becomes
/// `20261203T120102Z`).
pub fn stamp(rfc3339: &str) -> String {
    rfc3339.chars().filter(|c| *c != '-' && *c != ':').collect()
}

/// The sources with a current snapshot under `home`, by name.
pub fn sources_with_snapshots(home: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(home.join("sources"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("current").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}
