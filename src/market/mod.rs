//! The market: the catalog of GPUs, instances and prices (embedded, snapshots, the user's
//! files) and the feeds that refresh it from public sources. Imports only the data model.

pub mod catalog;
#[cfg(not(target_arch = "wasm32"))]
pub mod feeds;
