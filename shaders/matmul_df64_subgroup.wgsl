// Matmul in double-float, "subgroup" variant: the arithmetic of matmul_df64.wgsl
// (df_madd_presplit), but A reaches the lanes through subgroup broadcasts instead of one load
// per row and k step in every lane. Lane s of each subgroup loads rows (s % 8) + 8r of the
// workgroup's TM rows as vec4s along K (hi and lo planes), TM / 8 pairs of vec4 loads per
// 4 k steps; each row value then reaches all lanes with subgroupBroadcast from the lane that
// loaded it. The plain kernel loads 2 scalars per row and k step in every lane instead; on a
// CPU rasteriser, whose lanes issue buffer loads one by one, those loads set the speed.
// Needs subgroups of at least 8 invocations whose lanes 0-7 are all active: any size >= 8
// that divides the workgroup (64) or exceeds it; lanes past 8 load copies. The host checks
// this (`df64_subgroups`) before building the kernel.
// The host prepends `const TM` (a multiple of 8) and the df64 library, expands the `//@`
// lines (a broadcast's lane must be a constant, so rows are written out), and pads M to TM,
// N to 4 * WG and K to 4 (zeros are exact in df64).
// The 4 k steps stay a loop: written out as straight-line code, llvmpipe (Mesa 22.3) lost
// the low parts of the sums (relative error 1.2e-7 at 8x256x64, where the plain kernel has
// 6.6e-15; cause not found, see the performance log), which the probe's validation caught.

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a_hi: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> a_lo: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b_hi: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> b_lo: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> c_hi: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> c_lo: array<vec4<f32>>;
@group(0) @binding(6) var<uniform> dims: Dims;

override WG: u32 = 64u;

// acc + (a_hi + a_lo) * b for one broadcast row value; bs = split(b.hi).
fn madd(a_hi: f32, a_lo: f32, b: DF, bs: DF, acc: DF) -> DF {
    let a = DF(vec4<f32>(a_hi), vec4<f32>(a_lo));
    return df_madd_presplit(a, split(a.hi), b, bs, acc);
}

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(subgroup_invocation_id) sid: u32,
) {
    let n4 = dims.n / 4u;
    let k4 = dims.k / 4u;
    let row0 = wid.y * TM;
    let col4 = wid.x * WG + lid.x;
    // This lane's first row of A to load (then every 8th).
    let arow = (row0 + sid % 8u) * k4;
    //@ACC_DECL  var acc_{m} = DF(vec4<f32>(0.0), vec4<f32>(0.0));
    let kb_end = dims.k_stop / 4u;
    for (var kb = 0u; kb < kb_end; kb++) {
        //@A_LOAD  let ah_{r} = a_hi[arow + {r}u * 8u * k4 + kb];
        //@A_LOAD  let al_{r} = a_lo[arow + {r}u * 8u * k4 + kb];
        for (var kk = 0u; kk < 4u; kk++) {
            let bi = (kb * 4u + kk) * n4 + col4;
            let b = DF(b_hi[bi], b_lo[bi]);
            // B's split serves all TM rows (unused where the product is FMA-based).
            let bs = split(b.hi);
            //@MADD  acc_{m} = madd(subgroupBroadcast(ah_{r}[kk], {s}u),
            //@MADD      subgroupBroadcast(al_{r}[kk], {s}u), b, bs, acc_{m});
        }
    }
    //@STORE  c_hi[(row0 + {m}u) * n4 + col4] = acc_{m}.hi;
    //@STORE  c_lo[(row0 + {m}u) * n4 + col4] = acc_{m}.lo;
}
