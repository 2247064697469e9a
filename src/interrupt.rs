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
#[cfg(not(target_arch = "wasm32"))]
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
                REQUESTED.store(true, Ordering::SeqCst);
                eprintln!(
                    "\ninterrupted: stopping after the current measurement and saving the results (press Ctrl-C again to quit at once)"
                );
            } else {
                remove_temp_files();
                eprintln!("\ninterrupted twice: quitting without saving");
                std::process::exit(i32::from(EXIT_CODE));
            }
        });
    });
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
