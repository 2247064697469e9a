//! The ranking's columns, defined once: a column is its header, the cell of a ranked row,
//! and when it shows. Each form of the table (the terminal's short, detailed and serving
//! tables, Markdown's, HTML's) is a list of these columns in order; [`grid`] keeps the
//! columns that show and fills them, and the formats add only their syntax and escaping.
//! CSV's columns are data, not words for people: [`DATA`] and [`SERVING_DATA`], named as
//! the JSON's keys.

use super::notes::steady_hours;
use super::words::{
    basis, budget_cell, derivation, figures_used, gpus_cell, hours, instance_cell, place,
    price_cell, price_short, spot_cell, steady_cell, tier_and_confidence,
};
use crate::report::fmt::sig;
use crate::report::serving::{beats, layout, or_dash, ttft};
use crate::value::rank::{RankReport, RankRow, ServeRow, Source};

/// When a column shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Show {
    /// In every table of its form (a row without the cell gets an empty one).
    Always,
    /// Only when every row of the table has its cell, and there is a row: spot's risk on a
    /// spot ranking, a steady rate's instances, what a budget buys.
    EveryRow,
    /// Only when some row of the ranking was priced beside a hosted API (`--api-price`).
    Api,
}

/// One column of the ranking's table.
#[derive(Clone, Copy)]
pub struct Column {
    /// Its header: some carry the currency, one says "traffic" for a steady rate.
    pub header: fn(&RankReport) -> String,
    /// A row's cell; None where the row has none.
    pub cell: fn(&RankRow) -> Option<String>,
    pub show: Show,
}

/// "2=" for a shared place.
pub const PLACE: Column = Column {
    header: |_| "#".into(),
    cell: |x| Some(place(x)),
    show: Show::Always,
};
/// "provider type (region)".
pub const INSTANCE: Column = Column {
    header: |_| "instance".into(),
    cell: |x| Some(instance_cell(x)),
    show: Show::Always,
};
/// "provider type", the region in its own column.
pub const INSTANCE_NAME: Column = Column {
    header: |_| "instance".into(),
    cell: |x| Some(format!("{} {}", x.provider, x.instance_type)),
    show: Show::Always,
};
pub const REGION: Column = Column {
    header: |_| "region".into(),
    cell: |x| Some(x.region.clone()),
    show: Show::Always,
};
/// "8 x H100 SXM", nodes and an assumed link's `†` said.
pub const GPUS: Column = Column {
    header: |_| "GPUs".into(),
    cell: |x| Some(gpus_cell(x)),
    show: Show::Always,
};
/// "8 x H100 SXM" alone.
pub const GPUS_PLAIN: Column = Column {
    header: |_| "GPUs".into(),
    cell: |x| Some(format!("{} x {}", x.gpu_count, x.gpu_name)),
    show: Show::Always,
};
/// Measured, estimated or assumed.
pub const BASIS: Column = Column {
    header: |_| "basis".into(),
    cell: |x| Some(basis(x.basis).into()),
    show: Show::Always,
};
/// Measured or estimated (an assumed figure is an estimate).
pub const MEASURED_OR_NOT: Column = Column {
    header: |_| "basis".into(),
    cell: |x| {
        Some(if x.basis == Source::Measured {
            "measured".into()
        } else {
            "estimated".into()
        })
    },
    show: Show::Always,
};
pub const FIGURES: Column = Column {
    header: |_| "figures used (per GPU)".into(),
    cell: |x| Some(figures_used(x)),
    show: Show::Always,
};
/// The price, `(REPORTED)` and a `*` where a note under the table concerns the row.
pub const PRICE_MARKED: Column = Column {
    header: |r| format!("{}/h", r.currency),
    cell: |x| Some(price_short(x)),
    show: Show::Always,
};
/// The marked price over its date and its tier and confidence, three lines.
pub const PRICE_DATED: Column = Column {
    header: |r| format!("{}/h", r.currency),
    cell: |x| {
        Some(format!(
            "{}\n{}\n{}",
            price_short(x),
            x.price_as_of,
            tier_and_confidence(x)
        ))
    },
    show: Show::Always,
};
/// The price, `(REPORTED)` where unverified.
pub const PRICE: Column = Column {
    header: |r| format!("{}/h", r.currency),
    cell: |x| Some(price_cell(x)),
    show: Show::Always,
};
/// The price's number alone.
pub const PRICE_NUMBER: Column = Column {
    header: |r| format!("{}/h", r.currency),
    cell: |x| Some(sig(x.price_per_hour)),
    show: Show::Always,
};
/// The time per job; a steady rate's "job" is a period of traffic, and the header says so.
pub const TIME_OR_TRAFFIC: Column = Column {
    header: |r| {
        if steady_hours(r).is_some() {
            "traffic".into()
        } else {
            "time/job".into()
        }
    },
    cell: |x| Some(hours(x.hours_per_job)),
    show: Show::Always,
};
/// The time per job, headed "time/job" whatever the job.
pub const TIME: Column = Column {
    header: |_| "time/job".into(),
    cell: |x| Some(hours(x.hours_per_job)),
    show: Show::Always,
};
pub const COST: Column = Column {
    header: |r| format!("{}/job", r.currency),
    cell: |x| Some(sig(x.cost_per_job)),
    show: Show::Always,
};
pub const JOBS_PER_THOUSAND: Column = Column {
    header: |r| format!("jobs per 1,000 {}", r.currency),
    cell: |x| Some(sig(1000.0 * x.jobs_per_currency_unit)),
    show: Show::Always,
};
/// The price's date, tier and confidence: "2026-11 (list, high)".
pub const PRICE_AS_OF: Column = Column {
    header: |_| "price as of".into(),
    cell: |x| Some(format!("{} ({})", x.price_as_of, tier_and_confidence(x))),
    show: Show::Always,
};
/// Serving: the copy's layout and requests in flight.
pub const LAYOUT: Column = Column {
    header: |_| "layout".into(),
    cell: |x| x.serving.as_ref().map(layout),
    show: Show::Always,
};
pub const TOK_S_PER_GPU: Column = Column {
    header: |_| "tok/s/GPU".into(),
    cell: |x| x.serving.as_ref().map(|s| sig(s.tok_s_per_gpu)),
    show: Show::Always,
};
pub const TOK_S_PER_USER: Column = Column {
    header: |_| "tok/s/user (TTFT)".into(),
    cell: |x| {
        x.serving
            .as_ref()
            .map(|s| format!("{} ({})", or_dash(s.tok_s_per_user), ttft(s.ttft_s)))
    },
    show: Show::Always,
};
pub const COST_PER_MTOK: Column = Column {
    header: |r| format!("{}/Mtok", r.currency),
    cell: |x| x.serving.as_ref().map(|s| sig(s.cost_per_million_tokens)),
    show: Show::Always,
};
/// The share of its hours an instance must be busy to cost less than the hosted API.
pub const BEATS_API: Column = Column {
    header: |_| "beats API".into(),
    cell: |x| x.serving.as_ref().map(|s| beats(s).unwrap_or_default()),
    show: Show::Api,
};
/// Spot's interruption band a month.
pub const INTERRUPTED: Column = Column {
    header: |_| "interrupted".into(),
    cell: |x| x.spot.as_ref().map(spot_cell),
    show: Show::EveryRow,
};
/// A steady rate's instances and how busy they are.
pub const INSTANCES: Column = Column {
    header: |_| "instances".into(),
    cell: |x| x.steady.as_ref().map(steady_cell),
    show: Show::EveryRow,
};
pub const BUDGET: Column = Column {
    header: |_| "budget buys".into(),
    cell: budget_cell,
    show: Show::EveryRow,
};

/// The terminal's short answer: one line an instance.
pub const SHORT: &[Column] = &[
    PLACE,
    INSTANCE,
    GPUS,
    PRICE_MARKED,
    TIME_OR_TRAFFIC,
    COST,
    BASIS,
    INTERRUPTED,
    INSTANCES,
    BUDGET,
];
/// The terminal's `--details` table (the figures follow it, a block a row).
pub const DETAILED: &[Column] = &[
    PLACE,
    INSTANCE,
    GPUS,
    PRICE_DATED,
    TIME_OR_TRAFFIC,
    COST,
    INTERRUPTED,
    INSTANCES,
    BUDGET,
];
/// The terminal's table of a served model, short or detailed.
pub const SERVING: &[Column] = &[
    PLACE,
    INSTANCE,
    GPUS,
    PRICE_MARKED,
    LAYOUT,
    TOK_S_PER_GPU,
    TOK_S_PER_USER,
    COST_PER_MTOK,
    BEATS_API,
    INTERRUPTED,
    INSTANCES,
    BUDGET,
];
/// Markdown's table: every row with the figures behind it.
pub const MARKDOWN: &[Column] = &[
    PLACE,
    INSTANCE_NAME,
    REGION,
    GPUS,
    BASIS,
    FIGURES,
    PRICE,
    TIME,
    COST,
    JOBS_PER_THOUSAND,
    BUDGET,
];
/// Markdown's table of a served model.
pub const MARKDOWN_SERVING: &[Column] = &[
    PLACE,
    INSTANCE_NAME,
    REGION,
    GPUS,
    BASIS,
    PRICE,
    LAYOUT,
    TOK_S_PER_GPU,
    TOK_S_PER_USER,
    COST_PER_MTOK,
    BEATS_API,
];
/// The HTML report's table, whatever the job.
pub const HTML: &[Column] = &[
    PLACE,
    INSTANCE,
    GPUS_PLAIN,
    MEASURED_OR_NOT,
    FIGURES,
    PRICE_NUMBER,
    TIME,
    COST,
    PRICE_AS_OF,
    BUDGET,
];

/// A table ready for a format: the headers of the columns that show, and each row's cells
/// (empty where a row has none), unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Whether the rows were priced beside a hosted API (`--api-price`).
fn has_api(r: &RankReport) -> bool {
    r.rows.iter().any(|x| {
        x.serving
            .as_ref()
            .is_some_and(|s| s.beats_api_above.is_some())
    })
}

/// The columns of `form` that show for `rows` of `r`, filled.
pub fn grid(r: &RankReport, rows: &[RankRow], form: &[Column]) -> Grid {
    let mut g = Grid {
        headers: Vec::new(),
        rows: vec![Vec::new(); rows.len()],
    };
    for c in form {
        let cells: Vec<Option<String>> = rows.iter().map(c.cell).collect();
        let shows = match c.show {
            Show::Always => true,
            Show::EveryRow => !cells.is_empty() && cells.iter().all(Option::is_some),
            Show::Api => has_api(r),
        };
        if shows {
            g.headers.push((c.header)(r));
            for (row, cell) in g.rows.iter_mut().zip(cells) {
                row.push(cell.unwrap_or_default());
            }
        }
    }
    g
}

/// One CSV column: its key (the JSON's name for the field), whether its cell is text from
/// outside (a catalog, a results file: neutralised for spreadsheets) or a number or word
/// gpuvalue writes, and the cell.
#[derive(Clone, Copy)]
pub struct DataColumn {
    pub key: &'static str,
    pub text: bool,
    pub cell: fn(&RankRow) -> String,
}

const fn data(key: &'static str, cell: fn(&RankRow) -> String) -> DataColumn {
    DataColumn {
        key,
        text: false,
        cell,
    }
}

const fn text(key: &'static str, cell: fn(&RankRow) -> String) -> DataColumn {
    DataColumn {
        key,
        text: true,
        cell,
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// The figures a row used, for a script: `name=value unit (basis: derivation)`.
fn figures_data(x: &RankRow) -> String {
    let figs: Vec<String> = x
        .figures
        .iter()
        .map(|f| {
            format!(
                "{}={:.6} {} ({}: {})",
                f.figure.name(),
                f.value,
                f.unit,
                basis(f.source),
                derivation(f)
            )
        })
        .collect();
    figs.join("; ")
}

/// The CSV's columns, every ranking.
pub const DATA: &[DataColumn] = &[
    data("rank", |x| x.rank.to_string()),
    text("provider", |x| x.provider.clone()),
    text("instance_type", |x| x.instance_type.clone()),
    text("region", |x| x.region.clone()),
    text("gpu", |x| x.gpu.clone()),
    data("gpu_count", |x| x.gpu_count.to_string()),
    data("basis", |x| basis(x.basis).into()),
    data("pricing", |x| x.pricing.name().into()),
    text("currency", |x| x.currency.clone()),
    data("price_per_hour", |x| x.price_per_hour.to_string()),
    data("hours_per_job", |x| x.hours_per_job.to_string()),
    data("cost_per_job", |x| x.cost_per_job.to_string()),
    data("jobs_per_currency_unit", |x| {
        x.jobs_per_currency_unit.to_string()
    }),
    data("budget_hours", |x| opt(x.budget_hours)),
    data("budget_jobs", |x| opt(x.budget_jobs)),
    text("price_as_of", |x| x.price_as_of.clone()),
    data("price_confidence", |x| x.price_confidence.clone()),
    data("price_tier", |x| x.price_tier.name().into()),
    text("figures", figures_data),
    text("warnings", |x| x.warnings.join("; ")),
    data("place", place),
    data("spot_interruption_band", |x| {
        x.spot.as_ref().map_or(String::new(), |k| {
            format!(
                "{}{}",
                k.band.label(),
                if k.assumed { " assumed" } else { "" }
            )
        })
    }),
    data("spot_bare_hours_per_job", |x| {
        opt(x.spot.as_ref().map(|k| k.bare_hours))
    }),
    data("spot_expected_interruptions", |x| {
        opt(x.spot.as_ref().map(|k| k.expected_interruptions))
    }),
    data("steady_instances", |x| {
        opt(x.steady.as_ref().map(|s| s.instances))
    }),
    data("steady_load", |x| opt(x.steady.as_ref().map(|s| s.load))),
    data("nodes", |x| x.nodes.to_string()),
    data("egress_gb", |x| opt(x.egress.as_ref().map(|g| g.gb))),
    data("egress_cost", |x| {
        opt(x.egress.as_ref().and_then(|g| g.cost))
    }),
];

/// A serving field of a row, empty where the row has none.
fn serve(x: &RankRow, f: impl Fn(&ServeRow) -> String) -> String {
    x.serving.as_ref().map_or(String::new(), f)
}

/// The CSV's serving columns, after [`DATA`] on a served model's ranking.
pub const SERVING_DATA: &[DataColumn] = &[
    data("layout", |x| serve(x, |s| s.layout.clone())),
    data("gpus_per_copy", |x| {
        serve(x, |s| s.gpus_per_copy.to_string())
    }),
    data("concurrency", |x| serve(x, |s| s.concurrency.to_string())),
    data("tok_s_per_gpu", |x| {
        serve(x, |s| s.tok_s_per_gpu.to_string())
    }),
    data("total_tok_s_per_gpu", |x| {
        serve(x, |s| s.total_tok_s_per_gpu.to_string())
    }),
    data("tok_s_per_user", |x| {
        serve(x, |s| s.tok_s_per_user.to_string())
    }),
    data("ttft_s", |x| serve(x, |s| s.ttft_s.to_string())),
    data("cost_per_million_tokens", |x| {
        serve(x, |s| s.cost_per_million_tokens.to_string())
    }),
    data("cost_per_million_total_tokens", |x| {
        serve(x, |s| s.cost_per_million_total_tokens.to_string())
    }),
    data("api_cost_per_million_tokens", |x| {
        serve(x, |s| opt(s.api_cost_per_million_tokens))
    }),
    data("beats_api_above", |x| serve(x, |s| opt(s.beats_api_above))),
    text("measured", |x| {
        serve(x, |s| s.measured.clone().unwrap_or_default())
    }),
];

/// The CSV's columns of `r`: [`DATA`], then [`SERVING_DATA`] for a served model.
pub fn data_columns(r: &RankReport) -> impl Iterator<Item = &'static DataColumn> {
    let serving: &[DataColumn] = if r.scenario.serving.is_some() {
        SERVING_DATA
    } else {
        &[]
    };
    DATA.iter().chain(serving)
}

#[cfg(test)]
#[path = "columns_tests.rs"]
mod tests;
