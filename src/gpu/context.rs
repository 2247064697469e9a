//! A device opened on one adapter with the adapter's own limits, plus the buffer helpers
//! every probe uses (upload, poison, read back, bind groups over windows of a buffer).

use super::adapter::AdapterSummary;
use anyhow::{Context as _, Result, anyhow};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Gpu {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: AdapterSummary,
    /// The limits the device was created with (the adapter's own).
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    /// Set when wgpu reports an uncaptured error (validation, out of memory): the probe that
    /// was running is then marked failed rather than trusted.
    error_flag: Arc<AtomicBool>,
    /// The first error since the last `take_error`.
    last_error: Arc<std::sync::Mutex<Option<String>>>,
}

impl Gpu {
    /// Opens the adapter with all of its limits and the optional features the probes can use.
    pub fn open(adapter: wgpu::Adapter, info: AdapterSummary) -> Result<Gpu> {
        let limits = adapter.limits();
        Self::open_with_limits(adapter, info, limits)
    }

    /// Opens the adapter with the given limits (tests lower them to exercise code paths
    /// that large devices would take, such as bind windows).
    pub fn open_with_limits(
        adapter: wgpu::Adapter,
        info: AdapterSummary,
        limits: wgpu::Limits,
    ) -> Result<Gpu> {
        let wanted = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::SHADER_F64
            | wgpu::Features::SHADER_F16
            | wgpu::Features::SUBGROUP;
        let features = adapter.features() & wanted;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gpuvalue"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::default(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .with_context(|| format!("could not open a device on adapter {info}"))?;
        let error_flag = Arc::new(AtomicBool::new(false));
        let last_error = Arc::new(std::sync::Mutex::new(None));
        {
            let flag = error_flag.clone();
            let last = last_error.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                flag.store(true, Ordering::SeqCst);
                // Keep the first error: later ones are usually its consequences.
                if let Ok(mut l) = last.lock()
                    && l.is_none()
                {
                    *l = Some(format!("{e:#}"));
                }
            }));
        }
        Ok(Gpu {
            adapter,
            device,
            queue,
            info,
            limits,
            features,
            error_flag,
            last_error,
        })
    }

    pub fn has(&self, f: wgpu::Features) -> bool {
        self.features.contains(f)
    }

    /// Returns and clears the last uncaptured wgpu error, if any happened since the last call.
    pub fn take_error(&self) -> Option<String> {
        if self.error_flag.swap(false, Ordering::SeqCst) {
            let msg = self
                .last_error
                .lock()
                .ok()
                .and_then(|mut l| l.take())
                .unwrap_or_else(|| "unknown wgpu error".into());
            Some(msg)
        } else {
            None
        }
    }

    /// Waits until all submitted work is done.
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| anyhow!("device poll failed: {e}"))?;
        Ok(())
    }

    pub fn storage_buffer(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    pub fn uniform_buffer(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (bytes.len() as u64).max(16).next_multiple_of(16),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buf, 0, bytes);
        buf
    }

    /// A storage buffer holding `data`.
    pub fn upload<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> wgpu::Buffer {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let buf = self.storage_buffer(label, bytes.len() as u64);
        self.queue.write_buffer(&buf, 0, bytes);
        buf
    }

    /// Fills a buffer with a repeated 32-bit pattern (NaN for floats), so that any element a
    /// kernel fails to write is caught by validation.
    pub fn poison(&self, buf: &wgpu::Buffer, word: u32) {
        let n = (buf.size() / 4) as usize;
        // Write in chunks to bound host memory for very large buffers.
        let chunk_words = (16 << 20) / 4;
        let pattern = vec![word; n.min(chunk_words)];
        let mut off = 0usize;
        while off < n {
            let len = (n - off).min(chunk_words);
            self.queue
                .write_buffer(buf, (off * 4) as u64, bytemuck::cast_slice(&pattern[..len]));
            off += len;
        }
    }

    /// Copies `len` bytes from `offset` of a storage buffer back to the host.
    pub fn read_bytes(&self, buf: &wgpu::Buffer, offset: u64, len: u64) -> Result<Vec<u8>> {
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: len,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buf, offset, &staging, 0, len);
        self.queue.submit([enc.finish()]);
        map_read(self, &staging, len)
    }

    pub fn read<T: bytemuck::Pod>(&self, buf: &wgpu::Buffer, count: usize) -> Result<Vec<T>> {
        let bytes = self.read_bytes(buf, 0, (count * std::mem::size_of::<T>()) as u64)?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// Largest single buffer the probes may allocate: the adapter's limit, and never more
    /// than a quarter of host memory (a software adapter's "device memory" is host memory).
    pub fn max_alloc(&self, host_ram_bytes: u64) -> u64 {
        let mut m = self.limits.max_buffer_size;
        if host_ram_bytes > 0 {
            m = m.min(host_ram_bytes / 4);
        }
        m
    }
}

/// Maps a MAP_READ buffer, waits, and copies `len` bytes out.
pub fn map_read(gpu: &Gpu, staging: &wgpu::Buffer, len: u64) -> Result<Vec<u8>> {
    let slice = staging.slice(0..len);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    gpu.wait()?;
    rx.recv()
        .map_err(|_| anyhow!("buffer map callback never ran"))?
        .map_err(|e| anyhow!("could not map buffer for reading: {e}"))?;
    let out = slice
        .get_mapped_range()
        .map_err(|e| anyhow!("mapped range: {e:?}"))?
        .to_vec();
    staging.unmap();
    Ok(out)
}

/// Splits `total` workgroups into an (x, y) grid within the per-dimension limit. Kernels
/// recover the linear id as `y * x_count + x` and ignore ids past `total`.
pub fn fold_workgroups(total: u32, max_per_dim: u32) -> (u32, u32) {
    if total <= max_per_dim {
        (total.max(1), 1)
    } else {
        let y = total.div_ceil(max_per_dim);
        let x = total.div_ceil(y);
        (x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::fold_workgroups;

    #[test]
    fn folding_covers_every_workgroup_within_limits() {
        for &(total, max) in &[
            (1u32, 65535u32),
            (65535, 65535),
            (65536, 65535),
            (1 << 20, 65535),
        ] {
            let (x, y) = fold_workgroups(total, max);
            assert!(x <= max && y <= max);
            assert!(x as u64 * y as u64 >= total as u64);
            // No more than one extra row of idle workgroups.
            assert!((x as u64) * (y as u64) < total as u64 + x as u64);
        }
    }
}
