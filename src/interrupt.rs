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
pub const EXIT_CODE: u8 = crate::exit::Status::Interrupted.code();

/// Installs the handler; later calls do nothing. Without it (library use, tests),
/// `requested` stays false. Native only: a page asks to stop with `request`.
///
/// Two things made a signal get lost, both fixed here:
/// - LLVM, loaded in-process by Mesa's llvmpipe and by PoCL, installs its own SIGINT,
///   SIGTERM and SIGHUP handler the first time it compiles (`SA_RESETHAND`: the first signal
///   resets the disposition to the default before LLVM puts the previous one back), so a
///   second signal in that instant killed the process with nothing saved. On Linux the
///   three signals are blocked in every thread (set before any other thread exists, so
///   every later thread inherits it; `std::process::Command` clears it for children) and
///   one thread takes them with `sigwait`: no handler is ever run, so none another library
///   installs can change what a signal does. Elsewhere the ctrlc crate's handler.
/// - `timeout -s INT`, `kill -INT -- -PGID` and a terminal can deliver the same request
///   twice within microseconds (to the process, then to its group): a second signal within
///   [`SAME_REQUEST`] of the first is the same request, not "quit at once".
#[cfg(not(target_arch = "wasm32"))]
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(platform::install);
}

/// What a signal does: the first asks the run to stop and save, a repeat within
/// [`SAME_REQUEST`] is the same request, a later one quits at once.
#[cfg(not(target_arch = "wasm32"))]
fn on_signal() {
    static FIRST: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
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
}

/// A second signal this soon after the first is the same request delivered twice.
#[cfg(not(target_arch = "wasm32"))]
pub const SAME_REQUEST: std::time::Duration = std::time::Duration::from_millis(250);

#[cfg(target_os = "linux")]
mod platform {
    /// Blocks SIGINT, SIGTERM and SIGHUP in this thread (and so in every thread it or its
    /// descendants start) and takes them in a thread of their own with `sigwait`.
    pub fn install() {
        // SAFETY: plain libc calls on a sigset we own; called once, at start-up, before the
        // process has other threads (main calls it right after parsing its arguments).
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(&mut set, s);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            set
        };
        let _ = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                loop {
                    let mut sig: libc::c_int = 0;
                    // SAFETY: waits for one of the blocked signals of `set`.
                    if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                        super::on_signal();
                    }
                }
            });
    }
}

#[cfg(all(not(target_os = "linux"), not(target_arch = "wasm32")))]
mod platform {
    pub fn install() {
        let _ = ctrlc::set_handler(super::on_signal);
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
