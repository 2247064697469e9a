//! The full `--quick` suite twice in one process: after every probe the device memory the
//! allocator holds is back at its baseline (what the timer keeps), no run reports memory
//! left behind, and the process does not grow from the first run to the second (on a
//! software adapter, device memory is process memory). The test binary runs it in a child
//! process of its own (`common::alone`).

use clap::Parser;
use gpuvalue::cli::args::{Cli, Command};

/// Resident set size of this process, where the OS reports it.
fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = s
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[test]
#[ignore = "long: the quick suite twice (about a minute); .ci/run runs it by name (cargo test --release -- --ignored)"]
fn quick_suite_twice_in_one_process_releases_gpu_memory() {
    // The process's own resident memory is measured, and the run registry's directory set
    // in its environment: in a child of the test binary, by itself.
    let registry = tempfile::tempdir().unwrap();
    if !crate::common::alone(
        "memory::quick_suite_twice_in_one_process_releases_gpu_memory",
        &[("GPUVALUE_RUN_DIR", registry.path().join("runs").as_os_str())],
    ) {
        return;
    }
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let out = dir.path().join(name);
        let cli = Cli::try_parse_from(
            ["gpuvalue", "bench", "--quick", "-q", "-o"]
                .map(String::from)
                .into_iter()
                .chain([out.display().to_string()]),
        )
        .unwrap();
        let Some(Command::Bench(args)) = cli.command else {
            unreachable!()
        };
        let outcomes = gpuvalue::measuring::bench::run(&args.options(vec![])).expect("bench runs");
        assert_eq!(outcomes.len(), 1);
        outcomes.into_iter().next().unwrap().results
    };
    let first = run("first.json");
    let rss_first = rss_bytes();
    let second = run("second.json");
    let rss_second = rss_bytes();
    for (which, r) in [("first", &first), ("second", &second)] {
        assert!(r.complete, "{which} run incomplete");
        assert_eq!(
            r.memory.len(),
            r.options.probes.len(),
            "{which}: a memory check after every probe (Vulkan reports allocations)"
        );
        for m in &r.memory {
            assert!(
                m.allocated_bytes <= m.baseline_bytes + (1 << 20),
                "{which} run, {} probe left {} bytes allocated (baseline {})",
                m.probe,
                m.allocated_bytes,
                m.baseline_bytes
            );
        }
        assert!(
            !r.incidents.iter().any(|i| i.kind == "memory_left"),
            "{which}: {:?}",
            r.incidents
        );
    }
    if let (Some(a), Some(b)) = (rss_first, rss_second) {
        let growth = b.saturating_sub(a);
        eprintln!(
            "resident memory after run 1: {} MiB, after run 2: {} MiB",
            a >> 20,
            b >> 20
        );
        assert!(
            growth < 64 << 20,
            "the process grew by {} MiB from the first run to the second",
            growth >> 20
        );
    }
}
