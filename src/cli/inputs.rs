//! What `rank`, `report` and `run` read before they rank, loaded and checked in one order:
//! the catalog, the scenarios, the options and their filters, the results files (ours and
//! serving tools'), the job's scenario, then the catalog checked (filters that match
//! nothing and errors in the user's files stop here).

use super::catalog::filters;
use crate::cli::args;
use crate::market::catalog::{Catalog, Checked};
use crate::results::ResultsFile;
use crate::value::fleet::BurnGate;
use crate::value::rank::RankOptions;
use crate::value::scenario::ScenarioFile;
use anyhow::{Result, bail};
use std::path::PathBuf;

/// What a ranking reads: the catalog (the snapshots' prices and the user's files), the
/// scenarios (built in and the user's), the options with their filters.
pub(super) struct Inputs {
    pub catalog: Catalog,
    pub scenarios: ScenarioFile,
    pub opts: RankOptions,
}

/// The measured inputs: gpuvalue's results files that pass the burn gate, the gate's
/// verdicts, and the burn-only files (shown by a report, ranking nothing).
pub(super) struct Measured {
    pub results: Vec<(String, ResultsFile)>,
    pub burns: BurnGate,
    pub burn_only: Vec<(String, ResultsFile)>,
}

impl Inputs {
    /// The catalog, the scenarios and the options of `settings`, each file read and parsed.
    pub fn load(settings: &args::RankSettings) -> Result<Inputs> {
        let catalog = super::catalog::load_catalog(&settings.source)?;
        let scenarios = ScenarioFile::with_user(settings.scenarios.as_deref())?;
        let opts = rank_options(settings)?;
        Ok(Inputs {
            catalog,
            scenarios,
            opts,
        })
    }

    /// The results given (`--results`): gpuvalue's files through the burn gate, and the
    /// serving tools' results into the options. `serving_job`: whether the scenario ranked
    /// serves a model, where one scenario is (serving results apply to no other).
    pub fn measured(
        &mut self,
        paths: &[PathBuf],
        on: Option<&crate::value::serving_results::On>,
        job: &args::JobArgs,
        use_failed: bool,
        serving_job: Option<bool>,
    ) -> Result<Measured> {
        let (ours, serving) = split_results(paths, on, &self.catalog)?;
        if !serving.is_empty() && serving_job == Some(false) {
            bail!("--results: serving results (vLLM, SGLang, InferenceX) apply to --job llm-serve");
        }
        let all = load_results(&ours)?;
        let burn_only = all
            .iter()
            .filter(|(_, r)| r.burn.is_some() && r.probes.is_empty())
            .cloned()
            .collect();
        let (results, burns) = crate::value::fleet::burn_gate(all, use_failed);
        self.opts.serving = crate::value::rank::ServingOptions {
            results: serving,
            api_price: job.api_price,
        };
        Ok(Measured {
            results,
            burns,
            burn_only,
        })
    }

    /// The catalog with its findings, once the filters match some row and the user's own
    /// files have no errors (unless `skip`).
    pub fn checked(&self, skip: bool) -> Result<Checked<'_>> {
        if let Some(e) = self.opts.filters.unmatched(&self.catalog) {
            bail!(e);
        }
        let checked = self.catalog.checked();
        refuse_bad_user_rows(&checked, skip)?;
        Ok(checked)
    }
}

/// Errors in the user's own catalog files stop a ranking, unless `skip`.
fn refuse_bad_user_rows(checked: &crate::market::catalog::Checked<'_>, skip: bool) -> Result<()> {
    let bad: Vec<String> = checked
        .user_errors()
        .iter()
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
pub(super) fn load_results(paths: &[std::path::PathBuf]) -> Result<Vec<(String, ResultsFile)>> {
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
        power: crate::value::rank::energy::Power {
            price_per_kwh: s.electricity_price,
            pue: s.pue,
        },
    })
}

/// The scenario of `--job` with its parameters; None without `--job`.
pub(super) fn job_scenario(j: &args::JobArgs) -> Result<Option<crate::value::scenario::Scenario>> {
    let Some(kind) = j.job else {
        return Ok(None);
    };
    let model =
        crate::value::jobs::chosen_model(j.model_config.as_deref(), &j.model, j.model_params)?;
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
            max_batch: j.max_batch,
            mtp: j.speculative.and_then(|s| s.mtp()),
            engine: j.engine,
        }
        .scenario()?,
    }))
}
