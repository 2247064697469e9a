//! Measured figures: a results file's medians per figure, and the efficiency factors they
//! imply for the GPUs the catalog knows.

use super::*;

pub(super) fn implausible(
    gpu: &crate::market::catalog::GpuSpec,
    u: Rate,
    v: f64,
) -> Option<String> {
    let sheet = u.datasheet(gpu)?.value / f64::from(gpu.adapters());
    let share = v / sheet;
    (sheet > 0.0 && !(PLAUSIBLE.0..=PLAUSIBLE.1).contains(&share)).then(|| {
        format!(
            "{} {} {} is {:.1}% of the {} datasheet ({} {}), outside the plausible {:.0}-{:.0}%",
            u.label(),
            short_number(v),
            u.unit(),
            share * 100.0,
            gpu.name,
            short_number(sheet),
            u.unit(),
            PLAUSIBLE.0 * 100.0,
            PLAUSIBLE.1 * 100.0
        )
    })
}

/// Each results file as a measured machine, and the measured figures per catalog GPU.
pub(super) fn measured_figures(
    catalog: &Catalog,
    scenario: &Scenario,
    figures: &[Rate],
    results: &[(String, ResultsFile)],
    opts: &RankOptions,
    notes: &mut Vec<String>,
) -> (Measured, Vec<Machine>) {
    let mut by_place = ByPlace::new();
    let mut machines = Vec::new();
    for (name, r) in results {
        let matched = catalog.match_adapter(r.catalog_name());
        let gpu = matched.map(|g| g.id.clone());
        let rejected = match (matched, r.adapter.software) {
            (Some(cg), false) => place_figures(cg, figures, name, r, opts, notes, &mut by_place),
            _ => None,
        };
        let (uses, complete) = figure_uses(figures, name, r);
        // One adapter, its memory the catalog's (a GPU the catalog lacks decodes at the
        // server's batch limit: its memory is not known here).
        let mem = matched
            .and_then(|g| g.memory_per_adapter_gb())
            .unwrap_or(f64::INFINITY);
        let hours = (complete && rejected.is_none())
            .then(|| scenario.timing(1, mem, None, value_in(&uses)).ok())
            .flatten()
            .map(|t| t.seconds / 3600.0);
        machines.push(Machine {
            adapter: r.adapter.name.clone(),
            software: r.adapter.software,
            catalog_gpu: gpu,
            file: name.clone(),
            figures: uses,
            hours_per_job: hours,
            instances_faster: None,
            implausible: rejected,
        });
    }
    let measured = by_place
        .into_iter()
        .map(|(k, places)| {
            let files = places.values().flatten().map(|(_, f)| f.clone()).collect();
            let values = places
                .into_values()
                .filter_map(|v| median(v.into_iter().map(|(x, _)| x)))
                .collect();
            (k, (values, files))
        })
        .collect();
    (measured, machines)
}

/// A real GPU's results file: its figures filed under the catalog GPU and the place they
/// were measured, unless one is implausible for that GPU (then the file is noted and, unless
/// `--use-implausible`, none of its figures is used: the reason is returned).
fn place_figures(
    cg: &GpuSpec,
    figures: &[Rate],
    name: &str,
    r: &ResultsFile,
    opts: &RankOptions,
    notes: &mut Vec<String>,
    by_place: &mut ByPlace,
) -> Option<String> {
    let units: std::collections::BTreeSet<Rate> = figures.iter().flat_map(|f| f.chain()).collect();
    // One implausible figure makes the whole file suspect (it is likely of another
    // device), latency included, which has no datasheet to check it against.
    let odd: Vec<String> = units
        .iter()
        .filter_map(|&u| implausible(cg, u, u.measured(r)?))
        .collect();
    if !odd.is_empty() {
        let (what, skip) = if opts.use_implausible {
            ("used as measured (--use-implausible)".to_string(), false)
        } else {
            (
                format!(
                    "none of its figures is used as {}'s (--use-implausible uses them)",
                    cg.name
                ),
                true,
            )
        };
        notes.push(format!("{name}: {}; {what}", odd.join("; ")));
        if skip {
            return Some(format!(
                "its figures are implausible for {} ({}): not compared (--use-implausible)",
                cg.name,
                odd.first().map_or("", String::as_str)
            ));
        }
    }
    for u in units {
        let Some(v) = u.measured(r) else { continue };
        by_place
            .entry((cg.id.clone(), u))
            .or_default()
            .entry(crate::value::fleet::place(r))
            .or_default()
            .push((v, name.to_string()));
    }
    None
}

/// The scenario's figures as this file measured them (or a figure that stands in), and
/// whether it measured every one.
fn figure_uses(figures: &[Rate], name: &str, r: &ResultsFile) -> (Vec<FigureUse>, bool) {
    let mut uses = Vec::new();
    let mut complete = true;
    for &f in figures {
        let found = f
            .chain()
            .into_iter()
            .find_map(|u| Some((u, u.measured(r)?)));
        match found {
            Some((u, v)) => {
                uses.push(if u == f {
                    FigureUse::new(f, v, Derivation::Measured, format!("measured in {name}"))
                } else {
                    FigureUse::new(f, v, Derivation::StandsIn { used: u }, stand_in_basis(f, u))
                });
            }
            None => complete = false,
        }
    }
    (uses, complete)
}

/// Each figure's value in `uses` (NaN for one it lacks: no term asks for it).
pub(super) fn value_in(uses: &[FigureUse]) -> impl Fn(Rate) -> f64 + '_ {
    |f| {
        uses.iter()
            .find(|u| u.figure == f)
            .map_or(f64::NAN, |u| u.value)
    }
}

/// The embedded calibration, parsed once.
pub(super) fn embedded_calibration() -> &'static CalibrationFile {
    static C: OnceLock<CalibrationFile> = OnceLock::new();
    C.get_or_init(CalibrationFile::embedded)
}

/// For figures no calibration rule covers: the median measured / datasheet ratio over the
/// hardware GPUs measured in this ranking (a WGSL kernel's share of the peak), by figure.
pub(super) fn derived_factors(catalog: &Catalog, figures: &[Rate], measured: &Measured) -> Derived {
    let mut out = BTreeMap::new();
    for f in figures.iter().flat_map(|f| f.chain()) {
        let mut files = Vec::new();
        let ratios: Vec<f64> = measured
            .iter()
            .filter(|((_, fig), _)| *fig == f)
            .filter_map(|((g, _), (vals, from))| {
                let gpu = catalog.gpu(g)?;
                let sheet = f.datasheet(gpu)?.value / f64::from(gpu.adapters());
                let r = median(vals.iter().copied())? / sheet;
                files.extend(from.iter().cloned());
                Some(r)
            })
            .collect();
        let n = ratios.len();
        if let Some(x) = median(ratios) {
            out.insert(f, (x, n, files));
        }
    }
    out
}

/// Per figure: the median measured / datasheet ratio, over how many GPU models, from which
/// files.
pub(super) type Derived = BTreeMap<Rate, (f64, usize, Vec<String>)>;

/// The files a derived figure comes from, for its basis: "a.json, b.json" (at most 3 named).
pub(super) fn files_text(files: &[String]) -> String {
    let mut v: Vec<&str> = files.iter().map(String::as_str).collect();
    v.sort();
    v.dedup();
    let more = v.len().saturating_sub(3);
    let mut t = v.into_iter().take(3).collect::<Vec<_>>().join(", ");
    if more > 0 {
        t.push_str(&format!(" and {more} more"));
    }
    t
}
