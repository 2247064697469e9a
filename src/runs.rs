//! Bench runs alive on this machine. Each run registers itself in a shared directory, so a
//! run can tell (and record) that another was measuring at the same time, which distorts
//! timings; and each results file is locked while a run writes it, so two runs never write
//! the same file.
//!
//! The directory is `$GPUVALUE_RUN_DIR`, else `<temp dir>/gpuvalue-runs`. Entries of
//! processes that died without cleaning up are recognised (process gone, or the pid reused
//! by a process started later) and removed.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Another run seen while this one was measuring.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtherRun {
    pub pid: u32,
    /// When that run started (RFC 3339).
    pub started: String,
    /// Its results file.
    pub out: String,
    pub adapter: String,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    pid: u32,
    /// The process's start time (seconds since the epoch), to tell a reused pid apart.
    process_start: u64,
    started: String,
    out: String,
    adapter: String,
}

pub fn dir() -> PathBuf {
    std::env::var_os("GPUVALUE_RUN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("gpuvalue-runs"))
}

fn process_start(pid: u32) -> Option<u64> {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};
    let pid = Pid::from_u32(pid);
    let mut s = System::new().ok()?;
    s.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        true,
        ProcessRefreshKind::nothing(),
    );
    s.process(pid).map(|p| p.start_time())
}

/// True while the process that wrote `pid` / `start` is still running.
fn alive(pid: u32, start: u64) -> bool {
    process_start(pid).is_some_and(|s| s.abs_diff(start) <= 2)
}

fn own_start() -> u64 {
    process_start(std::process::id()).unwrap_or(0)
}

/// This run's entry in the registry; removed when dropped.
pub struct Registration {
    path: PathBuf,
}

impl Registration {
    /// Registers the current process as running a bench that writes `out`.
    pub fn new(out: &Path, adapter: &str) -> Result<Registration> {
        let d = dir();
        std::fs::create_dir_all(&d)
            .with_context(|| format!("cannot create the run registry {}", d.display()))?;
        let entry = Entry {
            pid: std::process::id(),
            process_start: own_start(),
            started: crate::results::now_rfc3339(),
            out: out.display().to_string(),
            adapter: adapter.to_string(),
        };
        // Several registrations per process (one per adapter, or tests): a counter keeps
        // their names apart.
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = d.join(format!("run-{}-{seq}.json", entry.pid));
        let json = serde_json::to_vec(&entry)?;
        crate::results::write_atomic(&path, &json)?;
        Ok(Registration { path })
    }

    /// The other runs alive now, removing entries of runs that are gone.
    pub fn others(&self) -> Vec<OtherRun> {
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(dir()) else {
            return out;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p == self.path || !name.starts_with("run-") || !name.ends_with(".json") {
                continue;
            }
            let Some(entry) = std::fs::read(&p)
                .ok()
                .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
            else {
                continue;
            };
            if !alive(entry.pid, entry.process_start) {
                let _ = std::fs::remove_file(&p);
                continue;
            }
            out.push(OtherRun {
                pid: entry.pid,
                started: entry.started,
                out: entry.out,
                adapter: entry.adapter,
            });
        }
        out.sort_by(|a, b| (a.pid, &a.started).cmp(&(b.pid, &b.started)));
        out
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Exclusive right to write one results file; released when dropped.
#[derive(Debug)]
pub struct OutputLock {
    path: PathBuf,
}

/// A stable name for a file path (FNV-1a over the absolute path).
fn key(out: &Path) -> String {
    let abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    let mut h: u64 = 0xcbf29ce484222325;
    for b in abs.to_string_lossy().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("lock-{h:016x}")
}

/// Why a lock could not be taken.
#[derive(Debug)]
pub enum LockError {
    /// Another live run holds it (or a lock file nobody can read): do not write the file.
    Held(anyhow::Error),
    /// The registry itself is unusable (read-only temp dir, say): run without locking.
    Unavailable(anyhow::Error),
}

impl OutputLock {
    /// Takes the lock on `out`, or says which process holds it. A lock left by a process
    /// that is gone is taken over.
    pub fn acquire(out: &Path) -> Result<OutputLock, LockError> {
        let d = dir();
        std::fs::create_dir_all(&d)
            .with_context(|| format!("cannot create the run registry {}", d.display()))
            .map_err(LockError::Unavailable)?;
        let path = d.join(key(out));
        for _ in 0..3 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    let me = Entry {
                        pid: std::process::id(),
                        process_start: own_start(),
                        started: crate::results::now_rfc3339(),
                        out: out.display().to_string(),
                        adapter: String::new(),
                    };
                    let json = serde_json::to_vec(&me).unwrap_or_default();
                    f.write_all(&json)
                        .with_context(|| format!("cannot write lock {}", path.display()))
                        .map_err(LockError::Unavailable)?;
                    return Ok(OutputLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read(&path)
                        .ok()
                        .and_then(|b| serde_json::from_slice::<Entry>(&b).ok());
                    match holder {
                        Some(h) if alive(h.pid, h.process_start) => {
                            return Err(LockError::Held(anyhow::anyhow!(
                                "{}: another gpuvalue bench (pid {}, started {}) is writing this file; give a different --out",
                                out.display(),
                                h.pid,
                                h.started
                            )));
                        }
                        // Being written this instant, or left by a process that is gone.
                        None => std::thread::sleep(std::time::Duration::from_millis(50)),
                        Some(_) => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => {
                    return Err(LockError::Unavailable(
                        anyhow::Error::new(e)
                            .context(format!("cannot create lock {}", path.display())),
                    ));
                }
            }
        }
        // A lock we can neither read nor take over: written by something else; say where.
        Err(LockError::Held(anyhow::anyhow!(
            "{}: cannot take the lock {} (remove it if no gpuvalue bench is running)",
            out.display(),
            path.display()
        )))
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
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
