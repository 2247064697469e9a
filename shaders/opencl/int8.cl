// Int8 matrix multiply with 32-bit sums, the layout of shaders/matmul_int8.wgsl: A is M x K
// and B^T is N x K, row-major, four signed bytes (a char4) per word along K; C is M x N
// int. Each work-item computes a TM x 4 block of C. With cl_khr_integer_dot_product
// (-D INT_DOT) the packed dot product is the device's own; otherwise four widening
// multiply-adds. The host pads M to TM * WG, N to 4 and K to 4 with zeros.
#ifdef INT_DOT
#pragma OPENCL EXTENSION cl_khr_integer_dot_product : enable
int dot4(char4 x, char4 y) { return dot(x, y); }
#else
int dot4(char4 x, char4 y) {
    int4 p = convert_int4(x) * convert_int4(y);
    return (p.s0 + p.s1) + (p.s2 + p.s3);
}
#endif
#ifndef TM
#define TM 4
#endif

__kernel void matmul_int8(const uint M, const uint N, const uint K4, __global const char4 *a,
                          __global const char4 *bt, __global int *c) {
    const uint row0 = get_global_id(0) * TM;
    const uint col0 = get_global_id(1) * 4;
    int4 acc[TM];
    for (uint r = 0; r < TM; r++) acc[r] = (int4)(0);
    for (uint kw = 0; kw < K4; kw++) {
        const char4 b0 = bt[(col0 + 0) * K4 + kw], b1 = bt[(col0 + 1) * K4 + kw];
        const char4 b2 = bt[(col0 + 2) * K4 + kw], b3 = bt[(col0 + 3) * K4 + kw];
        for (uint r = 0; r < TM; r++) {
            const char4 aw = a[(row0 + r) * K4 + kw];
            acc[r] += (int4)(dot4(aw, b0), dot4(aw, b1), dot4(aw, b2), dot4(aw, b3));
        }
    }
    for (uint r = 0; r < TM; r++) vstore4(acc[r], 0, c + (row0 + r) * N + col0);
}
