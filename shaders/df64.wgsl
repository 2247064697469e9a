// Double-float ("df64") arithmetic: a value is the unevaluated sum hi + lo of two f32 with
// |lo| <= ulp(hi) / 2, about 48 significant bits. Functions work on vec4 lanes (four
// independent values). u = 2^-24 below.
//
// WGSL lets compilers reassociate, contract and flush, which breaks these algorithms, so:
// - `guard.one` is 1.0 read from a uniform buffer at run time; multiplying intermediate sums
//   by it stops a compiler from folding (a + b) - a into b (Mesa does, otherwise). An
//   `override` or literal 1.0 would be folded away.
// - `guard.splitter` (4097 = 2^12 + 1) is read at run time for the same reason.
// - The product is FMA-based only where the adapter's self-test showed a fused fma
//   (USE_FMA); otherwise Dekker's split product, which needs no FMA.

struct Guard { one: f32, splitter: f32, pad0: f32, pad1: f32 }
@group(0) @binding(7) var<uniform> guard: Guard;

override USE_FMA: bool = false;

struct DF { hi: vec4<f32>, lo: vec4<f32> }

// Knuth's TwoSum: s + e == a + b exactly, for any magnitudes (6 operations).
fn two_sum(a: vec4<f32>, b: vec4<f32>) -> DF {
    let s = (a + b) * guard.one;
    let bb = (s - a) * guard.one;
    let e = (a - (s - bb)) + (b - bb);
    return DF(s, e);
}

// Dekker's FastTwoSum: s + e == a + b exactly when |a| >= |b| (3 operations).
fn fast_two_sum(a: vec4<f32>, b: vec4<f32>) -> DF {
    let s = (a + b) * guard.one;
    let e = b - (s - a);
    return DF(s, e);
}

// Veltkamp's split: a == hi + lo exactly, hi holding at most 12 significant bits. Valid for
// |a| < 2^115 (4097 * a must not overflow): df64 covers about 2^-100..2^115, not all of f32.
fn split(a: vec4<f32>) -> DF {
    let c = guard.splitter * a;
    let t = (c - a) * guard.one;
    let hi = c - t;
    return DF(hi, a - hi);
}

// Dekker's TwoProduct with Veltkamp splits: p + e == a * b exactly, no FMA (17 operations).
fn two_prod_split(a: vec4<f32>, b: vec4<f32>) -> DF {
    let p = a * b;
    let x = split(a);
    let y = split(b);
    let e = ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo;
    return DF(p, e);
}

// TwoProduct with the operands' splits given (x = split(a), y = split(b)), for kernels that
// reuse one split across many products; FMA-based where the adapter's fma is fused.
fn two_prod_presplit(a: vec4<f32>, b: vec4<f32>, x: DF, y: DF) -> DF {
    if (USE_FMA) {
        return two_prod_fma(a, b);
    }
    let p = a * b;
    let e = ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo;
    return DF(p, e);
}

// TwoProduct with a fused multiply-add: p + e == a * b exactly where fma rounds once.
fn two_prod_fma(a: vec4<f32>, b: vec4<f32>) -> DF {
    let p = a * b;
    return DF(p, fma(a, b, -p));
}

fn two_prod(a: vec4<f32>, b: vec4<f32>) -> DF {
    if (USE_FMA) {
        return two_prod_fma(a, b);
    }
    return two_prod_split(a, b);
}

// Accurate double-float addition (TwoSum on both parts, two renormalisations): relative
// error at most about 3u^2 (Joldes, Muller, Popescu 2017, "AccurateDWPlusDW").
fn df_add(a: DF, b: DF) -> DF {
    let s = two_sum(a.hi, b.hi);
    let t = two_sum(a.lo, b.lo);
    let u = fast_two_sum(s.hi, s.lo + t.hi);
    return fast_two_sum(u.hi, u.lo + t.lo);
}

// Double-float product (DWTimesDW1: no FMA in the cross terms): relative error at most 7u^2
// (Joldes, Muller, Popescu 2017); about 4u^2 is typical, 4.06u^2 was seen.
fn df_mul(a: DF, b: DF) -> DF {
    let p = two_prod(a.hi, b.hi);
    let e = p.lo + (a.hi * b.lo + a.lo * b.hi);
    return fast_two_sum(p.hi, e);
}

// "Sloppy" double-float addition (one TwoSum, one renormalisation; 11 operations): error
// at most about 2u^2 relative to |a| + |b| rather than |a + b|, so it loses accuracy only
// where a and b cancel. Accumulating a dot product this way keeps the error relative to the
// sum of |terms|, which is what a matmul's error bound is stated against anyway.
fn df_add_sloppy(a: DF, b: DF) -> DF {
    let s = two_sum(a.hi, b.hi);
    return fast_two_sum(s.hi, s.lo + (a.lo + b.lo));
}

// acc + a * b for a matmul's inner loop, with x = split(a.hi) and y = split(b.hi) given (a
// kernel reuses each split across many products). The product's error term and cross terms
// are not renormalised into a double-float first (fast_two_sum, 4 of about 31 operations):
// the sloppy sum adds the low parts in f32 anyway, so the value in the low part may be up to
// about 2 ulp(hi) instead of 1/2, which changes its rounding only at the u^2 level. Measured
// on llvmpipe: the same error (1.8e-14 at 512^3), about 20% faster.
fn df_madd_presplit(a: DF, x: DF, b: DF, y: DF, acc: DF) -> DF {
    let p = two_prod_presplit(a.hi, b.hi, x, y);
    let e = p.lo + (a.hi * b.lo + a.lo * b.hi);
    return df_add_sloppy(DF(p.hi, e), acc);
}

// a * b + c in double-float: the product, then an accurate sum.
fn df_fma(a: DF, b: DF, c: DF) -> DF {
    return df_add(df_mul(a, b), c);
}
