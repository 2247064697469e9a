//! Reading input files with a size bound and writing output files atomically. A leaf: it
//! imports nothing of the crate but the interrupt handler's temp-file list.

use anyhow::{Context, Result, bail};
use std::path::Path;

/// Largest input file read (catalogs, scenarios, results): far above any real one, and a
/// bound on the memory a wrong file can take.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads a whole input file, refusing one over `MAX_INPUT_BYTES` and anything that is not
/// a regular file (a FIFO would block the open for ever, a device never ends): checked on
/// the path before opening it, and again on the opened file.
pub fn read_bounded(path: &Path, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    if !meta.is_file() {
        bail!(
            "{}: not a regular file ({}); give the {what} itself",
            path.display(),
            kind_of(&meta.file_type())
        );
    }
    let f = std::fs::File::open(path)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        bail!("{}: not a regular file", path.display());
    }
    let mut data = Vec::new();
    f.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    if data.len() as u64 > MAX_INPUT_BYTES {
        bail!(
            "{}: larger than {} MiB; is this really a {what}?",
            path.display(),
            MAX_INPUT_BYTES >> 20
        );
    }
    Ok(data)
}

/// What kind of file a non-regular file is, for messages.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

/// As `read_bounded`, for text: invalid UTF-8 is an error naming the byte offset. A UTF-8
/// byte order mark is dropped (editors on Windows write one; CSV already accepts it).
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    let text = String::from_utf8(read_bounded(path, what)?).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(strip_bom(&text).to_string())
}

/// `text` without a leading UTF-8 byte order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Parses JSON into `T`, with errors that name the file, the line and the JSON path.
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str, name: &str) -> Result<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        anyhow::anyhow!(
            "{name}: line {}, column {}, at JSON path `{path}`: {inner}",
            inner.line(),
            inner.column()
        )
    })
}

/// Writes `bytes` to `path` atomically (tempfile's `persist`: a temporary file in the same
/// directory, synced, then renamed over the target), so a reader never sees a half-written
/// file. The temporary file is removed if the process is interrupted meanwhile.
#[cfg(not(target_arch = "wasm32"))]
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file path", path.display()))?;
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // A temporary file is private (0600) by default; the file it becomes is an ordinary
    // output, created with the usual mode less the umask, as `File::create` would.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    crate::interrupt::register_temp(tmp.path());
    let tmp_path = tmp.path().to_path_buf();
    let written = tmp
        .write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(anyhow::Error::from)
        .and_then(|()| tmp.persist(path).map(drop).map_err(|e| e.error.into()));
    crate::interrupt::unregister_temp(&tmp_path);
    written.with_context(|| format!("cannot write {}", path.display()))
}

/// Today's date (UTC) as (year, month, day), by the `time` crate's calendar.
pub fn today() -> (i64, u32, u32) {
    let secs = i64::try_from(crate::clock::since_epoch().as_secs()).unwrap_or(i64::MAX);
    let d = time::OffsetDateTime::from_unix_timestamp(secs).map_or(time::Date::MAX, |t| t.date());
    (
        i64::from(d.year()),
        u32::from(u8::from(d.month())),
        u32::from(d.day()),
    )
}

/// Checks an as-of date: `YYYY-MM-DD`, `YYYY-MM` or `YYYY`, a real calendar date from 1990
/// on, and not after today. The error says which of these it is not.
pub fn check_date(s: &str) -> std::result::Result<(), String> {
    let bad = || format!("{s:?} is not a date (expected YYYY-MM-DD, YYYY-MM or YYYY)");
    let parts: Vec<&str> = s.split('-').collect();
    let widths_ok = matches!(parts.as_slice(), [y] | [y, _] | [y, _, _] if y.len() == 4)
        && parts[1..].iter().all(|p| p.len() == 2)
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()));
    if !widths_ok {
        return Err(bad());
    }
    let y: i64 = parts[0].parse().map_err(|_| bad())?;
    let m: u32 = parts
        .get(1)
        .map_or(Ok(1), |p| p.parse())
        .map_err(|_| bad())?;
    let d: u32 = parts
        .get(2)
        .map_or(Ok(1), |p| p.parse())
        .map_err(|_| bad())?;
    // The calendar (months, leap years) is the `time` crate's.
    let month = u8::try_from(m)
        .ok()
        .and_then(|m| time::Month::try_from(m).ok())
        .ok_or_else(|| format!("{s:?}: month {m} does not exist"))?;
    let year = i32::try_from(y).map_err(|_| bad())?;
    let day = u8::try_from(d).map_err(|_| bad())?;
    if time::Date::from_calendar_date(year, month, day).is_err() {
        return Err(format!("{s:?}: day {d} does not exist in month {m}"));
    }
    if y < 1990 {
        return Err(format!(
            "{s:?}: before 1990, not a GPU price or datasheet date"
        ));
    }
    if (y, m, d) > today() {
        let (ty, tm, td) = today();
        return Err(format!(
            "{s:?} is in the future (today is {ty:04}-{tm:02}-{td:02})"
        ));
    }
    Ok(())
}

/// Whole months from a valid as-of date (`YYYY-MM-DD`, `YYYY-MM` or `YYYY`; a month or year
/// alone counts from its end) to today; None when the date does not parse.
pub fn months_ago(s: &str) -> Option<i64> {
    check_date(s).ok()?;
    let mut parts = s.split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next().map_or(Some(12), |p| p.parse().ok())?;
    let (ty, tm, _) = today();
    Some((ty * 12 + i64::from(tm)) - (y * 12 + m))
}

/// `paths` with every directory replaced by its `.json` files (sorted; hidden files left
/// out), so a folder of results from many machines can be given as one argument. A folder
/// without any is an error naming it.
pub fn expand_dirs(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(p)
            .with_context(|| format!("cannot list directory {}", p.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|f| {
                let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
                name.is_some_and(|n| n.ends_with(".json") && !n.starts_with('.')) && f.is_file()
            })
            .collect();
        // Other JSON beside the results (`devices.json` of scripts/device-bench.sh, a
        // summary) is not a results file: left out, and said; a file named on the command
        // line is still read strictly.
        found.retain(|f| {
            let results = looks_like_results(f);
            if !results {
                eprintln!(
                    "note: {}: not a gpuvalue results file (no top-level schema_version and probes), left out",
                    f.display()
                );
            }
            results
        });
        if found.is_empty() {
            bail!(
                "{}: a directory with no results files (*.json) in it",
                p.display()
            );
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// True when `path` holds a JSON object with `schema_version` and `probes` fields (a catalog
/// or a scenarios file has the first, not the second), or cannot be read as JSON at all (then
/// the strict loader says what is wrong with it).
fn looks_like_results(path: &std::path::Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return true;
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(o)) => {
            o.contains_key("schema_version") && o.contains_key("probes")
        }
        Ok(_) => false,
        Err(_) => true,
    }
}

/// The current time as RFC 3339 UTC, to the second.
pub fn now_rfc3339() -> String {
    // A std SystemTime built from the epoch plus a duration never reads the clock itself.
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + crate::clock::since_epoch())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "second");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("r.json")]);
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_gives_an_ordinary_file_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, b"x").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        // Readable by others unless the umask says otherwise (0o022 or 0o002 usually).
        assert!(mode & 0o044 == 0o044 || mode & 0o004 == 0, "mode {mode:o}");
        assert_ne!(mode, 0o600, "left private like a temporary file");
    }

    #[test]
    fn dates_are_checked_for_form_calendar_and_future() {
        let (y, m, d) = today();
        assert!(y >= 2026 && (1..=12).contains(&m) && (1..=31).contains(&d));
        for ok in ["2024-02-29", "2000-02-29", "2026-11", "2025", "1990-01-01"] {
            assert_eq!(check_date(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("2026-13-45", "month 13"),
            ("2025-02-29", "day 29"),
            ("1900-02-29", "day 29"),
            ("2026-04-31", "day 31"),
            ("not a date", "not a date"),
            ("2099-12-31", "future"),
            ("26-1-1", "not a date"),
            ("", "not a date"),
            ("1800-01-01", "1990"),
        ] {
            let e = check_date(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn atomic_write_into_a_missing_directory_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/r.json");
        let e = format!("{:#}", write_atomic(&p, b"x").unwrap_err());
        assert!(e.contains("no/such/r.json"), "{e}");
    }
}
