//! A static web server on 127.0.0.1 over a folder laid out by host (the layout `--mirror`
//! reads), with faults injected per path: what the feed tests run `catalog update` against.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does instead of serving a file, for one request to a path.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answer with this status and an empty body.
    Status(u16),
    /// 429 with `Retry-After: SECONDS`.
    RetryAfter(u64),
    /// Send the headers and half the body, then close (Content-Length says the whole).
    Truncate,
    /// Wait this long before answering (a timeout).
    Hang(Duration),
    /// Redirect (302) to this location.
    Redirect(String),
    /// Serve this body instead of the file.
    Body(Vec<u8>),
}

/// Path suffix -> faults, one consumed per request; the first repeats forever if sticky.
type Faults = Arc<Mutex<HashMap<String, (Vec<Fault>, bool)>>>;

pub struct Server {
    pub base: String,
    pub root: PathBuf,
    /// Path suffix -> faults, one consumed per request; the last one repeats if `sticky`.
    faults: Faults,
    /// Every path requested, in order.
    pub log: Arc<Mutex<Vec<String>>>,
    /// Every request as received: request line, headers and body (what a mirror sees).
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Serves `root` (a folder laid out by host) until the process ends.
    pub fn start(root: &Path) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let faults: Faults = Arc::default();
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let (f2, l2, r2, s2) = (
            faults.clone(),
            log.clone(),
            root.to_path_buf(),
            seen.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (f, l, r, s) = (f2.clone(), l2.clone(), r2.clone(), s2.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &r, &f, &l, &s);
                });
            }
        });
        Server {
            base,
            root: root.to_path_buf(),
            faults,
            log,
            seen,
        }
    }

    /// Faults for requests whose path ends with `suffix`, in order; then the file again.
    pub fn fail(&self, suffix: &str, faults: Vec<Fault>) {
        self.faults
            .lock()
            .unwrap()
            .insert(suffix.to_string(), (faults, false));
    }

    /// The fault for every request whose path ends with `suffix`.
    pub fn fail_always(&self, suffix: &str, fault: Fault) {
        self.faults
            .lock()
            .unwrap()
            .insert(suffix.to_string(), (vec![fault], true));
    }

    pub fn clear(&self) {
        self.faults.lock().unwrap().clear();
    }

    pub fn requests(&self, suffix: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.ends_with(suffix))
            .count()
    }
}

fn serve(
    mut stream: TcpStream,
    root: &Path,
    faults: &Mutex<HashMap<String, (Vec<Fault>, bool)>>,
    log: &Mutex<Vec<String>>,
    seen: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    let mut content_length = 0usize;
    let mut whole = first.clone();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        whole.push_str(&h);
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            content_length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body_in = vec![0u8; content_length];
    reader.read_exact(&mut body_in)?;
    whole.push_str(&String::from_utf8_lossy(&body_in));
    seen.lock().unwrap().push(whole);
    let target = first.split_whitespace().nth(1).unwrap_or("/").to_string();
    log.lock().unwrap().push(target.clone());
    let path_only = target.split('?').next().unwrap_or("").to_string();
    let fault = {
        let mut f = faults.lock().unwrap();
        // A fault names a path's end, or a query's file (`prices@skip=100&page=2`).
        let selector = match target.split_once('?') {
            Some((_, q)) => format!("{path_only}@{}", q.replace('$', "")),
            None => path_only.clone(),
        };
        let key = f
            .keys()
            .find(|k| selector.ends_with(k.as_str()) || path_only.ends_with(k.as_str()))
            .cloned();
        key.and_then(|k| {
            let (list, sticky) = f.get_mut(&k)?;
            if *sticky {
                list.first().cloned()
            } else if list.is_empty() {
                None
            } else {
                Some(list.remove(0))
            }
        })
    };
    // A query picks its own file where one exists (`prices@skip=100` for
    // `prices?$skip=100`: no `?` or `$` in file names), else the path's file.
    let file = root.join(path_only.trim_start_matches('/'));
    let file = match target.split_once('?') {
        Some((_, q)) => {
            let named = root.join(format!(
                "{}@{}",
                path_only.trim_start_matches('/'),
                q.replace('$', "")
            ));
            if named.is_file() { named } else { file }
        }
        None => file,
    };
    let respond = |s: &mut TcpStream, status: &str, extra: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        );
        s.write_all(head.as_bytes())?;
        s.write_all(body)
    };
    match fault {
        Some(Fault::Status(code)) => respond(&mut stream, &format!("{code} Fault"), "", b""),
        Some(Fault::RetryAfter(secs)) => respond(
            &mut stream,
            "429 Too Many Requests",
            &format!("Retry-After: {secs}\r\n"),
            b"",
        ),
        Some(Fault::Hang(d)) => {
            std::thread::sleep(d);
            Ok(())
        }
        Some(Fault::Redirect(loc)) => respond(
            &mut stream,
            "302 Found",
            &format!("Location: {loc}\r\n"),
            b"",
        ),
        Some(Fault::Body(b)) => respond(&mut stream, "200 OK", "", &b),
        Some(Fault::Truncate) => {
            let body = std::fs::read(&file)?;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes())?;
            stream.write_all(&body[..body.len() / 2])?;
            stream.flush()?;
            stream.shutdown(std::net::Shutdown::Both)
        }
        None => match std::fs::read(&file) {
            Ok(body) => respond(
                &mut stream,
                "200 OK",
                "ETag: \"fixture\"\r\nDate: Thu, 03 Dec 2026 12:00:00 GMT\r\n",
                &body,
            ),
            Err(_) => respond(&mut stream, "404 Not Found", "", b""),
        },
    }
}

/// A copy of the committed feed fixtures (tests may change files in it).
pub fn fixtures_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/feeds"),
        dir.path(),
    );
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}
