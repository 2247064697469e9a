// Panel packing for matmul inputs. It runs inside the timed matmul, so timings still start
// from row-major inputs.

struct PackDims { k: u32, n4: u32, pw4: u32, groups_x: u32 }

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> d: PackDims;

// Repacks a row-major M x K matrix (vec4 along K) into row panels of PH rows, K-step major:
// dst[(p * K4 + kb) * PH + r] = src[(p * PH + r) * K4 + kb], so the rows a matmul tile needs
// at one K step sit side by side (neighbouring lanes read neighbouring addresses, and the K
// loop walks each panel contiguously). Fields of `d`: k = K4, n4 unused, pw4 = PH.
@compute @workgroup_size(256)
fn pack_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * d.groups_x + wid.x) * 256u + lid;
    let total = arrayLength(&src);
    if (i >= total) {
        return;
    }
    let r = i % d.pw4;
    let t = i / d.pw4;
    let kb = t % d.k;
    let p = t / d.k;
    dst[i] = src[(p * d.pw4 + r) * d.k + kb];
}
