//! A device opened on one adapter with the adapter's own limits, plus the buffer helpers
//! every probe uses (upload, poison, read back, bind groups over windows of a buffer).

use super::adapter::AdapterSummary;
use super::fault::{self, Fault};
use crate::clock::Instant;
use anyhow::{Context as _, Result, anyhow, bail};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Whether wgpu adds its runtime checks to a kernel: bounds checks on every index and a
/// bound on every loop. `Off` is for kernels whose indices are in range for every dispatch
/// the host makes (matrices padded to whole tiles, dispatches sized to the padded matrix,
/// loops bounded by constants or by uniform values the host sets within the padded sizes);
/// a results file records, per kernel, which it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuntimeChecks {
    On,
    Off,
}

impl RuntimeChecks {
    /// `On` unless `trusted` (the run allows unchecked kernels and this one is proven).
    pub fn unless(trusted: bool) -> RuntimeChecks {
        if trusted {
            RuntimeChecks::Off
        } else {
            RuntimeChecks::On
        }
    }
}

/// A WGSL kernel to build: source, entry point, override constants, layout (derived from
/// the shader when None) and runtime checks.
#[derive(Clone, Copy)]
pub struct KernelSpec<'a> {
    pub label: &'a str,
    pub source: &'a str,
    pub entry: &'a str,
    pub constants: &'a [(&'a str, f64)],
    pub layout: Option<&'a wgpu::PipelineLayout>,
    pub checks: RuntimeChecks,
}

impl<'a> KernelSpec<'a> {
    /// `main` of `source`, no constants, a derived layout, runtime checks on.
    pub fn new(label: &'a str, source: &'a str) -> KernelSpec<'a> {
        KernelSpec {
            label,
            source,
            entry: "main",
            constants: &[],
            layout: None,
            checks: RuntimeChecks::On,
        }
    }
}

pub struct Gpu {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: AdapterSummary,
    /// The limits the device was created with (the adapter's own).
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    /// WGSL language features the shader compiler takes: all of them natively (naga), what
    /// the browser lists on the web (the page sets it).
    pub wgsl: wgpu::WgslLanguageFeatures,
    /// Set when wgpu reports an uncaptured error (validation, out of memory): the probe that
    /// was running is then marked failed rather than trusted.
    error_flag: Arc<AtomicBool>,
    /// The first error since the last `take_error`.
    last_error: Arc<Mutex<Option<String>>>,
    /// Why the device was lost, once it has been (set by wgpu's device-lost callback).
    lost: Arc<Mutex<Option<String>>>,
    /// Set when a wait ran past the watchdog: work is still queued and the device cannot be
    /// trusted with more until it drains.
    wedged: Mutex<Option<String>>,
    /// The watchdog: every wait on the device is bounded.
    watchdog: Mutex<Option<Watchdog>>,
    /// A fault armed for testing (`--inject-fault`); fired by the next operation it targets.
    armed: Mutex<Option<Fault>>,
    /// On the web, error scopes resolve later (a promise each): what each scope guarded and
    /// its pops, awaited by `settle` (see `scoped`).
    #[cfg(target_arch = "wasm32")]
    pending: std::cell::RefCell<Vec<PendingScope>>,
}

/// Error scopes popped but not yet resolved (the web), with the text their error gets.
#[cfg(target_arch = "wasm32")]
struct PendingScope {
    what: String,
    oom: super::signal::LocalBoxFuture<'static, Option<wgpu::Error>>,
    others: [super::signal::LocalBoxFuture<'static, Option<wgpu::Error>>; 2],
}

/// Bounds on waiting for the device: a single wait, and the whole probe.
#[derive(Clone, Copy, Debug)]
pub struct Watchdog {
    /// Longest one wait for submitted work may take.
    pub wait: Duration,
    /// When the probe must be over, and the limit it came from.
    pub probe_end: Instant,
    pub probe: Duration,
}

impl Watchdog {
    pub fn new(wait: Duration, probe: Duration) -> Watchdog {
        Watchdog {
            wait,
            probe_end: Instant::now() + probe,
            probe,
        }
    }
}

/// What stopped a device from being usable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Halt {
    /// The device was lost (driver reset, removal, or `destroy`).
    Lost(String),
    /// A wait ran past the watchdog; the queued work may still finish.
    Wedged(String),
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Halt::Lost(m) | Halt::Wedged(m) => f.write_str(m),
        }
    }
}

/// A device on `adapter` with `limits` and the optional features the probes can use that it
/// offers, and those features. A driver that offers cooperative matrices (experimental) but
/// refuses the device with them is asked again without (the coop probe then says it is
/// unsupported).
async fn request_device(
    adapter: &wgpu::Adapter,
    limits: &wgpu::Limits,
) -> Result<(wgpu::Device, wgpu::Queue, wgpu::Features), wgpu::RequestDeviceError> {
    let wanted = wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::SHADER_F64
        | wgpu::Features::SHADER_F16
        | wgpu::Features::SUBGROUP
        | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
    let mut features = adapter.features() & wanted;
    let request = |features: wgpu::Features| {
        let coop = features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gpuvalue"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: if coop {
                // SAFETY: wgpu marks cooperative matrices experimental (their validation
                // is incomplete). They are asked for only where the adapter offers them,
                // and only the matmul_coop probe uses them, on shapes the adapter lists;
                // its output is checked against the CPU like every figure.
                unsafe { wgpu::ExperimentalFeatures::enabled() }
            } else {
                wgpu::ExperimentalFeatures::default()
            },
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        })
    };
    let opened = match request(features).await {
        Err(_) if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) => {
            features.remove(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
            request(features).await
        }
        r => r,
    };
    opened.map(|(device, queue)| (device, queue, features))
}

/// The flag an uncaptured error sets and the first such error's text.
fn watch_errors(device: &wgpu::Device) -> (Arc<AtomicBool>, Arc<Mutex<Option<String>>>) {
    let error_flag = Arc::new(AtomicBool::new(false));
    let last_error = Arc::new(Mutex::new(None));
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
    (error_flag, last_error)
}

/// Why the device was lost, once it is: the first reason the driver gave.
fn watch_loss(device: &wgpu::Device) -> Arc<Mutex<Option<String>>> {
    let lost = Arc::new(Mutex::new(None));
    let slot = lost.clone();
    device.set_device_lost_callback(move |reason, msg| {
        if let Ok(mut l) = slot.lock() {
            l.get_or_insert_with(|| {
                let why = match reason {
                    wgpu::DeviceLostReason::Destroyed => "destroyed",
                    _ => "lost by the driver",
                };
                if msg.is_empty() {
                    format!("device lost ({why})")
                } else {
                    format!("device lost ({why}): {msg}")
                }
            });
        }
    });
    lost
}

impl Gpu {
    /// Opens the adapter with all of its limits and the optional features the probes can use.
    pub async fn open(adapter: wgpu::Adapter, info: AdapterSummary) -> Result<Gpu> {
        let limits = adapter.limits();
        Self::open_with_limits(adapter, info, limits).await
    }

    /// Opens the adapter with the given limits (tests lower them to exercise code paths
    /// that large devices would take, such as bind windows).
    pub async fn open_with_limits(
        adapter: wgpu::Adapter,
        info: AdapterSummary,
        limits: wgpu::Limits,
    ) -> Result<Gpu> {
        let (device, queue, features) = request_device(&adapter, &limits)
            .await
            .with_context(|| format!("could not open a device on adapter {info}"))?;
        let (error_flag, last_error) = watch_errors(&device);
        let lost = watch_loss(&device);
        Ok(Gpu {
            adapter,
            device,
            queue,
            info,
            limits,
            features,
            wgsl: wgpu::WgslLanguageFeatures::all(),
            error_flag,
            last_error,
            lost,
            wedged: Mutex::new(None),
            watchdog: Mutex::new(None),
            armed: Mutex::new(None),
            #[cfg(target_arch = "wasm32")]
            pending: Default::default(),
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

    /// Why the device cannot be used any more, if it cannot.
    pub fn halted(&self) -> Option<Halt> {
        if let Some(m) = self.lost.lock().ok().and_then(|l| l.clone()) {
            return Some(Halt::Lost(m));
        }
        self.wedged
            .lock()
            .ok()
            .and_then(|w| w.clone())
            .map(Halt::Wedged)
    }

    fn check_usable(&self) -> Result<()> {
        match self.halted() {
            Some(h) => Err(anyhow!("{h}")),
            None => Ok(()),
        }
    }

    /// Bounds every later wait: work not finished in time fails the wait (and marks the
    /// device wedged). `None` waits without bound.
    pub fn set_watchdog(&self, w: Option<Watchdog>) {
        if let Ok(mut g) = self.watchdog.lock() {
            *g = w;
        }
    }

    fn watchdog(&self) -> Option<Watchdog> {
        self.watchdog.lock().ok().and_then(|w| *w)
    }

    /// Arms a fault for testing: the next operation of its kind fires it.
    pub fn arm(&self, fault: Option<Fault>) {
        if let Ok(mut a) = self.armed.lock() {
            *a = fault;
        }
    }

    /// The fault still armed (one that the probe never reached).
    pub fn armed(&self) -> Option<Fault> {
        self.armed.lock().ok().and_then(|a| *a)
    }

    /// Takes the armed fault if it is one of `kinds`.
    fn fire(&self, kinds: &[Fault]) -> Option<Fault> {
        let mut a = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        a.take_if(|f| kinds.contains(f))
    }

    /// Waits until all submitted work is done, within the watchdog.
    pub async fn wait(&self) -> Result<()> {
        self.check_usable()?;
        let wd = self.watchdog();
        #[cfg(not(target_arch = "wasm32"))]
        self.fire_wait_fault(wd)?;
        // The wait ends at the single-wait limit or the probe's end, whichever is first.
        let bound = wd.map(|w| {
            let to_end = w.probe_end.saturating_duration_since(Instant::now());
            (
                w.wait.min(to_end).max(Duration::from_millis(1)),
                to_end <= w.wait,
            )
        });
        // Native: a bounded blocking poll, so the future is ready at its first poll.
        #[cfg(not(target_arch = "wasm32"))]
        let res = self.device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: bound.map(|(b, _)| b),
        });
        // The web: `poll` does nothing there; the queue's promise says when the work is done.
        #[cfg(target_arch = "wasm32")]
        let res = {
            let (tx, rx) = super::signal::signal();
            self.queue.on_submitted_work_done(move || tx.send(()));
            let done = match bound {
                Some((b, _)) => crate::clock::timeout(b, rx).await,
                None => Some(rx.await),
            };
            // A timeout comes first (it marks the device wedged below); scope errors are
            // settled only once the work is done.
            match done {
                Some(_) => {
                    self.settle().await?;
                    Ok(())
                }
                None => Err(wgpu::PollError::Timeout),
            }
        };
        // A lost device may also show up as a poll error: report the loss, it is the cause.
        self.check_usable()?;
        match res {
            Ok(_) => Ok(()),
            Err(wgpu::PollError::Timeout) => {
                let msg = match (wd, bound) {
                    (Some(w), Some((_, true))) => format!(
                        "watchdog: the probe was still waiting on the GPU {:.0} s after it started (--probe-timeout {})",
                        w.probe.as_secs_f64(),
                        w.probe.as_secs_f64()
                    ),
                    (Some(w), _) => format!(
                        "watchdog: submitted GPU work had not finished after {} s (--wait-timeout {})",
                        w.wait.as_secs_f64(),
                        w.wait.as_secs_f64()
                    ),
                    _ => "watchdog: GPU work did not finish in time".to_string(),
                };
                if let Ok(mut w) = self.wedged.lock() {
                    w.get_or_insert(msg.clone());
                }
                bail!(msg)
            }
            #[allow(unreachable_patterns)]
            Err(e) => bail!("device poll failed: {e}"),
        }
    }

    /// Fires an armed fault that targets a wait (`--inject-fault`, native only).
    #[cfg(not(target_arch = "wasm32"))]
    fn fire_wait_fault(&self, wd: Option<Watchdog>) -> Result<()> {
        match self.fire(&[Fault::Panic, Fault::Lost, Fault::Hang, Fault::Stuck]) {
            Some(Fault::Panic) => panic!("injected fault: panic inside a probe"),
            // What a driver reset does to a device with work in flight.
            Some(Fault::Lost) => self.device.destroy(),
            Some(f) => {
                // Longer than whichever watchdog bound comes first.
                let bound = wd.map_or(2.0, |w| w.wait.min(w.probe).as_secs_f64());
                let times = if f == Fault::Stuck { 30.0 } else { 3.0 };
                self.submit_spin((bound * times).max(1.0))?;
            }
            None => {}
        }
        Ok(())
    }

    /// Resolves the error scopes the web left pending (see `scoped`): the first error, with
    /// what was being done. Native scopes resolve at once, so there is nothing to do.
    pub async fn settle(&self) -> Result<()> {
        #[cfg(target_arch = "wasm32")]
        {
            let pending = std::mem::take(&mut *self.pending.borrow_mut());
            let mut first = None;
            for p in pending {
                let [v, i] = p.others;
                let (v, i, o) = (v.await, i.await, p.oom.await);
                if first.is_some() {
                    continue;
                }
                if let Some(e) = o {
                    first = Some(anyhow!("out of memory {}: {}", p.what, one_line(&e)));
                } else if let Some(e) = v.or(i) {
                    first = Some(anyhow!("{}: {}", p.what, one_line(&e)));
                }
            }
            if let Some(e) = first {
                // What wgpu reported uncaptured meanwhile (the failed object used in a pass)
                // is this error's consequence: clear it, or the next kernel would be blamed.
                let _ = self.take_error();
                return Err(e);
            }
        }
        Ok(())
    }

    /// After a watchdog fired: waits up to `limit` for the queued work to finish. On success
    /// the device is usable again.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn drain(&self, limit: Duration) -> bool {
        if self.lost.lock().ok().is_some_and(|l| l.is_some()) {
            return false;
        }
        let ok = self
            .device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(limit),
            })
            .is_ok();
        if ok && let Ok(mut w) = self.wedged.lock() {
            *w = None;
        }
        ok
    }

    /// Runs `f` inside wgpu error scopes (out of memory, validation, internal) and turns a
    /// captured error into an `Err` that says what was being done.
    pub fn scoped<T>(&self, what: impl FnOnce() -> String, f: impl FnOnce() -> T) -> Result<T> {
        self.check_usable()?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        // The web resolves scopes later, through promises: the pops take effect now and their
        // errors are awaited by the next `settle` (every wait and read settles first), so a
        // bad allocation or kernel still fails the step that made it.
        #[cfg(target_arch = "wasm32")]
        {
            let (v, i, o) = (validation.pop(), internal.pop(), oom.pop());
            self.pending.borrow_mut().push(PendingScope {
                what: what(),
                oom: Box::pin(o),
                others: [Box::pin(v), Box::pin(i)],
            });
            Ok(out)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let v = pollster::block_on(validation.pop());
            let i = pollster::block_on(internal.pop());
            let o = pollster::block_on(oom.pop());
            if let Some(e) = o {
                bail!("out of memory {}: {}", what(), one_line(&e));
            }
            if let Some(e) = v.or(i) {
                bail!("{}: {}", what(), one_line(&e));
            }
            Ok(out)
        }
    }

    /// A buffer, created inside error scopes: an allocation the device cannot satisfy is an
    /// error naming the buffer and its size, not a poisoned handle.
    pub fn create_buffer(&self, desc: &wgpu::BufferDescriptor<'_>) -> Result<wgpu::Buffer> {
        let label = desc.label.unwrap_or("buffer");
        #[cfg(not(target_arch = "wasm32"))]
        if self.fire(&[Fault::Oom]).is_some() {
            return self.failing_allocation(desc);
        }
        self.scoped(
            || format!("allocating buffer '{label}' ({})", fault::bytes(desc.size)),
            || self.device.create_buffer(desc),
        )
    }

    /// A compute pipeline from WGSL: the module and the pipeline are built inside one set
    /// of error scopes, so a WGSL diagnostic or a kernel the adapter rejects is an error
    /// naming the kernel, here, not a message on some later call.
    pub fn kernel(&self, k: &KernelSpec<'_>) -> Result<wgpu::ComputePipeline> {
        let mut constants = k.constants.to_vec();
        let injected = self.fire(&[Fault::Compile]).is_some();
        if injected {
            // An override the shader does not declare: the pipeline is rejected by wgpu's
            // own validation, exactly as an override value the adapter refuses would be.
            constants.push(("gpuvalue_injected_fault", 1.0));
        }
        let what = || {
            let fault = if injected { " (injected fault)" } else { "" };
            format!("building kernel '{}'{fault}", k.label)
        };
        let pipeline = self.scoped(what, || {
            let desc = wgpu::ShaderModuleDescriptor {
                label: Some(k.label),
                source: wgpu::ShaderSource::Wgsl(k.source.into()),
            };
            let module = match k.checks {
                RuntimeChecks::On => self.device.create_shader_module(desc),
                // SAFETY: only kernels whose every index was shown in range for every
                // dispatch the host makes ask for this (see `RuntimeChecks::Off`).
                RuntimeChecks::Off => unsafe {
                    self.device
                        .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
                },
            };
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(k.label),
                    layout: k.layout,
                    module: &module,
                    entry_point: Some(k.entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
        })?;
        if let Some(e) = self.take_error() {
            bail!("kernel '{}' failed to build: {e}", k.label);
        }
        Ok(pipeline)
    }

    /// The pipeline of a WGSL module's `main`, its layout derived from the shader, with
    /// these override constants and wgpu's runtime checks on.
    pub fn wgsl_pipeline(
        &self,
        label: &str,
        source: &str,
        constants: &[(&str, f64)],
    ) -> Result<wgpu::ComputePipeline> {
        self.kernel(&KernelSpec {
            constants,
            ..KernelSpec::new(label, source)
        })
    }

    /// A bind group for group 0 of `pipeline`: each buffer bound whole at its binding.
    pub fn bind(
        &self,
        pipeline: &wgpu::ComputePipeline,
        entries: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let e: Vec<wgpu::BindGroupEntry> = entries
            .iter()
            .map(|(binding, buf)| wgpu::BindGroupEntry {
                binding: *binding,
                resource: buf.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &e,
        })
    }

    pub fn storage_buffer(&self, label: &str, size: u64) -> Result<wgpu::Buffer> {
        self.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    pub fn uniform_buffer(&self, label: &str, bytes: &[u8]) -> Result<wgpu::Buffer> {
        let buf = self.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (bytes.len() as u64).max(16).next_multiple_of(16),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })?;
        self.queue.write_buffer(&buf, 0, bytes);
        Ok(buf)
    }

    /// A storage buffer holding `data`.
    pub fn upload<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> Result<wgpu::Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let buf = self.storage_buffer(label, bytes.len() as u64)?;
        self.queue.write_buffer(&buf, 0, bytes);
        Ok(buf)
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

    /// A buffer of `size` bytes a copy can fill and the host can map to read
    /// (`map_read`).
    pub fn staging_buffer(&self, label: &str, size: u64) -> Result<wgpu::Buffer> {
        self.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Copies `len` bytes from `offset` of a storage buffer back to the host.
    pub async fn read_bytes(&self, buf: &wgpu::Buffer, offset: u64, len: u64) -> Result<Vec<u8>> {
        let staging = self.staging_buffer("readback", len)?;
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buf, offset, &staging, 0, len);
        self.queue.submit([enc.finish()]);
        map_read(self, &staging, len).await
    }

    pub async fn read<T: bytemuck::Pod>(&self, buf: &wgpu::Buffer, count: usize) -> Result<Vec<T>> {
        let bytes = self
            .read_bytes(buf, 0, (count * std::mem::size_of::<T>()) as u64)
            .await?;
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

    /// Device memory the allocator holds for live resources, where the backend reports it
    /// (Vulkan, DX12): `(bytes, allocations)`. Finished work is retired first, so resources
    /// dropped by the probes are counted as freed.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn memory_in_use(&self) -> Option<(u64, usize)> {
        if self.halted().is_some() {
            return None;
        }
        // Writes queued with `write_buffer` but never submitted (a probe stopped between
        // filling and dispatching) keep their buffers alive until the next submission.
        self.queue.submit(std::iter::empty());
        let _ = self.device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(Duration::from_secs(5)),
        });
        self.device
            .generate_allocator_report()
            .map(|r| (r.total_allocated_bytes, r.allocations.len()))
    }
}

/// wgpu's multi-line error text ("Validation Error / Caused by: / In ... / reason") as one
/// line, for a probe's reason.
pub fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "Caused by:")
        .collect::<Vec<_>>()
        .join(": ")
}

/// Maps a MAP_READ buffer, waits, and copies `len` bytes out.
pub async fn map_read(gpu: &Gpu, staging: &wgpu::Buffer, len: u64) -> Result<Vec<u8>> {
    let mut out = vec![0u8; len as usize];
    map_read_into(gpu, staging, &mut out).await?;
    Ok(out)
}

/// Maps a MAP_READ buffer, waits, and copies its first `dst.len()` bytes into `dst` (host
/// memory the caller owns: one copy out, no allocation).
pub async fn map_read_into(gpu: &Gpu, staging: &wgpu::Buffer, dst: &mut [u8]) -> Result<()> {
    let slice = staging.slice(0..dst.len() as u64);
    let (tx, rx) = super::signal::signal();
    slice.map_async(wgpu::MapMode::Read, move |r| tx.send(r));
    gpu.wait().await?;
    #[cfg(target_arch = "wasm32")]
    let mapped = rx
        .await
        .ok_or_else(|| anyhow!("the buffer map was cancelled"))?;
    // The work is done, but when another thread polls the same device at the same time its
    // poll may be the one firing this callback: give it a moment (polling without blocking)
    // rather than calling a finished map unmapped.
    #[cfg(not(target_arch = "wasm32"))]
    let t0 = Instant::now();
    #[cfg(not(target_arch = "wasm32"))]
    let mapped = loop {
        match rx.try_take() {
            Some(r) => break r,
            None if t0.elapsed() < Duration::from_secs(5) => {
                let _ = gpu.device.poll(wgpu::PollType::Poll);
                std::thread::sleep(Duration::from_millis(1));
            }
            None => bail!("the device finished but the buffer was not mapped within 5 s"),
        }
    };
    mapped.map_err(|e| anyhow!("could not map buffer for reading: {e}"))?;
    // Unmapped on every path once mapped (the view dropped first).
    let copied = match slice.get_mapped_range() {
        Ok(view) => {
            dst.copy_from_slice(&view);
            Ok(())
        }
        Err(e) => Err(anyhow!("mapped range: {e:?}")),
    };
    staging.unmap();
    copied
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
