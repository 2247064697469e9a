//! The VRAM test, in the spirit of memtest_vulkan: about 90% of the device's memory in
//! windows no larger than the largest binding, each word holding a pattern derived from its
//! own address, its window and the pass (inverted on odd passes); each window verified in a
//! shuffled block order, the windows in a shuffled order; window 0 written once and re-read
//! every pass (retention). Errors, the address range and the flipped bits are recorded.

use super::device::{BLOCK_WORDS, BurnDevice, Order};
use super::{BurnFault, BurnOptions, Schedule};
use crate::health::VramRecord;
use crate::host::HostInfo;
use crate::measuring::reference::Rng;
use anyhow::{Result, bail};
use std::time::Instant;

/// The word at index `i` of `window` in `pass`: the same mix as `pattern` in
/// shaders/vram.wgsl and shaders/opencl/burn.cl.
pub fn pattern(i: u32, window: u32, pass: u32) -> u32 {
    let x = mix(i, window, pass);
    if pass & 1 == 1 { !x } else { x }
}

fn mix(i: u32, window: u32, pass: u32) -> u32 {
    let mut x = i.wrapping_mul(0x9E37_79B1)
        ^ window.wrapping_mul(0x85EB_CA77)
        ^ pass.wrapping_mul(0xC2B2_AE3D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x2C1B_3C6D);
    x ^= x >> 12;
    x = x.wrapping_mul(0x297A_2D39);
    x ^= x >> 15;
    x
}

/// How much to test, in bytes, and why.
fn target(
    dev: &dyn BurnDevice,
    opts: &BurnOptions,
    sched: &Schedule,
) -> (u64, String, Option<f64>) {
    let (mem, _) = dev.memory();
    if let Some(mib) = opts.vram_mib {
        let share = mem.map(|m| (mib << 20) as f64 / m as f64);
        return (mib << 20, format!("{mib} MiB as asked (--vram-mib)"), share);
    }
    if dev.info().software {
        let ram = HostInfo::detect().ram_bytes;
        let cap: u64 = if sched.mode == "standard" {
            1 << 30
        } else {
            256 << 20
        };
        let bytes = if ram > 0 { cap.min(ram / 20) } else { cap };
        return (
            bytes,
            format!(
                "software adapter: its \"VRAM\" is host memory, so {} MiB ({:.1}% of the host's {} GiB)",
                bytes >> 20,
                bytes as f64 / ram.max(1) as f64 * 100.0,
                ram >> 30
            ),
            None,
        );
    }
    match mem {
        Some(m) => (
            m / 10 * 9,
            format!(
                "90% of the device's {:.1} GiB",
                m as f64 / (1u64 << 30) as f64
            ),
            Some(0.9),
        ),
        None => {
            let (_, window) = dev.memory();
            (
                window * 4,
                "this API does not report the device's memory: 4 windows of its largest binding"
                    .into(),
                None,
            )
        }
    }
}

/// A stride coprime with `blocks` and an offset, drawn at random: the verification order.
fn order(blocks: u32, rng: &mut Rng) -> Order {
    let gcd = |mut a: u32, mut b: u32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut stride = (rng.next_u64() % u64::from(blocks.max(1))) as u32 | 1;
    while blocks > 1 && gcd(stride, blocks) != 1 {
        stride = (stride + 2) % blocks.max(2);
        if stride == 0 {
            stride = 1;
        }
    }
    Order {
        stride: stride.max(1),
        offset: (rng.next_u64() % u64::from(blocks.max(1))) as u32,
    }
}

/// Runs the test; an allocation the device refuses is an error (ERROR, never PASS).
pub fn test(
    dev: &mut dyn BurnDevice,
    opts: &BurnOptions,
    sched: &Schedule,
    progress: &dyn Fn(&str),
) -> Result<VramRecord> {
    let (bytes, basis, share) = target(dev, opts, sched);
    let (_, window_max) = dev.memory();
    if window_max < BLOCK_WORDS * 4 {
        bail!("VRAM test: the device binds at most {window_max} bytes");
    }
    let windows = bytes.div_ceil(window_max).max(2) as usize;
    let words = (bytes / windows as u64 / 4 / BLOCK_WORDS).max(1) * BLOCK_WORDS;
    let window_bytes = words * 4;
    dev.vram_alloc(windows, words).map_err(|e| {
        anyhow::anyhow!(
            "VRAM test: allocating {windows} windows of {} MiB failed: {e:#}",
            window_bytes >> 20
        )
    })?;
    let t0 = Instant::now();
    let mut rec = VramRecord {
        bytes_tested: window_bytes * windows as u64,
        share_of_memory: share,
        basis,
        window_bytes,
        windows,
        passes: sched.vram_passes,
        bit_flips: vec![0; 32],
        ..Default::default()
    };
    let mut moved = 0u64;
    let mut rng = Rng::fresh();
    let blocks = words.div_ceil(BLOCK_WORDS) as u32;
    for pass in 0..sched.vram_passes {
        if crate::interrupt::requested() {
            break;
        }
        progress(&format!("VRAM pass {}/{}", pass + 1, sched.vram_passes));
        // Window 0 keeps pass 0's pattern: written once, re-read every pass.
        for w in 0..windows {
            if w > 0 || pass == 0 {
                dev.vram_write(w, pass)?;
                moved += window_bytes;
            }
        }
        if pass == 0 && opts.inject == Some(BurnFault::VramFlip) {
            let (w, i) = (windows - 1, 12_345 % words);
            dev.vram_poke(w, i, pattern(i as u32, w as u32, 0) ^ (1 << 7))?;
        }
        let mut ws: Vec<usize> = (0..windows).collect();
        for i in (1..ws.len()).rev() {
            ws.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for w in ws {
            let p = if w == 0 { 0 } else { pass };
            let c = dev.vram_verify(w, p, order(blocks, &mut rng))?;
            moved += window_bytes;
            if c.errors == 0 {
                continue;
            }
            rec.errors += c.errors;
            if w == 0 {
                rec.retention_errors += c.errors;
            }
            let base = w as u64 * window_bytes;
            let (lo, hi) = (base + u64::from(c.first) * 4, base + u64::from(c.last) * 4);
            rec.first_bad = Some(rec.first_bad.map_or(lo, |x| x.min(lo)));
            rec.last_bad = Some(rec.last_bad.map_or(hi, |x| x.max(hi)));
            for (acc, b) in rec.bit_flips.iter_mut().zip(c.bits) {
                *acc += b;
            }
        }
    }
    dev.vram_release();
    rec.seconds = t0.elapsed().as_secs_f64();
    rec.gbps = moved as f64 / rec.seconds.max(1e-9) * 1e-9;
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_differ_by_address_window_and_pass_and_odd_passes_invert() {
        let p = pattern(5, 1, 0);
        assert_ne!(p, pattern(6, 1, 0));
        assert_ne!(p, pattern(5, 2, 0));
        assert_ne!(p, pattern(5, 1, 2));
        // Adjacent addresses differ in many bits (no slowly varying pattern).
        assert!((pattern(1000, 0, 0) ^ pattern(1001, 0, 0)).count_ones() > 6);
        // Odd passes write the complement of the mix: every bit gets written both ways.
        assert_eq!(pattern(7, 3, 1), !mix(7, 3, 1));
        assert_eq!(pattern(7, 3, 2), mix(7, 3, 2));
    }

    #[test]
    fn block_orders_visit_every_block_once() {
        let mut rng = Rng::new(7);
        for blocks in [1u32, 2, 3, 12, 64, 1000, 16384] {
            let o = order(blocks, &mut rng);
            let mut seen = vec![false; blocks as usize];
            for g in 0..blocks {
                let b = ((u64::from(g) * u64::from(o.stride) + u64::from(o.offset))
                    % u64::from(blocks)) as usize;
                assert!(!seen[b], "block {b} twice for {blocks} blocks, {o:?}");
                seen[b] = true;
            }
        }
    }
}
