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
#define TNAME double
#define ACCNAME double
#define MADD(a, b, c) fma((a), (b), (c))
#elif defined(USE_F16)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define TNAME half
#define ACCNAME float
#define MADD(a, b, c) ((c) + (float)((a) * (b)))
#else
#define TNAME float
#define ACCNAME float
#define MADD(a, b, c) fma((a), (b), (c))
#endif
typedef TNAME T;
typedef ACCNAME ACC;
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

// The barrier-free variant (-D TS=local width, WPT=rows per work-item, VW=columns per
// work-item as one vector of 1, 4, 8 or 16): WPT vector accumulators, a vector load of B's
// row and a broadcast of A's element per k, no local memory and no barrier. A CPU runtime
// (PoCL) keeps the accumulators in vector registers (a barrier would make it save every
// work-item's private state between the regions it splits the kernel into). The host pads
// M to WPT and N to TS * VW.
#ifndef VW
#define VW 1
#endif
#if VW == 1
typedef T VT;
typedef ACC VACC;
#define VLOADT(i, p) ((p)[i])
#define VSTOREACC(v, i, p) ((p)[i] = (v))
#else
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef CAT(TNAME, VW) VT;
typedef CAT(ACCNAME, VW) VACC;
#define VLOADT(i, p) CAT(vload, VW)(i, p)
#define VSTOREACC(v, i, p) CAT(vstore, VW)(v, i, p)
#endif

__kernel void matmul_direct(const uint M, const uint N, const uint K, __global const T *A,
                            __global const T *B, __global ACC *C) {
    const uint colv = get_global_id(0);
    const uint row0 = get_global_id(1) * WPT;
    const uint nv = N / VW;
    VACC acc[WPT];
    for (uint r = 0; r < WPT; r++) acc[r] = (VACC)(0);
    for (uint k = 0; k < K; k++) {
        const VT b = VLOADT(k * nv + colv, B);
        for (uint r = 0; r < WPT; r++) acc[r] = MADD((VT)(A[(row0 + r) * K + k]), b, acc[r]);
    }
    for (uint r = 0; r < WPT; r++) VSTOREACC(acc[r], (row0 + r) * nv + colv, C);
}
