//! The value commands: `rank`, `report`, `run` (bench then rank), `calibration`.

use super::inputs::*;
use super::measure::interrupted;
use crate::cli::args::{self, Format};
use crate::cli::print_as;
use crate::market::catalog::Catalog;
use crate::measuring::bench;
use crate::report;
use crate::results::ResultsFile;
use crate::value::rank::{self, RankOptions};
use crate::value::scenario::ScenarioFile;
use anyhow::{Context, Result, bail};
use std::process::ExitCode;

/// A warning for each serving result no row was ranked on: what it measured, so the
/// mismatch (GPU, model, lengths, targets) shows.
pub(super) fn unused_serving_results(r: &crate::value::rank::RankReport, opts: &RankOptions) {
    for m in &opts.serving.results {
        let used = r.rows.iter().any(|x| {
            x.serving
                .as_ref()
                .and_then(|s| s.measured.as_deref())
                .is_some_and(|f| f.starts_with(m.file.as_str()))
        });
        if !used {
            warn!(
                "warning: {}: {} on {}x {}, model {:?}, {:.0}/{:.0} tokens: matches no ranked row (the same GPU on a whole number of its servers, model, precision, lengths within 10% and the targets): those rows are estimates",
                m.file,
                m.tool.name(),
                m.gpus,
                m.gpu,
                m.model,
                m.prompt_tokens,
                m.output_tokens
            );
        }
    }
}

pub(super) fn rank_cmd(a: args::RankArgs) -> Result<ExitCode> {
    let mut inputs = Inputs::load(&a.settings)?;
    let generated = job_scenario(&a.job)?;
    let scenario = match &generated {
        Some(s) => s,
        None => inputs.scenarios.get(&a.scenario).context("--scenario")?,
    }
    .clone();
    if a.job.print_scenario {
        let file = ScenarioFile {
            schema_version: crate::value::scenario::SCHEMA_VERSION,
            scenarios: vec![scenario],
        };
        println!("{}", serde_json::to_string_pretty(&file)?);
        return Ok(ExitCode::SUCCESS);
    }
    let serves = Some(scenario.serving.is_some());
    let m = inputs.measured(
        &a.results,
        a.results_on.as_ref(),
        &a.job,
        a.settings.use_failed,
        serves,
    )?;
    if a.job.sweep {
        if scenario.serving.is_none() {
            bail!("--sweep applies to --job llm-serve");
        }
        let checked = inputs.catalog.checked();
        let sweep = crate::value::rank::sweep(&checked, &scenario, &m.results, &inputs.opts)?;
        print_as(&sweep, a.output.format())?;
        return Ok(ExitCode::SUCCESS);
    }
    let checked = inputs.checked(a.settings.skip_bad_rows)?;
    let view = report::rank::View {
        rows: if a.settings.top.is_some() || a.details {
            usize::MAX
        } else {
            report::rank::View::SHORT.rows
        },
        details: a.details,
    };
    if a.side_by_side {
        let levers = crate::value::levers::side_by_side(
            &checked,
            &scenario,
            &m.results,
            &inputs.opts,
            a.utilisation.unwrap_or(100.0) / 100.0,
        )?;
        let side = report::export::SideBySide {
            levers: &levers,
            view,
        };
        print_as(&side, a.output.format())?;
        return Ok(ExitCode::SUCCESS);
    }
    let r = rank::rank(&checked, &scenario, &m.results, &inputs.opts)?;
    unused_serving_results(&r, &inputs.opts);
    let fleet = crate::value::fleet::analyse(&m.results, Some(&inputs.catalog));
    let ranking = report::export::Ranking {
        report: &r,
        fleet: &fleet,
        burns: &m.burns,
        view,
    };
    print_as(&ranking, a.output.format())?;
    // CSV is one table: the fleet's and the burns' notes go to stderr.
    if a.output.format() == Format::Csv {
        for n in ranking.notes() {
            warn!("{n}");
        }
    }
    // Nothing ranks: the report says why, and the exit status says it failed.
    Ok(crate::exit::Status::failed_if(r.rows.is_empty()).into())
}

pub(super) fn report_cmd(a: args::ReportArgs) -> Result<ExitCode> {
    if a.job.sweep {
        bail!("--sweep applies to rank: a report of --job llm-serve always draws the curve");
    }
    let mut inputs = Inputs::load(&a.settings)?;
    let generated = job_scenario(&a.job)?;
    let chosen: Vec<crate::value::scenario::Scenario> = match &generated {
        Some(s) => vec![s.clone()],
        None if a.scenario.is_empty() => inputs.scenarios.scenarios.clone(),
        None => a
            .scenario
            .iter()
            .map(|id| inputs.scenarios.get(id).context("--scenario").cloned())
            .collect::<Result<_>>()?,
    };
    let m = inputs.measured(
        &a.results,
        a.results_on.as_ref(),
        &a.job,
        a.settings.use_failed,
        None,
    )?;
    for line in &m.burns.excluded {
        warn!("burn EXCLUDED: {line}");
    }
    let checked = inputs.checked(a.settings.skip_bad_rows)?;
    let opts = &inputs.opts;
    let ranks = chosen
        .iter()
        .map(|s| rank::rank(&checked, s, &m.results, opts))
        .collect::<Result<Vec<_>>>()?;
    let sweeps = chosen
        .iter()
        .filter(|s| s.serving.is_some())
        .map(|s| rank::sweep(&checked, s, &m.results, opts))
        .collect::<Result<Vec<_>>>()?;
    // Burn-only files are shown (their verdicts) but rank nothing; a failed GPU's bench
    // files are left out of the rankings unless --use-failed.
    let shown: Vec<(String, ResultsFile)> = m.results.iter().chain(&m.burn_only).cloned().collect();
    let (html, md) = report::render_with(&shown, &ranks, &sweeps, &inputs.catalog);
    report::write(&a.out, &html, &md)?;
    say!(
        "report written to {}/report.html and report.md",
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn main_job(a: args::RunArgs) -> Result<ExitCode> {
    // The ranking's inputs are checked before anything is measured.
    let mut inputs = Inputs::load(&a.settings)?;
    inputs.opts.top = Some(a.settings.top.unwrap_or(5));
    let checked = inputs.checked(a.settings.skip_bad_rows)?;
    rank::check_currency(&inputs.catalog, &inputs.opts.currency)?;
    let (c, scenarios, rank_opts) = (&inputs.catalog, &inputs.scenarios, &inputs.opts);
    let mut opts = bench::BenchOptions::quick(a.select.adapter, a.select.backend);
    opts.out = a.out;
    opts.quiet = a.quiet;
    opts.board_power = Some(crate::value::calibration::board_power_w);
    crate::interrupt::install();
    let outcomes = bench::run(&opts)?;
    let mut failed = false;
    let mut results = Vec::new();
    for o in &outcomes {
        say!("{}", report::table::results_short(&o.results));
        say!(
            "results written to {} (timings and notes: gpuvalue show FILE)\n",
            o.path.display()
        );
        failed |= o.any_failed();
        results.push((o.path.display().to_string(), o.results.clone()));
    }
    if let Some(code) = interrupted(&outcomes) {
        return Ok(code);
    }
    // The 2026 question in place of the 7B-at-batch-1 inference scenario: which GPU
    // serves a dense 70B and a MoE model cheapest at a stated interactivity.
    let mut asked: Vec<crate::value::scenario::Scenario> = scenarios
        .scenarios
        .iter()
        .filter(|s| s.id != "inference")
        .cloned()
        .collect();
    asked.extend(crate::value::jobs::main_serving()?);
    let mut ranks = Vec::new();
    for s in &asked {
        let r = rank::rank(&checked, s, &results, rank_opts)?;
        say!("{}", report::rank::table(&r, report::rank::View::SHORT));
        // The full report ranks every instance, not only the top of the short answer.
        let mut all = rank_opts.clone();
        all.top = a.settings.top;
        ranks.push(rank::rank(&checked, s, &results, &all)?);
    }
    // The full report (every row, figure, factor and exclusion) beside the results files.
    if let Some(first) = outcomes.first() {
        let dir = first
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        // Named after the results file: each run keeps its own report.
        let stem = format!(
            "{}-report",
            first.path.file_stem().unwrap_or_default().to_string_lossy()
        );
        let (html, md) = report::render(&results, &ranks, c);
        report::write_as(dir, &stem, &html, &md).with_context(|| {
            format!(
                "the full report beside the results file {}",
                first.path.display()
            )
        })?;
        say!(
            "Full report (every instance, the figures behind each time, the factors, what was \
             not ranked): {} and .md. Estimated figures are datasheet peaks x \
             efficiency: bench a cloud GPU with scripts/bench-gpu.sh and pass its results file \
             to `gpuvalue rank --results FILE` to measure them.",
            dir.join(format!("{stem}.html")).display()
        );
    }
    Ok(crate::exit::Status::failed_if(failed).into())
}

/// `calibration`: every published point recomputed, and every rule's factor refitted.
/// `calibration --serving` and `--fit-serving`.
pub(super) fn serving_calibration_cmd(a: &args::CalibrationArgs) -> Result<ExitCode> {
    use crate::value::serving_calibration as sc;
    let file = sc::PointsFile::embedded();
    let catalog = Catalog::embedded();
    let prepared = sc::prepare_all(&file, &catalog)?;
    let fits = crate::value::scenario::serving::FitFile::embedded();
    if a.fit_serving {
        let new = crate::value::serving_validation::refit(&prepared, &fits);
        println!("{}", serde_json::to_string_pretty(&new)?);
        return Ok(ExitCode::SUCCESS);
    }
    let checked = sc::check(&prepared, &fits);
    let table = report::calibration::Serving {
        summary: sc::summarise(&checked),
        points: a.points.then_some(checked),
        left_out: file.left_out.clone(),
        fits: fits.fits.clone(),
        disaggregated: crate::value::serving_validation::disaggregated(&prepared, &fits),
        cross_validation: crate::value::serving_validation::Grouping::ALL
            .iter()
            .map(|g| crate::value::serving_validation::cross_validate(&prepared, &fits, *g))
            .collect(),
    };
    print_as(&table, a.output.format())?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn calibration_cmd(a: args::CalibrationArgs) -> Result<ExitCode> {
    if a.serving || a.fit_serving {
        return serving_calibration_cmd(&a);
    }
    let cal = crate::value::calibration::CalibrationFile::embedded();
    let table =
        report::calibration::Table::build(&cal, &Catalog::embedded(), &ScenarioFile::embedded())?;
    print_as(&table, a.output.format())?;
    Ok(
        crate::exit::Status::failed_if(!table.all_within(crate::value::calibration::TOLERANCE))
            .into(),
    )
}
