//! The ranking as Markdown: the heading, every row with the figures behind it (and what
//! the budget buys when one was given), then the same notes as the terminal, a line each.

use super::columns::{self, Grid};
use super::notes::{heading, machine_lines, nothing_ranks, summary_lines};
use crate::report::fmt::md;
use crate::value::rank::RankReport;

/// The ranking as Markdown: the heading, every row with the figures behind it (and what the
/// budget buys when one was given), then the same summary lines as the terminal.
pub fn markdown(r: &RankReport) -> String {
    let mut out = format!("**{}: {}**  \n", md(&r.scenario.id), md(&r.job));
    if r.rows.is_empty() {
        for l in nothing_ranks(r).lines() {
            out.push_str(&line(l.trim_start()));
        }
        return out;
    }
    for l in heading(r) {
        out.push_str(&line(&l));
    }
    let form = if r.scenario.serving.is_some() {
        columns::MARKDOWN_SERVING
    } else {
        columns::MARKDOWN
    };
    out.push_str(&table(&columns::grid(r, &r.rows, form)));
    out.push('\n');
    for l in summary_lines(r, r.rows.len(), true) {
        out.push_str(&line(&l));
    }
    for m in machine_lines(r) {
        for l in m.lines() {
            out.push_str(&line(l));
        }
    }
    out
}

/// A line of text, escaped, with Markdown's hard line break.
fn line(l: &str) -> String {
    format!("{}  \n", md(l))
}

/// A grid as a Markdown table after a blank line, every header and cell escaped.
pub fn table(g: &Grid) -> String {
    let row = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| md(c)).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = format!("\n{}|{}\n", row(&g.headers), "---|".repeat(g.headers.len()));
    for r in &g.rows {
        out.push_str(&row(r));
    }
    out
}
