//! What each command does, on top of the library: the glue between parsed options and
//! the stages (bench, catalog, rank, report). Returns the process exit code.

use crate::cli::args::{self, Command, Format};
use crate::market::catalog::{Catalog, Severity};
use crate::measuring::bench;
use crate::measuring::gpu::adapter;
use crate::report;
use crate::results::ResultsFile;
use crate::value::rank::{self, Filters, RankOptions};
use crate::value::scenario::ScenarioFile;
use anyhow::{Context, Result, bail};

/// Prints a line (or lines) on standard output as every command's text output is printed:
/// names from files escaped for the terminal, prose wrapped to its width (tables come
/// fitted already).
macro_rules! say {
    ($($t:tt)*) => {
        println!("{}", $crate::report::term::wrap(&$crate::text::term_text(&format!($($t)*))))
    };
}

/// [`say!`] on standard error: warnings, notes and progress. Wrapped only where standard
/// error is a terminal: in a log, one message stays one line for grep.
macro_rules! warn {
    ($($t:tt)*) => {
        eprintln!("{}", $crate::cli::app::stderr_text(&format!($($t)*)))
    };
}

/// A message for standard error: escaped for the terminal, wrapped to its width when
/// standard error is one, or to `$COLUMNS` when the user set it (a width asked for is a
/// width kept, in a pipe too); otherwise to 100 columns, broken only at spaces, so a script
/// joins a message back into one line by reading `\n  ` as a space.
pub fn stderr_text(s: &str) -> String {
    let s = crate::text::term_text(s);
    let asked = std::env::var("COLUMNS").is_ok_and(|c| c.trim().parse::<usize>().is_ok());
    if console::Term::stderr().is_term() || asked {
        report::term::wrap(&s)
    } else {
        report::term::wrap_at_spaces(&s)
    }
}
use std::process::ExitCode;

pub fn run(command: Option<Command>) -> Result<ExitCode> {
    match command {
        Some(Command::Devices(a)) => devices(a),
        Some(Command::Bench(a)) => bench_cmd(a),
        Some(Command::Show(a)) => show(a),
        Some(Command::Catalog(a)) => catalog(a),
        Some(Command::Rank(a)) => rank_cmd(a),
        Some(Command::Run(a)) => main_job(a),
        Some(Command::Compare(a)) => compare_cmd(a),
        Some(Command::Report(a)) => report_cmd(a),
        Some(Command::Calibration(a)) => calibration_cmd(a),
        Some(Command::Burn(a)) => burn_cmd(a),
        Some(Command::Transfers(a)) => transfers_cmd(a),
        // No command: `run` with its defaults, as clap would parse them.
        None => match <args::Cli as clap::Parser>::parse_from(["gpuvalue", "run"]).command {
            Some(Command::Run(a)) => main_job(a),
            _ => unreachable!("`gpuvalue run` parses as the run command"),
        },
    }
}

fn devices(a: args::DevicesArgs) -> Result<ExitCode> {
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

/// Prints a subject in the format asked for (through the one output interface).
fn print_as<E: report::export::Export>(e: &E, f: Format) -> Result<()> {
    print!("{}", report::export::render(e, f)?);
    Ok(())
}

fn bench_cmd(a: args::BenchArgs) -> Result<ExitCode> {
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
    if let Some(code) = interrupted(&outcomes) {
        return Ok(code);
    }
    if failed {
        warn!("error: at least one probe failed validation or could not run (see the table)");
        return Ok(ExitCode::from(1));
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
fn interrupted(outcomes: &[bench::BenchOutcome]) -> Option<ExitCode> {
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
    Some(ExitCode::from(crate::interrupt::EXIT_CODE))
}

fn burn_cmd(a: args::BurnArgs) -> Result<ExitCode> {
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
    };
    crate::measuring::burn::check_options(&opts)?;
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
        save_burns(out, &outcomes)?;
    }
    let burns = report::export::Burns {
        outcomes: outcomes.iter().map(|o| (&o.adapter, &o.record)).collect(),
    };
    print_as(&burns, a.output.format())?;
    Ok(ExitCode::from(
        crate::measuring::burn::worst(&outcomes).exit_code(),
    ))
}

fn transfers_cmd(a: args::TransfersArgs) -> Result<ExitCode> {
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
    Ok(if t.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One results file per GPU (the adapter's index before the extension when several).
fn save_burns(
    out: &std::path::Path,
    outcomes: &[crate::measuring::burn::BurnOutcome],
) -> Result<()> {
    let host = crate::host::HostInfo::detect();
    for o in outcomes {
        let path = if outcomes.len() > 1 {
            let stem = out.file_stem().unwrap_or_default().to_string_lossy();
            out.with_file_name(format!("{stem}-{}.json", o.adapter.index))
        } else {
            out.to_path_buf()
        };
        let options = crate::results::RunOptions {
            quick: o.record.mode == "quick",
            probes: Vec::new(),
            sizes: None,
            array_mib: None,
            time_budget_s: o.record.planned_s,
            trusted_shaders: true,
            timestamps: false,
            args: std::env::args().collect(),
        };
        let mut file = ResultsFile::new(host.clone(), o.adapter.clone(), options);
        file.complete = o.record.complete;
        file.interrupted = !o.record.complete;
        file.burn = Some(o.record.clone());
        file.save(&path)?;
    }
    Ok(())
}

fn show(a: args::ShowArgs) -> Result<ExitCode> {
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

/// The catalog the options name: the embedded one with the snapshots' prices, replaced by
/// `--catalog`, extended by each `--catalog-add` (JSON, or CSV with `--csv-as-of`).
///
/// The snapshots are, per source, the current one `catalog update` took, else the one built
/// into the binary; `--offline` uses only the built-in ones, `--catalog` none.
pub fn load_catalog(src: &args::CatalogSource) -> Result<Catalog> {
    let sources = crate::market::catalog::load::Sources {
        catalog: src.catalog.as_deref(),
        add: &src.catalog_add,
        csv_as_of: src.csv_as_of.as_deref(),
    };
    if src.catalog.is_some() {
        return sources.load();
    }
    let home = if src.offline {
        None
    } else {
        Some(crate::market::feeds::snapshot::home()?)
    };
    let (mut c, from) =
        crate::market::feeds::merge::with_snapshots(Catalog::embedded(), home.as_deref())?;
    for f in c.load_findings.iter().filter(|f| f.path == "current") {
        warn!("warning: {}", f.message);
    }
    c.prices_from = from;
    sources.load_onto(c)
}

fn filters(f: &args::FilterArgs) -> Result<Filters> {
    Ok(Filters {
        provider: f.provider.clone(),
        gpu: f.gpu.clone(),
        region: f.region.clone(),
        min_gpu_memory_gb: f.min_gpu_memory,
        gpu_exact: None,
    })
}

fn catalog(a: args::CatalogArgs) -> Result<ExitCode> {
    if let Some(args::CatalogAction::Update(u)) = &a.action {
        return catalog_update(u);
    }
    if let Some(args::CatalogAction::Check { file, csv_as_of }) = &a.action {
        return match file {
            Some(file) => catalog_check(file, csv_as_of.as_deref()),
            None => {
                let c = load_catalog(&a.source)?;
                let (rows, gpus) = (c.instances.len(), c.gpus.len());
                print_check_all(&c, rows, gpus)
            }
        };
    }
    let c = load_catalog(&a.source)?;
    let currency = crate::market::catalog::currency_code(&a.currency);
    if !c.currencies.contains_key(&currency) {
        bail!(
            "--currency {}: no exchange rate in the catalog (have {}; RMB means CNY)",
            a.currency,
            c.currencies.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut c = c;
    // A feed's rows that cannot rank (a GPU without a datasheet entry yet, a flagged price)
    // are hundreds: left out of the listing and counted; `catalog check` lists each.
    let prefix = crate::market::feeds::merge::SNAPSHOT_PREFIX;
    let mut keep = vec![true; c.instances.len()];
    for x in c.check().iter().filter(|x| x.severity == Severity::Error) {
        if let Some(i) = x.instance
            && x.file.starts_with(prefix)
        {
            keep[i] = false;
        }
    }
    let left_out = keep.iter().filter(|k| !**k).count();
    crate::market::feeds::merge::retain_rows(&mut c, &keep);
    let findings = c.check();
    let f = filters(&a.filters)?;
    if let Some(e) = f.unmatched(&c) {
        bail!(e);
    }
    let rows = report::catalog::rows(&c, &findings, &f, a.price, &currency)?;
    let listing = report::export::CatalogListing {
        rows: &rows,
        catalog: &c,
        selected: &c.subset(&f),
        currency: &currency,
    };
    print_as(&listing, a.output.format())?;
    if a.output.format() == Format::Table {
        for x in findings.iter().filter(|x| x.severity == Severity::Error) {
            warn!("{x}");
        }
        if left_out > 0 {
            warn!(
                "note: {left_out} feed rows left out: no GPU datasheet yet, or a flagged price (catalog check)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `catalog update`: fetch the feeds, gate and write the snapshots (or `--list` them).
fn catalog_update(u: &args::UpdateArgs) -> Result<ExitCode> {
    let say = |s: &str| say!("{s}");
    if u.list {
        crate::market::feeds::update::list(&say)?;
        return Ok(ExitCode::SUCCESS);
    }
    let opts = crate::market::feeds::update::Options {
        sources: u.sources.clone(),
        mirror: u.mirror.clone(),
        timeout: std::time::Duration::from_secs(u.timeout),
        max_bytes: crate::market::feeds::update::max_bytes(u.max_download)?,
        force: u.force,
    };
    crate::market::feeds::update::run(&opts, &say)
}

/// `catalog check` without a file: the catalog commands use (embedded, with the current
/// snapshots' prices), every finding of every file.
fn print_check_all(c: &Catalog, rows: usize, gpus: usize) -> Result<ExitCode> {
    let from = c
        .prices_from
        .clone()
        .unwrap_or_else(|| crate::market::catalog::EMBEDDED_NAME.to_string());
    // Which GPUs have specs only (`catalog check` once counted 25, the
    // listing showed 17): they serve calibration points, results files and --catalog-add rows.
    let rented: std::collections::BTreeSet<&str> =
        c.instances.iter().map(|i| i.gpu.as_str()).collect();
    let spec_only: Vec<&str> = c
        .gpus
        .iter()
        .map(|g| g.id.as_str())
        .filter(|id| !rented.contains(id))
        .collect();
    let gpus = if spec_only.is_empty() {
        format!("{gpus} GPUs")
    } else {
        format!(
            "{gpus} GPUs ({} rented by an instance here; {} with specs only, for calibration points, results files and --catalog-add rows: {})",
            gpus - spec_only.len(),
            spec_only.len(),
            spec_only.join(", ")
        )
    };
    let errors = print_findings(&c.check(), &from, rows, &gpus);
    // Flagged snapshot rows only stay out of rankings: not a failed check.
    Ok(if errors > 0 && c.prices_from.is_none() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints each finding as its own paragraph (as a compiler prints diagnostics), a warning
/// repeated over rows once, and a one-line summary, whatever the name's length; gives the number of errors.
fn print_findings(
    findings: &[crate::market::catalog::Finding],
    name: &str,
    rows: usize,
    gpus: &str,
) -> usize {
    // One finding a paragraph, fitted to the terminal (100 columns through a pipe); a
    // warning repeated word for word over rows is one paragraph naming them.
    for line in report::catalog::finding_lines(findings) {
        println!(
            "{}",
            report::term::wrap_at_spaces(&crate::text::term_text(&line))
        );
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    println!(
        "{}",
        report::term::wrap_at_spaces(&crate::text::term_text(&format!(
            "{name}: {rows} instance rows, {gpus}: {errors} error(s), {} warning(s)",
            findings.len() - errors
        )))
    );
    errors
}

/// `catalog check FILE`: a CSV or a fragment (no currencies or no GPUs of its own) is
/// checked merged with the embedded catalog, as `--catalog-add` would use it; only the
/// file's own findings are shown, with its own row indices.
fn catalog_check(file: &std::path::Path, csv_as_of: Option<&str>) -> Result<ExitCode> {
    let name = file.display().to_string();
    let (c, rows, gpus) = crate::market::catalog::load::for_check(file, csv_as_of)?;
    print_check(&c, &name, rows, gpus)
}

/// Prints the findings of `c` that belong to the file `name` (a CSV's in line order) and a
/// summary; exit status 1 when there are errors.
fn print_check(c: &Catalog, name: &str, rows: usize, gpus: usize) -> Result<ExitCode> {
    let mut findings: Vec<_> = c.check().into_iter().filter(|f| f.file == name).collect();
    // A CSV's findings in the order of its lines (JSON paths have none: order kept).
    findings.sort_by_key(|f| crate::market::catalog::csv_import::line_of(&f.path));
    let errors = print_findings(&findings, name, rows, &format!("{gpus} GPUs"));
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Errors in the user's own catalog files stop a ranking (unless `skip`): not the embedded
/// catalog's, not a snapshot's, and not a row whose accelerator simply has no spec entry, is
/// another GPU under a lookalike name, or is no GPU (a SkyPilot file of a cloud renting B200s and TPUs is not a bad file: those rows
/// are counted, and `--details` lists them as not ranked).
fn refuse_bad_user_rows(checked: &crate::market::catalog::Checked<'_>, skip: bool) -> Result<()> {
    use crate::market::catalog::{MISMATCH_GPU, NOT_GPU, UNSPECIFIED_GPU};
    let not_data_error = |f: &crate::market::catalog::Finding| {
        f.instance.is_some_and(|i| {
            let g = &checked.catalog.instances[i].gpu;
            [UNSPECIFIED_GPU, NOT_GPU, MISMATCH_GPU]
                .iter()
                .any(|p| g.starts_with(p))
        })
    };
    let bad: Vec<String> = checked
        .findings
        .iter()
        .filter(|f| {
            f.severity == Severity::Error
                && f.file != crate::market::catalog::EMBEDDED_NAME
                && !f
                    .file
                    .starts_with(crate::market::feeds::merge::SNAPSHOT_PREFIX)
                && !not_data_error(f)
        })
        .map(|f| f.to_string())
        .collect();
    if bad.is_empty() || skip {
        return Ok(());
    }
    bail!(
        "{} error(s) in the given catalog files (rerun with --skip-bad-rows to rank without those rows):\n{}",
        bad.len(),
        bad.join("\n")
    )
}

/// The paths, each file once: the same file given twice (under any spelling) would count
/// its figures twice in the medians, so the repeat is dropped with a warning.
/// The results files (and folders of them) given, each warning said on stderr.
fn load_results(paths: &[std::path::PathBuf]) -> Result<Vec<(String, ResultsFile)>> {
    ResultsFile::load_all(paths, |w| warn!("warning: {w}"))
}

/// The --results given: gpuvalue's results files (and folders of them), and the serving
/// results of vLLM, SGLang or InferenceX among the files (their GPUs from `on` where the
/// file does not say; a GPU not in the catalog is refused).
fn split_results(
    paths: &[std::path::PathBuf],
    on: Option<&crate::value::serving_results::On>,
    catalog: &Catalog,
) -> Result<(
    Vec<std::path::PathBuf>,
    Vec<crate::value::serving_results::Measured>,
)> {
    let mut ours = Vec::new();
    let mut serving = Vec::new();
    for p in paths {
        if p.is_file() {
            let text = crate::files::read_text(p, "results file")?;
            if crate::value::serving_results::looks_like_serving(&text) {
                for mut m in
                    crate::value::serving_results::parse(&text, &p.display().to_string(), on)?
                {
                    if catalog.gpu(&m.gpu).is_none() {
                        // A product name ("NVIDIA L40S") as the catalog's names know it.
                        match crate::market::catalog::names::resolve(
                            &m.gpu,
                            None,
                            m.gpus,
                            &catalog.gpus,
                        ) {
                            crate::market::catalog::names::Resolved::Gpu { id, .. } => m.gpu = id,
                            _ => bail!(
                                "{}: GPU {:?} is not a catalog GPU (`gpuvalue catalog` lists them); --results-on GPUSxGPU states it",
                                p.display(),
                                m.gpu
                            ),
                        }
                    }
                    serving.push(m);
                }
                continue;
            }
        }
        ours.push(p.clone());
    }
    Ok((ours, serving))
}

/// The rank options (their bounds are checked by clap's value parsers).
fn rank_options(s: &args::RankSettings) -> Result<RankOptions> {
    Ok(RankOptions {
        pricing: s.price,
        currency: crate::market::catalog::currency_code(&s.currency),
        top: s.top,
        budget: s.budget,
        filters: filters(&s.filters)?,
        include_reported: s.include_reported,
        use_implausible: s.use_implausible,
        checkpointing: crate::market::catalog::spot::Checkpointing {
            every_hours: s.checkpoint_every,
            restart_hours: s.restart_time,
        },
        nodes: s.nodes,
        egress_gb: s.egress_gb,
        serving: crate::value::rank::ServingOptions::default(),
    })
}

/// A warning for each serving result no row was ranked on: what it measured, so the
/// mismatch (GPU, model, lengths, targets) shows.
fn unused_serving_results(r: &crate::value::rank::RankReport, opts: &RankOptions) {
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

/// The scenario of `--job` with its parameters; None without `--job`.
fn job_scenario(j: &args::JobArgs) -> Result<Option<crate::value::scenario::Scenario>> {
    let Some(kind) = j.job else {
        return Ok(None);
    };
    let mut model = match &j.model_config {
        Some(path) => crate::value::jobs::model_config(path)?,
        None => crate::value::jobs::preset(&j.model)?,
    };
    if let Some(p) = j.model_params {
        if !(p.is_finite() && (1e6..=1e13).contains(&p)) {
            bail!("--model-params {p}: expected a number of parameters from 1e6 to 1e13");
        }
        if model.is_moe() || model.source.is_some() {
            bail!(
                "--model-params scales the Llama presets' shape; {} comes with its own (give another config.json with --model-config)",
                model.prose()
            );
        }
        model = model.with_params(p);
    }
    Ok(Some(match kind {
        args::JobKind::LlmFinetune => crate::value::jobs::Finetune {
            model,
            tokens: j.tokens,
            method: j.method,
            seq_len: j.seq_len,
            compute: j.precision.unwrap_or(crate::value::jobs::Precision::Fp16),
        }
        .scenario()?,
        args::JobKind::LlmServe => crate::value::jobs::Serve {
            model,
            precision: j.precision,
            requests: j.requests,
            prompt_tokens: j.prompt_tokens,
            output_tokens: j.output_tokens,
            concurrency: j.concurrency,
            interactivity: j.interactivity,
            ttft_s: j.ttft_s,
            parallel: j.parallel,
            rate: j.request_rate.or(j.token_rate.map(|t| t / j.output_tokens)),
        }
        .scenario()?,
    }))
}

fn rank_cmd(a: args::RankArgs) -> Result<ExitCode> {
    let c = load_catalog(&a.settings.source)?;
    let scenarios = ScenarioFile::with_user(a.settings.scenarios.as_deref())?;
    let generated = job_scenario(&a.job)?;
    let scenario = match &generated {
        Some(s) => s,
        None => scenarios.get(&a.scenario).context("--scenario")?,
    };
    if a.job.print_scenario {
        let file = ScenarioFile {
            schema_version: crate::value::scenario::SCHEMA_VERSION,
            scenarios: vec![scenario.clone()],
        };
        println!("{}", serde_json::to_string_pretty(&file)?);
        return Ok(ExitCode::SUCCESS);
    }
    let (ours, measured) = split_results(&a.results, a.results_on.as_ref(), &c)?;
    if !measured.is_empty() && scenario.serving.is_none() {
        bail!("--results: serving results (vLLM, SGLang, InferenceX) apply to --job llm-serve");
    }
    let (results, burns) =
        crate::value::fleet::burn_gate(load_results(&ours)?, a.settings.use_failed);
    let mut opts = rank_options(&a.settings)?;
    opts.serving = crate::value::rank::ServingOptions {
        results: measured,
        api_price: a.job.api_price,
    };
    if a.job.sweep {
        if scenario.serving.is_none() {
            bail!("--sweep applies to --job llm-serve");
        }
        let checked = c.checked();
        let sweep = crate::value::rank::sweep(&checked, scenario, &results, &opts)?;
        print_as(&sweep, a.output.format())?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(e) = opts.filters.unmatched(&c) {
        bail!(e);
    }
    let checked = c.checked();
    refuse_bad_user_rows(&checked, a.settings.skip_bad_rows)?;
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
            scenario,
            &results,
            &opts,
            a.utilisation.unwrap_or(100.0) / 100.0,
        )?;
        print_as(
            &report::export::SideBySide {
                levers: &levers,
                view,
            },
            a.output.format(),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let r = rank::rank(&checked, scenario, &results, &opts)?;
    unused_serving_results(&r, &opts);
    let fleet = crate::value::fleet::analyse(&results, Some(&c));
    let ranking = report::export::Ranking {
        report: &r,
        fleet: &fleet,
        burns: &burns,
        view,
    };
    print_as(&ranking, a.output.format())?;
    // CSV is one table: the fleet's and the burns' notes go to stderr.
    if a.output.format() == Format::Csv {
        for n in ranking.notes() {
            warn!("{n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn report_cmd(a: args::ReportArgs) -> Result<ExitCode> {
    if a.job.sweep {
        bail!("--sweep applies to rank: a report of --job llm-serve always draws the curve");
    }
    let c = load_catalog(&a.settings.source)?;
    let scenarios = ScenarioFile::with_user(a.settings.scenarios.as_deref())?;
    let generated = job_scenario(&a.job)?;
    let chosen: Vec<&crate::value::scenario::Scenario> = match &generated {
        Some(s) => vec![s],
        None if a.scenario.is_empty() => scenarios.scenarios.iter().collect(),
        None => a
            .scenario
            .iter()
            .map(|id| scenarios.get(id).context("--scenario"))
            .collect::<Result<_>>()?,
    };
    let (ours, measured) = split_results(&a.results, a.results_on.as_ref(), &c)?;
    let all = load_results(&ours)?;
    // Burn-only files are shown (their verdicts) but rank nothing; a failed GPU's bench
    // files are left out of the rankings unless --use-failed.
    let burn_files: Vec<(String, ResultsFile)> = all
        .iter()
        .filter(|(_, r)| r.burn.is_some() && r.probes.is_empty())
        .cloned()
        .collect();
    let (results, burns) = crate::value::fleet::burn_gate(all, a.settings.use_failed);
    for line in &burns.excluded {
        warn!("burn EXCLUDED: {line}");
    }
    let mut opts = rank_options(&a.settings)?;
    opts.serving = crate::value::rank::ServingOptions {
        results: measured,
        api_price: a.job.api_price,
    };
    if let Some(e) = opts.filters.unmatched(&c) {
        bail!(e);
    }
    let checked = c.checked();
    refuse_bad_user_rows(&checked, a.settings.skip_bad_rows)?;
    let ranks = chosen
        .iter()
        .map(|s| rank::rank(&checked, s, &results, &opts))
        .collect::<Result<Vec<_>>>()?;
    let sweeps = chosen
        .iter()
        .filter(|s| s.serving.is_some())
        .map(|s| rank::sweep(&checked, s, &results, &opts))
        .collect::<Result<Vec<_>>>()?;
    let shown: Vec<(String, ResultsFile)> = results.iter().cloned().chain(burn_files).collect();
    let (html, md) = report::render_with(&shown, &ranks, &sweeps, &c);
    report::write(&a.out, &html, &md)?;
    say!(
        "report written to {}/report.html and report.md",
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn compare_cmd(a: args::CompareArgs) -> Result<ExitCode> {
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
    Ok(if c.regressions() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn main_job(a: args::RunArgs) -> Result<ExitCode> {
    // The ranking's inputs are checked before anything is measured.
    let c = load_catalog(&a.settings.source)?;
    let checked = c.checked();
    refuse_bad_user_rows(&checked, a.settings.skip_bad_rows)?;
    let scenarios = ScenarioFile::with_user(a.settings.scenarios.as_deref())?;
    let mut rank_opts = rank_options(&a.settings)?;
    rank_opts.top = Some(a.settings.top.unwrap_or(5));
    if let Some(e) = rank_opts.filters.unmatched(&c) {
        bail!(e);
    }
    rank::check_currency(&c, &rank_opts.currency)?;
    let mut opts = bench::BenchOptions::quick(a.select.adapter, a.select.backend);
    opts.out = a.out;
    opts.quiet = a.quiet;
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
    let mut ranks = Vec::new();
    for s in &scenarios.scenarios {
        let r = rank::rank(&checked, s, &results, &rank_opts)?;
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
        let (html, md) = report::render(&results, &ranks, &c);
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
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `calibration`: every published point recomputed, and every rule's factor refitted.
/// `calibration --serving` and `--fit-serving`.
fn serving_calibration_cmd(a: &args::CalibrationArgs) -> Result<ExitCode> {
    use crate::value::serving_calibration as sc;
    let file = sc::PointsFile::embedded();
    let catalog = Catalog::embedded();
    let prepared = sc::prepare_all(&file, &catalog)?;
    let fits = crate::value::scenario::serving::FitFile::embedded();
    if a.fit_serving {
        let new = sc::refit(&prepared, &fits);
        println!("{}", serde_json::to_string_pretty(&new)?);
        return Ok(ExitCode::SUCCESS);
    }
    let checked = sc::check(&prepared, &fits);
    let table = report::calibration::Serving {
        summary: sc::summarise(&checked),
        points: a.points.then_some(checked),
        left_out: file.left_out.clone(),
        fits: fits.fits.clone(),
    };
    print_as(&table, a.output.format())?;
    Ok(ExitCode::SUCCESS)
}

fn calibration_cmd(a: args::CalibrationArgs) -> Result<ExitCode> {
    if a.serving || a.fit_serving {
        return serving_calibration_cmd(&a);
    }
    let cal = crate::value::calibration::CalibrationFile::embedded();
    let table =
        report::calibration::Table::build(&cal, &Catalog::embedded(), &ScenarioFile::embedded())?;
    print_as(&table, a.output.format())?;
    Ok(if table.all_within(crate::value::calibration::TOLERANCE) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
