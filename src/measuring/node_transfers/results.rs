//! The workers' timings gathered into the figures: per GPU alone and together, the node's
//! aggregate, the GPU-to-GPU pairs.

use super::*;

/// The threads' records turned into figures.
pub(super) struct Results<'a> {
    pub(super) steps: &'a [Step],
    pub(super) outs: &'a [Worker],
    pub(super) bytes: u64,
    pub(super) runs: usize,
}

impl Results<'_> {
    pub(super) fn step(&self, s: Step) -> usize {
        self.steps
            .iter()
            .position(|&x| x == s)
            .expect("step in schedule")
    }

    /// GB/s per timed run from per-run seconds; None unless every run has one.
    pub(super) fn rates(
        &self,
        secs: impl Iterator<Item = Option<f64>>,
        bytes: u64,
    ) -> Option<Summary> {
        let v: Option<Vec<f64>> = secs
            .map(|t| t.filter(|t| *t > 0.0).map(|t| bytes as f64 / t * 1e-9))
            .collect();
        Summary::of(&v?)
    }

    /// A slot's figure for a step: its runs' own times, withheld unless its check passed.
    pub(super) fn figure(&self, me: usize, k: usize) -> Figure {
        let w = &self.outs[me];
        let check = w.checks.get(&k).cloned().unwrap_or_else(|| Check {
            passed: false,
            detail: format!(
                "not measured: {}",
                w.error.as_deref().unwrap_or("the copy did not run")
            ),
        });
        let gbs = if check.passed {
            self.rates(
                (0..self.runs).map(|r| w.spans.get(&(k, r)).map(|(s, e)| e - s)),
                self.bytes,
            )
        } else {
            None
        };
        Figure { gbs, check }
    }

    pub(super) fn way(&self, me: usize, d: Direction, path: &str) -> Way {
        let alone = self.figure(me, self.step(Step::Alone(d, me)));
        let together = self
            .steps
            .contains(&Step::Together(d))
            .then(|| self.figure(me, self.step(Step::Together(d))));
        let ratio = match (&alone.gbs, together.as_ref().and_then(|t| t.gbs.as_ref())) {
            (Some(a), Some(t)) => Some(t.median / a.median),
            _ => None,
        };
        Way {
            path: path.into(),
            alone,
            together,
            together_vs_alone: ratio,
        }
    }

    pub(super) fn gpu(&self, me: usize, info: &AdapterSummary) -> GpuLinks {
        let (to_device, to_host) = link::paths(info);
        GpuLinks {
            index: info.index,
            name: info.name.clone(),
            backend: info.backend.clone(),
            software: info.software,
            pci_bus_id: info.pci_bus_id.clone(),
            to_device: self.way(me, Direction::ToDevice, to_device),
            to_host: self.way(me, Direction::ToHost, to_host),
            error: self.outs[me].error.clone(),
        }
    }

    pub(super) fn aggregate(&self, d: Direction, gpus: &[GpuLinks]) -> Aggregate {
        let k = self.step(Step::Together(d));
        let n = self.outs.len();
        let all_checked = gpus
            .iter()
            .all(|g| g.way(d).together.as_ref().is_some_and(|t| t.check.passed));
        let span = |r: usize| -> Option<f64> {
            let spans: Option<Vec<(f64, f64)>> = self
                .outs
                .iter()
                .map(|w| w.spans.get(&(k, r)).copied())
                .collect();
            let spans = spans?;
            let start = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
            let end = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
            Some(end - start)
        };
        let together = if all_checked {
            self.rates((0..self.runs).map(span), self.bytes * n as u64)
        } else {
            None
        };
        let sum_alone: Option<f64> = gpus
            .iter()
            .map(|g| g.way(d).alone.gbs.as_ref().map(|s| s.median))
            .sum();
        Aggregate {
            direction: d,
            gpus: n,
            sum_alone_gbs: sum_alone,
            ratio: match (&together, sum_alone) {
                (Some(t), Some(s)) if s > 0.0 => Some(t.median / s),
                _ => None,
            },
            together_gbs: together,
        }
    }

    pub(super) fn pairs(&self, infos: &[&AdapterSummary]) -> Vec<PairCopy> {
        self.steps
            .iter()
            .enumerate()
            .filter_map(|(k, s)| match *s {
                Step::Pair(a, b) => Some((k, a, b)),
                _ => None,
            })
            .map(|(k, a, b)| {
                let mut figure = self.figure(b, k);
                if figure.check.passed {
                    // Bytes over the source's read plus the destination's write, per run.
                    let secs = (0..self.runs).map(|r| {
                        let t = |w: &Worker| w.spans.get(&(k, r)).map(|(s, e)| e - s);
                        Some(t(&self.outs[a])? + t(&self.outs[b])?)
                    });
                    figure.gbs = self.rates(secs, self.bytes);
                }
                PairCopy {
                    from: infos[a].index,
                    to: infos[b].index,
                    path: STAGED.into(),
                    figure,
                }
            })
            .collect()
    }
}
