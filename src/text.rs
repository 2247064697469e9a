//! Text from files and devices made safe for a terminal: every command's output and
//! every progress line goes through here, so a name cannot move the cursor or reorder text.

/// Whether `c` must not reach a terminal raw: C0 controls (ESC starts CSI/OSC sequences,
/// BEL rings), DEL, C1 controls (U+009B is a one-character CSI), and the bidirectional
/// overrides and isolates that make text display in another order than it is.
pub fn is_unsafe_for_terminal(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

pub fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let _ = write!(out, "\\u{{{:x}}}", c as u32);
}

/// Text for a terminal, one line: every control or bidi character (newlines and tabs too)
/// becomes a visible `\u{1b}`-style escape.
pub fn term(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_unsafe_for_terminal(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Text for a terminal, several lines (whole tables, messages): as `term`, but newlines
/// and tabs stay. Everything the commands print for people goes through this.
pub fn term_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_unsafe_for_terminal(c) && c != '\n' && c != '\t' {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// The first `n` bytes of `s` or fewer, cut at a char boundary: the one way to shorten text
/// read from outside (feeds, catalogs, results, configs), where a byte slice `&s[..n]`
/// panics inside a multibyte character.
pub fn prefix(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::prefix;

    #[test]
    fn prefix_cuts_at_a_char_boundary() {
        assert_eq!(prefix("2026-12-01T18", 10), "2026-12-01");
        assert_eq!(prefix("short", 10), "short");
        // "2026-12-0" is 9 bytes, then a 3-byte character straddles byte 10.
        assert_eq!(prefix("2026-12-0\u{20ac}x", 10), "2026-12-0");
        assert_eq!(prefix("\u{20ac}", 1), "");
    }
}
