//! The host machine's description for the results file's provenance.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpu_threads: usize,
    pub cpu_cores: Option<usize>,
    pub ram_bytes: u64,
}

impl HostInfo {
    #[cfg(not(target_arch = "wasm32"))]
    pub fn detect() -> HostInfo {
        use sysinfo::{CpuRefreshKind, RefreshKind, System};
        let sys = System::new_with_specifics(
            RefreshKind::nothing()
                .with_memory(sysinfo::MemoryRefreshKind::everything())
                .with_cpu(CpuRefreshKind::nothing()),
        )
        .ok();
        let (cpu_model, cpu_threads, ram_bytes) = match &sys {
            Some(s) => (
                s.cpus()
                    .first()
                    .map(|c| c.brand().trim().to_string())
                    .unwrap_or_default(),
                s.cpus().len(),
                s.total_memory(),
            ),
            None => (String::new(), 0, 0),
        };
        HostInfo {
            hostname: System::host_name().unwrap_or_else(|_| "unknown-host".into()),
            os: System::long_os_version().unwrap_or_else(|_| std::env::consts::OS.into()),
            kernel: System::kernel_version().unwrap_or_default(),
            cpu_model: if cpu_model.is_empty() {
                "unknown".into()
            } else {
                cpu_model
            },
            cpu_threads: if cpu_threads == 0 {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            } else {
                cpu_threads
            },
            cpu_cores: System::physical_core_count().ok(),
            ram_bytes,
        }
    }
}
