//! One thread per GPU: the shared schedule's barriers, each copy timed and checked.

use super::*;

/// What the threads share.
pub(super) struct Shared<'a> {
    pub(super) steps: &'a [Step],
    pub(super) runs: usize,
    pub(super) floats: usize,
    pub(super) seed: u64,
    pub(super) barrier: Barrier,
    /// The host buffer a GPU-to-GPU copy is staged through, and whether the source's copy
    /// into it succeeded this run.
    pub(super) staging: Mutex<(Vec<f32>, bool)>,
    pub(super) epoch: Instant,
    pub(super) progress: &'a (dyn Fn(&str) + Sync),
    /// Each slot's adapter index, for progress lines.
    pub(super) index: Vec<usize>,
}

impl Shared<'_> {
    pub(super) fn data(&self, slot: usize) -> Vec<f32> {
        Rng::new(self.seed.wrapping_add(slot as u64)).fill_f32(self.floats)
    }
}

/// What one thread recorded.
#[derive(Default)]
pub(super) struct Worker {
    /// (step, timed run) -> (start, end) in seconds since the common epoch.
    pub(super) spans: HashMap<(usize, usize), (f64, f64)>,
    pub(super) checks: HashMap<usize, Check>,
    pub(super) error: Option<String>,
}

impl Worker {
    pub(super) fn failed(why: &str) -> Worker {
        Worker {
            error: Some(why.into()),
            ..Worker::default()
        }
    }
}

/// Number of elements whose bits differ.
pub(super) fn differ(a: &[f32], b: &[f32]) -> usize {
    a.iter()
        .zip(b)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count()
        + a.len().abs_diff(b.len())
}

pub(super) fn check(bad: usize, of: usize, what: &str) -> Check {
    Check {
        passed: bad == 0,
        detail: if bad == 0 {
            what.to_string()
        } else {
            format!("{what}: {bad} of {of} elements differ")
        },
    }
}

/// A device that failed stops copying; its thread still meets every barrier.
pub(super) struct Slot {
    pub(super) link: Option<Box<dyn link::Link>>,
    pub(super) error: Option<String>,
}

impl Slot {
    /// Runs one copy (a panic in the driver counts as its error), timed since the epoch.
    pub(super) fn copy(
        &mut self,
        epoch: Instant,
        f: impl FnOnce(&mut dyn link::Link) -> Result<()>,
    ) -> Option<(f64, f64)> {
        let link = self.link.as_deref_mut()?;
        if crate::interrupt::requested() {
            self.fail("interrupted".into());
            return None;
        }
        let t0 = epoch.elapsed().as_secs_f64();
        let r = catch_unwind(AssertUnwindSafe(|| f(link)));
        let t1 = epoch.elapsed().as_secs_f64();
        match r {
            Ok(Ok(())) => Some((t0, t1)),
            Ok(Err(e)) => {
                self.fail(format!("{e:#}"));
                None
            }
            Err(_) => {
                self.fail("the driver panicked during a copy".into());
                None
            }
        }
    }

    pub(super) fn fail(&mut self, e: String) {
        // Releasing a device after a driver error may panic too: contained, so that this
        // thread goes on meeting the barriers.
        let link = self.link.take();
        let _ = catch_unwind(AssertUnwindSafe(|| drop(link)));
        self.error.get_or_insert(e);
    }
}

/// Opens one GPU's link (on the thread that will use it).
pub(super) type Opener<'a> = Box<dyn Fn() -> Result<Box<dyn link::Link>> + Sync + 'a>;

/// One thread a GPU, every thread walking `steps`; what each recorded.
pub(super) fn walk(
    openers: &[Opener<'_>],
    steps: &[Step],
    runs: usize,
    floats: usize,
    index: Vec<usize>,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<Worker> {
    let shared = Shared {
        steps,
        runs,
        floats,
        seed: crate::clock::since_epoch().as_nanos() as u64,
        barrier: Barrier::new(openers.len()),
        staging: Mutex::new((Vec::new(), false)),
        epoch: Instant::now(),
        progress,
        index,
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = openers
            .iter()
            .enumerate()
            .map(|(me, open)| {
                let sh = &shared;
                s.spawn(move || worker(me, open.as_ref(), sh))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Worker::failed("the thread panicked"))
            })
            .collect()
    })
}

/// One GPU's thread: opens the device, puts its data there, then walks the schedule.
pub(super) fn worker(
    me: usize,
    open: &(dyn Fn() -> Result<Box<dyn link::Link>> + Sync),
    sh: &Shared<'_>,
) -> Worker {
    let data = sh.data(me);
    let opened = catch_unwind(AssertUnwindSafe(|| {
        let mut l = open()?;
        l.put(&data)?;
        Ok::<_, anyhow::Error>(l)
    }));
    let slot = match opened {
        Ok(Ok(l)) => Slot {
            link: Some(l),
            error: None,
        },
        Ok(Err(e)) => Slot {
            link: None,
            error: Some(format!("{e:#}")),
        },
        Err(_) => Slot {
            link: None,
            error: Some("the driver panicked while opening the device".into()),
        },
    };
    let mut t = Thread {
        me,
        host: vec![0f32; sh.floats],
        other: data.iter().map(|x| f32::from_bits(!x.to_bits())).collect(),
        data,
        slot,
        w: Worker::default(),
    };
    sh.barrier.wait();
    for (k, &step) in sh.steps.iter().enumerate() {
        if me == 0 {
            let n = sh.steps.len();
            (sh.progress)(&format!("[{}/{n}] {}", k + 1, describe(step, &sh.index)));
        }
        match step {
            Step::Alone(d, s) => t.way(d, s == me, k, sh),
            Step::Together(d) => t.way(d, true, k, sh),
            Step::Pair(a, b) => t.pair((a, b), k, sh),
        }
    }
    t.w.error = t.slot.error;
    t.w
}

/// One GPU's thread's state.
pub(super) struct Thread {
    pub(super) me: usize,
    /// What this GPU's buffer holds (put there at the start and after every change).
    pub(super) data: Vec<f32>,
    /// `data` with every bit flipped: runs alternate the two, the last run `data`, so a copy
    /// that did nothing leaves the other pattern behind and fails its check.
    pub(super) other: Vec<f32>,
    /// Where copies out land.
    pub(super) host: Vec<f32>,
    pub(super) slot: Slot,
    pub(super) w: Worker,
}

impl Thread {
    /// One direction's step: every run starts at the barrier; active threads copy. Runs
    /// alternate `data` and `other`, the last one `other` (the buffer held `data` before:
    /// a copy that did nothing shows): host-to-device checks the buffer after the step;
    /// device-to-host puts each run's pattern first (untimed, before the barrier) and checks
    /// every copy. Either way the buffer gets `data` back at the end (untimed).
    pub(super) fn way(&mut self, d: Direction, active: bool, k: usize, sh: &Shared<'_>) {
        let (data, other, host, slot) = (&self.data, &self.other, &mut self.host, &mut self.slot);
        let total = WARMUP_RUNS + sh.runs;
        let pattern = |run: usize| {
            if (total - 1 - run).is_multiple_of(2) {
                other
            } else {
                data
            }
        };
        let mut bad_runs = 0;
        for run in 0..total {
            let want = pattern(run);
            if active && d == Direction::ToHost {
                host.fill(0.0);
                slot.copy(sh.epoch, |l| l.put(want));
            }
            sh.barrier.wait();
            if !active {
                continue;
            }
            let span = match d {
                Direction::ToDevice => slot.copy(sh.epoch, |l| l.put(want)),
                Direction::ToHost => slot.copy(sh.epoch, |l| l.get(host)),
            };
            if d == Direction::ToHost && span.is_some() && differ(host, want) > 0 {
                bad_runs += 1;
            }
            if let Some(span) = span.filter(|_| run >= WARMUP_RUNS) {
                self.w.spans.insert((k, run - WARMUP_RUNS), span);
            }
        }
        if !active || slot.link.is_none() {
            return;
        }
        let c = match d {
            Direction::ToDevice => {
                host.fill(0.0);
                if slot.copy(sh.epoch, |l| l.get(host)).is_none() {
                    return;
                }
                check(
                    differ(host, other),
                    other.len(),
                    "runs alternate two patterns; the buffer read back after the last and compared bit for bit",
                )
            }
            Direction::ToHost => Check {
                passed: bad_runs == 0,
                detail: if bad_runs == 0 {
                    "runs alternate two patterns; every copy compared bit for bit with the one put there".into()
                } else {
                    format!("{bad_runs} of {total} copies arrived changed")
                },
            },
        };
        self.w.checks.insert(k, c);
        slot.copy(sh.epoch, |l| l.put(data));
    }

    /// A host-staged copy from `a` to `b`: `a` reads into the shared staging buffer (zeroed
    /// first, untimed), then (after a barrier) `b` writes from it, unless `a`'s copy failed.
    /// `b` reads its buffer back after every run (untimed) and compares it with `a`'s data,
    /// and puts its own data back at the end.
    pub(super) fn pair(&mut self, (a, b): (usize, usize), k: usize, sh: &Shared<'_>) {
        let me = self.me;
        let want = (me == b).then(|| sh.data(a));
        let (mut bad, mut source_failed) = (0, false);
        for run in 0..WARMUP_RUNS + sh.runs {
            sh.barrier.wait();
            let mut span = None;
            if me == a {
                let mut st = sh.staging.lock().unwrap_or_else(|p| p.into_inner());
                st.0.clear();
                st.0.resize(sh.floats, 0.0);
                span = self.slot.copy(sh.epoch, |l| l.get(&mut st.0));
                st.1 = span.is_some();
            }
            sh.barrier.wait();
            if let (true, Some(want)) = (me == b, &want) {
                let st = sh.staging.lock().unwrap_or_else(|p| p.into_inner());
                if !st.1 {
                    source_failed = true;
                    continue;
                }
                span = self.slot.copy(sh.epoch, |l| l.put(&st.0));
                drop(st);
                let host = &mut self.host;
                host.fill(0.0);
                if span.is_some() && self.slot.copy(sh.epoch, |l| l.get(host)).is_some() {
                    bad += usize::from(differ(host, want) > 0);
                }
            }
            if let Some(span) = span.filter(|_| run >= WARMUP_RUNS) {
                self.w.spans.insert((k, run - WARMUP_RUNS), span);
            }
        }
        if me != b || self.slot.link.is_none() {
            return;
        }
        let total = WARMUP_RUNS + sh.runs;
        let c = if source_failed {
            Check {
                passed: false,
                detail: format!("not measured: the source GPU (#{}) failed", sh.index[a]),
            }
        } else if bad == 0 {
            Check {
                passed: true,
                detail: "destination read back after every copy and compared bit for bit with the source's data".into(),
            }
        } else {
            Check {
                passed: false,
                detail: format!("{bad} of {total} copies arrived changed"),
            }
        };
        self.w.checks.insert(k, c);
        let data = &self.data;
        self.slot.copy(sh.epoch, |l| l.put(data));
    }
}
