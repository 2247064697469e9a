//! CLI entry: parse, dispatch, map errors to exit codes. Nothing else.

use gpuvalue::cli::args::{Cli, Command};
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

/// Without a graphical session (no XDG_RUNTIME_DIR, no Wayland display), wgpu's GL backend
/// still asks libwayland for a display while it looks for adapters, and libwayland prints
/// "error: XDG_RUNTIME_DIR is invalid or not set in the environment." twice, although
/// nothing is wrong. A private runtime folder (mode 0700, as a session's) makes that probe
/// fail quietly; a real session's variables are never touched.
fn no_wayland_probe_noise() {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let session = ["XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
            return;
        };
        if session {
            return;
        }
        let dir = std::env::temp_dir().join(format!("gpuvalue-runtime-{uid}"));
        let made = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        let ours = std::fs::symlink_metadata(&dir)
            .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
        if (made.is_ok() || dir.exists()) && ours {
            // SAFETY: called first thing in main, before any other thread exists.
            unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
        }
    }
}

fn main() -> ExitCode {
    // A deployment that sets GPUVALUE_INSTANCE to nothing means "no instance", as leaving
    // it unset does (clap would refuse the empty value).
    if std::env::var("GPUVALUE_INSTANCE").is_ok_and(|v| v.trim().is_empty()) {
        // SAFETY: the first thing main does, before any other thread exists.
        unsafe { std::env::remove_var("GPUVALUE_INSTANCE") };
    }
    no_wayland_probe_noise();
    let cli = Cli::parse_checked();
    // A measuring command takes Ctrl-C from here on, milliseconds after start-up: a signal
    // before the adapter opens still leaves a results file marked interrupted.
    if matches!(
        cli.command,
        None | Some(Command::Bench(_) | Command::Run(_) | Command::Burn(_) | Command::Transfers(_))
    ) {
        gpuvalue::interrupt::install();
    }
    gpuvalue::report::term::set_width((!cli.wide).then(terminal_width));
    if !matches!(
        cli.command,
        None | Some(Command::Bench(_) | Command::Run(_) | Command::Report(_))
    ) {
        gpuvalue::interrupt::quiet_broken_pipe();
    }
    match gpuvalue::cli::run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            // Names and paths in messages come from files: escaped for the terminal.
            eprintln!("{}", gpuvalue::cli::stderr_text(&format!("error: {e:#}")));
            gpuvalue::exit::Status::Usage.into()
        }
    }
}
