// FP32 multiply-add peak: eight independent chains per work-item, nothing loaded in the
// loop; VEC lanes per work-item (float, float4, float8 or float16, chosen by -D VEC). Each
// chain x <- fma(x, a, b) with a = -1, b = 0.75 flips between x and b - x exactly, so every
// lane's sum is checked exactly by the host (the same closed form as shaders/peak.wgsl).
#pragma OPENCL FP_CONTRACT OFF
#ifndef VEC
#define VEC 1
#endif
#if VEC == 1
typedef float T;
#define LOAD(p, i) ((p)[i])
#define STORE(v, p, i) ((p)[i] = (v))
#else
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef CAT(float, VEC) T;
#define LOAD(p, i) CAT(vload, VEC)(i, p)
#define STORE(v, p, i) CAT(vstore, VEC)(v, i, p)
#endif

#define STEP                       \
    x0 = fma(x0, av, bv);          \
    x1 = fma(x1, av, bv);          \
    x2 = fma(x2, av, bv);          \
    x3 = fma(x3, av, bv);          \
    x4 = fma(x4, av, bv);          \
    x5 = fma(x5, av, bv);          \
    x6 = fma(x6, av, bv);          \
    x7 = fma(x7, av, bv);

__kernel void peak(__global const float *seeds, __global float *out, const float a,
                   const float b, const uint trips, const uint items) {
    const uint i = get_global_id(0);
    if (i >= items) return;
    const T av = (T)(a), bv = (T)(b);
    T x0 = LOAD(seeds, i);
    T x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
    T x4 = x0 + 4.0f, x5 = x0 + 5.0f, x6 = x0 + 6.0f, x7 = x0 + 7.0f;
    for (uint t = 0; t < trips; t++) {
        // UNROLL (8) steps per trip, as the WGSL kernel.
        STEP STEP STEP STEP STEP STEP STEP STEP
    }
    T s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    STORE(s, out, i);
}
