//! Faults, interruptions and concurrent runs, on the default adapter (lavapipe in CI):
//! each injected fault fails its probe with the reason, the run goes on where the device
//! still works, and the results file keeps everything measured; Ctrl-C keeps what finished;
//! two runs never write one file and each notes the other.

use gpuvalue::results::{ResultsFile, Status};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A command for the binary with its own run registry (so that other tests' benches are
/// not seen as concurrent runs).
fn gpuvalue(registry: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpuvalue"));
    c.env(
        "GPUVALUE_HOME",
        std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
    );
    c.env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .env("GPUVALUE_RUN_DIR", registry)
        .stdin(Stdio::null());
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Files left in `dir` whose names mark them as temporary.
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp") || n.starts_with(".gpuvalue"))
                .collect()
        })
        .unwrap_or_default()
}

struct FaultRun {
    out: Output,
    results: ResultsFile,
    took: Duration,
}

/// `bench --quick --probes PROBES --array-mib 8 --inject-fault FAULT` plus `extra`.
fn with_fault(fault: &str, probes: &str, extra: &[&str]) -> Option<FaultRun> {
    crate::common::gpu()?;
    // Fault runs take turns (with the other timed runs): the hang faults calibrate a spin
    // kernel against the watchdog, and two software-adapter runs sharing two cores would
    // throw the calibration off.
    let _serial = crate::common::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let t0 = Instant::now();
    let out = gpuvalue(&dir.path().join("runs"))
        .args([
            "bench",
            "--quick",
            "-q",
            "--array-mib",
            "8",
            "--probes",
            probes,
        ])
        .args(["--inject-fault", fault, "-o"])
        .arg(&path)
        .args(extra)
        .output()
        .expect("run gpuvalue");
    let took = t0.elapsed();
    let results = ResultsFile::load(&path)
        .unwrap_or_else(|e| panic!("{fault}: no readable results file: {e:#}\n{}", stderr(&out)));
    assert!(
        temp_files(dir.path()).is_empty(),
        "{fault}: temporary files left: {:?}",
        temp_files(dir.path())
    );
    Some(FaultRun { out, results, took })
}

/// The run ended normally (exit 1: a probe failed), every probe has results, the probes
/// named `ok` all passed, and `kind` was recorded as an incident.
fn survived(r: &FaultRun, fault: &str, failed_reason: &str, ok: &[&str], incidents: &[&str]) {
    let res = &r.results;
    assert_eq!(r.out.status.code(), Some(1), "{fault}: {}", stderr(&r.out));
    assert!(
        res.complete && !res.interrupted,
        "{fault}: run not complete"
    );
    let failed: Vec<_> = res
        .probes
        .iter()
        .filter(|p| p.status == Status::Failed)
        .collect();
    assert!(
        failed
            .iter()
            .any(|p| p.reason.as_deref().unwrap_or("").contains(failed_reason)),
        "{fault}: no failed probe says `{failed_reason}`: {:#?}",
        res.probes
            .iter()
            .map(|p| (&p.name, p.status, &p.reason))
            .collect::<Vec<_>>()
    );
    assert!(
        failed.iter().all(|p| p.value.is_none()),
        "{fault}: a failed probe carries a figure"
    );
    for probe in ok {
        let mine: Vec<_> = res.probes.iter().filter(|p| p.probe == *probe).collect();
        assert!(!mine.is_empty(), "{fault}: no {probe} results");
        for p in mine {
            assert_eq!(
                p.status,
                Status::Ok,
                "{fault}: {} after the fault: {:?}",
                p.name,
                p.reason
            );
        }
    }
    for kind in incidents {
        assert!(
            res.incidents.iter().any(|i| i.kind == *kind),
            "{fault}: no `{kind}` incident in {:?}",
            res.incidents
        );
    }
}

#[test]
fn out_of_memory_fails_the_allocating_probe_and_the_run_goes_on() {
    let Some(r) = with_fault("oom@transfer", "transfer,latency", &[]) else {
        return;
    };
    survived(
        &r,
        "oom",
        "out of memory allocating buffer",
        &["latency"],
        &[],
    );
}

#[test]
fn a_kernel_the_adapter_rejects_fails_only_what_needs_it() {
    let Some(r) = with_fault("compile@latency", "latency,transfer", &[]) else {
        return;
    };
    // The first latency figure needed the rejected kernel; the second builds its own.
    survived(
        &r,
        "compile",
        "building kernel 'latency' (injected fault)",
        &["transfer"],
        &[],
    );
    let ok_latency = r
        .results
        .probes
        .iter()
        .filter(|p| p.probe == "latency" && p.status == Status::Ok)
        .count();
    assert_eq!(ok_latency, 1);
}

#[test]
fn a_lost_device_is_reopened_for_the_next_probe() {
    let Some(r) = with_fault("lost@transfer", "transfer,latency", &[]) else {
        return;
    };
    survived(
        &r,
        "lost",
        "device lost",
        &["latency"],
        &["device_lost", "reopened"],
    );
}

#[test]
fn a_panicking_probe_is_contained() {
    let Some(r) = with_fault("panic@transfer", "transfer,latency", &[]) else {
        return;
    };
    survived(
        &r,
        "panic",
        "the probe panicked: injected fault",
        &["latency"],
        &["panic", "reopened"],
    );
}

#[test]
fn the_watchdog_stops_a_dispatch_that_does_not_finish() {
    let Some(r) = with_fault("hang@latency", "latency,transfer", &["--wait-timeout", "1"]) else {
        return;
    };
    survived(
        &r,
        "hang",
        "watchdog: submitted GPU work had not finished after 1 s",
        &["transfer"],
        &["watchdog", "drained"],
    );
    // Buffers the stopped probe had filled but never used are released once the device has
    // drained (they used to stay until the next submission and look like a leak).
    assert!(
        !r.results.incidents.iter().any(|i| i.kind == "memory_left"),
        "{:?}",
        r.results.incidents
    );
}

#[test]
fn a_device_that_never_drains_ends_the_run_without_hanging() {
    let Some(r) = with_fault(
        "stuck@latency",
        "latency,transfer",
        &["--wait-timeout", "0.5"],
    ) else {
        return;
    };
    survived(&r, "stuck", "watchdog", &[], &["watchdog", "unresponsive"]);
    let transfer = r
        .results
        .probes
        .iter()
        .find(|p| p.probe == "transfer")
        .expect("a transfer entry");
    assert_eq!(transfer.status, Status::Skipped);
    assert!(
        transfer
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("did not finish"),
        "{:?}",
        transfer.reason
    );
    // The stuck kernel runs for 15 s; the run gives up after the watchdog (0.5 s) and the
    // drain (2.5 s), well before it.
    assert!(r.took < Duration::from_secs(12), "took {:?}", r.took);
}

#[test]
fn the_probe_timeout_bounds_a_whole_probe() {
    let Some(r) = with_fault(
        "hang@latency",
        "latency,transfer",
        &["--probe-timeout", "1"],
    ) else {
        return;
    };
    // The hang lasts 3x the (default 60 s) wait timeout: only the probe timeout can stop it.
    survived(
        &r,
        "probe-timeout",
        "watchdog: the probe was still waiting on the GPU 1 s after it started",
        &[],
        &["watchdog"],
    );
}

#[test]
fn a_fault_with_nothing_to_act_on_is_reported_not_silently_passed() {
    // The transfer probe builds no pipeline: the compile fault cannot fire there.
    let Some(r) = with_fault("compile@transfer", "transfer,latency", &[]) else {
        return;
    };
    assert_eq!(r.out.status.code(), Some(0), "{}", stderr(&r.out));
    assert!(
        r.results
            .incidents
            .iter()
            .any(|i| i.kind == "fault_not_fired" && i.probe == "transfer"),
        "{:?}",
        r.results.incidents
    );
}

#[test]
fn bad_fault_and_timeout_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (vec!["--inject-fault", "melt@matmul"], "unknown fault"),
        (vec!["--inject-fault", "oom@gpu"], "unknown probe"),
        (vec!["--inject-fault", "oom"], "KIND@PROBE"),
        (
            vec!["--probes", "latency", "--inject-fault", "lost@matmul"],
            "not in --probes",
        ),
        (vec!["--wait-timeout", "0"], "--wait-timeout"),
        (vec!["--probe-timeout=-3"], "--probe-timeout"),
    ] {
        let out = gpuvalue(dir.path())
            .args(["bench", "--quick", "-q", "-o"])
            .arg(dir.path().join("x.json"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        assert!(!dir.path().join("x.json").exists());
    }
}

/// Waits until `path` is a results file holding at least `n` probe results.
fn wait_for_results(child: &mut Child, path: &Path, n: usize, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if let Ok(r) = ResultsFile::load(path)
            && r.probes.len() >= n
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn wait_with_limit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("gpuvalue did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_keeps_the_finished_probes_marked_incomplete() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("runs");
    let path = dir.path().join("r.json");
    let mut child = gpuvalue(&registry)
        .args(["bench", "--quick", "-q", "--array-mib", "16"])
        .args(["--probes", "stream,transfer,latency", "-o"])
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_for_results(&mut child, &path, 1, Duration::from_secs(120)),
        "no probe finished"
    );
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let t0 = Instant::now();
    let exit = wait_with_limit(&mut child, Duration::from_secs(30));
    let waited = t0.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(exit.code(), Some(130), "{err}");
    assert!(err.contains("marked incomplete"), "{err}");
    let r = ResultsFile::load(&path).expect("results kept");
    assert!(r.interrupted && !r.complete);
    assert!(!r.probes.is_empty());
    // Only finished figures are kept: nothing cut short is reported as a failure.
    assert!(
        r.probes.iter().all(|p| p.status == Status::Ok),
        "{:?}",
        r.probes
            .iter()
            .map(|p| (&p.name, p.status, &p.reason))
            .collect::<Vec<_>>()
    );
    assert!(
        !r.probes.iter().any(|p| p.probe == "latency"),
        "the run went on after Ctrl-C"
    );
    assert!(
        temp_files(dir.path()).is_empty(),
        "{:?}",
        temp_files(dir.path())
    );
    // The run's registry entry and output lock are gone.
    let left: Vec<PathBuf> = std::fs::read_dir(&registry)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    // Stopping takes at most the current sample, not the rest of the probe.
    assert!(waited < Duration::from_secs(10), "took {waited:?} to stop");
    // `show` says so (on a line the heading may wrap, with a hanging indent, wherever the
    // host's CPU name and the version leave the break).
    let out = gpuvalue(&registry).arg("show").arg(&path).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .replace("\n  ", " ")
            .contains("INCOMPLETE run (interrupted)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn concurrent_runs_never_share_a_file_and_each_notes_the_other() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("runs");
    let a_path = dir.path().join("a.json");
    let bench = |out: &Path, probes: &str| {
        let mut c = gpuvalue(&registry);
        c.args([
            "bench",
            "--quick",
            "-q",
            "--array-mib",
            "16",
            "--probes",
            probes,
        ])
        .arg("-o")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        c
    };
    let mut a = bench(&a_path, "stream,latency").spawn().unwrap();
    assert!(
        wait_for_results(&mut a, &a_path, 0, Duration::from_secs(60)),
        "first run did not start"
    );
    // A second run on the same file is refused while the first is writing it.
    let same = bench(&a_path, "latency").output().unwrap();
    assert_eq!(same.status.code(), Some(2));
    assert!(
        stderr(&same).contains("another gpuvalue bench") && stderr(&same).contains("a.json"),
        "{}",
        stderr(&same)
    );
    // A second run on another file goes ahead, and both record the overlap. It runs long
    // enough (two probes) for the first run's watcher, which looks every 500 ms, to see it
    // even on a loaded machine: a lone latency probe was once over between two looks.
    let b_path = dir.path().join("b.json");
    let b = bench(&b_path, "stream,latency").output().unwrap();
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    let a_exit = wait_with_limit(&mut a, Duration::from_secs(180));
    assert_eq!(a_exit.code(), Some(0));
    let ra = ResultsFile::load(&a_path).unwrap();
    let rb = ResultsFile::load(&b_path).unwrap();
    assert_eq!(rb.concurrent_runs.len(), 1, "{:?}", rb.concurrent_runs);
    assert_eq!(rb.concurrent_runs[0].pid, a.id());
    assert!(ra.concurrent_runs.iter().any(|o| o.out.ends_with("b.json")));
    for r in [&ra, &rb] {
        assert!(
            r.probes.iter().any(|p| p
                .warnings
                .iter()
                .any(|w| w.contains("another gpuvalue bench"))),
            "no figure carries the warning"
        );
    }
}

#[test]
fn runs_started_together_get_distinct_default_files() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("runs");
    let start = || {
        gpuvalue(&registry)
            .current_dir(dir.path())
            .args(["bench", "--quick", "-q", "--probes", "latency"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut kids = [start(), start(), start()];
    for k in &mut kids {
        assert_eq!(wait_with_limit(k, Duration::from_secs(120)).code(), Some(0));
    }
    let files: Vec<_> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    for f in &files {
        let r = ResultsFile::load(f).unwrap();
        assert!(r.complete);
    }
}

#[test]
fn an_unusable_run_registry_warns_but_does_not_stop_the_bench() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A file where the registry directory should be: it cannot be created.
    let not_a_dir = dir.path().join("registry");
    std::fs::write(&not_a_dir, b"").unwrap();
    let path = dir.path().join("r.json");
    let out = gpuvalue(&not_a_dir)
        .args(["bench", "--quick", "-q", "--probes", "latency", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not locked against other runs")
            && stderr(&out).contains("will not be detected"),
        "{}",
        stderr(&out)
    );
    assert!(ResultsFile::load(&path).unwrap().complete);
}
