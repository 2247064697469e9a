//! The value parsers of the options: each checks its bounds and says what it expected.

/// `--egress-gb`: 0 to 1e9 GB.
pub(super) fn egress_gb(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=1e9).contains(&x) => Ok(x),
        _ => Err(format!("expected GB from 0 to 1e9, found `{s}`")),
    }
}

/// `--electricity-price`: a price a kWh, 0 to 100 in any currency.
pub(super) fn per_kwh(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=100.0).contains(&x) => Ok(x),
        _ => Err(format!("expected a price a kWh from 0 to 100, found `{s}`")),
    }
}

/// `--pue`: power usage effectiveness, 1 (nothing but the IT load) to 3.
pub(super) fn pue_of(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (1.0..=3.0).contains(&x) => Ok(x),
        _ => Err(format!("expected a PUE from 1 to 3, found `{s}`")),
    }
}

/// `--nodes`: a count from 1 to 1024, or `auto`.
pub(super) fn nodes_of(s: &str) -> Result<crate::value::rank::Nodes, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(crate::value::rank::Nodes::Auto);
    }
    match t.parse::<u32>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(crate::value::rank::Nodes::Fixed(n)),
        _ => Err(format!(
            "expected a number of nodes from 1 to 1024, or auto, found `{s}`"
        )),
    }
}

/// `--probes` accepts the registered probe names, each with its one-line description.
pub(super) fn probe_parser() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        crate::measuring::probes::REGISTRY
            .iter()
            .map(|p| clap::builder::PossibleValue::new(p.name()).help(p.about())),
    )
}

/// A whole number of MiB, 1 or more.
pub(super) fn whole_mib(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if (1..=1 << 40).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a whole number of MiB from 1 to 1099511627776, found `{s}`"
        )),
    }
}

/// A positive, finite number of seconds.
pub(super) fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!(
            "expected a positive number of seconds (above 0, below 1e9), found `{s}`"
        )),
    }
}

/// `--budget`: an amount above 0, at most 1e12.
pub(super) fn budget_amount(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e12 => Ok(v),
        _ => Err(format!(
            "expected an amount above 0 and at most 1e12, found `{s}`"
        )),
    }
}

/// `--checkpoint-every`, `--restart-time`: a duration as a person writes it ("30m", "1h
/// 30m"), in hours, from a minute to 30 days.
pub(super) fn hours_of(s: &str) -> Result<f64, String> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("expected a duration such as 30m, 2h or 1h 30m, found `{s}` ({e})"))?;
    let h = d.as_secs_f64() / 3600.0;
    if (1.0 / 60.0..=720.0).contains(&h) {
        Ok(h)
    } else {
        Err(format!(
            "expected a duration from 1 minute to 30 days, found `{s}`"
        ))
    }
}

/// `--min-gpu-memory`: GB from 0 to 10,000.
pub(super) fn gigabytes(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1e4).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a number of GB from 0 to 10000, found `{s}`"
        )),
    }
}

/// `--utilisation`: a percentage above 0, at most 100.
pub(super) fn utilisation(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err(format!(
            "expected a share of the hours in percent, above 0 and at most 100, found `{s}`"
        )),
    }
}

/// `--threshold`: a percentage from 0 to 100.
pub(super) fn percentage(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("expected a percentage from 0 to 100, found `{s}`")),
    }
}

/// `--top`: how many rows, 1 or more.
pub(super) fn row_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!(
            "expected a whole number of rows, 1 or more, found `{s}`"
        )),
    }
}

/// `KIND@PROBE`, the probe one of the registered ones.
pub(super) fn parse_fault(s: &str) -> Result<crate::measuring::gpu::fault::FaultSpec, String> {
    let spec: crate::measuring::gpu::fault::FaultSpec = s.parse()?;
    if crate::measuring::probes::find(&spec.probe).is_none() {
        return Err(format!(
            "`{}`: unknown probe, expected one of {}",
            spec.probe,
            crate::measuring::probes::names().join(", ")
        ));
    }
    Ok(spec)
}

/// Largest matrix buffer `--sizes` may ask for, whatever the adapter: 256 GiB, above the
/// memory of any GPU; a larger size is refused while parsing, before anything is created.
pub const MAX_MATRIX_BYTES: u64 = 256 << 30;

pub(super) fn parse_size(s: &str) -> Result<crate::measuring::reference::Dims, String> {
    let d = crate::measuring::probes::matmul::parse_size(s)?;
    let bytes = |a: usize, b: usize| (a as u64).checked_mul(b as u64)?.checked_mul(4);
    let biggest = [bytes(d.m, d.k), bytes(d.k, d.n), bytes(d.m, d.n)]
        .into_iter()
        .try_fold(0u64, |acc, b| b.map(|b| acc.max(b)));
    match biggest {
        Some(b) if b <= MAX_MATRIX_BYTES => Ok(d),
        Some(b) => Err(format!(
            "`{s}`: a {}x{}x{} matmul needs a {} GiB matrix buffer, more than any GPU has ({} GiB)",
            d.m,
            d.n,
            d.k,
            b >> 30,
            MAX_MATRIX_BYTES >> 30
        )),
        None => Err(format!("`{s}`: the matrix buffer size overflows 64 bits")),
    }
}

/// "0.55/2.19": USD per million input and output tokens.
pub(super) fn api_price(s: &str) -> Result<(f64, f64), String> {
    let bad = || {
        format!("{s}: expected IN/OUT, USD per million input and output tokens (e.g. 0.55/2.19)")
    };
    let (a, b) = s.split_once('/').ok_or_else(bad)?;
    let p = |x: &str| -> Result<f64, String> {
        let v: f64 = x
            .trim()
            .trim_start_matches('$')
            .parse()
            .map_err(|_| bad())?;
        if v.is_finite() && (0.0..=1e4).contains(&v) {
            Ok(v)
        } else {
            Err(bad())
        }
    };
    let (i, o) = (p(a)?, p(b)?);
    if o <= 0.0 {
        return Err(format!("{s}: the output price must be above 0"));
    }
    Ok((i, o))
}
