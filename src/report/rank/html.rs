//! The ranking's table in the HTML report: [`super::columns::HTML`], every header and
//! cell escaped.

use super::columns::{self, Grid};
use crate::report::fmt::esc;
use crate::value::rank::RankReport;

/// The HTML report's table of a ranking, every row.
pub fn html_table(r: &RankReport) -> String {
    table(&columns::grid(r, &r.rows, columns::HTML))
}

/// A grid as an HTML table of class `rank`.
pub fn table(g: &Grid) -> String {
    let row = |tag: &str, cells: &[String]| {
        let cells: String = cells
            .iter()
            .map(|c| format!("<{tag}>{}</{tag}>", esc(c)))
            .collect();
        format!("<tr>{cells}</tr>")
    };
    let mut out = format!("<table class=\"rank\">{}", row("th", &g.headers));
    for r in &g.rows {
        out.push_str(&row("td", r));
    }
    out.push_str("</table>");
    out
}
