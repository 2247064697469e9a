// The memory hierarchy, as shaders/hierarchy.wgsl: `sweep` reads the first mask + 1 uint4
// elements of `data` cyclically across the grid (invocation i reads (i + j * S) & mask),
// each work-item writing the wrapping sum of what it read; `chase` follows a random single
// cycle over the working set's 64-byte slots for `steps` dependent loads.

__kernel void sweep(__global const uint4* data, __global uint* out, uint mask, uint steps) {
    uint s = (uint)get_global_size(0);
    uint idx = (uint)get_global_id(0);
    uint4 acc = (uint4)(0u);
    for (uint j = 0; j < steps; j++) {
        acc += data[idx & mask];
        idx += s;
    }
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}

__kernel void chase(__global const uint* chain, __global uint* out, uint start, uint steps) {
    uint at = start;
    // 32 loads an iteration, as the WGSL kernel (lavapipe caps an invocation's iterations).
    for (uint j = 0; j < steps / 32u; j++) {
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
    }
    out[0] = at;
}
