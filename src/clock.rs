//! The clock every timing and date in gpuvalue reads: `std::time` on native targets (the
//! `web-time` crate re-exports it there, so the types are the same), `performance.now()` and
//! `Date.now()` in a browser, where `std::time::Instant::now` and `SystemTime::now` panic.
//! Part of the data model's leaves: imports nothing from the crate.

pub use web_time::{Instant, SystemTime, UNIX_EPOCH};

/// Time since the Unix epoch (zero if the clock is set before it).
pub fn since_epoch() -> std::time::Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}
