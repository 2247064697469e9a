//! `catalog update`: fetch the sources (several at once), gate each new snapshot against
//! the last one, write it, print what changed. Exit status: 0 when every source asked for
//! gave a new snapshot; 1 when one failed or was refused by a gate (its last snapshot stays,
//! named); 2 for bad options (clap).

use super::snapshot::{self, Manifest};
use super::{Source, gates, http};
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

pub struct Options {
    /// Sources by name; empty: all.
    pub sources: Vec<String>,
    pub mirror: Option<String>,
    pub timeout: Duration,
    pub max_bytes: u64,
    /// Take a snapshot a gate refuses.
    pub force: bool,
}

/// What became of one source.
enum Done {
    Taken {
        dir: PathBuf,
        manifest: Box<Manifest>,
        diff: String,
    },
    Refused {
        why: Vec<String>,
        prev: Option<String>,
    },
    Failed {
        error: String,
        prev: Option<String>,
    },
    /// A keyed source without its key in the environment.
    Skipped {
        missing: Vec<&'static str>,
    },
}

/// The sources `--source` names (each known), or all.
pub fn selected(names: &[String]) -> Result<Vec<&'static dyn Source>> {
    if names.is_empty() {
        return Ok(super::registry());
    }
    names
        .iter()
        .map(|n| {
            super::find(n).ok_or_else(|| {
                let all: Vec<&str> = super::registry().iter().map(|s| s.name()).collect();
                anyhow::anyhow!("--source {n}: no such source (have {})", all.join(", "))
            })
        })
        .collect()
}

pub fn run(opts: &Options, say: &dyn Fn(&str)) -> Result<ExitCode> {
    let sources = selected(&opts.sources)?;
    let home = snapshot::home()?;
    let client = http::Client::new(opts.mirror.as_deref(), opts.timeout, opts.max_bytes)?;
    let progress = Progress::new(&sources);
    let done: Vec<(&'static dyn Source, Done)> = std::thread::scope(|s| {
        let handles: Vec<_> = sources
            .iter()
            .enumerate()
            .map(|(i, src)| {
                let (client, home, progress) = (&client, &home, &progress);
                s.spawn(move || {
                    let d = one(*src, client, home, opts);
                    progress.finish(i);
                    d
                })
            })
            .collect();
        sources
            .iter()
            .zip(handles)
            .map(|(src, h)| {
                let d = h.join().unwrap_or_else(|_| Done::Failed {
                    error: "the source's reader panicked".into(),
                    prev: None,
                });
                (*src, d)
            })
            .collect()
    });
    progress.clear();
    let mut bad = 0;
    for (src, d) in &done {
        match d {
            Done::Taken {
                dir,
                manifest,
                diff,
            } => report_taken(src.name(), dir, manifest, diff, say),
            Done::Refused { why, prev } => {
                bad += 1;
                say(&format!(
                    "{}: REFUSED by the gates: {}; {} (--force takes it anyway)",
                    src.name(),
                    why.join("; "),
                    kept_prev(prev)
                ));
            }
            Done::Skipped { missing } => say(&format!(
                "{}: skipped: set {} to read it (your own key; never written anywhere)",
                src.name(),
                missing.join(" and ")
            )),
            Done::Failed { error, prev } => {
                bad += 1;
                say(&http::redact(&format!(
                    "{}: FAILED: {error}; {}",
                    src.name(),
                    kept_prev(prev)
                )));
            }
        }
    }
    say(&format!("snapshots in {}", home.display()));
    Ok(crate::exit::Status::failed_if(bad != 0).into())
}

fn kept_prev(prev: &Option<String>) -> String {
    match prev {
        Some(s) => format!("the previous snapshot ({s}) stays in use"),
        None => "no snapshot of it exists yet".into(),
    }
}

/// Fetch, count, gate and write one source.
fn one(src: &dyn Source, client: &http::Client, home: &Path, opts: &Options) -> Done {
    let missing: Vec<&'static str> = src
        .needs()
        .iter()
        .copied()
        .filter(|v| super::env_key(v).is_none())
        .collect();
    if !missing.is_empty() {
        return Done::Skipped { missing };
    }
    let prev = match snapshot::current(home, src.name()) {
        Ok(p) => p,
        Err(e) => {
            return Done::Failed {
                error: format!("its current snapshot does not load: {e:#}"),
                prev: None,
            };
        }
    };
    let prev_stamp = prev.as_ref().map(|p| p.manifest.stamp.clone());
    let taken_at = super::now();
    let fetch = match src.fetch(client) {
        Ok(f) => f,
        Err(e) => {
            return Done::Failed {
                error: format!("{e:#}"),
                prev: prev_stamp,
            };
        }
    };
    let counts = super::count(&fetch.catalog);
    if let Some(p) = &prev
        && !opts.force
    {
        let mut why = gates::refusals(&counts, &p.manifest.counts);
        why.extend(gates::rate_refusals(&fetch.catalog, &p.catalog));
        if !why.is_empty() {
            return Done::Refused {
                why,
                prev: prev_stamp,
            };
        }
    }
    let manifest = Manifest {
        source: src.name().to_string(),
        stamp: snapshot::stamp(&taken_at),
        taken_at,
        parser_version: snapshot::PARSER_VERSION,
        gpuvalue_version: env!("CARGO_PKG_VERSION").to_string(),
        mirror: opts.mirror.clone(),
        files: fetch.files,
        counts,
        notes: fetch.notes,
    };
    let diff = gates::diff(prev.as_ref().map(|p| &p.catalog), &fetch.catalog);
    match snapshot::write(home, &manifest, &fetch.catalog, &fetch.risks, &diff) {
        Ok(dir) => Done::Taken {
            dir,
            manifest: Box::new(manifest),
            diff,
        },
        Err(e) => Done::Failed {
            error: format!("{e:#}"),
            prev: prev_stamp,
        },
    }
}

fn report_taken(name: &str, dir: &Path, m: &Manifest, diff: &str, say: &dyn Fn(&str)) {
    let c = &m.counts;
    let refused: Vec<String> = c.refused.iter().map(|(r, n)| format!("{r} {n}")).collect();
    let ok = m.files.iter().filter(|f| f.status == "ok").count();
    if c.read == 0 {
        // A source of exchange rates: its notes say which.
        say(&format!(
            "{name}: {}; {ok} of {} files; snapshot {}",
            snapshot::kept(c),
            m.files.len(),
            dir.display()
        ));
    } else {
        say(&format!(
            "{name}: {} rows read, {} kept, {} refused ({}); {ok} of {} files; snapshot {}",
            c.read,
            c.kept,
            c.read - c.kept,
            if refused.is_empty() {
                "none".into()
            } else {
                refused.join(", ")
            },
            m.files.len(),
            dir.display()
        ));
    }
    for n in &m.notes {
        say(&format!("  {n}"));
    }
    let mut unmatched: Vec<(&String, &(usize, Vec<String>))> = c.unmatched.iter().collect();
    unmatched.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    if !unmatched.is_empty() {
        const SHOWN: usize = 10;
        let more = unmatched.len().saturating_sub(SHOWN);
        let list: Vec<String> = unmatched
            .iter()
            .take(SHOWN)
            .map(|(n, (rows, p))| {
                let s = if *rows == 1 { "" } else { "s" };
                format!("{n} ({rows} row{s}: {})", p.join(", "))
            })
            .collect();
        let tail = match more {
            0 => String::new(),
            n => format!("; {n} more in manifest.json"),
        };
        say(&format!(
            "  not ranked, no catalog GPU: {}{tail}",
            list.join("; ")
        ));
    }
    let mut lines = diff.lines();
    if let Some(summary) = lines.next() {
        say(&format!(
            "  changes: {summary} (all in {})",
            dir.join("diff.txt").display()
        ));
    }
}

/// A spinner per source on a terminal; nothing in a log or in CI.
struct Progress {
    bars: Vec<indicatif::ProgressBar>,
    _multi: indicatif::MultiProgress,
}

impl Progress {
    fn new(sources: &[&'static dyn Source]) -> Progress {
        let multi = indicatif::MultiProgress::new();
        let on = console::Term::stderr().is_term() && std::env::var_os("CI").is_none();
        if !on {
            multi.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let bars = sources
            .iter()
            .map(|s| {
                let b = multi.add(indicatif::ProgressBar::new_spinner());
                b.set_message(format!("{}: fetching", s.name()));
                b.enable_steady_tick(Duration::from_millis(120));
                b
            })
            .collect();
        Progress {
            bars,
            _multi: multi,
        }
    }
    fn finish(&self, i: usize) {
        if let Some(b) = self.bars.get(i) {
            b.finish_and_clear();
        }
    }
    fn clear(&self) {
        for b in &self.bars {
            b.finish_and_clear();
        }
    }
}

/// `catalog update --list`: each source, its URLs, last success and age.
pub fn list(say: &dyn Fn(&str)) -> Result<()> {
    let home = snapshot::home()?;
    for src in super::registry() {
        let last = match snapshot::current(&home, src.name()) {
            Ok(Some(s)) => format!(
                "last snapshot {} ({} old, {})",
                s.manifest.taken_at,
                age(&s.manifest.taken_at),
                snapshot::kept(&s.manifest.counts)
            ),
            Ok(None) => "no snapshot yet".into(),
            Err(e) => format!("snapshot unreadable: {e:#}"),
        };
        say(&format!("{}: {}; {last}", src.name(), src.about()));
        for u in src.urls() {
            say(&format!("  {}", http::redact_url(&u)));
        }
    }
    say(&format!("snapshots in {}", home.display()));
    Ok(())
}

/// How long ago an RFC 3339 time was, in words.
fn age(rfc3339: &str) -> String {
    let Ok(t) = humantime::parse_rfc3339(rfc3339) else {
        return "unknown".into();
    };
    let now = std::time::UNIX_EPOCH + crate::clock::since_epoch();
    let secs = now.duration_since(t).map_or(0, |d| d.as_secs());
    match secs {
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}

/// `--max-download` in MB, as bytes.
pub fn max_bytes(mb: u64) -> Result<u64> {
    if mb == 0 {
        bail!("--max-download 0: expected at least 1 MB");
    }
    Ok(mb.saturating_mul(1_000_000))
}
