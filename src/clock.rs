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

/// Resolves after `d` (the web: a promise resolved by the global `setTimeout`, looked up on
/// the global object so that it also works in a worker).
#[cfg(target_arch = "wasm32")]
pub async fn sleep(d: std::time::Duration) {
    use wasm_bindgen::JsCast;
    let ms = d.as_secs_f64() * 1e3;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let global = js_sys::global();
        let set_timeout = js_sys::Reflect::get(&global, &"setTimeout".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        match set_timeout {
            Some(f) => {
                let _ = f.call2(&global, &resolve, &ms.into());
            }
            // No timer at all: resolve at once rather than never.
            None => {
                let _ = resolve.call0(&global);
            }
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// `f`'s output, or `None` when `d` passes first (the web's bounded wait).
#[cfg(target_arch = "wasm32")]
pub async fn timeout<F: std::future::Future>(d: std::time::Duration, f: F) -> Option<F::Output> {
    use std::task::Poll;
    let mut f = std::pin::pin!(f);
    let mut timer = std::pin::pin!(sleep(d));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = f.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}
