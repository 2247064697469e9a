// FP32 matmul C = A * B (row-major), "rows" kernel: no workgroup memory.
// Each invocation accumulates TM rows x TN4 vec4 column groups in registers. All invocations
// of a workgroup share the same TM rows, so their loads of A are uniform across the workgroup
// (one load serves every lane on a SIMD CPU rasteriser); B is read as vec4, one column group
// per lane, TN4 groups interleaved by WG so neighbouring lanes read neighbouring addresses.
// The host prepends `const TM` and `const TN4` (register block: private arrays need constant
// sizes) and pads M, N, K to tile multiples, so every index below is in range.
// Tile: BM = TM rows, BN = 4 * TN4 * WG columns; the K loop steps 4 (one vec4 of A).

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: Dims;

override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let n4 = dims.n / 4u;
    let k4 = dims.k / 4u;
    let row0 = wid.y * TM;
    let col4 = wid.x * (WG * TN4) + lid.x;
    var acc: array<array<vec4<f32>, TN4>, TM>;
    // k_stop equals k; tests lower it to build a deliberately wrong kernel.
    let kb_end = dims.k_stop / 4u;
    for (var kb = 0u; kb < kb_end; kb++) {
        var av: array<vec4<f32>, TM>;
        for (var m = 0u; m < TM; m++) {
            av[m] = a[(row0 + m) * k4 + kb];
        }
        for (var kk = 0u; kk < 4u; kk++) {
            let brow = (kb * 4u + kk) * n4 + col4;
            for (var j = 0u; j < TN4; j++) {
                let bv = b[brow + j * WG];
                for (var m = 0u; m < TM; m++) {
                    acc[m][j] = fma(vec4<f32>(av[m][kk]), bv, acc[m][j]);
                }
            }
        }
    }
    for (var m = 0u; m < TM; m++) {
        for (var j = 0u; j < TN4; j++) {
            c[(row0 + m) * n4 + col4 + j * WG] = acc[m][j];
        }
    }
}
