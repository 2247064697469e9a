// FP32 matmul C = A * B (row-major), "rows" kernel: no workgroup memory.
// Each invocation accumulates TM rows x TN4 vec4 column groups in registers. All invocations
// of a workgroup share the same TM rows, so their loads of A are uniform across the workgroup
// (one load serves every lane on a SIMD CPU rasteriser); B is read as vec4, one column group
// per lane, the TN4 groups interleaved by WG so neighbouring lanes read neighbouring addresses.
// The host expands the `//@` lines into straight-line code for the register block (no
// private arrays, so no compiler ever indexes registers dynamically) and pads M, N, K to tile
// multiples, so every index below is in range. Tile: TM rows x 4*TN4*WG columns, K step 4.

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
    //@ACC_DECL  var acc_{m}_{j} = vec4<f32>(0.0);
    // k_stop equals k; tests lower it to build a deliberately wrong kernel.
    let kb_end = dims.k_stop / 4u;
    for (var kb = 0u; kb < kb_end; kb++) {
        //@A_LOAD  let a_{m} = a[(row0 + {m}u) * k4 + kb];
        //@K_STEP  {
        //@K_STEP      let brow = (kb * 4u + {kk}u) * n4 + col4;
        //@B_LOAD      let b_{j} = b[brow + {j}u * WG];
        //@FMA         acc_{m}_{j} = fma(vec4<f32>(a_{m}.{lane}), b_{j}, acc_{m}_{j});
        //@K_STEP  }
    }
    //@STORE  c[(row0 + {m}u) * n4 + col4 + {j}u * WG] = acc_{m}_{j};
}
