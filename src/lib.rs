//! gpuvalue: measure what a GPU really delivers with validated WGSL probes through wgpu,
//! and record it in a versioned results file.
//!
//! The probes, the GPU layer, the data model, catalog, scenarios, calibration, ranking,
//! comparison and reports also build for `wasm32-unknown-unknown`: `web` is the browser
//! build's entry (`scripts/build-web.sh`), every GPU wait is awaited. The command line, the
//! bench scheduler (watchdog, fault injection, file locks, the run registry) and the fuzzing
//! helpers are native-only.

#[cfg(not(target_arch = "wasm32"))]
pub mod app;
#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
#[cfg(not(target_arch = "wasm32"))]
pub mod burn;
pub mod calibration;
pub mod catalog;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
pub mod clock;
pub mod compare;
#[cfg(not(target_arch = "wasm32"))]
pub mod feeds;
pub mod figure;
pub mod files;
pub mod fleet;
#[cfg(not(target_arch = "wasm32"))]
pub mod fuzzing;
pub mod gpu;
pub mod health;
pub mod hierarchy;
pub mod host;
pub mod interrupt;
pub mod jobs;
pub mod levers;
pub mod model;
pub mod probes;
pub mod rank;
pub mod reference;
pub mod report;
pub mod results;
#[cfg(not(target_arch = "wasm32"))]
pub mod runs;
pub mod scenario;
// The published serving runs (1 MB of data) stay out of the browser build.
#[cfg(not(target_arch = "wasm32"))]
pub mod serving_calibration;
pub mod serving_results;
pub mod stats;
pub mod suite;
#[cfg(not(target_arch = "wasm32"))]
pub mod transfers;
#[cfg(target_arch = "wasm32")]
pub mod web;
