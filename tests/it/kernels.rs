//! Every OpenCL kernel, in every variant the probes and the burn can build, through the real
//! GPUs' compilers, without a device: OpenCL C 1.2 compiled by Clang for AMD
//! CDNA 2-4 and RDNA 3 (gfx90a, gfx942, gfx950, gfx1100) linked with ROCm's device
//! libraries, and for NVIDIA (sm_80, sm_90) through Clang's NVPTX back end with libclc and
//! NVIDIA's own `ptxas`. A compile error fails, naming the kernel, its variant and the
//! target. Each kernel's resources (registers, spills, scratch, occupancy, local memory,
//! packed FP32 instructions on CDNA) go into `reports/kernels/resources.md`
//! (`GPUVALUE_BLESS=1` rewrites it; otherwise the report must list exactly the kernels,
//! variants and targets compiled now).
//!
//! Tools: `clang-22` (or `GPUVALUE_CLANG`; `clang-19` knows no gfx950), Debian's
//! `rocm-device-libs`, `libclc-22` and `ptxas` (`GPUVALUE_PTXAS`, or on PATH; PyPI's
//! nvidia-cuda-nvcc-cu12). Minutes of compiles on two cores: `#[ignore]`d, run by name in CI
//! (`.ci/run`); where a tool is missing it says so and skips, except under CI=true.

use gpuvalue::measuring::gpu::opencl::ClSource;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const REPORT: &str = "reports/kernels/resources.md";
const AMD: [&str; 4] = ["gfx90a", "gfx942", "gfx950", "gfx1100"];
const NVIDIA: [&str; 2] = ["sm_80", "sm_90"];
/// ROCm's device libraries as Debian installs them.
const DEVICE_LIBS: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
/// libclc's OpenCL built-ins for NVPTX (get_global_id, vload4, ...).
const LIBCLC_NVPTX: &str = "/usr/lib/clc/nvptx64--nvidiacl.bc";

struct Tools {
    clang: String,
    /// llvm-objdump of the same LLVM (the CDNA code's packed FP32 instructions).
    objdump: String,
    ptxas: String,
    /// The device libraries, with an ISA version file for targets Debian's copy predates.
    device_libs: PathBuf,
}

/// One kernel of one variant on one target.
#[derive(Debug)]
struct Row {
    program: String,
    variant: String,
    target: &'static str,
    kernel: String,
    /// VGPRs (AMD) or registers a thread (NVIDIA).
    registers: u32,
    /// SGPRs (AMD); AGPRs (CDNA's matrix registers).
    sgprs: Option<u32>,
    agprs: Option<u32>,
    /// Scratch (AMD, bytes a lane) or stack frame (NVIDIA, bytes a thread).
    scratch: u32,
    /// Spilled registers (AMD: VGPR + SGPR count) or spill stores (NVIDIA: bytes).
    spills: u32,
    /// Waves a SIMD (AMD, the compiler's figure) or warps an SM by registers alone (NVIDIA).
    occupancy: u32,
    /// Local memory: LDS (AMD) or static shared memory (NVIDIA), bytes a work-group.
    local: u32,
    /// v_pk_fma_f32 / v_pk_mul_f32 / v_pk_add_f32 in the code (CDNA only).
    packed_fp32: Option<u32>,
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn runs(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The tools, or why not.
fn tools(dir: &Path) -> Result<Tools, String> {
    let clang = std::env::var("GPUVALUE_CLANG").unwrap_or_else(|_| "clang-22".into());
    if !runs(&clang, "--version") {
        return Err(format!(
            "no {clang} (apt install clang-22, or set GPUVALUE_CLANG)"
        ));
    }
    let objdump = clang.replace("clang", "llvm-objdump");
    if !runs(&objdump, "--version") {
        return Err(format!("no {objdump} (apt install llvm-22)"));
    }
    let ptxas = std::env::var("GPUVALUE_PTXAS").unwrap_or_else(|_| "ptxas".into());
    if !runs(&ptxas, "--version") {
        return Err(format!(
            "no {ptxas} (pip install nvidia-cuda-nvcc-cu12, then set GPUVALUE_PTXAS)"
        ));
    }
    if !Path::new(DEVICE_LIBS).join("ocml.bc").exists() {
        return Err(format!(
            "no ROCm device libraries in {DEVICE_LIBS} (apt install rocm-device-libs)"
        ));
    }
    if !Path::new(LIBCLC_NVPTX).exists() {
        return Err(format!("no {LIBCLC_NVPTX} (apt install libclc-22)"));
    }
    let device_libs = device_libs(dir, &clang)?;
    Ok(Tools {
        clang,
        objdump,
        ptxas,
        device_libs,
    })
}

/// ROCm's device libraries, plus `oclc_isa_version_N.bc` for a target Debian's release
/// (ROCm 5.2) predates: the one constant such a file holds (`__oclc_ISA_version`, e.g.
/// 9402 for gfx942), as ROCm's later releases define it. The rest (opencl, ocml, ockl, the
/// other controls) is ROCm's own.
fn device_libs(dir: &Path, clang: &str) -> Result<PathBuf, String> {
    let out = dir.join("device-libs");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    for e in std::fs::read_dir(DEVICE_LIBS).map_err(|e| e.to_string())? {
        let e = e.map_err(|e| e.to_string())?;
        let to = out.join(e.file_name());
        if !to.exists() {
            std::os::unix::fs::symlink(e.path(), &to).map_err(|e| e.to_string())?;
        }
    }
    for (id, version) in [("942", 9402), ("950", 9500), ("1100", 11000)] {
        let bc = out.join(format!("oclc_isa_version_{id}.bc"));
        if bc.exists() {
            continue;
        }
        let ll = dir.join(format!("isa_{id}.ll"));
        std::fs::write(
            &ll,
            format!(
                "target triple = \"amdgcn-amd-amdhsa\"\n@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 {version}, align 4\n"
            ),
        )
        .map_err(|e| e.to_string())?;
        let o = Command::new(clang)
            .args([
                "-nogpulib",
                "-target",
                "amdgcn-amd-amdhsa",
                "-c",
                "-emit-llvm",
                "-x",
                "ir",
            ])
            .arg(&ll)
            .arg("-o")
            .arg(&bc)
            .output()
            .map_err(|e| e.to_string())?;
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).into_owned());
        }
    }
    Ok(out)
}

/// The extensions a variant is built for, declared to Clang as a device that reports them
/// would (the runtime builds the variant only there): cl_khr_fp16 for `USE_F16`,
/// cl_khr_fp64 for `USE_F64`, the 4x8-bit integer dot product for `INT_DOT`.
fn extensions(src: &ClSource) -> Vec<String> {
    let mut ext = Vec::new();
    for (define, e) in [("USE_F16", "+cl_khr_fp16"), ("USE_F64", "+cl_khr_fp64")] {
        if src.defines.iter().any(|(k, _)| *k == define) {
            ext.push(e);
        }
    }
    // The MFMA builtins take half vectors for FP16 (ELEM=0): ROCm reports cl_khr_fp16.
    let define = |d: &str| {
        src.defines
            .iter()
            .find(|(k, _)| *k == d)
            .map(|(_, v)| v.as_str())
    };
    if define("MFMA_BUILTIN").is_some() && define("ELEM") == Some("0") {
        ext.push("+cl_khr_fp16");
    }
    if ext.is_empty() {
        vec![]
    } else {
        vec![format!("-cl-ext={}", ext.join(","))]
    }
}

/// A variant no target here can build, and why: the runtime builds it only on a device that
/// reports the extension, with that device's own compiler and libraries.
fn not_here(src: &ClSource, target: &str) -> Option<&'static str> {
    let has = |d: &str| src.defines.iter().any(|(k, _)| *k == d);
    if has("INT_DOT") {
        return Some(
            "cl_khr_integer_dot_product: Clang declares dot(char4, char4) for OpenCL C 3.0 only, and neither ROCm's device libraries nor libclc implement it; ROCm reports no such extension on the MI300X (the widening multiply-adds are compiled instead)",
        );
    }
    if has("MFMA_BUILTIN") {
        let kl8 = src.defines.iter().any(|(k, v)| *k == "KL" && v == "8");
        if !target.starts_with("gfx9") {
            return Some(
                "MFMA builtins: matrix-core instructions exist on AMD CDNA only (the probe runs them on gfx908, gfx90a, gfx942, gfx950; elsewhere it is unsupported, and the emulated variant is compiled instead)",
            );
        }
        if kl8 && target != "gfx950" {
            return Some("v_mfma_f32_16x16x32_f16 is gfx950's (CDNA 4) only");
        }
    }
    if has("USE_F16") && target.starts_with("sm_") {
        return Some(
            "cl_khr_fp16: NVIDIA's OpenCL reports no half type and Clang's NVPTX OpenCL target has none",
        );
    }
    None
}

fn variant(src: &ClSource) -> String {
    if src.defines.is_empty() {
        "-".into()
    } else {
        src.options().join(" ").replace("-D", "")
    }
}

/// A compile's failure, named: kernel file, variant, target, the compiler's first lines.
fn failed(src: &ClSource, target: &str, what: &str, log: &[u8]) -> String {
    let log = String::from_utf8_lossy(log);
    let head: Vec<&str> = log
        .lines()
        .filter(|l| !l.contains("remark:"))
        .take(8)
        .collect();
    format!(
        "{} ({}) [{}] on {target}: {what}\n  {}",
        src.file,
        src.label,
        variant(src),
        head.join("\n  ")
    )
}

/// A field of the AMDGPU resource remarks ("VGPRs: 38"), by its exact name.
fn remark(block: &str, name: &str) -> Option<u32> {
    block.lines().find_map(|l| {
        let (_, rest) = l.split_once(&format!("remark:     {name}: "))?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

fn amd(
    t: &Tools,
    src: &ClSource,
    file: &Path,
    target: &'static str,
    dir: &Path,
) -> Result<Vec<Row>, String> {
    let obj = dir.join(format!(
        "{}-{target}.o",
        file.file_stem().unwrap().to_string_lossy()
    ));
    let o = Command::new(&t.clang)
        .args(["-x", "cl", "-cl-std=CL1.2", "-target", "amdgcn-amd-amdhsa"])
        .arg(format!("-mcpu={target}"))
        .arg("-mcode-object-version=5")
        .arg(format!(
            "--rocm-device-lib-path={}",
            t.device_libs.display()
        ))
        .args(["-Xclang", "-finclude-default-header", "-O3", "-c"])
        .arg("-Rpass-analysis=kernel-resource-usage")
        .args(src.options())
        .args(extensions(src))
        .arg(file)
        .arg("-o")
        .arg(&obj)
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(failed(src, target, "did not compile", &o.stderr));
    }
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    let dis = Command::new(&t.objdump)
        .args(["-d", "--no-show-raw-insn"])
        .arg(&obj)
        .output()
        .map_err(|e| e.to_string())?;
    let dis = String::from_utf8_lossy(&dis.stdout).into_owned();
    let mut rows = Vec::new();
    for block in log.split("remark: Function Name: ").skip(1) {
        let kernel = block.split_whitespace().next().unwrap_or("").to_string();
        if kernel.starts_with("__clang_ocl_kern_imp_") {
            continue;
        }
        if block.contains("Dynamic Stack: True") {
            return Err(failed(
                src,
                target,
                &format!("{kernel}: calls left unresolved (dynamic stack)"),
                log.as_bytes(),
            ));
        }
        let need = |name: &str| {
            remark(block, name)
                .ok_or_else(|| format!("{kernel} on {target}: no {name} in the remarks"))
        };
        let cdna = target.starts_with("gfx9");
        let packed = cdna.then(|| {
            let body = dis.split(&format!("<{kernel}>:")).nth(1).unwrap_or("");
            let body = body.split("\n\n").next().unwrap_or("");
            ["v_pk_fma_f32", "v_pk_mul_f32", "v_pk_add_f32"]
                .iter()
                .map(|i| body.matches(i).count() as u32)
                .sum()
        });
        rows.push(Row {
            program: src.label.clone(),
            variant: variant(src),
            target,
            registers: need("VGPRs")?,
            // "TotalSGPRs" from Clang 20 on, "SGPRs" before.
            sgprs: Some(remark(block, "TotalSGPRs").map_or_else(|| need("SGPRs"), Ok)?),
            agprs: remark(block, "AGPRs"),
            scratch: need("ScratchSize [bytes/lane]")?,
            spills: need("VGPRs Spill")? + need("SGPRs Spill")?,
            occupancy: need("Occupancy [waves/SIMD]")?,
            local: need("LDS Size [bytes/block]")?,
            packed_fp32: packed,
            kernel,
        });
    }
    if rows.is_empty() {
        return Err(failed(
            src,
            target,
            "no kernel in the compiler's report",
            log.as_bytes(),
        ));
    }
    Ok(rows)
}

/// Warps an SM holds by registers alone: 64K registers, allocated per warp in units of 256,
/// at most 64 warps (sm_80, sm_90).
fn warps_by_registers(regs: u32) -> u32 {
    let per_warp = (regs.max(1) * 32).div_ceil(256) * 256;
    (65536 / per_warp).min(64)
}

fn nvidia(
    t: &Tools,
    src: &ClSource,
    file: &Path,
    target: &'static str,
    dir: &Path,
) -> Result<Vec<Row>, String> {
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    let ptx = dir.join(format!("{stem}-{target}.ptx"));
    let o = Command::new(&t.clang)
        .args([
            "-x",
            "cl",
            "-cl-std=CL1.2",
            "-target",
            "nvptx64-nvidia-cuda",
        ])
        .arg(format!("-march={target}"))
        .args(["-Xclang", "-target-feature", "-Xclang", "+ptx80"])
        .args(["-Xclang", "-finclude-default-header"])
        .args(["-Xclang", "-mlink-builtin-bitcode", "-Xclang", LIBCLC_NVPTX])
        .args(["-Wno-linker-warnings", "-O3", "-S"])
        .args(src.options())
        .args(extensions(src))
        .arg(file)
        .arg("-o")
        .arg(&ptx)
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(failed(src, target, "did not compile", &o.stderr));
    }
    let text = std::fs::read_to_string(&ptx).map_err(|e| e.to_string())?;
    if let Some(l) = text.lines().find(|l| l.starts_with(".extern .func")) {
        return Err(failed(
            src,
            target,
            "a built-in left unresolved",
            l.as_bytes(),
        ));
    }
    let o = Command::new(&t.ptxas)
        .arg(format!("-arch={target}"))
        .args(["-v", "-O3"])
        .arg(&ptx)
        .arg("-o")
        .arg(dir.join(format!("{stem}-{target}.cubin")))
        .output()
        .map_err(|e| e.to_string())?;
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    if !o.status.success() {
        return Err(failed(src, target, "ptxas refused it", log.as_bytes()));
    }
    let mut rows = Vec::new();
    for block in log.split("Compiling entry function '").skip(1) {
        let kernel = block.split('\'').next().unwrap_or("").to_string();
        let props = block
            .split(&format!("Function properties for {kernel}\n"))
            .nth(1)
            .unwrap_or("");
        let bad = || format!("{kernel} on {target}: ptxas -v said no registers:\n{log}");
        let regs = props
            .split("Used ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next()?.parse().ok())
            .ok_or_else(bad)?;
        let frame = props
            .split(" bytes stack frame")
            .next()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(bad)?;
        let spills = props
            .split(" bytes stack frame, ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .ok_or_else(bad)?;
        rows.push(Row {
            program: src.label.clone(),
            variant: variant(src),
            target,
            kernel,
            registers: regs,
            sgprs: None,
            agprs: None,
            scratch: frame,
            spills,
            occupancy: warps_by_registers(regs),
            local: smem(props),
            packed_fp32: None,
        });
    }
    if rows.is_empty() {
        return Err(failed(
            src,
            target,
            "no entry function in ptxas's report",
            log.as_bytes(),
        ));
    }
    Ok(rows)
}

/// Static shared memory in ptxas's "Used 40 registers, 8448 bytes smem" line.
fn smem(props: &str) -> u32 {
    props
        .lines()
        .find(|l| l.contains("Used ") && l.contains("bytes smem"))
        .and_then(|l| {
            let before = l.split(" bytes smem").next()?;
            before.rsplit(' ').next()?.parse().ok()
        })
        .unwrap_or(0)
}

/// Every variant on every target, on as many threads as the machine has.
fn compile_all(t: &Tools, dir: &Path) -> (Vec<Row>, Vec<String>, Vec<String>) {
    let mut programs = gpuvalue::measuring::probes::every_opencl_program();
    programs.extend(gpuvalue::measuring::burn::cl::opencl_kernels());
    // Kinds that differ only in the kernel they call build the same program: once each.
    let mut seen = BTreeSet::new();
    programs.retain(|p| seen.insert((p.file, p.label.clone(), variant(p))));
    assert!(
        programs.len() > 50,
        "only {} variants listed",
        programs.len()
    );
    let (mut jobs, mut skipped) = (Vec::new(), Vec::new());
    for (i, src) in programs.iter().enumerate() {
        let file = dir.join(format!("{i:03}-{}", src.file));
        std::fs::write(&file, src.source).unwrap();
        for target in AMD.into_iter().chain(NVIDIA) {
            match not_here(src, target) {
                Some(why) => skipped.push(format!(
                    "{} ({}) [{}] on {target}: {why}",
                    src.file,
                    src.label,
                    variant(src)
                )),
                None => jobs.push((src, file.clone(), target)),
            }
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new((Vec::new(), Vec::new()));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((src, file, target)) = jobs.get(i) else {
                        break;
                    };
                    let r = if target.starts_with("gfx") {
                        amd(t, src, file, target, dir)
                    } else {
                        nvidia(t, src, file, target, dir)
                    };
                    let mut o = out.lock().unwrap();
                    match r {
                        Ok(rows) => o.0.extend(rows),
                        Err(e) => o.1.push(e),
                    }
                }
            });
        }
    });
    let (mut rows, errors) = out.into_inner().unwrap();
    rows.sort_by(|a, b| {
        (a.target, &a.program, &a.variant, &a.kernel)
            .cmp(&(b.target, &b.program, &b.variant, &b.kernel))
    });
    skipped.sort();
    skipped.dedup();
    (rows, errors, skipped)
}

fn first_line(program: &str, arg: &str) -> String {
    let o = Command::new(program).arg(arg).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines()
        .rfind(|l| !l.trim().is_empty())
        .filter(|_| program.contains("ptxas"))
        .or_else(|| text.lines().next())
        .unwrap_or("")
        .trim()
        .to_string()
}

fn opt(v: Option<u32>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

/// The report: per target, one line per kernel of each variant.
fn report(t: &Tools, rows: &[Row], skipped: &[String]) -> String {
    let mut s = String::from(
        "# OpenCL kernels on the real GPUs' compilers\n\n\
         Every OpenCL program variant the probes and the burn can build \
         (`gpuvalue::measuring::probes::every_opencl_program` and `gpuvalue::measuring::burn::cl::opencl_kernels`), compiled offline as OpenCL C 1.2 by \
         `tests/it/kernels.rs` (`cargo test --release --test it -- --ignored kernels::`; \
         `GPUVALUE_BLESS=1` rewrites this file). No device ran them: these are the compilers' \
         figures.\n\n",
    );
    s.push_str(&format!(
        "- AMD: `{}` `-target amdgcn-amd-amdhsa -mcpu=TARGET -O3`, linked with ROCm's device \
         libraries (Debian's rocm-device-libs; `oclc_isa_version` for gfx942, gfx950 and \
         gfx1100 written by the test: Debian's ROCm 5.2 predates them), resources from \
         `-Rpass-analysis=kernel-resource-usage`; packed FP32: `v_pk_fma_f32`, `v_pk_mul_f32` \
         and `v_pk_add_f32` in the disassembly (CDNA).\n\
         - NVIDIA: the same Clang, `-target nvptx64-nvidia-cuda -march=TARGET` with libclc's \
         built-ins, then `{}` `-v -O3`; occupancy: warps an SM holds by registers alone (64K \
         registers, 256-register allocation units, 64 warps at most).\n\
         - Columns: regs (VGPRs / registers a thread), sgprs, agprs (CDNA's matrix registers), \
         scratch (bytes a lane / stack frame a thread), spills (VGPR + SGPR count / spill-store \
         bytes), occupancy (waves a SIMD / warps an SM), local (LDS / static shared memory, \
         bytes a work-group), pk_f32 (packed FP32 instructions).\n\n",
        first_line(&t.clang, "--version"),
        first_line(&t.ptxas, "--version"),
    ));
    for target in AMD.into_iter().chain(NVIDIA) {
        s.push_str(&format!(
            "## {target}\n\n| program | variant | kernel | regs | sgprs | agprs | scratch | spills | occupancy | local | pk_f32 |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
        ));
        for r in rows.iter().filter(|r| r.target == target) {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.program,
                r.variant,
                r.kernel,
                r.registers,
                opt(r.sgprs),
                opt(r.agprs),
                r.scratch,
                r.spills,
                r.occupancy,
                r.local,
                opt(r.packed_fp32)
            ));
        }
        s.push('\n');
    }
    s.push_str("## Not compiled here\n\n");
    for k in skipped {
        s.push_str(&format!("- {k}\n"));
    }
    s
}

/// (target, program, variant, kernel) of each table line of a report.
fn keys(report: &str) -> BTreeSet<String> {
    let mut target = String::new();
    let mut keys = BTreeSet::new();
    for l in report.lines() {
        if let Some(t) = l.strip_prefix("## ") {
            target = t.to_string();
        } else if l.starts_with("| ") && !l.starts_with("| program") {
            let c: Vec<&str> = l.split(" | ").collect();
            keys.insert(format!(
                "{target} {} [{}] {}",
                c[0].trim_start_matches("| "),
                c[1],
                c[2]
            ));
        }
    }
    keys
}

#[test]
#[ignore = "minutes of compiles: run by name in CI (.ci/run)"]
fn every_opencl_kernel_variant_compiles_for_cdna_rdna_and_nvidia() {
    // Minutes of compiles on every core: not beside the timed tests.
    let _turn = crate::common::one_at_a_time();
    let dir = std::env::temp_dir().join(format!("gpuvalue-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = match tools(&dir) {
        Ok(t) => t,
        Err(why) if !ci() => {
            eprintln!("skipped: {why}");
            return;
        }
        Err(why) => panic!("CI=true: {why}"),
    };
    let (rows, errors, skipped) = compile_all(&t, &dir);
    assert!(
        errors.is_empty(),
        "{} failed:\n{}",
        errors.len(),
        errors.join("\n")
    );
    // Every kernel on every target, the CDNA ones with their packed FP32 count.
    for target in AMD.into_iter().chain(NVIDIA) {
        assert!(
            rows.iter().any(|r| r.target == target),
            "nothing for {target}"
        );
    }
    cdna_spills_leave_the_tuning(&rows);
    let text = report(&t, &rows, &skipped);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if std::env::var("GPUVALUE_BLESS").is_ok() {
        std::fs::create_dir_all(root.join("reports/kernels")).unwrap();
        std::fs::write(root.join(REPORT), &text).unwrap();
    }
    let committed = std::fs::read_to_string(root.join(REPORT)).unwrap_or_default();
    let (now, then) = (keys(&text), keys(&committed));
    let missing: Vec<&String> = now.difference(&then).collect();
    let stale: Vec<&String> = then.difference(&now).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "{REPORT} is not what compiles now (GPUVALUE_BLESS=1 rewrites it): missing {missing:?}, gone {stale:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A candidate whose kernel spills on a CDNA target is listed in `CDNA_SPILLS` (which the
/// autotuner leaves out on CDNA devices), and one listed there spills.
fn cdna_spills_leave_the_tuning(rows: &[Row]) {
    use gpuvalue::measuring::probes::matmul::on_opencl::{CANDIDATES, CDNA_SPILLS, source};
    for c in CANDIDATES {
        for (ty, elem) in [("f32", 4), ("f64", 8), ("f16", 2)] {
            let v = variant(&source(c, ty));
            let spills = rows.iter().any(|r| {
                r.target.starts_with("gfx9")
                    && r.program == format!("matmul {ty}")
                    && r.variant == v
                    && r.kernel == c.kernel_name()
                    && r.scratch > 0
            });
            assert_eq!(
                spills,
                CDNA_SPILLS.contains(&(c, elem)),
                "{} [{v}] ({ty}): spills to scratch on CDNA: {spills}; CDNA_SPILLS must say so",
                c.kernel_name()
            );
        }
    }
}
