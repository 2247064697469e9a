// Matmul with f16 inputs and f32 accumulation (adapters with SHADER_F16): A and B are stored
// as f16 (half the bytes of FP32), each product is formed in f32 (exact for f16 operands) and
// summed in f32. Each invocation computes TM rows x 4 columns, rows shared by the workgroup.
// The host prepends `enable f16;` (directives come first) and `const TM`, and pads M, N to
// tile multiples.

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: Dims;

override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let n4 = dims.n / 4u;
    let row0 = wid.y * TM;
    let col4 = wid.x * WG + lid.x;
    var acc: array<vec4<f32>, TM>;
    for (var k = 0u; k < dims.k_stop; k++) {
        let bv = vec4<f32>(b[k * n4 + col4]);
        for (var m = 0u; m < TM; m++) {
            acc[m] = fma(vec4<f32>(f32(a[(row0 + m) * dims.k + k])), bv, acc[m]);
        }
    }
    for (var m = 0u; m < TM; m++) {
        c[(row0 + m) * n4 + col4] = acc[m];
    }
}
