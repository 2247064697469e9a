//! The OpenCL executor: devices, a context and a profiling queue, OpenCL C programs built with
//! `-D` options, buffers, dispatches and their timing. It knows no probe: the probes (one
//! file each under `probes/`) hold the method and call this as they call `gpu::Gpu`.
//!
//! The ICD loader (`libOpenCL.so.1`) is loaded at run time by `opencl3`'s `dynamic` feature:
//! where it is absent the device list is empty, with the reason, and nothing else changes.
//! This is the path to GPUs no Vulkan driver reaches (AMD Instinct CDNA through ROCm's
//! runtime), and to PoCL, an OpenCL CPU device, which is labelled as the CPU like lavapipe.

pub mod device;

pub use device::{ClDevice, enumerate};

use crate::clock::Instant;
use crate::model::{AdapterSummary, TimingMethod, timestamps_agree};
use anyhow::{Result, bail};
use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE, ClMem};
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, cl_mem};
use std::cell::Cell;
use std::ptr;

/// One kernel argument.
pub enum Arg<'a> {
    Mem(cl_mem),
    U32(u32),
    I32(i32),
    F32(f32),
    /// `__local` memory of this many bytes.
    Local(usize),
    /// A by-value argument of any other type (a struct, a vector): its bytes.
    Bytes(&'a [u8]),
}

/// The commands one timed iteration enqueued, in order: the first one's event (where it is
/// not also the last) and the last one's.
pub struct Span {
    pub first: Option<Event>,
    pub last: Event,
}

impl Span {
    /// A span of two or more commands.
    pub fn of(first: Event, last: Event) -> Span {
        Span {
            first: Some(first),
            last,
        }
    }

    fn first(&self) -> &Event {
        self.first.as_ref().unwrap_or(&self.last)
    }
}

impl From<Event> for Span {
    fn from(last: Event) -> Span {
        Span { first: None, last }
    }
}

/// A buffer of `T` on the device, with its element count.
pub struct ClBuffer<T> {
    pub buf: Buffer<T>,
    pub len: usize,
}

impl<T> ClBuffer<T> {
    pub fn arg(&self) -> Arg<'static> {
        Arg::Mem(self.buf.get())
    }
}

/// An opened OpenCL device: context, an in-order queue with profiling, its summary.
pub struct ClGpu {
    pub info: AdapterSummary,
    pub device: ClDevice,
    pub context: Context,
    pub queue: CommandQueue,
    /// Set when profiling events disagreed with the wall clock: timed on the wall clock from
    /// then on, and said on every figure.
    fallback: Cell<Option<&'static str>>,
    /// Samples in a row whose events disagreed with the wall clock.
    strikes: Cell<u32>,
}

/// Why a run fell back to the wall clock.
pub const EVENTS_DISAGREE: &str = "OpenCL profiling events disagreed with the wall clock (zero, reversed, or far off); timed with the wall clock instead";

impl ClGpu {
    pub fn open(device: ClDevice, info: AdapterSummary) -> Result<ClGpu> {
        let context = Context::from_device(&device.device).map_err(|e| {
            anyhow::anyhow!("OpenCL: cannot create a context on {}: {e}", info.name)
        })?;
        // clCreateCommandQueueWithProperties (2.0+) where offered, else the 1.2 call.
        #[allow(deprecated)]
        let queue = if device.version_major() >= 2 {
            unsafe {
                CommandQueue::create_with_properties(
                    &context,
                    device.device.id(),
                    CL_QUEUE_PROFILING_ENABLE,
                    0,
                )
            }
        } else {
            unsafe { CommandQueue::create(&context, device.device.id(), CL_QUEUE_PROFILING_ENABLE) }
        }
        .map_err(|e| {
            anyhow::anyhow!(
                "OpenCL: cannot create a profiling queue on {}: {e}",
                info.name
            )
        })?;
        Ok(ClGpu {
            info,
            device,
            context,
            queue,
            fallback: Cell::new(None),
            strikes: Cell::new(0),
        })
    }

    /// How kernels are timed now: profiling events, or the wall clock after they disagreed.
    pub fn method(&self) -> TimingMethod {
        if self.fallback.get().is_some() {
            TimingMethod::WallClock
        } else {
            TimingMethod::ProfilingEvents
        }
    }

    pub fn fallback_reason(&self) -> Option<&'static str> {
        self.fallback.get()
    }

    /// Builds `src` as [`ClGpu::build`] does.
    pub fn build_source(&self, src: &ClSource) -> Result<Program> {
        self.build(&src.label, src.source, &src.defines)
    }

    /// Builds an OpenCL C program with `-D NAME=VALUE` options (and `extra` flags); the error
    /// carries the compiler's log.
    pub fn build(&self, label: &str, source: &str, defines: &[(&str, String)]) -> Result<Program> {
        let mut options: Vec<String> = defines.iter().map(|(k, v)| format!("-D {k}={v}")).collect();
        // OpenCL C 1.2 semantics everywhere (ROCm, NVIDIA and PoCL all accept them).
        options.push("-cl-std=CL1.2".into());
        let options = options.join(" ");
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(|e| anyhow::anyhow!("OpenCL: {label}: cannot create the program: {e}"))?;
        if let Err(e) = program.build(&[self.device.device.id()], &options) {
            let log = program
                .get_build_log(self.device.device.id())
                .unwrap_or_default();
            let log: String = log.lines().take(30).collect::<Vec<_>>().join("\n");
            bail!("OpenCL: {label} did not compile ({e}; options `{options}`):\n{log}");
        }
        Ok(program)
    }

    /// One kernel of a built program, with its arguments set.
    pub fn kernel(&self, program: &Program, name: &str, args: &[Arg<'_>]) -> Result<Kernel> {
        let k = Kernel::create(program, name)
            .map_err(|e| anyhow::anyhow!("OpenCL: kernel {name}: {e}"))?;
        self.set_args(&k, args)?;
        Ok(k)
    }

    pub fn set_args(&self, k: &Kernel, args: &[Arg<'_>]) -> Result<()> {
        for (i, a) in args.iter().enumerate() {
            let i = i as u32;
            // SAFETY: each argument is a plain value, a live cl_mem, or a local size; a
            // mismatch with the kernel's signature is reported by the runtime as an error.
            let r = unsafe {
                match a {
                    Arg::Mem(m) => k.set_arg(i, m),
                    Arg::U32(v) => k.set_arg(i, v),
                    Arg::I32(v) => k.set_arg(i, v),
                    Arg::F32(v) => k.set_arg(i, v),
                    Arg::Local(n) => k.set_arg_local_buffer(i, *n),
                    Arg::Bytes(b) => opencl3::kernel::set_kernel_arg(
                        k.get(),
                        i,
                        b.len(),
                        b.as_ptr() as *const std::ffi::c_void,
                    )
                    .map_err(Into::into),
                }
            };
            r.map_err(|e| anyhow::anyhow!("OpenCL: argument {i}: {e}"))?;
        }
        Ok(())
    }

    /// A device buffer of `len` elements.
    pub fn buffer<T>(&self, label: &str, len: usize) -> Result<ClBuffer<T>> {
        self.buffer_flags(label, len, CL_MEM_READ_WRITE)
    }

    /// A buffer the runtime allocates in host-accessible (pinned) memory.
    pub fn pinned_buffer<T>(&self, label: &str, len: usize) -> Result<ClBuffer<T>> {
        self.buffer_flags(label, len, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR)
    }

    fn buffer_flags<T>(&self, label: &str, len: usize, flags: u64) -> Result<ClBuffer<T>> {
        if len == 0 {
            bail!("OpenCL: {label}: empty buffer");
        }
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        if bytes > self.info.limits.max_buffer_size {
            bail!(
                "OpenCL: {label}: {} MiB is over the device's largest allocation ({} MiB)",
                bytes >> 20,
                self.info.limits.max_buffer_size >> 20
            );
        }
        // SAFETY: no host pointer is passed; the runtime allocates.
        let buf = unsafe { Buffer::<T>::create(&self.context, flags, len, ptr::null_mut()) }
            .map_err(|e| {
                anyhow::anyhow!("OpenCL: cannot allocate {label} ({} MiB): {e}", bytes >> 20)
            })?;
        Ok(ClBuffer { buf, len })
    }

    /// A buffer holding `data`.
    pub fn upload<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> Result<ClBuffer<T>> {
        let mut b = self.buffer(label, data.len())?;
        self.write(&mut b, data)?;
        Ok(b)
    }

    /// Blocking write of `data` at the start of `b`.
    pub fn write<T: bytemuck::Pod>(&self, b: &mut ClBuffer<T>, data: &[T]) -> Result<Event> {
        if data.len() > b.len {
            bail!("OpenCL: write of {} elements into {}", data.len(), b.len);
        }
        // SAFETY: the slice outlives the blocking call; sizes checked above.
        unsafe {
            self.queue
                .enqueue_write_buffer(&mut b.buf, CL_BLOCKING, 0, data, &[])
        }
        .map_err(|e| anyhow::anyhow!("OpenCL: write: {e}"))
    }

    /// Writes `data` into `b` from element `at` (blocking).
    pub fn write_at<T: bytemuck::Pod>(
        &self,
        b: &mut ClBuffer<T>,
        at: usize,
        data: &[T],
    ) -> Result<()> {
        if at + data.len() > b.len {
            bail!(
                "OpenCL: write of {} elements at {at} into {}",
                data.len(),
                b.len
            );
        }
        let offset = at * std::mem::size_of::<T>();
        // SAFETY: the slice outlives the blocking call; the range is checked above.
        unsafe {
            self.queue
                .enqueue_write_buffer(&mut b.buf, CL_BLOCKING, offset, data, &[])
        }
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("OpenCL: write: {e}"))
    }

    /// Fills every 32-bit word of `b` with `word` (poison before a run, so an unwritten
    /// element is caught).
    pub fn poison<T>(&self, b: &mut ClBuffer<T>, word: u32) -> Result<()> {
        let bytes = b.len * std::mem::size_of::<T>();
        let words = vec![word; bytes / 4];
        // SAFETY: as `write`, over the buffer's own byte length.
        unsafe {
            let ev = opencl3::command_queue::enqueue_write_buffer(
                self.queue.get(),
                b.buf.get(),
                CL_BLOCKING,
                0,
                (words.len() * 4).min(bytes),
                words.as_ptr() as *const std::ffi::c_void,
                0,
                ptr::null(),
            )
            .map_err(|e| anyhow::anyhow!("OpenCL: poison: {e}"))?;
            drop(Event::new(ev));
        }
        Ok(())
    }

    /// Blocking read of the first `count` elements.
    pub fn read<T: bytemuck::Pod + Default + Clone>(
        &self,
        b: &ClBuffer<T>,
        count: usize,
    ) -> Result<Vec<T>> {
        let mut out = vec![T::default(); count.min(b.len)];
        // SAFETY: `out` is sized within the buffer and outlives the blocking call.
        unsafe {
            self.queue
                .enqueue_read_buffer(&b.buf, CL_BLOCKING, 0, &mut out, &[])
        }
        .map_err(|e| anyhow::anyhow!("OpenCL: read: {e}"))?;
        Ok(out)
    }

    /// Enqueues one dispatch of `k` over `global` work-items (1-3 dimensions), in groups of
    /// `local` where given.
    pub fn dispatch(&self, k: &Kernel, global: &[usize], local: Option<&[usize]>) -> Result<Event> {
        if let Some(l) = local
            && l.len() != global.len()
        {
            bail!(
                "OpenCL: local size has {} dimensions, global {}",
                l.len(),
                global.len()
            );
        }
        // SAFETY: the sizes live for the call; the kernel's arguments were set.
        unsafe {
            self.queue.enqueue_nd_range_kernel(
                k.get(),
                global.len() as u32,
                ptr::null(),
                global.as_ptr(),
                local.map_or(ptr::null(), |l| l.as_ptr()),
                &[],
            )
        }
        .map_err(|e| anyhow::anyhow!("OpenCL: dispatch of {global:?} / {local:?}: {e}"))
    }

    /// Host memory the runtime pins (a `CL_MEM_ALLOC_HOST_PTR` buffer, mapped for reading
    /// and writing), `len` floats; unmapped and released when dropped.
    pub fn pinned_host(&self, len: usize) -> Result<Pinned<'_>> {
        let buf = self.pinned_buffer::<f32>("pinned host memory", len)?;
        let mut ptr: cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer; the pointer stays valid until unmapped
        // (in `Drop`), and `Pinned` borrows the queue for as long.
        unsafe {
            self.queue.enqueue_map_buffer(
                &buf.buf,
                CL_BLOCKING,
                opencl3::memory::CL_MAP_READ | opencl3::memory::CL_MAP_WRITE,
                0,
                len * 4,
                &mut ptr,
                &[],
            )
        }
        .map_err(|e| anyhow::anyhow!("OpenCL: cannot map pinned memory: {e}"))?;
        if ptr.is_null() {
            bail!("OpenCL: mapping pinned memory gave a null pointer");
        }
        Ok(Pinned {
            gpu: self,
            buf,
            ptr: ptr as *mut f32,
            len,
        })
    }

    /// Blocking copy of `host` into the start of `dev`.
    pub fn write_from(&self, dev: &mut ClBuffer<f32>, host: &[f32]) -> Result<()> {
        self.write(dev, host).map(drop)
    }

    /// Blocking copy of the start of `dev` into `host`.
    pub fn read_into(&self, dev: &ClBuffer<f32>, host: &mut [f32]) -> Result<()> {
        if host.len() > dev.len {
            bail!("OpenCL: read of {} elements from {}", host.len(), dev.len);
        }
        // SAFETY: `host` is within the buffer's size and outlives the blocking call.
        unsafe {
            self.queue
                .enqueue_read_buffer(&dev.buf, CL_BLOCKING, 0, host, &[])
        }
        .map_err(|e| anyhow::anyhow!("OpenCL: read: {e}"))
        .map(drop)
    }

    pub fn finish(&self) -> Result<()> {
        self.queue
            .finish()
            .map_err(|e| anyhow::anyhow!("OpenCL: waiting for the queue: {e}"))
    }

    /// Times `iters` enqueues of `enqueue` (each returns the span of the commands it
    /// enqueued) as one sample: from the first command's start to the last's end by profiling
    /// events, cross-checked against the wall clock around enqueue + finish under the same
    /// rule as GPU timestamps on wgpu.
    pub fn time(&self, iters: u32, enqueue: &mut dyn FnMut() -> Result<Span>) -> Result<f64> {
        let t0 = Instant::now();
        let first = enqueue()?;
        let mut last = None;
        for _ in 1..iters {
            last = Some(enqueue()?);
        }
        self.finish()?;
        let wall = t0.elapsed().as_secs_f64();
        if self.fallback.get().is_some() {
            return Ok(wall);
        }
        let last = last.as_ref().unwrap_or(&first);
        let start = first.first().profiling_command_start();
        let end = last.last.profiling_command_end();
        match (start, end) {
            (Ok(s), Ok(e)) => {
                let dev = e.wrapping_sub(s) as f64 * 1e-9;
                if std::env::var_os("GPUVALUE_DEBUG_EVENTS").is_some() {
                    eprintln!("events {dev:.6} s, wall {wall:.6} s ({iters} iterations)");
                }
                if e <= s || !timestamps_agree(dev, wall) {
                    // One sample can disagree for a reason of the host's (a thread descheduled
                    // between enqueue and finish): that sample takes the wall clock; three in
                    // a row mean the events themselves are off, and the wall clock times the
                    // rest of the run.
                    self.strikes.set(self.strikes.get() + 1);
                    if self.strikes.get() >= 3 {
                        self.fallback.set(Some(EVENTS_DISAGREE));
                    }
                    Ok(wall)
                } else {
                    self.strikes.set(0);
                    Ok(dev)
                }
            }
            _ => {
                self.fallback.set(Some(
                    "OpenCL profiling information not available; timed with the wall clock",
                ));
                Ok(wall)
            }
        }
    }

    /// Largest single allocation a probe may make, bounded by `host_cap` where the device's
    /// memory is the host's (a CPU device).
    pub fn max_alloc(&self, host_cap: u64) -> u64 {
        let l = self.info.limits.max_buffer_size;
        if self.info.software {
            l.min(host_cap)
        } else {
            l
        }
    }
}

/// Mapped, pinned host memory (see `ClGpu::pinned_host`).
pub struct Pinned<'g> {
    gpu: &'g ClGpu,
    buf: ClBuffer<f32>,
    ptr: *mut f32,
    len: usize,
}

impl Pinned<'_> {
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        // SAFETY: the mapping covers `len` floats and lives until `drop`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        // SAFETY: unmaps the pointer `pinned_host` mapped; nothing uses it afterwards.
        unsafe {
            let _ = self.gpu.queue.enqueue_unmap_mem_object(
                self.buf.buf.get(),
                self.ptr as *mut std::ffi::c_void,
                &[],
            );
        }
        let _ = self.gpu.finish();
    }
}

/// One OpenCL program as the executor builds it: its file under `shaders/opencl/`, the
/// source, and the `-D NAME=VALUE` options of one variant. Listed by
/// `Probe::opencl_kernels` (every variant a probe can pick) for offline compiles by the real
/// GPUs' compilers (`tests/it/kernels.rs`), without a device.
#[derive(Clone, Debug)]
pub struct ClSource {
    pub label: String,
    pub file: &'static str,
    pub source: &'static str,
    pub defines: Vec<(&'static str, String)>,
}

impl ClSource {
    pub fn new(
        label: impl Into<String>,
        file: &'static str,
        source: &'static str,
        defines: Vec<(&'static str, String)>,
    ) -> ClSource {
        ClSource {
            label: label.into(),
            file,
            source,
            defines,
        }
    }

    /// The options as the compiler is given them (`-D TS=64 -D WPT=8`).
    pub fn options(&self) -> Vec<String> {
        self.defines
            .iter()
            .map(|(k, v)| format!("-D{k}={v}"))
            .collect()
    }
}
