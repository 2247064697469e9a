//! The catalog's checks: the faults public catalogs are known to have (placeholder, zero and
//! outlier prices, wrong GPU counts and memory units, unknown or ambiguous accelerators, stale
//! and undated figures, spot above on-demand), each a finding naming file, JSON path and row;
//! errors keep a row from ranking, warnings travel with it.

use super::gpu_id::GpuId;
use super::*;

/// A catalog and the findings of its checks: what [`crate::value::rank::rank`] ranks on, so that
/// no ranking runs on an unchecked catalog or on another catalog's findings.
pub struct Checked<'a> {
    pub catalog: &'a Catalog,
    pub findings: Vec<Finding>,
}

impl Checked<'_> {
    /// The errors in the user's own catalog files, which stop a ranking: not the embedded
    /// catalog's, not a snapshot's, and not a row whose accelerator simply has no spec entry,
    /// is another GPU under a lookalike name, or is no GPU (a SkyPilot file of a cloud
    /// renting B200s and TPUs is not a bad file: those rows are counted, and `--details`
    /// lists them as not ranked).
    pub fn user_errors(&self) -> Vec<&Finding> {
        let not_data_error = |f: &Finding| {
            f.instance.is_some_and(|i| {
                GpuId::parse(&self.catalog.instances[i].gpu)
                    .unranked()
                    .is_some_and(|u| !u.is_data_error())
            })
        };
        self.findings
            .iter()
            .filter(|f| {
                f.severity == Severity::Error
                    && f.file != EMBEDDED_NAME
                    && !f.file.starts_with(SNAPSHOT_PREFIX)
                    && !not_data_error(f)
            })
            .collect()
    }
}

/// Amounts that public catalogs use as filler rather than prices.
pub(crate) const PLACEHOLDER_AMOUNTS: &[f64] = &[700.0, 999.0, 9999.0, 99999.0];

/// The GPU count an instance type implies, and how: spelled out in the name (`gpu_8x_h100`,
/// `a3-highgpu-8g`, `BM.GPU4.8`) or known for its family (`p4d.24xlarge`, `Standard_ND96*`).
pub fn expected_gpu_count(name: &str) -> Option<(u32, &'static str)> {
    if let Some(n) = count_in_name(name) {
        return Some((n, "the instance type names"));
    }
    super::families::family_gpu_count(name).map(|n| (n, "its instance family has"))
}

/// The GPU count an instance type spells out, where it follows a known naming pattern:
/// `gpu_8x_h100`, `a3-highgpu-8g`, `BM.GPU4.8`, `p4d.24xlarge` (no count), ...
fn count_in_name(name: &str) -> Option<u32> {
    let lower = name.to_lowercase();
    // gpu_8x_..., 1x_A100...
    for part in lower.split(['_', '-', '.']) {
        if let Some(n) = part.strip_suffix('x')
            && let Ok(v) = n.parse::<u32>()
            && (1..=16).contains(&v)
            && (lower.starts_with("gpu_") || lower.starts_with(&format!("{v}x_")))
        {
            return Some(v);
        }
    }
    // GCP a2-/a3-highgpu-8g, a2-ultragpu-4g, a3-megagpu-8g
    if lower.starts_with("a2-") || lower.starts_with("a3-") {
        let last = lower.rsplit('-').next()?;
        return last.strip_suffix('g')?.parse().ok();
    }
    // OCI bare metal: BM.GPU.<model>.<n>, BM.GPU4.8
    if lower.starts_with("bm.gpu") {
        return lower.rsplit('.').next()?.parse().ok();
    }
    None
}

/// Check step: an instance row has a source and a valid as-of date.
fn check_sourced_dated(inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
    let (file, path) = (at.file, &at.path);
    if inst.source.trim().is_empty() {
        out.push(
            Severity::Error,
            file,
            format!("{path}.source"),
            at.row.clone(),
            "price has no source".into(),
        );
    }
    if inst.as_of.trim().is_empty() {
        out.push(
            Severity::Error,
            file,
            format!("{path}.as_of"),
            at.row.clone(),
            "price has no as-of date: an undated price cannot be trusted".into(),
        );
    } else if let Err(e) = crate::files::check_date(&inst.as_of) {
        out.push(
            Severity::Error,
            file,
            format!("{path}.as_of"),
            at.row.clone(),
            e,
        );
    }
}

/// Check step: the row's hardware figures, where stated, lie in their physical ranges.
fn check_physical_ranges(inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
    let (file, path) = (at.file, &at.path);
    for (field, v, hi) in [
        ("ram_gib", inst.ram_gib, 1e6),
        ("gpu_memory_gb", inst.gpu_memory_gb, 1e4),
        ("vcpu", inst.vcpu.map(f64::from), 1e5),
        (
            "interconnect.bus_gbps",
            inst.interconnect.as_ref().map(|i| i.bus_gbps),
            1e5,
        ),
    ] {
        if let Some(x) = v
            && !(x.is_finite() && x > 0.0 && x <= hi)
        {
            out.push(
                Severity::Error,
                file,
                format!("{path}.{field}"),
                at.row.clone(),
                format!("must be null or in the physical range 0 < {field} <= {hi:e}, found {x}"),
            );
        }
    }
}

/// Why a row's GPU id is not in the catalog, in words: an accelerator name that could be
/// several GPUs, one that is no GPU the catalog knows, or a JSON row's unknown id.
fn unknown_gpu_message(id: &str) -> String {
    match GpuId::parse(id) {
        GpuId::Unranked(u, name) => u.finding(name),
        GpuId::Catalog(_) => format!("unknown GPU id {id:?} (not in gpus[])"),
    }
}

/// Check step: a retired row has a valid retirement date; a price older than `STALE_MONTHS`
/// is flagged, with how to refresh it.
fn check_freshness(inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
    if let Some(r) = &inst.retired
        && let Err(e) = crate::files::check_date(r)
    {
        out.push(
            Severity::Error,
            at.file,
            format!("{}.retired", at.path),
            at.row.clone(),
            e,
        );
    }
    // A price with its own date is checked on that date.
    for (model, p) in &inst.prices {
        let Some(d) = &p.as_of else { continue };
        let path = format!("{}.prices.{}.as_of", at.path, model.name());
        if let Err(e) = crate::files::check_date(d) {
            out.push(Severity::Error, at.file, path, at.row.clone(), e);
        } else if inst.retired.is_none()
            && let Some(m) = crate::files::months_ago(d)
            && m > STALE_MONTHS
        {
            out.push(
                Severity::Warning,
                at.file,
                path,
                at.row.clone(),
                format!(
                    "stale {} price: as of {d}, {m} months ago (over {STALE_MONTHS}); `gpuvalue catalog update` takes current ones where a feed carries them (the AWS Price List: 1- and 3-year terms), else the provider's pricing page",
                    model.name()
                ),
            );
        }
    }
    if inst.retired.is_none()
        && let Some(m) = crate::files::months_ago(&inst.as_of)
        && m > STALE_MONTHS
        && inst.prices.values().any(|p| p.as_of.is_none())
    {
        out.push(
            Severity::Warning,
            at.file,
            format!("{}.as_of", at.path),
            at.row.clone(),
            format!(
                "stale price: as of {}, {m} months ago (over {STALE_MONTHS}); refresh it from a current catalog snapshot (--catalog-add a SkyPilot CSV) or the provider's pricing page",
                inst.as_of
            ),
        );
    }
}

/// Check step: an interruption risk belongs to a spot price, is dated (and flagged when
/// stale: a trailing month's statistic, dated on its own) and sourced, and a maximum run
/// time is a positive number of hours.
fn check_interruption(
    model: PricingModel,
    r: &spot::Interruption,
    retired: bool,
    path: &str,
    at: &RowAt<'_>,
    out: &mut Findings,
) {
    let mut say = |severity: Severity, field: &str, message: String| {
        out.push(
            severity,
            at.file,
            format!("{path}{field}"),
            at.row.clone(),
            message,
        )
    };
    if model != PricingModel::Spot {
        say(
            Severity::Error,
            "",
            format!(
                "an interruption risk on a {} price: only spot capacity is interrupted",
                model.name()
            ),
        );
    }
    if let Err(e) = crate::files::check_date(&r.as_of) {
        say(Severity::Error, ".as_of", e);
    } else if !retired
        && let Some(m) = crate::files::months_ago(&r.as_of)
        && m > STALE_MONTHS
    {
        say(
            Severity::Warning,
            ".as_of",
            format!(
                "stale interruption band: as of {}, {m} months ago (over {STALE_MONTHS}); the advisor reports the trailing month: `gpuvalue catalog update --source aws` reads AWS's current spot-advisor-data.json",
                r.as_of
            ),
        );
    }
    if r.source.trim().is_empty() {
        say(
            Severity::Error,
            ".source",
            "empty source: say where the risk is published".into(),
        );
    }
    if let Some(h) = r.max_run_hours
        && !(h.is_finite() && h > 0.0)
    {
        say(
            Severity::Error,
            ".max_run_hours",
            format!("maximum run time must be a positive number of hours, found {h}"),
        );
    }
    if r.band.is_none() && r.max_run_hours.is_none() {
        say(
            Severity::Error,
            "",
            "an interruption risk with neither a band nor a maximum run time says nothing: leave it out"
                .into(),
        );
    }
}

/// Findings collected by `Catalog::check`, in the order the checks find them.
#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    /// Records one finding.
    fn push(&mut self, severity: Severity, file: &str, path: String, row: String, message: String) {
        self.0.push(Finding {
            severity,
            file: file.to_string(),
            path,
            row,
            message,
            instance: None,
        })
    }
}

/// Where an instance row's findings point: its file, JSON path and key.
struct RowAt<'a> {
    file: &'a str,
    path: String,
    row: String,
}

impl Catalog {
    /// The catalog with its findings, as a ranking takes it.
    pub fn checked(&self) -> Checked<'_> {
        Checked {
            catalog: self,
            findings: self.check(),
        }
    }

    /// Finds the faults public catalogs are known to have. Errors mark rows that cannot be
    /// used; warnings mark suspect rows, which rankings show beside the row.
    pub fn check(&self) -> Vec<Finding> {
        let mut out = Findings::default();
        let main = self
            .origins
            .first()
            .map(|o| o.file.clone())
            .unwrap_or_else(|| "catalog".into());
        self.check_currencies(&main, &mut out);
        self.check_gpus(&main, &mut out);
        // Duplicates and outliers need the whole table.
        self.check_instances(&main, &mut out);
        // Outliers: the same instance type's price in other regions.
        self.check_outliers(&main, &mut out);
        // The market band: the same GPU's per-GPU hour across providers.
        for (i, m, sev, msg) in super::market::outside_band(self) {
            let file = self
                .origins
                .get(i)
                .map_or(main.as_str(), |o| o.file.as_str());
            let path = format!("instances[{i}].prices.{}.amount", m.name());
            out.push(sev, file, path, self.instances[i].key(), msg);
        }
        let checked = out.0.into_iter().map(|f| self.in_own_file(f));
        self.load_findings.iter().cloned().chain(checked).collect()
    }

    /// A finding as its own file has it: the file a GPU or currency came from, and the
    /// row's index in that file (the merged index is kept in `instance`).
    fn in_own_file(&self, mut f: Finding) -> Finding {
        let index = |rest: &str| -> Option<(usize, usize)> {
            let end = rest.find(']')?;
            Some((rest[..end].parse().ok()?, end))
        };
        if let Some(rest) = f.path.strip_prefix("instances[")
            && let Some((i, end)) = index(rest)
        {
            f.instance = Some(i);
            if let Some(o) = self.origins.get(i) {
                f.path = if o.lines.is_empty() {
                    format!("instances[{}]{}", o.index, &rest[end + 1..])
                } else {
                    csv_place(&o.lines, &rest[end + 1..])
                };
                f.file = o.file.clone();
            }
        } else if let Some(rest) = f.path.strip_prefix("gpus[")
            && let Some((i, end)) = index(rest)
            && let Some(o) = self.gpu_origins.get(i)
        {
            f.path = format!("gpus[{}]{}", o.index, &rest[end + 1..]);
            f.file = o.file.clone();
        } else if f.path.starts_with("currencies.")
            && let Some(file) = self.currency_origins.get(&f.row)
        {
            f.file = file.clone();
        }
        f
    }

    /// How a finding names another instance row: its index in its own file, and the file
    /// when that is not `file`.
    fn row_ref(&self, i: usize, file: &str) -> String {
        match self.origins.get(i) {
            Some(o) if o.file == file => format!("instances[{}]", o.index),
            Some(o) => format!("instances[{}] of {}", o.index, o.file),
            None => format!("instances[{i}]"),
        }
    }

    /// GPU ids and currency codes whose catalog entry has an error: instances using them
    /// are never ranked.
    pub fn bad_entries(findings: &[Finding]) -> (Vec<String>, Vec<String>) {
        let errors = findings.iter().filter(|f| f.severity == Severity::Error);
        let (mut gpus, mut currencies) = (Vec::new(), Vec::new());
        for f in errors {
            if f.path.starts_with("gpus[") {
                gpus.push(f.row.clone());
            } else if f.path.starts_with("currencies.") {
                currencies.push(f.row.clone());
            }
        }
        (gpus, currencies)
    }

    /// Check step: every currency has a positive rate and an as-of date.
    fn check_currencies(&self, main: &str, out: &mut Findings) {
        for (code, c) in &self.currencies {
            if let Some(m) = crate::files::months_ago(&c.as_of)
                && m > STALE_MONTHS
                && code != "USD"
            {
                out.push(
                    Severity::Warning,
                    main,
                    format!("currencies.{code}.as_of"),
                    code.clone(),
                    format!(
                        "stale exchange rate: as of {}, {m} months ago (over {STALE_MONTHS}); `gpuvalue catalog update --source ecb` takes the ECB's current reference rates, or give one in a --catalog-add file",
                        c.as_of
                    ),
                );
            }
        }
        for (code, c) in &self.currencies {
            if !(c.per_usd.is_finite() && (1e-6..=1e6).contains(&c.per_usd)) {
                out.push(
                    Severity::Error,
                    main,
                    format!("currencies.{code}.per_usd"),
                    code.clone(),
                    format!(
                        "exchange rate must be a positive number in 1e-6..=1e6 units per USD, found {}",
                        c.per_usd
                    ),
                );
            }
            if c.as_of.trim().is_empty() {
                out.push(
                    Severity::Error,
                    main,
                    format!("currencies.{code}.as_of"),
                    code.clone(),
                    "exchange rate has no as-of date".into(),
                );
            } else if let Err(e) = crate::files::check_date(&c.as_of) {
                out.push(
                    Severity::Error,
                    main,
                    format!("currencies.{code}.as_of"),
                    code.clone(),
                    e,
                );
            }
        }
    }

    /// Check step: GPU ids are unique, figures are sourced, dated and positive (or null).
    fn check_gpus(&self, main: &str, out: &mut Findings) {
        let mut seen_gpu = HashMap::new();
        for (i, g) in self.gpus.iter().enumerate() {
            let path = format!("gpus[{i}]");
            if let Some(prev) = seen_gpu.insert(g.id.clone(), i) {
                out.push(
                    Severity::Error,
                    main,
                    format!("{path}.id"),
                    g.id.clone(),
                    format!("duplicate GPU id (also gpus[{prev}])"),
                );
            }
            if g.source.trim().is_empty() {
                out.push(
                    Severity::Error,
                    main,
                    format!("{path}.source"),
                    g.id.clone(),
                    "GPU figures have no source".into(),
                );
            }
            if g.as_of.trim().is_empty() {
                out.push(
                    Severity::Error,
                    main,
                    format!("{path}.as_of"),
                    g.id.clone(),
                    "GPU figures have no as-of date".into(),
                );
            } else if let Err(e) = crate::files::check_date(&g.as_of) {
                out.push(
                    Severity::Error,
                    main,
                    format!("{path}.as_of"),
                    g.id.clone(),
                    e,
                );
            }
            for (field, v, hi) in g.figure_fields() {
                if let Some(x) = v
                    && !(x.is_finite() && x > 0.0 && x <= hi)
                {
                    out.push(
                        Severity::Error,
                        main,
                        format!("{path}.{field}"),
                        g.id.clone(),
                        format!("must be null or a number in the physical range 0 < {field} <= {hi:e}, found {x}"),
                    );
                }
            }
            let fields: Vec<&str> = g.figure_fields().iter().map(|f| f.0).collect();
            for key in g.derived.keys().filter(|k| !fields.contains(&k.as_str())) {
                out.push(
                    Severity::Error,
                    main,
                    format!("{path}.derived.{key}"),
                    g.id.clone(),
                    format!(
                        "names no figure field (expected one of {})",
                        fields.join(", ")
                    ),
                );
            }
            if let Some(n) = g.adapters_per_package
                && !(1..=16).contains(&n)
            {
                out.push(
                    Severity::Error,
                    main,
                    format!("{path}.adapters_per_package"),
                    g.id.clone(),
                    format!("expected 1..=16 adapters per package, found {n}"),
                );
            }
        }
    }

    /// Check step: each instance row in turn, duplicates against the rows before it.
    fn check_instances(&self, main: &str, out: &mut Findings) {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, inst) in self.instances.iter().enumerate() {
            let at = RowAt {
                file: self.origins.get(i).map_or(main, |o| o.file.as_str()),
                path: format!("instances[{i}]"),
                row: inst.key(),
            };
            if let Some(prev) = seen.insert(at.row.clone(), i) {
                out.push(
                    Severity::Error,
                    at.file,
                    at.path.clone(),
                    at.row.clone(),
                    format!(
                        "duplicate of {} (same provider, instance type and region)",
                        self.row_ref(prev, at.file)
                    ),
                );
            }
            self.check_instance_fields(inst, &at, out);
            check_freshness(inst, &at, out);
            self.check_instance_memory(inst, &at, out);
            self.check_instance_prices(inst, &at, out);
            check_spot_against_on_demand(inst, &at, out);
        }
    }

    /// Check step: an instance row is sourced, dated, names a known GPU and a plausible count.
    fn check_instance_fields(&self, inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
        check_sourced_dated(inst, at, out);
        check_physical_ranges(inst, at, out);
        self.check_gpu_and_count(inst, at, out);
    }

    /// Check step: the row names a known GPU model, and a GPU count that is plausible and
    /// agrees with the count its instance type states.
    fn check_gpu_and_count(&self, inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
        let (file, path) = (at.file, &at.path);
        if self.gpu(&inst.gpu).is_none() {
            out.push(
                Severity::Error,
                file,
                format!("{path}.gpu"),
                at.row.clone(),
                unknown_gpu_message(&inst.gpu),
            );
        }
        if inst.gpu_count == 0 || inst.gpu_count > 16 {
            out.push(
                Severity::Error,
                file,
                format!("{path}.gpu_count"),
                at.row.clone(),
                format!("{} GPUs is not a plausible instance", inst.gpu_count),
            );
        } else if let Some((n, how)) = expected_gpu_count(&inst.instance_type)
            && n != inst.gpu_count
        {
            out.push(
                Severity::Error,
                file,
                format!("{path}.gpu_count"),
                at.row.clone(),
                format!(
                    "{} GPUs, but {how} {n}: a {} has {n} GPUs",
                    inst.gpu_count, inst.instance_type
                ),
            );
        }
    }

    /// Check step: an instance row's GPU memory agrees with its GPU model's.
    fn check_instance_memory(&self, inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
        let gpu = self.gpu(&inst.gpu);
        let (file, path) = (at.file, &at.path);
        if let (Some(listed), Some(model)) = (inst.gpu_memory_gb, gpu.and_then(|g| g.memory_gb)) {
            let ratio = listed / model;
            if !(0.5..=2.0).contains(&ratio) {
                out.push(
                    Severity::Error,
                    file,
                    format!("{path}.gpu_memory_gb"),
                    at.row.clone(),
                    format!(
                        "{listed:.3} GB ({:.0} MiB) per GPU, but a {} has {model} GB: wrong unit (GB written as MiB, or MiB as GB?)",
                        listed * 1e9 / 1_048_576.0,
                        inst.gpu
                    ),
                );
            } else if (ratio - 1.0).abs() > 0.1 {
                out.push(
                    Severity::Warning,
                    file,
                    format!("{path}.gpu_memory_gb"),
                    at.row.clone(),
                    format!(
                        "{listed} GB per GPU differs from the model's {model} GB (usable vs datasheet memory?)"
                    ),
                );
            }
        }
    }

    /// Check step: each of an instance row's prices has a known currency, is per hour and
    /// is a positive amount that is not a placeholder.
    fn check_instance_prices(&self, inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
        let file = at.file;
        for (model, p) in &inst.prices {
            let ppath = format!("{}.prices.{}", at.path, model.name());
            if !self.currencies.contains_key(&p.currency) {
                out.push(
                    Severity::Error,
                    file,
                    format!("{ppath}.currency"),
                    at.row.clone(),
                    format!(
                        "unknown currency {:?} (catalog has {})",
                        p.currency,
                        self.currencies
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
            if p.per != "hour" {
                out.push(
                    Severity::Error,
                    file,
                    format!("{ppath}.per"),
                    at.row.clone(),
                    format!("prices must be per \"hour\", found {:?}", p.per),
                );
            }
            if !(p.amount.is_finite() && p.amount > 0.0) {
                out.push(
                    Severity::Error,
                    file,
                    format!("{ppath}.amount"),
                    at.row.clone(),
                    format!("price must be positive, found {}", p.amount),
                );
            } else if !(1e-6..=1e7).contains(&p.amount) {
                out.push(
                    Severity::Error,
                    file,
                    format!("{ppath}.amount"),
                    at.row.clone(),
                    format!(
                        "price {} per hour is outside the plausible range 1e-6..=1e7",
                        p.amount
                    ),
                );
            } else if PLACEHOLDER_AMOUNTS.contains(&p.amount) {
                out.push(
                    Severity::Error,
                    file,
                    format!("{ppath}.amount"),
                    at.row.clone(),
                    format!("{} looks like a placeholder, not a price", p.amount),
                );
            }
            if let Some(r) = &p.interruption {
                check_interruption(
                    *model,
                    r,
                    inst.retired.is_some(),
                    &format!("{ppath}.interruption"),
                    at,
                    out,
                );
            }
        }
    }

    /// Check step: prices more than 2x away from the median of the same provider, instance
    /// type and pricing model in other regions (three rows or more) are warned about.
    fn check_outliers(&self, main: &str, out: &mut Findings) {
        // Ordered: the warnings come out in the same order on every run.
        let mut by_type: std::collections::BTreeMap<
            (String, String, PricingModel),
            Vec<(usize, f64)>,
        > = std::collections::BTreeMap::new();
        for (i, inst) in self.instances.iter().enumerate() {
            for (model, p) in &inst.prices {
                if let Ok(usd) = self.convert(p.amount, &p.currency, "USD")
                    && usd > 0.0
                {
                    by_type
                        .entry((inst.provider.clone(), inst.instance_type.clone(), *model))
                        .or_default()
                        .push((i, usd));
                }
            }
        }
        for ((_, _, model), rows) in by_type {
            if rows.len() < 3 {
                continue;
            }
            for &(i, usd) in &rows {
                let mut others: Vec<f64> = rows.iter().filter(|r| r.0 != i).map(|r| r.1).collect();
                others.sort_by(f64::total_cmp);
                let med = others[others.len() / 2];
                if usd < 0.5 * med || usd > 2.0 * med {
                    let inst = &self.instances[i];
                    let file = self.origins.get(i).map_or(main, |o| o.file.as_str());
                    out.push(
                        Severity::Warning,
                        file,
                        format!("instances[{i}].prices.{}.amount", model.name()),
                        inst.key(),
                        format!(
                            "{usd:.4} USD/h is an outlier against the same type elsewhere (median {med:.4})"
                        ),
                    );
                }
            }
        }
    }
}

/// Check step: a spot price in the on-demand price's currency is not above the on-demand price.
fn check_spot_against_on_demand(inst: &Instance, at: &RowAt<'_>, out: &mut Findings) {
    if let (Some(od), Some(spot)) = (
        inst.prices.get(&PricingModel::OnDemand),
        inst.prices.get(&PricingModel::Spot),
    ) && od.currency == spot.currency
        && spot.amount > od.amount
    {
        // (A spot price equal to on-demand was dropped with a warning when loading.)
        out.push(
            Severity::Error,
            at.file,
            format!("{}.prices.spot.amount", at.path),
            at.row.clone(),
            format!("spot {} is above on-demand {}", spot.amount, od.amount),
        );
    }
}
