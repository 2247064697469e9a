// FP16 matrix multiply with f32 accumulation on the matrix engines (tensor cores, AMD
// matrix cores) through wgpu's cooperative matrices. A is M x K, B is K x N (f16,
// row-major), C is M x N (f32). One workgroup is one subgroup (SG invocations) and
// computes a 32 x 32 block of C as 2 x 2 tiles of 16 x 16, stepping K by 16.
//
// The host pads M and N to multiples of 32 and K to a multiple of 16 and sizes the dispatch
// to the padded matrix, so every tile loaded or stored is inside its buffer.

enable f16;
enable wgpu_cooperative_matrix;

struct Dims { m: u32, n: u32, k: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;
// 16 x 16 zeros: the accumulators start from a load (no zero constructor is relied on).
@group(0) @binding(4) var<storage, read> zeros: array<f32, 256>;

override SG: u32 = 32u;

@compute @workgroup_size(SG)
fn main(@builtin(workgroup_id) wg: vec3<u32>) {
    let row0 = wg.y * 32u;
    let col0 = wg.x * 32u;
    var acc00: coop_mat16x16<f32, C> = coopLoadT<coop_mat16x16<f32, C>>(&zeros[0], 16u);
    var acc01: coop_mat16x16<f32, C> = acc00;
    var acc10: coop_mat16x16<f32, C> = acc00;
    var acc11: coop_mat16x16<f32, C> = acc00;
    for (var k = 0u; k < dims.k; k += 16u) {
        let a0 = coopLoadT<coop_mat16x16<f16, A>>(&a[row0 * dims.k + k], dims.k);
        let a1 = coopLoadT<coop_mat16x16<f16, A>>(&a[(row0 + 16u) * dims.k + k], dims.k);
        let b0 = coopLoadT<coop_mat16x16<f16, B>>(&b[k * dims.n + col0], dims.n);
        let b1 = coopLoadT<coop_mat16x16<f16, B>>(&b[k * dims.n + col0 + 16u], dims.n);
        acc00 = coopMultiplyAdd(a0, b0, acc00);
        acc01 = coopMultiplyAdd(a0, b1, acc01);
        acc10 = coopMultiplyAdd(a1, b0, acc10);
        acc11 = coopMultiplyAdd(a1, b1, acc11);
    }
    // The value, the pointer and the stride are bound before each store (naga's SPIR-V
    // writer needs them evaluated first).
    let stride = dims.n;
    let v00 = acc00;
    let p00 = &c[row0 * dims.n + col0];
    coopStoreT(v00, p00, stride);
    let v01 = acc01;
    let p01 = &c[row0 * dims.n + col0 + 16u];
    coopStoreT(v01, p01, stride);
    let v10 = acc10;
    let p10 = &c[(row0 + 16u) * dims.n + col0];
    coopStoreT(v10, p10, stride);
    let v11 = acc11;
    let p11 = &c[(row0 + 16u) * dims.n + col0 + 16u];
    coopStoreT(v11, p11, stride);
}
