//! A small blocking W3C WebDriver client (chromedriver) over `std::net::TcpStream` and
//! `serde_json`: the handful of endpoints the browser test needs, without an async stack.

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One HTTP/1.1 request (`Connection: close`); returns the status and the JSON body.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<(u16, Value), String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| format!("connect to chromedriver at {addr}: {e}"))?;
    s.set_read_timeout(Some(timeout)).ok();
    s.set_write_timeout(Some(Duration::from_secs(30))).ok();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\
         Content-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())
        .and_then(|_| s.write_all(body.as_bytes()))
        .map_err(|e| format!("{method} {path}: write: {e}"))?;
    // chromedriver keeps the connection open whatever we ask: read by Content-Length.
    let mut raw = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    let read_err = |e: std::io::Error| format!("{method} {path}: read: {e}");
    let split = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = s.read(&mut chunk).map_err(read_err)?;
        if n == 0 {
            return Err(format!(
                "{method} {path}: connection closed before the reply"
            ));
        }
        raw.extend_from_slice(&chunk[..n]);
    };
    let header = String::from_utf8_lossy(&raw[..split]).to_string();
    let status: u16 = header
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("{method} {path}: bad status line in {header:?}"))?;
    let field = |name: &str| {
        header.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_ascii_lowercase())
        })
    };
    let mut payload = raw[split + 4..].to_vec();
    if let Some(len) = field("content-length").and_then(|v| v.parse::<usize>().ok()) {
        while payload.len() < len {
            let n = s.read(&mut chunk).map_err(read_err)?;
            if n == 0 {
                return Err(format!("{method} {path}: reply cut short"));
            }
            payload.extend_from_slice(&chunk[..n]);
        }
        payload.truncate(len);
    } else if field("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        while !payload.ends_with(b"0\r\n\r\n") {
            let n = s.read(&mut chunk).map_err(read_err)?;
            if n == 0 {
                break;
            }
            payload.extend_from_slice(&chunk[..n]);
        }
        payload = dechunk(&payload)?;
    } else {
        s.read_to_end(&mut payload).map_err(read_err)?;
    }
    let v = if payload.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&payload).map_err(|e| {
            format!(
                "{method} {path}: reply is not JSON ({e}): {:.300}",
                String::from_utf8_lossy(&payload)
            )
        })?
    };
    Ok((status, v))
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = b
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunked encoding")?;
        let size_text = String::from_utf8_lossy(&b[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        b = &b[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if b.len() < size + 2 {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
}

/// Standard base64 (with padding), as WebDriver returns screenshots.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            b'\r' | b'\n' => continue,
            _ => return Err(format!("not base64: byte {c:#04x}")),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// A chromedriver process on a free local port; killed when dropped.
pub struct Driver {
    child: Child,
    pub addr: SocketAddr,
}

impl Driver {
    pub fn start(bin: &Path) -> Result<Driver, String> {
        // A free port: bind, read it, release it for chromedriver.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("find a free port: {e}"))?
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let child = Command::new(bin)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start {}: {e}", bin.display()))?;
        let mut d = Driver { child, addr };
        let t0 = Instant::now();
        loop {
            if let Ok((200, v)) = request(addr, "GET", "/status", None, Duration::from_secs(5))
                && v["value"]["ready"] == json!(true)
            {
                return Ok(d);
            }
            if let Ok(Some(st)) = d.child.try_wait() {
                return Err(format!("chromedriver exited at start: {st}"));
            }
            if t0.elapsed() > Duration::from_secs(30) {
                return Err("chromedriver did not become ready within 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A WebDriver session; deleted (the browser closed) when dropped.
pub struct Session {
    addr: SocketAddr,
    id: String,
}

impl Session {
    pub fn new(driver: &Driver, capabilities: Value) -> Result<Session, String> {
        let (status, v) = request(
            driver.addr,
            "POST",
            "/session",
            Some(&json!({ "capabilities": capabilities })),
            Duration::from_secs(120),
        )?;
        let id = v["value"]["sessionId"].as_str().map(str::to_string);
        match (status, id) {
            (200, Some(id)) => Ok(Session {
                addr: driver.addr,
                id,
            }),
            _ => Err(format!(
                "new session: HTTP {status}: {} {}",
                v["value"]["error"], v["value"]["message"]
            )),
        }
    }

    /// One command; the reply's `value`, or the WebDriver error in words.
    pub fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let full = format!("/session/{}{path}", self.id);
        let (status, v) = request(
            self.addr,
            method,
            &full,
            body.as_ref(),
            Duration::from_secs(120),
        )?;
        if status == 200 {
            Ok(v["value"].clone())
        } else {
            Err(format!(
                "{method} {path}: HTTP {status}: {}: {}",
                v["value"]["error"].as_str().unwrap_or("?"),
                v["value"]["message"].as_str().unwrap_or("")
            ))
        }
    }

    pub fn navigate(&self, url: &str) -> Result<(), String> {
        self.cmd("POST", "/url", Some(json!({ "url": url })))
            .map(drop)
    }

    /// Runs a function body in the page (`return ...` gives the value).
    pub fn execute(&self, script: &str) -> Result<Value, String> {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": [] })),
        )
    }

    pub fn set_window_size(&self, width: u32, height: u32) -> Result<(), String> {
        self.cmd(
            "POST",
            "/window/rect",
            Some(json!({ "width": width, "height": height })),
        )
        .map(drop)
    }

    /// The viewport as PNG bytes.
    pub fn screenshot(&self) -> Result<Vec<u8>, String> {
        let v = self.cmd("GET", "/screenshot", None)?;
        base64_decode(v.as_str().ok_or("screenshot: value is not a string")?)
    }

    /// The browser console since the last call (chromedriver's log endpoint; needs
    /// `goog:loggingPrefs` in the capabilities).
    pub fn console_log(&self) -> Result<Vec<Value>, String> {
        let v = self.cmd("POST", "/se/log", Some(json!({ "type": "browser" })))?;
        Ok(v.as_array().cloned().unwrap_or_default())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let path = format!("/session/{}", self.id);
        let _ = request(self.addr, "DELETE", &path, None, Duration::from_secs(30));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_values() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("Zg==").unwrap(), b"f");
        assert_eq!(base64_decode("Zm8=").unwrap(), b"fo");
        assert_eq!(base64_decode("Zm9v").unwrap(), b"foo");
        assert_eq!(base64_decode("Zm9vYmFy").unwrap(), b"foobar");
        assert_eq!(base64_decode("iVBORw0KGgo=").unwrap(), b"\x89PNG\r\n\x1a\n");
        assert!(base64_decode("Zm9v!").is_err());
    }

    #[test]
    fn dechunk_joins_chunks() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert!(dechunk(b"5\r\nab").is_err());
    }
}
