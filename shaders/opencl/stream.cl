// STREAM kernels (McCalpin's copy, scale, add, triad) and a read-only dot product over
// arrays of T = floatVEC (-D VEC=1, 4, 8 or 16): one element per work-item, neighbouring
// work-items on neighbouring addresses. The host sizes every array to a whole number of
// work-groups, so no element test is needed. Dot: each work-item sums `per` products, each
// work-group reduces its sums in local memory and writes one partial sum; the host adds the
// partial sums. No contraction:
// triad is a multiply and an add, as STREAM and the CPU reference compute it (a fused
// b + s*c differs from it by far more than an ulp where the two terms cancel).
#pragma OPENCL FP_CONTRACT OFF
#ifndef VEC
#define VEC 4
#endif
#if VEC == 1
typedef float T;
#define HSUM(v) (v)
#else
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef CAT(float, VEC) T;
#if VEC == 4
#define HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#elif VEC == 8
#define HSUM(v) ((((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))
#else
#define HSUM(v) (HSUM8((v).lo) + HSUM8((v).hi))
#define HSUM8(v) ((((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))
#endif
#endif

__kernel void copy(__global const T *a, __global T *c) {
    const size_t i = get_global_id(0);
    c[i] = a[i];
}

__kernel void scale(__global T *b, __global const T *c, const float s) {
    const size_t i = get_global_id(0);
    b[i] = s * c[i];
}

__kernel void add(__global const T *a, __global const T *b, __global T *c) {
    const size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void triad(__global T *a, __global const T *b, __global const T *c, const float s) {
    const size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}

// The work-group's sum of each work-item's `v` into partial[group] (every work-item calls it).
void group_sum(float v, __local float *scratch, __global float *partial) {
    const uint lid = get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = get_local_size(0) / 2; w > 0; w /= 2) {
        if (lid < w) scratch[lid] += scratch[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = scratch[0];
}

__kernel void dot_partial(__global const T *a, __global const T *b, __global float *partial,
                  __local float *scratch, const uint per) {
    // Each work-item sums `per` products a grid apart (neighbouring work-items still read
    // neighbouring addresses), so the work-group's reduction runs once per `per` elements.
    const size_t g = get_global_size(0);
    size_t i = get_global_id(0);
    T acc = a[i] * b[i];
    for (uint j = 1; j < per; j++) {
        i += g;
        acc += a[i] * b[i];
    }
    group_sum(HSUM(acc), scratch, partial);
}

// The same sum over `per` consecutive elements a work-item: what a CPU device (PoCL runs a
// work-group's work-items one after another) streams well, where the grid-apart layout
// above walks memory a grid apart within one work-item. The tuner takes the faster.
__kernel void dot_blocked(__global const T *a, __global const T *b, __global float *partial,
                  __local float *scratch, const uint per) {
    const size_t i = get_global_id(0) * per;
    T acc = a[i] * b[i];
    for (uint j = 1; j < per; j++) {
        acc += a[i + j] * b[i + j];
    }
    group_sum(HSUM(acc), scratch, partial);
}
