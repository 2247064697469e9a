//! Measuring: the GPU layer (wgpu and OpenCL executors), the probes and their CPU
//! references, the bench that schedules them, the burn (acceptance test), the node's
//! transfers, and the cache levels read from the hierarchy probe's curves. Imports only the
//! data model below it.

#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
#[cfg(not(target_arch = "wasm32"))]
pub mod burn;
pub mod cache_levels;
pub mod compare;
pub mod gpu;
#[cfg(not(target_arch = "wasm32"))]
pub mod node_transfers;
pub mod probes;
pub mod reference;
#[cfg(not(target_arch = "wasm32"))]
pub mod run_registry;
pub mod suite;
#[cfg(not(target_arch = "wasm32"))]
pub mod telemetry;
