//! Every exit status gpuvalue gives, by name. A command ends with one of these, never a
//! literal (a test of the architecture finds `ExitCode::from(<digit>)` anywhere else), so
//! the codes the README and `docs/commands.md` list are the codes the binary gives.

/// A process exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Everything asked was done and passed.
    Success,
    /// The work ran and found a failure: a probe failed validation, a regression, a feed a
    /// gate refused, a catalog with errors, nothing ranked.
    Failed,
    /// Bad input or options, or an error before the work could run (the message says which).
    Usage,
    /// `burn` verdicts: WARN, FAIL, ERROR.
    Warn,
    Fail,
    Error,
    /// Stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
    Interrupted,
}

impl Status {
    pub const fn code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::Failed => 1,
            Status::Usage => 2,
            Status::Warn => 3,
            Status::Fail => 4,
            Status::Error => 5,
            Status::Interrupted => 130,
        }
    }

    /// `Failed` where `failed`, else `Success`.
    pub fn failed_if(failed: bool) -> Status {
        if failed {
            Status::Failed
        } else {
            Status::Success
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl From<Status> for std::process::ExitCode {
    fn from(s: Status) -> Self {
        std::process::ExitCode::from(s.code())
    }
}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn every_status_has_its_own_code_and_success_is_zero() {
        let all = [
            Status::Success,
            Status::Failed,
            Status::Usage,
            Status::Warn,
            Status::Fail,
            Status::Error,
            Status::Interrupted,
        ];
        let mut codes: Vec<u8> = all.iter().map(|s| s.code()).collect();
        assert_eq!(codes[0], 0);
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        assert_eq!(Status::failed_if(true), Status::Failed);
    }
}
