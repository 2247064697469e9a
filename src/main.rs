//! CLI entry: parse, dispatch, map errors to exit codes. Nothing else.

use gpuvalue::cli::{Cli, Command};
use std::process::ExitCode;

/// $COLUMNS when set (a person's choice), else the terminal's width when standard output is
/// one, else 100 (a pipe or a file).
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .or_else(|| {
            console::Term::stdout()
                .size_checked()
                .map(|(_, c)| c as usize)
        })
        .unwrap_or(gpuvalue::report::term::DEFAULT_WIDTH)
}

fn main() -> ExitCode {
    // A deployment that sets GPUVALUE_INSTANCE to nothing means "no instance", as leaving
    // it unset does (clap would refuse the empty value).
    if std::env::var("GPUVALUE_INSTANCE").is_ok_and(|v| v.trim().is_empty()) {
        // SAFETY: the first thing main does, before any other thread exists.
        unsafe { std::env::remove_var("GPUVALUE_INSTANCE") };
    }
    let cli = Cli::parse_checked();
    gpuvalue::report::term::set_width((!cli.wide).then(terminal_width));
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
            eprintln!("{}", gpuvalue::app::stderr_text(&format!("error: {e:#}")));
            ExitCode::from(2)
        }
    }
}
