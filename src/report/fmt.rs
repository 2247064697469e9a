//! Number formatting and escaping for every output (terminal tables and messages, Markdown,
//! CSV, HTML, SVG). The formatters differ on purpose: each keeps the precision its
//! output has always printed, and is named for where it is used, not for a column.

use crate::text::{is_unsafe_for_terminal, push_escaped};

/// A report figure (HTML and Markdown reports, measured machine lines): one decimal from
/// 100 up, two from 1 up, four below (by magnitude, so negatives match positives).
pub fn figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// A price, cost or other amount (rank tables and Markdown, chart bar values): whole from
/// 100 up, two decimals from 1 up, four below. Amounts are never negative; a negative one
/// gets four decimals.
pub fn money(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// Three significant figures, thousands separated: 0.526, 16.6, 111, 1,234.
pub fn sig(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if a >= 999.5 {
        return thousands(x.round());
    }
    let decimals = if a == 0.0 {
        0
    } else {
        (2 - a.log10().floor() as i32).clamp(0, 6) as usize
    };
    format!("{x:.decimals$}")
}

/// A share as a whole percentage: 0.634 is "63%".
pub fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A whole number with thousands separators: 1,234,567 (num-format's grouping).
pub fn thousands(x: f64) -> String {
    use num_format::{Locale, ToFormattedString};
    // Whole numbers past u64 are not prices or rates: printed plain.
    let r = x.abs().round();
    let digits = if r < 1.8e19 {
        (r as u64).to_formatted_string(&Locale::en)
    } else {
        format!("{r:.0}")
    };
    if x < 0.0 && r > 0.0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// A probe value in the bench table (terminal): whole from 1000 up, one decimal from 100
/// up, two from 1 up, three below (by magnitude).
pub fn probe_value(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A value compared between two results files: one decimal from 100 up, three below (by
/// magnitude); "-" where the file has none.
pub fn compared(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| {
        if x.abs() >= 100.0 {
            format!("{x:.1}")
        } else {
            format!("{x:.3}")
        }
    })
}

/// A chart axis tick (positive, a power of 2 or 10): "4k" from 1000 up, whole from 1 up,
/// else as short as Rust prints it ("0.0625").
pub fn tick(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Escapes text for HTML and SVG: element content and double-quoted attribute values.
pub fn esc(s: &str) -> String {
    // html-escape: &, <, >, " and ' (a value inside either quote stays inside).
    html_escape::encode_quoted_attribute(s).into_owned()
}

/// A Markdown table cell or inline text: `|` cannot end the cell, HTML is shown as text,
/// newlines become spaces, control and bidi characters are escaped as for a terminal.
pub fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_unsafe_for_terminal(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// A CSV text cell: one starting with `=`, `+`, `-`, `@` (or a tab or carriage return)
/// would be a formula in a spreadsheet, so it gets a leading single quote.
pub fn csv_cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{term, term_text};

    #[test]
    fn escaping_and_grouping_by_their_crates() {
        assert_eq!(
            esc("<a href='x'>&\""),
            "&lt;a href=&#x27;x&#x27;&gt;&amp;&quot;"
        );
        assert_eq!(esc("results/a.json"), "results/a.json");
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(-999.6), "-1,000");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(thousands(-0.2), "0");
    }

    #[test]
    fn terminal_escapes_controls_and_bidi_only() {
        assert_eq!(term("NVIDIA H100 ü"), "NVIDIA H100 ü");
        assert_eq!(term("a\x1b]0;x\x07b"), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(term("\x1b[2J"), "\\u{1b}[2J");
        assert_eq!(term("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(term("abc\u{202e}fed\u{2066}"), "abc\\u{202e}fed\\u{2066}");
        assert_eq!(term("a\nb\tc\x7f"), "a\\u{a}b\\u{9}c\\u{7f}");
        assert_eq!(term_text("a\nb\tc\x1b"), "a\nb\tc\\u{1b}");
    }

    #[test]
    fn markdown_and_csv_cells_are_neutralised() {
        assert_eq!(md("a|b <i>&\nc\x1b"), "a\\|b &lt;i&gt;&amp; c\\u{1b}");
        for f in ["=1+1", "+1", "-1", "@SUM(A1)", "\tx"] {
            assert!(csv_cell(f).starts_with('\''), "{f}");
        }
        assert_eq!(csv_cell("aws"), "aws");
    }

    #[test]
    fn figure_precision_by_magnitude() {
        assert_eq!(figure(0.0), "0.0000");
        assert_eq!(figure(-0.0), "-0.0000");
        assert_eq!(figure(0.123456), "0.1235");
        assert_eq!(figure(1.0), "1.00");
        assert_eq!(figure(99.999), "100.00");
        assert_eq!(figure(100.0), "100.0");
        assert_eq!(figure(-250.04), "-250.0");
        assert_eq!(figure(-7.777), "-7.78");
        assert_eq!(figure(-0.5), "-0.5000");
        assert_eq!(figure(1e-12), "0.0000");
        assert_eq!(figure(1.5e15), "1500000000000000.0");
        assert_eq!(figure(f64::NAN), "NaN");
        assert_eq!(figure(f64::INFINITY), "inf");
        assert_eq!(figure(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn amounts_keep_three_significant_figures_with_thousands_separated() {
        assert_eq!(sig(0.52604), "0.526");
        assert_eq!(sig(16.63), "16.6");
        assert_eq!(sig(111.4), "111");
        assert_eq!(sig(2148.2), "2,148");
        assert_eq!(sig(0.0), "0");
        assert_eq!(thousands(-1234567.0), "-1,234,567");
    }

    #[test]
    fn money_precision_and_negatives() {
        assert_eq!(money(0.0), "0.0000");
        assert_eq!(money(0.00004), "0.0000");
        assert_eq!(money(0.98765), "0.9877");
        assert_eq!(money(1.0), "1.00");
        assert_eq!(money(12.345), "12.35");
        assert_eq!(money(100.0), "100");
        assert_eq!(money(2499.5), "2500"); // an exact tie: to even
        assert_eq!(money(1e12), "1000000000000");
        // Not by magnitude: a negative amount keeps four decimals.
        assert_eq!(money(-5.0), "-5.0000");
        assert_eq!(money(-1234.5), "-1234.5000");
        assert_eq!(money(f64::NAN), "NaN");
        assert_eq!(money(f64::INFINITY), "inf");
        assert_eq!(money(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn probe_value_precision_by_magnitude() {
        assert_eq!(probe_value(0.0), "0.000");
        assert_eq!(probe_value(0.0004), "0.000");
        assert_eq!(probe_value(0.9996), "1.000");
        assert_eq!(probe_value(1.0), "1.00");
        assert_eq!(probe_value(100.0), "100.0");
        assert_eq!(probe_value(999.94), "999.9");
        assert_eq!(probe_value(1000.0), "1000");
        assert_eq!(probe_value(-1234.5), "-1234"); // an exact tie: to even
        assert_eq!(probe_value(-12.345), "-12.35");
        assert_eq!(probe_value(3.2e18), "3200000000000000000");
        assert_eq!(probe_value(f64::NAN), "NaN");
        assert_eq!(probe_value(f64::INFINITY), "inf");
        assert_eq!(probe_value(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn compared_precision_and_missing() {
        assert_eq!(compared(None), "-");
        assert_eq!(compared(Some(0.0)), "0.000");
        assert_eq!(compared(Some(1e-7)), "0.000");
        assert_eq!(compared(Some(99.9996)), "100.000");
        assert_eq!(compared(Some(100.0)), "100.0");
        assert_eq!(compared(Some(-150.55)), "-150.6");
        assert_eq!(compared(Some(-0.25)), "-0.250");
        assert_eq!(compared(Some(6.02e23)), "601999999999999995805696.0");
        assert_eq!(compared(Some(f64::NAN)), "NaN");
        assert_eq!(compared(Some(f64::INFINITY)), "inf");
    }

    #[test]
    fn tick_labels() {
        assert_eq!(tick(0.0625), "0.0625");
        assert_eq!(tick(0.1), "0.1");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(1.0), "1");
        assert_eq!(tick(256.0), "256");
        assert_eq!(tick(1000.0), "1k");
        assert_eq!(tick(1024.0), "1k");
        assert_eq!(tick(1e6), "1000k");
        assert_eq!(tick(f64::INFINITY), "infk");
    }

    #[test]
    fn esc_escapes_markup_and_both_quotes() {
        assert_eq!(esc(""), "");
        assert_eq!(esc("plain ü → ok"), "plain ü → ok");
        assert_eq!(
            esc(r#"<a href="x">&amp;</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;amp;&lt;/a&gt;"
        );
        // Either quote: a value stays inside its attribute whichever quote it is in.
        assert_eq!(esc("it's"), "it&#x27;s");
    }
}
