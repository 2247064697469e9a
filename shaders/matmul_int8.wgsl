// Int8 matrix multiply with 32-bit sums through the packed dot product `dot4I8Packed`
// (core WGSL; SPIR-V OpSDot where the device has integer dot products, an emulation
// elsewhere). A is M x K and B^T is N x K, both row-major with four signed bytes per u32
// along K; C is M x N i32. Each invocation computes a TM x 4 block of C.
//
// The host pads M to a multiple of TM * WG and N to a multiple of 4 * 8 and K to a
// multiple of 4, and sizes the dispatch to the padded matrix: every index is in range.
// TM: rows per invocation, a const of the builder (loops of fixed trip count).

struct Dims { m: u32, n: u32, k4: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> bt: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@group(0) @binding(3) var<uniform> dims: Dims;

override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col0 = gid.y * 4u;
    let row0 = gid.x * TM;
    var acc: array<vec4<i32>, TM>;
    for (var kw = 0u; kw < dims.k4; kw++) {
        let b = vec4<u32>(
            bt[(col0 + 0u) * dims.k4 + kw],
            bt[(col0 + 1u) * dims.k4 + kw],
            bt[(col0 + 2u) * dims.k4 + kw],
            bt[(col0 + 3u) * dims.k4 + kw],
        );
        for (var r = 0u; r < TM; r++) {
            let aw = a[(row0 + r) * dims.k4 + kw];
            acc[r] += vec4<i32>(
                dot4I8Packed(aw, b.x),
                dot4I8Packed(aw, b.y),
                dot4I8Packed(aw, b.z),
                dot4I8Packed(aw, b.w),
            );
        }
    }
    for (var r = 0u; r < TM; r++) {
        let o = (row0 + r) * dims.n + col0;
        c[o] = acc[r].x;
        c[o + 1u] = acc[r].y;
        c[o + 2u] = acc[r].z;
        c[o + 3u] = acc[r].w;
    }
}
