//! `cargo fuzz run feed_answers`: see fuzz/README.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // Lambda's, Vast's, RunPod's, OCI's, Alibaba's and Tencent's answers are read from the same bytes; a
    // rejection with a message is fine. A panic, a hang or a memory blow-up is what the
    // fuzzer looks for.
    let _ = gpuvalue::fuzzing::feed_answers(data);
});
