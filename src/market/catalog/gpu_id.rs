//! A row's GPU as the catalog resolved it: one of the catalog's GPUs, or an accelerator
//! name that does not rank and why. Catalog files keep the second kind in the row's `gpu`
//! field as a prefix before the name as written (`not-gpu:GAUDI2`); that spelling is read
//! and written here only, and everything else matches on [`GpuId`].

/// Why a row's accelerator is not one of the catalog's GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unranked {
    /// A name that could be several GPUs, and nothing on the row tells which.
    Ambiguous,
    /// A GPU the feeds rent that has no spec entry yet.
    Unspecified,
    /// An accelerator that is not a GPU (TPU, Inferentia, Trainium, Gaudi).
    NotGpu,
    /// A known name whose stated memory fits none of its variants (a lookalike).
    Mismatch,
    /// No catalog GPU has that name and the instance family does not tell.
    Unknown,
}

/// A row's `gpu` field, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuId<'a> {
    /// A catalog GPU id (or an id no entry has: [`crate::market::catalog::Catalog::gpu`]
    /// says which).
    Catalog(&'a str),
    /// An accelerator that does not rank, with its name as written.
    Unranked(Unranked, &'a str),
}

impl Unranked {
    const ALL: [Unranked; 5] = [
        Unranked::Unspecified,
        Unranked::NotGpu,
        Unranked::Mismatch,
        Unranked::Ambiguous,
        Unranked::Unknown,
    ];

    fn prefix(self) -> &'static str {
        match self {
            Unranked::Ambiguous => "ambiguous:",
            Unranked::Unspecified => "unspecified:",
            Unranked::NotGpu => "not-gpu:",
            Unranked::Mismatch => "mismatch:",
            Unranked::Unknown => "unknown:",
        }
    }

    /// The row's `gpu` field for an accelerator `name` that does not rank for this reason.
    pub fn id(self, name: &str) -> String {
        format!("{}{name}", self.prefix())
    }

    /// Whether a user's row like this is a fault in the file: a name that is ambiguous or
    /// unknown is; one with no spec entry yet, another GPU under a lookalike name, or no GPU
    /// at all is not (a SkyPilot file of a cloud renting B200s and TPUs is not a bad file).
    pub fn is_data_error(self) -> bool {
        matches!(self, Unranked::Ambiguous | Unranked::Unknown)
    }

    /// The reason as a short category (the feeds' refused-row counts).
    pub fn category(self) -> &'static str {
        match self {
            Unranked::NotGpu => "not a GPU",
            Unranked::Unspecified => "GPU without a spec entry yet",
            Unranked::Unknown => "unknown accelerator",
            Unranked::Ambiguous => "ambiguous accelerator",
            Unranked::Mismatch => "memory fits no GPU of that name",
        }
    }

    /// The ranking's reason for not ranking the row, before the name.
    pub fn not_ranked(self) -> &'static str {
        match self {
            Unranked::Unspecified => "no datasheet entry in this gpuvalue yet for",
            Unranked::NotGpu => "not a GPU:",
            Unranked::Mismatch => "its memory fits no GPU named",
            Unranked::Ambiguous => "could be several GPUs:",
            Unranked::Unknown => "an accelerator no entry names:",
        }
    }

    /// The catalog check's finding for a row with accelerator `name`.
    pub fn finding(self, name: &str) -> String {
        let fix = "say which catalog GPU it is in a --catalog-add JSON row; the row is not ranked";
        match self {
            Unranked::Ambiguous => format!(
                "accelerator {name:?} is ambiguous (which memory size or form factor?) and the instance family does not tell: {fix}"
            ),
            Unranked::Unspecified => format!(
                "accelerator {name:?} has no datasheet entry in this gpuvalue yet: the row is counted, not ranked"
            ),
            Unranked::NotGpu => {
                format!("accelerator {name:?} is not a GPU: the row is counted, not ranked")
            }
            Unranked::Mismatch => format!(
                "accelerator {name:?}: its stated memory fits no GPU of that name (see the row's notes): another GPU under a lookalike name; the row is not ranked"
            ),
            Unranked::Unknown => format!(
                "unknown accelerator {name:?}: no catalog GPU has that name and the instance family does not tell: {fix}"
            ),
        }
    }
}

impl<'a> GpuId<'a> {
    /// Reads a row's `gpu` field.
    pub fn parse(field: &'a str) -> GpuId<'a> {
        Unranked::ALL
            .iter()
            .find_map(|&u| {
                field
                    .strip_prefix(u.prefix())
                    .map(|name| GpuId::Unranked(u, name))
            })
            .unwrap_or(GpuId::Catalog(field))
    }

    /// Why the row does not rank, where its field says so.
    pub fn unranked(self) -> Option<Unranked> {
        match self {
            GpuId::Unranked(u, _) => Some(u),
            GpuId::Catalog(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_reads_back_from_the_field_it_writes() {
        for u in Unranked::ALL {
            let field = u.id("GAUDI2");
            assert_eq!(
                GpuId::parse(&field),
                GpuId::Unranked(u, "GAUDI2"),
                "{field}"
            );
        }
        assert_eq!(
            GpuId::parse("not-gpu:GAUDI2").unranked(),
            Some(Unranked::NotGpu)
        );
        assert_eq!(GpuId::parse("h100-sxm"), GpuId::Catalog("h100-sxm"));
        assert_eq!(GpuId::parse("unknown").unranked(), None);
    }

    #[test]
    fn only_ambiguous_and_unknown_names_are_faults_in_a_users_file() {
        let faults: Vec<Unranked> = Unranked::ALL
            .into_iter()
            .filter(|u| u.is_data_error())
            .collect();
        assert_eq!(faults, [Unranked::Ambiguous, Unranked::Unknown]);
    }
}
