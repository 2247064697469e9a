//! One CSV cell at a time: numbers in range, prices (and what is no price), `GpuInfo`'s
//! memory.

use crate::market::catalog::PLACEHOLDER_AMOUNTS;

/// Text found in price cells where no price was known.
const PLACEHOLDER_TEXT: &[&str] = &[
    "n/a", "na", "-", "--", "?", "tbd", "tba", "null", "none", "unknown", "x",
];

/// A numeric field: empty is `None`; anything else must be a finite number in `range`
/// (and whole, for counts), else what is wrong with it (the caller names line and column).
pub(super) fn field(text: &str, whole: bool, range: (f64, f64)) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let v = number(t)?;
    if whole && v.fract() != 0.0 {
        return Err(format!("expected a whole number, found {t}"));
    }
    if !(range.0..=range.1).contains(&v) {
        return Err(format!(
            "{t} is outside the range {}..={}",
            range.0, range.1
        ));
    }
    Ok(Some(v))
}

/// A finite number, else what was found instead.
pub(super) fn number(t: &str) -> Result<f64, String> {
    t.parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("expected a number, found {t:?}"))
}

/// What a price cell holds.
pub(super) enum Cell {
    Empty,
    Price(f64),
    /// Not a usable price: why, as a finding says it.
    Bad(String),
}

/// A price cell: a positive amount; empty; or a value that is no price (negative, zero, a
/// placeholder number or word, out of range). Other text is a malformed line.
pub(super) fn price_cell(text: &str) -> Result<Cell, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(Cell::Empty);
    }
    if PLACEHOLDER_TEXT.iter().any(|p| p.eq_ignore_ascii_case(t)) {
        return Ok(Cell::Bad(format!("{t:?} is a placeholder, not a price")));
    }
    let v = number(t)?;
    Ok(if v < 0.0 {
        Cell::Bad(format!("negative price {t}"))
    } else if v == 0.0 {
        Cell::Bad(format!(
            "zero price {t}: a placeholder or a missing price, not a free instance"
        ))
    } else if PLACEHOLDER_AMOUNTS.contains(&v) {
        Cell::Bad(format!("{t} looks like a placeholder, not a price"))
    } else if v > 1e7 {
        Cell::Bad(format!("{t} per hour is outside the plausible range"))
    } else {
        Cell::Price(v)
    })
}

/// `GpuInfo`'s memory per GPU in MiB: SkyPilot writes a Python-style dict,
/// `{'Gpus': [{'Name': 'A100', ..., 'MemoryInfo': {'SizeInMiB': 40960}}], ...}`.
pub(super) fn gpu_info_mib(text: &str) -> Option<f64> {
    let at = text.find("MemoryInfo")?;
    let rest = &text[at..];
    let rest = &rest[rest.find("SizeInMiB")? + "SizeInMiB".len()..];
    let rest = rest.trim_start_matches(['\'', '"', ':', ' ']);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok().filter(|v: &f64| v.is_finite())
}
