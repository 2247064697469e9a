// FP32 arithmetic peak: every invocation runs CHAINS independent multiply-add chains (so the
// hardware can overlap them), UNROLL steps per loop trip (so the loop costs little), for
// `params.trips` trips; nothing is loaded inside the loop. The coefficients come from a
// uniform, so the compiler cannot fold the chain: x <- x * a + b with a = -1 and b = 0.75
// keeps every value a short dyadic fraction, so each step is exact whether or not `fma` is
// fused, and the host can check every invocation's result exactly.

struct Params { a: f32, b: f32, trips: u32, count: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> seed: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * WG + gid.x;
    if (i >= params.count) {
        return;
    }
    let a = params.a;
    let b = params.b;
    let s = seed[i];
    var x0 = s;
    var x1 = s + 1.0;
    var x2 = s + 2.0;
    var x3 = s + 3.0;
    var x4 = s + 4.0;
    var x5 = s + 5.0;
    var x6 = s + 6.0;
    var x7 = s + 7.0;
    for (var t = 0u; t < params.trips; t++) {
        //@UNROLL x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b); x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
    }
    out[i] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
