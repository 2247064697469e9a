//! The double-float building blocks against exact CPU arithmetic (property tests and edge
//! cases), the self-test's power to detect broken variants, and the accuracy of the df64
//! and f64 matmuls, all on the default adapter (lavapipe in CI).

use gpuvalue::measuring::gpu::Timer;
use gpuvalue::measuring::probes::double::{
    self as precision, Broken, Inputs, Kind, Variant, from_df, to_df,
};
use gpuvalue::measuring::probes::measure::Plan;
use gpuvalue::measuring::reference::Dims;
use proptest::prelude::*;
use std::sync::OnceLock;
use std::time::Duration;

/// One device for every case of the property tests (opening one per case would dominate).
fn shared_gpu() -> Option<&'static gpuvalue::measuring::gpu::Gpu> {
    static GPU: OnceLock<Option<gpuvalue::measuring::gpu::Gpu>> = OnceLock::new();
    GPU.get_or_init(crate::common::gpu).as_ref()
}

const U2: f64 = 1.0 / (1u64 << 48) as f64; // u^2 with u = 2^-24

fn check_ops(xs: &[(f32, f32)], ys: &[(f32, f32)]) -> Result<(), String> {
    let Some(gpu) = shared_gpu() else {
        return Ok(());
    };
    let out = pollster::block_on(precision::run_ops(gpu, xs, ys)).map_err(|e| e.to_string())?;
    for (i, o) in out.iter().enumerate() {
        let (x, y) = (xs[i], ys[i]);
        // TwoSum and TwoProduct are exact: the pair holds the exact result.
        let sum = f64::from(x.0) + f64::from(y.0);
        if from_df(o.two_sum.0, o.two_sum.1) != sum {
            return Err(format!(
                "two_sum({}, {}) = {:?}, exact {sum}",
                x.0, y.0, o.two_sum
            ));
        }
        let prod = f64::from(x.0) * f64::from(y.0);
        if from_df(o.two_prod.0, o.two_prod.1) != prod {
            return Err(format!(
                "two_prod({}, {}) = {:?}, exact {prod}",
                x.0, y.0, o.two_prod
            ));
        }
        // df_add (AccurateDWPlusDW): relative error <= 3u^2. df_mul is DWTimesDW1 (exact
        // TwoProduct of the high parts, both cross terms rounded, no FMA): proven <= 7u^2
        // (Joldes, Muller, Popescu 2017, Theorem for Algorithm 10); errors above 4u^2 do occur
        // (CI found 4.06u^2, kept below as an edge case). Plus f64 rounding of the check.
        let (xv, yv) = (from_df(x.0, x.1), from_df(y.0, y.1));
        let rel = |got: f64, want: f64| {
            if want == 0.0 {
                got.abs()
            } else {
                ((got - want) / want).abs()
            }
        };
        let ea = rel(from_df(o.add.0, o.add.1), xv + yv);
        if ea > 3.0 * U2 + 1e-16 {
            return Err(format!("df_add {x:?} + {y:?}: relative error {ea:e}"));
        }
        let em = rel(from_df(o.mul.0, o.mul.1), xv * yv);
        if em > 7.0 * U2 + 1e-16 {
            return Err(format!("df_mul {x:?} * {y:?}: relative error {em:e}"));
        }
    }
    Ok(())
}

/// A double-float with a random sign, mantissa and exponent in [2^-lo_exp, 2^hi_exp).
fn df_strategy() -> impl Strategy<Value = (f32, f32)> {
    (any::<bool>(), 1.0f64..2.0, -40i32..40, any::<u32>()).prop_map(|(neg, m, e, bits)| {
        let tail = (bits as f64 / u32::MAX as f64) * 2f64.powi(-30);
        let v = (m + tail) * 2f64.powi(e);
        to_df(if neg { -v } else { v })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn building_blocks_match_exact_arithmetic(
        pairs in proptest::collection::vec((df_strategy(), df_strategy()), 64..256)
    ) {
        let (xs, ys): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        check_ops(&xs, &ys).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn building_blocks_on_edge_cases() {
    let p = |v: f64| to_df(v);
    let cases: Vec<((f32, f32), (f32, f32))> = vec![
        (p(0.0), p(0.0)),
        (p(0.0), p(-1.5)),
        (p(1.0), p(-1.0)),
        (p(1.0), p(2f64.powi(-30))),
        (p(-1.0), p(2f64.powi(-30))),
        (p(2f64.powi(20)), p(2f64.powi(-20))),
        (p(2f64.powi(30)), p(-2f64.powi(-30))),
        (p(1.0 + 2f64.powi(-23)), p(1.0 - 2f64.powi(-24))),
        (p(-3.0), p(-7.0)),
        (p(1.0 / 3.0), p(-2.0 / 3.0)),
        (p(std::f64::consts::PI), p(-std::f64::consts::E)),
        (p(0.5), p(0.5)),
        // Large but inside the split's range (|a| < 2^115, see df64.wgsl).
        ((2f32.powi(100), 0.0), (0.5, 0.0)),
        // Found by the property test in CI (stop 42): df_mul's error is 4.06u^2 here, above
        // the 4u^2 once assumed and inside DWTimesDW1's proven 7u^2.
        ((-34009.96, -0.0019050487), (-0.27806434, -1.177_797_95e-8)),
    ];
    let (xs, ys): (Vec<_>, Vec<_>) = cases.into_iter().unzip();
    check_ops(&xs, &ys).unwrap();
}

#[test]
fn self_test_passes_and_catches_broken_variants() {
    let Some(gpu) = shared_gpu() else { return };
    let ok = pollster::block_on(precision::self_test(gpu, Broken::default())).unwrap();
    assert!(ok.usable, "{ok:?}");
    assert!(
        ok.two_sum_exact && ok.product_exact && ok.subnormals_kept,
        "{ok:?}"
    );
    if gpu.info.name.contains("llvmpipe") {
        // Facts measured on lavapipe: fma is not fused, the split product is exact.
        assert!(
            !ok.fma_fused && ok.split_exact && ok.product == "split",
            "{ok:?}"
        );
    }
    let plain = pollster::block_on(precision::self_test(
        gpu,
        Broken {
            plain_product: true,
            ..Broken::default()
        },
    ))
    .unwrap();
    assert!(!plain.product_exact && !plain.usable, "{plain:?}");
    assert!(
        plain.reason.as_deref().unwrap_or("").contains("product"),
        "{plain:?}"
    );
    let unguarded = pollster::block_on(precision::self_test(
        gpu,
        Broken {
            unguarded_sum: true,
            ..Broken::default()
        },
    ))
    .unwrap();
    if gpu.info.name.contains("llvmpipe") {
        // Mesa folds (a + b) - a to b without the run-time 1.0: the self-test must see it.
        assert!(
            !unguarded.two_sum_exact && !unguarded.usable,
            "{unguarded:?}"
        );
    }
}

fn plan() -> Plan {
    Plan {
        warmup: Duration::ZERO,
        min_warmup_runs: 1,
        target_sample: Duration::from_millis(1),
        samples: 3,
        max_iters: 2,
        abandon_above_s: None,
    }
}

#[test]
fn df64_matmul_reaches_double_float_accuracy() {
    let Some(gpu) = shared_gpu() else { return };
    let timer = Timer::new(gpu, true);
    let st = pollster::block_on(precision::self_test(gpu, Broken::default())).unwrap();
    let d = Dims {
        m: 256,
        n: 256,
        k: 256,
    };
    let r = pollster::block_on(precision::run_matmul(
        gpu,
        &timer,
        Variant {
            kind: Kind::Df64,
            tm: 8,
            use_fma: st.fma_fused,
            subgroup: false,
        },
        d,
        Inputs::Random,
        &plan(),
    ))
    .unwrap();
    assert!(r.rel_error <= 1e-12, "random: {:e}", r.rel_error);
    let odd = Dims {
        m: 37,
        n: 70,
        k: 19,
    };
    let r = pollster::block_on(precision::run_matmul(
        gpu,
        &timer,
        Variant {
            kind: Kind::Df64,
            tm: 4,
            use_fma: st.fma_fused,
            subgroup: false,
        },
        odd,
        Inputs::Adversarial,
        &plan(),
    ))
    .unwrap();
    assert!(r.rel_error <= 1e-11, "adversarial: {:e}", r.rel_error);
}

/// The df64 kernel that shares A by subgroup broadcast: the same accuracy as the plain one,
/// on a padded odd shape (K not a multiple of 4) and adversarial exponents too.
#[test]
fn df64_subgroup_matmul_reaches_double_float_accuracy() {
    let Some(gpu) = shared_gpu() else { return };
    let f = &gpu.info.features;
    if !precision::df64_subgroups(gpu) {
        eprintln!(
            "note: {} has no subgroups of 8 or more ({}..{}); the df64 subgroup kernel is not run",
            gpu.info.name, f.subgroup_min_size, f.subgroup_max_size
        );
        return;
    }
    // The size-16 run below (a child process) says which size it expects.
    if let Ok(want) = std::env::var("GPUVALUE_EXPECT_SUBGROUP") {
        assert_eq!(f.subgroup_min_size.to_string(), want, "subgroup size");
    }
    eprintln!(
        "df64 subgroup kernel at subgroup size {}",
        f.subgroup_min_size
    );
    let timer = Timer::new(gpu, true);
    let st = pollster::block_on(precision::self_test(gpu, Broken::default())).unwrap();
    for (tm, d, inputs, tol) in [
        (
            8,
            Dims {
                m: 256,
                n: 256,
                k: 256,
            },
            Inputs::Random,
            1e-12,
        ),
        (
            16,
            Dims {
                m: 37,
                n: 70,
                k: 19,
            },
            Inputs::Adversarial,
            1e-11,
        ),
    ] {
        let r = pollster::block_on(precision::run_matmul(
            gpu,
            &timer,
            Variant {
                kind: Kind::Df64,
                tm,
                use_fma: st.fma_fused,
                subgroup: true,
            },
            d,
            inputs,
            &plan(),
        ))
        .unwrap();
        assert!(
            r.rel_error <= tol,
            "TM {tm}, {d}, {inputs:?}: error {:e}",
            r.rel_error
        );
    }
}

/// The same test at subgroup size 16, where lanes 8-15 load copies of rows 0-7: llvmpipe
/// runs 16 lanes with `LP_NATIVE_VECTOR_WIDTH=512`, read when the driver starts, so the test
/// runs again in a child process (on llvmpipe only; other adapters have their own size).
#[test]
fn df64_subgroup_matmul_is_accurate_at_subgroup_size_16() {
    let Some(gpu) = shared_gpu() else { return };
    if !gpu.info.name.contains("llvmpipe") || std::env::var_os("LP_NATIVE_VECTOR_WIDTH").is_some() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "precision::df64_subgroup_matmul_reaches_double_float_accuracy",
            "--exact",
            "--nocapture",
        ])
        .env("LP_NATIVE_VECTOR_WIDTH", "512")
        .env("GPUVALUE_EXPECT_SUBGROUP", "16")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("df64 subgroup kernel at subgroup size 16") && text.contains("1 passed"),
        "{text}"
    );
}

#[test]
fn f64_matmul_is_accurate_or_unsupported() {
    let Some(gpu) = shared_gpu() else { return };
    if !gpu.has(wgpu::Features::SHADER_F64) {
        return;
    }
    let timer = Timer::new(gpu, true);
    let d = Dims {
        m: 130,
        n: 64,
        k: 77,
    };
    let r = pollster::block_on(precision::run_matmul(
        gpu,
        &timer,
        Variant {
            kind: Kind::F64,
            tm: 8,
            use_fma: false,
            subgroup: false,
        },
        d,
        Inputs::Random,
        &plan(),
    ))
    .unwrap();
    assert!(r.rel_error <= 1e-14, "{:e}", r.rel_error);
}

#[test]
fn f16_matmul_is_accurate_or_unsupported() {
    let Some(gpu) = shared_gpu() else { return };
    if !gpu.has(wgpu::Features::SHADER_F16) {
        return;
    }
    let timer = Timer::new(gpu, true);
    let d = Dims {
        m: 70,
        n: 33,
        k: 129,
    };
    let r = pollster::block_on(precision::run_matmul(
        gpu,
        &timer,
        Variant {
            kind: Kind::F16,
            tm: 4,
            use_fma: false,
            subgroup: false,
        },
        d,
        Inputs::Random,
        &plan(),
    ))
    .unwrap();
    assert!(r.rel_error <= 1e-5, "{:e}", r.rel_error);
}
