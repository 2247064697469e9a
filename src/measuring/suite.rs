//! What every driver of the probes does with their results, native bench and browser page
//! alike: annotate each result with how it was timed, note a reduced plan, drop what Ctrl-C
//! (or the page's Stop) cut short, and close the file with the double-precision summary.
//! The native bench adds its watchdog, fault injection, locks and leak checks around this.

use crate::files::now_rfc3339;
use crate::measuring::probes;
use crate::results::{ProbeResult, ResultsFile, Status};

/// Adds one probe result to `results`; false when it was dropped (an interrupted run keeps
/// only what finished). `reduced`: the result was measured with the reduced plan.
pub fn record(
    results: &mut ResultsFile,
    mut r: ProbeResult,
    timer_fallback: Option<&str>,
    reduced: bool,
) -> bool {
    // What was cut short by an interrupt is not a finding: keep only what finished.
    if crate::interrupt::requested() && r.status != Status::Ok {
        return false;
    }
    annotate(&mut r, timer_fallback, results.adapter.software);
    if results.browser.is_some()
        && let Some(t) = r.timing.as_mut()
        && t.method == crate::measuring::gpu::TimingMethod::GpuTimestamps
        && t.note.is_none()
    {
        t.note = Some(BROWSER_TIMESTAMPS_NOTE.into());
    }
    if reduced && r.status == Status::Ok {
        r = r.param("reduced_plan", true);
        r.warnings.push(REDUCED_NOTE.into());
    }
    results.probes.push(r);
    results.updated = now_rfc3339();
    true
}

/// What a browser's GPU timestamps are worth, said beside each figure timed with them.
const BROWSER_TIMESTAMPS_NOTE: &str = "browser GPU timestamps: Chrome quantizes them to 100 us unless its WebGPU developer features are on; this figure's samples aimed for 10 ms or more (1% of that quantum)";

/// Marks the file complete (or interrupted), after adding the double-precision summary.
pub fn finish(results: &mut ResultsFile) {
    let interrupted = crate::interrupt::requested();
    if !interrupted && let Some(s) = probes::double::summary(&results.probes) {
        results.probes.push(s);
    }
    results.interrupted = interrupted;
    results.complete = !interrupted;
    results.updated = now_rfc3339();
}

/// How the timer ended up timing, recorded beside the timing (a surprise on a hardware
/// adapter is also a warning); a wide spread of samples is a warning.
pub fn annotate(r: &mut ProbeResult, timer_fallback: Option<&str>, software: bool) {
    if let Some(reason) = timer_fallback {
        if let Some(t) = r.timing.as_mut()
            && t.note.is_none()
        {
            t.note = Some(reason.to_string());
        }
        if !software && !r.warnings.iter().any(|w| w == reason) {
            r.warnings.push(reason.to_string());
        }
    }
    if let Some(v) = &r.value
        && v.n > 1
        && v.rel_spread() > crate::stats::WIDE_SPREAD
    {
        r.warnings.push(format!(
            "wide spread: {:.3}..{:.3} {} ({:.0}% of the median); rerun on an idle machine",
            v.min,
            v.max,
            r.unit,
            100.0 * v.rel_spread()
        ));
    }
}

/// What a figure measured by a quick run behind its budget says about itself.
pub const REDUCED_NOTE: &str = "quick run behind its time budget: measured with the reduced plan (1 warm-up run, 5 samples) and no further autotuning";
