//! The ranking as CSV, one record per instance: the data columns of
//! [`super::columns::data_columns`], text from outside made safe for spreadsheets.

use super::columns::data_columns;
use crate::report::fmt::csv_cell;
use crate::value::rank::RankReport;

/// The ranking as CSV, one record per instance, cells safe for spreadsheets.
pub fn csv(r: &RankReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(data_columns(r).map(|c| c.key))?;
    for x in &r.rows {
        w.write_record(data_columns(r).map(|c| {
            let cell = (c.cell)(x);
            if c.text { csv_cell(&cell) } else { cell }
        }))?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
