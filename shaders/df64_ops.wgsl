// Applies the df64 building blocks element-wise, for tests against exact CPU arithmetic:
// x = (x_hi, x_lo), y = (y_hi, y_lo) per element; out holds, per element, 8 vec4 rows:
// two_sum(x_hi, y_hi), two_prod_split(x_hi, y_hi), df_add(x, y), df_mul(x, y) (hi, lo each).

@group(0) @binding(0) var<storage, read> x_hi: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> x_lo: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> y_hi: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> y_lo: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> outp: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&x_hi)) {
        return;
    }
    let x = DF(x_hi[i], x_lo[i]);
    let y = DF(y_hi[i], y_lo[i]);
    let s = two_sum(x.hi, y.hi);
    let p = two_prod_split(x.hi, y.hi);
    let a = df_add(x, y);
    let m = df_mul(x, y);
    let o = i * 8u;
    outp[o] = s.hi;
    outp[o + 1u] = s.lo;
    outp[o + 2u] = p.hi;
    outp[o + 3u] = p.lo;
    outp[o + 4u] = a.hi;
    outp[o + 5u] = a.lo;
    outp[o + 6u] = m.hi;
    outp[o + 7u] = m.lo;
}
