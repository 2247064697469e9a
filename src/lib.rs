//! gpuvalue: measure what a GPU really delivers with validated WGSL probes through wgpu,
//! and record it in a versioned results file.

pub mod bench;
pub mod cli;
pub mod gpu;
pub mod host;
pub mod probes;
pub mod reference;
pub mod report;
pub mod results;
pub mod stats;
