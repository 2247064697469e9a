//! CPU references used to validate every probe, and the random inputs they share.

/// SplitMix64: small, fast, reproducible; good enough for benchmark inputs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// A seed from the clock, so that every validation sees fresh data.
    pub fn fresh() -> Rng {
        // Zero before the epoch: the generator still gets a valid seed.
        Rng::new((crate::clock::since_epoch().as_nanos() as u64).max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn signed_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
    }

    pub fn fill_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.signed_unit() as f32).collect()
    }
}

/// Matrix dimensions: C (m x n) = A (m x k) * B (k x n), all row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

/// `MxNxK`, as `--sizes` takes it and the results file records it.
impl std::fmt::Display for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// Outcome of checking a GPU matmul against the CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct MatmulCheck {
    /// ||C_gpu - C_ref||_F / ||C_ref||_F over the rows checked exactly.
    pub rel_frobenius: f64,
    pub rows_checked: usize,
    /// Freivalds' test over the whole matrix: ||C x - A (B x)|| / ||A (B x)|| for a random x.
    /// Catches any wrong or unwritten element, also in rows not checked exactly.
    pub freivalds: f64,
    /// Number of non-finite elements in C (unwritten poison shows up here).
    pub non_finite: usize,
}

impl MatmulCheck {
    pub fn worst(&self) -> f64 {
        if self.non_finite > 0 {
            f64::INFINITY
        } else {
            self.rel_frobenius.max(self.freivalds)
        }
    }
}

/// Work budget for the exact row check (multiply-adds); beyond it rows are sampled evenly.
const EXACT_CHECK_BUDGET: usize = 1 << 27;

/// Relative Frobenius error of a product `got` (row-major, row stride `ld`) over the rows
/// [`rows_to_check`] picks within a budget of 2^26 multiply-adds: sqrt(sum (g - want)^2 /
/// sum want^2), with `want(row, col)` the exact entry (in f64). Infinite at the first
/// non-finite element. Returns the error and the number of rows checked.
pub fn relative_frobenius<G: Copy + Into<f64>>(
    d: Dims,
    ld: usize,
    got: &[G],
    want: impl Fn(usize, usize) -> f64,
) -> (f64, usize) {
    let rows = rows_to_check(d, 1 << 26);
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for &r in &rows {
        for col in 0..d.n {
            let w = want(r, col);
            let g: f64 = got[r * ld + col].into();
            if !g.is_finite() {
                return (f64::INFINITY, rows.len());
            }
            num += (g - w).powi(2);
            den += w * w;
        }
    }
    ((num / den.max(f64::MIN_POSITIVE)).sqrt(), rows.len())
}

/// The rows of an m x n x k product to check exactly within `budget` multiply-adds: all of
/// them when affordable, else evenly spaced ones, always with the first and last (tile
/// edges live there).
pub fn rows_to_check(d: Dims, budget: usize) -> Vec<usize> {
    let max_rows = (budget / (d.n * d.k).max(1)).clamp(1, d.m.max(1));
    if max_rows >= d.m {
        return (0..d.m).collect();
    }
    let mut r: Vec<usize> = (0..max_rows)
        .map(|t| t * (d.m - 1) / (max_rows - 1).max(1))
        .collect();
    r.dedup();
    r
}

/// Checks `c` (m x n) against A * B computed in f64 on the CPU.
/// A row-major matrix view with a leading dimension (the GPU may use padded matrices).
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub data: &'a [f32],
    pub ld: usize,
}

pub fn check_matmul(d: Dims, a: View<'_>, b: View<'_>, c: View<'_>, rng: &mut Rng) -> MatmulCheck {
    let (a, lda, b, ldb, c, ldc) = (a.data, a.ld, b.data, b.ld, c.data, c.ld);
    let mut non_finite = 0usize;
    for i in 0..d.m {
        non_finite += c[i * ldc..i * ldc + d.n]
            .iter()
            .filter(|x| !x.is_finite())
            .count();
    }
    let rows = rows_to_check(d, EXACT_CHECK_BUDGET);
    let mut err2 = 0.0f64;
    let mut ref2 = 0.0f64;
    let mut acc = vec![0.0f64; d.n];
    for &i in &rows {
        acc.iter_mut().for_each(|x| *x = 0.0);
        for kk in 0..d.k {
            let aik = f64::from(a[i * lda + kk]);
            let brow = &b[kk * ldb..kk * ldb + d.n];
            for (x, &bv) in acc.iter_mut().zip(brow) {
                *x += aik * f64::from(bv);
            }
        }
        for j in 0..d.n {
            let diff = f64::from(c[i * ldc + j]) - acc[j];
            err2 += diff * diff;
            ref2 += acc[j] * acc[j];
        }
    }
    let rel_frobenius = if ref2 > 0.0 {
        (err2 / ref2).sqrt()
    } else {
        err2.sqrt()
    };
    // Freivalds: y = B x, z = A y, w = C x.
    let x: Vec<f64> = (0..d.n).map(|_| rng.signed_unit()).collect();
    let y: Vec<f64> = (0..d.k)
        .map(|kk| {
            b[kk * ldb..kk * ldb + d.n]
                .iter()
                .zip(&x)
                .map(|(&bv, &xv)| f64::from(bv) * xv)
                .sum()
        })
        .collect();
    let mut num = 0.0;
    let mut den = 0.0;
    for i in 0..d.m {
        let z: f64 = a[i * lda..i * lda + d.k]
            .iter()
            .zip(&y)
            .map(|(&av, &yv)| f64::from(av) * yv)
            .sum();
        let w: f64 = c[i * ldc..i * ldc + d.n]
            .iter()
            .zip(&x)
            .map(|(&cv, &xv)| f64::from(cv) * xv)
            .sum();
        num += (w - z) * (w - z);
        den += z * z;
    }
    let freivalds = if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    };
    MatmulCheck {
        rel_frobenius,
        rows_checked: rows.len(),
        freivalds: if freivalds.is_nan() {
            f64::INFINITY
        } else {
            freivalds
        },
        non_finite,
    }
}

/// Largest relative element error between `got` and `want` (absolute where `want` is 0);
/// non-finite values count as infinite error.
pub fn max_rel_error(got: &[f32], want: &[f32]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            if !g.is_finite() {
                return f64::INFINITY;
            }
            let d = (f64::from(g) - f64::from(w)).abs();
            if w == 0.0 { d } else { d / f64::from(w).abs() }
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(data: &[f32], ld: usize) -> View<'_> {
        View { data, ld }
    }

    fn naive(d: Dims, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut c = vec![0.0f32; d.m * d.n];
        for i in 0..d.m {
            for j in 0..d.n {
                let mut s = 0.0f64;
                for k in 0..d.k {
                    s += f64::from(a[i * d.k + k]) * f64::from(b[k * d.n + j]);
                }
                c[i * d.n + j] = s as f32;
            }
        }
        c
    }

    #[test]
    fn correct_product_passes_and_a_wrong_element_fails() {
        let d = Dims {
            m: 37,
            n: 29,
            k: 41,
        };
        let mut rng = Rng::new(7);
        let a = rng.fill_f32(d.m * d.k);
        let b = rng.fill_f32(d.k * d.n);
        let mut c = naive(d, &a, &b);
        let ok = check_matmul(d, v(&a, d.k), v(&b, d.n), v(&c, d.n), &mut rng);
        assert!(ok.worst() < 1e-6, "{ok:?}");
        c[17 * d.n + 3] += 0.5;
        let bad = check_matmul(d, v(&a, d.k), v(&b, d.n), v(&c, d.n), &mut rng);
        assert!(bad.worst() > 1e-3, "{bad:?}");
        c[17 * d.n + 3] = f32::NAN;
        let nan = check_matmul(d, v(&a, d.k), v(&b, d.n), v(&c, d.n), &mut rng);
        assert_eq!(nan.non_finite, 1);
        assert!(nan.worst().is_infinite());
    }

    #[test]
    fn rng_is_uniform_enough() {
        let mut r = Rng::new(1);
        let xs: Vec<f64> = (0..10000).map(|_| r.signed_unit()).collect();
        assert!(xs.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.05);
    }
}
