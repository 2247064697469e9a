//! Everything that talks to wgpu: adapters, the device, buffers and timing.

pub mod adapter;
pub mod context;
pub mod fault;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod inject;
pub mod signal;
pub mod timer;
pub mod visible;
pub mod wgsl;

pub use adapter::{AdapterChoice, AdapterSummary, BackendChoice};
pub use context::Gpu;
pub use timer::{Timer, TimingMethod};
