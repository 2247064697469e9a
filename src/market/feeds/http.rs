//! The one HTTP client every price feed goes through, and the mirror rule.
//!
//! - TLS is always verified (rustls with the bundled Mozilla roots); no switch turns it off.
//!   Plain HTTP is fetched only from a mirror the user named.
//! - Timeouts: 15 s to connect, `timeout` for a whole call (`--timeout`, default 120 s).
//! - Retries: 3 attempts on a 429 or 5xx status or a broken connection, with exponential
//!   backoff (0.5 s, 1 s, ...), honouring a `Retry-After` of seconds up to 60 s.
//! - gzip, proxies from `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (ureq reads them), a cap on
//!   every body (`--max-download`), redirects followed only within the same host (or the
//!   mirror), at most 5.
//! - Mirrors: with a base, `https://HOST/PATH?QUERY` is fetched as `BASE/HOST/PATH?QUERY`, so
//!   any static web server over a directory laid out by host mirrors every feed.
//! - Requests that carry a key (a signed API call, a bearer token) or a body (a POST): a
//!   mirror is asked with a plain GET of `BASE/HOST/PATH?PARAMS`, where PARAMS are the
//!   request's own parameters without credentials or signature, sorted ([`Request::mirror`]):
//!   a key never reaches a mirror, and a static server answers it from a file.
//! - Secrets: a URL is recorded and shown with its secret query values (`key`, `api_key`,
//!   `token`, ...) replaced by `REDACTED`, and every message passes through [`redact`].

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::time::Duration;

/// Query parameters whose values are secrets.
const SECRET_PARAMS: &[&str] = &[
    "key",
    "api_key",
    "apikey",
    "token",
    "access_token",
    "signature",
    "accesskeyid",
];
/// Environment variables that hold keys; their values never appear in anything written.
pub const KEY_VARS: &[&str] = &[
    "GCP_API_KEY",
    "LAMBDA_API_KEY",
    "VAST_API_KEY",
    "RUNPOD_API_KEY",
    "ALIBABA_CLOUD_ACCESS_KEY_ID",
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
    "TENCENTCLOUD_SECRET_ID",
    "TENCENTCLOUD_SECRET_KEY",
];
const ATTEMPTS: u32 = 3;
const MAX_REDIRECTS: u32 = 5;
const MAX_RETRY_AFTER_S: u64 = 60;

/// A request beyond a plain GET of a public URL.
#[derive(Clone, Debug)]
pub struct Request {
    /// The feed's URL (recorded redacted).
    pub url: String,
    /// A JSON body: sent as a POST.
    pub body: Option<Vec<u8>>,
    /// Headers (a signature, a bearer token): never sent to a mirror, never recorded.
    pub headers: Vec<(String, String)>,
    /// The request's parameters without credentials or signature: the query a mirror is
    /// asked with (sorted), and what the manifest records beside the URL.
    pub mirror: Vec<(String, String)>,
}

impl Request {
    /// The URL a mirror is asked: `BASE/HOST/PATH` of the feed URL without its query, with
    /// the sorted non-secret parameters as the query.
    fn mirror_url(&self) -> String {
        let path = self.url.split('?').next().unwrap_or(&self.url);
        if self.mirror.is_empty() {
            return path.to_string();
        }
        let mut q: Vec<String> = self
            .mirror
            .iter()
            .map(|(k, v)| format!("{}={}", query_escape(k), query_escape(v)))
            .collect();
        q.sort();
        format!("{path}?{}", q.join("&"))
    }
}

/// Percent-encoding of a query key or value (RFC 3986 unreserved characters kept).
pub fn query_escape(s: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(s, SET).to_string()
}

/// A fetched body and what the server said about it.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub body: Vec<u8>,
    pub meta: Meta,
}

/// Why a fetch failed, in words that name the URL.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0}: not found (404)")]
    NotFound(String),
    #[error("{0}")]
    Other(String),
}

pub struct Client {
    agent: ureq::Agent,
    mirror: Option<String>,
    max_bytes: u64,
    backoff: Duration,
}

impl Client {
    /// A client; `mirror` is a base URL (`http://127.0.0.1:8000`, `https://mirror.example/feeds`).
    pub fn new(mirror: Option<&str>, timeout: Duration, max_bytes: u64) -> Result<Client> {
        if let Some(m) = mirror
            && !(m.starts_with("http://") || m.starts_with("https://"))
        {
            bail!("--mirror {m}: expected a base URL starting with http:// or https://");
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(15)))
            .timeout_global(Some(timeout))
            .max_redirects(0)
            .http_status_as_error(false)
            .https_only(false)
            .user_agent(concat!("gpuvalue/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Client {
            agent,
            mirror: mirror.map(|m| m.trim_end_matches('/').to_string()),
            max_bytes,
            backoff: Duration::from_millis(500),
        })
    }

    /// Where `url` is really fetched from: itself, or its place under the mirror.
    pub fn map_url(&self, url: &str) -> Result<String> {
        let rest = url
            .strip_prefix("https://")
            .with_context(|| format!("{}: a feed URL must be https", redact(url)))?;
        // `https://prices.azure.com:443/...` (Azure's NextPageLink) is the same host as
        // without the default port: one folder in a mirror.
        let rest = match rest.split_once('/') {
            Some((host, path)) if host.ends_with(":443") => {
                format!("{}/{path}", host.trim_end_matches(":443"))
            }
            _ => rest.to_string(),
        };
        Ok(match &self.mirror {
            Some(base) => format!("{base}/{rest}"),
            None => url.to_string(),
        })
    }

    /// GET a body; a 404 is [`FetchError::NotFound`].
    pub fn get(&self, url: &str) -> std::result::Result<Fetched, FetchError> {
        let (body, meta) = self.stream(url, &mut read_all)?;
        Ok(Fetched { body, meta })
    }

    /// A request with headers or a body (see [`Request`]); from a mirror, a GET of its
    /// mirror URL without them.
    pub fn send(&self, req: &Request) -> std::result::Result<Fetched, FetchError> {
        let (body, meta) = if self.mirror.is_some() {
            self.stream(&req.mirror_url(), &mut read_all)?
        } else {
            let (body, mut meta) = self.stream_with(&req.url, Some(req), &mut read_all)?;
            // Recorded without the credentials and signature the live URL may carry.
            meta.url = redact_url(&req.mirror_url());
            (body, meta)
        };
        Ok(Fetched { body, meta })
    }

    /// GET a body and hand it to `consume` as it arrives, never held whole (the AWS offer
    /// files are hundreds of MB): the cap and the sha256 apply on the way. A read that fails
    /// (a cut connection) retries the whole call; an error of `consume` itself does not.
    pub fn stream<T>(
        &self,
        url: &str,
        consume: &mut dyn FnMut(&mut dyn Read) -> std::result::Result<T, BodyError>,
    ) -> std::result::Result<(T, Meta), FetchError> {
        self.stream_with(url, None, consume)
    }

    fn stream_with<T>(
        &self,
        url: &str,
        req: Option<&Request>,
        consume: &mut dyn FnMut(&mut dyn Read) -> std::result::Result<T, BodyError>,
    ) -> std::result::Result<(T, Meta), FetchError> {
        let shown = redact_url(url);
        let fail = |m: String| FetchError::Other(redact(&format!("{shown}: {m}")));
        let target = self
            .map_url(url)
            .map_err(|e| FetchError::Other(e.to_string()))?;
        let mut last = String::new();
        for attempt in 1..=ATTEMPTS {
            match self.once(&target, req, consume) {
                Ok(Outcome::Body(value, mut meta)) => {
                    meta.url = shown;
                    return Ok((value, meta));
                }
                Ok(Outcome::NotFound) => return Err(FetchError::NotFound(shown)),
                Ok(Outcome::Fatal(m)) => return Err(fail(m)),
                Ok(Outcome::Retry(m, after)) | Err((m, after)) => {
                    last = m;
                    if attempt < ATTEMPTS {
                        let wait = after.unwrap_or(self.backoff * 2u32.pow(attempt - 1));
                        std::thread::sleep(wait);
                    }
                }
            }
        }
        Err(fail(format!("{last} (after {ATTEMPTS} attempts)")))
    }

    /// Sends the request to `at`: a POST of the request's body (JSON unless its headers say
    /// otherwise) where it has one, else a GET, with the request's headers.
    fn dispatch(
        &self,
        at: &str,
        req: Option<&Request>,
    ) -> std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let headers = req.map_or(&[][..], |r| &r.headers[..]);
        match req.and_then(|r| r.body.as_deref()) {
            Some(body) => {
                let mut b = self.agent.post(at);
                for (k, v) in headers {
                    b = b.header(k, v);
                }
                if !headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                {
                    b = b.header("content-type", "application/json");
                }
                b.send(body)
            }
            None => {
                let mut b = self.agent.get(at);
                for (k, v) in headers {
                    b = b.header(k, v);
                }
                b.call()
            }
        }
    }

    /// One attempt, following same-host redirects.
    fn once<T>(
        &self,
        target: &str,
        req: Option<&Request>,
        consume: &mut dyn FnMut(&mut dyn Read) -> std::result::Result<T, BodyError>,
    ) -> std::result::Result<Outcome<T>, (String, Option<Duration>)> {
        let mut at = target.to_string();
        for _ in 0..=MAX_REDIRECTS {
            let mut resp = self.dispatch(&at, req).map_err(|e| (transport(&e), None))?;
            let status = resp.status().as_u16();
            let header = |h: &str| {
                resp.headers()
                    .get(h)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            if (300..400).contains(&status) {
                let Some(loc) = header("location") else {
                    return Ok(Outcome::Fatal(format!(
                        "redirect ({status}) without a Location"
                    )));
                };
                let next = join_location(&at, &loc);
                if host_of(&next) != host_of(&at) {
                    return Ok(Outcome::Fatal(format!(
                        "redirected to another host ({}): refused",
                        host_of(&next)
                    )));
                }
                at = next;
                continue;
            }
            if status == 404 {
                return Ok(Outcome::NotFound);
            }
            if status == 429 || status >= 500 {
                let after = header("retry-after")
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .map(|s| Duration::from_secs(s.min(MAX_RETRY_AFTER_S)));
                return Ok(Outcome::Retry(format!("HTTP {status}"), after));
            }
            if !(200..300).contains(&status) {
                return Ok(Outcome::Fatal(format!("HTTP {status}")));
            }
            if let Some(len) = header("content-length").and_then(|s| s.parse::<u64>().ok())
                && len > self.max_bytes
            {
                return Ok(Outcome::Fatal(self.too_large()));
            }
            let (server_date, etag) = (header("date"), header("etag"));
            let mut body = Tee {
                inner: resp.body_mut().as_reader(),
                hash: Sha256::new(),
                bytes: 0,
                max: self.max_bytes,
            };
            return match consume(&mut body) {
                Ok(value) => Ok(Outcome::Body(
                    value,
                    Meta {
                        url: String::new(),
                        server_date,
                        etag,
                        sha256: hex(&body.hash.finalize()),
                        bytes: body.bytes,
                    },
                )),
                Err(BodyError::Read(m)) => Ok(Outcome::Retry(m, None)),
                Err(BodyError::TooLarge) => Ok(Outcome::Fatal(self.too_large())),
                Err(BodyError::Fatal(m)) => Ok(Outcome::Fatal(m)),
            };
        }
        Ok(Outcome::Fatal(format!(
            "more than {MAX_REDIRECTS} redirects (a loop?)"
        )))
    }

    fn too_large(&self) -> String {
        format!(
            "the body is over the {} MB cap (--max-download)",
            self.max_bytes / 1_000_000
        )
    }
}

impl Meta {
    /// The manifest's record of this file, fetched at `fetched_at`.
    pub fn record(&self, fetched_at: &str) -> super::snapshot::FileRecord {
        super::snapshot::FileRecord {
            url: self.url.clone(),
            fetched_at: fetched_at.to_string(),
            server_date: self.server_date.clone(),
            etag: self.etag.clone(),
            sha256: self.sha256.clone(),
            bytes: self.bytes,
            status: "ok".into(),
        }
    }
}

fn read_all(r: &mut dyn Read) -> std::result::Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    r.read_to_end(&mut body).map_err(|e| io_error(&e))?;
    Ok(body)
}

/// What the server said about a body, and what it was.
#[derive(Debug, Clone)]
pub struct Meta {
    /// The feed's URL as recorded (secrets redacted), not the mirror's.
    pub url: String,
    pub server_date: Option<String>,
    pub etag: Option<String>,
    pub sha256: String,
    pub bytes: u64,
}

/// Why a body could not be consumed.
#[derive(Debug)]
pub enum BodyError {
    /// Reading failed (a cut connection): the call is retried.
    Read(String),
    /// Over the size cap.
    TooLarge,
    /// The body is bad (malformed): no retry.
    Fatal(String),
}

/// A read error of a body as a [`BodyError`]: over the cap, or cut short.
pub fn io_error(e: &std::io::Error) -> BodyError {
    if e.kind() == std::io::ErrorKind::FileTooLarge {
        BodyError::TooLarge
    } else {
        BodyError::Read(format!("the body was cut short: {e}"))
    }
}

/// The body on its way: hashed, counted, and cut at the cap (a read past it fails).
struct Tee<R> {
    inner: R,
    hash: Sha256,
    bytes: u64,
    max: u64,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        if self.bytes > self.max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "over the size cap",
            ));
        }
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

enum Outcome<T> {
    Body(T, Meta),
    NotFound,
    Retry(String, Option<Duration>),
    Fatal(String),
}

fn transport(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => "timed out (--timeout)".into(),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused".into()
        }
        other => other.to_string(),
    }
}

/// `scheme://host[:port]` of a URL.
fn host_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let host = rest.split(['/', '?']).next().unwrap_or("");
    format!("{scheme}://{host}")
}

/// A Location header made absolute against the URL it answered.
fn join_location(base: &str, loc: &str) -> String {
    if loc.contains("://") {
        loc.to_string()
    } else if loc.starts_with('/') {
        format!("{}{loc}", host_of(base))
    } else {
        let dir = base.rsplit_once('/').map_or(base, |x| x.0);
        format!("{dir}/{loc}")
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A URL with the values of its secret query parameters replaced.
pub fn redact_url(url: &str) -> String {
    let Some((head, query)) = url.split_once('?') else {
        return redact(url);
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if SECRET_PARAMS.iter().any(|s| s.eq_ignore_ascii_case(k)) => {
                format!("{k}=REDACTED")
            }
            _ => kv.to_string(),
        })
        .collect();
    redact(&format!("{head}?{}", parts.join("&")))
}

/// Text with the value of every key variable set in the environment replaced.
pub fn redact(text: &str) -> String {
    let mut s = text.to_string();
    for var in KEY_VARS {
        if let Ok(v) = std::env::var(var)
            && v.len() >= 4
        {
            s = s.replace(&v, "REDACTED");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_rule_keeps_host_path_and_query() {
        let c = Client::new(Some("http://127.0.0.1:9/m/"), Duration::from_secs(1), 10).unwrap();
        assert_eq!(
            c.map_url("https://prices.azure.com/api/retail/prices?$filter=x")
                .unwrap(),
            "http://127.0.0.1:9/m/prices.azure.com/api/retail/prices?$filter=x"
        );
        assert_eq!(
            c.map_url("https://prices.azure.com:443/api/retail/prices?$skip=1000")
                .unwrap(),
            "http://127.0.0.1:9/m/prices.azure.com/api/retail/prices?$skip=1000"
        );
        let direct = Client::new(None, Duration::from_secs(1), 10).unwrap();
        assert!(
            direct.map_url("http://example.com/x").is_err(),
            "plain http only from a mirror"
        );
        assert!(Client::new(Some("ftp://x"), Duration::from_secs(1), 10).is_err());
    }

    #[test]
    fn secret_query_values_are_redacted() {
        assert_eq!(
            redact_url("https://cloudbilling.googleapis.com/v1/services?key=abc123&pageSize=5000"),
            "https://cloudbilling.googleapis.com/v1/services?key=REDACTED&pageSize=5000"
        );
    }

    #[test]
    fn redirects_resolve_against_their_base() {
        assert_eq!(join_location("http://h:1/a/b", "/c"), "http://h:1/c");
        assert_eq!(join_location("http://h:1/a/b", "c"), "http://h:1/a/c");
        assert_eq!(host_of("https://a.b/c?d"), "https://a.b");
    }
}
