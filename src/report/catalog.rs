//! The catalog listing: instances with their GPU, price in the chosen currency and model,
//! source, date and confidence.

use crate::market::catalog::{Admission, Catalog, Filters, Finding, PricingModel, Severity, Tier};
use anyhow::Result;
use serde::Serialize;
use tabled::settings::Style;
use tabled::{Table, Tabled};

#[derive(Clone, Debug, Serialize, Tabled)]
pub struct CatalogRow {
    pub provider: String,
    pub instance_type: String,
    pub region: String,
    #[tabled(rename = "GPUs")]
    pub gpus: String,
    #[tabled(rename = "GB/GPU")]
    #[tabled(display = "opt")]
    pub gpu_memory_gb: Option<f64>,
    #[tabled(display = "opt")]
    pub vcpu: Option<u32>,
    #[tabled(display = "price_opt")]
    pub price_per_hour: Option<f64>,
    #[tabled(display = "opt_str")]
    pub original_price: Option<String>,
    pub as_of: String,
    pub confidence: String,
    pub status: String,
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or("-".into(), |x| x.to_string())
}

fn opt_str(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

fn price_opt(v: &Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.4}"))
}

pub fn rows(
    c: &Catalog,
    findings: &[Finding],
    f: &Filters,
    model: PricingModel,
    currency: &str,
) -> Result<Vec<CatalogRow>> {
    let mut out = Vec::new();
    for (i, inst) in c.instances.iter().enumerate() {
        let gpu = c.gpu(&inst.gpu);
        let gname = gpu.map_or(inst.gpu.clone(), |g| g.name.clone());
        if f.admit(inst, gpu, None) != Admission::Admitted {
            continue;
        }
        let mem = gpu.and_then(|g| g.memory_gb);
        let price = inst.prices.get(&model);
        let converted = match price {
            Some(p) => c.convert(p.amount, &p.currency, currency).ok(),
            None => None,
        };
        // The row's findings, less warnings about its other prices (a stale spot band does
        // not concern the on-demand listing).
        let this = format!(".prices.{}.", model.name());
        let mine: Vec<&Finding> = findings
            .iter()
            .filter(|x| x.instance == Some(i))
            .filter(|x| {
                x.severity == Severity::Error
                    || !x.path.contains(".prices.")
                    || x.path.contains(&this)
            })
            .collect();
        let status = if mine.iter().any(|x| x.severity == Severity::Error) {
            "ERROR (not ranked)".to_string()
        } else if !mine.is_empty() {
            // Which warnings: each message's head ("stale spot price"), once each.
            let mut heads: Vec<&str> = Vec::new();
            for x in &mine {
                let head = x.message.split(':').next().unwrap_or(&x.message).trim();
                if !heads.contains(&head) {
                    heads.push(head);
                }
            }
            format!("warning: {}", heads.join("; "))
        } else if let Some(r) = &inst.retired {
            format!("retired {r} (not ranked)")
        } else if price.is_none() {
            format!("no {} price", model.name())
        } else if price.is_some_and(|p| inst.tier(p) == Tier::Reported) {
            "REPORTED price (ranked only with --include-reported)".to_string()
        } else {
            "ok".to_string()
        };
        out.push(CatalogRow {
            provider: inst.provider.clone(),
            instance_type: inst.instance_type.clone(),
            region: inst.region.clone(),
            gpus: format!("{} x {}", inst.gpu_count, gname),
            gpu_memory_gb: mem,
            vcpu: inst.vcpu,
            price_per_hour: converted,
            original_price: price
                .filter(|p| p.currency != currency)
                .map(|p| format!("{} {}", p.amount, p.currency)),
            as_of: inst.as_of.clone(),
            confidence: format!("{:?}", inst.confidence).to_lowercase(),
            status,
        });
    }
    Ok(out)
}

/// One catalog row in the terminal: short headers, instance and GPU cells that wrap
/// between words.
#[derive(Tabled)]
struct Line {
    instance: String,
    region: String,
    #[tabled(rename = "GPUs")]
    gpus: String,
    #[tabled(rename = "vCPU")]
    vcpu: String,
    price: String,
    #[tabled(rename = "as of")]
    as_of: String,
    status: String,
}

pub fn table(rows: &[CatalogRow], c: &Catalog, currency: &str) -> String {
    let rate = &c.currencies[currency];
    let lines = rows.iter().map(|r| Line {
        instance: format!("{} {}", r.provider, r.instance_type),
        region: r.region.clone(),
        // The memory after the name, unless the name says it ("V100 SXM2 16GB"), written
        // as names write it so that a narrow column does not part number and unit.
        gpus: match r.gpu_memory_gb {
            Some(m) if !r.gpus.contains("GB") => format!("{} {m}GB", r.gpus),
            _ => r.gpus.clone(),
        },
        vcpu: opt(&r.vcpu),
        price: match (&r.price_per_hour, &r.original_price) {
            (Some(p), Some(o)) => format!("{p:.4}\n({o})"),
            (Some(p), None) => format!("{p:.4}"),
            _ => "-".into(),
        },
        as_of: format!("{} {}", r.as_of, r.confidence),
        status: r.status.clone(),
    });
    let mut t = Table::new(lines);
    t.with(Style::rounded());
    let header = format!("{currency}/h");
    t.with(
        tabled::settings::Modify::new(tabled::settings::object::Cell::new(0, 4)).with(
            tabled::settings::format::Format::content(move |_| header.clone()),
        ),
    );
    if currency == "USD" {
        return format!("{}\nprices per hour in USD", super::term::fit(t));
    }
    format!(
        "{}\nprices per hour in {currency}; conversion at {} {currency} per USD as of {} ({})",
        super::term::fit(t),
        rate.per_usd,
        rate.as_of,
        rate.source
    )
}

/// The rows a grouped finding names before "and N more".
const GROUP_SHOWN: usize = 3;

/// `catalog check`'s findings as lines: a finding that repeats for several rows of one file
/// (the same warning, word for word: a stale price of one source and date, one provider's
/// outlier price on every size of an instance) is one line naming how many rows and the
/// first few; every error stays its own line.
pub fn finding_lines(findings: &[Finding]) -> Vec<String> {
    let mut groups: Vec<(&Finding, Vec<&Finding>)> = Vec::new();
    let mut warnings: std::collections::HashMap<(&str, &str), usize> = Default::default();
    for f in findings {
        if f.severity == Severity::Warning {
            if let Some(&g) = warnings.get(&(f.file.as_str(), f.message.as_str())) {
                groups[g].1.push(f);
                continue;
            }
            warnings.insert((&f.file, &f.message), groups.len());
        }
        groups.push((f, vec![f]));
    }
    groups
        .into_iter()
        .map(|(first, all)| {
            if all.len() == 1 {
                return first.to_string();
            }
            let rows: Vec<&str> = all
                .iter()
                .take(GROUP_SHOWN)
                .map(|f| f.row.as_str())
                .collect();
            let more = all.len().saturating_sub(GROUP_SHOWN);
            format!(
                "warning: {}: {} ({} rows: {}{}): {}",
                first.file,
                path_pattern(&all),
                all.len(),
                rows.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
                first.message
            )
        })
        .collect()
}

/// The findings' common path, each index that differs between them as `[..]`
/// (`instances[..].prices.reserved_1y.as_of`).
fn path_pattern(all: &[&Finding]) -> String {
    let strip = |p: &str| -> String {
        let mut out = String::new();
        let mut in_index = false;
        for ch in p.chars() {
            match ch {
                '[' => {
                    in_index = true;
                    out.push_str("[..]");
                }
                ']' => in_index = false,
                _ if in_index => {}
                _ => out.push(ch),
            }
        }
        out
    };
    let first = &all[0].path;
    if all.iter().all(|f| &f.path == first) {
        first.clone()
    } else {
        strip(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(severity: Severity, path: &str, row: &str, message: &str) -> Finding {
        Finding {
            severity,
            file: "embedded catalog".into(),
            path: path.into(),
            row: row.into(),
            message: message.into(),
            instance: None,
        }
    }

    #[test]
    fn a_warning_repeated_over_rows_is_one_line_and_errors_stay_apart() {
        let stale = "stale reserved_1y price: as of 2026-01";
        let mut all: Vec<Finding> = (0..5)
            .map(|i| {
                finding(
                    Severity::Warning,
                    &format!("instances[{i}].prices.reserved_1y.as_of"),
                    &format!("aws/t{i}/us-east-1"),
                    stale,
                )
            })
            .collect();
        all.insert(
            2,
            finding(Severity::Warning, "instances[9]", "x/y/z", "other"),
        );
        all.push(finding(Severity::Error, "instances[7]", "a/b/c", "bad"));
        all.push(finding(Severity::Error, "instances[8]", "a/b/d", "bad"));
        let lines = finding_lines(&all);
        assert_eq!(
            lines,
            [
                "warning: embedded catalog: instances[..].prices.reserved_1y.as_of (5 rows: \
                 aws/t0/us-east-1, aws/t1/us-east-1, aws/t2/us-east-1 and 2 more): stale \
                 reserved_1y price: as of 2026-01",
                "warning: embedded catalog: instances[9] (x/y/z): other",
                "error: embedded catalog: instances[7] (a/b/c): bad",
                "error: embedded catalog: instances[8] (a/b/d): bad",
            ]
        );
    }
}
