//! Faults injected on purpose (`gpuvalue bench --inject-fault KIND@PROBE`), so that the way
//! each one is survived can be tested: an allocation the device cannot satisfy, a kernel
//! the adapter rejects, a lost device, a dispatch that does not finish in time, a panic.
//! Each fires once, at the first operation of its kind inside the named probe, through the
//! same wgpu paths a real fault takes.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The next buffer allocation fails for lack of memory.
    Oom,
    /// The next compute pipeline is rejected when built.
    Compile,
    /// The device is destroyed at the next wait, with work in flight.
    Lost,
    /// A kernel that runs for three times the watchdog bound is queued before the next wait:
    /// the watchdog fires, then the device drains and the run goes on.
    Hang,
    /// As `Hang`, but thirty times the bound: the device does not drain in time and
    /// the rest of the run is given up.
    Stuck,
    /// The probe panics at the next wait.
    Panic,
}

impl Fault {
    pub const ALL: [(&'static str, Fault); 6] = [
        ("oom", Fault::Oom),
        ("compile", Fault::Compile),
        ("lost", Fault::Lost),
        ("hang", Fault::Hang),
        ("stuck", Fault::Stuck),
        ("panic", Fault::Panic),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

/// `KIND@PROBE`, as given to `--inject-fault`. The probe is named, not typed: the GPU layer
/// knows no probes; the CLI checks the name against the probe registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultSpec {
    pub fault: Fault,
    pub probe: String,
}

impl std::str::FromStr for FaultSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let kinds = Fault::ALL.map(|(n, _)| n).join(", ");
        let (kind, probe) = s
            .split_once('@')
            .ok_or_else(|| format!("`{s}`: expected KIND@PROBE, KIND one of {kinds}"))?;
        let fault = Fault::ALL
            .iter()
            .find(|(n, _)| *n == kind)
            .map(|(_, f)| *f)
            .ok_or_else(|| format!("`{kind}`: unknown fault, expected one of {kinds}"))?;
        let probe = probe.to_ascii_lowercase();
        Ok(FaultSpec { fault, probe })
    }
}

pub fn bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    } else {
        format!("{n} bytes")
    }
}
