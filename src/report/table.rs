//! Terminal tables: the device list and the bench summary (also used by `gpuvalue show`).

use super::fmt::probe_value;
use crate::model::AdapterSummary;
use crate::results::{ResultsFile, Status};
use tabled::settings::Style;
use tabled::{Table, Tabled};

fn mib(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30))
    } else {
        format!("{} MiB", b >> 20)
    }
}

#[derive(Tabled)]
struct DeviceRow {
    #[tabled(rename = "#")]
    index: usize,
    #[tabled(rename = "adapter")]
    name: String,
    #[tabled(rename = "backend")]
    backend: String,
    driver: String,
    limits: String,
    features: String,
}

pub fn devices(list: &[AdapterSummary]) -> String {
    let rows: Vec<DeviceRow> = list
        .iter()
        .map(|s| {
            let f = &s.features;
            let mut feats = Vec::new();
            if f.timestamp_query {
                feats.push("timestamps".to_string());
            }
            if f.shader_f64 {
                feats.push("f64".into());
            }
            if f.shader_f16 {
                feats.push("f16".into());
            }
            if f.subgroup && s.opencl.is_none() {
                feats.push(format!(
                    "subgroup {}-{}",
                    f.subgroup_min_size, f.subgroup_max_size
                ));
            }
            if let Some(cl) = &s.opencl {
                if f.subgroup {
                    feats.push("subgroups".into());
                }
                if cl.integer_dot_product {
                    feats.push("int8 dot".into());
                }
                feats.push(format!(
                    "{} CUs, {}",
                    cl.compute_units,
                    mib(cl.global_mem_bytes)
                ));
                if cl.board_name.is_some() {
                    feats.push(cl.device_name.clone());
                }
                let mfma = cl.matrix_types();
                if !mfma.is_empty() {
                    feats.push(format!("MFMA {}", mfma.join(" ")));
                }
            }
            for c in &f.cooperative_matrix {
                feats.push(format!("coop {c}"));
            }
            for p in &s.other_paths {
                feats.push(format!("also on {p}"));
            }
            let vendor = vendor_cell(s);
            DeviceRow {
                index: s.index,
                name: format!(
                    "{}{}\n{vendor}",
                    s.name,
                    if s.software {
                        " [software adapter]"
                    } else {
                        ""
                    }
                ),
                backend: format!("{}\n{}", s.backend, s.device_type),
                driver: format!("{}\n{}", s.driver, s.driver_info),
                limits: format!(
                    "buffer {} (binding {})\nworkgroup {} KiB, {} invocations\n{} groups per dimension",
                    mib(s.limits.max_buffer_size),
                    mib(s.limits.max_storage_buffer_binding_size),
                    s.limits.max_compute_workgroup_storage_size / 1024,
                    s.limits.max_compute_invocations_per_workgroup,
                    s.limits.max_compute_workgroups_per_dimension
                ),
                features: if feats.is_empty() {
                    "-".into()
                } else {
                    feats.join(", ")
                },
            }
        })
        .collect();
    super::term::fit(Table::new(rows).with(Style::rounded()).to_owned())
}

#[derive(Tabled)]
struct ProbeRow {
    probe: String,
    status: String,
    median: String,
    #[tabled(rename = "min..max")]
    range: String,
    #[tabled(rename = "runs, timing")]
    timing: String,
    #[tabled(rename = "check (error)")]
    check: String,
    notes: String,
}

/// A heading naming the adapter (with a plain software warning) and the run.
pub fn heading(r: &ResultsFile) -> String {
    let a = &r.adapter;
    let mut s = format!(
        "{} — {} {} — driver {} {}\nhost {} ({}, {} threads), {} — gpuvalue {} ({}){}",
        a.name,
        a.backend,
        a.device_type,
        a.driver,
        a.driver_info,
        r.host.hostname,
        r.host.cpu_model,
        r.host.cpu_threads,
        r.created,
        r.tool.version,
        r.tool.git_commit,
        if r.interrupted {
            " — INCOMPLETE run (interrupted)"
        } else if r.complete {
            ""
        } else {
            " — INCOMPLETE run"
        }
    );
    if a.software {
        // Say how the rows were timed, as they say it (the heading once said
        // "wall clock" while PoCL's rows said "opencl profiling events").
        let mut methods: Vec<String> = r
            .probes
            .iter()
            .filter_map(|p| p.timing.as_ref().map(|t| t.method.to_string()))
            .collect();
        methods.sort();
        methods.dedup();
        let timed = if methods.is_empty() {
            String::new()
        } else {
            format!(" (timed with {})", methods.join(", "))
        };
        s.push_str(&format!(
            "\nSOFTWARE ADAPTER: this is the CPU emulating a GPU; the figures are not GPU figures{timed}."
        ));
    }
    if let Some(b) = &r.browser {
        s.push_str(&format!(
            "\nBROWSER RUN (WebGPU): {}; GPU {}",
            b.user_agent,
            match &b.stated_gpu {
                Some(g) => format!("stated by the user: {g}"),
                None => "not stated (browsers hide the model)".into(),
            }
        ));
        for l in &b.limits {
            s.push_str(&format!("\n  cannot measure here: {l}"));
        }
    }
    s
}

/// The bench summary in brief, for `run`: each probe's median, spread and check on one line;
/// the timing and notes are in the full table (`gpuvalue show FILE`).
pub fn results_short(r: &ResultsFile) -> String {
    let rows = super::hierarchy::shown(r, false).into_iter().map(|s| {
        let p = s.probe;
        let (median, range) = match (&p.value, p.status) {
            (Some(v), Status::Ok) => (
                format!("{} {}", probe_value(v.median), p.unit),
                format!("{}..{}", probe_value(v.min), probe_value(v.max)),
            ),
            _ => (p.status.to_string(), "-".into()),
        };
        let check = p.validation.as_ref().map_or("-".into(), |v| {
            format!(
                "{} ({:.1e})",
                if v.passed { "pass" } else { "FAIL" },
                v.error
            )
        });
        [s.name, median, range, check]
    });
    let mut b = tabled::builder::Builder::default();
    b.push_record(["probe", "median", "min..max", "check (error)"].map(String::from));
    for row in rows {
        b.push_record(row);
    }
    let mut out = format!("{}\n{}", heading(r), super::term::fit(b.build()));
    for c in r.caveats().iter().filter(|c| !c.starts_with("incomplete")) {
        out.push('\n');
        out.push_str(c);
    }
    out
}

/// The bench table, the memory hierarchy as one row a level found.
pub fn results(r: &ResultsFile) -> String {
    results_with(r, false)
}

/// The bench table; `all`: every probe as measured (each hierarchy size its own row).
pub fn results_with(r: &ResultsFile, all: bool) -> String {
    let rows: Vec<ProbeRow> = super::hierarchy::shown(r, all)
        .into_iter()
        .map(|s| {
            let p = s.probe;
            let (median, range, n) = match (&p.value, p.status) {
                (Some(v), Status::Ok) => (
                    format!("{} {}", probe_value(v.median), p.unit),
                    format!("{}..{}", probe_value(v.min), probe_value(v.max)),
                    format!("{} x ", v.n),
                ),
                _ => ("-".into(), "-".into(), String::new()),
            };
            let timing = p
                .timing
                .as_ref()
                .map(|t| format!("{n}{}, {}/sample", t.method, t.iters_per_sample))
                .unwrap_or_else(|| "-".into());
            let check = p
                .validation
                .as_ref()
                .map(|v| {
                    format!(
                        "{} ({:.1e})",
                        if v.passed { "pass" } else { "FAIL" },
                        v.error
                    )
                })
                .unwrap_or_else(|| "-".into());
            let mut notes: Vec<String> = s.note.into_iter().collect();
            if let Some(reason) = &p.reason {
                notes.push(reason.clone());
            }
            if let Some(label) = p
                .kernel
                .as_ref()
                .and_then(|k| k.get("label"))
                .and_then(|l| l.as_str())
            {
                match p.params.get("tuning_trial_median").and_then(|v| v.as_f64()) {
                    Some(t) => notes.push(format!("{label} (tuning trial median {t:.1})")),
                    None => notes.push(label.to_string()),
                }
            }
            notes.extend(p.warnings.iter().cloned());
            if let Some(e) = p.energy.as_ref().filter(|e| e.mean_w.is_some()) {
                let per_watt = e.per_watt.map_or(String::new(), |x| {
                    format!(", {} {}/W", probe_value(x), p.unit)
                });
                notes.push(format!("{}{per_watt}", e.line()));
            }
            ProbeRow {
                probe: s.name,
                status: p.status.to_string(),
                median,
                range,
                timing,
                check,
                notes: notes.join("; "),
            }
        })
        .collect();
    let mut out = format!(
        "{}\n{}",
        heading(r),
        super::term::fit(Table::new(rows).with(Style::rounded()).to_owned())
    );
    // The heading already says when the run is incomplete.
    for c in r.caveats().iter().filter(|c| !c.starts_with("incomplete")) {
        out.push('\n');
        out.push_str(c);
    }
    out
}

/// "NVIDIA 10de:2330, pci 0000:01:00.0": the vendor and its PCI ids. A CPU runtime picks its
/// own vendor id (PoCL reports Intel's, 8086, on an AMD EPYC): where the id names another
/// vendor than the one shown, it is said to be the runtime's, not printed as the device's.
pub fn vendor_cell(s: &crate::model::AdapterSummary) -> String {
    let named = crate::model::vendor_name(s.vendor_id);
    let ids = if named != "unknown" && !s.vendor.contains(named) {
        format!("(the runtime reports vendor id {:04x})", s.vendor_id)
    } else {
        format!("{:04x}:{:04x}", s.vendor_id, s.device_id)
    };
    match &s.pci_bus_id {
        Some(bus) => format!("{} {ids}, pci {bus}", s.vendor),
        None => format!("{} {ids}", s.vendor),
    }
}
