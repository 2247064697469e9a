//! The user's selection of catalog instances, shared by `catalog` and `rank`.

use super::*;

/// The user's selection of catalog instances (`--provider`, `--gpu`, `--region`,
/// `--min-gpu-memory`), shared by `catalog` and `rank`.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub provider: Option<String>,
    pub gpu: Option<String>,
    pub region: Option<String>,
    pub min_gpu_memory_gb: Option<f64>,
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
        let in_region = self
            .region
            .as_ref()
            .is_none_or(|r| super::regions::Wanted::parse(r).matches(&inst.provider, &inst.region));
        if !has(&inst.provider, &self.provider)
            || !in_region
            || !(has(&inst.gpu, &self.gpu) || has(gpu_name, &self.gpu))
        {
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
    /// Why the filters select nothing in `catalog`, naming the filter that matches no
    /// instance and the values that exist; None when some instance is selected.
    pub fn unmatched(&self, catalog: &Catalog) -> Option<String> {
        let gpu_of = |i: &Instance| catalog.gpu(&i.gpu);
        let selects = |f: &Filters| {
            catalog.instances.iter().any(|i| {
                !matches!(
                    Filters {
                        min_gpu_memory_gb: None,
                        ..f.clone()
                    }
                    .admit(i, gpu_of(i), None),
                    Admission::NotSelected
                )
            })
        };
        // At most 12 values, and how many more: a catalog with feed snapshots has hundreds.
        let listing = |mut v: Vec<String>| {
            v.sort();
            v.dedup();
            let more = v.len().saturating_sub(12);
            v.truncate(12);
            let mut s = v.join(", ");
            if more > 0 {
                s.push_str(&format!(" and {more} more"));
            }
            s
        };
        let alone = [
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
        ];
        for (flag, value, f, valid) in alone {
            if let Some(v) = value
                && !selects(&f)
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
        if !selects(self) {
            return Some(
                "--provider, --gpu and --region together match no catalog instance (each matches some on its own)"
                    .into(),
            );
        }
        None
    }
}
