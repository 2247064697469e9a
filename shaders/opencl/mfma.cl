// FP16 / BF16 matrix multiply with f32 sums, and FP64 with f64 sums, on AMD CDNA's matrix
// cores (MFMA), from OpenCL C through Clang's __builtin_amdgcn_mfma_* builtins (ROCm's OpenCL
// compiler is Clang).
//
// A is M x K and BT is N x K (B transposed by the host, so each lane's operand is KL
// consecutive elements of one row), both raw 16-bit words (f16 or bf16 bits) or doubles;
// C is M x N f32 (f64 for doubles), row-major. One work-group is one wave of 64 lanes and computes a (16*TM) x (16*TN)
// block of C as TM x TN tiles of 16 x 16, stepping K by KI = 4*KL, one instruction a tile a
// step. The host pads M, N to the block and K to KI.
//
// The instructions' operand layout (AMD's matrix instruction calculator, the CDNA3 ISA
// guide), for v_mfma_f32_16x16x16{f16,bf16} (KL = 4) and v_mfma_f32_16x16x32_f16 (KL = 8,
// gfx950), lane L = 16*q + r (r = L % 16, q = L / 16), element j < KL:
//   A operand: A[row r][k KL*q + j]     B operand: B[k KL*q + j][col r]
//   result:    D[row 4*q + j][col r] for j < 4 (a float4 a lane)
// and v_mfma_f64_16x16x4_f64 (KL = 1; gfx90a, gfx942, gfx950) the same with one double a
// lane for each operand and a double4 of results.
//
// Variants: MFMA_BUILTIN uses the instruction (gfx90a, gfx942, gfx950; the f16 16x16x32 one
// on gfx950 only); without it, mfma() below is a portable emulation with exactly that lane
// mapping (operands published to local memory, the 16 x 16 x KI product summed in f32, each
// lane taking back its four results), so the tiling, packing and validation run on any
// OpenCL device (PoCL here) with the layout the real instruction expects. ELEM: 0 = f16,
// 1 = bf16, 2 = f64.

#ifndef TM
#define TM 2
#endif
#ifndef TN
#define TN 2
#endif
#ifndef KL
#define KL 4
#endif
#ifndef ELEM
#define ELEM 0
#endif
#define KI (4 * KL)

#if ELEM == 2
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double in_t;
typedef double frag_bits;
typedef double4 acc_t;
typedef double out_t;
#define LOAD_FRAG(p) (*(p))
#else
typedef ushort in_t;
typedef float4 acc_t;
typedef float out_t;
#if KL == 4
typedef ushort4 frag_bits;
#define LOAD_FRAG(p) vload4(0, (p))
#else
typedef ushort8 frag_bits;
#define LOAD_FRAG(p) vload8(0, (p))
#endif
#endif

#ifdef MFMA_BUILTIN
#if ELEM == 2
#define MFMA(a, b, c) __builtin_amdgcn_mfma_f64_16x16x4f64((a), (b), (c), 0, 0, 0)
#elif ELEM == 0
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#if KL == 4
#define MFMA(a, b, c) __builtin_amdgcn_mfma_f32_16x16x16f16(as_half4(a), as_half4(b), (c), 0, 0, 0)
#else
#define MFMA(a, b, c) __builtin_amdgcn_mfma_f32_16x16x32_f16(as_half8(a), as_half8(b), (c), 0, 0, 0)
#endif
#else
#define MFMA(a, b, c) __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(as_short4(a), as_short4(b), (c), 0, 0, 0)
#endif
#define MFMA_SCRATCH
#else

#if ELEM == 2
// Doubles are summed as they are.
#define TO_SUM(x) (x)
#else
#define TO_SUM(x) word_to_float(x)
#endif

// One 16-bit word as the f32 it encodes (no cl_khr_fp16 needed).
float word_to_float(uint h) {
#if ELEM == 1
    return as_float(h << 16);
#else
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0u) {
        // Zero or subnormal: m * 2^-24, exact in f32.
        float v = (float)m * 5.9604644775390625e-8f;
        return as_float(as_uint(v) | sign);
    }
    if (e == 31u) {
        return as_float(sign | 0x7f800000u | (m << 13));
    }
    return as_float(sign | ((e + 112u) << 23) | (m << 13));
#endif
}

// The instruction, emulated: every lane publishes its operands where the layout puts them,
// the wave (one work-group) waits, each lane sums its four results, and waits again before
// the scratch is reused.
acc_t mfma(frag_bits a, frag_bits b, acc_t c, __local out_t* sa, __local out_t* sb) {
    uint lane = get_local_id(0);
    uint r = lane % 16u, q = lane / 16u;
    in_t av[KL], bv[KL];
#if KL == 1
    av[0] = a;
    bv[0] = b;
#elif KL == 4
    av[0] = a.s0; av[1] = a.s1; av[2] = a.s2; av[3] = a.s3;
    bv[0] = b.s0; bv[1] = b.s1; bv[2] = b.s2; bv[3] = b.s3;
#else
    av[0] = a.s0; av[1] = a.s1; av[2] = a.s2; av[3] = a.s3;
    av[4] = a.s4; av[5] = a.s5; av[6] = a.s6; av[7] = a.s7;
    bv[0] = b.s0; bv[1] = b.s1; bv[2] = b.s2; bv[3] = b.s3;
    bv[4] = b.s4; bv[5] = b.s5; bv[6] = b.s6; bv[7] = b.s7;
#endif
    for (uint j = 0; j < KL; j++) {
        sa[r * KI + KL * q + j] = TO_SUM(av[j]);
        sb[(KL * q + j) * 16u + r] = TO_SUM(bv[j]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out_t d[4] = {c.s0, c.s1, c.s2, c.s3};
    for (uint j = 0; j < 4u; j++) {
        uint row = 4u * q + j;
        out_t s = 0;
        for (uint k = 0; k < KI; k++) {
            s = fma(sa[row * KI + k], sb[k * 16u + r], s);
        }
        d[j] += s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return (acc_t)(d[0], d[1], d[2], d[3]);
}
#define MFMA(a, b, c) mfma((a), (b), (c), sa, sb)
#define MFMA_SCRATCH __local out_t sa[16 * KI]; __local out_t sb[KI * 16];
#endif

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void matmul_mfma(uint m, uint n, uint k_len, __global const in_t* a, __global const in_t* bt,
                 __global out_t* c) {
    MFMA_SCRATCH
    uint lane = get_local_id(0);
    uint r = lane % 16u, q = lane / 16u;
    uint row0 = get_group_id(1) * (16u * TM);
    uint col0 = get_group_id(0) * (16u * TN);
    acc_t acc[TM][TN];
    for (uint i = 0; i < TM; i++) {
        for (uint j = 0; j < TN; j++) {
            acc[i][j] = (acc_t)(0);
        }
    }
    for (uint k = 0; k < k_len; k += KI) {
        frag_bits af[TM], bf[TN];
        for (uint i = 0; i < TM; i++) {
            af[i] = LOAD_FRAG(a + (size_t)(row0 + 16u * i + r) * k_len + k + KL * q);
        }
        for (uint j = 0; j < TN; j++) {
            bf[j] = LOAD_FRAG(bt + (size_t)(col0 + 16u * j + r) * k_len + k + KL * q);
        }
        for (uint i = 0; i < TM; i++) {
            for (uint j = 0; j < TN; j++) {
                acc[i][j] = MFMA(af[i], bf[j], acc[i][j]);
            }
        }
    }
    for (uint i = 0; i < TM; i++) {
        for (uint j = 0; j < TN; j++) {
            out_t v[4] = {acc[i][j].s0, acc[i][j].s1, acc[i][j].s2, acc[i][j].s3};
            for (uint e = 0; e < 4u; e++) {
                c[(size_t)(row0 + 16u * i + 4u * q + e) * n + col0 + 16u * j + r] = v[e];
            }
        }
    }
    (void)m;
}
