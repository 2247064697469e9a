//! The measuring commands: `devices`, `bench`, `show`, `compare`, `burn`, `transfers`.

use super::catalog::load_catalog;
use crate::cli::args;
use crate::cli::print_as;
use crate::market::catalog::Catalog;
use crate::measuring::bench;
use crate::measuring::gpu::adapter;
use crate::report;
use crate::results::ResultsFile;
use anyhow::{Result, bail};
use std::process::ExitCode;

pub(super) fn devices(a: args::DevicesArgs) -> Result<ExitCode> {
    let list = adapter::enumerate(a.select.backend);
    let chosen = list.select(&a.select.adapter)?;
    let shown: Vec<_> = if a.select.adapter == adapter::AdapterChoice::Best {
        list.summaries.clone()
    } else {
        chosen.iter().map(|&i| list.summaries[i].clone()).collect()
    };
    let devices = report::export::Devices {
        shown: &shown,
        default: list.summaries.first(),
    };
    print_as(&devices, a.output.format())?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn bench_cmd(a: args::BenchArgs) -> Result<ExitCode> {
    crate::interrupt::install();
    let mut opts = a.options(std::env::args().collect());
    opts.instance = bench_instance(&a)?;
    let outcomes = without_new_empty_dir(opts.out.as_deref(), || bench::run(&opts))?;
    let mut failed = false;
    for o in &outcomes {
        say!("{}", report::table::results(&o.results));
        say!("results written to {}", o.path.display());
        failed |= o.any_failed();
    }
    if let Some(m) = &a.metrics {
        let runs: Vec<_> = outcomes.iter().map(|o| &o.results).collect();
        let text = report::metrics::bench(&runs);
        crate::files::write_atomic(m, text.as_bytes())?;
    }
    if let Some(code) = interrupted(&outcomes) {
        return Ok(code);
    }
    if failed {
        warn!("error: at least one probe failed validation or could not run (see the table)");
        return Ok(ExitCode::from(crate::exit::Status::Failed));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--instance`, else `GPUVALUE_INSTANCE`, checked against the catalog (spelled as it is).
fn bench_instance(a: &args::BenchArgs) -> Result<Option<crate::model::InstanceRef>> {
    let Some(want) = &a.instance else {
        return Ok(None);
    };
    let c = load_catalog(&a.catalog)?;
    Ok(Some(
        crate::value::fleet::check_instance(&c, want).map_err(anyhow::Error::msg)?,
    ))
}

/// Runs `f`; when it fails, removes the output directory if `f` created it and left it
/// empty (a refused `--sizes` must not leave an empty `results/` behind).
fn without_new_empty_dir<T>(
    out: Option<&std::path::Path>,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let dir = match out {
        Some(p) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(std::path::Path::to_path_buf),
        None => Some(std::path::PathBuf::from("results")),
    };
    let existed = dir.as_ref().is_none_or(|d| d.exists());
    let result = f();
    if result.is_err()
        && !existed
        && let Some(d) = dir
    {
        // remove_dir removes only an empty directory.
        let _ = std::fs::remove_dir(d);
    }
    result
}

/// After Ctrl-C: says what was kept and gives the exit status of an interrupted run.
pub(super) fn interrupted(outcomes: &[bench::BenchOutcome]) -> Option<ExitCode> {
    if !crate::interrupt::requested() {
        return None;
    }
    for o in outcomes.iter().filter(|o| o.interrupted()) {
        warn!(
            "interrupted: {} finished probe result(s) kept in {} (marked incomplete)",
            o.results.probes.len(),
            o.path.display()
        );
    }
    Some(ExitCode::from(crate::exit::Status::Interrupted))
}

pub(super) fn burn_cmd(a: args::BurnArgs) -> Result<ExitCode> {
    let opts = crate::measuring::burn::BurnOptions {
        adapter: a.select.adapter,
        backend: a.select.backend,
        quick: a.quick,
        duration: a.duration,
        allow_software: a.allow_software,
        quiet: a.quiet,
        inject: a.inject_fault,
        size: a.size,
        vram_mib: a.vram_mib,
        live: a.metrics_port.map(|_| Default::default()),
    };
    crate::measuring::burn::check_options(&opts)?;
    // The endpoint answers from now until the burn's outcome is printed.
    let _server = match (a.metrics_port, &opts.live) {
        (Some(port), Some(live)) => Some(super::metrics_server::serve(port, live.clone())?),
        _ => None,
    };
    if let Some(out) = &a.out {
        crate::measuring::bench::check_writable(out, true)?;
    }
    crate::interrupt::install();
    let quiet = a.quiet || std::env::var_os("CI").is_some();
    let progress = |what: &str| {
        if !quiet {
            warn!("burn: {what}");
        }
    };
    let catalog = Catalog::embedded();
    let calibration = crate::value::calibration::CalibrationFile::embedded();
    let expect = |info: &crate::model::AdapterSummary| {
        crate::value::calibration::burn_expectation(&catalog, &calibration, info)
    };
    let outcomes = crate::measuring::burn::run(&opts, &expect, &progress)?;
    if let Some(out) = &a.out {
        crate::measuring::burn::save(out, &outcomes)?;
    }
    if let Some(m) = &a.metrics {
        let runs: Vec<_> = outcomes.iter().map(|o| (&o.adapter, &o.record)).collect();
        let text = report::metrics::burn(&runs);
        crate::files::write_atomic(m, text.as_bytes())?;
    }
    let burns = report::export::Burns {
        outcomes: outcomes.iter().map(|o| (&o.adapter, &o.record)).collect(),
    };
    print_as(&burns, a.output.format())?;
    Ok(ExitCode::from(
        crate::measuring::burn::worst(&outcomes).status(),
    ))
}

pub(super) fn transfers_cmd(a: args::TransfersArgs) -> Result<ExitCode> {
    let opts = crate::measuring::node_transfers::Options {
        adapter: a.adapter,
        backend: a.backend,
        mib: a.mib,
        runs: a.runs.map(|r| r as usize),
        quick: a.quick,
        allow_software: a.allow_software,
    };
    let quiet = a.quiet || std::env::var_os("CI").is_some();
    let progress = |what: &str| {
        if !quiet {
            warn!("transfers: {what}");
        }
    };
    let t = crate::measuring::node_transfers::run(&opts, &progress)?;
    print_as(&t, a.output.format())?;
    Ok(crate::exit::Status::failed_if(!t.all_passed()).into())
}

pub(super) fn show(a: args::ShowArgs) -> Result<ExitCode> {
    let paths = crate::files::expand_dirs(&a.files)?;
    let files: Vec<(String, ResultsFile)> = paths
        .iter()
        .map(|p| Ok((p.display().to_string(), ResultsFile::load(p)?)))
        .collect::<Result<_>>()?;
    print_as(
        &report::export::Shown {
            files: &files,
            all: a.all,
        },
        a.output.format(),
    )?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn compare_cmd(a: args::CompareArgs) -> Result<ExitCode> {
    // Figures that cannot be true fail the gate (exit 1, each named) rather than the load.
    let base = ResultsFile::load_unchecked(&a.base)?;
    let new = ResultsFile::load_unchecked(&a.new)?;
    if let Some(d) = crate::measuring::compare::adapter_difference(&base, &new)
        && !a.force
    {
        bail!("the files are from different adapters ({d}); rerun with --force to compare anyway");
    }
    let c = crate::measuring::compare::compare(
        &a.base.display().to_string(),
        &base,
        &a.new.display().to_string(),
        &new,
        a.threshold / 100.0,
        a.force,
    );
    print_as(&c, a.output.format())?;
    Ok(crate::exit::Status::failed_if(c.regressions() > 0).into())
}
