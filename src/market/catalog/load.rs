//! Catalog files from the command line: the embedded catalog replaced by `--catalog`,
//! extended by each `--catalog-add` (JSON in the catalog's schema, or a SkyPilot-style CSV
//! dated by `--csv-as-of`), and one file prepared for `catalog check`.

use super::Catalog;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// Where a command's catalog comes from.
pub struct Sources<'a> {
    /// Replaces the embedded catalog (a CSV replaces only its instances).
    pub catalog: Option<&'a Path>,
    /// Each extends the catalog, in order.
    pub add: &'a [PathBuf],
    /// The date a CSV's prices were read (CSV files carry none).
    pub csv_as_of: Option<&'a str>,
}

impl Sources<'_> {
    /// The merged catalog; a file that cannot be read or parsed is an error naming it.
    pub fn load(&self) -> Result<Catalog> {
        self.load_onto(Catalog::embedded())
    }

    /// As [`Sources::load`], with `base` in place of the embedded catalog where no
    /// `--catalog` replaces it.
    pub fn load_onto(&self, base: Catalog) -> Result<Catalog> {
        let mut c = match self.catalog {
            // A CSV replaces the instances; GPUs and currencies stay the embedded ones.
            Some(p) if is_csv(p) => csv_on_embedded(self.csv(p)?),
            Some(p) => user_json(p)?,
            None => base,
        };
        for p in self.add {
            c.extend(if is_csv(p) {
                self.csv(p)?
            } else {
                user_json(p)?
            });
        }
        Ok(c)
    }

    fn csv(&self, p: &Path) -> Result<Catalog> {
        let Some(as_of) = self.csv_as_of.filter(|s| !s.trim().is_empty()) else {
            bail!(
                "{}: CSV catalogs carry no date, and an undated price is not used; give --csv-as-of YYYY-MM-DD (when the prices were read)",
                p.display()
            );
        };
        check_csv_as_of(as_of)?;
        super::csv_import::import(p, as_of)
    }
}

/// One file for `catalog check`: a CSV or a fragment (no currencies or no GPUs of its own)
/// merged with the embedded catalog, as `--catalog-add` would use it. Gives the catalog and
/// the file's own instance and GPU counts.
pub fn for_check(file: &Path, csv_as_of: Option<&str>) -> Result<(Catalog, usize, usize)> {
    if is_csv(file) {
        if let Some(d) = csv_as_of {
            check_csv_as_of(d)?;
        }
        let imported = super::csv_import::import_for_check(file, csv_as_of.unwrap_or(""))?;
        let rows = imported.instances.len();
        return Ok((csv_on_embedded(imported), rows, 0));
    }
    let own = user_json(file)?;
    let (rows, gpus) = (own.instances.len(), own.gpus.len());
    if own.currencies.is_empty() || own.gpus.is_empty() {
        let mut all = Catalog::embedded();
        all.extend(own);
        Ok((all, rows, gpus))
    } else {
        Ok((own, rows, gpus))
    }
}

fn is_csv(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// `--csv-as-of`: a real date, not in the future.
fn check_csv_as_of(as_of: &str) -> Result<()> {
    crate::files::check_date(as_of).map_err(|e| anyhow::anyhow!("--csv-as-of: {e}"))
}

/// The embedded GPUs and currencies with the instances of an imported CSV.
fn csv_on_embedded(imported: Catalog) -> Catalog {
    let mut base = Catalog::embedded();
    base.instances.clear();
    base.origins.clear();
    base.extend(imported);
    base
}

/// A user's JSON catalog file: parsed, and refused if one key appears twice in it.
fn user_json(p: &Path) -> Result<Catalog> {
    let c = Catalog::load(p)?;
    c.duplicate_keys(&p.display().to_string())?;
    Ok(c)
}
