//! Validation of scenario files: every field in its range, named by its path.

use super::*;

pub(super) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `x` when it is a finite number in `lo..=hi`, else an error naming `at`.
pub(super) fn in_range(x: f64, lo: f64, hi: f64, at: &str, what: &str) -> Result<()> {
    if !(x.is_finite() && (lo..=hi).contains(&x)) {
        bail!("{at}: expected {what} in {lo}..={hi:e}, found {x}");
    }
    Ok(())
}

/// The checks of a scenario's collectives, if it states any.
pub(super) fn check_collectives(s: &Scenario, at: &str) -> Result<()> {
    let Some(c) = &s.collectives else {
        return Ok(());
    };
    let c_at = format!("{at}.collectives");
    in_range(
        c.bytes_per_step,
        0.0,
        MAX_WORK,
        &format!("{c_at}.bytes_per_step"),
        "a number of bytes",
    )?;
    in_range(
        c.steps,
        0.0,
        MAX_WORK,
        &format!("{c_at}.steps"),
        "a number of steps",
    )?;
    if c.parallelism == Parallelism::Tensor && s.decode.is_none() {
        bail!(
            "{c_at}.parallelism: \"tensor\" runs within the copies of a served model and needs \"decode\"; expected \"data\" for a job without one"
        );
    }
    Ok(())
}

/// The checks of one scenario's numbers; `at` names it in the file.
pub(super) fn check_scenario(s: &Scenario, at: &str) -> Result<()> {
    if s.terms.is_empty() && s.serving.is_none() {
        bail!("{at}.terms: a scenario needs at least one term (or a serving block)");
    }
    if let Some(v) = &s.serving {
        check_serving(v, &format!("{at}.serving"))?;
    }
    for (j, t) in s.terms.iter().enumerate() {
        if !(t.work.is_finite() && t.work > 0.0 && t.work <= MAX_WORK) {
            bail!(
                "{at}.terms[{j}].work: expected an amount in 0 < work <= {MAX_WORK:e}, found {}",
                t.work
            );
        }
    }
    check_memory(s, at)?;
    if let Some(d) = &s.decode {
        check_decode(d, &format!("{at}.decode"))?;
    }
    check_collectives(s, at)?;
    if let Some(e) = &s.egress {
        in_range(e.gb, 0.0, 1e9, &format!("{at}.egress.gb"), "GB per job")?;
    }
    if let Some(h) = s.job.as_ref().and_then(|j| j.steady_hours) {
        in_range(
            h,
            1e-3,
            1e6,
            &format!("{at}.job.steady_hours"),
            "a number of hours",
        )?;
    }
    if let Some(o) = s.job.as_ref().and_then(|j| j.output.as_ref())
        && !(o.amount.is_finite() && o.amount > 0.0 && o.amount <= MAX_WORK)
    {
        bail!(
            "{at}.job.output.amount: expected an amount in 0 < amount <= {MAX_WORK:e}, found {}",
            o.amount
        );
    }
    Ok(())
}

/// The memory a scenario asks of a GPU, an instance and its shards, each in its range.
fn check_memory(s: &Scenario, at: &str) -> Result<()> {
    if let Some(m) = s.min_gpu_memory_gb {
        in_range(
            m,
            0.0,
            1e4,
            &format!("{at}.min_gpu_memory_gb"),
            "a number of GB",
        )?;
    }
    for (j, m) in s.memory_floor.iter().enumerate() {
        in_range(
            m.gb,
            0.0,
            1e4,
            &format!("{at}.memory_floor[{j}].gb"),
            "a number of GB",
        )?;
    }
    if let Some(v) = s.min_vcpus_per_gpu {
        in_range(
            v,
            0.0,
            1024.0,
            &format!("{at}.min_vcpus_per_gpu"),
            "a number of vCPUs",
        )?;
    }
    for (j, m) in s.sharded_memory.iter().enumerate() {
        in_range(
            m.gb,
            0.0,
            1e6,
            &format!("{at}.sharded_memory[{j}].gb"),
            "a number of GB",
        )?;
    }
    Ok(())
}

/// A decode block's numbers (tokens, weights, KV cache, context, batch, memory share).
fn check_decode(d: &Decode, d_at: &str) -> Result<()> {
    in_range(
        d.tokens,
        1.0,
        MAX_WORK,
        &format!("{d_at}.tokens"),
        "a number of tokens",
    )?;
    in_range(
        d.weight_gb,
        0.0,
        1e6,
        &format!("{d_at}.weight_gb"),
        "a number of GB",
    )?;
    in_range(
        d.kv_mb_per_token,
        1e-6,
        1e4,
        &format!("{d_at}.kv_mb_per_token"),
        "a number of MB",
    )?;
    in_range(
        d.context_tokens,
        1.0,
        1e8,
        &format!("{d_at}.context_tokens"),
        "a number of tokens",
    )?;
    in_range(
        d.max_batch,
        1.0,
        1e6,
        &format!("{d_at}.max_batch"),
        "a batch size",
    )?;
    in_range(
        d.memory_use,
        0.05,
        1.0,
        &format!("{d_at}.memory_use"),
        "a share",
    )?;
    Ok(())
}

/// A serving block's numbers: each finite and in its range, named by its path.
fn check_serving(v: &super::serving::Serving, at: &str) -> Result<()> {
    let positive = [
        ("tokens", v.tokens),
        ("prompt_tokens", v.prompt_tokens),
        ("output_tokens", v.output_tokens),
        ("layers", v.layers),
        ("hidden", v.hidden),
        ("dense_gb", v.dense_gb),
        ("active_params", v.active_params),
        ("kv_split", v.kv_split),
        ("max_batch", v.max_batch),
    ];
    for (name, x) in positive {
        if !(x.is_finite() && x > 0.0 && x <= MAX_WORK) {
            bail!("{at}.{name}: expected a positive number, got {x}");
        }
    }
    let not_negative = [
        ("attention_gb", v.attention_gb),
        ("held_gb", v.held_gb),
        ("attention_flop", v.attention_flop),
        ("kv_mb_per_token", v.kv_mb_per_token),
        ("heads", v.heads),
    ];
    for (name, x) in not_negative {
        if !(x.is_finite() && (0.0..=MAX_WORK).contains(&x)) {
            bail!("{at}.{name}: expected a number of 0 or more, got {x}");
        }
    }
    if !(v.memory_use > 0.0 && v.memory_use <= 1.0) {
        bail!(
            "{at}.memory_use: expected a share above 0 and at most 1, got {}",
            v.memory_use
        );
    }
    if let Some(e) = v.experts
        && !(e.count >= 1.0
            && e.per_token >= 1.0
            && e.per_token <= e.count
            && e.layers >= 1.0
            && e.gb > 0.0
            && e.gb.is_finite())
    {
        bail!(
            "{at}.experts: expected at least one layer of count >= per_token >= 1 experts of a positive size, got {e:?}"
        );
    }
    Ok(())
}
