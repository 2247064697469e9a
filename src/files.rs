//! Reading input files with a size bound and writing output files atomically. A leaf: it
//! imports nothing of the crate but the interrupt handler's temp-file list.

use anyhow::{Context, Result, bail};
use std::path::Path;

/// Largest input file read (catalogs, scenarios, results): far above any real one, and a
/// bound on the memory a wrong file can take.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads a whole input file, refusing one over `MAX_INPUT_BYTES`.
pub fn read_bounded(path: &Path, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
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

/// As `read_bounded`, for text: invalid UTF-8 is an error naming the byte offset.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    String::from_utf8(read_bounded(path, what)?).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
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

/// The current time as RFC 3339 UTC, to the second.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
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
    fn atomic_write_into_a_missing_directory_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/r.json");
        let e = format!("{:#}", write_atomic(&p, b"x").unwrap_err());
        assert!(e.contains("no/such/r.json"), "{e}");
    }
}
