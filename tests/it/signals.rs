//! Ctrl-C at every moment of a run: start-up, adapter creation, the
//! first shader compiles (where LLVM, inside llvmpipe and PoCL, installs its own one-shot
//! SIGINT handler), autotuning, between probes and while saving. Each signal is sent as
//! `timeout -s INT` and a terminal send it: to the process, then at once to its process
//! group, so the run receives the request twice within microseconds. Every run must end
//! with exit status 130, the message, and a results file marked `"interrupted": true`.

use gpuvalue::results::ResultsFile;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_signal_at_any_moment_leaves_a_run_marked_interrupted_with_its_message() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // From before the adapter opens to well into the probes (the quick suite on lavapipe
    // takes about 30 s; its first shaders compile in its first second). A signal in the
    // first milliseconds, before main has parsed the command line, ends the process as it
    // would any program's, with nothing measured: the earliest moment here is 50 ms.
    for (i, ms) in [
        50, 65, 80, 95, 110, 140, 250, 400, 700, 1000, 1500, 2200, 3000, 4000, 5200,
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("r{i}.json"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
            .env(
                "GPUVALUE_HOME",
                std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
            )
            .env("XDG_RUNTIME_DIR", std::env::temp_dir())
            .env("GPUVALUE_RUN_DIR", dir.path().join("runs"))
            .args(["bench", "--quick", "-o"])
            .arg(&path)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let pid = child.id() as i32;
        // SAFETY: signals to our own child and its process group (timeout's two sends).
        unsafe {
            libc::kill(pid, libc::SIGINT);
            libc::kill(-pid, libc::SIGINT);
        }
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "{ms} ms: no exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(
            status.code(),
            Some(130),
            "signal at {ms} ms: {status:?}\n{err}"
        );
        assert!(
            err.contains("interrupted: stopping after the current measurement"),
            "signal at {ms} ms: no message\n{err}"
        );
        assert!(!err.contains("quitting without saving"), "{ms} ms: {err}");
        let r = ResultsFile::load(&path)
            .unwrap_or_else(|e| panic!("signal at {ms} ms: no results file: {e:#}\n{err}"));
        assert!(
            r.interrupted && !r.complete,
            "signal at {ms} ms: the file is not marked interrupted"
        );
    }
}
