// gpuvalue burn on OpenCL: the same exact check, fault switch and VRAM kernels as
// shaders/burn.wgsl and shaders/vram.wgsl (see their headers), in OpenCL C.
#define WG 256u
#define PER_THREAD 64u

uint canonical(uint bits) { return bits == 0x80000000u ? 0u : bits; }

__kernel void check(__global const float *c, __global const uint *want,
                    volatile __global uint *counts, const uint m, const uint n, const uint ld) {
    const uint i = get_global_id(0);
    if (i >= m * n) return;
    const uint row = i / n, col = i - row * n;
    const uint bits = as_uint(c[row * ld + col]);
    if (canonical(bits) != want[i]) atomic_inc(&counts[0]);
    if ((bits & 0x7f800000u) == 0x7f800000u) atomic_inc(&counts[1]);
}

__kernel void corrupt(__global float *c, const uint at) { c[at] = c[at] + 1.0f; }

uint pattern(uint i, uint window, uint pass) {
    uint x = (i * 0x9E3779B1u) ^ (window * 0x85EBCA77u) ^ (pass * 0xC2B2AE3Du);
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    x *= 0x297A2D39u;
    x ^= x >> 15;
    return (pass & 1u) ? ~x : x;
}

__kernel void vram_write(__global uint *mem, const uint words, const uint window,
                         const uint pass) {
    const uint base = get_group_id(0) * WG * PER_THREAD, l = get_local_id(0);
    for (uint j = 0; j < PER_THREAD; j++) {
        const uint i = base + j * WG + l;
        if (i < words) mem[i] = pattern(i, window, pass);
    }
}

__kernel void vram_verify(__global const uint *mem, volatile __global uint *out,
                          const uint words, const uint window, const uint pass,
                          const uint blocks, const uint stride, const uint offset) {
    const uint b = (uint)(((ulong)get_group_id(0) * stride + offset) % blocks);
    const uint base = b * WG * PER_THREAD, l = get_local_id(0);
    for (uint j = 0; j < PER_THREAD; j++) {
        const uint i = base + j * WG + l;
        if (i >= words) continue;
        const uint d = mem[i] ^ pattern(i, window, pass);
        if (d != 0u) {
            atomic_inc(&out[0]);
            atomic_min(&out[1], i);
            atomic_max(&out[2], i);
            for (uint bit = 0; bit < 32; bit++)
                if ((d >> bit) & 1u) atomic_inc(&out[3 + bit]);
        }
    }
}
