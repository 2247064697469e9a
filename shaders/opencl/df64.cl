// Double-float ("df64") arithmetic, as shaders/df64.wgsl: a value is hi + lo, two floats,
// about 48 significant bits; REAL is float (the matmul) or float4 (the self-test's four
// lanes). OpenCL C forbids reassociation and, with FP_CONTRACT OFF, contraction; its fma
// must round once on a full profile. The self-test checks all of that on the device
// anyway, and the product is FMA-based only where it showed a fused fma (-D USE_FMA=1).
#pragma OPENCL FP_CONTRACT OFF
#ifndef REAL
#define REAL float
#endif
#ifndef USE_FMA
#define USE_FMA 0
#endif
typedef struct { REAL hi; REAL lo; } DF;

DF mk(REAL hi, REAL lo) { DF r; r.hi = hi; r.lo = lo; return r; }

// Knuth's TwoSum: s + e == a + b exactly.
DF two_sum(REAL a, REAL b) {
    REAL s = a + b;
    REAL bb = s - a;
    return mk(s, (a - (s - bb)) + (b - bb));
}

// Dekker's FastTwoSum: exact when |a| >= |b|.
DF fast_two_sum(REAL a, REAL b) {
    REAL s = a + b;
    return mk(s, b - (s - a));
}

// Veltkamp's split: hi keeps at most 12 significant bits.
DF split(REAL a) {
    REAL c = 4097.0f * a;
    REAL hi = c - (c - a);
    return mk(hi, a - hi);
}

DF two_prod_split(REAL a, REAL b) {
    REAL p = a * b;
    DF x = split(a), y = split(b);
    return mk(p, ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo);
}

DF two_prod_fma(REAL a, REAL b) {
    REAL p = a * b;
    return mk(p, fma(a, b, -p));
}

DF two_prod(REAL a, REAL b) {
#if USE_FMA
    return two_prod_fma(a, b);
#else
    return two_prod_split(a, b);
#endif
}

// Accurate double-float addition (about 3u^2).
DF df_add(DF a, DF b) {
    DF s = two_sum(a.hi, b.hi);
    DF t = two_sum(a.lo, b.lo);
    DF u = fast_two_sum(s.hi, s.lo + t.hi);
    return fast_two_sum(u.hi, u.lo + t.lo);
}

// Double-float product (DWTimesDW1: at most 7u^2, Joldes, Muller, Popescu 2017).
DF df_mul(DF a, DF b) {
    DF p = two_prod(a.hi, b.hi);
    return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

// Sloppy addition (error relative to |a| + |b|), for a dot product's running sum.
DF df_add_sloppy(DF a, DF b) {
    DF s = two_sum(a.hi, b.hi);
    return fast_two_sum(s.hi, s.lo + (a.lo + b.lo));
}

// acc + a * b, the product's terms summed unrenormalised (as df_madd_presplit in WGSL).
DF df_madd(DF a, DF b, DF acc) {
    DF p = two_prod(a.hi, b.hi);
    return df_add_sloppy(mk(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi)), acc);
}

#ifdef SELF_TEST
// The self-test, with the input and output layout of shaders/df64_selftest.wgsl (14 float4
// results from 12 float4 inputs), so the host judges both executors with one function.
__kernel void self_test(__global const float4 *inp, __global float4 *outp) {
    DF ts = two_sum(inp[0], inp[1]);
    outp[0] = ts.hi;
    outp[1] = ts.lo;
    outp[2] = fma(inp[2], inp[2], inp[3]);
    DF sp = split(inp[4]);
    outp[3] = sp.hi;
    outp[4] = sp.lo;
    outp[5] = inp[5] * inp[0];
    DF p = two_prod(inp[6], inp[7]);
    outp[6] = p.hi;
    outp[7] = p.lo;
    DF q = two_prod_split(inp[6], inp[7]);
    outp[8] = q.hi;
    outp[9] = q.lo;
    DF x = mk(inp[8], inp[9]), y = mk(inp[10], inp[11]);
    DF s = df_add(x, y);
    outp[10] = s.hi;
    outp[11] = s.lo;
    DF m = df_mul(x, y);
    outp[12] = m.hi;
    outp[13] = m.lo;
}
#else
// C = A * B in df64, planes of hi and lo parts, row-major; TM rows of one column per
// work-item. The host pads M to TM and N to the work-group size with zeros.
#ifndef TM
#define TM 4
#endif
__kernel void matmul_df64(const uint M, const uint N, const uint K, __global const float *ah,
                          __global const float *al, __global const float *bh,
                          __global const float *bl, __global float *ch, __global float *cl) {
    const uint j = get_global_id(0);
    const uint i0 = get_global_id(1) * TM;
    DF acc[TM];
    for (uint r = 0; r < TM; r++) acc[r] = mk(0.0f, 0.0f);
    for (uint k = 0; k < K; k++) {
        const DF b = mk(bh[k * N + j], bl[k * N + j]);
        for (uint r = 0; r < TM; r++) {
            const uint ia = (i0 + r) * K + k;
            acc[r] = df_madd(mk(ah[ia], al[ia]), b, acc[r]);
        }
    }
    for (uint r = 0; r < TM; r++) {
        ch[(i0 + r) * N + j] = acc[r].hi;
        cl[(i0 + r) * N + j] = acc[r].lo;
    }
}
#endif
