//! gpuvalue: measure what a GPU really delivers with validated WGSL probes through wgpu,
//! and record it in a versioned results file.

pub mod app;
pub mod bench;
pub mod calibration;
pub mod catalog;
pub mod catalog_csv;
pub mod cli;
pub mod compare;
pub mod figure;
pub mod files;
pub mod fleet;
pub mod fuzzing;
pub mod gpu;
pub mod host;
pub mod interrupt;
pub mod model;
pub mod probes;
pub mod rank;
pub mod reference;
pub mod report;
pub mod results;
pub mod runs;
pub mod scenario;
pub mod stats;
