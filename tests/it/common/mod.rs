//! Shared test helpers: open the default adapter, and fail (not skip) in CI when none exists.

#![allow(dead_code)]

use gpuvalue::measuring::gpu::{AdapterChoice, BackendChoice, Gpu, Timer, adapter};
use gpuvalue::measuring::probes::matmul::{self, Faults};
use gpuvalue::measuring::probes::measure::Plan;
use gpuvalue::measuring::probes::{self, Ctx, RunCtx};
use gpuvalue::measuring::reference::Dims;
use gpuvalue::results::ProbeResult;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The integration tests are one binary, so every test shares one process and up to one
/// thread a core: a test's GPU runs now meet those of any other file's tests, where each file
/// used to be a process of its own that `cargo test` ran after the last.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A turn of its own for a test whose runs are timed or load the machine for minutes: the
/// burn's verdicts measure steadiness, the hang faults calibrate a spin kernel against the
/// watchdog, the hierarchy test finds cache sizes in latency curves; two such runs sharing
/// the cores would throw each other off. Hold the guard for the whole test. (The long
/// `#[ignore]`d tests all take it, so `-- --ignored` runs them one at a time, as it did
/// when each had a test binary of its own.)
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The variable that tells a child started by `alone` that it is the child.
const ALONE: &str = "GPUVALUE_TEST_ALONE";

/// For a test that needs a process to itself (it measures the process's own memory, or sets
/// its environment): runs `test` (its full name, `module::function`) again in a child of
/// this test binary, by itself, with `env` added to the child's environment, and returns
/// false once the child passed (the test is done). In that child it returns true: the caller
/// goes on with the test's body. The caller holds `one_at_a_time` while the child runs.
pub fn alone(test: &str, env: &[(&str, &std::ffi::OsStr)]) -> bool {
    if std::env::var_os(ALONE).is_some_and(|v| v == test) {
        return true;
    }
    let _turn = one_at_a_time();
    let mut child = std::process::Command::new(std::env::current_exe().expect("this binary"));
    child
        .args([test, "--exact", "--include-ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(ALONE, test);
    for (k, v) in env {
        child.env(k, v);
    }
    let out = child.output().expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A skip is said past the harness's capture, as in the child itself.
    for line in stderr.lines().filter(|l| l.contains(": SKIPPED (")) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    eprintln!("{stderr}");
    assert!(
        out.status.success(),
        "{test}, alone in a child process, failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the child process ran no test named {test}:\n{stdout}"
    );
    false
}

/// The flags every headless Chromium of the tests starts with: no sandbox (CI runs as root),
/// nothing fetched in the background, no first-run or sync UI, no scrollbars in screenshots.
pub const HEADLESS_CHROMIUM: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
];

/// Runs the gpuvalue binary built for these tests with `args` (with a runtime directory, so
/// Vulkan does not warn about a missing one).
pub fn gpuvalue(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gpuvalue"))
        .env(
            "GPUVALUE_HOME",
            std::env::temp_dir().join("gpuvalue-tests-no-snapshots"),
        )
        .args(args)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run gpuvalue")
}

/// Says that the running test skipped, and why, past the harness's output capture
/// (`cargo test` shows a test's `eprintln!` only when it fails, so a skipped GPU test looked
/// like a pass): written straight to the process's stderr, naming the test.
pub fn skipped(why: &str) {
    use std::io::Write;
    let name = std::thread::current().name().unwrap_or("?").to_string();
    let _ = writeln!(
        std::io::stderr(),
        "test {name}: SKIPPED ({why}; set CI=true to make this a failure)"
    );
}

/// True when running under CI (`CI=true`), where a missing adapter is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Opens the default adapter. Outside CI, a machine without any adapter skips the test
/// (returns None, with a note on stderr); under CI=true it panics.
pub fn gpu() -> Option<Gpu> {
    // Keep Vulkan's "XDG_RUNTIME_DIR is invalid" noise out of test logs.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: set once, before any thread of this test reads the environment.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
    // wgpu's adapters only: the OpenCL tests open their device with `opencl()`.
    let list = adapter::enumerate(Some(BackendChoice::Vulkan));
    let list = if list.summaries.is_empty() {
        adapter::enumerate(None)
    } else {
        list
    };
    let wgpu_adapter = list
        .adapters
        .iter()
        .zip(&list.summaries)
        .find_map(|(a, s)| match a {
            adapter::Adapter::Wgpu(a) => Some((a.clone(), s.clone())),
            _ => None,
        });
    match (list.select(&AdapterChoice::Best), wgpu_adapter) {
        (Ok(_), Some((a, s))) => Some(pollster::block_on(Gpu::open(a, s)).expect("open device")),
        (Err(e), _) => {
            if in_ci() {
                panic!("CI=true and no GPU adapter was found, so the GPU tests cannot run: {e}");
            }
            skipped(&format!("no adapter: {e}"));
            None
        }
        (Ok(_), None) => {
            if in_ci() {
                panic!("CI=true and no wgpu adapter was found, so the GPU tests cannot run");
            }
            skipped("no wgpu adapter");
            None
        }
    }
}

/// Opens the first OpenCL device (PoCL here). Outside CI, a machine without one skips the
/// test (None, with a note on stderr); under CI=true it panics, as `gpu()` does.
pub fn opencl() -> Option<gpuvalue::measuring::gpu::opencl::ClGpu> {
    let list = adapter::enumerate(Some(BackendChoice::Opencl));
    match list.adapters.first() {
        Some(adapter::Adapter::OpenCl(d)) => Some(
            gpuvalue::measuring::gpu::opencl::ClGpu::open((**d).clone(), list.summaries[0].clone())
                .expect("open OpenCL device"),
        ),
        _ => {
            let why = format!("no OpenCL device (searched: {})", list.searched);
            if in_ci() {
                panic!(
                    "CI=true and {why}, so the OpenCL tests cannot run (install pocl-opencl-icd)"
                );
            }
            skipped(&why);
            None
        }
    }
}

/// Runs one probe on an OpenCL device with the tiny plan and collects its results.
pub fn run_probe_opencl(
    cl: &gpuvalue::measuring::gpu::opencl::ClGpu,
    probe: &str,
    sizes: Option<Vec<Dims>>,
) -> Vec<ProbeResult> {
    let host = gpuvalue::host::HostInfo::detect();
    let ctx = probes::ClCtx {
        cl,
        run: tiny_run(&host, sizes),
    };
    let mut out = Vec::new();
    let probe = probes::find(probe).expect("a registered probe");
    pollster::block_on(probe.run_opencl(&ctx, &mut |r| out.push(r)));
    out
}

/// A plan for correctness tests: no warm-up, three short samples.
pub fn tiny_plan() -> Plan {
    Plan {
        warmup: Duration::ZERO,
        min_warmup_runs: 1,
        target_sample: Duration::from_millis(2),
        samples: 3,
        max_iters: 8,
        abandon_above_s: None,
    }
}

/// The tiny plan, 2 MiB arrays, a minute's budget: what the GPU tests run probes with, on
/// either executor.
pub fn tiny_run(host: &gpuvalue::host::HostInfo, sizes: Option<Vec<Dims>>) -> RunCtx<'_> {
    RunCtx {
        plan: tiny_plan(),
        quick: true,
        sizes,
        deadline: Instant::now() + Duration::from_secs(60),
        trusted: false,
        host,
        progress: &|_| {},
        array_bytes: Some(2 << 20),
        reduced: Default::default(),
    }
}

/// Runs one probe with the tiny plan (2 MiB arrays) and collects its results.
pub fn run_probe(
    gpu: &Gpu,
    probe: &str,
    sizes: Option<Vec<Dims>>,
    faults: Faults,
) -> Vec<ProbeResult> {
    let timer = Timer::new(gpu, true);
    let host = gpuvalue::host::HostInfo::detect();
    let mut ctx = Ctx::new(gpu, &timer, tiny_run(&host, sizes));
    ctx.faults = faults;
    let mut out = Vec::new();
    let probe = probes::find(probe).expect("a registered probe");
    pollster::block_on(probe.run(&ctx, &mut |r| out.push(r)));
    out
}

/// `f` given the matmul method's wgpu executor on `gpu`: the tiny plan, a minute's budget,
/// one pipeline cache for all `f` runs.
pub fn with_matmul<T>(gpu: &Gpu, f: impl FnOnce(&matmul::OnWgpu<'_, '_>) -> T) -> T {
    let timer = Timer::new(gpu, true);
    let host = gpuvalue::host::HostInfo::detect();
    let ctx = Ctx::new(gpu, &timer, tiny_run(&host, None));
    f(&matmul::OnWgpu::new(&ctx))
}

/// The same adapter opened again with some limits lowered.
pub fn with_limits(gpu: &Gpu, lower: impl FnOnce(&mut wgpu::Limits)) -> Gpu {
    let mut limits = gpu.limits.clone();
    lower(&mut limits);
    pollster::block_on(Gpu::open_with_limits(
        gpu.adapter.clone(),
        gpu.info.clone(),
        limits,
    ))
    .expect("reopen")
}
pub mod feedserver;
