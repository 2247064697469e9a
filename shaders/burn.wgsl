// gpuvalue burn: the exact check of the sustained load, and the VRAM test's two kernels.
//
// check:   compares every element of C (row-major, leading dimension `ld`) with the CPU's
//          reference bit for bit (the inputs are small integers, so every sum is exact in
//          any order; -0 reads as +0), counting miscompares and non-finite elements.
// corrupt: fault injection: changes one element of C (the check must count it).
// vram_write / vram_verify: every 32-bit word of a window holds a pattern derived from its
//          own address, the window and the pass (inverted on odd passes, so each bit is
//          written both ways); verify reads the window's blocks in a shuffled order (block
//          g -> (g * stride + offset) mod blocks, stride coprime with blocks) and counts bad
//          words, the lowest and highest bad word, and the flipped bits by position.

struct CheckDims {
    m: u32,
    n: u32,
    ld: u32,
    groups_x: u32,
    corrupt_at: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<storage, read_write> c: array<f32>;
@group(0) @binding(1) var<storage, read> want: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>, 2>;
@group(0) @binding(3) var<uniform> dims: CheckDims;

fn canonical(bits: u32) -> u32 {
    return select(bits, 0u, bits == 0x80000000u);
}

@compute @workgroup_size(256)
fn check(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x + g.y * dims.groups_x * 256u;
    if (i >= dims.m * dims.n) {
        return;
    }
    let row = i / dims.n;
    let col = i - row * dims.n;
    let bits = bitcast<u32>(c[row * dims.ld + col]);
    if (canonical(bits) != want[i]) {
        atomicAdd(&counts[0], 1u);
    }
    if ((bits & 0x7f800000u) == 0x7f800000u) {
        atomicAdd(&counts[1], 1u);
    }
}

@compute @workgroup_size(1)
fn corrupt() {
    let i = dims.corrupt_at;
    c[i] = c[i] + 1.0;
}
