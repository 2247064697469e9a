// The smallest useful dispatch: one invocation adds 1 to a counter, so the host can check
// that every dispatch it timed really ran.
@group(0) @binding(0) var<storage, read_write> counter: atomic<u32>;

@compute @workgroup_size(1)
fn main() {
    atomicAdd(&counter, 1u);
}
