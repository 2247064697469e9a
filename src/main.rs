//! CLI entry: parse, dispatch, map errors to exit codes. Nothing else.

use clap::Parser;
use gpuvalue::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        None | Some(Command::Bench(_) | Command::Run(_) | Command::Report(_))
    ) {
        gpuvalue::interrupt::quiet_broken_pipe();
    }
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
