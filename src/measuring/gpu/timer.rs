//! Timing one batch of GPU work: GPU timestamp queries where the adapter has them, else the
//! wall clock around submit + wait. Timestamps are resolved in a separate encoder from the
//! copy-out (on Vulkan, resolving and copying in one encoder can read zeros).

use super::context::{Gpu, map_read};
use crate::clock::Instant;
pub use crate::model::TimingMethod;
use anyhow::{Result, bail};
use std::cell::Cell;

const SOFTWARE_NOTE: &str = "software adapter: timed with the wall clock (its timestamp queries were seen to miss dispatches)";

pub struct Timer<'g> {
    gpu: &'g Gpu,
    queries: Option<TimestampQueries>,
    /// Set when timestamps proved unusable (zero, negative, or longer than the wall clock):
    /// the timer then falls back to the wall clock and says why.
    fallback: Cell<Option<&'static str>>,
}

struct TimestampQueries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
    period_ns: f64,
}

impl<'g> Timer<'g> {
    /// A timer for `gpu`; `use_timestamps` false forces the wall clock.
    pub fn new(gpu: &'g Gpu, use_timestamps: bool) -> Timer<'g> {
        // Software adapters run on the host: the wall clock is the honest measure there, and
        // lavapipe's timestamps (Mesa 22.3) were seen to miss whole dispatches. The
        // portability matrix (.ci/matrix.sh) sets GPUVALUE_SOFTWARE_TIMESTAMPS=1 to run the
        // timestamp path, and its cross-check, where no GPU exists (SwiftShader, Mesa 25).
        let software = gpu.info.software && !software_timestamps_forced();
        let fallback = (use_timestamps && software && gpu.has(wgpu::Features::TIMESTAMP_QUERY))
            .then_some(SOFTWARE_NOTE);
        let use_timestamps = use_timestamps && !software;
        let queries = (use_timestamps && gpu.has(wgpu::Features::TIMESTAMP_QUERY)).then(|| {
            let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp staging"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            TimestampQueries {
                set,
                resolve,
                staging,
                period_ns: f64::from(gpu.queue.get_timestamp_period()),
            }
        });
        Timer {
            gpu,
            queries,
            fallback: Cell::new(fallback),
        }
    }

    pub fn method(&self) -> TimingMethod {
        if self.queries.is_some() && self.fallback.get().is_none() {
            TimingMethod::GpuTimestamps
        } else {
            TimingMethod::WallClock
        }
    }

    /// Why timestamps were abandoned, if they were.
    pub fn fallback_reason(&self) -> Option<&'static str> {
        self.fallback.get()
    }

    /// Records one compute pass in which `encode` issues the work, submits it, waits, and
    /// returns the elapsed seconds.
    pub async fn time_pass(
        &self,
        encode: &mut dyn FnMut(&mut wgpu::ComputePass<'_>),
    ) -> Result<f64> {
        let use_ts = self.method() == TimingMethod::GpuTimestamps;
        let q = self.queries.as_ref().filter(|_| use_ts);
        let mut enc = self.gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("timed pass"),
                timestamp_writes: q.map(|q| wgpu::ComputePassTimestampWrites {
                    query_set: &q.set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            encode(&mut pass);
        }
        let cmd = enc.finish();
        let t0 = Instant::now();
        self.gpu.queue.submit([cmd]);
        self.gpu.wait().await?;
        let wall = t0.elapsed().as_secs_f64();
        if let Some(err) = self.gpu.take_error() {
            bail!("wgpu reported an error during the timed work: {err}");
        }
        let Some(q) = q else {
            return Ok(wall);
        };
        let mut enc = self.gpu.device.create_command_encoder(&Default::default());
        enc.resolve_query_set(&q.set, 0..2, &q.resolve, 0);
        self.gpu.queue.submit([enc.finish()]);
        let mut enc = self.gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&q.resolve, 0, &q.staging, 0, 16);
        self.gpu.queue.submit([enc.finish()]);
        let raw = map_read(self.gpu, &q.staging, 16).await?;
        let ts: &[u64] = bytemuck::cast_slice(&raw);
        let gpu_s = (ts[1].wrapping_sub(ts[0])) as f64 * q.period_ns * 1e-9;
        // A timestamp pair that is zero, reversed, longer than the wall clock, or far shorter
        // than it on a long run (submit + wait costs well under a millisecond) is not
        // trustworthy: fall back to the wall clock from now on, and say so.
        if ts[1] <= ts[0] || !crate::model::timestamps_agree(gpu_s, wall) {
            self.fallback.set(Some(
                "GPU timestamps disagreed with the wall clock (zero, reversed, or far off); timed with the wall clock instead",
            ));
            return Ok(wall);
        }
        Ok(gpu_s)
    }
}

/// `GPUVALUE_SOFTWARE_TIMESTAMPS=1`: time software adapters with their timestamps too (the
/// test hook for the path every real GPU takes); never set by default.
fn software_timestamps_forced() -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::env::var("GPUVALUE_SOFTWARE_TIMESTAMPS").is_ok_and(|v| v == "1")
    }
    #[cfg(target_arch = "wasm32")]
    {
        false
    }
}
