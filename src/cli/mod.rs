//! The command line: `args` turns arguments into settings, `app` runs each command over
//! the layers below.

pub mod app;
pub mod args;
