//! Command-line definitions (clap) and nothing else.

use crate::gpu::{AdapterChoice, BackendChoice};
use crate::probes::ProbeKind;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "gpuvalue",
    version,
    about = "Measure what a GPU really delivers (validated WGSL probes through wgpu) and what it is worth",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List every adapter wgpu finds, with the limits and features the probes use.
    Devices(DevicesArgs),
    /// Run the probes on one adapter (or all) and write a results file per adapter.
    Bench(BenchArgs),
    /// Print saved results files as the bench summary table.
    Show(ShowArgs),
}

#[derive(Args, Debug, Clone)]
pub struct AdapterArgs {
    /// Adapter to use: its index from `gpuvalue devices`, part of its name, or `all`.
    /// Default: the best hardware GPU (discrete before integrated), else a software adapter.
    #[arg(long, short = 'a', default_value = "best")]
    pub adapter: AdapterChoice,
    /// Only search this backend.
    #[arg(long, short = 'b', value_enum)]
    pub backend: Option<BackendChoice>,
}

#[derive(Args, Debug)]
pub struct DevicesArgs {
    #[command(flatten)]
    pub select: AdapterArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    pub select: AdapterArgs,
    /// Small sizes and short samples: for CI and laptops (under a minute on lavapipe).
    #[arg(long)]
    pub quick: bool,
    /// Probes to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "matmul,stream,transfer,latency"
    )]
    pub probes: Vec<ProbeKind>,
    /// Matrix sizes for the matmul probe, comma-separated: N (square) or MxNxK.
    /// Default: 256 doubling up to what the adapter's limits and the time budget allow.
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<crate::reference::Dims>>,
    /// Time budget in seconds for the whole run on one adapter (default 45 with --quick,
    /// else 600). Probes stop starting new sizes when their share is spent.
    #[arg(long, value_name = "SECONDS")]
    pub time_budget: Option<f64>,
    /// Array size in MiB for the stream and transfer probes (default: 4x the last-level
    /// cache where known, else 256 MiB; within the adapter's limits).
    #[arg(long, value_name = "MIB")]
    pub array_mib: Option<u64>,
    /// Results file (default results/<host>-<adapter>-<time>.json). With several adapters,
    /// the adapter's index is added before the extension.
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// No progress display.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Build every kernel with wgpu's runtime bounds checks (slower; default: kernels whose
    /// indexing is proven in range are built without them).
    #[arg(long)]
    pub checked: bool,
    /// Time with the wall clock even where GPU timestamps exist.
    #[arg(long)]
    pub no_timestamps: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Results files written by `gpuvalue bench`.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the files' probes as JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_size(s: &str) -> Result<crate::reference::Dims, String> {
    crate::probes::matmul::parse_size(s)
}
