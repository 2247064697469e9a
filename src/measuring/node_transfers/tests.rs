use super::*;

fn ok(detail: &str) -> Check {
    Check {
        passed: true,
        detail: detail.into(),
    }
}

/// Two GPUs, two timed runs per step: GPU 0 copies 1 GB in 0.5 s alone and 1 s at
/// once; GPU 1 in 0.25 s alone and 0.5 s at once, starting 0.1 s after GPU 0.
fn two() -> (Vec<Step>, Vec<Worker>) {
    let steps = schedule(2);
    let mut outs = vec![Worker::default(), Worker::default()];
    for (k, s) in steps.iter().enumerate() {
        for r in 0..2 {
            let t = 10.0 * k as f64 + 3.0 * r as f64;
            let (a, b) = match s {
                Step::Alone(_, 0) => ((t, t + 0.5), None),
                Step::Alone(..) => ((t, t), Some((t, t + 0.25))),
                Step::Together(_) => ((t, t + 1.0), Some((t + 0.1, t + 0.6))),
                Step::Pair(..) => ((t, t + 0.5), Some((t + 0.6, t + 1.1))),
            };
            if !matches!(s, Step::Alone(_, 1)) {
                outs[0].spans.insert((k, r), a);
            }
            if let Some(b) = b {
                outs[1].spans.insert((k, r), b);
            }
        }
        let c = ok("compared");
        match s {
            Step::Alone(_, w) => {
                outs[*w].checks.insert(k, c);
            }
            Step::Together(_) => {
                outs[0].checks.insert(k, c.clone());
                outs[1].checks.insert(k, c);
            }
            Step::Pair(_, b) => {
                outs[*b].checks.insert(k, c);
            }
        }
    }
    (steps, outs)
}

fn results<'a>(steps: &'a [Step], outs: &'a [Worker]) -> Results<'a> {
    Results {
        steps,
        outs,
        bytes: 1_000_000_000,
        runs: 2,
    }
}

/// A link over host memory with a defect, for the method's own checks.
#[derive(Clone, Copy, PartialEq)]
enum Defect {
    None,
    /// Every put after the first (at open) does nothing.
    NoopPut,
    /// Gets do nothing.
    NoopGet,
    /// The n-th call and every one after fail.
    FailFrom(usize),
}

struct Fake {
    buf: Vec<f32>,
    defect: Defect,
    calls: usize,
}

impl link::Link for Fake {
    fn put(&mut self, host: &[f32]) -> Result<()> {
        self.calls += 1;
        if let Defect::FailFrom(n) = self.defect
            && self.calls >= n
        {
            anyhow::bail!("injected failure");
        }
        if self.defect != Defect::NoopPut || self.calls == 1 {
            self.buf.copy_from_slice(host);
        }
        Ok(())
    }
    fn get(&mut self, host: &mut [f32]) -> Result<()> {
        self.calls += 1;
        if let Defect::FailFrom(n) = self.defect
            && self.calls >= n
        {
            anyhow::bail!("injected failure");
        }
        if self.defect != Defect::NoopGet {
            host.copy_from_slice(&self.buf);
        }
        Ok(())
    }
}

/// The whole method over fake links, two timed runs a step, 1,024 floats.
fn walk_fakes(defects: &[Defect]) -> (Vec<Step>, Vec<Worker>) {
    let floats = 1024;
    let openers: Vec<Opener<'_>> = defects
        .iter()
        .map(|&defect| {
            Box::new(move || {
                Ok(Box::new(Fake {
                    buf: vec![0.0; floats],
                    defect,
                    calls: 0,
                }) as Box<dyn link::Link>)
            }) as Opener<'_>
        })
        .collect();
    let steps = schedule(defects.len());
    let outs = walk(
        &openers,
        &steps,
        2,
        floats,
        (0..defects.len()).collect(),
        &|_| {},
    );
    (steps, outs)
}

fn check_of(steps: &[Step], outs: &[Worker], who: usize, s: Step) -> Check {
    let k = steps.iter().position(|&x| x == s).unwrap();
    outs[who].checks[&k].clone()
}

#[test]
fn good_links_pass_every_check_and_copies_that_do_nothing_fail_theirs() {
    let (steps, outs) = walk_fakes(&[Defect::None, Defect::None]);
    for (k, s) in steps.iter().enumerate() {
        let who = match *s {
            Step::Alone(_, w) | Step::Pair(_, w) => vec![w],
            Step::Together(_) => vec![0, 1],
        };
        for w in who {
            assert!(outs[w].checks[&k].passed, "{s:?}: {:?}", outs[w].checks[&k]);
            assert_eq!(
                (0..2)
                    .filter(|r| outs[w].spans.contains_key(&(k, *r)))
                    .count(),
                2
            );
        }
    }
    // GPU 1's puts do nothing: its host-to-device check, its device-to-host check (the
    // patterns put before each copy never arrive) and the copy into it fail.
    let (steps, outs) = walk_fakes(&[Defect::None, Defect::NoopPut]);
    let c = |who, s| check_of(&steps, &outs, who, s);
    assert!(!c(1, Step::Alone(Direction::ToDevice, 1)).passed);
    assert!(!c(1, Step::Alone(Direction::ToHost, 1)).passed);
    assert!(!c(1, Step::Pair(0, 1)).passed);
    assert!(c(0, Step::Alone(Direction::ToDevice, 0)).passed);
    assert!(
        c(0, Step::Pair(1, 0)).passed,
        "GPU 1's buffer still holds its data"
    );
    // GPU 0's gets do nothing: device-to-host fails, the copy out of it fails, and so
    // does the copy into it (its read-back cannot confirm what arrived).
    let (steps, outs) = walk_fakes(&[Defect::NoopGet, Defect::None]);
    let c = |who, s| check_of(&steps, &outs, who, s);
    assert!(!c(0, Step::Alone(Direction::ToHost, 0)).passed);
    assert!(!c(1, Step::Pair(0, 1)).passed);
    assert!(!c(0, Step::Pair(1, 0)).passed);
    assert!(c(1, Step::Alone(Direction::ToHost, 1)).passed);
}

#[test]
fn a_gpu_that_fails_midway_stops_alone_and_the_others_finish() {
    // GPU 1 fails at its 10th call (during the first steps); nothing hangs.
    let (steps, outs) = walk_fakes(&[Defect::None, Defect::FailFrom(10), Defect::None]);
    assert_eq!(outs[1].error.as_deref(), Some("injected failure"));
    assert!(outs[0].error.is_none() && outs[2].error.is_none());
    let c = |who, s| check_of(&steps, &outs, who, s);
    assert!(c(0, Step::Pair(2, 0)).passed);
    assert!(c(2, Step::Pair(0, 2)).passed);
    let from_failed = c(0, Step::Pair(1, 0));
    assert!(!from_failed.passed);
    assert!(
        from_failed.detail.contains("the source GPU (#1) failed"),
        "{from_failed:?}"
    );
    let r = results(&steps, &outs);
    let k = steps
        .iter()
        .position(|&x| x == Step::Together(Direction::ToHost))
        .unwrap();
    assert!(r.figure(1, k).gbs.is_none());
}

#[test]
fn the_schedule_runs_each_gpu_alone_then_all_then_every_ordered_pair() {
    let s = schedule(3);
    assert_eq!(s.len(), 2 * (3 + 1) + 6);
    assert_eq!(s[0], Step::Alone(Direction::ToDevice, 0));
    assert_eq!(s[3], Step::Together(Direction::ToDevice));
    assert_eq!(s[7], Step::Together(Direction::ToHost));
    assert!(s.contains(&Step::Pair(2, 0)) && !s.contains(&Step::Pair(1, 1)));
    assert!(!schedule(1).iter().any(|s| matches!(s, Step::Together(_))));
    assert_eq!(schedule(1).len(), 2);
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

#[test]
fn rates_alone_at_once_and_the_total_come_from_the_spans() {
    let (steps, outs) = two();
    let r = results(&steps, &outs);
    let a = r.figure(0, r.step(Step::Alone(Direction::ToDevice, 0)));
    close(a.gbs.unwrap().median, 2.0);
    let g0 = r.way(0, Direction::ToDevice, "p");
    close(g0.together.unwrap().gbs.unwrap().median, 1.0);
    close(g0.together_vs_alone.unwrap(), 0.5);
    let infos = [sample(0), sample(1)];
    let gpus: Vec<GpuLinks> = (0..2).map(|me| r.gpu(me, &infos[me])).collect();
    let agg = r.aggregate(Direction::ToHost, &gpus);
    // 2 GB from the first start to the last end (1 s): 2 GB/s; alone 2 + 4 GB/s.
    close(agg.together_gbs.as_ref().unwrap().median, 2.0);
    close(agg.sum_alone_gbs.unwrap(), 6.0);
    close(agg.ratio.unwrap(), 1.0 / 3.0);
    // The staged copy: 1 GB over 0.5 s + 0.5 s.
    let p = r.pairs(&[&infos[0], &infos[1]]);
    assert_eq!(p.len(), 2);
    close(p[0].figure.gbs.as_ref().unwrap().median, 1.0);
    assert_eq!((p[0].from, p[0].to), (0, 1));
}

#[test]
fn a_failed_check_or_a_missing_run_withholds_the_figure() {
    let (steps, mut outs) = two();
    let k = steps
        .iter()
        .position(|s| *s == Step::Alone(Direction::ToHost, 1))
        .unwrap();
    outs[1].checks.insert(
        k,
        Check {
            passed: false,
            detail: "1 of 5 copies arrived changed".into(),
        },
    );
    let together = steps
        .iter()
        .position(|s| *s == Step::Together(Direction::ToDevice))
        .unwrap();
    outs[0].spans.remove(&(together, 1));
    let r = results(&steps, &outs);
    let f = r.figure(1, k);
    assert!(f.gbs.is_none() && !f.check.passed);
    let infos = [sample(0), sample(1)];
    let gpus: Vec<GpuLinks> = (0..2).map(|me| r.gpu(me, &infos[me])).collect();
    assert!(gpus[1].to_host.together_vs_alone.is_none());
    let agg = r.aggregate(Direction::ToHost, &gpus);
    assert!(agg.sum_alone_gbs.is_none() && agg.ratio.is_none());
    // One run without a span: no together figure on GPU 0, no total.
    assert!(gpus[0].to_device.together.as_ref().unwrap().gbs.is_none());
    assert!(
        r.aggregate(Direction::ToDevice, &gpus)
            .together_gbs
            .is_none()
    );
    let t = Transfers {
        cpu_model: String::new(),
        bytes: 1,
        runs: 2,
        warmup_runs: 1,
        timing: String::new(),
        gpus,
        together: Vec::new(),
        pairs: Vec::new(),
        notes: Vec::new(),
    };
    assert!(!t.all_passed());
}

#[test]
fn a_gpu_that_never_opened_says_why_on_its_row() {
    let (steps, mut outs) = two();
    outs[1] = Worker::failed("OpenCL: cannot create a context on X: -6");
    let r = results(&steps, &outs);
    let g = r.gpu(1, &sample(1));
    assert!(
        g.to_device
            .alone
            .check
            .detail
            .contains("cannot create a context")
    );
    assert_eq!(
        g.error.as_deref(),
        Some("OpenCL: cannot create a context on X: -6")
    );
}

#[test]
fn differing_elements_are_counted_by_their_bits() {
    assert_eq!(differ(&[0.0, 1.0], &[-0.0, 1.0]), 1);
    assert_eq!(differ(&[f32::NAN], &[f32::NAN]), 0);
    assert_eq!(differ(&[1.0], &[1.0, 2.0]), 1);
    assert!(!check(1, 4, "x").passed);
}

fn sample(index: usize) -> AdapterSummary {
    let r = crate::results::ResultsFile::parse(include_str!(
        "../../../tests/fixtures/results-lavapipe.json"
    ))
    .unwrap();
    AdapterSummary { index, ..r.adapter }
}

#[test]
fn one_api_only_and_software_adapters_only_when_allowed() {
    let gpu = |index, backend: &str, software| AdapterSummary {
        backend: backend.into(),
        software,
        name: format!("gpu {index}"),
        ..sample(index)
    };
    let list = AdapterList {
        adapters: Vec::new(),
        summaries: vec![
            gpu(0, "vulkan", false),
            gpu(1, "opencl", false),
            gpu(2, "vulkan", false),
            gpu(3, "vulkan", true),
        ],
        searched: "vulkan, opencl".into(),
        requested: None,
    };
    let mut opts = Options {
        adapter: AdapterChoice::All,
        backend: None,
        mib: None,
        runs: None,
        quick: true,
        allow_software: false,
    };
    let (chosen, notes) = choose(&list, &opts).unwrap();
    assert_eq!(chosen, vec![0, 2]);
    assert!(notes[0].contains("gpu 1 (opencl) left out") && notes[0].contains("(vulkan)"));
    assert!(notes[1].contains("--allow-software"));
    opts.allow_software = true;
    assert_eq!(choose(&list, &opts).unwrap().0, vec![0, 2, 3]);
    opts.adapter = AdapterChoice::Index(3);
    opts.allow_software = false;
    let e = choose(&list, &opts).unwrap_err().to_string();
    assert!(
        e.contains("no GPU to measure") && e.contains("--allow-software"),
        "{e}"
    );
}

#[test]
fn the_copy_size_fits_every_gpu_and_host_memory() {
    let mut a = sample(0);
    a.limits.max_buffer_size = 100 << 20;
    let b = sample(1);
    let opts = Options {
        adapter: AdapterChoice::All,
        backend: None,
        mib: Some(512),
        runs: None,
        quick: false,
        allow_software: false,
    };
    let mut notes = Vec::new();
    assert_eq!(
        copy_bytes(&opts, &[&a, &b], 64 << 30, &mut notes).unwrap(),
        100 << 20
    );
    assert!(notes[0].contains("100 MiB, not 512 MiB"));
    // 2 GiB of RAM, two GPUs: 1 GiB over 11 buffers.
    let got = copy_bytes(&opts, &[&b, &b], 2 << 30, &mut notes).unwrap();
    assert_eq!(got, ((1u64 << 30) / 11) / 4096 * 4096);
}
