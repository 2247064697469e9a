//! The user's selection of catalog instances, shared by `catalog` and `rank`.

use super::*;

/// The user's selection of catalog instances (`--provider`, `--gpu`, `--region`,
/// `--min-gpu-memory`), shared by `catalog` and `rank`.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub provider: Option<String>,
    /// A catalog GPU id or name (any case) takes that GPU alone; anything else is part of
    /// a name, and takes every GPU whose id or name holds it (see [`Filters::gpus_taken`]).
    pub gpu: Option<String>,
    pub region: Option<String>,
    pub min_gpu_memory_gb: Option<f64>,
    /// The catalog GPU `gpu` names exactly, once [`Filters::settle`] has looked.
    pub gpu_exact: Option<String>,
}

/// What the filters make of one instance.
#[derive(Clone, Debug, PartialEq)]
pub enum Admission {
    Admitted,
    /// Not what the user asked for (provider, GPU or region): left out silently.
    NotSelected,
    /// Its GPUs have less memory than required (or an unknown amount): the reason.
    TooSmall(String),
}

impl Filters {
    /// Whether `inst` (whose GPU is `gpu`, if the catalog knows it) is selected, and has at
    /// least the memory per GPU the filters and `required_gb` (a scenario's floor) ask for.
    pub fn admit(
        &self,
        inst: &Instance,
        gpu: Option<&GpuSpec>,
        required_gb: Option<f64>,
    ) -> Admission {
        let has = |hay: &str, needle: &Option<String>| {
            needle
                .as_ref()
                .is_none_or(|n| hay.to_lowercase().contains(&n.to_lowercase()))
        };
        let gpu_name = gpu.map_or(inst.gpu.as_str(), |g| g.name.as_str());
        let gpu_wanted = match (&self.gpu, &self.gpu_exact) {
            (None, _) => true,
            (Some(_), Some(id)) => gpu.map_or(inst.gpu.as_str(), |g| g.id.as_str()) == id,
            (Some(_), None) => has(&inst.gpu, &self.gpu) || has(gpu_name, &self.gpu),
        };
        let in_region = self
            .region
            .as_ref()
            .is_none_or(|r| super::regions::Wanted::parse(r).matches(&inst.provider, &inst.region));
        if !has(&inst.provider, &self.provider) || !in_region || !gpu_wanted {
            return Admission::NotSelected;
        }
        let min = self
            .min_gpu_memory_gb
            .into_iter()
            .chain(required_gb)
            .fold(0.0f64, f64::max);
        if min > 0.0 {
            match gpu.and_then(|g| g.memory_per_adapter_gb()) {
                Some(m) if m >= min => {}
                Some(m) => {
                    let per = match gpu.map_or(1, GpuSpec::adapters) {
                        1 => "GPU".to_string(),
                        n => format!("adapter ({n} per package)"),
                    };
                    let need = (min * 100.0).round() / 100.0;
                    return Admission::TooSmall(format!("{m} GB per {per} < {need} GB required"));
                }
                None => return Admission::TooSmall("GPU memory unknown".into()),
            }
        }
        Admission::Admitted
    }
}

impl Filters {
    /// Looks `--gpu` up in `catalog`: a GPU whose id, name or alias it is (any case) is
    /// then the only one it takes (`--gpu a10` is the A10, not the A100s and A10Gs).
    pub fn settle(mut self, catalog: &Catalog) -> Filters {
        self.gpu_exact = self.gpu.as_ref().and_then(|want| {
            let w = want.trim().to_lowercase();
            catalog
                .gpus
                .iter()
                .find(|g| {
                    g.id.to_lowercase() == w
                        || g.name.to_lowercase() == w
                        || g.aliases.iter().any(|a| a.to_lowercase() == w)
                })
                .map(|g| g.id.clone())
        });
        self
    }

    /// When `--gpu` is part of a name rather than one GPU's: the GPUs it took in
    /// `catalog`, for the note under a table; None for an exact GPU or no filter.
    pub fn gpus_taken(&self, catalog: &Catalog) -> Option<String> {
        let want = self.gpu.as_ref()?;
        if self.gpu_exact.is_some() {
            return None;
        }
        let mut names: Vec<String> = catalog
            .instances
            .iter()
            .filter(|i| {
                Filters {
                    gpu: self.gpu.clone(),
                    ..Filters::default()
                }
                .admit(i, catalog.gpu(&i.gpu), None)
                    != Admission::NotSelected
            })
            .map(|i| {
                catalog
                    .gpu(&i.gpu)
                    .map_or(i.gpu.clone(), |g| g.name.clone())
            })
            .collect();
        names.sort();
        names.dedup();
        Some(format!(
            "--gpu {want} is part of a name, not one GPU's: it took {} (a GPU's id or full name takes that GPU alone)",
            names.join(", ")
        ))
    }

    /// Why the filters select nothing in `catalog`, naming the filter that matches no
    /// instance and the values that exist; None when some instance is selected.
    pub fn unmatched(&self, catalog: &Catalog) -> Option<String> {
        for (flag, value, f, valid) in self.alone(catalog) {
            if let Some(v) = value
                && !selects(catalog, &f)
            {
                let wanted = super::regions::Wanted::parse(v);
                if flag == "--region" && !matches!(wanted, super::regions::Wanted::Name(_)) {
                    return Some(format!(
                        "--region {v}: no catalog instance is in {} (a country or area: ISO codes such as cn, us, de, or eu, asia, na)",
                        wanted.describe()
                    ));
                }
                return Some(format!(
                    "{flag} {v}: matches no catalog instance (a part of the name, any case); the catalog has {valid}"
                ));
            }
        }
        if !selects(catalog, self) {
            return Some(
                "--provider, --gpu and --region together match no catalog instance (each matches some on its own)"
                    .into(),
            );
        }
        None
    }

    /// Each name filter on its own: its flag, its value, the filters with it alone, and
    /// the values the catalog has for it, in words.
    fn alone<'a>(
        &'a self,
        catalog: &Catalog,
    ) -> [(&'static str, &'a Option<String>, Filters, String); 3] {
        let gpu_of = |i: &Instance| catalog.gpu(&i.gpu);
        [
            (
                "--provider",
                &self.provider,
                Filters {
                    provider: self.provider.clone(),
                    ..Filters::default()
                },
                listing(
                    catalog
                        .instances
                        .iter()
                        .map(|i| i.provider.clone())
                        .collect(),
                ),
            ),
            (
                "--gpu",
                &self.gpu,
                Filters {
                    gpu: self.gpu.clone(),
                    ..Filters::default()
                },
                listing(
                    catalog
                        .instances
                        .iter()
                        .map(|i| gpu_of(i).map_or(i.gpu.clone(), |g| g.name.clone()))
                        .collect(),
                ),
            ),
            (
                "--region",
                &self.region,
                Filters {
                    region: self.region.clone(),
                    ..Filters::default()
                },
                // Region names are hundreds and some hold commas (Vast's "City, CC, AREA"):
                // the countries they are in instead.
                format!(
                    "regions in {} (a country code, a country, an area such as eu, or a part of a region's name; `gpuvalue catalog` lists them)",
                    listing(
                        catalog
                            .instances
                            .iter()
                            .filter_map(|i| super::regions::place(&i.provider, &i.region))
                            .map(|p| p.country.to_string())
                            .filter(|c| c != super::regions::UNKNOWN_COUNTRY)
                            .collect()
                    )
                ),
            ),
        ]
    }
}

/// Whether `f`, its memory floor aside, selects some instance of `catalog`.
fn selects(catalog: &Catalog, f: &Filters) -> bool {
    catalog.instances.iter().any(|i| {
        !matches!(
            Filters {
                min_gpu_memory_gb: None,
                ..f.clone()
            }
            .admit(i, catalog.gpu(&i.gpu), None),
            Admission::NotSelected
        )
    })
}

/// Values as a sorted list without repeats, at most 12 and how many more: a catalog with
/// feed snapshots has hundreds.
fn listing(mut v: Vec<String>) -> String {
    v.sort();
    v.dedup();
    let more = v.len().saturating_sub(12);
    v.truncate(12);
    let mut s = v.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}
