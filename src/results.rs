//! The results file: its schema (versioned), atomic saving, and strict loading.
//!
//! Schema (version 5; versions 1 to 4 are still read: 1 lacks the last four fields,
//! results before 3 lack `figure`, which is then derived from `probe` and `name`, before
//! 4 there is no `burn`, before 5 no `telemetry` or `energy`), one JSON object per adapter
//! run:
//! ```text
//! schema_version  integer, 5
//! tool            { name, version, git_commit }
//! created         RFC 3339 UTC time the run started; updated: time of the last rewrite
//! complete        false while the run is still going (the file is rewritten after each probe)
//! host            { hostname, os, kernel, cpu_model, cpu_threads, cpu_cores, ram_bytes }
//! adapter         { index, name, vendor_id, vendor, device_id, device_type, backend, driver,
//!                   driver_info, software, limits{..}, features{..} }
//! options         { quick, probes, sizes, array_mib, time_budget_s, trusted_shaders, timestamps, args }
//! probes[]        { probe, name, figure, params{..}, status (ok|failed|unsupported|skipped), reason,
//!                   unit, value{n,median,min,max,mean,stddev}, timing{method, iters_per_sample,
//!                   warmup_runs, warmup_s, time_per_iter_s{..}}, validation{metric, error,
//!                   tolerance, passed, detail}, kernel{..}, autotune[..], warnings[..] }
//! interrupted     true when Ctrl-C (or SIGTERM) stopped the run; `complete` is then false
//! incidents[]     { time, probe, kind, detail }: watchdog fired, device lost or reopened,
//!                 probe panicked, GPU memory left allocated after a probe
//! concurrent_runs[] { pid, started, out, adapter }: other gpuvalue benches seen running
//! memory[]        { probe, allocated_bytes, allocations, baseline_bytes }: device memory
//!                 still allocated after each probe (where the backend reports it)
//! instance        { provider, instance_type, region? }: the catalog instance the run was
//!                 made on (`bench --instance`), absent when not given
//! burn            the acceptance test (`gpuvalue burn`): { mode, planned_s, elapsed_s,
//!                 complete, thresholds{..}, load{kernel, size, inputs, warmup_s, idle_gap_s,
//!                 windows[{index, start_s, seconds, iterations, gflops, miscompares,
//!                 non_finite, host_mismatches, after_idle}]}, stability{..}, vram{..},
//!                 expectation{..}, error?, injected?, verdict, reasons[], covered }
//! telemetry       { period_s, sources[{source, device, read, reason?, counters[]}], samples,
//!                 gaps, gap_reasons[] }: the power and clock sampler beside the run; each
//!                 probe then carries energy { source, seconds, samples, gaps, mean_w?,
//!                 energy_j?, method?, per_watt?, graphics_mhz?, memory_mhz?,
//!                 temperature_c?, power_limit_w?, max_graphics_mhz?, throttle[] }
//! ```
//! `adapter.pci_bus_id` and `instance` are optional schema-3 fields added later: a file
//! without them reads as before, so the version stays 3 (a gpuvalue from before them refuses
//! a file that has them, naming the field).
//! `value` is present only when `status` is `ok`: a failed probe never carries a figure.

use crate::figure::FigureKey;
use crate::files::now_rfc3339;
use crate::host::HostInfo;
use crate::model::{AdapterSummary, InstanceRef, OtherRun, TimingInfo};
use crate::stats::Summary;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const SCHEMA_VERSION: u32 = 5;

/// Longest adapter or probe name read from a results file (real ones are under 100
/// characters; a 50 MB name would blow every table and report up).
pub const MAX_NAME_CHARS: usize = 256;

/// The physical range of a figure in `unit`, as (lowest, highest, what): far outside any
/// GPU that exists or is announced, so a value outside it is a broken or forged file.
pub fn unit_range(unit: &str) -> Option<(f64, f64, &'static str)> {
    match unit {
        "GFLOPS" => Some((f64::MIN_POSITIVE, 1e7, "0 < GFLOPS <= 1e7")),
        "GOPS" => Some((f64::MIN_POSITIVE, 1e8, "0 < GOPS <= 1e8")),
        "GB/s" => Some((f64::MIN_POSITIVE, 1e6, "0 < GB/s <= 1e6")),
        "us" => Some((1e-3, 1e9, "1e-3 <= us <= 1e9")),
        // One dependent load: a few cycles of L1 at the least, a millisecond at the most.
        "ns" => Some((0.05, 1e6, "0.05 <= ns <= 1e6")),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    Unsupported,
    Skipped,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
            Status::Unsupported => "unsupported",
            Status::Skipped => "skipped",
        })
    }
}

/// How a probe's output was checked against the CPU reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Validation {
    /// `relative_frobenius` (matmul), `max_abs_rel` (stream), `exact` (transfers).
    pub metric: String,
    pub error: f64,
    pub tolerance: f64,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Validation {
    /// A check by `metric` that passes when `error` is at most `tolerance` (a NaN error
    /// fails), with what was checked in `detail`.
    pub fn within(metric: &str, error: f64, tolerance: f64, detail: String) -> Validation {
        Validation {
            metric: metric.into(),
            error,
            tolerance,
            passed: error <= tolerance,
            detail: Some(detail),
        }
    }

    /// An exact check: it passes when `error` (how far off, 0 when every value was right)
    /// is 0.
    pub fn exact(error: f64, detail: String) -> Validation {
        Validation::within("exact", error, 0.0, detail)
    }

    /// The reason of a result whose error exceeds its tolerance.
    pub fn tolerance_exceeded(&self) -> String {
        format!(
            "validation failed: error {:.3e} > tolerance {:.0e}",
            self.error, self.tolerance
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeResult {
    /// Probe family: `matmul_f32`, `stream`, `transfer`, `latency`.
    pub probe: String,
    /// Unique display name within a run, e.g. `matmul_f32 1024x1024x1024`, `stream triad`:
    /// for people; code goes by `figure`.
    pub name: String,
    /// What the result measures (schema 3; filled in from `probe` and `name` when an older
    /// file is read). Absent for a whole probe that produced no figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<FigureKey>,
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub unit: String,
    /// True when larger values are better (GFLOPS, GB/s); false for latencies.
    pub higher_is_better: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub autotune: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Power, energy and clocks while the figure was measured (schema 5), where a counter
    /// was read: from the previous figure (or the probe's start) to this one, warm-up and
    /// validation included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::PowerWindow>,
}

impl ProbeResult {
    /// A result for `figure` under its fixed display name, not yet measured.
    pub fn of(figure: FigureKey) -> Self {
        Self::named(figure, figure.info().label)
    }

    /// A matrix-multiply result for `figure` at size MxNxK (named and parametrised so).
    pub fn sized(figure: FigureKey, m: usize, n: usize, k: usize) -> Self {
        Self::named(figure, format!("{} {m}x{n}x{k}", figure.info().label))
            .param("m", m)
            .param("n", n)
            .param("k", k)
    }

    pub fn named(figure: FigureKey, name: impl Into<String>) -> Self {
        let i = figure.info();
        let mut r = Self::bare(i.family, name, i.unit, i.higher_is_better);
        r.figure = Some(figure);
        r
    }

    /// The result standing for a whole probe that produced no figure (skipped, panicked).
    pub fn placeholder(probe: &str) -> Self {
        Self::bare(probe, format!("{probe} probe"), "", true)
    }

    fn bare(probe: &str, name: impl Into<String>, unit: &str, higher_is_better: bool) -> Self {
        ProbeResult {
            probe: probe.into(),
            name: name.into(),
            figure: None,
            params: BTreeMap::new(),
            status: Status::Skipped,
            reason: None,
            unit: unit.into(),
            higher_is_better,
            value: None,
            timing: None,
            validation: None,
            kernel: None,
            autotune: Vec::new(),
            warnings: Vec::new(),
            energy: None,
        }
    }

    /// Records how the output was checked and, when the check passed, the figure: the one
    /// way a result becomes `ok`. A failed check is a failed result with `failure` as its
    /// reason and no figure.
    pub fn validated(
        mut self,
        validation: Validation,
        value: Summary,
        failure: impl FnOnce(&Validation) -> String,
    ) -> Self {
        let passed = validation.passed;
        let reason = (!passed).then(|| failure(&validation));
        self.validation = Some(validation);
        match reason {
            None => {
                self.status = Status::Ok;
                self.value = Some(value);
                self
            }
            Some(r) => self.with_status(Status::Failed, r),
        }
    }

    pub fn param(mut self, key: &str, v: impl Serialize) -> Self {
        self.params.insert(
            key.into(),
            serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
        );
        self
    }

    /// Marks the result failed because no autotuning candidate gave a valid result, with the
    /// first reason a candidate gave (out of memory, a limit, a rejected kernel).
    pub fn no_valid_configuration(self) -> Self {
        let first = self
            .autotune
            .iter()
            .filter_map(|t| t.get("note").and_then(|n| n.as_str()))
            .find(|n| !n.starts_with("not tried"))
            .map(|n| format!("; first reason: {n}"))
            .unwrap_or_default();
        self.with_status(
            Status::Failed,
            format!("no kernel configuration produced a valid result{first}"),
        )
    }

    /// Marks the result with a non-ok status and drops any figure.
    pub fn with_status(mut self, status: Status, reason: impl Into<String>) -> Self {
        self.status = status;
        self.reason = Some(reason.into());
        if status != Status::Ok {
            self.value = None;
        }
        self
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    pub git_commit: String,
}

impl ToolInfo {
    pub fn current() -> ToolInfo {
        ToolInfo {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_commit: env!("GPUVALUE_GIT_COMMIT").into(),
        }
    }
}

/// The options the run was given, recorded for provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    pub quick: bool,
    pub probes: Vec<String>,
    /// Matmul sizes given with --sizes, as MxNxK.
    #[serde(default)]
    pub sizes: Option<Vec<String>>,
    #[serde(default)]
    pub array_mib: Option<u64>,
    pub time_budget_s: f64,
    pub trusted_shaders: bool,
    pub timestamps: bool,
    pub args: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsFile {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub created: String,
    pub updated: String,
    pub complete: bool,
    pub host: HostInfo,
    pub adapter: AdapterSummary,
    pub options: RunOptions,
    pub probes: Vec<ProbeResult>,
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<Incident>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrent_runs: Vec<OtherRun>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryCheck>,
    /// The catalog instance the run was made on (`bench --instance`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<InstanceRef>,
    /// Set when the run was made by the web page: what the browser said about itself and
    /// its GPU, and which GPU the user said it is (browsers hide the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<BrowserInfo>,
    /// The acceptance test (`gpuvalue burn`), where the file records one (schema 4; older
    /// files have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burn: Option<crate::health::BurnRecord>,
    /// What the telemetry sampler read beside the run, or every source it tried and why
    /// none was read (schema 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::energy::TelemetryInfo>,
}

/// The browser a web-page run was made in, and what it exposed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserInfo {
    pub user_agent: String,
    /// The catalog GPU the user picked, as the user's statement (not detected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_gpu: Option<String>,
    /// What `GPUAdapter.info` gave (vendor, architecture, description), often empty.
    #[serde(default)]
    pub adapter_description: String,
    /// WGSL language features the browser offers (e.g. packed_4x8_integer_dot_product).
    #[serde(default)]
    pub wgsl_features: Vec<String>,
    /// Whether the page was cross-origin isolated (`performance.now()` is then 5 us, else
    /// 100 us).
    #[serde(default)]
    pub cross_origin_isolated: bool,
    /// What the browser build cannot measure, said once for the whole file.
    #[serde(default)]
    pub limits: Vec<String>,
}

/// Something that happened to the device or the run, recorded beside the figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Incident {
    pub time: String,
    pub probe: String,
    /// `watchdog`, `drained`, `unresponsive`, `device_lost`, `reopened`, `panic`,
    /// `memory_left`.
    pub kind: String,
    pub detail: String,
}

impl Incident {
    pub fn new(probe: &str, kind: &str, detail: impl Into<String>) -> Incident {
        Incident {
            time: now_rfc3339(),
            probe: probe.into(),
            kind: kind.into(),
            detail: detail.into(),
        }
    }
}

/// Device memory still allocated once a probe had finished.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryCheck {
    pub probe: String,
    pub allocated_bytes: u64,
    pub allocations: usize,
    /// Allocated before the first probe (the timer's buffers and the like).
    pub baseline_bytes: u64,
}

impl ResultsFile {
    /// The name to look up in the catalog: the GPU the user stated in the browser (which
    /// hides the model), else the adapter's own name.
    pub fn catalog_name(&self) -> &str {
        self.browser
            .as_ref()
            .and_then(|b| b.stated_gpu.as_deref())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or(&self.adapter.name)
    }

    /// A new, still incomplete results file of this tool version, created now.
    pub fn new(host: HostInfo, adapter: AdapterSummary, options: RunOptions) -> ResultsFile {
        ResultsFile {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::current(),
            created: now_rfc3339(),
            updated: now_rfc3339(),
            complete: false,
            host,
            adapter,
            options,
            probes: Vec::new(),
            interrupted: false,
            incidents: Vec::new(),
            concurrent_runs: Vec::new(),
            memory: Vec::new(),
            instance: None,
            browser: None,
            burn: None,
            telemetry: None,
        }
    }

    /// What a reader of these figures must know about the run itself: stopped early,
    /// device incidents, other benches measuring at the same time.
    pub fn caveats(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.interrupted {
            v.push(format!(
                "incomplete run: interrupted after {} probe result(s)",
                self.probes.len()
            ));
        } else if !self.complete {
            v.push("incomplete run: the bench did not finish (still running, or killed)".into());
        }
        for i in &self.incidents {
            v.push(format!("incident ({}, {}): {}", i.probe, i.kind, i.detail));
        }
        if !self.concurrent_runs.is_empty() {
            let pids: Vec<String> = self
                .concurrent_runs
                .iter()
                .map(|o| o.pid.to_string())
                .collect();
            v.push(format!(
                "another gpuvalue bench ran at the same time (pid {}): timings may be distorted",
                pids.join(", ")
            ));
        }
        // A figure measured at a power or thermal limit is not the device's best.
        let capped: Vec<&str> = self
            .probes
            .iter()
            .filter(|p| p.energy.as_ref().is_some_and(|e| e.capped()))
            .map(|p| p.name.as_str())
            .collect();
        if !capped.is_empty() {
            v.push(format!(
                "capped while measuring: {} ran at a power or thermal limit (see each figure's power): not the device's best",
                capped.join(", ")
            ));
        }
        if let Some(t) = &self.telemetry {
            v.push(t.line());
        }
        // A peak probe that a matmul beats on the same device is not the peak (PoCL's
        // matmul_f32 at 215 GFLOPS beside peak_f32 at 117).
        if let (Some(peak), Some(mm)) = (
            self.best(FigureKey::PeakF32),
            self.best(FigureKey::MatmulF32),
        ) && mm > peak * 1.02
        {
            v.push(format!(
                "peak_f32 ({peak:.1} GFLOPS) is below matmul_f32 ({mm:.1} GFLOPS) on this adapter: the peak probe's kernel did not reach this device's FP32 peak (a CPU runtime vectorises the matmul's loops better than the peak's chains of dependent multiply-adds); read {mm:.1} GFLOPS as the least the device reaches"
            ));
        }
        v
    }

    #[cfg(not(target_arch = "wasm32"))]
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut json = serde_json::to_vec_pretty(self)?;
        json.push(b'\n');
        crate::files::write_atomic(path, &json)
    }

    /// Every results file of `paths` (a folder stands for its results files), each file
    /// once however often it is named, paired with its name for display. `warn` hears what
    /// a reader should know: a file named twice, an incomplete run, a run that overlapped
    /// another.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load_all(
        paths: &[std::path::PathBuf],
        mut warn: impl FnMut(String),
    ) -> Result<Vec<(String, ResultsFile)>> {
        let paths = crate::files::expand_dirs(paths)?;
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for p in &paths {
            let key = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            if !seen.insert(key) {
                warn(format!(
                    "{}: the same results file was given twice; counted once",
                    p.display()
                ));
                continue;
            }
            let r = ResultsFile::load(p)?;
            if !r.complete {
                warn(format!(
                    "{}: an incomplete run{}: only the {} probe result(s) it finished are used",
                    p.display(),
                    if r.interrupted { " (interrupted)" } else { "" },
                    r.probes.len()
                ));
            }
            if !r.concurrent_runs.is_empty() {
                warn(format!(
                    "{}: another gpuvalue bench ran at the same time; its timings may be distorted",
                    p.display()
                ));
            }
            out.push((p.display().to_string(), r));
        }
        Ok(out)
    }

    /// Loads and checks a results file: JSON syntax, schema version, field types, names and
    /// every figure's range. Errors name the file, the JSON path and what was expected.
    pub fn load(path: &Path) -> Result<ResultsFile> {
        let text = crate::files::read_text(path, "results file")?;
        Self::parse(&text).with_context(|| format!("results file {}", path.display()))
    }

    /// As `load`, without the figure checks: `compare` reports those as failures of its
    /// gate, each named, rather than refusing the file.
    pub fn load_unchecked(path: &Path) -> Result<ResultsFile> {
        let text = crate::files::read_text(path, "results file")?;
        Self::parse_unchecked(&text).with_context(|| format!("results file {}", path.display()))
    }

    /// Parses and checks a results file (see `load`).
    pub fn parse(text: &str) -> Result<ResultsFile> {
        let file = Self::parse_unchecked(text)?;
        let problems = file.figure_problems();
        if !problems.is_empty() {
            bail!("{}", problems.join("; "));
        }
        Ok(file)
    }

    /// Every figure that cannot be true: not finite, outside its unit's physical range
    /// (named), min > median or median > max, or in another unit than its figure key's.
    pub fn figure_problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, p) in self.probes.iter().enumerate() {
            if let Some(k) = p.figure
                && p.unit != k.info().unit
            {
                out.push(format!(
                    "at JSON path `probes[{i}].unit`: {:?}, but {k} is measured in {}",
                    p.unit,
                    k.info().unit
                ));
                continue;
            }
            let Some(v) = &p.value else { continue };
            let Some((lo, hi, range)) = unit_range(&p.unit) else {
                out.push(format!(
                    "at JSON path `probes[{i}].unit`: {:?} is not a unit gpuvalue measures in",
                    p.unit
                ));
                continue;
            };
            for (field, x) in [("median", v.median), ("min", v.min), ("max", v.max)] {
                if !(x.is_finite() && (lo..=hi).contains(&x)) {
                    out.push(format!(
                        "at JSON path `probes[{i}].value.{field}`: {x} {} is outside the physical range {range}",
                        p.unit
                    ));
                }
            }
            if !(v.min <= v.median && v.median <= v.max) {
                out.push(format!(
                    "at JSON path `probes[{i}].value`: expected min <= median <= max, found {} <= {} <= {}",
                    v.min, v.median, v.max
                ));
            }
            if !(v.mean.is_finite() && v.stddev.is_finite() && v.stddev >= 0.0) || v.n == 0 {
                out.push(format!(
                    "at JSON path `probes[{i}].value`: mean, stddev and n must be finite and n >= 1"
                ));
            }
        }
        out
    }

    /// Parses without the figure checks (see `load_unchecked`).
    pub fn parse_unchecked(text: &str) -> Result<ResultsFile> {
        let text = crate::files::strip_bom(text);
        let v: serde_json::Value = serde_json::from_str(text).context("not valid JSON")?;
        match v.get("schema_version") {
            None => bail!("missing field `schema_version`: is this a gpuvalue results file?"),
            Some(serde_json::Value::Number(n)) => match n.as_u64() {
                Some(ver) if ver > u64::from(SCHEMA_VERSION) => bail!(
                    "schema_version {ver} is newer than this gpuvalue understands ({SCHEMA_VERSION}); \
                     upgrade gpuvalue to read it"
                ),
                Some(0) | None => bail!("schema_version must be a positive integer, found {n}"),
                Some(_) => {}
            },
            Some(other) => bail!("schema_version must be a positive integer, found {other}"),
        }
        let de = &mut serde_json::Deserializer::from_str(text);
        let mut file: ResultsFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            anyhow::anyhow!("at JSON path `{path}`: {}", e.into_inner())
        })?;
        // Files before schema 3 name their figures by family and display name only.
        for p in file.probes.iter_mut().filter(|p| p.figure.is_none()) {
            p.figure = FigureKey::from_legacy(&p.probe, &p.name);
        }
        file.check_names()?;
        Ok(file)
    }

    /// Refuses adapter and probe names over `MAX_NAME_CHARS`.
    fn check_names(&self) -> Result<()> {
        let long = |s: &str| s.chars().count() > MAX_NAME_CHARS;
        let names = [
            ("adapter.name", &self.adapter.name),
            ("adapter.vendor", &self.adapter.vendor),
            ("adapter.driver", &self.adapter.driver),
            ("adapter.driver_info", &self.adapter.driver_info),
            ("host.hostname", &self.host.hostname),
        ];
        for (field, v) in names {
            if long(v) {
                bail!(
                    "at JSON path `{field}`: {} characters, more than the {MAX_NAME_CHARS} a name may have",
                    v.chars().count()
                );
            }
        }
        for (i, p) in self.probes.iter().enumerate() {
            for (field, v) in [("name", &p.name), ("probe", &p.probe), ("unit", &p.unit)] {
                if long(v) {
                    bail!(
                        "at JSON path `probes[{i}].{field}`: {} characters, more than the {MAX_NAME_CHARS} a name may have",
                        v.chars().count()
                    );
                }
            }
        }
        Ok(())
    }

    /// The `ok` results measuring `figure`.
    pub fn ok(&self, figure: FigureKey) -> impl Iterator<Item = &ProbeResult> {
        self.probes
            .iter()
            .filter(move |p| p.figure == Some(figure) && p.status == Status::Ok)
    }

    /// The median of the best `ok` result measuring `figure` (the highest throughput, or the
    /// lowest latency).
    pub fn best(&self, figure: FigureKey) -> Option<f64> {
        let medians = self
            .ok(figure)
            .filter_map(|p| p.value.as_ref().map(|v| v.median));
        if figure.info().higher_is_better {
            medians.reduce(f64::max)
        } else {
            medians.reduce(f64::min)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_status_drops_the_figure() {
        let mut r = ProbeResult::of(FigureKey::StreamCopy);
        r.value = Summary::of(&[1.0]);
        let r = r.with_status(Status::Failed, "validation error 1.0 > 0");
        assert!(r.value.is_none());
        assert_eq!(r.status, Status::Failed);
    }

    #[test]
    fn results_before_schema_3_get_their_figure_keys() {
        let r = ResultsFile::parse(include_str!("../tests/fixtures/results-lavapipe.json"))
            .expect("fixture (schema 1) still reads");
        assert!(!r.probes.is_empty());
        for p in &r.probes {
            assert!(p.figure.is_some(), "{} has no figure key", p.name);
        }
        assert!(r.best(FigureKey::StreamTriad).is_some());
        assert!(r.best(FigureKey::MatmulF32).is_some());
        // A saved file carries the keys itself, at the current schema.
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"figure\":\"stream_triad\""));
    }

    #[test]
    fn best_is_the_highest_throughput_and_the_lowest_latency() {
        let mut r =
            ResultsFile::parse(include_str!("../tests/fixtures/results-lavapipe.json")).unwrap();
        let mut add = |figure, median: f64| {
            let mut p = ProbeResult::of(figure);
            p.status = Status::Ok;
            p.value = Summary::of(&[median]);
            r.probes.push(p);
        };
        add(FigureKey::MatmulF64, 1e6);
        add(FigureKey::MatmulF64, 2e6);
        add(FigureKey::LatencyRoundTrip, 1e-3);
        add(FigureKey::LatencyRoundTrip, 5e-3);
        assert_eq!(r.best(FigureKey::MatmulF64), Some(2e6));
        assert_eq!(r.best(FigureKey::LatencyRoundTrip), Some(1e-3));
        assert_eq!(r.best(FigureKey::MatmulF16), None);
    }

    #[test]
    fn every_figure_unit_has_a_physical_range() {
        for k in FigureKey::ALL {
            assert!(
                unit_range(k.info().unit).is_some(),
                "{k:?} in {}",
                k.info().unit
            );
        }
    }

    #[test]
    fn newer_schema_is_refused() {
        let err = ResultsFile::parse(r#"{"schema_version": 99}"#).unwrap_err();
        assert!(format!("{err:#}").contains("newer"), "{err:#}");
        let err = ResultsFile::parse(r#"{"probes": []}"#).unwrap_err();
        assert!(format!("{err:#}").contains("schema_version"), "{err:#}");
        let err = ResultsFile::parse("{not json").unwrap_err();
        assert!(format!("{err:#}").contains("JSON"), "{err:#}");
    }

    #[test]
    fn caveats_say_what_went_wrong_with_the_run() {
        let mut r = ResultsFile::parse(include_str!("../tests/fixtures/results-lavapipe.json"))
            .expect("fixture (schema 1) still reads");
        assert!(r.caveats().is_empty());
        r.complete = false;
        r.interrupted = true;
        r.incidents.push(Incident::new(
            "stream",
            "device_lost",
            "device lost (destroyed)",
        ));
        r.concurrent_runs.push(OtherRun {
            pid: 42,
            started: "2026-11-29T00:00:00Z".into(),
            out: "b.json".into(),
            adapter: "x".into(),
        });
        let c = r.caveats();
        assert_eq!(c.len(), 3, "{c:?}");
        assert!(c[0].starts_with("incomplete run: interrupted"));
        assert!(c[1].contains("device_lost") && c[1].contains("stream"));
        assert!(c[2].contains("pid 42"));
        // And they survive a save and a load.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        r.save(&p).unwrap();
        assert_eq!(ResultsFile::load(&p).unwrap().caveats(), c);
    }

    #[test]
    fn a_matmul_above_the_peak_is_said() {
        let mut r = ResultsFile::parse(include_str!("../tests/fixtures/results-lavapipe.json"))
            .expect("fixture reads");
        let mm = r
            .best(FigureKey::MatmulF32)
            .expect("the fixture has a matmul");
        let mut peak = ProbeResult::of(FigureKey::PeakF32);
        peak.value = Summary::of(&[mm * 1.5]);
        peak.status = Status::Ok;
        r.probes.push(peak);
        assert!(
            r.caveats().is_empty(),
            "a peak above the matmul is no caveat"
        );
        r.probes.last_mut().unwrap().value = Summary::of(&[mm * 0.5]);
        let c = r.caveats();
        assert!(
            c.iter()
                .any(|x| x.starts_with("peak_f32 (") && x.contains("is below matmul_f32")),
            "{c:?}"
        );
    }
}
