// Tiled matrix multiply C (M x N) = A (M x K) * B (K x N), row-major, for T = float (FP32),
// double (-D USE_F64, cl_khr_fp64) or half (-D USE_F16, cl_khr_fp16, products in half,
// sums in float). A work-group of (TS/WPT)^2 work-items computes a TS x TS tile of C; each
// work-item a WPT x WPT block of accumulators in registers, strided by TS/WPT so that
// neighbouring work-items read neighbouring local-memory columns. K advances TSK at a time
// through local-memory tiles (one column of padding against bank conflicts). The host pads
// M and N to TS and K to TSK with zeros (exact in every type). Tuned by -D TS, WPT, TSK.
#pragma OPENCL FP_CONTRACT ON
#if defined(USE_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double T;
typedef double ACC;
#define MADD(a, b, c) fma((a), (b), (c))
#elif defined(USE_F16)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half T;
typedef float ACC;
#define MADD(a, b, c) ((c) + (float)((a) * (b)))
#else
typedef float T;
typedef float ACC;
#define MADD(a, b, c) fma((a), (b), (c))
#endif
#ifndef TS
#define TS 32
#endif
#ifndef WPT
#define WPT 4
#endif
#ifndef TSK
#define TSK 16
#endif
#define RTS (TS / WPT)

__kernel __attribute__((reqd_work_group_size(RTS, RTS, 1))) void
matmul(const uint M, const uint N, const uint K, __global const T *A, __global const T *B,
       __global ACC *C) {
    const uint tc = get_local_id(0), tr = get_local_id(1);
    const uint lid = tr * RTS + tc;
    const uint col0 = get_group_id(0) * TS, row0 = get_group_id(1) * TS;
    __local T As[TS][TSK + 1];
    __local T Bs[TSK][TS + 1];
    ACC acc[WPT][WPT];
    for (uint wm = 0; wm < WPT; wm++)
        for (uint wn = 0; wn < WPT; wn++) acc[wm][wn] = 0;
    for (uint t = 0; t < K; t += TSK) {
        for (uint l = lid; l < TS * TSK; l += RTS * RTS) {
            const uint r = l / TSK, c = l % TSK;
            As[r][c] = A[(row0 + r) * K + t + c];
            const uint rb = l / TS, cb = l % TS;
            Bs[rb][cb] = B[(t + rb) * N + col0 + cb];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < TSK; k++) {
            T b[WPT];
            for (uint wn = 0; wn < WPT; wn++) b[wn] = Bs[k][tc + wn * RTS];
            for (uint wm = 0; wm < WPT; wm++) {
                const T a = As[tr + wm * RTS][k];
                for (uint wn = 0; wn < WPT; wn++) acc[wm][wn] = MADD(a, b[wn], acc[wm][wn]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint wm = 0; wm < WPT; wm++)
        for (uint wn = 0; wn < WPT; wn++)
            C[(row0 + tr + wm * RTS) * N + col0 + tc + wn * RTS] = acc[wm][wn];
}

// The barrier-free variant (-D TS=local width, WPT=rows per work-item): one column of C per
// work-item, WPT rows of accumulators, A and B read from global memory through the caches,
// no local memory and no barrier. Neighbouring work-items take neighbouring columns, so a
// CPU runtime (PoCL) vectorises the work-group across them with B's row a vector load and
// A's element a broadcast, and keeps the accumulators in registers (a barrier would make it
// save every work-item's private state between the regions it splits the kernel into). The
// host pads M to WPT and N to TS.
__kernel void matmul_direct(const uint M, const uint N, const uint K, __global const T *A,
                            __global const T *B, __global ACC *C) {
    const uint col = get_global_id(0);
    const uint row0 = get_global_id(1) * WPT;
    ACC acc[WPT];
    for (uint r = 0; r < WPT; r++) acc[r] = 0;
    for (uint k = 0; k < K; k++) {
        const T b = B[k * N + col];
        for (uint r = 0; r < WPT; r++) acc[r] = MADD(A[(row0 + r) * K + k], b, acc[r]);
    }
    for (uint r = 0; r < WPT; r++) C[(row0 + r) * N + col] = acc[r];
}
