//! The shape of the code, checked: no import cycle between the files of `src/` (nor
//! between its top-level modules), and no function longer than a screenful. These read the
//! source text; they need no GPU.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 80;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `src/gpu/context.rs` -> `gpu::context`, `src/gpu/mod.rs` ->
/// `gpu`, `src/lib.rs` -> ``.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The text with comments, string and char literals blanked (newlines kept), so braces
/// and paths are only those of the code.
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or(' ');
        if c == '/' && next == '/' {
            while i < b.len() && b[i] != '\n' {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == '/' && next == '*' {
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                blank(&mut out, b[i]);
                i += 1;
            }
            out.push_str("  ");
            i += 2;
        } else if c == 'r' && (next == '"' || next == '#') && !is_ident(b.get(i.wrapping_sub(1))) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            while b.get(j) == Some(&'#') {
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            let mut k = j + 1;
            while k < b.len()
                && !(b[k] == '"' && (0..hashes).all(|h| b.get(k + 1 + h) == Some(&'#')))
            {
                k += 1;
            }
            let end = (k + 1 + hashes).min(b.len());
            (i..end).for_each(|x| blank(&mut out, b[x]));
            i = end;
        } else if c == '"' {
            let mut k = i + 1;
            while k < b.len() && b[k] != '"' {
                k += if b[k] == '\\' { 2 } else { 1 };
            }
            let end = (k + 1).min(b.len());
            (i..end).for_each(|x| blank(&mut out, b[x]));
            i = end;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if next == '\\' {
                (i + 2..b.len()).find(|&k| b[k] == '\'').map(|k| k + 1)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(e) => {
                    (i..e).for_each(|x| blank(&mut out, b[x]));
                    i = e;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The code of a file without its `#[cfg(test)]` module (tests may import anything).
fn without_tests(code: &str) -> &str {
    match code
        .find("#[cfg(test)]\nmod tests")
        .or_else(|| code.find("#[cfg(test)]\npub mod tests"))
    {
        Some(i) => &code[..i],
        None => code,
    }
}

struct Crate {
    /// module path -> code (comments and literals blanked)
    code: BTreeMap<String, String>,
    /// module -> (name -> child module it re-exports `name` from)
    reexports: BTreeMap<String, BTreeMap<String, String>>,
}

impl Crate {
    fn load() -> Crate {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let code: BTreeMap<String, String> = files
            .iter()
            .map(|f| {
                (
                    module_of(&src, f),
                    code_only(&std::fs::read_to_string(f).unwrap()),
                )
            })
            .collect();
        let mut reexports = BTreeMap::new();
        for (m, text) in &code {
            for stmt in text.split(';') {
                let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
                    continue;
                };
                let rest = rest.trim_start_matches("self::");
                let Some((child, names)) = rest.split_once("::") else {
                    continue;
                };
                let child_mod = join(m, child);
                if !code.contains_key(&child_mod) {
                    continue;
                }
                for name in idents(names) {
                    reexports
                        .entry(m.clone())
                        .or_insert_with(BTreeMap::new)
                        .insert(name, child_mod.clone());
                }
            }
        }
        Crate { code, reexports }
    }

    /// The file a path `a::b::c` (from the crate root) lives in: the longest prefix that is
    /// a module, or the child a parent re-exports the next name from.
    fn resolve(&self, path: &[String]) -> Option<String> {
        (1..=path.len()).rev().find_map(|n| {
            let m = path[..n].join("::");
            self.code.contains_key(&m).then(|| {
                path.get(n)
                    .and_then(|next| self.reexports.get(&m)?.get(next).cloned())
                    .unwrap_or(m)
            })
        })
    }

    /// Which files each file names with `crate::` or `super::` paths.
    fn file_graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut g = BTreeMap::new();
        for (m, text) in &self.code {
            let mut deps = BTreeSet::new();
            for path in crate_paths(without_tests(text), m) {
                if let Some(d) = self.resolve(&path)
                    && d != *m
                    && !d.is_empty()
                {
                    deps.insert(d);
                }
            }
            g.insert(m.clone(), deps);
        }
        g
    }
}

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_string()
    } else {
        format!("{parent}::{child}")
    }
}

fn idents(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && w.chars().next().is_some_and(|c| !c.is_numeric()))
        .map(String::from)
        .collect()
}

/// Paths from the crate root named in `code` of module `m`: `crate::a::b`, `super::x`,
/// and the items of `use crate::{a, b::{c, d}}` groups.
fn crate_paths(code: &str, m: &str) -> Vec<Vec<String>> {
    let parent: Vec<String> = m
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let parent = &parent[..parent.len().saturating_sub(1)];
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let text: String = chars.iter().collect();
    for (start, base) in [("crate::", Vec::new()), ("super::", parent.to_vec())] {
        let mut from = 0;
        while let Some(i) = text[from..].find(start).map(|i| i + from) {
            from = i + start.len();
            if i > 0 && is_ident(text[..i].chars().last().as_ref()) {
                continue;
            }
            let rest = &text[from..];
            let seg_end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let segs: Vec<String> = rest[..seg_end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            let mut path = base.clone();
            path.extend(segs.iter().cloned());
            // A `{...}` group after the path: each item is a path below it.
            if rest[seg_end..].starts_with('{') {
                let group = &rest[seg_end + 1..];
                use_tree(&group[..matching(group)], &path, &mut out);
            }
            out.push(path);
        }
    }
    out
}

/// The paths of the items of a `use` group `a, b::{c, d}` below `prefix`.
fn use_tree(group: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    for item in items {
        let item = item.trim();
        let (head, sub) = match item.find('{') {
            Some(i) => (&item[..i], Some(&item[i + 1..item.len() - 1])),
            None => (item, None),
        };
        let mut path = prefix.to_vec();
        path.extend(idents(head).into_iter().take_while(|w| w != "as"));
        if path.len() == prefix.len() {
            continue;
        }
        match sub {
            Some(sub) => use_tree(sub, &path, out),
            None => out.push(path),
        }
    }
}

/// The index of the `}` closing a group whose `{` came just before `s`.
fn matching(s: &str) -> usize {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// The strongly connected components with more than one node (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.g.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let lw = self.low[w.as_str()];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w.as_str()) {
                    let iw = self.index[w.as_str()];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

fn describe(g: &BTreeMap<String, BTreeSet<String>>, comps: &[Vec<String>]) -> String {
    comps
        .iter()
        .map(|c| {
            let edges: Vec<String> = c
                .iter()
                .map(|a| {
                    let to: Vec<&str> = g[a]
                        .iter()
                        .filter(|d| c.contains(d))
                        .map(String::as_str)
                        .collect();
                    format!("  {a} -> {}", to.join(", "))
                })
                .collect();
            format!("cycle {}:\n{}", c.join(" <-> "), edges.join("\n"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_import_cycle_between_files_or_top_modules() {
    let krate = Crate::load();
    let files = krate.file_graph();
    // The checker sees the edges it must see.
    assert!(
        files["measuring::bench"].contains("measuring::probes"),
        "{:?}",
        files["measuring::bench"]
    );
    assert!(files["results"].contains("model"), "{:?}", files["results"]);
    let file_cycles = cycles(&files);
    assert!(file_cycles.is_empty(), "{}", describe(&files, &file_cycles));
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, deps) in &files {
        let ta = a.split("::").next().unwrap().to_string();
        let entry = top.entry(ta.clone()).or_default();
        entry.extend(
            deps.iter()
                .map(|d| d.split("::").next().unwrap().to_string())
                .filter(|d| *d != ta),
        );
    }
    let top_cycles = cycles(&top);
    assert!(top_cycles.is_empty(), "{}", describe(&top, &top_cycles));
}

/// The domains, bottom up: a file imports its own domain's files and those of the layers
/// below it, never a layer above nor a sibling on its own layer (measuring and the market
/// know nothing of each other; value joins them). The data model and plumbing at the top
/// level of `src/` are the ground floor.
const LAYERS: &[&[&str]] = &[
    &[
        "clock",
        "energy",
        "exit",
        "figure",
        "files",
        "health",
        "host",
        "interrupt",
        "model",
        "results",
        "stats",
        "text",
    ],
    &["measuring", "market"],
    &["value"],
    &["report"],
    &["cli", "fuzzing", "web"],
];

fn layer_of(module: &str) -> (usize, &str) {
    let top = module.split("::").next().unwrap_or("");
    let layer = LAYERS
        .iter()
        .position(|l| l.contains(&top))
        .unwrap_or_else(|| panic!("src/{top} is in no layer of LAYERS: add it where it belongs"));
    // The ground floor's files are one domain.
    let domain = if layer == 0 { "" } else { top };
    (layer, domain)
}

#[test]
fn every_domain_imports_only_the_layers_below_it() {
    let files = Crate::load().file_graph();
    assert!(
        files["value::rank"]
            .iter()
            .any(|d| d.starts_with("market::"))
    );
    let mut wrong = Vec::new();
    for (a, deps) in &files {
        if a.is_empty() {
            continue;
        }
        let (la, da) = layer_of(a);
        for d in deps {
            let (ld, dd) = layer_of(d);
            if ld > la || (ld == la && dd != da) {
                wrong.push(format!("  {a} -> {d}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers ({LAYERS:?}):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_data_model_imports_nothing_above_it() {
    let files = Crate::load().file_graph();
    let allowed: BTreeSet<&str> = [
        "figure",
        "model",
        "files",
        "host",
        "stats",
        "interrupt",
        "clock",
        "health",
        "energy",
        "exit",
    ]
    .into();
    for m in ["results", "figure", "model", "files", "health", "energy"] {
        let above: Vec<&String> = files[m]
            .iter()
            .filter(|d| !allowed.contains(d.as_str()))
            .collect();
        assert!(above.is_empty(), "{m} imports {above:?}");
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), ["b".to_string()].into()),
        ("b".to_string(), ["c".to_string()].into()),
        ("c".to_string(), ["a".to_string()].into()),
        ("d".to_string(), ["a".to_string()].into()),
    ]
    .into();
    assert_eq!(
        cycles(&g),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    let paths = crate_paths(
        "use crate::{results::{A, B}, gpu::Gpu};\nsuper::x::y();",
        "p::q",
    );
    assert!(
        paths.contains(&vec!["results".into(), "A".into()]),
        "{paths:?}"
    );
    assert!(
        paths.contains(&vec!["gpu".into(), "Gpu".into()]),
        "{paths:?}"
    );
    assert!(
        paths.contains(&vec!["p".into(), "x".into(), "y".into()]),
        "{paths:?}"
    );
}

/// `(lines, file, function)` for every function with a body.
fn functions() -> Vec<(usize, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        let b = code.as_bytes();
        let mut from = 0;
        while let Some(i) = code[from..].find("fn ").map(|i| i + from) {
            from = i + 3;
            if i > 0 && is_ident(code[..i].chars().last().as_ref()) {
                continue;
            }
            let name: String = code[from..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // The body: the first `{` before any `;` (a declaration has none).
            let Some(open) = code[from..].find(['{', ';']).map(|k| k + from) else {
                continue;
            };
            if b[open] == b';' {
                continue;
            }
            let close = open + 1 + matching(&code[open + 1..]);
            let lines = code[i..=close.min(code.len() - 1)].lines().count();
            out.push((lines, f.display().to_string(), name));
        }
    }
    out
}

#[test]
fn no_function_longer_than_a_screenful() {
    let fns = functions();
    assert!(fns.len() > 300, "found only {} functions", fns.len());
    assert!(fns.iter().any(|(_, _, n)| n == "rank"));
    let long: Vec<String> = fns
        .iter()
        .filter(|(n, _, _)| *n > MAX_FN_LINES)
        .map(|(n, f, name)| format!("{f}: {name} is {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// Exit statuses by name only: `src/exit.rs` holds every code, so a literal
/// `ExitCode::from(1)` (or `ExitCode::FAILURE`, `process::exit(2)`) anywhere else fails.
#[test]
fn every_exit_status_is_named_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("exit.rs")) {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for pat in ["ExitCode::from(", "process::exit("] {
            for (i, _) in code.match_indices(pat) {
                let arg = code[i + pat.len()..].trim_start();
                if arg.starts_with(|c: char| c.is_ascii_digit()) {
                    found.push(format!(
                        "{}: {pat}{}",
                        f.display(),
                        &arg[..arg.len().min(8)]
                    ));
                }
            }
        }
        if code.contains("ExitCode::FAILURE") {
            found.push(format!("{}: ExitCode::FAILURE", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "exit codes as literals (name them in src/exit.rs):\n{}",
        found.join("\n")
    );
}
