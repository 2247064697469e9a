// Writes a row-major K x N matrix (vec4 columns) into an rgba32float texture, texel (n4, k),
// so a matmul kernel can read B through the texture path. On a CPU rasteriser a texel fetch
// is a vectorised gather, much cheaper than a storage-buffer load, which is issued lane by
// lane. It runs inside the timed matmul, so timings still start from row-major buffers.

struct PackDims { k: u32, n4: u32, unused: u32, groups_x: u32 }

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var dst: texture_storage_2d<rgba32float, write>;
@group(0) @binding(2) var<uniform> d: PackDims;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * d.groups_x + wid.x) * 256u + lid;
    if (i >= d.k * d.n4) {
        return;
    }
    textureStore(dst, vec2<u32>(i % d.n4, i / d.n4), src[i]);
}
