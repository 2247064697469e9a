//! Every `gpuvalue` command the README and docs/ show is one the binary takes: each
//! is parsed by the real command line (clap, then the moot-option rule), so a
//! renamed option or subcommand fails here instead of in a reader's terminal. The README's
//! ranking example is rerun on a fresh machine and must be what the binary prints, line for
//! line, so it cannot go stale again.

use clap::{CommandFactory, FromArgMatches};
use gpuvalue::cli::args::{Cli, moot_options};
use std::path::Path;

/// The Markdown files whose commands are checked.
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The commands a document shows: inline code spans that start with `gpuvalue `, and lines
/// of fenced blocks that do (after an optional `$ ` prompt), without a trailing `# comment`.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut prose = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            let l = line.trim();
            let l = l.strip_prefix("$ ").unwrap_or(l);
            if l.starts_with("gpuvalue ") {
                out.push(l.split(" #").next().unwrap().trim().to_string());
            }
        } else {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    // Inline spans may wrap over a line break: joined, whitespace collapsed.
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 && span.starts_with("gpuvalue ") {
            out.push(span.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    out
}

/// A documented command as argument lists to parse: `[X]` taken as X, `a\|b` tried with
/// each alternative, and placeholders in capitals given a value of their kind.
fn concrete(cmd: &str) -> Result<Vec<Vec<String>>, String> {
    let mut variants: Vec<Vec<String>> = vec![vec![]];
    for raw in cmd.replace("\\|", "|").split_whitespace() {
        let token = raw.trim_start_matches('[').trim_end_matches(']');
        let choices: Vec<String> = token
            .split('|')
            .map(|t| placeholder(t).unwrap_or(Ok(t.to_string())))
            .collect::<Result<_, _>>()?;
        variants = variants
            .into_iter()
            .flat_map(|v| {
                choices.iter().map(move |c| {
                    let mut v = v.clone();
                    v.push(c.clone());
                    v
                })
            })
            .collect();
    }
    Ok(variants)
}

/// The value a placeholder stands for, or None where the token is literal.
fn placeholder(token: &str) -> Option<Result<String, String>> {
    let word = token.trim_end_matches("...");
    if word == "FILE.csv" {
        return Some(Ok("prices.csv".into()));
    }
    let capitals = word.chars().any(|c| c.is_ascii_uppercase())
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c == '@');
    if !capitals {
        return None;
    }
    Some(match word {
        "FILE" | "FILE_OR_DIR" | "RESULTS" | "BASE" => Ok("a.json".into()),
        "NEW" => Ok("b.json".into()),
        "DIR" => Ok("out".into()),
        "S" => Ok("training".into()),
        "DATE" => Ok("2026-12-03".into()),
        "N" => Ok("2".into()),
        "GB" => Ok("50".into()),
        "KIND@PROBE" => Ok("oom@matmul".into()),
        other => Err(format!(
            "placeholder {other:?}: teach tests/docs.rs what it stands for"
        )),
    })
}

/// Whether the command line takes these arguments. A mention that leaves out a required
/// argument (`gpuvalue show` in prose) still names a real command and real options.
fn parses(args: &[String]) -> Result<(), String> {
    let m = match Cli::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if e.kind() == clap::error::ErrorKind::MissingRequiredArgument => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    moot_options(&m)?;
    Cli::from_arg_matches(&m).map_err(|e| e.to_string())?;
    Ok(())
}

#[test]
fn every_command_the_readme_and_docs_show_is_one_the_binary_takes() {
    let mut checked = 0;
    let mut faults = Vec::new();
    for (file, text) in documents() {
        for cmd in commands(&text) {
            match concrete(&cmd) {
                Err(e) => faults.push(format!("{file}: `{cmd}`: {e}")),
                Ok(variants) => {
                    for args in variants {
                        checked += 1;
                        if let Err(e) = parses(&args) {
                            let first = e.lines().next().unwrap_or("").to_string();
                            faults.push(format!("{file}: `{}`: {first}", args.join(" ")));
                        }
                    }
                }
            }
        }
    }
    assert!(faults.is_empty(), "{faults:#?}");
    // The documents show dozens of commands: an extraction that finds none is broken.
    assert!(checked > 50, "only {checked} commands found");
}

#[test]
fn the_checker_catches_a_command_the_binary_does_not_take() {
    for bad in [
        "gpuvalue rank --no-such-option",
        "gpuvalue nosuchcommand",
        "gpuvalue rank --tokens 1e9",
        "gpuvalue show WIDGET",
    ] {
        let ok = concrete(bad).is_ok_and(|v| v.iter().all(|a| parses(a).is_ok()));
        assert!(!ok, "{bad} passed");
    }
    let found =
        commands("Run `gpuvalue rank\n  --top 3` or\n```sh\n$ gpuvalue catalog  # all\n```\n");
    assert_eq!(found, ["gpuvalue catalog", "gpuvalue rank --top 3"]);
}

/// The README's ranking example is what a fresh machine prints (the built-in snapshot and
/// the hand-kept rows, no results files, a pipe so 100 columns).
#[test]
fn the_readme_ranking_example_is_what_a_fresh_machine_prints() {
    let readme = &documents()[0].1;
    let start = readme
        .find("`gpuvalue rank --budget 500 --top 6`")
        .expect("the README shows its ranking example");
    let block = &readme[start..];
    let open = block.find("```text\n").unwrap() + "```text\n".len();
    let shown = &block[open..open + block[open..].find("```").unwrap()];
    let o = crate::common::gpuvalue(&["rank", "--budget", "500", "--top", "6"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    for (i, (a, b)) in shown.lines().zip(printed.lines()).enumerate() {
        assert_eq!(a, b, "README line {} of the example differs", i + 1);
    }
    assert_eq!(
        shown.lines().count(),
        printed.lines().count(),
        "the README's example and the binary's output differ in length:\n{printed}"
    );
}

/// The README's serving example is what a fresh machine prints: the table, line for line.
#[test]
fn the_readme_serving_example_is_what_a_fresh_machine_prints() {
    let readme = &documents()[0].1;
    let cmd = "`gpuvalue rank --job llm-serve --model deepseek-r1 --prompt-tokens 1024 --output-tokens 1024\n--concurrency 64 --top 5`";
    let start = readme
        .find(cmd)
        .expect("the README shows its serving example");
    let block = &readme[start..];
    let open = block.find("```text\n").unwrap() + "```text\n".len();
    let shown = &block[open..open + block[open..].find("```").unwrap()];
    let o = crate::common::gpuvalue(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "deepseek-r1",
        "--prompt-tokens",
        "1024",
        "--output-tokens",
        "1024",
        "--concurrency",
        "64",
        "--top",
        "5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert!(shown.lines().count() > 10);
    for (i, (a, b)) in shown.lines().zip(printed.lines()).enumerate() {
        assert_eq!(a, b, "README line {} of the serving example differs", i + 1);
    }
}

/// Every recipe in docs/architecture.md ends with the test that holds it
/// (`Test: `path::name``): the file exists and defines that function, so a renamed or
/// removed test leaves no recipe pointing at nothing.
#[test]
fn every_recipe_in_the_architecture_names_a_test_that_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let named: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("Test: `")?.strip_suffix('`'))
        .collect();
    assert!(named.len() >= 5, "recipes with a test: {named:?}");
    for t in named {
        let (file, name) = t.rsplit_once("::").unwrap();
        let text = std::fs::read_to_string(root.join(file))
            .unwrap_or_else(|e| panic!("docs/architecture.md names {file}: {e}"));
        assert!(
            text.contains(&format!("fn {name}(")),
            "docs/architecture.md names {t}, which {file} does not define"
        );
    }
}
