// Tests the df64 building blocks on this adapter, with every input read from a buffer so no
// compiler can evaluate them ahead of time. The host checks each output exactly.
// BROKEN_SUM / BROKEN_PROD build deliberately broken variants (tests only): an unguarded
// TwoSum (a literal 1.0 the compiler can fold) and a plain product in place of TwoProduct.

@group(0) @binding(0) var<storage, read> inp: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> outp: array<vec4<f32>>;

override BROKEN_SUM: bool = false;
override BROKEN_PROD: bool = false;

fn checked_two_sum(a: vec4<f32>, b: vec4<f32>) -> DF {
    if (BROKEN_SUM) {
        let s = a + b;
        let bb = s - a;
        return DF(s, (a - (s - bb)) + (b - bb));
    }
    return two_sum(a, b);
}

fn checked_two_prod(a: vec4<f32>, b: vec4<f32>) -> DF {
    if (BROKEN_PROD) {
        return DF(a * b, vec4<f32>(0.0));
    }
    return two_prod(a, b);
}

@compute @workgroup_size(1)
fn main() {
    // Reassociation: TwoSum(1, 2^-30) must keep 2^-30 as its error term.
    let ts = checked_two_sum(inp[0], inp[1]);
    outp[0] = ts.hi;
    outp[1] = ts.lo;
    // Fused FMA: fma(1+2^-12, 1+2^-12, -(1+2^-11)) = 2^-24 when rounded once, 0 otherwise.
    outp[2] = fma(inp[2], inp[2], inp[3]);
    // Contraction: a Veltkamp split keeps at most 12 significant bits in hi.
    let sp = split(inp[4]);
    outp[3] = sp.hi;
    outp[4] = sp.lo;
    // Flush to zero: a subnormal times 1.0 must survive.
    outp[5] = inp[5] * guard.one;
    // The products the kernels may use, on random operands.
    let p = checked_two_prod(inp[6], inp[7]);
    outp[6] = p.hi;
    outp[7] = p.lo;
    let q = two_prod_split(inp[6], inp[7]);
    outp[8] = q.hi;
    outp[9] = q.lo;
    // Whole operations on random double-floats.
    let x = DF(inp[8], inp[9]);
    let y = DF(inp[10], inp[11]);
    let s = df_add(x, y);
    outp[10] = s.hi;
    outp[11] = s.lo;
    let m = df_mul(x, y);
    outp[12] = m.hi;
    outp[13] = m.lo;
}
