//! CLI entry: parse, dispatch, map errors to exit codes. Nothing else.

use clap::Parser;
use gpuvalue::cli::Cli;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match gpuvalue::app::run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            // Names and paths in messages come from files: escaped for the terminal.
            eprintln!(
                "{}",
                gpuvalue::report::fmt::term_text(&format!("error: {e:#}"))
            );
            ExitCode::from(2)
        }
    }
}
