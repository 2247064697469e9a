//! Host <-> device transfer bandwidth, timed on the wall clock (a transfer's cost is what the
//! host waits for): host->device is `Queue::write_buffer` + submit + wait; device->host is a
//! copy into a mappable buffer, map, and a copy out into host memory.

use super::Ctx;
use super::executor::{self, Executor};
use super::measure;
use crate::figure::FigureKey;
use crate::measuring::gpu::context::map_read;
use crate::measuring::gpu::wgsl::KernelSource;
use crate::measuring::reference::Rng;
use crate::results::ProbeResult;
use anyhow::Result;

/// The host memory a copy is made from or into, where the executor offers a choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostMemory {
    /// Ordinary host memory (a Rust `Vec`).
    Pageable,
    /// Memory the runtime pinned (a mapped `CL_MEM_ALLOC_HOST_PTR` buffer).
    Pinned,
}

impl HostMemory {
    pub fn name(self) -> &'static str {
        match self {
            HostMemory::Pageable => "pageable",
            HostMemory::Pinned => "pinned",
        }
    }
}

/// One copy measured: its direction and, where the executor offers a choice, the host
/// memory it copies from or into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub to_device: bool,
    pub host: Option<HostMemory>,
}

impl Route {
    pub fn figure(self) -> FigureKey {
        if self.to_device {
            FigureKey::TransferToDevice
        } else {
            FigureKey::TransferToHost
        }
    }

    /// How the copied data is checked (the validation's detail).
    fn check(self) -> &'static str {
        if self.to_device {
            "device copy read back and compared bit for bit"
        } else {
            "last copy compared bit for bit with the uploaded data"
        }
    }
}

/// The copy size: `--array-mib`, else 64 MiB (quick) or 256 MiB, within `max_alloc`.
fn bytes_within(run: &super::RunCtx<'_>, max_alloc: u64) -> u64 {
    let want: u64 = run
        .array_bytes
        .unwrap_or(if run.quick { 64 << 20 } else { 256 << 20 });
    want.min(max_alloc) / 4096 * 4096
}

/// The GB/s, if the data arrived unchanged.
fn finish(
    res: ProbeResult,
    timing: measure::TimingInfo,
    bytes: u64,
    ok: bool,
    detail: String,
) -> ProbeResult {
    let error = if ok { 0.0 } else { 1.0 };
    let gbps = |t| bytes as f64 / t * 1e-9;
    super::judged_exactly(res, timing, gbps, (error, detail), |_| {
        "validation failed: data arrived changed".into()
    })
}

/// What the transfer method asks of an executor: a device buffer and host memory for one
/// route, one copy (waited for) at a time, and what arrived.
#[allow(async_fn_in_trait)]
pub trait TransferExecutor: Executor {
    /// The device buffer and host memory of one route.
    type Copy;
    /// The largest buffer a copy may use.
    fn max_alloc(&self) -> u64;
    /// The copies measured, in order.
    fn routes(&self) -> Vec<Route>;
    /// How `route` copies (the result's `path`).
    fn path(&self, route: Route) -> &'static str;
    /// The buffers for copying `data`: to the device, an empty device buffer (and `data`
    /// in the host memory copied from); to the host, `data` on the device.
    fn prepare(&self, route: Route, data: &[f32]) -> Result<Self::Copy>;
    /// One copy of `data` (to the device) or into the host memory (to the host), waited
    /// for.
    async fn copy(&self, c: &mut Self::Copy, data: &[f32]) -> Result<()>;
    /// What arrived: the device buffer read back (to the device), the host memory the last
    /// copy wrote (to the host).
    async fn arrived(&self, c: &mut Self::Copy) -> Result<Vec<f32>>;
}

/// One route's copies of fresh data under the run's plan, on the wall clock (what the host
/// waits for), checked bit for bit.
async fn measure_route<E: TransferExecutor>(
    exec: &E,
    route: Route,
    bytes: u64,
) -> Result<ProbeResult> {
    let mut res = ProbeResult::of(route.figure())
        .param("bytes", bytes)
        .param("path", exec.path(route));
    if let Some(m) = route.host {
        res = res.param("host_memory", m.name());
    }
    let data = Rng::fresh().fill_f32((bytes / 4) as usize);
    let mut c = exec.prepare(route, &data)?;
    let plan = exec.run_ctx().plan();
    let timing = executor::time_wall(exec, &plan, async || exec.copy(&mut c, &data).await).await?;
    let got = exec.arrived(&mut c).await?;
    let ok = got.len() == data.len()
        && got
            .iter()
            .zip(&data)
            .all(|(x, y)| x.to_bits() == y.to_bits());
    Ok(finish(res, timing, bytes, ok, route.check().into()))
}

/// Runs the probe on `exec`: one result per route.
pub async fn run_on<E: TransferExecutor>(exec: &E, emit: &mut dyn FnMut(ProbeResult)) {
    let bytes = bytes_within(exec.run_ctx(), exec.max_alloc());
    for route in exec.routes() {
        let f = route.figure();
        let host = route
            .host
            .map_or(String::new(), |m| format!(", {}", m.name()));
        let what = format!("{} ({} MiB{host})", f.info().label, bytes >> 20);
        super::step(exec, emit, f, &what, measure_route(exec, route, bytes)).await;
    }
}

/// A route's buffers on wgpu: to the device, the storage buffer written; to the host, the
/// source, the mappable staging buffer and the bytes the last copy brought out.
pub enum WgpuCopy {
    ToDevice {
        buf: wgpu::Buffer,
        floats: usize,
    },
    ToHost {
        src: wgpu::Buffer,
        staging: wgpu::Buffer,
        last: Vec<u8>,
    },
}

/// Host->device is `Queue::write_buffer` + submit + wait; device->host a copy into a
/// mappable buffer, map, and a copy out into host memory.
impl TransferExecutor for Ctx<'_> {
    type Copy = WgpuCopy;

    fn max_alloc(&self) -> u64 {
        self.gpu.max_alloc(self.host.ram_bytes / 2)
    }
    fn routes(&self) -> Vec<Route> {
        [true, false]
            .map(|to_device| Route {
                to_device,
                host: None,
            })
            .to_vec()
    }
    fn path(&self, route: Route) -> &'static str {
        if route.to_device {
            "Queue::write_buffer + submit + wait"
        } else {
            "copy to MAP_READ buffer + map + copy out"
        }
    }
    fn prepare(&self, route: Route, data: &[f32]) -> Result<WgpuCopy> {
        let gpu = self.gpu;
        let bytes = (data.len() * 4) as u64;
        if route.to_device {
            let buf = gpu.storage_buffer("h2d", bytes)?;
            let floats = data.len();
            return Ok(WgpuCopy::ToDevice { buf, floats });
        }
        let src = gpu.upload("d2h source", data)?;
        let staging = gpu.staging_buffer("d2h staging", bytes)?;
        let last = Vec::new();
        Ok(WgpuCopy::ToHost { src, staging, last })
    }
    async fn copy(&self, c: &mut WgpuCopy, data: &[f32]) -> Result<()> {
        let gpu = self.gpu;
        match c {
            WgpuCopy::ToDevice { buf, .. } => {
                gpu.queue.write_buffer(buf, 0, bytemuck::cast_slice(data));
                gpu.queue.submit([]);
                gpu.wait().await
            }
            WgpuCopy::ToHost { src, staging, last } => {
                let bytes = staging.size();
                let mut enc = gpu.device.create_command_encoder(&Default::default());
                enc.copy_buffer_to_buffer(src, 0, staging, 0, bytes);
                gpu.queue.submit([enc.finish()]);
                *last = map_read(gpu, staging, bytes).await?;
                Ok(())
            }
        }
    }
    async fn arrived(&self, c: &mut WgpuCopy) -> Result<Vec<f32>> {
        match c {
            WgpuCopy::ToDevice { buf, floats } => self.gpu.read(buf, *floats).await,
            WgpuCopy::ToHost { last, .. } => Ok(bytemuck::pod_collect_to_vec(last)),
        }
    }
}

/// The transfer probe, as registered in `probes::REGISTRY`.
pub struct Transfer;

impl super::Probe for Transfer {
    fn name(&self) -> &'static str {
        "transfer"
    }
    fn about(&self) -> &'static str {
        "Host-to-device and device-to-host copies (GB/s)."
    }
    fn budget_share(&self) -> f64 {
        0.1
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[FigureKey::TransferToDevice, FigureKey::TransferToHost]
    }
    run_with_async_fn!(run_on);
    fn kernels(&self) -> Vec<KernelSource> {
        Vec::new()
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::cl_sources;

/// The same method on OpenCL: blocking `clEnqueueWriteBuffer` / `clEnqueueReadBuffer` from
/// pageable host memory (a Rust `Vec`) and from pinned host memory (a mapped
/// `CL_MEM_ALLOC_HOST_PTR` buffer, as vendors' bandwidth samples do), timed on the wall
/// clock, checked bit for bit. One result per direction and host memory.
#[cfg(not(target_arch = "wasm32"))]
mod on_opencl {
    /// Copies only: no program.
    pub(super) fn cl_sources() -> Vec<crate::measuring::gpu::opencl::ClSource> {
        Vec::new()
    }

    use super::*;
    use crate::measuring::gpu::opencl::{ClBuffer, Pinned};
    use crate::measuring::probes::ClCtx;

    /// The host memory copied from or into.
    pub enum Host<'a> {
        Pageable(Vec<f32>),
        Pinned(Pinned<'a>),
    }

    impl Host<'_> {
        fn floats(&mut self) -> &mut [f32] {
            match self {
                Host::Pageable(v) => v,
                Host::Pinned(p) => p.as_mut_slice(),
            }
        }
    }

    /// A route's device buffer and host memory.
    pub struct ClCopy<'a> {
        to_device: bool,
        dev: ClBuffer<f32>,
        host: Host<'a>,
    }

    impl<'a> TransferExecutor for ClCtx<'a> {
        type Copy = ClCopy<'a>;

        fn max_alloc(&self) -> u64 {
            self.cl.max_alloc(self.host.ram_bytes / 2)
        }
        fn routes(&self) -> Vec<Route> {
            let mut v = Vec::new();
            for to_device in [true, false] {
                for m in [HostMemory::Pageable, HostMemory::Pinned] {
                    v.push(Route {
                        to_device,
                        host: Some(m),
                    });
                }
            }
            v
        }
        fn path(&self, route: Route) -> &'static str {
            match (route.to_device, route.host == Some(HostMemory::Pinned)) {
                (true, false) => "clEnqueueWriteBuffer (blocking) from pageable host memory",
                (true, true) => "clEnqueueWriteBuffer (blocking) from pinned host memory",
                (false, false) => "clEnqueueReadBuffer (blocking) into pageable host memory",
                (false, true) => "clEnqueueReadBuffer (blocking) into pinned host memory",
            }
        }
        fn prepare(&self, route: Route, data: &[f32]) -> Result<ClCopy<'a>> {
            let cl: &'a _ = self.cl;
            let mut host = match route.host {
                Some(HostMemory::Pinned) => Host::Pinned(cl.pinned_host(data.len())?),
                _ => Host::Pageable(vec![0.0f32; data.len()]),
            };
            let dev = if route.to_device {
                cl.buffer::<f32>("transfer", data.len())?
            } else {
                cl.upload("transfer", data)?
            };
            if route.to_device {
                host.floats().copy_from_slice(data);
            }
            let to_device = route.to_device;
            Ok(ClCopy {
                to_device,
                dev,
                host,
            })
        }
        async fn copy(&self, c: &mut ClCopy<'a>, _data: &[f32]) -> Result<()> {
            if c.to_device {
                self.cl.write_from(&mut c.dev, c.host.floats())
            } else {
                self.cl.read_into(&c.dev, c.host.floats())
            }
        }
        async fn arrived(&self, c: &mut ClCopy<'a>) -> Result<Vec<f32>> {
            if c.to_device {
                self.cl.read(&c.dev, c.dev.len)
            } else {
                Ok(c.host.floats().to_vec())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measuring::probes::executor::mock;
    use crate::model::TimingMethod;
    use crate::results::Status;

    /// The copies on the host: what arrives is what was sent, but for `corrupt` (one float
    /// of every copy with its sign flipped).
    struct Kernels {
        routes: Vec<Route>,
        corrupt: bool,
    }

    type Mock = mock::Device<Kernels>;

    impl TransferExecutor for Mock {
        /// What the last copy delivered.
        type Copy = Vec<f32>;
        fn max_alloc(&self) -> u64 {
            1 << 20
        }
        fn routes(&self) -> Vec<Route> {
            self.routes.clone()
        }
        fn path(&self, route: Route) -> &'static str {
            if route.to_device {
                "mock up"
            } else {
                "mock down"
            }
        }
        fn prepare(&self, _route: Route, _data: &[f32]) -> Result<Vec<f32>> {
            // Each measurement replays the script from its start.
            self.clock.next.set(0);
            Ok(Vec::new())
        }
        async fn copy(&self, c: &mut Vec<f32>, data: &[f32]) -> Result<()> {
            *c = data.to_vec();
            if self.corrupt {
                c[3] = -c[3];
            }
            Ok(())
        }
        async fn arrived(&self, c: &mut Vec<f32>) -> Result<Vec<f32>> {
            Ok(c.clone())
        }
    }

    fn mock(per_iter_s: &[f64], routes: Vec<Route>, corrupt: bool) -> Mock {
        let mut m = mock::Device::new(mock::plan(5, 8), per_iter_s, Kernels { routes, corrupt });
        m.run.array_bytes = Some(3 << 20);
        m
    }

    /// Both directions, as wgpu measures them.
    fn both() -> Vec<Route> {
        [true, false]
            .map(|to_device| Route {
                to_device,
                host: None,
            })
            .to_vec()
    }

    fn results(m: &Mock) -> Vec<ProbeResult> {
        let mut out = Vec::new();
        pollster::block_on(run_on(m, &mut |r| out.push(r)));
        out
    }

    #[test]
    fn known_times_give_the_bandwidth_and_the_warm_up_is_not_counted() {
        let m = mock(&[1.0, 0.004, 0.002, 0.001, 0.003, 0.008], both(), false);
        let r = results(&m);
        assert_eq!(r.len(), 2);
        // --array-mib 3 within the 1 MiB the device allows.
        let bytes = f64::from(1 << 20);
        for p in &r {
            assert_eq!(p.status, Status::Ok, "{}: {:?}", p.name, p.reason);
            assert_eq!(p.params["bytes"], 1 << 20);
            let v = p.value.as_ref().unwrap();
            assert_eq!(v.n, 5);
            assert!((v.median - bytes / 0.003 * 1e-9).abs() < 1e-9, "{v:?}");
            assert!((v.max - bytes / 0.001 * 1e-9).abs() < 1e-9);
            assert!((v.min - bytes / 0.008 * 1e-9).abs() < 1e-9);
            let t = p.timing.as_ref().unwrap();
            assert_eq!((t.warmup_runs, t.iters_per_sample), (1, 1));
            assert_eq!(t.samples_s, vec![0.004, 0.002, 0.001, 0.003, 0.008]);
            assert_eq!(t.method, TimingMethod::WallClock);
        }
        assert_eq!(r[0].name, "transfer host->device");
        assert_eq!(r[0].params["path"], "mock up");
        assert!(!r[0].params.contains_key("host_memory"));
        assert_eq!(m.clock.batches.borrow().len(), 12);
        let said = m.said.borrow();
        assert_eq!(
            said[..],
            [
                "transfer host->device (1 MiB)",
                "transfer device->host (1 MiB)"
            ]
        );
    }

    #[test]
    fn a_corrupted_copy_fails_with_no_figure() {
        let r = results(&mock(&[0.01], both(), true));
        let details = [
            "device copy read back and compared bit for bit",
            "last copy compared bit for bit with the uploaded data",
        ];
        assert_eq!(r.len(), 2);
        for (p, detail) in r.iter().zip(details) {
            mock::assert_failed(p, detail, "validation failed: data arrived changed");
            assert_eq!(p.validation.as_ref().unwrap().error, 1.0);
        }
    }

    #[test]
    fn the_host_memory_is_said_and_recorded() {
        let pinned = Route {
            to_device: false,
            host: Some(HostMemory::Pinned),
        };
        let m = mock(&[0.01], vec![pinned], false);
        let r = results(&m);
        assert_eq!(r[0].status, Status::Ok);
        let keys: Vec<&str> = r[0].params.keys().map(String::as_str).collect();
        assert_eq!(keys, ["bytes", "host_memory", "path"]);
        assert_eq!(r[0].params["host_memory"], "pinned");
        assert_eq!(
            m.said.borrow()[..],
            ["transfer device->host (1 MiB, pinned)"]
        );
    }
}
