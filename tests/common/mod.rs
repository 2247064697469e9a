//! Shared test helpers: open the default adapter, and fail (not skip) in CI when none exists.

#![allow(dead_code)]

use gpuvalue::gpu::{AdapterChoice, Gpu, adapter};

/// True when running under CI (`CI=true`), where a missing adapter is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Opens the default adapter. Outside CI, a machine without any adapter skips the test
/// (returns None, with a note on stderr); under CI=true it panics.
pub fn gpu() -> Option<Gpu> {
    // Keep Vulkan's "XDG_RUNTIME_DIR is invalid" noise out of test logs.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: set once, before any thread of this test reads the environment.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    let list = adapter::enumerate(None);
    match list.select(&AdapterChoice::Best) {
        Ok(ix) => {
            let i = ix[0];
            Some(
                Gpu::open(list.adapters[i].clone(), list.summaries[i].clone())
                    .expect("open device"),
            )
        }
        Err(e) => {
            if in_ci() {
                panic!("CI=true and no GPU adapter was found, so the GPU tests cannot run: {e}");
            }
            eprintln!("SKIPPED (no adapter; set CI=true to make this a failure): {e}");
            None
        }
    }
}
