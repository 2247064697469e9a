//! The calibration table (`gpuvalue calibration`): each published point with what the model
//! implies for it, and each rule's factor next to the factor its points fit.

use super::fmt::md;
use crate::market::catalog::Catalog;
use crate::text::term_text;
use crate::value::calibration::{CalibrationFile, PointCheck};
use crate::value::scenario::ScenarioFile;
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
            tolerance: crate::value::calibration::TOLERANCE,
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

/// `calibration --serving`: the serving model against published serving runs.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Debug, Serialize)]
pub struct Serving {
    pub fits: Vec<crate::value::scenario::serving::VendorFit>,
    pub summary: Vec<crate::value::serving_calibration::Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<crate::value::serving_calibration::Checked>>,
    pub left_out: std::collections::BTreeMap<String, u64>,
    /// Each source, model and GPU type held out whole and refitted without.
    pub cross_validation: Vec<crate::value::serving_validation::CrossValidation>,
    /// The disaggregated runs, estimated and never fitted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disaggregated: Option<crate::value::serving_validation::Score>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Serving {
    const CV_HEAD: [&'static str; 6] = [
        "held out whole",
        "points",
        "within 1.5x",
        "median ratio",
        "TTFTs",
        "TTFT within 1.5x (median)",
    ];

    /// The cross-validation rows: per grouping its pooled line, then each group.
    fn cv_rows(&self) -> Vec<[String; 6]> {
        let row = |name: String, s: &crate::value::serving_validation::Score| {
            [
                name,
                format!("{}", s.points),
                format!("{:.0}%", s.within * 100.0),
                format!("{:.2}", s.median),
                format!("{}", s.ttft_points),
                if s.ttft_points == 0 {
                    "-".into()
                } else {
                    format!("{:.0}% ({:.2})", s.ttft_within * 100.0, s.ttft_median)
                },
            ]
        };
        let mut v = Vec::new();
        for cv in &self.cross_validation {
            v.push(row(
                format!("every {} (pooled)", cv.grouping.name()),
                &cv.all,
            ));
            for g in &cv.groups {
                v.push(row(format!("  {}", g.group), g));
            }
        }
        if let Some(d) = &self.disaggregated {
            v.push(row(d.group.clone(), d));
        }
        v
    }

    const CV_INTRO: &'static str = "Leave-one-group-out cross-validation (each source, model and GPU type held out whole, the fits refitted without it, then estimated):";

    fn summary_rows(&self) -> Vec<[String; 7]> {
        use crate::value::serving_calibration::Split;
        self.summary
            .iter()
            .map(|s| {
                [
                    s.gpu.clone(),
                    match s.split {
                        Split::Fit => "fit".into(),
                        Split::HeldOut => "held out".into(),
                    },
                    format!("{}", s.points),
                    format!("{:.0}%", s.within * 100.0),
                    format!("{:.2}", s.median),
                    format!("{:.2}-{:.2}", s.p10, s.p90),
                    format!("{}", s.not_run),
                ]
            })
            .collect()
    }

    const HEAD: [&'static str; 7] = [
        "GPU",
        "part",
        "points",
        "within 1.5x",
        "median ratio",
        "p10-p90",
        "not run",
    ];

    fn fits_text(&self) -> String {
        self.fits
            .iter()
            .map(|f| {
                format!(
                    "{}: {:.0}% of the triad bandwidth, {:.0}% of the matrix rate, {:.0} us a step, {:.1} us a layer ({})",
                    f.vendor,
                    f.fit.bandwidth * 100.0,
                    f.fit.compute * 100.0,
                    f.fit.step_s * 1e6,
                    f.fit.layer_s * 1e6,
                    f.basis
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn left_text(&self) -> String {
        let v: Vec<String> = self
            .left_out
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        format!("Rows of the collected tables left out: {}.", v.join("; "))
    }

    pub fn text(&self) -> String {
        let mut b = tabled::builder::Builder::default();
        b.push_record(Self::HEAD);
        for r in self.summary_rows() {
            b.push_record(r);
        }
        let mut s = String::from(
            "The serving model against published serving runs (ratio = estimate / published; held out: never fitted on):\n",
        );
        s.push_str(&super::term::fit(
            b.build().with(Style::rounded()).to_owned(),
        ));
        if let Some(points) = &self.points {
            let mut b = tabled::builder::Builder::default();
            b.push_record([
                "point",
                "GPU",
                "model",
                "part",
                "published",
                "estimate",
                "ratio",
            ]);
            for p in points {
                b.push_record([
                    p.id.clone(),
                    p.gpu.clone(),
                    p.model.clone(),
                    format!("{:?}", p.split).to_lowercase(),
                    format!("{:.1}", p.published),
                    p.implied
                        .map_or_else(|| p.why.clone().unwrap_or_default(), |v| format!("{v:.1}")),
                    p.ratio.map_or("-".into(), |r| format!("{r:.2}")),
                ]);
            }
            s.push('\n');
            s.push_str(&super::term::fit(
                b.build().with(Style::rounded()).to_owned(),
            ));
        }
        if !self.cross_validation.is_empty() {
            let mut b = tabled::builder::Builder::default();
            b.push_record(Self::CV_HEAD);
            for r in self.cv_rows() {
                b.push_record(r);
            }
            s.push('\n');
            s.push_str(Self::CV_INTRO);
            s.push('\n');
            s.push_str(&super::term::fit(
                b.build().with(Style::rounded()).to_owned(),
            ));
        }
        s.push_str("\nFitted per vendor:\n");
        s.push_str(&self.fits_text());
        s.push('\n');
        s.push_str(&self.left_text());
        s.push('\n');
        super::term::wrap(&term_text(&s))
    }

    pub fn markdown(&self) -> String {
        let mut s = format!(
            "| {} |\n|---|---|---|---|---|---|---|\n",
            Self::HEAD.join(" | ")
        );
        for r in self.summary_rows() {
            s.push_str(&format!("| {} |\n", r.map(|c| md(&c)).join(" | ")));
        }
        if let Some(points) = &self.points {
            s.push_str("\n| point | GPU | model | part | published | estimate | ratio | source |\n|---|---|---|---|---|---|---|---|\n");
            for p in points {
                s.push_str(&format!(
                    "| {} | {} | {} | {:?} | {:.1} | {} | {} | {} |\n",
                    md(&p.id),
                    p.gpu,
                    p.model,
                    p.split,
                    p.published,
                    p.implied
                        .map_or_else(|| md(p.why.as_deref().unwrap_or("")), |v| format!("{v:.1}")),
                    p.ratio.map_or("-".into(), |r| format!("{r:.2}")),
                    md(&p.source)
                ));
            }
        }
        if !self.cross_validation.is_empty() {
            s.push_str(&format!(
                "\n{}\n\n| {} |\n|---|---|---|---|---|---|\n",
                Self::CV_INTRO,
                Self::CV_HEAD.join(" | ")
            ));
            for r in self.cv_rows() {
                s.push_str(&format!("| {} |\n", r.map(|c| md(c.trim())).join(" | ")));
            }
        }
        s.push('\n');
        s.push_str(&self.fits_text());
        s.push_str("\n\n");
        s.push_str(&self.left_text());
        s.push('\n');
        s
    }
}
