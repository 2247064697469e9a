//! Bounded fuzzing of every loader in CI (the unbounded runs are the `cargo fuzz` targets
//! in `fuzz/`, which call the same `gpuvalue::fuzzing` entry points): random bytes and
//! mutations of the seed corpus (byte flips, cuts, splices, extreme numbers, deep nesting).
//! No input may panic; every rejection must name the file and say where.
//!
//! Cases per target: 2000 (about a second each), or `GPUVALUE_FUZZ_CASES`.

use gpuvalue::fuzzing::{self, Outcome};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const SEEDS_JSON: &[&str] = &[
    include_str!("../../fuzz/corpus/catalog_json/small.json"),
    include_str!("../../fuzz/corpus/catalog_json/embedded.json"),
];
const SEEDS_CSV: &[&str] = &[
    include_str!("../../fuzz/corpus/catalog_csv/skypilot-aws.csv"),
    include_str!("../../fuzz/corpus/catalog_csv/skypilot-gcp.csv"),
];
const SEEDS_AWS: &[&str] = &[include_str!(
    "../../fuzz/corpus/aws_offer/offer-us-east-1.csv"
)];
const SEEDS_AZURE: &[&str] = &[include_str!("../../fuzz/corpus/azure_page/page1.json")];
const SEEDS_MANIFEST: &[&str] = &[include_str!(
    "../../fuzz/corpus/snapshot_manifest/skypilot.json"
)];
const SEEDS_ANSWERS: &[&str] = &[
    include_str!("../../fuzz/corpus/feed_answers/lambda.json"),
    include_str!("../../fuzz/corpus/feed_answers/vast.json"),
    include_str!("../../fuzz/corpus/feed_answers/alibaba.json"),
    include_str!("../../fuzz/corpus/feed_answers/tencent.json"),
    include_str!("../../fuzz/corpus/feed_answers/gpuhunt-oci.csv"),
];
const SEEDS_SCENARIOS: &[&str] = &[include_str!("../../fuzz/corpus/scenarios/embedded.json")];
const SEEDS_RESULTS: &[&str] = &[
    include_str!("../../fuzz/corpus/results/small.json"),
    include_str!("../../fuzz/corpus/results/lavapipe.json"),
];

/// Tokens that stress number handling and structure when spliced in.
const NASTY: &[&str] = &[
    "1e308",
    "-1e308",
    "1e999",
    "-0",
    "0",
    "-1",
    "18446744073709551616",
    "4294967296",
    "NaN",
    "null",
    "\"\"",
    "[]",
    "{}",
    "true",
    "\"\\u0000\"",
    "\"\u{202e}\"",
    "0.0000000000000000000000000000001",
    ",,,,",
    "\"\"\"",
    "\n\n",
];

#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Cut(usize, usize),
    Insert(usize, Vec<u8>),
    Nasty(usize, usize),
    Duplicate(usize, usize),
    /// Replaces the n-th number in the text with a nasty token.
    Number(usize, usize),
    Nest(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Edit::Cut(i, n)),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(i, v)| Edit::Insert(i, v)),
        (any::<usize>(), 0..NASTY.len()).prop_map(|(i, k)| Edit::Nasty(i, k)),
        (any::<usize>(), 1usize..256).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        (any::<usize>(), 0..NASTY.len()).prop_map(|(i, k)| Edit::Number(i, k)),
        (any::<usize>(), 1usize..400).prop_map(|(i, d)| Edit::Nest(i, d)),
    ]
}

fn apply(seed: &str, edits: &[Edit]) -> Vec<u8> {
    let mut v = seed.as_bytes().to_vec();
    for e in edits {
        let at = |i: usize, v: &Vec<u8>| if v.is_empty() { 0 } else { i % (v.len() + 1) };
        match e {
            Edit::Flip(i, b) if !v.is_empty() => {
                let n = v.len();
                v[i % n] = *b;
            }
            Edit::Flip(..) => {}
            Edit::Cut(i, n) => {
                let s = at(*i, &v);
                let e = (s + n).min(v.len());
                v.drain(s..e);
            }
            Edit::Insert(i, bytes) => {
                let s = at(*i, &v);
                v.splice(s..s, bytes.iter().copied());
            }
            Edit::Nasty(i, k) => {
                let s = at(*i, &v);
                v.splice(s..s, NASTY[*k].bytes());
            }
            Edit::Duplicate(i, n) => {
                let s = at(*i, &v);
                let e = (s + n).min(v.len());
                let piece = v[s..e].to_vec();
                v.splice(e..e, piece);
            }
            Edit::Number(i, k) => {
                let text = String::from_utf8_lossy(&v).into_owned();
                let nums: Vec<(usize, usize)> = {
                    let b = text.as_bytes();
                    let mut out = Vec::new();
                    let mut j = 0;
                    while j < b.len() {
                        if b[j].is_ascii_digit() {
                            let st = j;
                            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                                j += 1;
                            }
                            out.push((st, j));
                        } else {
                            j += 1;
                        }
                    }
                    out
                };
                if !nums.is_empty() {
                    let (s, e) = nums[i % nums.len()];
                    let mut t = text.into_bytes();
                    t.splice(s..e, NASTY[*k].bytes());
                    v = t;
                }
            }
            Edit::Nest(i, d) => {
                let s = at(*i, &v);
                let open = "[".repeat(*d);
                let close = "]".repeat(*d);
                v.splice(s..s, format!("{open}1{close}").into_bytes());
            }
        }
    }
    v
}

/// Every rejection names the input and says where or what.
fn check_message(target: &str, name: &str, out: &Outcome, input: &[u8]) {
    if let Err(m) = out {
        assert!(!m.trim().is_empty(), "{target}: empty error message");
        let located = [
            "line",
            "column",
            "JSON path",
            "schema_version",
            "field",
            "header",
            "UTF-8",
            "scenarios[",
            "expected",
            "missing",
            "duplicate",
        ]
        .iter()
        .any(|k| m.contains(k));
        assert!(
            m.contains(name),
            "{target}: error does not name the file: {m}\ninput: {:?}",
            String::from_utf8_lossy(&input[..input.len().min(300)])
        );
        assert!(located, "{target}: error does not say where or what: {m}");
    }
}

fn cases() -> u32 {
    std::env::var("GPUVALUE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// The folder of inputs that once failed a target: each runs first, every time, so a case the
/// random search found once stays found (the search itself keeps no state between runs).
fn regression_dir(target: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target)
}

fn regressions(target: &str, name: &str, f: fn(&[u8]) -> Outcome) {
    let Ok(dir) = std::fs::read_dir(regression_dir(target)) else {
        return;
    };
    for entry in dir.flatten() {
        let input = std::fs::read(entry.path()).expect("a regression case reads");
        let out = std::panic::catch_unwind(|| f(&input)).unwrap_or_else(|_| {
            panic!(
                "{target}: regression case {} panics",
                entry.path().display()
            )
        });
        check_message(target, name, &out, &input);
    }
}

/// Writes the smallest failing input the search found into the target's regression folder
/// (commit it) and says where.
fn keep_failure(target: &str, input: Option<Vec<u8>>) -> String {
    let Some(input) = input else {
        return String::new();
    };
    let dir = regression_dir(target);
    let file = dir.join(format!("found-{:016x}", fnv(&input)));
    match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, &input)) {
        Ok(()) => format!("the failing input is kept in {}: commit it", file.display()),
        Err(err) => format!("could not keep the failing input: {err}"),
    }
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100000001b3)
    })
}

fn fuzz(target: &str, name: &str, seeds: &[&str], f: fn(&[u8]) -> Outcome) {
    // Every seed is accepted as it is.
    for s in seeds {
        if let Err(m) = f(s.as_bytes()) {
            panic!("{target}: a seed is rejected: {m}");
        }
    }
    regressions(target, name, f);
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        0..seeds.len(),
        proptest::collection::vec(edit(), 1..8),
        proptest::collection::vec(any::<u8>(), 0..512),
        any::<bool>(),
    );
    let rejected = std::cell::Cell::new(0u32);
    let accepted = std::cell::Cell::new(0u32);
    let failing = std::cell::RefCell::new(None::<Vec<u8>>);
    let pending = std::cell::RefCell::new(None::<Vec<u8>>);
    runner
        .run(&strategy, |(seed, edits, raw, use_raw)| {
            let input = if use_raw {
                raw
            } else {
                apply(seeds[seed], &edits)
            };
            // An input still pending here made the last call panic: the newest such input is
            // the smallest the shrinking has reached.
            if let Some(p) = pending.replace(Some(input.clone())) {
                failing.replace(Some(p));
            }
            let out = f(&input);
            check_message(target, name, &out, &input);
            pending.replace(None);
            match out {
                Ok(()) => accepted.set(accepted.get() + 1),
                Err(_) => rejected.set(rejected.get() + 1),
            }
            Ok(())
        })
        .unwrap_or_else(|e| {
            let kept = keep_failure(target, pending.take().or(failing.take()));
            panic!("{target}: {e}\n{kept}")
        });
    eprintln!(
        "{target}: {} cases, {} accepted, {} rejected",
        cases(),
        accepted.get(),
        rejected.get()
    );
}

#[test]
fn catalog_json_never_panics_and_rejections_say_where() {
    fuzz(
        "catalog_json",
        "fuzz.json",
        SEEDS_JSON,
        fuzzing::catalog_json,
    );
}

#[test]
fn catalog_csv_never_panics_and_rejections_say_where() {
    fuzz(
        "catalog_csv",
        "fuzz/aws.csv",
        SEEDS_CSV,
        fuzzing::catalog_csv,
    );
}

#[test]
fn aws_offer_files_never_panic_and_rejections_say_where() {
    fuzz("aws_offer", "fuzz/index.csv", SEEDS_AWS, fuzzing::aws_offer);
}

#[test]
fn azure_pages_never_panic_and_rejections_say_where() {
    fuzz(
        "azure_page",
        "fuzz-page.json",
        SEEDS_AZURE,
        fuzzing::azure_page,
    );
}

#[test]
fn price_api_answers_never_panic_and_rejections_say_where() {
    fuzz(
        "feed_answers",
        "fuzz-answer.json",
        SEEDS_ANSWERS,
        fuzzing::feed_answers,
    );
}

#[test]
fn snapshot_manifests_never_panic_and_rejections_say_where() {
    fuzz(
        "snapshot_manifest",
        "fuzz-manifest.json",
        SEEDS_MANIFEST,
        fuzzing::snapshot_manifest,
    );
}

#[test]
fn scenarios_never_panic_and_rejections_say_where() {
    fuzz(
        "scenarios",
        "fuzz-scenarios.json",
        SEEDS_SCENARIOS,
        fuzzing::scenarios,
    );
}

#[test]
fn results_never_panic_and_rejections_say_where() {
    fuzz(
        "results",
        "fuzz-results.json",
        SEEDS_RESULTS,
        fuzzing::results,
    );
}

#[test]
fn report_rendering_never_panics_and_rejections_say_where() {
    fuzz(
        "report",
        "fuzz-results.json",
        SEEDS_RESULTS,
        fuzzing::report,
    );
}

#[test]
fn compare_never_panics_and_rejections_say_where() {
    fuzz(
        "compare",
        "fuzz-results.json",
        SEEDS_RESULTS,
        fuzzing::compare,
    );
}

#[test]
fn oversized_inputs_are_refused_before_they_are_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.json");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(gpuvalue::files::MAX_INPUT_BYTES + 1).unwrap();
    let e = gpuvalue::market::catalog::Catalog::load(&p)
        .unwrap_err()
        .to_string();
    assert!(e.contains("huge.json") && e.contains("larger than"), "{e}");
    let e = gpuvalue::results::ResultsFile::load(&p)
        .unwrap_err()
        .to_string();
    assert!(e.contains("larger than"), "{e}");
}
