//! The matmul kernels' configurations: kinds, tiles and register blocks, the WGSL each
//! expands to, and the candidates the autotuner tries on an adapter.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// Workgroup-memory tiles + register blocks: the classic GPU shape.
    Tiled,
    /// No workgroup memory; rows shared by the workgroup, uniform loads of A.
    Rows,
    /// No workgroup memory; rows of A loaded across a subgroup and broadcast.
    Subgroup,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatmulConfig {
    pub kernel: KernelKind,
    /// Rows per invocation (register block height).
    pub tm: u32,
    /// vec4 column groups per invocation (register block width is 4 * tn4).
    pub tn4: u32,
    pub wg_x: u32,
    pub wg_y: u32,
    /// K-tile depth (tiled kernel); 4 for the rows kernel.
    pub bk: u32,
    /// Subgroup size the kernel assumes (subgroup kernel only; 1 otherwise).
    #[serde(default = "one")]
    pub sg: u32,
    /// Built without runtime bounds checks (indexing proven in range by padding).
    pub trusted: bool,
    /// Test hook: stop this many K elements early, making a deliberately wrong kernel.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub k_skip: u32,
}

pub(super) fn one() -> u32 {
    1
}

pub(super) fn is_zero(x: &u32) -> bool {
    *x == 0
}

impl MatmulConfig {
    pub fn tiled(tm: u32, tn4: u32, wg_x: u32, wg_y: u32, bk: u32) -> Self {
        MatmulConfig {
            kernel: KernelKind::Tiled,
            tm,
            tn4,
            wg_x,
            wg_y,
            bk,
            sg: 1,
            trusted: true,
            k_skip: 0,
        }
    }

    pub fn subgroup(tm: u32, tn4: u32, wg: u32, sg: u32) -> Self {
        MatmulConfig {
            kernel: KernelKind::Subgroup,
            sg,
            ..Self::rows(tm, tn4, wg)
        }
    }

    pub fn rows(tm: u32, tn4: u32, wg: u32) -> Self {
        MatmulConfig {
            kernel: KernelKind::Rows,
            tm,
            tn4,
            wg_x: wg,
            wg_y: 1,
            bk: 4,
            sg: 1,
            trusted: true,
            k_skip: 0,
        }
    }

    /// Workgroup tile: (rows, columns, k-depth).
    pub fn tile(&self) -> (u32, u32, u32) {
        (self.tm * self.wg_y, 4 * self.tn4 * self.wg_x, self.bk)
    }

    pub fn threads(&self) -> u32 {
        self.wg_x * self.wg_y
    }

    pub fn workgroup_bytes(&self) -> u32 {
        match self.kernel {
            KernelKind::Rows | KernelKind::Subgroup => 0,
            KernelKind::Tiled => {
                let (bm, bn, bk) = self.tile();
                4 * bk * (bm + bn)
            }
        }
    }

    pub fn label(&self) -> String {
        let (bm, bn, bk) = self.tile();
        let kind = match self.kernel {
            KernelKind::Tiled => "tiled",
            KernelKind::Rows => "rows",
            KernelKind::Subgroup => "subgroup",
        };
        let mut s = format!(
            "{kind} {bm}x{bn}x{bk} tile, {}x{} per thread, {} threads",
            self.tm,
            4 * self.tn4,
            self.threads()
        );
        if !self.trusted {
            s.push_str(", checked");
        }
        if self.k_skip > 0 {
            s.push_str(&format!(", BROKEN(k_skip={})", self.k_skip));
        }
        s
    }

    /// Why this configuration cannot run on the device, if it cannot.
    pub fn unfit_reason(&self, l: &wgpu::Limits) -> Option<String> {
        if self.threads() > l.max_compute_invocations_per_workgroup {
            return Some(format!(
                "{} invocations per workgroup > the adapter's max_compute_invocations_per_workgroup {}",
                self.threads(),
                l.max_compute_invocations_per_workgroup
            ));
        }
        if self.wg_x > l.max_compute_workgroup_size_x || self.wg_y > l.max_compute_workgroup_size_y
        {
            return Some(format!(
                "workgroup {}x{} exceeds the adapter's max_compute_workgroup_size_x/_y {}x{}",
                self.wg_x,
                self.wg_y,
                l.max_compute_workgroup_size_x,
                l.max_compute_workgroup_size_y
            ));
        }
        if self.workgroup_bytes() > l.max_compute_workgroup_storage_size {
            return Some(format!(
                "{} bytes of workgroup memory > the adapter's max_compute_workgroup_storage_size {}",
                self.workgroup_bytes(),
                l.max_compute_workgroup_storage_size
            ));
        }
        if self.kernel == KernelKind::Subgroup
            && (!self.tm.is_multiple_of(self.sg) || !self.wg_x.is_multiple_of(self.sg))
        {
            return Some(format!(
                "rows {} and workgroup {} must be multiples of the subgroup size {}",
                self.tm, self.wg_x, self.sg
            ));
        }
        if self.kernel == KernelKind::Tiled {
            let (bm, _, bk) = self.tile();
            if bk % 4 != 0 || (bm * bk / 4) % self.threads() != 0 {
                return Some("tile does not divide evenly among threads".into());
            }
        }
        None
    }

    pub(super) fn source(&self) -> String {
        let body = match self.kernel {
            KernelKind::Tiled => TILED_WGSL.to_string(),
            KernelKind::Rows => expand_register_block(ROWS_WGSL, self.tm, self.tn4, 1),
            KernelKind::Subgroup => {
                expand_register_block(SUBGROUP_WGSL, self.tm, self.tn4, self.sg)
            }
        };
        WgslSource::new(body)
            .const_u32("TM", self.tm)
            .const_u32("TN4", self.tn4)
            .const_u32("SG", self.sg)
            .build()
    }

    pub(super) fn constants(&self) -> Vec<(&'static str, f64)> {
        match self.kernel {
            KernelKind::Rows | KernelKind::Subgroup => vec![("WG", f64::from(self.wg_x))],
            KernelKind::Tiled => vec![
                ("WG_X", f64::from(self.wg_x)),
                ("WG_Y", f64::from(self.wg_y)),
                ("BK", f64::from(self.bk)),
            ],
        }
    }
}

/// Expands the `//@TAG  text` lines of a kernel template into straight-line code for a
/// TM x TN4 register block (SG: subgroup size, for the subgroup kernel). Placeholders:
/// {m} row, {j} vec4 column group, {kk} k step within a vec4 of A, {lane} its component,
/// {r} the subgroup's row load (m / SG), {s} the lane holding row m (m % SG).
/// - `ACC_DECL`, `STORE`: once per (m, j); `A_LOAD`: per m; `AROW`, `A_LOAD_SG`: per r;
///   `B_LOAD_ALL`: per (kk, j).
/// - A run of `K_STEP`/`B_LOAD`/`FMA` lines repeats per kk, with `B_LOAD` per j and `FMA`
///   per (j, m) inside.
/// - A run of `BCAST`/`FMA_SG` lines repeats per m, with `FMA_SG` per (kk, j) inside.
pub fn expand_register_block(template: &str, tm: u32, tn4: u32, sg: u32) -> String {
    let mut x = Expansion {
        tm,
        tn4,
        sg: sg.max(1),
        out: String::new(),
    };
    let lines: Vec<&str> = template.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some((tag, text)) = tagged(line) else {
            x.emit(0, line, Ix::default());
            i += 1;
            continue;
        };
        let pad = line.len() - line.trim_start().len();
        match run_of(tag) {
            Some(run) => {
                let len = lines[i..]
                    .iter()
                    .take_while(|l| tagged(l).and_then(|(t, _)| run_of(t)) == Some(run))
                    .count();
                x.run(run, &lines[i..i + len], pad);
                i += len;
            }
            None => {
                x.line(tag, text, pad);
                i += 1;
            }
        }
    }
    x.out
}

/// Where one copy of a template line stands in the register block: row, vec4 column
/// group, k step.
#[derive(Clone, Copy, Default)]
struct Ix {
    m: u32,
    j: u32,
    kk: u32,
}

/// A `//@TAG  text` line's tag and text.
fn tagged(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("//@")?;
    let (tag, text) = rest.split_once(' ')?;
    Some((tag, text.trim_start()))
}

/// The run of lines a tag repeats with: `K_STEP` (per k step) or `BCAST` (per row).
fn run_of(tag: &str) -> Option<&'static str> {
    match tag {
        "K_STEP" | "B_LOAD" | "FMA" => Some("K_STEP"),
        "BCAST" | "FMA_SG" => Some("BCAST"),
        _ => None,
    }
}

/// Column where a tagged line's text starts, to keep the template's alignment.
fn text_column(line: &str) -> usize {
    line.len() - tagged(line).map_or(0, |(_, t)| t.len())
}

/// One register block's expansion: its shape, and the code written so far.
struct Expansion {
    tm: u32,
    tn4: u32,
    sg: u32,
    out: String,
}

impl Expansion {
    /// Writes `text` indented by `pad`, its placeholders filled in for `i`.
    fn emit(&mut self, pad: usize, text: &str, i: Ix) {
        let sg = self.sg;
        let text = text
            .replace("{m}", &i.m.to_string())
            .replace("{j}", &i.j.to_string())
            .replace("{kk}", &i.kk.to_string())
            .replace("{lane}", ["x", "y", "z", "w"][i.kk as usize % 4])
            .replace("{r}", &(i.m / sg).to_string())
            .replace("{s}", &(i.m % sg).to_string());
        self.out.push_str(&" ".repeat(pad));
        self.out.push_str(&text);
        self.out.push('\n');
    }

    /// A run of lines (`run_of`), repeated per k step (`K_STEP`: 4) or per row (`BCAST`),
    /// each copy aligned under the run's first line at `pad`.
    fn run(&mut self, run: &str, lines: &[&str], pad: usize) {
        let outer = if run == "K_STEP" { 4 } else { self.tm };
        let first = text_column(lines[0]);
        for o in 0..outer {
            for l in lines {
                let (t, text) = tagged(l).unwrap_or(("", ""));
                let p = pad + text_column(l).saturating_sub(first);
                self.run_line(t, text, p, o);
            }
        }
    }

    /// One line of a run in its copy `o` (the k step, or the row).
    fn run_line(&mut self, tag: &str, text: &str, p: usize, o: u32) {
        let (tm, tn4) = (self.tm, self.tn4);
        match tag {
            "B_LOAD" => (0..tn4).for_each(|j| self.emit(p, text, Ix { j, kk: o, m: 0 })),
            "FMA" => {
                for j in 0..tn4 {
                    (0..tm).for_each(|m| self.emit(p, text, Ix { m, j, kk: o }));
                }
            }
            "FMA_SG" => {
                for kk in 0..4 {
                    (0..tn4).for_each(|j| self.emit(p, text, Ix { m: o, j, kk }));
                }
            }
            "BCAST" => self.emit(
                p,
                text,
                Ix {
                    m: o,
                    ..Ix::default()
                },
            ),
            _ => self.emit(
                p,
                text,
                Ix {
                    kk: o,
                    ..Ix::default()
                },
            ),
        }
    }

    /// A tagged line outside any run, repeated over the indices its tag names.
    fn line(&mut self, tag: &str, text: &str, pad: usize) {
        let (tm, tn4, sg) = (self.tm, self.tn4, self.sg);
        match tag {
            "ACC_DECL" | "STORE" => {
                for m in 0..tm {
                    (0..tn4).for_each(|j| self.emit(pad, text, Ix { m, j, kk: 0 }));
                }
            }
            "A_LOAD" => (0..tm).for_each(|m| self.emit(pad, text, Ix { m, ..Ix::default() })),
            "AROW" | "A_LOAD_SG" => (0..tm.div_ceil(sg)).for_each(|r| {
                self.emit(
                    pad,
                    text,
                    Ix {
                        m: r * sg,
                        ..Ix::default()
                    },
                )
            }),
            "B_LOAD_ALL" => {
                for kk in 0..4 {
                    (0..tn4).for_each(|j| self.emit(pad, text, Ix { m: 0, j, kk }));
                }
            }
            other => panic!("unknown template tag //@{other}"),
        }
    }
}

/// The configurations the autotuner tries on an adapter, most promising first. CPU
/// rasterisers favour tall register blocks fed by subgroup broadcasts; GPUs the classic
/// 64x64 / 128x128 workgroup tiles with 4x4 or 8x8 register blocks. The subgroup kernel
/// needs a fixed subgroup size (min == max) to lay its rows out.
pub fn candidates(gpu: &Gpu) -> Vec<MatmulConfig> {
    let f = &gpu.info.features;
    let sg =
        (f.subgroup && f.subgroup_min_size == f.subgroup_max_size).then_some(f.subgroup_min_size);
    let mut v = candidates_for(gpu.info.software, sg);
    // Development hook: GPUVALUE_MATMUL_CANDIDATES="s64:1:32,8:4:16" replaces the list
    // (`s` = subgroup kernel, else rows kernel; TM:TN4:WG).
    if let Ok(list) = std::env::var("GPUVALUE_MATMUL_CANDIDATES") {
        v = parse_candidates(&list, sg);
    }
    v.retain(|c| c.unfit_reason(&gpu.limits).is_none());
    // Wide subgroups make some shapes coincide: keep the first of each.
    let mut seen = std::collections::HashSet::new();
    v.retain(|c| seen.insert(c.clone()));
    v
}

/// The candidate list for a software or hardware adapter with a fixed subgroup size `sg`
/// (None: no usable subgroups), before the adapter's limits are applied.
pub fn candidates_for(software: bool, sg: Option<u32>) -> Vec<MatmulConfig> {
    let mut subgroup = Vec::new();
    if let Some(sg) = sg {
        // Rows per invocation: 64 suits an 8-wide SIMD CPU; a multiple of wider subgroups.
        let tall = 64u32.next_multiple_of(sg);
        subgroup.push(MatmulConfig::subgroup(
            tall,
            1,
            sg.max(32).next_multiple_of(sg),
            sg,
        ));
        subgroup.push(MatmulConfig::subgroup(tall, 1, sg.max(8), sg));
        subgroup.push(MatmulConfig::subgroup(
            32u32.next_multiple_of(sg),
            2,
            sg.max(8),
            sg,
        ));
    }
    let rows = [MatmulConfig::rows(8, 2, 32), MatmulConfig::rows(8, 4, 16)];
    let tiled = [
        MatmulConfig::tiled(4, 1, 16, 16, 16), // 64x64 tile, 4x4 per thread
        MatmulConfig::tiled(8, 2, 16, 16, 8),  // 128x128 tile, 8x8 per thread
        MatmulConfig::tiled(8, 1, 16, 8, 16),  // 64x64 tile, 8x4 per thread
        MatmulConfig::tiled(4, 2, 8, 16, 16),  // 64x64 tile, 4x8 per thread
    ];
    if software {
        subgroup.into_iter().chain(rows).chain(tiled).collect()
    } else {
        tiled.into_iter().chain(subgroup).chain(rows).collect()
    }
}

/// `TM:TN4:WG` entries, comma-separated, `s` in front for the subgroup kernel.
pub(super) fn parse_candidates(list: &str, sg: Option<u32>) -> Vec<MatmulConfig> {
    list.split(',')
        .filter_map(|t| {
            let (sub, t) = match t.strip_prefix('s') {
                Some(rest) => (true, rest),
                None => (false, t),
            };
            let n: Vec<u32> = t.split(':').filter_map(|x| x.parse().ok()).collect();
            match (n.as_slice(), sub, sg) {
                ([tm, tn4, wg], true, Some(sg)) => Some(MatmulConfig::subgroup(*tm, *tn4, *wg, sg)),
                ([tm, tn4, wg], false, _) => Some(MatmulConfig::rows(*tm, *tn4, *wg)),
                _ => None,
            }
        })
        .collect()
}

/// Every kernel this probe can build: each candidate for every subgroup size an adapter
/// may report, and the packing kernels.
pub(super) fn kernel_variants() -> Vec<KernelSource> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for software in [true, false] {
        for sg in [
            None,
            Some(4),
            Some(8),
            Some(16),
            Some(32),
            Some(64),
            Some(128),
        ] {
            for c in candidates_for(software, sg) {
                if seen.insert(c.clone()) {
                    out.push(KernelSource::new(
                        c.label(),
                        c.source(),
                        "main",
                        &c.constants(),
                    ));
                }
            }
        }
    }
    out.push(KernelSource::new("pack_rows", PACK_WGSL, "pack_rows", &[]));
    out.push(KernelSource::new(
        "pack_texture",
        PACK_TEXTURE_WGSL,
        "main",
        &[],
    ));
    out
}
