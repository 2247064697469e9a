//! One GPU's end of a host link, on either executor: a device buffer, a blocking copy into it
//! from host memory the caller owns, and a blocking copy out of it. Each runs on the thread
//! that opened the device (an OpenCL device's queue is not shared between threads).

use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::adapter::Adapter;
use crate::measuring::gpu::context::map_read_into;
use crate::model::AdapterSummary;
use anyhow::Result;

/// Copies between host memory and one device buffer of `floats` elements.
pub trait Link {
    /// Host to device: the whole buffer from `host`, returning once the device has it.
    fn put(&mut self, host: &[f32]) -> Result<()>;
    /// Device to host: the whole buffer into `host`, returning once the host has it.
    fn get(&mut self, host: &mut [f32]) -> Result<()>;
}

/// How each direction is copied, in words, per executor.
pub fn paths(info: &AdapterSummary) -> (&'static str, &'static str) {
    if info.backend == "opencl" {
        (
            "clEnqueueWriteBuffer (blocking) from pageable host memory",
            "clEnqueueReadBuffer (blocking) into pageable host memory",
        )
    } else {
        (
            "Queue::write_buffer + submit + wait from pageable host memory",
            "copy to a MAP_READ buffer + map + copy into pageable host memory",
        )
    }
}

/// Opens the adapter and allocates its buffer (and, on wgpu, the mappable staging buffer).
pub fn open(adapter: &Adapter, info: &AdapterSummary, floats: usize) -> Result<Box<dyn Link>> {
    match adapter {
        Adapter::Wgpu(a) => {
            let gpu = pollster::block_on(Gpu::open(a.clone(), info.clone()))?;
            let bytes = (floats * 4) as u64;
            let buf = gpu.storage_buffer("transfers", bytes)?;
            let staging = gpu.staging_buffer("transfers staging", bytes)?;
            Ok(Box::new(WgpuLink {
                gpu,
                buf,
                staging,
                bytes,
            }))
        }
        #[cfg(not(target_arch = "wasm32"))]
        Adapter::OpenCl(d) => {
            let cl = crate::measuring::gpu::opencl::ClGpu::open((**d).clone(), info.clone())?;
            let buf = cl.buffer::<f32>("transfers", floats)?;
            Ok(Box::new(ClLink { cl, buf }))
        }
    }
}

struct WgpuLink {
    gpu: Gpu,
    buf: wgpu::Buffer,
    staging: wgpu::Buffer,
    bytes: u64,
}

impl Link for WgpuLink {
    fn put(&mut self, host: &[f32]) -> Result<()> {
        self.gpu
            .queue
            .write_buffer(&self.buf, 0, bytemuck::cast_slice(host));
        self.gpu.queue.submit([]);
        pollster::block_on(self.gpu.wait())?;
        no_error(&self.gpu, "host-to-device copy")
    }

    fn get(&mut self, host: &mut [f32]) -> Result<()> {
        let mut enc = self.gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&self.buf, 0, &self.staging, 0, self.bytes);
        self.gpu.queue.submit([enc.finish()]);
        pollster::block_on(map_read_into(
            &self.gpu,
            &self.staging,
            bytemuck::cast_slice_mut(host),
        ))?;
        no_error(&self.gpu, "device-to-host copy")
    }
}

/// An error wgpu reported during the copy fails it.
fn no_error(gpu: &Gpu, what: &str) -> Result<()> {
    match gpu.take_error() {
        Some(e) => anyhow::bail!("{what}: {e}"),
        None => Ok(()),
    }
}

#[cfg(not(target_arch = "wasm32"))]
struct ClLink {
    cl: crate::measuring::gpu::opencl::ClGpu,
    buf: crate::measuring::gpu::opencl::ClBuffer<f32>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Link for ClLink {
    fn put(&mut self, host: &[f32]) -> Result<()> {
        self.cl.write_from(&mut self.buf, host)
    }

    fn get(&mut self, host: &mut [f32]) -> Result<()> {
        self.cl.read_into(&self.buf, host)
    }
}
