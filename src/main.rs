//! CLI entry: parse, dispatch, map errors to exit codes. Nothing else.

use clap::Parser;
use gpuvalue::cli::Cli;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match gpuvalue::app::run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
