// gpuvalue burn's VRAM test (see burn.wgsl's header): address-derived patterns, shuffled
// block order, counts of bad words, their range and the flipped bits by position.

struct VramParams {
    words: u32,
    window: u32,
    pass_: u32,
    blocks: u32,
    stride: u32,
    offset: u32,
    groups_x: u32,
    _p0: u32,
}

const WG: u32 = 256u;
const PER_THREAD: u32 = 64u;

@group(0) @binding(0) var<storage, read_write> mem: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<atomic<u32>, 35>;
@group(0) @binding(2) var<uniform> p: VramParams;

// The word every address holds: a mix of the word index, the window and the pass (the
// host's `burn::vram::pattern` computes the same).
fn pattern(i: u32) -> u32 {
    var x = (i * 0x9E3779B1u) ^ (p.window * 0x85EBCA77u) ^ (p.pass_ * 0xC2B2AE3Du);
    x = x ^ (x >> 15u);
    x = x * 0x2C1B3C6Du;
    x = x ^ (x >> 12u);
    x = x * 0x297A2D39u;
    x = x ^ (x >> 15u);
    return select(x, ~x, (p.pass_ & 1u) == 1u);
}

@compute @workgroup_size(256)
fn vram_write(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let b = wg.x + wg.y * p.groups_x;
    if (b >= p.blocks) {
        return;
    }
    let base = b * WG * PER_THREAD;
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = base + j * WG + l;
        if (i < p.words) {
            mem[i] = pattern(i);
        }
    }
}

@compute @workgroup_size(256)
fn vram_verify(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    let g = wg.x + wg.y * p.groups_x;
    if (g >= p.blocks) {
        return;
    }
    let b = (g * p.stride + p.offset) % p.blocks;
    let base = b * WG * PER_THREAD;
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let i = base + j * WG + l;
        if (i < p.words) {
            let d = mem[i] ^ pattern(i);
            if (d != 0u) {
                atomicAdd(&out[0], 1u);
                atomicMin(&out[1], i);
                atomicMax(&out[2], i);
                for (var bit = 0u; bit < 32u; bit = bit + 1u) {
                    if (((d >> bit) & 1u) == 1u) {
                        atomicAdd(&out[3u + bit], 1u);
                    }
                }
            }
        }
    }
}
