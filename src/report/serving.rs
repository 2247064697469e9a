//! Serving output: the ranking's serving columns (tokens per second per GPU and per user,
//! time to first token, cost per million tokens, and beside a hosted API's price), and the
//! sweep of throughput and cost against interactivity, as tables and SVG charts.

use super::fmt::{md, sig};
use crate::value::rank::{RankReport, ServeRow, Sweep};
use tabled::Table;
use tabled::settings::Style;

/// A number to three significant figures, "-" where the file did not say it.
pub fn or_dash(v: f64) -> String {
    if v.is_finite() { sig(v) } else { "-".into() }
}

/// A time to first token in one word: "74ms", "1.2s", "-" where not measured.
pub fn ttft(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s < 1.0 {
        format!("{}ms", sig(s * 1e3))
    } else {
        format!("{}s", sig(s))
    }
}

/// "tp8 ep8 x64": the layout and requests in flight per copy; a measured row says so.
pub fn layout(s: &ServeRow) -> String {
    let c = if s.concurrency.is_finite() {
        format!(" x{}", s.concurrency.round())
    } else {
        String::new()
    };
    match &s.measured {
        Some(_) => format!("measured {}{c}", s.layout),
        None => format!("{}{c}", s.layout),
    }
}

/// "above 34%", "never".
pub fn beats(s: &ServeRow) -> Option<String> {
    s.beats_api_above.map(|u| {
        if u > 1.0 {
            "never".into()
        } else {
            format!("above {:.0}%", u * 100.0)
        }
    })
}

/// The notes under a serving table: what the columns mean, the API's price.
pub fn notes(r: &RankReport) -> Vec<String> {
    let Some(s) = &r.scenario.serving else {
        return Vec::new();
    };
    let mut v = vec![format!(
        "Serving: {}; {}; layout: one copy of the model (tp: tensor parallel, ep: expert parallel, dpa: data-parallel attention, mtp: speculative decoding with the model's multi-token-prediction layer) x requests in flight per copy; tok/s/GPU: output tokens per second per GPU; tok/s/user: each request's decode speed (TTFT: its time to first token); {}/Mtok: the price per million output tokens at full load ({} prompt and {} output tokens a request); KV cache in {}; rows are estimates unless their layout says measured, and assume {}.",
        crate::value::rank::target_words(s),
        ttft_words(crate::value::scenario::serving::fits(), s.engine),
        r.currency,
        s.prompt_tokens,
        s.output_tokens,
        if s.kv_bytes <= 1.0 {
            "FP8 (1 byte an element)"
        } else {
            "16 bits (2 bytes an element)"
        },
        crate::value::scenario::serving::ENGINES
    )];
    if let Some(a) = r
        .rows
        .iter()
        .find_map(|x| x.serving.as_ref()?.api_cost_per_million_tokens)
    {
        v.push(format!(
            "API: the same requests through the hosted API cost {} {} per million output tokens (prompts included); \"beats API\": the share of its hours an instance must be busy to cost less.",
            sig(a),
            r.currency
        ));
    }
    let measured: Vec<&str> = r
        .rows
        .iter()
        .filter_map(|x| x.serving.as_ref()?.measured.as_deref())
        .collect();
    if !measured.is_empty() {
        v.push(format!(
            "Measured serving rows: {} ({}); the others are estimates.",
            measured.len(),
            measured.first().copied().unwrap_or_default()
        ));
    }
    v
}

impl Sweep {
    fn pivot(&self, value: impl Fn(&crate::value::rank::SweepPoint) -> String) -> Vec<Vec<String>> {
        let mut rows = vec![
            std::iter::once("GPU".to_string())
                .chain(self.levels.iter().map(|l| format!("{l}")))
                .collect::<Vec<_>>(),
        ];
        for g in &self.gpus {
            let name = self
                .points
                .iter()
                .find(|p| &p.gpu == g)
                .map_or(g.clone(), |p| p.gpu_name.clone());
            let mut row = vec![name];
            for l in &self.levels {
                row.push(
                    self.points
                        .iter()
                        .find(|p| &p.gpu == g && p.interactivity == *l)
                        .map_or("-".into(), &value),
                );
            }
            rows.push(row);
        }
        rows
    }

    fn grid(rows: Vec<Vec<String>>) -> String {
        let mut b = tabled::builder::Builder::default();
        for r in rows {
            b.push_record(r);
        }
        let mut t: Table = b.build();
        t.with(Style::rounded());
        super::term::fit(t)
    }

    pub fn text(&self) -> String {
        let mut s = format!("{}: {}\n", self.scenario, self.job);
        s.push_str("Output tokens/s per GPU at each interactivity (tokens/s per user), the cheapest instance of each GPU type there:\n");
        s.push_str(&Self::grid(self.pivot(|p| sig(p.tok_s_per_gpu))));
        s.push('\n');
        s.push_str(&format!(
            "{} per million output tokens ({} prices):\n",
            self.currency,
            self.pricing.name()
        ));
        s.push_str(&Self::grid(self.pivot(|p| sig(p.cost_per_million_tokens))));
        s.push('\n');
        s.push_str("-: no instance of that GPU reaches it. Each cell's instance, layout and concurrency: --format json or csv.\n");
        super::term::wrap(&s)
    }

    pub fn markdown(&self) -> String {
        let md_grid = |rows: Vec<Vec<String>>| {
            let mut s = String::new();
            for (i, r) in rows.iter().enumerate() {
                s.push_str(&format!(
                    "| {} |\n",
                    r.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | ")
                ));
                if i == 0 {
                    s.push_str(&format!("|{}\n", "---|".repeat(r.len())));
                }
            }
            s
        };
        format!(
            "{}: {}\n\nOutput tokens/s per GPU at each interactivity (tokens/s per user):\n\n{}\n{} per million output tokens:\n\n{}",
            self.scenario,
            md(&self.job),
            md_grid(self.pivot(|p| sig(p.tok_s_per_gpu))),
            self.currency,
            md_grid(self.pivot(|p| sig(p.cost_per_million_tokens)))
        )
    }

    pub fn csv(&self) -> anyhow::Result<String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([
            "gpu",
            "interactivity",
            "tok_s_per_user",
            "tok_s_per_gpu",
            "total_tok_s_per_gpu",
            "cost_per_million_tokens",
            "cost_per_million_total_tokens",
            "currency",
            "concurrency",
            "layout",
            "instance",
            "gpu_count",
        ])?;
        for p in &self.points {
            w.write_record([
                p.gpu.clone(),
                p.interactivity.to_string(),
                p.tok_s_per_user.to_string(),
                p.tok_s_per_gpu.to_string(),
                p.total_tok_s_per_gpu.to_string(),
                p.cost_per_million_tokens.to_string(),
                p.cost_per_million_total_tokens.to_string(),
                self.currency.clone(),
                p.concurrency.to_string(),
                p.layout.clone(),
                super::fmt::csv_cell(&p.instance),
                p.gpu_count.to_string(),
            ])?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }

    /// Two SVG charts: throughput per GPU and cost per million tokens against
    /// interactivity, a line per GPU type.
    pub fn charts(&self) -> [String; 2] {
        [
            self.chart("Output tokens/s per GPU", |p| p.tok_s_per_gpu),
            self.chart(
                &format!("{} per million output tokens", self.currency),
                |p| p.cost_per_million_tokens,
            ),
        ]
    }

    fn chart(&self, title: &str, y: impl Fn(&crate::value::rank::SweepPoint) -> f64) -> String {
        let series: Vec<(String, Vec<(f64, f64)>)> = self
            .gpus
            .iter()
            .map(|g| {
                let name = self
                    .points
                    .iter()
                    .find(|p| &p.gpu == g)
                    .map_or(g.clone(), |p| p.gpu_name.clone());
                // Drawn where each point is (its achieved interactivity), once.
                let mut pts: Vec<(f64, f64)> = self
                    .points
                    .iter()
                    .filter(|p| &p.gpu == g)
                    .map(|p| (p.tok_s_per_user, y(p)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts.dedup();
                (name, pts)
            })
            .collect();
        super::svg::lines(title, "tokens/s per user", &series)
    }
}

/// In words, which published times to first token an estimate follows: `engine`'s on each
/// vendor with a fit of its own (and how many runs it was fitted on), else the vendor's
/// pool of every engine.
fn ttft_words(
    fits: &crate::value::scenario::serving::FitFile,
    engine: Option<crate::value::scenario::engine::Engine>,
) -> String {
    let Some(e) = engine else {
        let named: Vec<String> = fits
            .fits
            .iter()
            .map(|v| {
                let names: Vec<&str> = v.engines.iter().map(|x| x.engine.name()).collect();
                format!("{} {}", v.vendor, names.join(", "))
            })
            .collect();
        return format!(
            "times to first token from every engine's published runs pooled (--engine picks one with its own fit: {})",
            named.join("; ")
        );
    };
    let (own, pooled): (Vec<_>, Vec<_>) = fits
        .fits
        .iter()
        .partition(|v| v.engines.iter().any(|x| x.engine == e));
    let mut s = format!("times to first token as {}'s published runs", e.name());
    let own: Vec<String> = own
        .iter()
        .map(|v| {
            let n = v
                .engines
                .iter()
                .find(|x| x.engine == e)
                .map_or(0, |x| x.points);
            format!("{n} on {}", v.vendor)
        })
        .collect();
    if !own.is_empty() {
        s.push_str(&format!(" ({})", own.join(", ")));
    }
    if !pooled.is_empty() {
        let v: Vec<&str> = pooled.iter().map(|v| v.vendor.as_str()).collect();
        s.push_str(&format!(
            "; on {}, too few published {} runs for a fit of its own, so every engine's runs pooled",
            v.join(" and "),
            e.name()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::ttft_words;
    use crate::value::scenario::engine::Engine;
    use crate::value::scenario::serving::fits;

    #[test]
    fn the_notes_say_which_engines_ttfts_an_estimate_follows_and_where_it_has_none() {
        let pooled = ttft_words(fits(), None);
        assert!(
            pooled.contains("NVIDIA SGLang, TensorRT-LLM; AMD SGLang, ATOM"),
            "{pooled}"
        );
        let atom = ttft_words(fits(), Some(Engine::Atom));
        assert!(atom.contains("ATOM's published runs (64 on AMD)"), "{atom}");
        assert!(
            atom.contains("on NVIDIA, too few published ATOM runs"),
            "{atom}"
        );
    }
}
