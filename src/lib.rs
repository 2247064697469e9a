//! gpuvalue: measure what a GPU really delivers with validated WGSL probes through wgpu,
//! and record it in a versioned results file.
//!
//! The crate is layered by domain; a layer imports only the layers below it (checked by
//! `tests/it/architecture.rs`):
//!
//! - the data model and plumbing at the top level: figures, results files, records, stats,
//!   clocks, files, interrupts, the host;
//! - [`measuring`]: the GPU layer (wgpu and OpenCL), the probes, the bench, the burn, the
//!   node's transfers, cache levels;
//! - [`market`]: the catalog of instances and prices, and the feeds that refresh it;
//! - [`value`]: scenarios and jobs, calibration, ranking, levers, fleets (over both above);
//! - [`report`]: tables, Markdown, CSV, JSON, HTML and SVG over all of it;
//! - [`cli`] (and the browser's `web`): arguments to settings, settings to commands.
//!
//! The probes, the GPU layer, the data model, catalog, scenarios, calibration, ranking,
//! comparison and reports also build for `wasm32-unknown-unknown`: `web` is the browser
//! build's entry (`scripts/build-web.sh`), every GPU wait is awaited. The command line, the
//! bench scheduler (watchdog, fault injection, file locks, the run registry) and the fuzzing
//! helpers are native-only.

pub mod clock;
pub mod energy;
pub mod exit;
pub mod figure;
pub mod files;
pub mod health;
pub mod host;
pub mod interrupt;
pub mod model;
pub mod results;
pub mod stats;
pub mod text;

pub mod market;
pub mod measuring;
pub mod value;

pub mod report;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(not(target_arch = "wasm32"))]
pub mod fuzzing;
#[cfg(target_arch = "wasm32")]
pub mod web;
