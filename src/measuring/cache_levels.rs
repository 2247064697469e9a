//! The memory hierarchy from a curve: the steps in read bandwidth or dependent-load latency
//! against working-set size (`probes::hierarchy` measures the curves), each named after the
//! stated cache it lies within 2x of (the host's caches from Linux sysfs for a software
//! adapter, the catalog's for a GPU). Pure: the probe, the report and the tests share it.

use serde::{Deserialize, Serialize};

/// A cache as stated by its maker or the OS: level name (`L2`, `L3`, `Infinity Cache`),
/// size in bytes, and where the figure comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: String,
    pub bytes: u64,
    pub source: String,
}

/// One step of a curve: the working set it follows (the last size before the steepest
/// rise in cost), the plateau values either side, and the stated cache it matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The largest working set still on the faster side.
    pub bytes: u64,
    /// The value at `bytes` and at the end of the rise (GB/s or ns, as measured).
    pub before: f64,
    pub after: f64,
    /// The stated cache within 2x of `bytes`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}

/// A rise between neighbouring sizes smaller than this is noise, not part of a step.
const RISE: f64 = 1.12;
/// A step must raise the cost by this much in all.
const STEP: f64 = 1.3;

/// The steps of a curve (`points`: working-set bytes and value, in increasing size;
/// `higher_is_better`: bandwidth, else latency), each named after a stated cache within 2x
/// (each cache names at most one step, the nearest). `before` and `after` are the measured
/// values at the ends of the rise.
///
/// A run of rises in a row is one step, at its steepest rise, unless stated caches lie in
/// it: a cache whose window (half to twice its size) holds rises adding up to a step takes
/// those rises as its own step, so a run that climbs through two levels at once (a small L2
/// that hands over to a last level shared with other tenants) is read as the two levels.
/// What the caches leave of a run is a step where it still adds up to one, unnamed.
pub fn steps(points: &[(u64, f64)], higher_is_better: bool, stated: &[Cache]) -> Vec<Step> {
    // The cost (latency, or time a byte) never falls as the working set grows: each point
    // takes the least cost at its size or beyond, so a noisy high sample is no step.
    let mut cost: Vec<f64> = points
        .iter()
        .map(|p| if higher_is_better { 1.0 / p.1 } else { p.1 })
        .collect();
    for i in (0..cost.len().saturating_sub(1)).rev() {
        cost[i] = cost[i].min(cost[i + 1]);
    }
    let ratio: Vec<f64> = cost.windows(2).map(|w| w[1] / w[0]).collect();
    // Rise `j` goes from points[j] to points[j + 1]; runs of rises in a row.
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for j in (0..ratio.len()).filter(|&j| ratio[j] > RISE) {
        match runs.last_mut() {
            Some(r) if r.last() == Some(&(j - 1)) => r.push(j),
            _ => runs.push(vec![j]),
        }
    }
    let total = |rises: &[usize]| -> f64 { rises.iter().map(|&j| ratio[j]).product() };
    // A step over `rises`, at the steepest of `own` (a cache's rises; all of them if none).
    let step = |rises: &[usize], own: &[usize], level: Option<&str>| -> Option<Step> {
        let own = if own.is_empty() { rises } else { own };
        let steepest = *own
            .iter()
            .max_by(|&&a, &&b| ratio[a].total_cmp(&ratio[b]))?;
        Some(Step {
            bytes: points[steepest].0,
            before: points[*rises.first()?].1,
            after: points[rises.last()? + 1].1,
            level: level.map(String::from),
        })
    };
    let mut caches: Vec<&Cache> = stated.iter().collect();
    caches.sort_by_key(|c| c.bytes);
    let mut out = Vec::new();
    for run in runs {
        // Each cache's rises within its window, where they add up to a step.
        let mut claims: Vec<(Vec<usize>, Vec<usize>, &str)> = Vec::new();
        let mut left = run.clone();
        for c in &caches {
            let near: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&j| within_2x(points[j].0, c.bytes))
                .collect();
            if !near.is_empty() && total(&near) >= STEP {
                left.retain(|j| !near.contains(j));
                claims.push((near.clone(), near, &c.level));
            }
        }
        claims.sort_by_key(|c| c.0[0]);
        if claims.len() <= 1 && left.is_empty() || claims.is_empty() {
            // One level (or none named here): the run is one step, named below.
            if total(&run) >= STEP {
                out.extend(step(&run, &[], None));
            }
            continue;
        }
        // A rise no cache claimed leads up to the next claimed level above it; past the
        // last one, rises that add up to a step are a level of their own (unnamed).
        let mut tail = Vec::new();
        for j in left {
            match claims.iter_mut().find(|c| c.0[0] > j) {
                Some(c) => c.0.insert(c.0.partition_point(|&x| x < j), j),
                None => tail.push(j),
            }
        }
        for (rises, own, level) in &claims {
            out.extend(step(rises, own, Some(level)));
        }
        if total(&tail) >= STEP {
            out.extend(step(&tail, &[], None));
        }
    }
    out.sort_by_key(|s| s.bytes);
    name(&mut out, stated);
    out
}

/// Within a factor of 2, in log2 of size.
fn within_2x(a: u64, b: u64) -> bool {
    ((a as f64).log2() - (b as f64).log2()).abs() <= 1.0
}

/// Each stated cache names the step nearest it (in log2 of size) within a factor of 2,
/// unless the curve's own split already gave it one.
fn name(steps: &mut [Step], stated: &[Cache]) {
    let dist = |a: u64, b: u64| ((a as f64).log2() - (b as f64).log2()).abs();
    for c in stated {
        if steps
            .iter()
            .any(|s| s.level.as_deref() == Some(c.level.as_str()))
        {
            continue;
        }
        let best = steps
            .iter_mut()
            .filter(|s| s.level.is_none() && dist(s.bytes, c.bytes) <= 1.0)
            .min_by(|a, b| dist(a.bytes, c.bytes).total_cmp(&dist(b.bytes, c.bytes)));
        if let Some(s) = best {
            s.level = Some(c.level.clone());
        }
    }
}

/// `bytes` as people write cache sizes: 48 KiB, 2 MiB, 260 MiB, 1 GiB.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 0.05 {
        format!("{:.0} {}", v, UNITS[u])
    } else {
        format!("{:.1} {}", v, UNITS[u])
    }
}

/// Data-centre GPUs' caches as their makers state them, by adapter-name fragment (first
/// match wins: `l40` before `l4`): the L2 and, on AMD CDNA 3-4, the Infinity Cache (the
/// last level before HBM). Per device: an MI250X's GCD is its own device with its own L2.
const GPU_CACHES: &[(&str, &str, u64, &str)] = &[
    (
        "mi300",
        "L2 (4 MiB per XCD)",
        32 << 20,
        "AMD CDNA 3 architecture white paper (2023)",
    ),
    (
        "mi300",
        "Infinity Cache",
        256 << 20,
        "AMD CDNA 3 architecture white paper (2023)",
    ),
    (
        "mi325",
        "L2 (4 MiB per XCD)",
        32 << 20,
        "AMD CDNA 3 architecture white paper (2023); MI325X is the MI300X die with HBM3E",
    ),
    (
        "mi325",
        "Infinity Cache",
        256 << 20,
        "AMD CDNA 3 architecture white paper (2023); MI325X is the MI300X die with HBM3E",
    ),
    (
        "mi355",
        "L2 (4 MiB per XCD)",
        32 << 20,
        "AMD CDNA 4 architecture white paper (2025)",
    ),
    (
        "mi355",
        "Infinity Cache",
        256 << 20,
        "AMD CDNA 4 architecture white paper (2025)",
    ),
    (
        "mi350",
        "L2 (4 MiB per XCD)",
        32 << 20,
        "AMD CDNA 4 architecture white paper (2025)",
    ),
    (
        "mi350",
        "Infinity Cache",
        256 << 20,
        "AMD CDNA 4 architecture white paper (2025)",
    ),
    (
        "mi250",
        "L2",
        8 << 20,
        "AMD CDNA 2 architecture white paper (2021): 8 MB a GCD",
    ),
    (
        "h200",
        "L2",
        50 << 20,
        "NVIDIA H100 Tensor Core GPU architecture white paper (2022): GH100 in H100 SXM5 and H200",
    ),
    (
        "h100",
        "L2",
        50 << 20,
        "NVIDIA H100 Tensor Core GPU architecture white paper (2022)",
    ),
    (
        "a100",
        "L2",
        40 << 20,
        "NVIDIA A100 Tensor Core GPU architecture white paper (2020)",
    ),
    (
        "l40",
        "L2",
        96 << 20,
        "NVIDIA Ada GPU architecture white paper (2022): AD102",
    ),
    (
        "4090",
        "L2",
        72 << 20,
        "NVIDIA Ada GPU architecture white paper (2022): RTX 4090",
    ),
    (
        "l4",
        "L2",
        48 << 20,
        "NVIDIA Ada GPU architecture white paper (2022): AD104",
    ),
    (
        "a10",
        "L2",
        6 << 20,
        "NVIDIA Ampere GA102 GPU architecture white paper (2021)",
    ),
    (
        "t4",
        "L2",
        4 << 20,
        "NVIDIA Turing GPU architecture white paper (2018): TU104",
    ),
    (
        "v100",
        "L2",
        6 << 20,
        "NVIDIA Tesla V100 GPU architecture white paper (2017)",
    ),
];

/// The stated caches of the GPU an adapter name names (`AMD Instinct MI300X`, `NVIDIA
/// H100 80GB HBM3`); empty for a GPU not listed.
pub fn gpu_caches(adapter_name: &str) -> Vec<Cache> {
    let name = adapter_name.to_lowercase();
    let Some(key) = GPU_CACHES.iter().map(|e| e.0).find(|k| name.contains(k)) else {
        return Vec::new();
    };
    GPU_CACHES
        .iter()
        .filter(|e| e.0 == key)
        .map(|&(_, level, bytes, source)| Cache {
            level: level.into(),
            bytes,
            source: source.into(),
        })
        .collect()
}

/// The host's data and unified caches as Linux states them (`/sys/devices/system/cpu/
/// cpu0/cache`, what `lscpu -C` reads): one core's L1d and L2, the shared L3. Empty where
/// sysfs says nothing.
pub fn host_caches() -> Vec<Cache> {
    #[cfg(target_os = "linux")]
    {
        let mut out: Vec<Cache> = Vec::new();
        for idx in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{idx}");
            let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
            let (Some(kind), Some(level), Some(sz)) = (read("type"), read("level"), read("size"))
            else {
                continue;
            };
            let kind = kind.trim();
            if kind == "Instruction" {
                continue;
            }
            let Some(bytes) = parse_size(sz.trim()) else {
                continue;
            };
            let suffix = if kind == "Data" { "d" } else { "" };
            out.push(Cache {
                level: format!("L{}{suffix}", level.trim()),
                bytes,
                source: format!("Linux sysfs ({dir}/size)"),
            });
        }
        out
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// `48K`, `2048K`, `260M`, `1G` (sysfs's form) as bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let (num, shift) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 10),
        'M' => (&s[..s.len() - 1], 20),
        'G' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    num.trim().parse::<u64>().ok().map(|v| v << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each step as (KiB, the level it is named after).
    fn kib_and_level(s: &[Step]) -> Vec<(u64, Option<&str>)> {
        s.iter()
            .map(|s| (s.bytes >> 10, s.level.as_deref()))
            .collect()
    }

    fn cache(level: &str, bytes: u64) -> Cache {
        Cache {
            level: level.into(),
            bytes,
            source: "test".into(),
        }
    }

    #[test]
    fn latency_steps_are_found_at_their_steepest_rise_and_named() {
        // L1 48 KiB, L2 2 MiB, L3 32 MiB: plateaus with partial misses before each edge.
        let pts: Vec<(u64, f64)> = [
            (16, 1.0),
            (32, 1.0),
            (64, 1.6),
            (128, 3.9),
            (256, 4.0),
            (512, 4.1),
            (1024, 4.3),
            (2048, 5.0),
            (4096, 12.0),
            (8192, 14.0),
            (16384, 15.0),
            (32768, 19.0),
            (65536, 60.0),
            (131072, 90.0),
            (262144, 95.0),
        ]
        .iter()
        .map(|&(k, v)| (k << 10, v))
        .collect();
        let stated = [
            cache("L1d", 48 << 10),
            cache("L2", 2 << 20),
            cache("L3", 32 << 20),
        ];
        let s = steps(&pts, false, &stated);
        let found = kib_and_level(&s);
        assert_eq!(
            found,
            vec![(64, Some("L1d")), (2048, Some("L2")), (32768, Some("L3"))],
            "{s:?}"
        );
        // Bandwidth falls where latency rises: the same steps.
        let bw: Vec<(u64, f64)> = pts.iter().map(|&(b, v)| (b, 100.0 / v)).collect();
        let at = |v: &[Step]| -> Vec<(u64, Option<String>)> {
            v.iter().map(|s| (s.bytes, s.level.clone())).collect()
        };
        assert_eq!(at(&steps(&bw, true, &stated)), at(&s));
    }

    #[test]
    fn noise_is_no_step_and_a_step_far_from_any_cache_stays_unnamed() {
        let flat: Vec<(u64, f64)> = (0..12)
            .map(|i| (16u64 << (10 + i), if i % 2 == 0 { 10.0 } else { 11.0 }))
            .collect();
        assert!(steps(&flat, false, &[]).is_empty());
        // lavapipe's chase on this 2-vCPU VM (ns, 16 KiB to 128 MiB): high samples at 32 and
        // 128 KiB are noise; the steps are past 1 MiB (L2, 2 MiB) and past 8 MiB.
        let lavapipe = [
            7.76, 12.16, 10.53, 12.84, 9.45, 12.79, 15.14, 22.72, 23.13, 22.48, 62.04, 64.97,
            61.45, 65.79,
        ];
        let pts: Vec<(u64, f64)> = lavapipe
            .iter()
            .enumerate()
            .map(|(i, &v)| (16u64 << (10 + i), v))
            .collect();
        let s = steps(&pts, false, &[cache("L2", 2 << 20), cache("L3", 260 << 20)]);
        let found = kib_and_level(&s);
        assert_eq!(found, vec![(1024, Some("L2")), (8192, None)], "{s:?}");
        let pts = [
            (1 << 20, 5.0),
            (2 << 20, 5.0),
            (4 << 20, 20.0),
            (8 << 20, 21.0),
        ];
        let s = steps(&pts, false, &[cache("L2", 64 << 20)]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].bytes, 2 << 20);
        assert_eq!(s[0].level, None, "64 MiB is 32x away");
    }

    #[test]
    fn a_run_that_climbs_through_two_levels_is_read_as_both() {
        // PoCL's chase on a 2-vCPU AMD EPYC VM (ns, 16 KiB to 128 MiB; sysfs: L1d 32 KiB,
        // L2 1 MiB, L3 32 MiB): the L2 hands over to memory-like latency by 8 MiB, so the
        // rises from 256 KiB to 8 MiB are one run; the L2 takes its window's rises, the rise
        // past 4 MiB is a level of its own (unnamed: the tenant's share of the L3).
        let epyc = [
            1.37, 1.48, 3.1421, 2.93, 3.05, 3.47, 4.98, 7.31, 16.91, 88.65, 103.28, 131.68, 82.45,
            68.48,
        ];
        let pts: Vec<(u64, f64)> = epyc
            .iter()
            .enumerate()
            .map(|(i, &v)| (16u64 << (10 + i), v))
            .collect();
        let stated = [
            cache("L1d", 32 << 10),
            cache("L2", 1 << 20),
            cache("L3", 32 << 20),
        ];
        let s = steps(&pts, false, &stated);
        let found = kib_and_level(&s);
        assert_eq!(
            found,
            vec![(32, Some("L1d")), (2048, Some("L2")), (4096, None)],
            "{s:?}"
        );
        // The unclaimed rise below the L2's window leads up to it.
        assert_eq!(s[1].before, 3.05);
        assert_eq!(s[2].after, 88.65);
    }

    #[test]
    fn gpus_are_found_by_name_with_their_last_level_cache() {
        let mi = gpu_caches("AMD Instinct MI300X VF");
        assert_eq!(mi.iter().map(|c| c.bytes).max(), Some(256 << 20));
        assert_eq!(mi.len(), 2);
        assert_eq!(
            gpu_caches("NVIDIA L40S")[0].bytes,
            96 << 20,
            "l40 before l4"
        );
        assert_eq!(gpu_caches("NVIDIA L4")[0].bytes, 48 << 20);
        assert!(gpu_caches("llvmpipe (LLVM 15.0.6, 256 bits)").is_empty());
    }

    #[test]
    fn sizes_parse_and_print_as_sysfs_and_people_write_them() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("260M"), Some(260 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(size(48 << 10), "48 KiB");
        assert_eq!(size(260 << 20), "260 MiB");
        assert_eq!(size(3 << 29), "1.5 GiB");
    }
}
