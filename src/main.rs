//! CLI entry: parse, dispatch, map errors to exit codes. Nothing else.

use clap::Parser;
use gpuvalue::cli::{Cli, Command};
use gpuvalue::{bench, gpu::adapter, report, results::ResultsFile};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Devices(a) => {
            let list = adapter::enumerate(a.select.backend);
            let chosen = list.select(&a.select.adapter)?;
            let shown: Vec<_> = if a.select.adapter == adapter::AdapterChoice::Best {
                list.summaries.clone()
            } else {
                chosen.iter().map(|&i| list.summaries[i].clone()).collect()
            };
            if a.json {
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                println!("{}", report::table::devices(&shown));
                if let Some(best) = list.summaries.first() {
                    println!("default adapter: {best}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(a) => {
            let outcomes = bench::run(&a, std::env::args().collect())?;
            let mut failed = false;
            for o in &outcomes {
                println!("{}", report::table::results(&o.results));
                println!("results written to {}", o.path.display());
                failed |= o.any_failed();
            }
            if failed {
                eprintln!(
                    "error: at least one probe failed validation or could not run (see the table)"
                );
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Show(a) => {
            let files: Vec<ResultsFile> = a
                .files
                .iter()
                .map(|p| ResultsFile::load(p))
                .collect::<anyhow::Result<_>>()?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&files)?);
            } else {
                for (f, p) in files.iter().zip(&a.files) {
                    println!("{}\n{}\n", p.display(), report::table::results(f));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
