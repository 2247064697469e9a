//! Bench runs alive on this machine. Each run registers itself in a shared directory, so a
//! run can tell (and record) that another was measuring at the same time, which distorts
//! timings; and each results file is locked while a run writes it, so two runs never write
//! the same file.
//!
//! The directory is `$GPUVALUE_RUN_DIR`, else `<temp dir>/gpuvalue-runs`. Each entry and
//! each lock is a file its run holds an advisory lock on (`std::fs::File::try_lock`); the
//! operating system drops the lock when the process ends, so an entry nobody holds is one
//! a run left behind when it died, and is removed.

use crate::files::now_rfc3339;
pub use crate::model::OtherRun;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
struct Entry {
    pid: u32,
    started: String,
    out: String,
    adapter: String,
}

pub fn dir() -> PathBuf {
    std::env::var_os("GPUVALUE_RUN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("gpuvalue-runs"))
}

/// A file of the registry held under an exclusive advisory lock (`File::try_lock`) for as
/// long as it lives: the operating system releases the lock when the process ends, however
/// it ends, so a file that can be locked belongs to a run that is gone. Removed when dropped.
#[derive(Debug)]
struct Held {
    path: PathBuf,
    _file: File,
}

/// What trying to hold a registry file found.
enum Hold {
    Taken(Held),
    /// Another live process holds it; what it wrote there, if readable.
    Busy(Option<Entry>),
}

impl Held {
    /// Locks `path` (creating it) and writes `entry` into it, or says who holds it.
    fn try_hold(path: &Path, entry: &Entry) -> std::io::Result<Hold> {
        // The holder removes its file before it unlocks: a file locked after that removal
        // is no longer the one at `path`, so try again on the new one.
        for _ in 0..8 {
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            match f.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let holder = f
                        .read_to_string(&mut text)
                        .ok()
                        .and_then(|_| serde_json::from_str(&text).ok());
                    return Ok(Hold::Busy(holder));
                }
                Err(TryLockError::Error(e)) => return Err(e),
            }
            if !still_at(&f, path) {
                continue;
            }
            f.set_len(0)?;
            f.write_all(&serde_json::to_vec(entry).unwrap_or_default())?;
            f.flush()?;
            return Ok(Hold::Taken(Held {
                path: path.to_path_buf(),
                _file: f,
            }));
        }
        Err(std::io::Error::other(format!(
            "{}: removed and recreated while being locked, repeatedly",
            path.display()
        )))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // Removed while still locked; the lock goes with the file handle right after.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// True when the open file `f` is still the one at `path` (not removed meanwhile).
#[cfg(unix)]
fn still_at(f: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Elsewhere an open file cannot be removed, so it is always still there.
#[cfg(not(unix))]
fn still_at(_f: &File, _path: &Path) -> bool {
    true
}

fn entry(out: &Path, adapter: &str) -> Entry {
    Entry {
        pid: std::process::id(),
        started: now_rfc3339(),
        out: out.display().to_string(),
        adapter: adapter.to_string(),
    }
}

/// This run's entry in the registry, locked while the run lives; removed when dropped.
pub struct Registration {
    held: Held,
}

impl Registration {
    /// Registers the current process as running a bench that writes `out`.
    pub fn new(out: &Path, adapter: &str) -> Result<Registration> {
        let d = dir();
        std::fs::create_dir_all(&d)
            .with_context(|| format!("cannot create the run registry {}", d.display()))?;
        // Several registrations per process (one per adapter, or tests): a counter keeps
        // their names apart.
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = d.join(format!("run-{}-{seq}.json", std::process::id()));
        match Held::try_hold(&path, &entry(out, adapter)) {
            Ok(Hold::Taken(held)) => Ok(Registration { held }),
            Ok(Hold::Busy(_)) => anyhow::bail!("{}: held by another process", path.display()),
            Err(e) => Err(e).with_context(|| format!("cannot register in {}", path.display())),
        }
    }

    /// The other runs alive now (their entries are locked), removing entries of runs that
    /// are gone (an entry nobody holds).
    pub fn others(&self) -> Vec<OtherRun> {
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(dir()) else {
            return out;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p == self.held.path || !name.starts_with("run-") || !name.ends_with(".json") {
                continue;
            }
            let Ok(f) = std::fs::OpenOptions::new().read(true).write(true).open(&p) else {
                continue;
            };
            match f.try_lock() {
                // Nobody holds it: left by a run that is gone.
                Ok(()) => {
                    if still_at(&f, &p) {
                        let _ = std::fs::remove_file(&p);
                    }
                }
                Err(TryLockError::WouldBlock) => {
                    let Some(entry) = std::fs::read(&p)
                        .ok()
                        .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
                    else {
                        continue;
                    };
                    out.push(OtherRun {
                        pid: entry.pid,
                        started: entry.started,
                        out: entry.out,
                        adapter: entry.adapter,
                    });
                }
                Err(TryLockError::Error(_)) => {}
            }
        }
        out.sort_by(|a, b| (a.pid, &a.started).cmp(&(b.pid, &b.started)));
        out
    }
}

/// Exclusive right to write one results file; released when dropped (or when the process
/// ends, however it ends).
#[derive(Debug)]
pub struct OutputLock {
    _held: Held,
}

/// A stable name for a file path: FNV-1a (the `fnv` crate, stable across builds, so two
/// gpuvalue versions agree) over the absolute path.
fn key(out: &Path) -> String {
    use std::hash::Hasher;
    let abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    let mut h = fnv::FnvHasher::default();
    h.write(abs.to_string_lossy().as_bytes());
    format!("lock-{:016x}", h.finish())
}

/// Why a lock could not be taken.
#[derive(Debug)]
pub enum LockError {
    /// Another live run holds it: do not write the file.
    Held(anyhow::Error),
    /// The registry itself is unusable (read-only temp dir, say): run without locking.
    Unavailable(anyhow::Error),
}

impl OutputLock {
    /// Takes the lock on `out`, or says which process holds it.
    pub fn acquire(out: &Path) -> Result<OutputLock, LockError> {
        let d = dir();
        std::fs::create_dir_all(&d)
            .with_context(|| format!("cannot create the run registry {}", d.display()))
            .map_err(LockError::Unavailable)?;
        let path = d.join(key(out));
        match Held::try_hold(&path, &entry(out, "")) {
            Ok(Hold::Taken(held)) => Ok(OutputLock { _held: held }),
            Ok(Hold::Busy(Some(h))) => Err(LockError::Held(anyhow::anyhow!(
                "{}: another gpuvalue bench (pid {}, started {}) is writing this file; give a different --out",
                out.display(),
                h.pid,
                h.started
            ))),
            Ok(Hold::Busy(None)) => Err(LockError::Held(anyhow::anyhow!(
                "{}: another process holds the lock {}; give a different --out",
                out.display(),
                path.display()
            ))),
            Err(e) => Err(LockError::Unavailable(
                anyhow::Error::new(e).context(format!("cannot take the lock {}", path.display())),
            )),
        }
    }
}

/// Looks for other runs every `every` on a background thread, so that one that starts and
/// ends inside a long probe is still seen.
pub struct Watcher {
    reg: Option<std::sync::Arc<Registration>>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<OtherRun>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// Adds to `into` the runs of `from` it does not hold yet.
pub fn merge(into: &mut Vec<OtherRun>, from: Vec<OtherRun>) {
    for o in from {
        if !into.contains(&o) {
            into.push(o);
        }
    }
}

impl Watcher {
    /// Without a registration (the registry is unusable) it sees nothing.
    pub fn new(reg: Option<std::sync::Arc<Registration>>, every: std::time::Duration) -> Watcher {
        use std::sync::atomic::Ordering;
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let handle = reg.clone().and_then(|reg| {
            let (seen, stop) = (seen.clone(), stop.clone());
            std::thread::Builder::new()
                .name("gpuvalue-runs".into())
                .spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let now = reg.others();
                        if let Ok(mut s) = seen.lock() {
                            merge(&mut s, now);
                        }
                        let t0 = std::time::Instant::now();
                        while t0.elapsed() < every && !stop.load(Ordering::SeqCst) {
                            std::thread::sleep(std::time::Duration::from_millis(50));
                        }
                    }
                })
                .ok()
        });
        Watcher {
            reg,
            seen,
            stop,
            handle,
        }
    }

    /// The other runs seen since the last call, and those alive now.
    pub fn take(&self) -> Vec<OtherRun> {
        let mut out = self
            .seen
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        if let Some(reg) = &self.reg {
            merge(&mut out, reg.others());
        }
        out
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
