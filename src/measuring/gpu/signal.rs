//! A one-shot channel whose receiving end is a future: what a wgpu callback (`map_async`,
//! `on_submitted_work_done`) fills and an async wait awaits. Callbacks must be `Send` even
//! on the web, so the slot is an `Arc<Mutex<..>>`. The native loop may also look without
//! waiting (`try_take`), since there the callback fires inside `device.poll`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// A future that need not be `Send` (pollster and the browser both run it on one thread).
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

struct Slot<T> {
    value: Option<T>,
    waker: Option<Waker>,
    /// The sender is gone (sent, or dropped without sending).
    closed: bool,
}

/// The sending half: `send` once, from any thread.
pub struct Sender<T>(Arc<Mutex<Slot<T>>>);

/// The receiving half: resolves to the value sent, or `None` when the sender was dropped
/// without sending.
pub struct Signal<T>(Arc<Mutex<Slot<T>>>);

/// A connected pair.
pub fn signal<T>() -> (Sender<T>, Signal<T>) {
    let slot = Arc::new(Mutex::new(Slot {
        value: None,
        waker: None,
        closed: false,
    }));
    (Sender(slot.clone()), Signal(slot))
}

fn lock<T>(m: &Mutex<Slot<T>>) -> std::sync::MutexGuard<'_, Slot<T>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T> Sender<T> {
    pub fn send(self, value: T) {
        lock(&self.0).value = Some(value);
        // Drop wakes the receiver.
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut s = lock(&self.0);
            s.closed = true;
            s.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Signal<T> {
    /// The value, if it has been sent (without waiting).
    pub fn try_take(&self) -> Option<T> {
        lock(&self.0).value.take()
    }
}

impl<T> Future for Signal<T> {
    type Output = Option<T>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut s = lock(&self.0);
        if let Some(v) = s.value.take() {
            return Poll::Ready(Some(v));
        }
        if s.closed {
            return Poll::Ready(None);
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll_once<T>(s: &mut Signal<T>) -> Poll<Option<T>> {
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(s).poll(&mut cx)
    }

    #[test]
    fn a_sent_value_arrives_once_and_a_dropped_sender_ends_the_wait() {
        let (tx, mut rx) = signal::<u32>();
        assert!(poll_once(&mut rx).is_pending());
        std::thread::spawn(move || tx.send(7)).join().unwrap();
        assert_eq!(poll_once(&mut rx), Poll::Ready(Some(7)));
        let (tx, mut rx) = signal::<u32>();
        drop(tx);
        assert_eq!(poll_once(&mut rx), Poll::Ready(None));
        let (tx, rx) = signal::<u32>();
        assert_eq!(rx.try_take(), None);
        tx.send(3);
        assert_eq!(rx.try_take(), Some(3));
        assert_eq!(rx.try_take(), None);
    }

    #[test]
    fn a_waiting_receiver_is_woken_by_the_send() {
        let (tx, rx) = signal::<&str>();
        let got = pollster::block_on(async move {
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                tx.send("done");
            });
            rx.await
        });
        assert_eq!(got, Some("done"));
    }
}
