//! The terminal's width and fitting output to it: tables shrink their widest columns and
//! wrap cells at word boundaries, prose lines wrap with a hanging indent. The width is set
//! once by the command line (`--wide` lifts it); 100 columns until then, which is also
//! what a pipe or an unknown terminal gets.

use std::sync::atomic::{AtomicUsize, Ordering};
use tabled::Table;

/// The width used when the output is not a terminal and `COLUMNS` is unset.
pub const DEFAULT_WIDTH: usize = 100;
/// Narrower than this, wrapping makes tables unreadable: they keep this width.
pub const MIN_WIDTH: usize = 40;

static WIDTH: AtomicUsize = AtomicUsize::new(DEFAULT_WIDTH);

/// Sets the width every later output is fitted to; `None` means no limit (`--wide`).
pub fn set_width(w: Option<usize>) {
    WIDTH.store(
        w.map_or(usize::MAX, |w| w.max(MIN_WIDTH)),
        Ordering::Relaxed,
    );
}

/// The width output is fitted to (`usize::MAX` for no limit).
pub fn width() -> usize {
    WIDTH.load(Ordering::Relaxed)
}

/// A table as text no wider than [`width`], drawn with rounded borders: the widest
/// columns give way first (the first column, the row's name, last), and cells are re-wrapped between words (textwrap) to their
/// column's new width, so a word is split only when it is longer than its column.
pub fn fit(t: Table) -> String {
    fit_to(t, width())
}

/// [`fit`] at a given width.
pub fn fit_to(t: Table, w: usize) -> String {
    use tabled::settings::Style;
    let cells: Vec<Vec<String>> = t
        .get_records()
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| tabled::grid::records::vec_records::Cell::text(c).to_string())
                .collect()
        })
        .collect();
    let ncols = cells.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![1usize; ncols];
    for row in &cells {
        for (c, cell) in row.iter().enumerate() {
            widths[c] = widths[c].max(widest(cell));
        }
    }
    if w != usize::MAX {
        narrow(&cells, &mut widths, w);
    }
    let mut out = rewrapped(&cells, &widths);
    out.with(Style::rounded());
    out.to_string()
}

/// The longest word of a cell's text (1 for an empty one).
fn longest_word(t: &str) -> usize {
    t.split_whitespace()
        .map(textwrap::core::display_width)
        .max()
        .unwrap_or(1)
}

/// Narrows the columns' `widths` until the drawn table fits `w`, the widest first. A column
/// keeps at least its header's longest word and its cells' longest word up to 20 columns
/// (a word is split only past that), and 4 columns; the first column (the row's name) gives
/// way last. Where those floors leave the table too wide, the cells' words give way too,
/// down to the header's.
fn narrow(cells: &[Vec<String>], widths: &mut [usize], w: usize) {
    let ncols = widths.len();
    // Rounded style with one space of padding: "│ " per column, then "│".
    let total = |ws: &[usize]| ws.iter().sum::<usize>() + 3 * ws.len() + 1;
    let head = |c: usize| {
        cells
            .first()
            .and_then(|h| h.get(c))
            .map_or(1, |h| longest_word(h))
    };
    let floor: Vec<usize> = (0..ncols)
        .map(|c| {
            let body = cells
                .iter()
                .skip(1)
                .filter_map(|r| r.get(c))
                .map(|t| longest_word(t))
                .max()
                .unwrap_or(1)
                .min(20);
            head(c).max(body).max(4).min(widths[c])
        })
        .collect();
    let header_floor: Vec<usize> = (0..ncols).map(|c| head(c).max(4).min(widths[c])).collect();
    for floor in [&floor, &header_floor] {
        while total(widths) > w {
            let shrinkable = |c: &usize| widths[*c] > floor[*c];
            let Some(c) = (1..ncols)
                .filter(shrinkable)
                .max_by_key(|&c| (widths[c], c))
                .or_else(|| (0..1).find(shrinkable))
            else {
                break;
            };
            widths[c] -= 1;
        }
    }
}

/// The table again, each cell wider than its column's width re-wrapped between words (and
/// name parts) to it, line by line.
fn rewrapped(cells: &[Vec<String>], widths: &[usize]) -> Table {
    let mut b = tabled::builder::Builder::default();
    for row in cells {
        b.push_record(row.iter().enumerate().map(|(c, cell)| {
            if widest(cell) <= widths[c] {
                cell.clone()
            } else {
                cell.split('\n')
                    .map(|l| {
                        let opts = textwrap::Options::new(widths[c])
                            .break_words(true)
                            .word_separator(NAME_PARTS)
                            .word_splitter(textwrap::WordSplitter::NoHyphenation);
                        textwrap::fill(l, opts).to_string()
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }));
    }
    b.build()
}

/// Where a line may break: after spaces, and inside a name after `.`, `_`, `-` or `/`
/// (`ecs.gn7i-c8g1.2xlarge` breaks as `ecs.gn7i-c8g1.` / `2xlarge`, not `2xlarg` /
/// `e`). The parts of a name that fits stay together: a break is only a place
/// allowed. A part longer than the column is still cut.
const NAME_PARTS: textwrap::WordSeparator = textwrap::WordSeparator::Custom(name_parts);

fn name_parts(line: &str) -> Box<dyn Iterator<Item = textwrap::core::Word<'_>> + '_> {
    use textwrap::core::Word;
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < b.len() {
        // One token and the spaces after it.
        let end = (start..b.len()).find(|&i| b[i] == b' ').unwrap_or(b.len());
        let next = (end..b.len()).find(|&i| b[i] != b' ').unwrap_or(b.len());
        // Short tokens ("(FIN-01)", "1.25") never break inside.
        if end - start > SHORT_TOKEN {
            let mut from = start;
            for i in start + 1..end - 1 {
                let sep = |c: u8| matches!(c, b'.' | b'_' | b'-' | b'/');
                if sep(b[i]) && !sep(b[i + 1]) {
                    // Only after ASCII bytes: the cut is on a character boundary.
                    out.push(Word::from(&line[from..=i]));
                    from = i + 1;
                }
            }
            out.push(Word::from(&line[from..next]));
        } else {
            out.push(Word::from(&line[start..next]));
        }
        start = next;
    }
    Box::new(out.into_iter())
}

/// Longest token kept whole by [`name_parts`].
const SHORT_TOKEN: usize = 12;

/// Text with every line longer than [`width`] wrapped between words; continuation lines are
/// indented two columns past the line's own indent, so a wrapped note stays recognisable.
pub fn wrap(text: &str) -> String {
    wrap_to(text, width())
}

/// [`wrap`], breaking lines only at spaces (never inside a name or a number): for messages
/// whose wrapped lines a script may join back (`\n  ` is then one space).
pub fn wrap_at_spaces(text: &str) -> String {
    let w = width();
    text.split('\n')
        .map(|line| {
            if w == usize::MAX || textwrap::core::display_width(line) <= w {
                return line.to_string();
            }
            fill(line, w, false)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line over `w` columns filled to it, continuation lines indented two columns past the
/// line's own indent; `names`: breaking inside long names and numbers too ([`NAME_PARTS`]),
/// else only at spaces.
fn fill(line: &str, w: usize, names: bool) -> String {
    let lead = line.len() - line.trim_start().len();
    let indent = " ".repeat(lead + 2);
    let opts = textwrap::Options::new(w)
        .initial_indent(&line[..lead])
        .subsequent_indent(&indent)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let opts = if names {
        opts.break_words(true).word_separator(NAME_PARTS)
    } else {
        opts.break_words(false)
            .word_separator(textwrap::WordSeparator::AsciiSpace)
    };
    textwrap::fill(line.trim_start(), opts)
}

/// [`wrap`] at a given width.
pub fn wrap_to(text: &str, w: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if w == usize::MAX || textwrap::core::display_width(line) <= w || is_table_line(line) {
            out.push_str(line);
            continue;
        }
        out.push_str(&fill(line, w, true));
    }
    out
}

/// A line drawn by a table (its borders): never re-wrapped as prose.
fn is_table_line(line: &str) -> bool {
    matches!(
        line.trim_start().chars().next(),
        Some('│' | '╭' | '├' | '╰' | '┌' | '└' | '|' | '+')
    )
}

/// The longest line's width in columns.
pub fn widest(text: &str) -> usize {
    text.lines()
        .map(textwrap::core::display_width)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_wraps_with_a_hanging_indent_and_keeps_short_lines() {
        let long = format!("  note: {}", "word ".repeat(40));
        let out = wrap_to(&format!("short\n{long}"), 50);
        assert!(out.starts_with("short\n  note: word"));
        assert!(widest(&out) <= 50, "{out}");
        assert!(
            out.lines().skip(2).all(|l| l.starts_with("    word")),
            "{out}"
        );
    }

    #[test]
    fn a_table_shrinks_to_the_width_between_words() {
        use tabled::builder::Builder;
        let mut b = Builder::default();
        b.push_record(["name", "explanation"]);
        b.push_record(["a", &"alpha beta gamma delta ".repeat(10)]);
        let out = fit_to(b.build(), 60);
        assert!(widest(&out) <= 60, "{out}");
        assert!(out.contains("gamma"), "words kept whole: {out}");
        // a table line is never re-wrapped as prose
        assert_eq!(wrap_to(&out, 30), out);
    }

    #[test]
    fn a_long_name_breaks_after_its_separators_not_mid_word() {
        let t = wrap_to("ecs.gn7i-c8g1.2xlarge", 16);
        assert_eq!(t, "ecs.gn7i-c8g1.\n  2xlarge");
        // Text that fits is untouched; numbers keep their point.
        assert_eq!(wrap_to("0.370 USD", 40), "0.370 USD");
        let t = wrap_to("price 1.25 per hour, as of 2026-12-03", 20);
        assert!(t.lines().all(|l| l.trim_end().len() <= 20), "{t}");
        assert!(t.contains("1.25"), "{t}");
    }
}
