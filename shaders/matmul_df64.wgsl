// Matmul in double-float: C = A * B with every element a (hi, lo) pair of f32 planes and
// df64 accumulation (df_madd_presplit: sloppy sum, see df64.wgsl). Each invocation computes
// TM rows x 4 columns (one vec4 of each plane); the workgroup shares its rows, so A is read once per
// row and k for all lanes. The host prepends `const TM` and pads M, N, K to tile multiples
// (zeros are exact in df64).
// Needs df64.wgsl (prepended by the host).

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a_hi: array<f32>;
@group(0) @binding(1) var<storage, read> a_lo: array<f32>;
@group(0) @binding(2) var<storage, read> b_hi: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> b_lo: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> c_hi: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> c_lo: array<vec4<f32>>;
@group(0) @binding(6) var<uniform> dims: Dims;

override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let n4 = dims.n / 4u;
    let row0 = wid.y * TM;
    let col4 = wid.x * WG + lid.x;
    var acc: array<DF, TM>;
    for (var k = 0u; k < dims.k_stop; k++) {
        let b = DF(b_hi[k * n4 + col4], b_lo[k * n4 + col4]);
        // B's split serves all TM rows (unused where the product is FMA-based).
        let bs = split(b.hi);
        for (var m = 0u; m < TM; m++) {
            let ai = (row0 + m) * dims.k + k;
            let a = DF(vec4<f32>(a_hi[ai]), vec4<f32>(a_lo[ai]));
            // The product with B's split reused, then the sloppy sum (see df64.wgsl).
            acc[m] = df_madd_presplit(a, split(a.hi), b, bs, acc[m]);
        }
    }
    for (var m = 0u; m < TM; m++) {
        c_hi[(row0 + m) * n4 + col4] = acc[m].hi;
        c_lo[(row0 + m) * n4 + col4] = acc[m].lo;
    }
}
