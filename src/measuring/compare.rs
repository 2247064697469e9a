//! Regression compare of two results files: per probe the speed ratio NEW/BASE with a
//! verdict that respects the recorded spread, validation changes, probes added or missing.

use crate::figure::FigureKey;
use crate::results::{ProbeResult, ResultsFile, Status};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    SameWithinNoise,
    /// Ok in BASE, failed (or no figure) in NEW: a regression.
    NowFailing,
    /// Failed in BASE, ok in NEW.
    Fixed,
    /// Neither run has a figure (both failed, skipped or unsupported).
    NoFigure,
    Added,
    Missing,
    /// The figure is in another unit in NEW (MFLOPS for GFLOPS): not comparable, a failure.
    UnitChanged,
    /// Measured under different parameters (array size, quick plan, checked kernels,
    /// timing method): not a speed-up or a regression unless `--force`.
    NotComparable,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "SLOWER",
            Verdict::SameWithinNoise => "same within noise",
            Verdict::NowFailing => "NOW FAILING",
            Verdict::Fixed => "fixed",
            Verdict::NoFigure => "no figure",
            Verdict::Added => "added",
            Verdict::Missing => "missing",
            Verdict::UnitChanged => "UNIT CHANGED",
            Verdict::NotComparable => "not comparable",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub probe: String,
    pub unit: String,
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// NEW/BASE for figures where higher is better, BASE/NEW for latencies: above 1 is
    /// better either way.
    pub speedup: Option<f64>,
    /// Half the larger relative spread (max - min) / median of the two runs.
    pub noise: Option<f64>,
    pub verdict: Verdict,
    /// True when this row makes `compare` exit non-zero.
    pub regression: bool,
    /// The parameters this probe was measured under that differ between the files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differs: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub base: String,
    pub new: String,
    pub threshold: f64,
    pub same_adapter: bool,
    pub adapter_note: Option<String>,
    pub rows: Vec<Row>,
    /// Why the files cannot pass as a gate whatever the rows say: NEW measured nothing,
    /// a figure that cannot be true. Each one fails `compare`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gate_failures: Vec<String>,
    /// Run parameters that differ between the files (they apply to every probe).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_differences: Vec<String>,
}

impl Comparison {
    /// Rows that regressed, plus the gate failures: `compare` exits 1 when this is not 0.
    pub fn regressions(&self) -> usize {
        self.rows.iter().filter(|r| r.regression).count() + self.gate_failures.len()
    }
}

/// What makes a pair of files fail the gate on its own: NEW without probes or without a
/// single measured figure, and figures in either file that cannot be true.
fn gate_failures(
    base_name: &str,
    base: &ResultsFile,
    new_name: &str,
    new: &ResultsFile,
) -> Vec<String> {
    let mut out = Vec::new();
    if new.probes.is_empty() {
        out.push(format!("NEW {new_name} has no probe results"));
    } else if !new.probes.iter().any(|p| figure(p).is_some()) {
        out.push(format!(
            "NEW {new_name} measured nothing: every probe was skipped, failed or unsupported"
        ));
    }
    for (which, name, r) in [("BASE", base_name, base), ("NEW", new_name, new)] {
        for p in r.figure_problems() {
            out.push(format!("{which} {name}: {p}"));
        }
    }
    out
}

fn figure(p: &ProbeResult) -> Option<(f64, f64)> {
    if p.status != Status::Ok {
        return None;
    }
    let v = p.value.as_ref()?;
    (v.median > 0.0).then(|| (v.median, v.rel_spread()))
}

/// Whether two results files describe the same adapter (name, backend and driver).
pub fn adapter_difference(a: &ResultsFile, b: &ResultsFile) -> Option<String> {
    let desc = |r: &ResultsFile| {
        format!(
            "{} ({}, {} {})",
            r.adapter.name, r.adapter.backend, r.adapter.driver, r.adapter.driver_info
        )
    };
    (desc(a) != desc(b)).then(|| format!("BASE is {}, NEW is {}", desc(a), desc(b)))
}

/// A probe of BASE that NEW does not have: a failure when BASE measured it.
fn missing_row(b: &ProbeResult) -> Row {
    Row {
        probe: b.name.clone(),
        unit: b.unit.clone(),
        base: figure(b).map(|f| f.0),
        new: None,
        speedup: None,
        noise: None,
        verdict: Verdict::Missing,
        regression: figure(b).is_some(),
        differs: None,
    }
}

/// A probe whose unit differs between the files: not comparable, a failure.
fn unit_changed_row(b: &ProbeResult, n: &ProbeResult) -> Row {
    Row {
        probe: b.name.clone(),
        unit: format!("{} -> {}", b.unit, n.unit),
        base: figure(b).map(|f| f.0),
        new: figure(n).map(|f| f.0),
        speedup: None,
        noise: None,
        verdict: Verdict::UnitChanged,
        regression: true,
        differs: None,
    }
}

/// Compares NEW against BASE. A probe is a regression when it is slower by more than both
/// the threshold and the noise, or when it passed in BASE and fails in NEW.
pub fn compare(
    base_name: &str,
    base: &ResultsFile,
    new_name: &str,
    new: &ResultsFile,
    threshold: f64,
    force: bool,
) -> Comparison {
    let run = run_differences(base, new);
    let mut rows = Vec::new();
    // Derived rows (the precision summary) repeat other probes' figures: not compared.
    let measured = |p: &&ProbeResult| p.figure != Some(FigureKey::DoubleBest);
    for b in base.probes.iter().filter(measured) {
        let n = new.probes.iter().find(|p| p.name == b.name);
        let Some(n) = n else {
            rows.push(missing_row(b));
            continue;
        };
        let (fb, fn_) = (figure(b), figure(n));
        if b.unit != n.unit {
            rows.push(unit_changed_row(b, n));
            continue;
        }
        let row = paired_row(b, n, fb, fn_, threshold);
        rows.push(like_with_like(row, b, n, &run, force));
    }
    for n in new.probes.iter().filter(measured) {
        if !base.probes.iter().any(|b| b.name == n.name) {
            rows.push(Row {
                new: figure(n).map(|f| f.0),
                verdict: Verdict::Added,
                ..Row::empty(n)
            });
        }
    }
    let note = adapter_difference(base, new);
    Comparison {
        gate_failures: gate_failures(base_name, base, new_name, new),
        base: base_name.into(),
        new: new_name.into(),
        threshold,
        same_adapter: note.is_none(),
        adapter_note: note,
        rows,
        run_differences: run,
    }
}

/// One probe in both files: the speed-up and its verdict against the noise where both have
/// a figure, else what became of the figure (lost, fixed, never there).
fn paired_row(
    b: &ProbeResult,
    n: &ProbeResult,
    fb: Option<(f64, f64)>,
    fn_: Option<(f64, f64)>,
    threshold: f64,
) -> Row {
    match (fb, fn_) {
        (Some((vb, sb)), Some((vn, sn))) => {
            let speedup = if b.higher_is_better { vn / vb } else { vb / vn };
            let noise = sb.max(sn) / 2.0;
            let verdict = if (speedup - 1.0).abs() <= noise {
                Verdict::SameWithinNoise
            } else if speedup > 1.0 {
                Verdict::Faster
            } else {
                Verdict::Slower
            };
            Row {
                base: Some(vb),
                new: Some(vn),
                speedup: Some(speedup),
                noise: Some(noise),
                verdict,
                regression: verdict == Verdict::Slower && speedup < 1.0 - threshold,
                ..Row::empty(b)
            }
        }
        (Some((vb, _)), None) => Row {
            base: Some(vb),
            // Failed (or lost its figure: skipped, unsupported) where it used to pass.
            verdict: if n.status == Status::Failed {
                Verdict::NowFailing
            } else {
                Verdict::NoFigure
            },
            regression: true,
            ..Row::empty(b)
        },
        (None, Some((vn, _))) => Row {
            new: Some(vn),
            verdict: Verdict::Fixed,
            ..Row::empty(b)
        },
        (None, None) => Row {
            regression: b.status == Status::Ok && n.status == Status::Failed,
            ..Row::empty(b)
        },
    }
}

impl Row {
    /// The probe's row with no figure, no verdict but "no figure", and no regression.
    fn empty(p: &ProbeResult) -> Row {
        Row {
            probe: p.name.clone(),
            unit: p.unit.clone(),
            base: None,
            new: None,
            speedup: None,
            noise: None,
            verdict: Verdict::NoFigure,
            regression: false,
            differs: None,
        }
    }
}

/// Run options that change what a figure measures, where the files differ.
fn run_differences(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let (x, y) = (&a.options, &b.options);
    let mut v = Vec::new();
    let mut diff = |what: &str, p: String, q: String| {
        if p != q {
            v.push(format!("{what}: BASE {p}, NEW {q}"));
        }
    };
    diff("--quick", x.quick.to_string(), y.quick.to_string());
    diff(
        "--checked",
        (!x.trusted_shaders).to_string(),
        (!y.trusted_shaders).to_string(),
    );
    diff(
        "GPU timestamps",
        x.timestamps.to_string(),
        y.timestamps.to_string(),
    );
    v
}

/// The probe parameters that say what was measured (sizes, array and transfer bytes, host
/// memory kind); the others record choices a probe makes for itself (tuned shapes) and may
/// differ between two runs of the same command.
const MEASURED_UNDER: [&str; 6] = ["m", "n", "k", "array_bytes", "bytes", "host_memory"];

/// The parameters a probe was measured under that differ, with the run's differences
/// (these make the figures not comparable), and how each was timed (said, not blocking: a
/// figure whose timestamps disagreed falls back to the wall clock in any run).
fn probe_differences(
    b: &ProbeResult,
    n: &ProbeResult,
    run: &[String],
) -> (Vec<String>, Option<String>) {
    let mut v: Vec<String> = run.to_vec();
    for k in MEASURED_UNDER {
        let (p, q) = (b.params.get(k), n.params.get(k));
        if p != q {
            let show = |x: Option<&serde_json::Value>| x.map_or("-".to_string(), |x| x.to_string());
            v.push(format!("{k}: BASE {}, NEW {}", show(p), show(q)));
        }
    }
    let method = |p: &ProbeResult| p.timing.as_ref().map(|t| format!("{:?}", t.method));
    let timed = match (method(b), method(n)) {
        (Some(p), Some(q)) if p != q => Some(format!("timed by: BASE {p}, NEW {q}")),
        _ => None,
    };
    (v, timed)
}

/// A row whose figures were measured under different parameters is not a speed-up or a
/// regression (unless `force`): its differences are named instead.
fn like_with_like(
    mut row: Row,
    b: &ProbeResult,
    n: &ProbeResult,
    run: &[String],
    force: bool,
) -> Row {
    let (d, timed) = probe_differences(b, n, run);
    let all: Vec<String> = d.iter().cloned().chain(timed).collect();
    if !all.is_empty() {
        row.differs = Some(all.join("; "));
    }
    if !d.is_empty() && !force && row.speedup.is_some() {
        row.verdict = Verdict::NotComparable;
        row.speedup = None;
        row.noise = None;
        row.regression = false;
    }
    row
}
