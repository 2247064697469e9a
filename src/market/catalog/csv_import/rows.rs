//! Reading a CSV file's lines into rows: the header's columns by name, then every record.
//! A line that is no row (a malformed record, a field count other than the header's, a
//! number that is no number or out of range, an over-long field) is a structural fault:
//! every one in the file is collected, with its line and column, so that one look at the
//! file names them all; its line is left out.

use super::cells::{Cell, field, gpu_info_mib, price_cell};
use super::{LineFindings, Row, region_name};
use crate::market::catalog::Severity;
use crate::market::catalog::names;
use anyhow::{Context, Result, bail};

/// Column positions, found by header name.
pub(super) struct Columns {
    ty: usize,
    acc: usize,
    cnt: usize,
    price: usize,
    region: usize,
    spot: Option<usize>,
    vcpu: Option<usize>,
    mem: Option<usize>,
    zone: Option<usize>,
    gpu_info: Option<usize>,
}

/// A line that could not be read as a row: where, what it would have been, and why.
pub(super) struct Structural {
    pub line: usize,
    pub column: Option<&'static str>,
    /// (instance type, region) as far as the line gives them.
    pub key: (String, String),
    pub message: String,
}

/// Parse step: maps the header to column positions, then reads every record into a row;
/// the lines that are no row are given back beside the rows, each with its fault.
pub(super) fn read_rows(
    data: &[u8],
    name: &str,
    found: &mut LineFindings,
) -> Result<(Vec<Row>, Vec<Structural>)> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(data);
    let headers = rdr
        .headers()
        .with_context(|| format!("{name}: no header line"))?
        .clone();
    let cols = columns(&headers, name)?;
    let mut rows = Vec::new();
    let mut faults = Vec::new();
    let mut next_line = 2;
    let mut lines = LineCounter::default();
    for rec in rdr.records() {
        let rec = match rec {
            Ok(rec) => rec,
            Err(e) => {
                faults.push(Structural {
                    line: e.position().map_or(next_line, |p| p.line() as usize),
                    column: None,
                    key: (String::new(), String::new()),
                    message: format!("malformed CSV record: {e}"),
                });
                next_line += 1;
                continue;
            }
        };
        let line = match rec.position() {
            Some(p) => lines.line_at(data, p.byte() as usize),
            None => next_line,
        };
        next_line = line + 1;
        let get = |c: usize| rec.get(c).unwrap_or("").trim().to_string();
        let fault = |column, message| Structural {
            line,
            column,
            key: (get(cols.ty), get(cols.region)),
            message,
        };
        // A stray quote swallows the line breaks up to the next quote: the record then
        // holds several lines in one field and the rows between are lost.
        if rec.iter().any(|f| f.contains(['\n', '\r'])) {
            faults.push(fault(
                None,
                "malformed record: a field runs over several lines (a stray `\"`?); the lines it swallowed are lost".into(),
            ));
            continue;
        }
        if rec.len() != headers.len() {
            faults.push(fault(
                None,
                format!(
                    "{} fields where the header has {} (a column missing, or a stray comma?)",
                    rec.len(),
                    headers.len()
                ),
            ));
            continue;
        }
        match row(&rec, &cols, line, found) {
            Ok(r) => rows.push(r),
            Err(list) => faults.extend(list.into_iter().map(|(c, m)| fault(c, m))),
        }
    }
    Ok((rows, faults))
}

/// Line numbers counted from a record's byte offset (the csv crate's own count is one too
/// low in CRLF files): the line breaks before its first character, plus one. Records come
/// in order, so the breaks are counted once, up to the furthest offset asked so far.
#[derive(Default)]
struct LineCounter {
    counted_to: usize,
    breaks: usize,
}

impl LineCounter {
    /// The line of the record that starts at byte `byte` of `data`.
    fn line_at(&mut self, data: &[u8], byte: usize) -> usize {
        // After a CR the csv crate starts the next record at the LF: skip it.
        let mut at = byte.min(data.len());
        while at < data.len() && matches!(data[at], b'\r' | b'\n') {
            at += 1;
        }
        if at >= self.counted_to {
            self.breaks += data[self.counted_to..at]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            self.counted_to = at;
        }
        self.breaks + 1
    }
}

/// Header step: finds each column by name; the first five are required.
fn columns(headers: &csv::StringRecord, name: &str) -> Result<Columns> {
    let mut seen = std::collections::HashSet::new();
    for h in headers.iter() {
        if !seen.insert(h.trim().to_lowercase()) {
            bail!(
                "{name}: line 1: column `{}` appears twice in the header",
                h.trim()
            );
        }
    }
    let col = |h: &str| {
        headers
            .iter()
            .position(|x| x.trim().eq_ignore_ascii_case(h))
    };
    let need = |h: &str| {
        col(h).with_context(|| {
            format!(
                "{name}: no `{h}` column in the header ({})",
                headers.iter().collect::<Vec<_>>().join(",")
            )
        })
    };
    Ok(Columns {
        ty: need("InstanceType")?,
        acc: need("AcceleratorName")?,
        cnt: need("AcceleratorCount")?,
        price: need("Price")?,
        region: need("Region")?,
        spot: col("SpotPrice"),
        vcpu: col("vCPUs"),
        mem: col("MemoryGiB"),
        zone: col("AvailabilityZone"),
        gpu_info: col("GpuInfo"),
    })
}

/// Row step: one record's fields; counts and sizes must be numbers in range (else the
/// record's faults, each with its column); a price that is no price is left out with a
/// finding (an empty on-demand price too: it is no finding only when the spot price is the
/// one left empty, as for types sold on demand only).
fn row(
    rec: &csv::StringRecord,
    cols: &Columns,
    line: usize,
    found: &mut LineFindings,
) -> Result<Row, Vec<(Option<&'static str>, String)>> {
    let get = |c: Option<usize>| c.and_then(|c| rec.get(c)).unwrap_or("").trim().to_string();
    let mut faults = Vec::new();
    faults.extend(too_long(rec));
    let mut take = |column: &'static str, r: Result<Option<f64>, String>| {
        r.unwrap_or_else(|e| {
            faults.push((Some(column), e));
            None
        })
    };
    let count = take(
        "AcceleratorCount",
        field(&get(Some(cols.cnt)), false, (0.0, 64.0)),
    );
    let vcpu = take("vCPUs", field(&get(cols.vcpu), false, (0.0, 1e5)));
    let mem = take("MemoryGiB", field(&get(cols.mem), false, (0.0, 1e6)));
    let mut cell = |column: &'static str, text: String| {
        price_cell(&text).unwrap_or_else(|e| {
            faults.push((Some(column), e));
            Cell::Empty
        })
    };
    let price = cell("Price", get(Some(cols.price)));
    let spot = cell("SpotPrice", get(cols.spot));
    if !faults.is_empty() {
        return Err(faults);
    }
    let mut r = Row {
        line,
        instance: get(Some(cols.ty)),
        accel: get(Some(cols.acc)),
        count,
        vcpu,
        mem,
        gpu_mib: gpu_info_mib(&get(cols.gpu_info)),
        price: None,
        spot: None,
        region: region_name(&get(Some(cols.region))),
        zone: get(cols.zone),
        text: rec.iter().map(|f| f.trim().to_string()).collect(),
        fraction: false,
    };
    if !r.may_carry_gpu() {
        // CPU-only types (most of a SkyPilot file) never become instances: no findings.
        return Ok(r);
    }
    if r.instance.is_empty() && names::is_not_gpu(&r.accel) {
        // GCP's TPU lines (priced apart, 700.0 placeholders and all): never a GPU instance.
        return Ok(r);
    }
    if let Some(c) = r.count.filter(|c| c.fract() != 0.0) {
        r.fraction = true;
        found.push(
            &r,
            Severity::Warning,
            Some("AcceleratorCount"),
            format!(
                "{c} of a GPU: a share of a GPU (time-sliced or MIG) is not a whole GPU's figures; the line is not imported"
            ),
        );
        return Ok(r);
    }
    set_prices(&mut r, price, spot, &get(cols.spot), found);
    Ok(r)
}

/// The fault of a record with a field longer than a name may be, if it has one.
fn too_long(rec: &csv::StringRecord) -> Option<(Option<&'static str>, String)> {
    let long = rec
        .iter()
        .find(|f| f.chars().count() > crate::market::catalog::MAX_NAME_CHARS)?;
    Some((
        None,
        format!(
            "a field of {} characters, more than the {} a name may have",
            long.chars().count(),
            crate::market::catalog::MAX_NAME_CHARS
        ),
    ))
}

/// The row's on-demand and spot prices from their cells, each finding said: an empty
/// on-demand price is a warning, a bad one an error; a spot price of zero (`spot_text`)
/// is no spot price, with a warning, another bad one an error.
fn set_prices(r: &mut Row, price: Cell, spot: Cell, spot_text: &str, found: &mut LineFindings) {
    match price {
        Cell::Price(v) => r.price = Some(v),
        Cell::Empty => found.push(
            r,
            Severity::Warning,
            Some("Price"),
            "empty on-demand price: this line gives no on-demand price".into(),
        ),
        Cell::Bad(why) => found.push(
            r,
            Severity::Error,
            Some("Price"),
            format!("{why}; left out of the on-demand price"),
        ),
    }
    match spot {
        Cell::Price(v) => r.spot = Some(v),
        Cell::Empty => {}
        // A zero spot price is how some feeds say "no spot market" (every Vast row): the
        // same as an empty cell, said as a warning; other bad spot prices are errors.
        Cell::Bad(why) if spot_text.parse::<f64>() == Ok(0.0) => found.push(
            r,
            Severity::Warning,
            Some("SpotPrice"),
            format!("{why}; read as no spot price"),
        ),
        Cell::Bad(why) => found.push(
            r,
            Severity::Error,
            Some("SpotPrice"),
            format!("{why}; left out of the spot price"),
        ),
    }
}
