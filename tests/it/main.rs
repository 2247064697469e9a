//! The integration tests, one test binary (`cargo test --release --test it`): one module per
//! area, so the crate and wgpu are linked once instead of once per file. The tests share one
//! process: nothing here may change the process's environment or current directory, and
//! the GPU runs that time themselves take turns through `common::one_at_a_time`.

mod common;

mod architecture;
mod browser;
mod burn;
mod cli;
mod compare;
mod docs;
mod feeds;
mod gpu_probes;
mod hierarchy;
mod hostile;
mod jobs;
mod kernels;
mod limits;
mod memory;
mod opencl;
mod output;
mod parsers;
mod precision;
mod prices;
mod rank;
mod report;
mod robustness;
mod signals;
mod transfers;
mod value_model;
