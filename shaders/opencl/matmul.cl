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
#define MADDV MADD
#elif defined(USE_F16)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define TNAME half
#define ACCNAME float
#define MADD(a, b, c) ((c) + (float)((a) * (b)))
#define MADDV(a, b, c) ((c) + TO_ACC((a) * (b)))
#else
#define TNAME float
#define ACCNAME float
#define MADD(a, b, c) fma((a), (b), (c))
#define MADDV MADD
#endif
typedef TNAME T;
typedef ACCNAME ACC;
// VW: the barrier-free kernels' columns per work-item (below); 1 for the tiled kernel.
#ifndef VW
#define VW 1
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
// A vector of half products widened to the float sums (MADDV, the barrier-free kernels'
// vectors, under USE_F16): an explicit conversion, as OpenCL C allows no cast between vector
// types (found by Clang compiling the f16 variants for gfx942, issue 36; PoCL here has no
// cl_khr_fp16, so no run had built them). MADD is the tiled kernel's scalar form.
#if VW == 1
#define TO_ACC(x) ((ACC)(x))
#else
#define TO_ACC(x) CAT(convert_, CAT(ACCNAME, VW))(x)
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

// The barrier-free variant (-D TS=local width, WPT=rows per work-item, VW=columns per
// work-item as one vector of 1, 4, 8 or 16): WPT vector accumulators, a vector load of B's
// row and a broadcast of A's element per k, no local memory and no barrier. A CPU runtime
// (PoCL) keeps the accumulators in vector registers (a barrier would make it save every
// work-item's private state between the regions it splits the kernel into). The host pads
// M to WPT and N to TS * VW.
#if VW == 1
typedef T VT;
typedef ACC VACC;
#define VLOADT(i, p) ((p)[i])
#define VSTOREACC(v, i, p) ((p)[i] = (v))
#else
typedef CAT(TNAME, VW) VT;
typedef CAT(ACCNAME, VW) VACC;
#define VLOADT(i, p) CAT(vload, VW)(i, p)
#define VSTOREACC(v, i, p) CAT(vstore, VW)(v, i, p)
#endif

// The barrier-free kernels' rows written out by the preprocessor: PoCL 3.1 kept a private
// `acc[WPT]` array in memory (a load, an fma and a store per row and k: the inner loop was not
// unrolled), so each row's accumulator is a variable of its own. ROWS(X) expands to X(0) ..
// X(WPT-1).
#define ROWS_1(X) X(0)
#define ROWS_2(X) ROWS_1(X) X(1)
#define ROWS_3(X) ROWS_2(X) X(2)
#define ROWS_4(X) ROWS_3(X) X(3)
#define ROWS_5(X) ROWS_4(X) X(4)
#define ROWS_6(X) ROWS_5(X) X(5)
#define ROWS_7(X) ROWS_6(X) X(6)
#define ROWS_8(X) ROWS_7(X) X(7)
#define ROWS_9(X) ROWS_8(X) X(8)
#define ROWS_10(X) ROWS_9(X) X(9)
#define ROWS_11(X) ROWS_10(X) X(10)
#define ROWS_12(X) ROWS_11(X) X(11)
#define ROWS_13(X) ROWS_12(X) X(12)
#define ROWS_14(X) ROWS_13(X) X(13)
#define ROWS_15(X) ROWS_14(X) X(14)
#define ROWS_16(X) ROWS_15(X) X(15)
#define ROWS_OF(n) CAT(ROWS_, n)
#define ROWS ROWS_OF(WPT)
#define DECL_ACC(r) VACC acc##r = (VACC)(0);

__kernel void matmul_direct(const uint M, const uint N, const uint K, __global const T *A,
                            __global const T *B, __global ACC *C) {
    const uint colv = get_global_id(0);
    const uint row0 = get_global_id(1) * WPT;
    const uint nv = N / VW;
    __global const T *arow = A + (size_t)row0 * K;
    ROWS(DECL_ACC)
    for (uint k = 0; k < K; k++) {
        const VT b = VLOADT((size_t)k * nv + colv, B);
#define STEP_DIRECT(r) acc##r = MADDV((VT)(arow[(size_t)(r) * K + k]), b, acc##r);
        ROWS(STEP_DIRECT)
    }
#define STORE_ROW(r) VSTOREACC(acc##r, (size_t)(row0 + (r)) * nv + colv, C);
    ROWS(STORE_ROW)
}

// The panel variant (-D TS, WPT, VW as for the barrier-free one): the operands are first
// repacked, B by `pack_panels` into column panels of VW columns and A by `pack_row_blocks`
// into blocks of WPT rows, each K deep and interleaved along K, so a work-item walks both with
// unit stride (the barrier-free kernel strides by N per k through B, a new cache line and
// often a new page at every step, and through WPT separate rows of A). The repacking runs
// inside every timed iteration, as the WGSL subgroup kernel's does: the figure is for
// row-major inputs. With -D GROUP_ROWS the work-group's work-items take consecutive row
// blocks of one panel (the panel stays in cache, A streams); without, consecutive panels of
// one row block.
__kernel void pack_panels(const uint N, const uint K, __global const T *B, __global T *Bp) {
    const uint colv = get_global_id(0), k = get_global_id(1);
#if VW == 1
    Bp[(size_t)colv * K + k] = B[(size_t)k * N + colv];
#else
    CAT(vstore, VW)(VLOADT((size_t)k * (N / VW) + colv, B), (size_t)colv * K + k, Bp);
#endif
}

__kernel void pack_row_blocks(const uint K, __global const T *A, __global T *Ap) {
    const uint k = get_global_id(0), row = get_global_id(1);
    Ap[((size_t)(row / WPT) * K + k) * WPT + row % WPT] = A[(size_t)row * K + k];
}

__kernel void matmul_panel(const uint M, const uint N, const uint K, __global const T *Ap,
                           __global const T *Bp, __global ACC *C) {
#ifdef GROUP_ROWS
    const uint colv = get_global_id(1), rb = get_global_id(0);
#else
    const uint colv = get_global_id(0), rb = get_global_id(1);
#endif
    __global const T *bp = Bp + (size_t)colv * K * VW;
    __global const T *ap = Ap + (size_t)rb * K * WPT;
    ROWS(DECL_ACC)
    for (uint k = 0; k < K; k++, ap += WPT, bp += VW) {
        const VT b = VLOADT(0, bp);
#define STEP_PANEL(r) acc##r = MADDV((VT)(ap[r]), b, acc##r);
        ROWS(STEP_PANEL)
    }
    const uint nv = N / VW;
    const uint row0 = rb * WPT;
    ROWS(STORE_ROW)
}
