//! The command line: `args` turns arguments into settings (clap), `inputs` loads and checks
//! what the ranking commands read, once; each command's module runs it over the layers
//! below and returns the process exit code.

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
        eprintln!("{}", $crate::cli::stderr_text(&format!($($t)*)))
    };
}

pub mod args;
mod catalog;
mod inputs;
mod measure;
mod metrics_server;
mod value;

use crate::report;
use anyhow::Result;
use args::{Command, Format};
use std::process::ExitCode;

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

pub fn run(command: Option<Command>) -> Result<ExitCode> {
    match command {
        Some(Command::Devices(a)) => measure::devices(a),
        Some(Command::Bench(a)) => measure::bench_cmd(a),
        Some(Command::Show(a)) => measure::show(a),
        Some(Command::Catalog(a)) => catalog::catalog(a),
        Some(Command::Rank(a)) => value::rank_cmd(a),
        Some(Command::Run(a)) => value::main_job(a),
        Some(Command::Compare(a)) => measure::compare_cmd(a),
        Some(Command::Report(a)) => value::report_cmd(a),
        Some(Command::Calibration(a)) => value::calibration_cmd(a),
        Some(Command::Burn(a)) => measure::burn_cmd(a),
        Some(Command::Transfers(a)) => measure::transfers_cmd(a),
        // No command: `run` with its defaults, as clap would parse them.
        None => match <args::Cli as clap::Parser>::parse_from(["gpuvalue", "run"]).command {
            Some(Command::Run(a)) => value::main_job(a),
            _ => unreachable!("`gpuvalue run` parses as the run command"),
        },
    }
}

/// Prints a subject in the format asked for (through the one output interface).
fn print_as<E: report::export::Export>(e: &E, f: Format) -> Result<()> {
    print!("{}", report::export::render(e, f)?);
    Ok(())
}
