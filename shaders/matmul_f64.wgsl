// Matmul in native f64 (adapters with SHADER_F64): each invocation computes TM rows x 4
// columns (a vec4<f64>), rows shared by the workgroup. The host prepends `const TM` and
// pads M, N, K to tile multiples. Multiply and add are written apart: an unfused fma on
// some drivers would round twice anyway, and a fused one is no less accurate.

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a: array<f64>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f64>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f64>>;
@group(0) @binding(3) var<uniform> dims: Dims;

override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let n4 = dims.n / 4u;
    let row0 = wid.y * TM;
    let col4 = wid.x * WG + lid.x;
    var acc: array<vec4<f64>, TM>;
    for (var k = 0u; k < dims.k_stop; k++) {
        let bv = b[k * n4 + col4];
        for (var m = 0u; m < TM; m++) {
            acc[m] = acc[m] + vec4<f64>(a[(row0 + m) * dims.k + k]) * bv;
        }
    }
    for (var m = 0u; m < TM; m++) {
        c[(row0 + m) * n4 + col4] = acc[m];
    }
}
