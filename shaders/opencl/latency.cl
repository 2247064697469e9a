// One work-item increments a counter: the host checks that every dispatch ran.
__kernel void bump(__global uint *counter) { counter[0] += 1u; }
