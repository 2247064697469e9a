//! The calibration table (`gpuvalue calibration`): each published point with what the model
//! implies for it, and each rule's factor next to the factor its points fit.

use super::fmt::{md, term_text};
use crate::calibration::{CalibrationFile, PointCheck};
use crate::catalog::Catalog;
use crate::scenario::ScenarioFile;
use anyhow::Result;
use serde::Serialize;
use tabled::settings::Style;
use tabled::{Table as Tabled_, Tabled};

#[derive(Clone, Debug, Serialize)]
pub struct RuleFit {
    pub figure: String,
    pub applies_to: String,
    pub factor: f64,
    /// The factor the rule's points fit (None: the rule has no points).
    pub fitted: Option<f64>,
    pub points: usize,
    pub basis: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub tolerance: f64,
    pub rules: Vec<RuleFit>,
    pub points: Vec<PointCheck>,
}

#[derive(Tabled)]
struct PointRow {
    point: String,
    gpu: String,
    of: String,
    published: String,
    implied: String,
    ratio: String,
}

#[derive(Tabled)]
struct RuleRow {
    figure: String,
    #[tabled(rename = "applies to")]
    applies_to: String,
    factor: String,
    #[tabled(rename = "fitted on its points")]
    fitted: String,
}

fn num(x: f64) -> String {
    if x.abs() >= 1e6 {
        format!("{x:.3e}")
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

impl Table {
    pub fn build(
        cal: &CalibrationFile,
        catalog: &Catalog,
        scenarios: &ScenarioFile,
    ) -> Result<Table> {
        let mut rules = Vec::new();
        for (i, r) in cal.rules.iter().enumerate() {
            rules.push(RuleFit {
                figure: r.figure.name().into(),
                applies_to: r.applies_to(),
                factor: r.factor,
                fitted: cal.fit(i, catalog, scenarios)?,
                points: r.points.len(),
                basis: r.basis.clone(),
            });
        }
        Ok(Table {
            tolerance: crate::calibration::TOLERANCE,
            rules,
            points: cal.check(catalog, scenarios)?,
        })
    }

    /// Whether every point's implied figure is within `tol` of the published one.
    pub fn all_within(&self, tol: f64) -> bool {
        self.points
            .iter()
            .all(|p| p.ratio <= tol && p.ratio >= 1.0 / tol)
    }

    fn point_rows(&self) -> Vec<PointRow> {
        self.points
            .iter()
            .map(|p| PointRow {
                point: format!("{}{}", p.id, if p.fitted { "" } else { " (check)" }),
                gpu: p.gpu.clone(),
                of: p.what.clone(),
                published: format!("{} {}", num(p.published), p.unit),
                implied: num(p.implied),
                ratio: format!("{:.2}", p.ratio),
            })
            .collect()
    }

    fn rule_rows(&self) -> Vec<RuleRow> {
        self.rules
            .iter()
            .map(|r| RuleRow {
                figure: r.figure.clone(),
                applies_to: r.applies_to.clone(),
                factor: format!("{:.2}", r.factor),
                fitted: r.fitted.map_or_else(
                    || "no points: assumed".into(),
                    |f| {
                        format!(
                            "{f:.3} ({} point{})",
                            r.points,
                            if r.points == 1 { "" } else { "s" }
                        )
                    },
                ),
            })
            .collect()
    }

    fn verdict(&self) -> String {
        let out = self
            .points
            .iter()
            .filter(|p| p.ratio > self.tolerance || p.ratio < 1.0 / self.tolerance)
            .count();
        if out == 0 {
            format!(
                "Every implied figure is within {}x of its published one.",
                self.tolerance
            )
        } else {
            format!("{out} point(s) fall outside {}x.", self.tolerance)
        }
    }

    /// Terminal form: the rules, then the points.
    pub fn text(&self) -> String {
        let mut s = String::from("Efficiency factors (datasheet peak x factor = estimate):\n");
        s.push_str(&super::term::fit(
            Tabled_::new(self.rule_rows())
                .with(Style::rounded())
                .to_owned(),
        ));
        s.push_str("\nPublished results recomputed from the catalog and the scenario model (ratio = implied / published; (check): not fitted on):\n");
        s.push_str(&super::term::fit(
            Tabled_::new(self.point_rows())
                .with(Style::rounded())
                .to_owned(),
        ));
        s.push('\n');
        s.push_str(&self.verdict());
        s.push('\n');
        super::term::wrap(&term_text(&s))
    }

    /// Markdown form, as the README shows it.
    pub fn markdown(&self) -> String {
        let mut s = String::from(
            "| figure | applies to | factor | fitted on its points |\n|---|---|---|---|\n",
        );
        for r in self.rule_rows() {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                md(&r.figure),
                md(&r.applies_to),
                r.factor,
                md(&r.fitted)
            ));
        }
        s.push_str(
            "\n| point | GPU | of | published | implied | ratio |\n|---|---|---|---|---|---|\n",
        );
        for p in self.point_rows() {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                md(&p.point),
                md(&p.gpu),
                md(&p.of),
                md(&p.published),
                p.implied,
                p.ratio
            ));
        }
        s.push('\n');
        s.push_str(&self.verdict());
        s.push('\n');
        s
    }
}
