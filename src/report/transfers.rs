//! `gpuvalue transfers` for people: per direction, each GPU alone and with every GPU copying
//! at once, the node's total against the sum of the alone rates, then the GPU-to-GPU copies.

use crate::measuring::node_transfers::{Direction, Figure, GpuLinks, Transfers};
use crate::report::export::{Export, Format};
use crate::report::term;
use crate::stats::Summary;
use anyhow::Result;
use tabled::builder::Builder;
use tabled::settings::Style;

/// `12.3 (11.9-12.6)`, or why there is no figure.
fn cell(f: &Figure) -> String {
    match (&f.gbs, f.check.passed) {
        (Some(s), true) => rate(s),
        (_, false) => format!("FAILED: {}", f.check.detail),
        (None, true) => "no figure".into(),
    }
}

fn rate(s: &Summary) -> String {
    format!("{:.2} ({:.2}-{:.2})", s.median, s.min, s.max)
}

fn direction_table(t: &Transfers, d: Direction) -> String {
    let mut b = Builder::default();
    let several = !t.together.is_empty();
    let mut head = vec!["#", "GPU", "alone GB/s (min-max)"];
    if several {
        head.extend(["all at once GB/s (min-max)", "at once / alone"]);
    }
    b.push_record(head);
    for g in &t.gpus {
        let w = g.way(d);
        let mut row = vec![g.index.to_string(), name(g), cell(&w.alone)];
        if several {
            row.push(w.together.as_ref().map_or("-".into(), cell));
            row.push(
                w.together_vs_alone
                    .map_or("-".into(), |r| format!("{r:.2}x")),
            );
        }
        b.push_record(row);
    }
    let mut out = format!("{} ({}):\n", d.label(), path(t, d));
    out.push_str(&term::fit(b.build().with(Style::rounded()).to_owned()));
    out.push('\n');
    if let Some(a) = t.together.iter().find(|a| a.direction == d) {
        out.push_str(&match (&a.together_gbs, a.sum_alone_gbs, a.ratio) {
            (Some(s), Some(sum), Some(r)) => format!(
                "all {} GPUs at once move {} GB/s in all; alone they add up to {sum:.2} ({r:.2}x{})\n",
                a.gpus,
                rate(s),
                if r < 0.8 {
                    ": slower together (a shared link or switch, or host memory)"
                } else {
                    ""
                }
            ),
            _ => format!("all {} GPUs at once: no figure (a copy or a check failed)\n", a.gpus),
        });
    }
    out
}

fn name(g: &GpuLinks) -> String {
    let mut s = format!("{} [{}]", g.name, g.backend);
    if let Some(bus) = &g.pci_bus_id {
        s.push_str(&format!(" {bus}"));
    }
    if let Some(e) = &g.error {
        s.push_str(&format!("\nerror: {e}"));
    }
    s
}

/// The copy path, when every GPU uses the same one (one API: always).
fn path(t: &Transfers, d: Direction) -> String {
    t.gpus
        .first()
        .map(|g| g.way(d).path.clone())
        .unwrap_or_default()
}

fn pairs_table(t: &Transfers) -> String {
    if t.pairs.is_empty() {
        return String::new();
    }
    let mut b = Builder::default();
    b.push_record(["from", "to", "GB/s (min-max)", "check"]);
    for p in &t.pairs {
        b.push_record([
            p.from.to_string(),
            p.to.to_string(),
            cell(&p.figure),
            if p.figure.check.passed {
                "exact".into()
            } else {
                "FAILED".into()
            },
        ]);
    }
    format!(
        "GPU to GPU ({}; bytes over the two copies' times):\n{}\n",
        crate::measuring::node_transfers::STAGED,
        term::fit(b.build().with(Style::rounded()).to_owned())
    )
}

/// Everything, for the terminal.
pub fn render(t: &Transfers) -> String {
    let mut out = format!(
        "{} per copy on {} GPU(s); {}; host CPU {}\n",
        crate::measuring::cache_levels::size(t.bytes),
        t.gpus.len(),
        t.timing,
        t.cpu_model
    );
    for d in [Direction::ToDevice, Direction::ToHost] {
        out.push_str(&direction_table(t, d));
    }
    out.push_str(&pairs_table(t));
    for n in &t.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

impl Export for Transfers {
    const COMMAND: &'static str = "transfers";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];
    fn table(&self) -> String {
        render(self)
    }
    fn json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)? + "\n")
    }
}
