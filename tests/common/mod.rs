//! Shared test helpers: open the default adapter, and fail (not skip) in CI when none exists.

#![allow(dead_code)]

use gpuvalue::measuring::gpu::{AdapterChoice, BackendChoice, Gpu, Timer, adapter};
use gpuvalue::measuring::probes::matmul::Faults;
use gpuvalue::measuring::probes::measure::Plan;
use gpuvalue::measuring::probes::{self, Ctx, RunCtx};
use gpuvalue::measuring::reference::Dims;
use gpuvalue::results::ProbeResult;
use std::time::{Duration, Instant};

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
