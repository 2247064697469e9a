// A kernel that keeps one invocation busy for a chosen time: used only to inject a
// dispatch that does not finish in time (`--inject-fault hang@PROBE`), so the watchdog
// can be tested. `count` steps of a xorshift generator, each depending on the last, the
// state carried from one dispatch to the next through `state`, so no compiler can
// shorten the loop; `state[1]` counts the dispatches that ran.
struct Params {
    count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;

@compute @workgroup_size(1)
fn main() {
    var h = state[0] | 1u;
    for (var i = 0u; i < params.count; i++) {
        h ^= h << 13u;
        h ^= h >> 17u;
        h ^= h << 5u;
    }
    state[0] = h;
    state[1] += 1u;
}
