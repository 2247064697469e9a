// FP32 matmul C = A * B (row-major), "subgroup" kernel for adapters with a fixed subgroup
// size SG (a CPU rasteriser's SIMD width, a GPU's wave): no workgroup memory.
// Each invocation accumulates TM rows x TN4 vec4 column groups. The TM rows are shared by the
// whole subgroup: lane s loads rows s, s + SG, ... as vec4 along K, and every row value then
// reaches all lanes through subgroupBroadcast, so one load of A serves SG * 4 multiply-adds
// per lane instead of 4. (On a SIMD CPU rasteriser each lane's buffer load is issued
// separately, so loads, not arithmetic, set the speed.)
// The host prepends `const TM`, `const TN4`, `const SG` and expands the `//@` lines into
// straight-line code; M, N, K are padded to tile multiples, so every index is in range.
// A arrives packed in row panels TM rows high (pack_panels.wgsl), so the K loop reads it
// contiguously; B is read from an rgba32float texture, texel (n4, k) (pack_texture.wgsl):
// on a CPU rasteriser a texel fetch is a vectorised gather, cheaper than a buffer load.
// Tile: TM rows x 4*TN4*WG columns, K step 4.

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var b: texture_2d<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: Dims;

override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(subgroup_invocation_id) sid: u32,
) {
    let n4 = dims.n / 4u;
    let k4 = dims.k / 4u;
    let row0 = wid.y * TM;
    let col4 = wid.x * (WG * TN4) + lid.x;
    // This workgroup's panel of packed A: K/4 steps of TM row vec4s.
    let apanel = wid.y * k4 * TM + sid;
    //@ACC_DECL  var acc_{m}_{j} = vec4<f32>(0.0);
    // k_stop equals k; tests lower it to build a deliberately wrong kernel.
    let kb_end = dims.k_stop / 4u;
    for (var kb = 0u; kb < kb_end; kb++) {
        //@A_LOAD_SG  let av_{r} = a[apanel + kb * TM + {r}u * SG];
        //@B_LOAD_ALL let b_{kk}_{j} = textureLoad(b, vec2<u32>(col4 + {j}u * WG, kb * 4u + {kk}u), 0);
        //@BCAST  {
        //@BCAST      let am = subgroupBroadcast(av_{r}, {s}u);
        //@FMA_SG     acc_{m}_{j} = fma(vec4<f32>(am.{lane}), b_{kk}_{j}, acc_{m}_{j});
        //@BCAST  }
    }
    //@STORE  c[(row0 + {m}u) * n4 + col4 + {j}u * WG] = acc_{m}_{j};
}
