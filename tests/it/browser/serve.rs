//! A static file server for the page on 127.0.0.1 (a thread per connection): the MIME types
//! the browser insists on (`application/wasm` for streaming compilation, `text/javascript`
//! for modules) and the COOP/COEP headers that make the page cross-origin isolated, so
//! `performance.now()` is not coarsened.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Requests answered so far, as `STATUS PATH`, for the test's diagnostics.
pub type Log = Arc<Mutex<Vec<String>>>;

pub fn mime(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The file under `root` a request path names, or None for anything that could leave it.
pub fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(decoded).ok()?;
    let mut out = root.to_path_buf();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return None,
            s if s.contains(['\\', '\0']) => return None,
            s => out.push(s),
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    Some(out)
}

fn respond(mut s: TcpStream, root: &Path, log: &Log) {
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut reader = BufReader::new(match s.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    // Skip the headers; the server needs none of them.
    loop {
        let mut h = String::new();
        match reader.read_line(&mut h) {
            Ok(0) | Err(_) => break,
            Ok(_) if h == "\r\n" || h == "\n" => break,
            Ok(_) => {}
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let file = resolve(root, target);
    let (code, reason, body, kind) = if method != "GET" && method != "HEAD" {
        (405, "Method Not Allowed", Vec::new(), "text/plain")
    } else {
        match file.as_deref().map(|f| (f, std::fs::read(f))) {
            Some((f, Ok(b))) => (200, "OK", b, mime(f)),
            Some((_, Err(_))) => (404, "Not Found", b"not found\n".to_vec(), "text/plain"),
            None => (403, "Forbidden", b"forbidden\n".to_vec(), "text/plain"),
        }
    };
    log.lock()
        .unwrap()
        .push(format!("{code} {method} {target}"));
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\n\
         Cross-Origin-Resource-Policy: same-origin\r\nX-Content-Type-Options: nosniff\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes());
    if method != "HEAD" {
        let _ = s.write_all(&body);
    }
    let _ = s.flush();
}

/// Serves `root` on 127.0.0.1 (a free port) from a background thread for the rest of the
/// process; returns the address and the request log.
pub fn start(root: PathBuf) -> std::io::Result<(SocketAddr, Log)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let log: Log = Arc::default();
    let l2 = log.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let (root, log) = (root.clone(), l2.clone());
            std::thread::spawn(move || respond(s, &root, &log));
        }
    });
    Ok((addr, log))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_under_the_root() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(
            resolve(root, "/web/main.js?x=1").unwrap(),
            root.join("web/main.js")
        );
        assert_eq!(resolve(root, "/web/").unwrap(), root.join("web/index.html"));
        assert_eq!(resolve(root, "/a%20b").unwrap(), root.join("a b"));
        assert!(resolve(root, "/../etc/passwd").is_none());
        assert!(resolve(root, "/web/%2e%2e/%2e%2e/x").is_none());
        assert!(resolve(root, "/a%zz").is_none());
        assert_eq!(mime(Path::new("x/gpuvalue_bg.wasm")), "application/wasm");
        assert!(mime(Path::new("gpuvalue.js")).starts_with("text/javascript"));
    }
}
