// Matmul in one storage type with one accumulation type, for the precisions WGSL has
// natively: f64 throughout (SHADER_F64), or f16 inputs with f32 products and sums
// (SHADER_F16; f16 products are exact in f32). The host prepends `enable f16;` where
// needed, `alias In = ...; alias Acc = ...;` and `const TM`, and pads M, N to tile
// multiples. Each invocation computes TM rows x 4 columns, rows shared by the workgroup.
// Multiply and add are written apart: an unfused fma on some drivers rounds twice anyway.

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a: array<In>;
@group(0) @binding(1) var<storage, read> b: array<vec4<In>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<Acc>>;
@group(0) @binding(3) var<uniform> dims: Dims;

override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let n4 = dims.n / 4u;
    let row0 = wid.y * TM;
    let col4 = wid.x * WG + lid.x;
    var acc: array<vec4<Acc>, TM>;
    for (var k = 0u; k < dims.k_stop; k++) {
        let bv = vec4<Acc>(b[k * n4 + col4]);
        for (var m = 0u; m < TM; m++) {
            acc[m] = acc[m] + vec4<Acc>(Acc(a[(row0 + m) * dims.k + k])) * bv;
        }
    }
    for (var m = 0u; m < TM; m++) {
        c[(row0 + m) * n4 + col4] = acc[m];
    }
}
