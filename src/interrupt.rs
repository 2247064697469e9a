//! Ctrl-C (and SIGTERM, as sent when a cloud machine is stopped): the first one asks the
//! bench to stop after the current sample and save what it measured, marked interrupted;
//! a second one exits at once, removing any temporary file being written.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
#[cfg(not(target_arch = "wasm32"))]
static SIGNALS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
/// Temporary files being written right now (see `files::write_atomic`).
static TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Exit status of an interrupted run (128 + SIGINT, as shells report it).
pub const EXIT_CODE: u8 = 130;

/// Installs the handler; later calls do nothing. Without it (library use, tests),
/// `requested` stays false. Native only: a page asks to stop with `request`.
///
/// Two things made a signal get lost (issue 35 item 1), both fixed here:
/// - LLVM, loaded in-process by Mesa's llvmpipe and by PoCL, installs its own SIGINT,
///   SIGTERM and SIGHUP handler the first time it compiles (`SA_RESETHAND`: the first signal
///   resets the disposition to the default before LLVM puts ours back), so a second signal
///   in that instant killed the process with nothing saved. A guard thread puts our handler
///   back whenever a library has replaced it ([`reassert`]), within [`GUARD_PERIOD`].
/// - `timeout -s INT`, `kill -INT -- -PGID` and a terminal can deliver the same request
///   twice within microseconds (to the process, then to its group): a second signal within
///   [`SAME_REQUEST`] of the first is the same request, not "quit at once".
#[cfg(not(target_arch = "wasm32"))]
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        static FIRST: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let _ = ctrlc::set_handler(|| {
            if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
                let _ = FIRST.set(std::time::Instant::now());
                REQUESTED.store(true, Ordering::SeqCst);
                eprintln!(
                    "\ninterrupted: stopping after the current measurement and saving the results (press Ctrl-C again to quit at once)"
                );
            } else if FIRST.get().is_some_and(|t| t.elapsed() < SAME_REQUEST) {
                // The same request delivered twice (process, then process group).
            } else {
                remove_temp_files();
                eprintln!("\ninterrupted twice: quitting without saving");
                std::process::exit(i32::from(EXIT_CODE));
            }
        });
        guard::remember();
        let _ = std::thread::Builder::new()
            .name("signal-guard".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(GUARD_PERIOD);
                    reassert();
                }
            });
    });
}

/// A second signal this soon after the first is the same request delivered twice.
#[cfg(not(target_arch = "wasm32"))]
pub const SAME_REQUEST: std::time::Duration = std::time::Duration::from_millis(250);

/// How often the guard thread checks that our handler is still the one installed.
#[cfg(not(target_arch = "wasm32"))]
pub const GUARD_PERIOD: std::time::Duration = std::time::Duration::from_millis(20);

/// Puts our handler back for SIGINT, SIGTERM and SIGHUP where a library replaced it; true
/// when it had to. Does nothing before [`install`] or off Linux.
#[cfg(not(target_arch = "wasm32"))]
pub fn reassert() -> bool {
    guard::reassert()
}

#[cfg(target_os = "linux")]
mod guard {
    use std::sync::OnceLock;

    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    /// Our dispositions as installed, to put back.
    struct Ours([libc::sigaction; 3]);
    // SAFETY: plain data (handler addresses, flags and masks), only read after it is set.
    unsafe impl Sync for Ours {}
    unsafe impl Send for Ours {}
    static OURS: OnceLock<Ours> = OnceLock::new();

    fn current(sig: libc::c_int) -> libc::sigaction {
        // SAFETY: a query (null new action) into a zeroed sigaction we own.
        unsafe {
            let mut now: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut now);
            now
        }
    }

    pub fn remember() {
        let _ = OURS.set(Ours(SIGNALS.map(current)));
    }

    pub fn reassert() -> bool {
        let Some(Ours(ours)) = OURS.get() else {
            return false;
        };
        let mut changed = false;
        for (sig, mine) in SIGNALS.iter().zip(ours) {
            if current(*sig).sa_sigaction != mine.sa_sigaction {
                // SAFETY: installing the disposition the ctrlc crate installed at start-up.
                unsafe {
                    libc::sigaction(*sig, mine, std::ptr::null_mut());
                }
                changed = true;
            }
        }
        changed
    }
}

#[cfg(all(not(target_os = "linux"), not(target_arch = "wasm32")))]
mod guard {
    pub fn remember() {}
    pub fn reassert() -> bool {
        false
    }
}

/// For commands that only print (catalog, rank, show, compare, calibration, devices): a
/// reader that closes the pipe early (`gpuvalue catalog | head`) ends the process quietly, as
/// with other command-line tools, instead of a panic in `println!`. Not for commands that
/// measure or write files: a closed stdout must not cost a run its results.
pub fn quiet_broken_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: restoring the default disposition of SIGPIPE at start-up, before any thread
    // exists; no handler is installed.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Asks the run to stop after the current measurement (the page's Stop button).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Forgets an earlier request, before a new run in the same process (the page).
pub fn clear() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// True once the user asked the run to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

pub fn register_temp(p: &std::path::Path) {
    if let Ok(mut v) = TEMP_FILES.lock() {
        v.push(p.to_path_buf());
    }
}

pub fn unregister_temp(p: &std::path::Path) {
    if let Ok(mut v) = TEMP_FILES.lock() {
        v.retain(|q| q != p);
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn remove_temp_files() {
    if let Ok(v) = TEMP_FILES.try_lock() {
        for p in v.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
}
