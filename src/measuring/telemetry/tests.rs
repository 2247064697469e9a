//! The sampler over recorded sysfs trees: amdgpu, xe and RAPL, a counter that wraps, one
//! that goes backwards, a file that vanishes or reads garbage, a watt past the bound.

use super::sysfs::discover;
use super::*;
use std::fs;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn adapter(bus: Option<&str>, vendor_id: u32, software: bool) -> AdapterSummary {
    let r = crate::results::ResultsFile::parse(include_str!(
        "../../../tests/fixtures/results-lavapipe.json"
    ))
    .unwrap();
    let mut a = r.adapter;
    a.pci_bus_id = bus.map(String::from);
    a.vendor_id = vendor_id;
    a.software = software;
    a.device_type = if software { "cpu" } else { "discrete" }.into();
    a
}

const BUS: &str = "0000:03:00.0";

fn amdgpu(root: &Path) -> PathBuf {
    let dev = format!("sys/bus/pci/devices/{BUS}");
    let h = format!("{dev}/hwmon/hwmon4");
    write(root, &format!("{h}/name"), "amdgpu\n");
    write(root, &format!("{h}/power1_average"), "312000000\n");
    write(root, &format!("{h}/power1_cap"), "750000000\n");
    write(root, &format!("{h}/temp1_input"), "71000\n");
    write(root, &format!("{h}/temp1_crit"), "100000\n");
    write(root, &format!("{h}/freq1_input"), "2100000000\n");
    write(root, &format!("{h}/freq2_input"), "1300000000\n");
    write(
        root,
        &format!("{dev}/pp_dpm_sclk"),
        "0: 500Mhz\n1: 1500Mhz\n2: 2100Mhz *\n",
    );
    write(root, &format!("{dev}/gpu_busy_percent"), "97\n");
    write(root, &format!("{h}/fan1_input"), "2150\n");
    root.join(h)
}

use std::path::PathBuf;

#[test]
fn amdgpu_hwmon_reads_exact_watts_clocks_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let h = amdgpu(dir.path());
    let (src, notes) = discover(&adapter(Some(BUS), 0x1002, false), dir.path());
    let mut src = src.expect("amdgpu read");
    assert_eq!(src.name(), "amdgpu hwmon");
    assert!(notes[0].read && notes[0].counters.contains(&"power limit".to_string()));
    let r = src.read().unwrap();
    assert_eq!(r.power_w, Some(312.0));
    assert_eq!(r.graphics_mhz, Some(2100.0));
    assert_eq!(r.memory_mhz, Some(1300.0));
    assert_eq!(r.temperature_c, Some(71.0));
    assert_eq!(r.power_limit_w, Some(750.0));
    assert_eq!(r.max_graphics_mhz, Some(2100.0));
    assert_eq!(r.utilisation_pct, Some(97.0));
    assert_eq!(r.fan_rpm, Some(2150.0));
    // Garbage and a vanished file are gaps with their reason, and the next read recovers.
    fs::write(h.join("power1_average"), "N/A\n").unwrap();
    assert!(src.read().unwrap_err().contains("is not a number"));
    fs::remove_file(h.join("power1_average")).unwrap();
    let e = src.read().unwrap_err();
    assert!(e.contains("no power1_average"), "{e}");
    fs::write(h.join("power1_average"), "300000000\n").unwrap();
    assert_eq!(src.read().unwrap().power_w, Some(300.0));
}

#[test]
fn a_counter_wraps_at_its_range_and_going_backwards_is_a_gap() {
    let mut c = Counter::wrapping_at(Some(1_000_000));
    assert_eq!(c.advance(900_000), Ok(0.0));
    assert_eq!(c.advance(950_000), Ok(0.05));
    // Wrapped: 50,000 to the range and 100,000 past zero.
    assert_eq!(c.advance(100_000), Ok(0.2));
    let mut c = Counter::default();
    c.advance(500).unwrap();
    assert!(c.advance(100).unwrap_err().contains("went backwards"));
    // It restarts from there.
    assert_eq!(c.advance(1_100_100), Ok(1.1));
}

fn rapl(root: &Path, uj: u64) {
    let z = "sys/class/powercap/intel-rapl:0";
    write(root, &format!("{z}/name"), "package-0\n");
    write(root, &format!("{z}/energy_uj"), &format!("{uj}\n"));
    write(root, &format!("{z}/max_energy_range_uj"), "262143328850\n");
    // A subzone is not summed again.
    write(root, "sys/class/powercap/intel-rapl:0:0/energy_uj", "5\n");
    write(
        root,
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
        "3000000\n",
    );
    write(
        root,
        "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq",
        "3400000\n",
    );
}

#[test]
fn rapl_reads_the_package_energy_through_a_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    rapl(root, 262_143_000_000);
    let (src, notes) = discover(&adapter(None, 0, true), root);
    let mut src = src.expect("RAPL read");
    assert_eq!(notes.last().unwrap().source, "RAPL");
    let e = "sys/class/powercap/intel-rapl:0/energy_uj";
    let mut samples = Vec::new();
    // 65 W for 3 samples 0.5 s apart, wrapping after the first.
    for (i, uj) in [262_143_000_000u64, 32_171_150, 64_671_150, 97_171_150]
        .iter()
        .enumerate()
    {
        write(root, e, &format!("{uj}\n"));
        samples.push(Sample {
            t: i as f64 * 0.5,
            reading: src.read(),
        });
    }
    let r = samples[0].reading.as_ref().unwrap();
    assert_eq!(r.graphics_mhz, Some(3200.0));
    let refs: Vec<&Sample> = samples.iter().collect();
    let w = summarise("RAPL", CPU_MAX_W, &refs, 1.5);
    assert_eq!(w.method.as_deref(), Some("energy counter"));
    assert!((w.mean_w.unwrap() - 65.0).abs() < 1e-6, "{w:?}");
    assert!((w.energy_j.unwrap() - 97.5).abs() < 1e-6);
    assert_eq!(w.gaps, 0);
}

#[test]
fn xe_energy_counter_gives_the_mean_and_an_absurd_interval_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let h = format!("sys/bus/pci/devices/{BUS}/hwmon/hwmon2");
    write(root, &format!("{h}/name"), "xe\n");
    write(root, &format!("{h}/energy1_input"), "0\n");
    let (src, _) = discover(&adapter(Some(BUS), 0x8086, false), root);
    let mut src = src.expect("xe read");
    let mut samples = Vec::new();
    // 150 W for a second, then a jump of 1 MJ in 0.1 s (garbage), then 150 W again.
    for (t, uj) in [
        (0.0, 0u64),
        (1.0, 150_000_000),
        (1.1, 1_000_150_000_000),
        (2.1, 1_000_300_000_000),
    ] {
        write(root, &format!("{h}/energy1_input"), &format!("{uj}\n"));
        samples.push(Sample {
            t,
            reading: src.read(),
        });
    }
    let refs: Vec<&Sample> = samples.iter().collect();
    let w = summarise("xe hwmon", GPU_MAX_W, &refs, 2.1);
    assert!((w.mean_w.unwrap() - 150.0).abs() < 1e-6, "{w:?}");
    assert_eq!(w.gaps, 1);
}

#[test]
fn power_at_the_limit_is_called_a_cap_and_watts_past_the_bound_are_dropped() {
    let reading = |w: f64| Reading {
        power_w: Some(w),
        power_limit_w: Some(400.0),
        graphics_mhz: Some(1500.0),
        max_graphics_mhz: Some(2100.0),
        temperature_c: Some(60.0),
        thermal_limit_c: Some(100.0),
        ..Reading::default()
    };
    let s: Vec<Sample> = [398.0, 399.0, 1e9, 397.0]
        .iter()
        .enumerate()
        .map(|(i, w)| Sample {
            t: i as f64 * 0.1,
            reading: Ok(reading(*w)),
        })
        .collect();
    let refs: Vec<&Sample> = s.iter().collect();
    let w = summarise("amdgpu hwmon", GPU_MAX_W, &refs, 0.4);
    assert_eq!(w.mean_w, Some(398.0));
    assert_eq!(w.gaps, 1);
    assert!(w.capped(), "{:?}", w.throttle);
    assert_eq!(w.full_clocks(), Some(false));
    // Well under the limit: no cap.
    let s = [Sample {
        t: 0.0,
        reading: Ok(reading(200.0)),
    }];
    let w = summarise("amdgpu hwmon", GPU_MAX_W, &[&s[0]], 0.1);
    assert!(!w.capped());
}

#[test]
fn without_a_counter_every_source_tried_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let (src, notes) = discover(&adapter(None, 0, true), dir.path());
    assert!(src.is_none());
    let names: Vec<&str> = notes.iter().map(|n| n.source.as_str()).collect();
    assert_eq!(names, ["RAPL", "amd_energy"]);
    assert!(notes.iter().all(|n| !n.read && n.reason.is_some()));
    let (_, notes) = discover(&adapter(None, 0x10de, false), dir.path());
    assert!(notes[0].reason.as_deref().unwrap().contains("PCI bus id"));
    let (_, notes) = discover(&adapter(Some(BUS), 0x10de, false), dir.path());
    assert!(
        notes[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("no such PCI device")
    );
    write(
        dir.path(),
        &format!("sys/bus/pci/devices/{BUS}/vendor"),
        "0x10de\n",
    );
    let (_, notes) = discover(&adapter(Some(BUS), 0x10de, false), dir.path());
    assert!(
        notes[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("no hwmon power files"),
        "{notes:?}"
    );
}

#[test]
fn a_reading_past_one_and_a_half_times_the_datasheet_board_power_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    amdgpu(root);
    // The tree reads 312 W: a 200 W board cannot (bound 300 W), a 700 W one can.
    for (board, mean) in [
        (Some(200.0), None),
        (Some(700.0), Some(312.0)),
        (None, Some(312.0)),
    ] {
        let mut s = Sampler::for_adapter(
            &adapter(Some(BUS), 0x1002, false),
            root,
            Duration::from_millis(10),
            board,
        );
        std::thread::sleep(Duration::from_millis(60));
        let w = s.window(0.0, s.now()).unwrap();
        assert_eq!(w.mean_w, mean, "{board:?}: {w:?}");
        let info = s.finish();
        let bound = info.bound.unwrap();
        assert_eq!(bound.datasheet_w, board);
        assert_eq!(bound.max_w, board.map_or(GPU_MAX_W, |b| 1.5 * b));
        assert!(
            info.line().contains("a reading is a gap"),
            "{}",
            info.line()
        );
        if board == Some(200.0) {
            assert!(w.gaps >= 1, "{w:?}");
        }
    }
}

#[test]
fn the_sampler_thread_reads_beside_the_run_and_keeps_going_through_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let h = amdgpu(root);
    let mut s = Sampler::for_adapter(
        &adapter(Some(BUS), 0x1002, false),
        root,
        Duration::from_millis(10),
        None,
    );
    assert!(s.reading());
    std::thread::sleep(Duration::from_millis(80));
    fs::remove_file(h.join("power1_average")).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    fs::write(h.join("power1_average"), "312000000\n").unwrap();
    std::thread::sleep(Duration::from_millis(80));
    let w = s.window(0.0, s.now()).unwrap();
    assert_eq!(w.mean_w, Some(312.0));
    assert!(w.samples >= 5, "{w:?}");
    assert_eq!(s.latest().unwrap().power_w, Some(312.0));
    let info = s.finish();
    assert!(
        info.gaps >= 1 && info.gap_reasons[0].contains("power1_average"),
        "{info:?}"
    );
    assert!(info.samples > info.gaps);
}
