//! The operations that fire an injected fault (`--inject-fault`) through the same wgpu
//! paths a real fault takes: an allocation that really fails, a kernel that runs past the
//! watchdog. They extend `Gpu`; the device code calls them only when a fault is armed.

use super::context::Gpu;
use super::fault::bytes;
use anyhow::{Result, bail};
use std::time::{Duration, Instant};

/// An allocation that really fails: the request is raised to 1 GiB (within the adapter's
/// limit) and, on Linux, the process's address-space limit is lowered for the duration of
/// the call so that the driver's own allocation fails (a software adapter allocates device
/// memory from the host). The error comes back through the out-of-memory error scope.
impl Gpu {
    pub(super) fn failing_allocation(
        &self,
        desc: &wgpu::BufferDescriptor<'_>,
    ) -> Result<wgpu::Buffer> {
        let gpu = self;
        let size = (1u64 << 30)
            .min(gpu.limits.max_buffer_size)
            .max(desc.size)
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let mut d = desc.clone();
        d.size = size;
        let label = desc.label.unwrap_or("buffer");
        let _limit = AddressSpaceLimit::tighten(size / 2);
        let r = gpu.scoped(
            || {
                format!(
                    "allocating buffer '{label}' ({}, injected fault)",
                    bytes(size)
                )
            },
            || gpu.device.create_buffer(&d),
        );
        drop(_limit);
        match r {
            Ok(_) => bail!(
                "injected out-of-memory did not fail: {} were allocated for '{label}' (no address-space limit on this platform?)",
                bytes(size)
            ),
            Err(e) => Err(e),
        }
    }
}

/// Lowers RLIMIT_AS to the current address-space size plus `headroom` until dropped.
struct AddressSpaceLimit {
    #[cfg(target_os = "linux")]
    old: Option<libc::rlimit>,
}

impl AddressSpaceLimit {
    #[cfg(target_os = "linux")]
    fn tighten(headroom: u64) -> AddressSpaceLimit {
        let vm = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmSize:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<u64>().ok())
            })
            .map(|kib| kib * 1024);
        let Some(vm) = vm else {
            return AddressSpaceLimit { old: None };
        };
        let mut old = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_AS, &mut old) != 0 {
                return AddressSpaceLimit { old: None };
            }
            let new = libc::rlimit {
                rlim_cur: libc::rlim_t::try_from(vm + headroom)
                    .unwrap_or(libc::RLIM_INFINITY)
                    .min(old.rlim_max),
                rlim_max: old.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &new) != 0 {
                return AddressSpaceLimit { old: None };
            }
        }
        AddressSpaceLimit { old: Some(old) }
    }

    #[cfg(not(target_os = "linux"))]
    fn tighten(_headroom: u64) -> AddressSpaceLimit {
        AddressSpaceLimit {}
    }
}

impl Drop for AddressSpaceLimit {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(old) = self.old {
            // SAFETY: as above.
            unsafe {
                libc::setrlimit(libc::RLIMIT_AS, &old);
            }
        }
    }
}

pub(crate) const SPIN_WGSL: &str = include_str!("../../../shaders/spin.wgsl");

/// Queues a single-invocation kernel that runs for about `secs` seconds (calibrated on the
/// device first), without waiting for it.
impl Gpu {
    pub(super) fn submit_spin(&self, secs: f64) -> Result<()> {
        let gpu = self;
        let pipeline = gpu.wgsl_pipeline("spin", SPIN_WGSL, &[])?;
        let state = gpu.upload("spin state", &[0x9e37_79b9u32, 0, 0, 0])?;
        // `dispatches` runs of `count` steps each, in one submission.
        let submit = |count: u32, dispatches: u32| -> Result<()> {
            let params =
                gpu.uniform_buffer("spin params", bytemuck::cast_slice(&[count, 0, 0, 0]))?;
            let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("spin"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: params.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: state.as_entire_binding(),
                    },
                ],
            });
            let mut enc = gpu.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind, &[]);
                for _ in 0..dispatches {
                    pass.dispatch_workgroups(1, 1, 1);
                }
            }
            gpu.queue.submit([enc.finish()]);
            Ok(())
        };
        // Calibrate with the wall clock (the first dispatch, which may include compiling the
        // kernel, is not counted): runs growing until one lasts 0.1 s.
        let timed = |count: u32| -> Result<f64> {
            let t0 = Instant::now();
            submit(count, 1)?;
            gpu.device
                .poll(wgpu::PollType::Wait {
                    submission_index: None,
                    timeout: Some(Duration::from_secs(60)),
                })
                .map_err(|e| anyhow::anyhow!("spin calibration: {e}"))?;
            Ok(t0.elapsed().as_secs_f64())
        };
        timed(1)?;
        if let Some(e) = gpu.take_error() {
            bail!("the spin kernel failed: {e}");
        }
        let mut count = 1u32 << 16;
        let mut took = timed(count)?;
        while took < 0.1 && count < (1 << 30) {
            count *= 4;
            took = timed(count)?;
        }
        // The fastest of three: a run slowed by other work on the machine (tests run side
        // by side) would make the spin too short to outlast the watchdog once that work ends.
        for _ in 0..2 {
            took = took.min(timed(count)?);
        }
        let runs = (secs / took.max(1e-6)).ceil().clamp(1.0, 1e6) as u32;
        submit(count, runs)
    }
}
