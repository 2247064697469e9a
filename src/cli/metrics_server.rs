//! `burn --metrics-port N`: the burn's windows and its latest power, clock and
//! temperature reading in the Prometheus text format, over HTTP while the burn runs (every
//! interface, as DCGM's exporter listens; any path answers). A plain thread with the
//! standard library's listener: one small answer a scrape needs no web framework.

use crate::measuring::burn::Live;
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The running endpoint; dropping it stops it.
pub struct Server {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Listens on `port` (refused now, before the burn, where it cannot) and answers every
/// request with `live` rendered.
pub fn serve(port: u16, live: Live) -> Result<Server> {
    let listener = TcpListener::bind(("0.0.0.0", port))
        .with_context(|| format!("--metrics-port {port}: cannot listen on it"))?;
    listener
        .set_nonblocking(true)
        .context("--metrics-port: the listener")?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::Builder::new()
        .name("gpuvalue-metrics".into())
        .spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => answer(stream, &live),
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        })
        .context("--metrics-port: starting its thread")?;
    Ok(Server {
        stop,
        handle: Some(handle),
    })
}

fn answer(mut stream: TcpStream, live: &Live) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    // The request itself does not matter: read what came, answer the metrics.
    let mut buf = [0u8; 2048];
    let _ = stream.read(&mut buf);
    let body = match live.lock() {
        Ok(v) => crate::report::metrics::live(&v),
        Err(_) => String::new(),
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
