//! Sample statistics: median, min, max, mean, standard deviation, and a spread warning.

use serde::{Deserialize, Serialize};

/// Summary of repeated measurements of one figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples (warm-up and calibration runs are never counted).
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stddev: f64,
}

/// The median of the finite values; None when there are none.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// Relative spread above which a figure is flagged as noisy.
pub const WIDE_SPREAD: f64 = 0.10;

impl Summary {
    /// Summarises samples; `None` for an empty slice or one holding a non-finite value.
    pub fn of(xs: &[f64]) -> Option<Summary> {
        if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut v = xs.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = median(v.iter().copied())?;
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Some(Summary {
            n,
            median,
            min: v[0],
            max: v[n - 1],
            mean,
            stddev: var.sqrt(),
        })
    }

    /// (max - min) / median: how far apart the fastest and slowest samples were.
    pub fn rel_spread(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs()
        }
    }

    /// Maps each statistic through a monotone function (e.g. seconds -> GFLOPS), swapping min
    /// and max when the function is decreasing. Where the samples are at hand, summarise the
    /// mapped samples instead ([`crate::model::TimingInfo::figure`]): the mean and standard
    /// deviation here are first-order estimates (f of the mean; |f'| x the deviation).
    pub fn map(&self, f: impl Fn(f64) -> f64, decreasing: bool) -> Summary {
        let (lo, hi) = if decreasing {
            (f(self.max), f(self.min))
        } else {
            (f(self.min), f(self.max))
        };
        Summary {
            n: self.n,
            median: f(self.median),
            min: lo,
            max: hi,
            mean: f(self.mean),
            stddev: {
                // The derivative at the mean by a central difference.
                let h = (self.mean.abs() * 1e-6).max(f64::MIN_POSITIVE);
                let slope = (f(self.mean + h) - f(self.mean - h)) / (2.0 * h);
                (slope.abs() * self.stddev).max(0.0)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!((s.stddev - 1.2909944487358056).abs() < 1e-12);
        assert!(Summary::of(&[]).is_none());
        // A rate mapped from times keeps a spread: 1/t of times 1, 2 (mean 1.5, sd 0.707)
        // has sd |-1/1.5^2| x 0.707 = 0.314.
        let r = Summary::of(&[1.0, 2.0]).unwrap().map(|t| 1.0 / t, true);
        assert!((r.stddev - 0.3142696805273545).abs() < 1e-6, "{r:?}");
        assert_eq!((r.min, r.max), (0.5, 1.0));
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn spread_and_map() {
        let s = Summary::of(&[0.9, 1.0, 1.2]).unwrap();
        assert!((s.rel_spread() - 0.3).abs() < 1e-12);
        let g = s.map(|t| 2.0 / t, true);
        assert_eq!(g.min, 2.0 / 1.2);
        assert_eq!(g.max, 2.0 / 0.9);
        assert_eq!(g.median, 2.0);
    }
}
