// FP32 matmul C = A * B (row-major), classic GPU kernel: a BM x BN workgroup tile, K-tiles of
// BK staged in workgroup memory, each invocation accumulating a TM x (4*TN4) register block.
// A is stored k-major in workgroup memory so a thread's TM rows are contiguous; B keeps vec4
// columns, a thread's TN4 column groups interleaved by WG_X (neighbouring threads read
// neighbouring vec4s: coalesced loads, no bank conflicts).
// The host prepends `const TM` and `const TN4` and pads M, N, K to tile multiples, so every
// index is in range and every loop has a fixed trip count.

struct Dims { m: u32, n: u32, k: u32, k_stop: u32 }

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: Dims;

override WG_X: u32 = 16u;   // threads along N
override WG_Y: u32 = 16u;   // threads along M
override BK: u32 = 16u;     // K-tile depth (multiple of 4)
override BM: u32 = TM * WG_Y;
override BN4: u32 = TN4 * WG_X; // tile width in vec4s
override THREADS: u32 = WG_X * WG_Y;

var<workgroup> a_tile: array<f32, BK * BM>;          // a_tile[k * BM + m]
var<workgroup> b_tile: array<vec4<f32>, BK * BN4>;  // b_tile[k * BN4 + n4]

@compute @workgroup_size(WG_X, WG_Y)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let n4 = dims.n / 4u;
    let k4 = dims.k / 4u;
    let row0 = wid.y * BM;
    let col4_0 = wid.x * BN4;
    let bk4 = BK / 4u;
    var acc: array<array<vec4<f32>, TN4>, TM>;
    for (var k0 = 0u; k0 < dims.k_stop; k0 += BK) {
        // Stage A (BM x BK, read as vec4 along k) transposed to k-major.
        for (var i = tid; i < BM * bk4; i += THREADS) {
            let r = i / bk4;
            let q = i % bk4;
            let v = a[(row0 + r) * k4 + k0 / 4u + q];
            let kk = q * 4u;
            a_tile[kk * BM + r] = v.x;
            a_tile[(kk + 1u) * BM + r] = v.y;
            a_tile[(kk + 2u) * BM + r] = v.z;
            a_tile[(kk + 3u) * BM + r] = v.w;
        }
        // Stage B (BK x BN).
        for (var i = tid; i < BK * BN4; i += THREADS) {
            let r = i / BN4;
            let q = i % BN4;
            b_tile[i] = b[(k0 + r) * n4 + col4_0 + q];
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            var av: array<f32, TM>;
            for (var m = 0u; m < TM; m++) {
                av[m] = a_tile[kk * BM + lid.y * TM + m];
            }
            for (var j = 0u; j < TN4; j++) {
                let bv = b_tile[kk * BN4 + j * WG_X + lid.x];
                for (var m = 0u; m < TM; m++) {
                    acc[m][j] = fma(vec4<f32>(av[m]), bv, acc[m][j]);
                }
            }
        }
        workgroupBarrier();
    }
    for (var m = 0u; m < TM; m++) {
        let row = row0 + lid.y * TM + m;
        for (var j = 0u; j < TN4; j++) {
            c[row * n4 + col4_0 + j * WG_X + lid.x] = acc[m][j];
        }
    }
}
