// STREAM kernels over vec4<f32> arrays (McCalpin's copy, scale, add, triad) and a read-only
// dot product. The host binds windows of large arrays (each within the binding limit) and
// folds the 1-D grid into 2-D (x * y workgroups) to stay within the per-dimension limit.
// Each invocation handles PER_THREAD elements strided by the workgroup size, so neighbouring
// invocations touch neighbouring addresses. The host makes every window a whole number of
// workgroup blocks (WG * PER_THREAD elements) and dispatches exactly that many workgroups
// (no folded grid needs padding then: x * y == groups), so no element test is needed.

struct Params { count: u32, groups_x: u32, scalar: f32, _pad: u32 }

@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 256u;
override PER_THREAD: u32 = 4u;

fn base(wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * (WG * PER_THREAD);
}

@compute @workgroup_size(WG)
fn copy(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i0 = base(wid) + lid;
    for (var t = 0u; t < PER_THREAD; t++) {
        let i = i0 + t * WG;
        c[i] = a[i];
    }
}

@compute @workgroup_size(WG)
fn scale(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i0 = base(wid) + lid;
    for (var t = 0u; t < PER_THREAD; t++) {
        let i = i0 + t * WG;
        b[i] = p.scalar * c[i];
    }
}

@compute @workgroup_size(WG)
fn add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i0 = base(wid) + lid;
    for (var t = 0u; t < PER_THREAD; t++) {
        let i = i0 + t * WG;
        c[i] = a[i] + b[i];
    }
}

@compute @workgroup_size(WG)
fn triad(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i0 = base(wid) + lid;
    for (var t = 0u; t < PER_THREAD; t++) {
        let i = i0 + t * WG;
        a[i] = b[i] + p.scalar * c[i];
    }
}

// Dot product of a and b: each invocation writes the sum of its products (a vec4, one
// lane a column) to c[its index]; the host adds them. No workgroup memory and no barrier: a
// CPU rasteriser (llvmpipe) runs a workgroup's invocations one after another between
// barriers and keeps each one's state, which made a reduction tree the kernel's cost.
@compute @workgroup_size(WG)
fn dot(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i0 = base(wid) + lid;
    var s = vec4<f32>(0.0);
    for (var t = 0u; t < PER_THREAD; t++) {
        let i = i0 + t * WG;
        s += a[i] * b[i];
    }
    c[(wid.y * p.groups_x + wid.x) * WG + lid] = s;
}
