//! The catalog listing: instances with their GPU, price in the chosen currency and model,
//! source, date and confidence.

use crate::catalog::{Admission, Catalog, Filters, Finding, PricingModel, Severity, Tier};
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
