//! `cargo fuzz run azure_page`: see fuzz/README.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // Accepted or rejected with a message: both fine. A panic, a hang or a memory blow-up
    // is what the fuzzer looks for.
    let _ = gpuvalue::fuzzing::azure_page(data);
});
