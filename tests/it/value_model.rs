//! The value model: per-unit catalog figures on one basis, scenarios with compute and memory
//! terms and floors, and efficiency factors calibrated on published results (each point
//! recomputed from the catalog and the model must land within 1.5x of what was published).

use gpuvalue::market::catalog::{Catalog, Severity};
use gpuvalue::report::rank::derivation;
use gpuvalue::value::calibration::{CalibrationFile, TOLERANCE};
use gpuvalue::value::rank::{RankOptions, RankReport, Source, rank};
use gpuvalue::value::scenario::{Rate, ScenarioFile};

fn embedded() -> (Catalog, ScenarioFile, CalibrationFile) {
    (
        Catalog::embedded(),
        ScenarioFile::embedded(),
        CalibrationFile::embedded(),
    )
}

fn ranked(scenario: &str) -> RankReport {
    let (c, s, _) = embedded();
    let opts = RankOptions::default();
    rank(&c.checked(), s.get(scenario).unwrap(), &[], &opts).unwrap()
}

#[test]
fn every_calibration_point_is_within_1_5x_of_its_published_figure() {
    let (c, s, cal) = embedded();
    let checks = cal.check(&c, &s).unwrap();
    assert!(checks.len() >= 25, "{} points", checks.len());
    for p in &checks {
        assert!(
            p.ratio <= TOLERANCE && p.ratio >= 1.0 / TOLERANCE,
            "{}: implied {} vs published {} {} (ratio {:.2})",
            p.id,
            p.implied,
            p.published,
            p.unit,
            p.ratio
        );
    }
    // Every built-in scenario has published points behind it.
    for id in ["training", "inference", "hpc", "int8_inference"] {
        assert!(checks.iter().any(|p| p.what == id), "no point for {id}");
    }
}

#[test]
fn each_stored_factor_is_what_its_points_fit() {
    let (c, s, cal) = embedded();
    for (i, r) in cal.rules.iter().enumerate() {
        match cal.fit(i, &c, &s).unwrap() {
            Some(fit) => assert!(
                (r.factor / fit - 1.0).abs() < 0.05,
                "{} on {}: stored {} but its points fit {fit:.3}",
                r.figure.name(),
                r.applies_to(),
                r.factor
            ),
            None => assert!(
                r.basis.contains("assumption"),
                "an uncalibrated rule must say it is an assumption: {}",
                r.basis
            ),
        }
    }
}

#[test]
fn a_wrong_factor_moves_its_points_out_of_tolerance() {
    // The check can fail: a factor of half the fitted one puts its points outside 1.5x.
    let (c, s, mut cal) = embedded();
    let i = cal
        .rules
        .iter()
        .position(|r| r.figure == Rate::MatmulInt8Matrix && r.archs.is_empty())
        .unwrap();
    cal.rules[i].factor /= 2.0;
    let bad = cal
        .check(&c, &s)
        .unwrap()
        .into_iter()
        .filter(|p| p.ratio < 1.0 / TOLERANCE)
        .count();
    assert!(bad >= 3, "{bad}");
}

#[test]
fn catalog_figures_are_on_one_basis_and_say_what_is_derived() {
    let c = Catalog::embedded();
    let errors: Vec<String> = c
        .check()
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    for g in &c.gpus {
        assert!(g.arch.is_some(), "{}: no architecture", g.id);
        // Tensor figures are dense: a sparse figure is twice the dense one, so FP16 matrix
        // over FP32 stays under the generation's dense ratio. Against AMD's packed FP32
        // rate where one is stated: CDNA4 doubled the matrix rate per CU (MI355X FP16 2.5
        // PFLOPS dense is 32x its unpacked FP32 of 78.6, 16x the packed 157.3). Blackwell
        // doubled Hopper's tensor rate per SM at the same FP32 (B200: 2,250 dense over 75,
        // 30x; the sparse 4,500 would be 60x).
        let fp32 = g.fp32_packed_tflops.or(g.fp32_tflops);
        let most = if g.arch.as_deref() == Some("blackwell") {
            34.0
        } else {
            17.0
        };
        if let (Some(t), Some(f)) = (g.fp16_tensor_tflops, fp32) {
            assert!(t / f <= most, "{}: FP16 matrix {t} vs FP32 {f}", g.id);
        }
        // FP8 at most twice FP16; FP4 at most four times FP8 (twice on B200; 3.1x on B300,
        // whose Blackwell Ultra raised FP4 alone; 4x on GeForce, whose FP8 figure is with
        // FP32 accumulate at half rate and its FP4 is not).
        if let (Some(t), Some(e)) = (g.fp16_tensor_tflops, g.fp8_matrix_tflops) {
            assert!(e <= 2.03 * t, "{}: FP8 {e} vs FP16 {t}", g.id);
        }
        if let (Some(e), Some(q)) = (g.fp8_matrix_tflops, g.fp4_matrix_tflops) {
            assert!(q <= 4.01 * e, "{}: FP4 {q} vs FP8 {e}", g.id);
        }
    }
    let g = |id: &str| c.gpu(id).unwrap();
    // AMD: FP32 on the unpacked basis, the packed figure stated apart.
    assert_eq!(g("mi300x").fp32_tflops, Some(81.7));
    assert_eq!(g("mi300x").fp32_packed_tflops, Some(163.4));
    assert_eq!(g("mi250x").fp32_tflops, Some(47.9));
    // An MI250X package is two adapters of 64 GB.
    assert_eq!(g("mi250x").adapters(), 2);
    assert_eq!(g("mi250x").memory_per_adapter_gb(), Some(64.0));
    // Derived figures are marked: L4 FP64 at 1/64, A10G everything.
    assert_eq!(g("l4").fp64_vector_tflops, Some(0.47));
    assert!(g("l4").derivation("fp64_vector_tflops").is_some());
    assert!(g("a10g").derivation("fp32_tflops").is_some());
    assert!(g("a30").fp16_tensor_tflops.is_some());
}

#[test]
fn training_ranks_on_tensor_cores_and_bandwidth() {
    let r = ranked("training");
    let hours = |gpu: &str| {
        r.rows
            .iter()
            .find(|x| x.gpu == gpu && x.gpu_count == 1)
            .map(|x| x.hours_per_job)
            .unwrap_or_else(|| panic!("no 1-GPU {gpu} row"))
    };
    // An A100 is faster than an L4 (it was not, with FP32-only figures).
    assert!(hours("l4") > 3.0 * hours("a100-40gb-pcie"));
    // H100 over A100 close to the bandwidth ratio, not the 3.2x tensor ratio.
    let gain = hours("a100-80gb-pcie") / hours("h100-sxm");
    assert!((1.6..2.6).contains(&gain), "{gain}");
    // Implied ResNet-50 throughput of an A100 is in the published range (about 2,400/s).
    let img_s = 1.152e8 / (hours("a100-40gb-pcie") * 3600.0);
    assert!((1600.0..3600.0).contains(&img_s), "{img_s}");
    let a100 = r.rows.iter().find(|x| x.gpu == "a100-40gb-pcie").unwrap();
    let f = &a100.figures[0];
    assert_eq!(f.figure, Rate::MatmulF16Matrix);
    assert_eq!(f.source, Source::Estimated);
    let short = derivation(f);
    assert!(short.contains("312 TFLOPS x 0.57 calibrated"), "{short}");
    assert!(r.efficiencies.iter().any(|e| e.origin == "calibrated"));
}

#[test]
fn inference_leaves_out_gpus_without_room_for_the_kv_cache() {
    let r = ranked("inference");
    assert!(
        r.rows
            .iter()
            .all(|x| x.gpu != "t4" && !x.gpu.starts_with("v100-sxm2-16"))
    );
    let t4 = r
        .excluded
        .iter()
        .find(|e| e.instance.starts_with("aws/g4dn"))
        .unwrap();
    assert!(
        t4.reason.contains("16 GB per GPU < 16.65 GB"),
        "{}",
        t4.reason
    );
    assert!(r.rows.iter().any(|x| x.gpu == "l4"));
}

#[test]
fn hpc_uses_fp64_matrix_engines_and_the_vendor_factor() {
    let r = ranked("hpc");
    let row = |gpu: &str| r.rows.iter().find(|x| x.gpu == gpu).unwrap();
    let h100 = derivation(&row("h100-sxm").figures[0]);
    assert!(h100.contains("67 TFLOPS x 0.76"), "{h100}");
    let mi = derivation(&row("mi300x").figures[0]);
    assert!(mi.contains("163.4 TFLOPS x 0.35"), "{mi}");
    // A GPU without FP64 matrix engines falls back to its vector units, and says so.
    let l4 = &row("l4").figures[0];
    assert!(
        derivation(l4).starts_with("FP64 vector: 0.47 TFLOPS"),
        "{}",
        derivation(l4)
    );
    assert!(l4.basis.contains("peak derived"), "{}", l4.basis);
}

#[test]
fn int8_inference_is_ranked_on_int8_engines() {
    let r = ranked("int8_inference");
    assert!(!r.rows.is_empty());
    let h100 = r.rows.iter().find(|x| x.gpu == "h100-sxm").unwrap();
    assert!(derivation(&h100.figures[0]).contains("1978.9 TOPS x 0.42"));
    // A V100 has no INT8 engine: its work falls back to the FP16 tensor cores.
    if let Some(v) = r.rows.iter().find(|x| x.gpu.starts_with("v100")) {
        let short = derivation(&v.figures[0]);
        assert!(short.starts_with("FP16 matrix engines"), "{short}");
    }
}

#[test]
fn the_model_line_states_terms_and_floors() {
    let s = ScenarioFile::embedded();
    let line = s.get("inference").unwrap().model_line();
    assert!(line.contains("memory bandwidth (triad)"), "{line}");
    assert!(line.contains("16.65 GB per GPU"), "{line}");
    let line = s.get("training").unwrap().model_line();
    assert!(
        line.contains("FP16 matrix engines") && line.contains("4 vCPUs"),
        "{line}"
    );
}

#[test]
fn schema_1_scenario_files_still_load() {
    let f = ScenarioFile::parse(
        r#"{"schema_version": 1, "scenarios": [{"id": "x", "description": "", "min_gpu_memory_gb": 20,
            "terms": [{"figure": "matmul_f32", "work": 1e12, "unit": "FLOP"}]}]}"#,
        "old.json",
    )
    .unwrap();
    assert_eq!(f.scenarios[0].memory_floor_gb(), Some(20.0));
    let e = ScenarioFile::parse(
        r#"{"schema_version": 2, "scenarios": [{"id": "x", "description": "", "memory_floor": [{"what": "w", "gb": -1}],
            "terms": [{"figure": "matmul_f32", "work": 1e12, "unit": "FLOP"}]}]}"#,
        "new.json",
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("scenarios[0].memory_floor[0].gb"),
        "{e}"
    );
}

/// The lavapipe fixture, relabelled as an H100 (a hardware adapter, by name).
fn relabelled_lavapipe() -> gpuvalue::results::ResultsFile {
    let mut r =
        gpuvalue::results::ResultsFile::parse(include_str!("../fixtures/results-lavapipe.json"))
            .unwrap();
    r.adapter.name = "NVIDIA H100 80GB HBM3".into();
    r.adapter.software = false;
    r
}

#[test]
fn an_implausible_measurement_is_flagged_and_changes_no_row() {
    let (c, s, _) = embedded();
    for id in ["inference", "training", "hpc"] {
        let sc = s.get(id).unwrap();
        let opts = RankOptions::default();
        let without = rank(&c.checked(), sc, &[], &opts).unwrap();
        let file = vec![("lavapipe-as-h100.json".to_string(), relabelled_lavapipe())];
        let with = rank(&c.checked(), sc, &file, &opts).unwrap();
        // Every row (H100 rows included) and every factor is as without the file.
        assert_eq!(with.rows, without.rows, "{id}");
        assert_eq!(with.efficiencies, without.efficiencies, "{id}");
        let note = with.measurement_notes.join("\n");
        assert!(
            note.contains("lavapipe-as-h100.json")
                && note.contains("outside the plausible 20-110%"),
            "{id}: {note}"
        );
        assert!(
            note.contains("none of its figures is used as H100 SXM's"),
            "{note}"
        );
        // The machine itself is still shown, with its own figures, but with no time per
        // job from figures just rejected as its GPU's.
        assert_eq!(with.machines.len(), 1);
        let m = &with.machines[0];
        assert_eq!(m.hours_per_job, None, "{id}: {m:?}");
        let line = gpuvalue::report::rank::machine_line(&with, m);
        assert!(
            line.contains("implausible for H100 SXM") && !line.contains("per job"),
            "{id}: {line}"
        );
        // Asked for, it is used, and says so; the factors derived from it then name it.
        let used = RankOptions {
            use_implausible: true,
            ..RankOptions::default()
        };
        let forced = rank(&c.checked(), sc, &file, &used).unwrap();
        assert!(
            forced
                .measurement_notes
                .join("\n")
                .contains("used as measured (--use-implausible)")
        );
        for e in forced
            .efficiencies
            .iter()
            .filter(|e| e.basis.contains("measured/datasheet"))
        {
            assert!(e.basis.contains("lavapipe-as-h100.json"), "{e:?}");
        }
        let latency =
            forced.rows.iter().flat_map(|r| &r.figures).find(|f| {
                f.figure == Rate::LatencyDispatch && f.basis.contains("median of measured")
            });
        if let Some(l) = latency {
            assert!(l.basis.contains("lavapipe-as-h100.json"), "{l:?}");
        }
    }
}

#[test]
fn a_hardware_adapters_board_power_is_its_datasheet_tdp_and_a_software_one_has_none() {
    use gpuvalue::value::calibration::board_power_w;
    let mut r = relabelled_lavapipe();
    let catalog = Catalog::embedded();
    let h100 = catalog
        .match_adapter("NVIDIA H100 80GB HBM3")
        .expect("an H100 in the catalog");
    assert!(h100.tdp_w.is_some_and(|w| w >= 300.0), "{:?}", h100.tdp_w);
    assert_eq!(board_power_w(&r.adapter), h100.tdp_w);
    r.adapter.software = true;
    assert_eq!(board_power_w(&r.adapter), None);
}
