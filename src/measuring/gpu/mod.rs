//! The device layer: adapters of both executors and their listing, wgpu's device, buffers
//! and timing, and the OpenCL executor (`opencl`, native builds only).

pub mod adapter;
pub mod context;
pub mod fault;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod inject;
#[cfg(not(target_arch = "wasm32"))]
pub mod opencl;
pub mod signal;
pub mod timer;
pub mod visible;
pub mod wgsl;

pub use adapter::{AdapterChoice, AdapterSummary, BackendChoice};
pub use context::Gpu;
pub use timer::{Timer, TimingMethod};
