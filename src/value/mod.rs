//! Value: what a GPU's work is worth. Scenarios and LLM jobs, calibration against
//! published runs, the costing and ranking of instances, levers and fleets. Builds on
//! measuring (results files) and the market (prices).

pub mod calibration;
pub mod fleet;
pub mod jobs;
pub mod levers;
pub mod rank;
pub mod scenario;
// The published serving runs (1 MB of data) stay out of the browser build.
#[cfg(not(target_arch = "wasm32"))]
pub mod serving_calibration;
pub mod serving_results;
#[cfg(not(target_arch = "wasm32"))]
pub mod serving_validation;
