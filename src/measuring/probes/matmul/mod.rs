//! FP32 matrix multiply: kernel configurations, the autotuner, and the measured run.
//!
//! C = A * B, row-major, any M, N, K: the host zero-pads each matrix to the chosen tile's
//! multiples, so the kernels need no bounds checks (their indexing is in range by
//! construction) and may be built without runtime checks. GFLOPS count only the useful
//! 2*M*N*K operations, never the padding.

use super::Ctx;
use super::measure::{self, Plan, TimingInfo};
use crate::clock::Instant;
use crate::figure::FigureKey;
use crate::measuring::gpu::Gpu;
use crate::measuring::gpu::context::{KernelSpec, RuntimeChecks};
use crate::measuring::gpu::wgsl::{KernelSource, WgslSource};
use crate::measuring::reference::{self, Dims, MatmulCheck, Rng, View};
use crate::results::{ProbeResult, Status, Validation};
use crate::stats::Summary;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

mod config;
mod inputs;
pub use config::*;
use inputs::*;

const ROWS_WGSL: &str = include_str!("../../../../shaders/matmul_rows.wgsl");
const TILED_WGSL: &str = include_str!("../../../../shaders/matmul_tiled.wgsl");
const SUBGROUP_WGSL: &str = include_str!("../../../../shaders/matmul_subgroup.wgsl");
const PACK_WGSL: &str = include_str!("../../../../shaders/pack_panels.wgsl");
const PACK_TEXTURE_WGSL: &str = include_str!("../../../../shaders/pack_texture.wgsl");

/// Relative Frobenius error above which an f32 product is wrong (random inputs in [-1, 1]
/// give ~1e-7 to 1e-6 for K up to several thousand).
pub const F32_TOLERANCE: f64 = 1e-4;

/// Compiled pipelines, one per configuration, reused across sizes.
#[derive(Default)]
pub struct PipelineCache {
    map: HashMap<MatmulConfig, wgpu::ComputePipeline>,
    pack: HashMap<&'static str, wgpu::ComputePipeline>,
}

impl PipelineCache {
    /// `pack_rows` (A into row panels) or `pack_texture` (B into a texture).
    fn pack(&mut self, gpu: &Gpu, entry: &'static str) -> Result<&wgpu::ComputePipeline> {
        if !self.pack.contains_key(entry) {
            let (source, entry_point) = match entry {
                "pack_texture" => (PACK_TEXTURE_WGSL, "main"),
                _ => (PACK_WGSL, entry),
            };
            let p = gpu.kernel(&KernelSpec {
                entry: entry_point,
                ..KernelSpec::new(entry, source)
            })?;
            self.pack.insert(entry, p);
        }
        Ok(&self.pack[entry])
    }

    fn get(&mut self, gpu: &Gpu, cfg: &MatmulConfig) -> Result<&wgpu::ComputePipeline> {
        if !self.map.contains_key(cfg) {
            let constants = cfg.constants();
            let source = cfg.source();
            // Unchecked when trusted: the host pads every matrix to the tile's multiples and
            // sizes the dispatch to the padded matrix, so every index the kernel forms is in
            // range; the k loop runs to a uniform the host sets within the padded K (the
            // register-block loops have constant trip counts).
            let pipeline = gpu
                .kernel(&KernelSpec {
                    constants: &constants,
                    checks: RuntimeChecks::unless(cfg.trusted),
                    ..KernelSpec::new("matmul", &source)
                })
                .map_err(|e| e.context(format!("kernel {}", cfg.label())))?;
            self.map.insert(cfg.clone(), pipeline);
        }
        Ok(&self.map[cfg])
    }
}

/// One measured run of one configuration at one size.
#[derive(Clone, Debug)]
pub struct MatmulRun {
    pub config: MatmulConfig,
    pub dims: Dims,
    pub padded: Dims,
    pub timing: TimingInfo,
    pub gflops: Summary,
    pub check: MatmulCheck,
}

impl MatmulRun {
    pub fn valid(&self) -> bool {
        self.check.worst() <= F32_TOLERANCE
    }
}

/// Options that only tests use.
#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    /// Overwrite one element of C after the timed runs, before validation.
    pub corrupt_output: bool,
}

/// One configuration set up on the device for given inputs: what a timed pass encodes.
pub struct Prepared {
    /// The padded size the buffers hold.
    pub padded: Dims,
    /// The output, `padded.m x padded.n`, row-major.
    pub c: wgpu::Buffer,
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    grid: (u32, u32),
    packed: Option<SubgroupInputs>,
    _inputs: [wgpu::Buffer; 3],
}

impl Prepared {
    /// Sets up `cfg` for A and B already padded to `padded(gpu, cfg, d)` (zeros outside
    /// `d`); C is poisoned with NaN.
    pub fn new(
        gpu: &Gpu,
        cache: &mut PipelineCache,
        cfg: &MatmulConfig,
        d: Dims,
        a: &[f32],
        b: &[f32],
    ) -> Result<Prepared> {
        let (p, grid) = padded_grid(gpu, cfg, d)?;
        if a.len() != p.m * p.k || b.len() != p.k * p.n {
            bail!("inputs are not padded to {}x{}x{}", p.m, p.n, p.k);
        }
        let abuf = gpu.upload("A", a)?;
        let bbuf = gpu.upload("B", b)?;
        let cbuf = gpu.storage_buffer("C", (p.m * p.n * 4) as u64)?;
        gpu.poison(&cbuf, f32::NAN.to_bits());
        let k_stop = (p.k as u32).saturating_sub(cfg.k_skip);
        let ubuf = gpu.uniform_buffer(
            "dims",
            bytemuck::cast_slice(&[p.m as u32, p.n as u32, p.k as u32, k_stop]),
        )?;
        // The subgroup kernel reads A packed in row panels and B from a texture; the packing
        // runs inside the timed pass, so every timed iteration starts from the row-major
        // inputs.
        let packed = if cfg.kernel == KernelKind::Subgroup {
            Some(pack_subgroup_inputs(gpu, cache, cfg, p, &abuf, &bbuf)?)
        } else {
            None
        };
        let (a_res, b_res) = match &packed {
            Some(s) => (
                s.a_packed.as_entire_binding(),
                wgpu::BindingResource::TextureView(&s.b_view),
            ),
            None => (abuf.as_entire_binding(), bbuf.as_entire_binding()),
        };
        let pipeline = cache.get(gpu, cfg)?.clone();
        let bind = matmul_bind_group(gpu, &pipeline, [a_res, b_res], &cbuf, &ubuf);
        Ok(Prepared {
            padded: p,
            c: cbuf,
            pipeline,
            bind,
            grid,
            packed,
            _inputs: [abuf, bbuf, ubuf],
        })
    }

    /// Encodes one product (with its packing steps) into `pass`.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>) {
        let packs: &[PackStep] = self.packed.as_ref().map_or(&[], |s| &s.steps);
        for step in packs {
            pass.set_pipeline(&step.pipeline);
            pass.set_bind_group(0, &step.bind, &[]);
            pass.dispatch_workgroups(step.groups.0, step.groups.1, 1);
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind, &[]);
        pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
    }
}

/// The size `cfg` pads `d` to (refused where the adapter cannot run it).
pub fn padded(gpu: &Gpu, cfg: &MatmulConfig, d: Dims) -> Result<Dims> {
    Ok(padded_grid(gpu, cfg, d)?.0)
}

/// Runs one configuration at one size: fresh random inputs, poisoned output, timed batches,
/// validation against the CPU.
pub async fn run_config(
    gpu: &Gpu,
    timer: &crate::measuring::gpu::Timer<'_>,
    cache: &mut PipelineCache,
    cfg: &MatmulConfig,
    d: Dims,
    plan: &Plan,
    faults: Faults,
) -> Result<MatmulRun> {
    let p = padded(gpu, cfg, d)?;
    let mut rng = Rng::fresh();
    let (a, b) = random_inputs(d, p, &mut rng);
    let prepared = Prepared::new(gpu, cache, cfg, d, &a, &b)?;
    let timing = measure::measure(plan, &|| timer.method(), async |iters| {
        timer
            .time_pass(&mut |pass| {
                for _ in 0..iters {
                    prepared.encode(pass);
                }
            })
            .await
    })
    .await?;
    let cbuf = &prepared.c;
    if faults.corrupt_output {
        let idx = (d.m / 2) * p.n + d.n / 2;
        gpu.queue
            .write_buffer(cbuf, (idx * 4) as u64, bytemuck::bytes_of(&1.0e3f32));
    }
    let c: Vec<f32> = gpu.read(cbuf, p.m * p.n).await?;
    let check = reference::check_matmul(
        d,
        View { data: &a, ld: p.k },
        View { data: &b, ld: p.n },
        View { data: &c, ld: p.n },
        &mut rng,
    );
    let flops = 2.0 * d.m as f64 * d.n as f64 * d.k as f64;
    let gflops = timing.figure(|t| flops / t * 1e-9);
    Ok(MatmulRun {
        config: cfg.clone(),
        dims: d,
        padded: p,
        timing,
        gflops,
        check,
    })
}

/// Run step 1: refuses sizes and kernels the adapter cannot run, pads the sizes to the
/// kernel's tile and returns them with the dispatch grid.
fn padded_grid(gpu: &Gpu, cfg: &MatmulConfig, d: Dims) -> Result<(Dims, (u32, u32))> {
    if d.m == 0 || d.n == 0 || d.k == 0 {
        bail!(
            "matrix sizes must be at least 1, got {}x{}x{}",
            d.m,
            d.n,
            d.k
        );
    }
    if let Some(why) = cfg.unfit_reason(&gpu.limits) {
        bail!("kernel {}: {why}", cfg.label());
    }
    let (bm, bn, bk) = cfg.tile();
    let p = Dims {
        m: d.m.next_multiple_of(bm as usize),
        n: d.n.next_multiple_of(bn as usize),
        k: d.k.next_multiple_of(bk.max(4) as usize),
    };
    check_fits(gpu, p)?;
    if cfg.kernel == KernelKind::Subgroup {
        let lim = gpu.limits.max_texture_dimension_2d as usize;
        if p.n / 4 > lim || p.k > lim {
            bail!(
                "the subgroup kernel reads B as a {}x{} texture; the adapter's max_texture_dimension_2d is {lim}",
                p.n / 4,
                p.k
            );
        }
    }
    let gx = (p.n / bn as usize) as u32;
    let gy = (p.m / bm as usize) as u32;
    let maxwg = gpu.limits.max_compute_workgroups_per_dimension;
    if gx > maxwg || gy > maxwg {
        bail!(
            "{}x{}x{} needs {gx}x{gy} workgroups; the adapter's max_compute_workgroups_per_dimension is {maxwg}",
            d.m,
            d.n,
            d.k
        );
    }
    Ok((p, (gx, gy)))
}

/// Refuses sizes whose buffers exceed the adapter's binding or buffer limits, naming the limit.
pub fn check_fits(gpu: &Gpu, p: Dims) -> Result<()> {
    // Checked: in a release build `2147483648 * 2147483648 * 4` wraps to 0 bytes.
    let bytes = |a: usize, b: usize| {
        (a as u64)
            .checked_mul(b as u64)
            .and_then(|x| x.checked_mul(4))
    };
    let biggest = [bytes(p.m, p.k), bytes(p.k, p.n), bytes(p.m, p.n)]
        .into_iter()
        .try_fold(0u64, |acc, b| b.map(|b| acc.max(b)));
    let Some(biggest) = biggest else {
        bail!(
            "a {}x{}x{} matmul needs a matrix buffer larger than 2^64 bytes",
            p.m,
            p.n,
            p.k
        );
    };
    let bind = gpu.limits.max_storage_buffer_binding_size;
    let buf = gpu.limits.max_buffer_size;
    if biggest > bind.min(buf) {
        let (what, lim) = if bind <= buf {
            ("max_storage_buffer_binding_size", bind)
        } else {
            ("max_buffer_size", buf)
        };
        bail!(
            "a {}x{}x{} matmul needs a {} MiB matrix buffer; the adapter's {what} is {} MiB",
            p.m,
            p.n,
            p.k,
            biggest >> 20,
            lim >> 20
        );
    }
    Ok(())
}

/// A tuning trial as recorded in the results file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Trial {
    pub config: String,
    pub gflops_median: Option<f64>,
    #[serde(default)]
    pub gflops_max: Option<f64>,
    pub error: Option<f64>,
    pub valid: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Trial {
    /// A candidate that gave no figure (not tried, or its run failed), and why.
    fn without_figure(cfg: &MatmulConfig, note: String) -> Trial {
        Trial {
            config: cfg.label(),
            gflops_median: None,
            gflops_max: None,
            error: None,
            valid: false,
            note: Some(note),
        }
    }
}

/// Tries each candidate briefly at size `d` and returns the fastest valid one with the
/// trials. Invalid or failing configurations are recorded and never chosen.
pub async fn autotune(
    gpu: &Gpu,
    timer: &crate::measuring::gpu::Timer<'_>,
    cache: &mut PipelineCache,
    cands: &[MatmulConfig],
    d: Dims,
    deadline: Instant,
) -> (Option<MatmulConfig>, Vec<Trial>) {
    let mut plan = Plan {
        warmup: std::time::Duration::ZERO,
        min_warmup_runs: 2,
        target_sample: std::time::Duration::from_millis(5),
        samples: 5,
        max_iters: 64,
        abandon_above_s: None,
    };
    let flops = 2.0 * d.m as f64 * d.n as f64 * d.k as f64;
    let mut best: Option<(f64, MatmulConfig)> = None;
    let mut trials = Vec::new();
    for (i, cfg) in cands.iter().enumerate() {
        // A candidate whose warm-up run is 4x slower than the best so far is dropped.
        plan.abandon_above_s = best.as_ref().map(|(g, _)| 4.0 * flops / (g * 1e9));
        // Try candidates until one is valid; then stop when the time budget is spent, the
        // device stopped working, or the user interrupted.
        if i > 0
            && (best.is_some() && Instant::now() > deadline
                || gpu.halted().is_some()
                || crate::interrupt::requested())
        {
            trials.push(Trial::without_figure(
                cfg,
                "not tried: time budget spent".into(),
            ));
            continue;
        }
        match run_config(gpu, timer, cache, cfg, d, &plan, Faults::default()).await {
            Ok(run) => {
                let valid = run.valid();
                trials.push(Trial {
                    config: cfg.label(),
                    gflops_median: Some(run.gflops.median),
                    gflops_max: Some(run.gflops.max),
                    error: Some(run.check.worst()),
                    valid,
                    note: (!valid).then(|| "validation failed".to_string()),
                });
                // Ranked by the best sample: short trials on a busy machine are noisy, and
                // the fastest sample is the least disturbed one.
                if valid && best.as_ref().is_none_or(|(g, _)| run.gflops.max > *g) {
                    best = Some((run.gflops.max, cfg.clone()));
                }
            }
            Err(e) => {
                // The web reports a failed build later: let it surface here, with its trial.
                let _ = gpu.settle().await;
                trials.push(Trial::without_figure(cfg, format!("{e:#}")));
            }
        }
    }
    (best.map(|(_, c)| c), trials)
}

/// Parses a size: `N` (square) or `MxNxK`.
pub fn parse_size(s: &str) -> Result<Dims, String> {
    let parts: Vec<&str> = s.trim().split(['x', 'X']).collect();
    let nums: Result<Vec<usize>, _> = parts.iter().map(|p| p.trim().parse::<usize>()).collect();
    let nums = nums.map_err(|_| format!("`{s}`: expected N or MxNxK with positive integers"))?;
    let d = match nums.as_slice() {
        [n] => Dims {
            m: *n,
            n: *n,
            k: *n,
        },
        [m, n, k] => Dims {
            m: *m,
            n: *n,
            k: *k,
        },
        _ => return Err(format!("`{s}`: expected N or MxNxK")),
    };
    if d.m == 0 || d.n == 0 || d.k == 0 {
        return Err(format!("`{s}`: sizes must be at least 1"));
    }
    Ok(d)
}

/// The probe: autotune and measure at each size, one result per size.
/// What the browser's candidate list lacks, said on its results.
const WEB_CANDIDATES_NOTE: &str = "subgroup kernel not offered: wgpu's WebGPU backend does not pass subgroups through yet (gfx-rs/wgpu#10146)";

pub async fn run(ctx: &Ctx<'_>, emit: &mut dyn FnMut(ProbeResult)) {
    let gpu = ctx.gpu;
    let mut cache = PipelineCache::default();
    let mut cands = candidates(gpu);
    for c in &mut cands {
        c.trusted = ctx.trusted;
    }
    let explicit = ctx.sizes.clone();
    let sizes: Vec<Dims> = explicit.clone().unwrap_or_else(|| default_sizes(ctx.quick));
    let mut last_run_s: Option<(f64, usize)> = None;
    for (si, d) in sizes.iter().copied().enumerate() {
        if ctx.halted() {
            break;
        }
        let mut res = ProbeResult::sized(FigureKey::MatmulF32, d.m, d.n, d.k);
        // Default sizes stop where the adapter's limits or the time budget end.
        if explicit.is_none() {
            if let Err(e) = check_fits(gpu, d) {
                res = res.with_status(
                    Status::Skipped,
                    format!("beyond the adapter's limits: {e:#}"),
                );
                emit(res);
                break;
            }
            if let Some((secs, n)) = last_run_s {
                let scale = (d.m * d.n * d.k) as f64 / (n as f64).powi(3);
                let projected = secs * scale * (ctx.plan.samples as f64 + 6.0);
                // A quick run measures every default size, with less when it is behind.
                if si > 0
                    && !ctx.quick
                    && Instant::now() + std::time::Duration::from_secs_f64(projected) > ctx.deadline
                {
                    res = res.with_status(
                        Status::Skipped,
                        format!("time budget: projected {projected:.0} s for this size"),
                    );
                    emit(res);
                    break;
                }
            }
        }
        (ctx.progress)(&format!("matmul {}x{}x{}: autotuning", d.m, d.n, d.k));
        // Tune every candidate at the first size; later sizes re-try the best three that came
        // within half of the best.
        // A quick run behind its budget tries candidates only until one is valid.
        let tune_until = Instant::now()
            + (ctx.deadline.saturating_duration_since(Instant::now()) / 3).min(
                std::time::Duration::from_secs(if ctx.quick { 15 } else { 60 }),
            );
        let (chosen, trials) = autotune(gpu, ctx.timer, &mut cache, &cands, d, tune_until).await;
        let all_cands = cands.clone();
        let mut ranked: Vec<(f64, MatmulConfig)> = trials
            .iter()
            .zip(&cands)
            .filter(|(t, _)| t.valid)
            .filter_map(|(t, c)| t.gflops_max.map(|g| (g, c.clone())))
            .collect();
        ranked.sort_by(|x, y| y.0.total_cmp(&x.0));
        if let Some(&(top, _)) = ranked.first() {
            cands = ranked
                .into_iter()
                .filter(|(g, _)| *g >= 0.5 * top)
                .take(3)
                .map(|(_, c)| c)
                .collect();
        }
        res.autotune = trials
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        let Some(cfg) = chosen else {
            emit(res.no_valid_configuration());
            continue;
        };
        // The chosen kernel's own trial median, shown beside the final figure: the tuner
        // ranks by each trial's best sample, which reads higher than a median.
        let trial_median = trials
            .iter()
            .zip(&all_cands)
            .find(|(_, c)| **c == cfg)
            .and_then(|(t, _)| t.gflops_median);
        (ctx.progress)(&format!("matmul {}x{}x{}: measuring", d.m, d.n, d.k));
        match run_config(gpu, ctx.timer, &mut cache, &cfg, d, &ctx.plan(), ctx.faults).await {
            Ok(run) => {
                last_run_s = Some((run.timing.time_per_iter_s.median, d.m * d.n * d.k));
                let mut r = finish(res, run);
                if gpu.info.backend == "webgpu" {
                    r = r.param("candidates_note", WEB_CANDIDATES_NOTE);
                }
                emit(match trial_median {
                    Some(t) => r.param("tuning_trial_median", t),
                    None => r,
                });
            }
            Err(e) => emit(res.with_status(Status::Failed, format!("{e:#}"))),
        }
    }
}

/// The sizes measured when `--sizes` is not given: 256, 512 (quick), on to 16384 (full, as
/// far as the limits and the budget allow).
fn default_sizes(quick: bool) -> Vec<Dims> {
    let max = if quick { 512 } else { 16384 };
    let mut v = Vec::new();
    let mut n = 256;
    while n <= max {
        v.push(Dims { m: n, n, k: n });
        n *= 2;
    }
    v
}

/// The validation record of an FP32 matmul, on either executor.
fn validation(check: &MatmulCheck, m: usize) -> Validation {
    Validation {
        metric: "relative_frobenius".into(),
        error: check.worst(),
        tolerance: F32_TOLERANCE,
        passed: check.worst() <= F32_TOLERANCE,
        detail: Some(format!(
            "{} of {} rows checked exactly (rel. Frobenius {:.2e}); Freivalds check over all rows {:.2e}; {} non-finite elements",
            check.rows_checked, m, check.rel_frobenius, check.freivalds, check.non_finite
        )),
    }
}

fn finish(mut res: ProbeResult, run: MatmulRun) -> ProbeResult {
    let valid = run.valid();
    res.kernel = serde_json::to_value(&run.config).ok().map(|mut v| {
        if let Some(o) = v.as_object_mut() {
            o.insert("label".into(), run.config.label().into());
            o.insert(
                "padded".into(),
                serde_json::json!([run.padded.m, run.padded.n, run.padded.k]),
            );
        }
        v
    });
    let mut validation = validation(&run.check, run.dims.m);
    validation.passed = valid;
    res.timing = Some(run.timing);
    res.validated(validation, run.gflops, Validation::tolerance_exceeded)
}

/// The matmul probe, as registered in `probes::REGISTRY`.
pub struct Matmul;

impl super::Probe for Matmul {
    fn name(&self) -> &'static str {
        "matmul"
    }
    fn about(&self) -> &'static str {
        "Tiled FP32 matrix multiply, autotuned per adapter and size (GFLOPS)."
    }
    fn budget_share(&self) -> f64 {
        0.45
    }
    fn figures(&self) -> &'static [FigureKey] {
        &[FigureKey::MatmulF32]
    }
    run_with_async_fn!(opencl);
    fn kernels(&self) -> Vec<KernelSource> {
        kernel_variants()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_block_expands_to_straight_line_code() {
        let src = expand_register_block(ROWS_WGSL, 2, 2, 1);
        assert!(
            !src.lines().any(|l| l.trim_start().starts_with("//@")),
            "{src}"
        );
        for placeholder in ["{m}", "{j}", "{kk}", "{lane}", "{r}", "{s}"] {
            assert!(!src.contains(placeholder), "{placeholder} left in {src}");
        }
        assert_eq!(src.matches("var acc_").count(), 4);
        // 4 k steps x 2 column groups x 2 rows multiply-adds.
        assert_eq!(src.matches("= fma(").count(), 16);
        assert_eq!(src.matches("let b_").count(), 8);
        assert!(
            src.contains("acc_1_1 = fma(vec4<f32>(a_1.w), b_1, acc_1_1);"),
            "{src}"
        );
        if std::env::var_os("SHOW_KERNEL").is_some() {
            println!("{src}");
        }
        // The subgroup kernel: rows spread over the subgroup, one broadcast per row.
        let src = expand_register_block(SUBGROUP_WGSL, 16, 1, 8);
        assert_eq!(src.matches("let av_").count(), 2);
        assert_eq!(src.matches("subgroupBroadcast(av_1, 7u)").count(), 1);
        assert_eq!(src.matches("= fma(").count(), 16 * 4);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(
            parse_size("64"),
            Ok(Dims {
                m: 64,
                n: 64,
                k: 64
            })
        );
        assert_eq!(parse_size("2x3x4"), Ok(Dims { m: 2, n: 3, k: 4 }));
        assert!(parse_size("0").is_err());
        assert!(parse_size("2x3").is_err());
        assert!(parse_size("abc").is_err());
    }
}

#[cfg(not(target_arch = "wasm32"))]
use on_opencl::{cl_sources, run_cl};

/// The same method on OpenCL: the same sizes, random inputs, poisoned output, autotuning
/// (every candidate at the first size, the best three within half of the best after) and
/// check against the CPU; a tiled OpenCL C kernel with register blocks, tuned by -D options.
#[cfg(not(target_arch = "wasm32"))]
pub mod on_opencl;
