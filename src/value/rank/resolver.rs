//! The resolver: for each GPU and rate, the figure a row uses (measured, or datasheet x
//! efficiency) and where it came from.

use super::*;

impl FigureUse {
    pub(super) fn new(f: Rate, value: f64, derivation: Derivation, basis: String) -> FigureUse {
        FigureUse {
            figure: f,
            value,
            unit: f.unit().into(),
            source: derivation.source(),
            basis,
            derivation,
        }
    }
}

/// Finds the value of a figure for one adapter of a catalog GPU: measured, else datasheet x
/// efficiency, else the same for the unit its work falls back to; latency: measured, else
/// the measured hardware median, else the assumption. Remembers every factor it used.
pub(super) struct Resolver {
    pub(super) measured: Measured,
    /// Measured / datasheet ratios for figures no calibration rule covers.
    pub(super) derived: Derived,
    pub(super) calibration: &'static CalibrationFile,
    /// Latency has no datasheet: measured hardware GPUs' median, if any, and its files.
    pub(super) hw_latency: Option<(f64, Vec<String>)>,
}

/// Each efficiency factor a ranking used, once per figure and the GPUs it covers.
pub(super) type Used = BTreeMap<(Rate, String), Efficiency>;

/// A factor as the ranking reports it.
pub(super) fn efficiency(f: Rate, k: &Factor) -> Efficiency {
    Efficiency {
        figure: f,
        factor: k.value,
        origin: k.origin.name().into(),
        basis: k.basis.clone(),
        applies_to: k.applies_to.clone(),
    }
}

pub(super) fn remember(used: &mut Used, e: Efficiency) {
    used.entry((e.figure, e.applies_to.clone())).or_insert(e);
}

impl Resolver {
    pub(super) fn new(
        measured: Measured,
        derived: Derived,
        calibration: &'static CalibrationFile,
    ) -> Resolver {
        let latency = || {
            measured
                .iter()
                .filter(|((_, f), _)| *f == Rate::LatencyDispatch)
        };
        let hw_latency = median(latency().flat_map(|(_, (v, _))| v.iter().copied())).map(|m| {
            (
                m,
                latency()
                    .flat_map(|(_, (_, f))| f.iter().cloned())
                    .collect(),
            )
        });
        Resolver {
            measured,
            derived,
            calibration,
            hw_latency,
        }
    }

    pub(super) fn median_of(&self, gpu: &GpuSpec, f: Rate) -> Option<f64> {
        self.measured
            .get(&(gpu.id.clone(), f))
            .and_then(|(v, _)| median(v.iter().copied()))
    }

    /// The efficiency for a figure on a GPU: its calibration rule, else the ratio measured
    /// in this ranking, else the default assumption.
    pub(super) fn factor(&self, f: Rate, gpu: &GpuSpec) -> Factor {
        if let Some(k) = self.calibration.factor(f, gpu) {
            return k;
        }
        if let Some((x, n, files)) = self.derived.get(&f) {
            return derived_factor(*x, *n, files);
        }
        calibration::default_factor(f)
    }

    /// The figure's value on `gpu`, and the efficiency factor behind it when estimated.
    pub(super) fn resolve(
        &self,
        fig: Rate,
        gpu: &GpuSpec,
    ) -> Option<(FigureUse, Option<Efficiency>)> {
        if fig == Rate::LatencyDispatch {
            return Some((self.latency(gpu), None));
        }
        let r = calibration::resolve(
            fig,
            gpu,
            |f| self.median_of(gpu, f),
            |f| self.factor(f, gpu),
        )?;
        let Some((sheet, k)) = &r.estimate else {
            return Some((
                if r.used == fig {
                    FigureUse::new(fig, r.value, Derivation::Measured, "measured".into())
                } else {
                    FigureUse::new(
                        fig,
                        r.value,
                        Derivation::StandsIn { used: r.used },
                        stand_in_basis(fig, r.used),
                    )
                },
                None,
            ));
        };
        let mut basis = format!(
            "{} {} x {:.2} ({}; {})",
            r.used.label(),
            r.used.peak_text(sheet.value),
            k.value,
            k.origin.name(),
            k.applies_to
        );
        if let Some(d) = &sheet.derived {
            basis.push_str(&format!("; peak derived: {d}"));
        }
        if r.used != fig {
            basis.push_str(&format!("; no {} on this GPU", fig.label()));
        }
        if gpu.adapters() > 1 {
            basis.push_str(&format!("; per adapter, {} per package", gpu.adapters()));
        }
        let how = Derivation::Datasheet {
            used: r.used,
            peak: sheet.value,
            factor: k.value,
            origin: k.origin,
        };
        Some((
            FigureUse::new(fig, r.value, how, basis),
            Some(efficiency(r.used, k)),
        ))
    }

    pub(super) fn latency(&self, gpu: &GpuSpec) -> FigureUse {
        let fig = Rate::LatencyDispatch;
        if let Some(v) = self.median_of(gpu, fig) {
            return FigureUse::new(fig, v, Derivation::Measured, "measured".into());
        }
        match &self.hw_latency {
            Some((v, files)) => FigureUse::new(
                fig,
                *v,
                Derivation::HardwareMedian,
                format!("median of measured hardware GPUs ({})", files_text(files)),
            ),
            None => FigureUse::new(
                fig,
                fig.assumed().unwrap_or(10.0),
                Derivation::Assumed,
                "assumed 10 us per kernel launch (no measured hardware GPU)".into(),
            ),
        }
    }
}
