// The memory hierarchy: read bandwidth and dependent-load latency against working-set size.
//
// sweep: read-only passes over the first (mask + 1) vec4<u32> elements of `data` (a power
// of two). Invocation i of the S-invocation grid reads elements (i + j * S) & mask for
// j < steps, so neighbouring invocations read neighbouring addresses and the grid as a whole
// sweeps the working set cyclically; each invocation writes the wrapping sum of what it
// read. The host makes S * steps a multiple of the element count, so the sums of all
// invocations add up to (S * steps / count) times the sum of the working set.
//
// chase: one invocation follows `chain` (a random single cycle over the working set's
// 64-byte slots, each slot's first word the index of the next slot's) for `steps` dependent
// loads and writes where it stopped. Its loop body makes 32 loads: lavapipe's llvmpipe
// stops an invocation's loops after about 65,500 iterations in all (seen here: a chase of
// 2^20 one-load iterations, or of 1024 x 1024 nested ones, stopped after 65,409 loads), so
// the host keeps steps / 32 below that.

struct Params { mask: u32, steps: u32, start: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> data: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;
@group(0) @binding(3) var<storage, read> chain: array<u32>;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn sweep(@builtin(global_invocation_id) gid: vec3<u32>,
         @builtin(num_workgroups) groups: vec3<u32>) {
    let s = groups.x * WG;
    var idx = gid.x;
    var acc = vec4<u32>(0u);
    for (var j = 0u; j < p.steps; j++) {
        acc += data[idx & p.mask];
        idx += s;
    }
    out[gid.x] = acc.x + acc.y + acc.z + acc.w;
}

@compute @workgroup_size(1)
fn chase() {
    var at = p.start;
    for (var j = 0u; j < p.steps / 32u; j++) {
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
        at = chain[at];
    }
    out[0] = at;
}
