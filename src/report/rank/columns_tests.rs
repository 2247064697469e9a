//! The column model over hand-made rows: which columns show for which input, in which
//! order, with which header and cell text; and the syntax each format adds.

use super::*;
use crate::market::catalog::Tier;
use crate::value::rank::Steady;
use crate::value::scenario::Job;

/// The embedded training ranking, its rows replaced by two hand-made ones: `p x (r1)`,
/// 8 x H100 SXM at 2.5 an hour for 3 hours, and `q y (r2)`, 1 x L4 at 0.5 for 12 hours.
fn report() -> RankReport {
    let mut r = crate::value::rank::training_report();
    let base = r.rows[0].clone();
    let row =
        |rank: usize, who: (&str, &str, &str), gpus: (u32, &str), price: f64, h: f64| RankRow {
            rank,
            place: rank,
            tied: false,
            provider: who.0.into(),
            instance_type: who.1.into(),
            region: who.2.into(),
            gpu: gpus.1.to_lowercase(),
            gpu_name: gpus.1.into(),
            gpu_count: gpus.0,
            nodes: 1,
            basis: Source::Estimated,
            figures: Vec::new(),
            price_per_hour: price,
            currency: "USD".into(),
            price_as_of: "2026-11".into(),
            price_confidence: "high".into(),
            price_tier: Tier::List,
            hours_per_job: h,
            cost_per_job: price * h,
            jobs_per_currency_unit: 1.0 / (price * h),
            budget_hours: None,
            budget_jobs: None,
            warnings: Vec::new(),
            steady: None,
            timing: None,
            link: None,
            spot: None,
            egress: None,
            serving: None,
            ..base.clone()
        };
    r.rows = vec![
        row(1, ("p", "x", "r1"), (8, "H100 SXM"), 2.5, 3.0),
        row(2, ("q", "y", "r2"), (1, "L4"), 0.5, 12.0),
    ];
    r.ranked_total = 2;
    r
}

fn headers(r: &RankReport, form: &[Column]) -> Vec<String> {
    grid(r, &r.rows, form).headers
}

#[test]
fn the_short_form_heads_its_columns_in_order_and_fills_each_row() {
    let r = report();
    let g = grid(&r, &r.rows, SHORT);
    assert_eq!(
        g.headers,
        [
            "#", "instance", "GPUs", "USD/h", "time/job", "USD/job", "basis"
        ]
    );
    assert_eq!(
        g.rows,
        [
            [
                "1",
                "p x (r1)",
                "8 x H100 SXM",
                "2.50",
                "3.00 h",
                "7.50",
                "estimated"
            ],
            [
                "2",
                "q y (r2)",
                "1 x L4",
                "0.500",
                "12.0 h",
                "6.00",
                "estimated"
            ],
        ]
    );
}

#[test]
fn every_form_has_its_own_columns_in_its_own_order() {
    let r = report();
    assert_eq!(
        headers(&r, DETAILED),
        ["#", "instance", "GPUs", "USD/h", "time/job", "USD/job"]
    );
    assert_eq!(
        headers(&r, MARKDOWN),
        [
            "#",
            "instance",
            "region",
            "GPUs",
            "basis",
            "figures used (per GPU)",
            "USD/h",
            "time/job",
            "USD/job",
            "jobs per 1,000 USD"
        ]
    );
    assert_eq!(
        headers(&r, HTML),
        [
            "#",
            "instance",
            "GPUs",
            "basis",
            "figures used (per GPU)",
            "USD/h",
            "time/job",
            "USD/job",
            "price as of"
        ]
    );
    // A served model's forms: its columns after the price, empty for a row without them,
    // and "beats API" only beside a hosted API's price.
    let g = grid(&r, &r.rows, SERVING);
    assert_eq!(
        g.headers,
        [
            "#",
            "instance",
            "GPUs",
            "USD/h",
            "layout",
            "tok/s/GPU",
            "tok/s/user (TTFT)",
            "USD/Mtok"
        ]
    );
    assert_eq!(g.rows[0][4..], ["", "", "", ""]);
    assert_eq!(
        headers(&r, MARKDOWN_SERVING)[4..],
        [
            "basis",
            "USD/h",
            "layout",
            "tok/s/GPU",
            "tok/s/user (TTFT)",
            "USD/Mtok"
        ]
    );
}

#[test]
fn cells_differ_by_form_where_the_forms_say_them_differently() {
    let mut r = report();
    r.rows[0].price_tier = Tier::Reported;
    r.rows[0].price_confidence = "low".into();
    r.rows[0].warnings.push("a stale price".into());
    let cells = |form: &[Column]| grid(&r, &r.rows, form).rows[0].clone();
    assert_eq!(cells(SHORT)[3], "2.50 (REPORTED)*");
    assert_eq!(
        cells(DETAILED)[3],
        "2.50 (REPORTED)*\n2026-11\nREPORTED, low"
    );
    assert_eq!(cells(MARKDOWN)[1..3], ["p x", "r1"]);
    assert_eq!(cells(MARKDOWN)[6], "2.50 (REPORTED)");
    assert_eq!(cells(MARKDOWN)[9], "133");
    let html = cells(HTML);
    assert_eq!(html[5], "2.50");
    assert_eq!(html[8], "2026-11 (REPORTED, low)");
    // An assumed figure is an estimate in HTML, said as assumed elsewhere.
    r.rows[0].basis = Source::Assumed;
    assert_eq!(grid(&r, &r.rows, HTML).rows[0][3], "estimated");
    assert_eq!(grid(&r, &r.rows, SHORT).rows[0][6], "assumed");
}

#[test]
fn optional_columns_show_only_when_every_row_has_a_cell() {
    let mut r = report();
    r.rows[0].budget_jobs = Some(3.0);
    r.rows[0].budget_hours = Some(9.0);
    // One row without: no column.
    assert!(!headers(&r, SHORT).contains(&"budget buys".to_string()));
    r.rows[1].budget_jobs = Some(0.5);
    r.rows[1].budget_hours = Some(6.0);
    for form in [SHORT, DETAILED, SERVING, MARKDOWN, HTML] {
        assert_eq!(headers(&r, form).last().unwrap(), "budget buys");
    }
    // Markdown's serving table has none.
    assert!(!headers(&r, MARKDOWN_SERVING).contains(&"budget buys".to_string()));
    let g = grid(&r, &r.rows, SHORT);
    assert_eq!(g.rows[0].last().unwrap(), "3 jobs (9.00 h)");
    assert_eq!(g.rows[1].last().unwrap(), "<1 job (50%, 6.00 h)");
    // A steady rate: the instances column, before the budget; the time column says traffic.
    for x in &mut r.rows {
        x.steady = Some(Steady {
            instances: 2,
            load: 0.75,
        });
    }
    r.scenario.job = Some(Job {
        name: "serve".into(),
        assumption: "an hour of traffic".into(),
        output: None,
        steady_hours: Some(1.0),
    });
    assert_eq!(
        headers(&r, SHORT),
        [
            "#",
            "instance",
            "GPUs",
            "USD/h",
            "traffic",
            "USD/job",
            "basis",
            "instances",
            "budget buys"
        ]
    );
    assert_eq!(grid(&r, &r.rows, SHORT).rows[0][7], "2 (75% busy)");
    // Markdown keeps "time/job".
    assert_eq!(headers(&r, MARKDOWN)[7], "time/job");
    // No rows: no optional column (the seven that always show).
    assert_eq!(grid(&r, &[], SHORT).headers.len(), 7);
}

#[test]
fn headers_carry_the_currency() {
    let mut r = report();
    r.currency = "EUR".into();
    assert_eq!(headers(&r, SHORT)[3..6], ["EUR/h", "time/job", "EUR/job"]);
    assert_eq!(headers(&r, MARKDOWN)[9], "jobs per 1,000 EUR");
    assert_eq!(headers(&r, SERVING)[7], "EUR/Mtok");
}

#[test]
fn markdown_escapes_every_header_and_cell() {
    let g = Grid {
        headers: vec!["#".into(), "a|b".into()],
        rows: vec![vec!["1".into(), "<x>\ny".into()]],
    };
    assert_eq!(
        super::super::markdown::table(&g),
        "\n| # | a\\|b |\n|---|---|\n| 1 | &lt;x&gt; y |\n"
    );
}

#[test]
fn html_escapes_every_header_and_cell() {
    let g = Grid {
        headers: vec!["#".into(), "a&b".into()],
        rows: vec![vec!["1".into(), "<x>".into()]],
    };
    assert_eq!(
        super::super::html::table(&g),
        "<table class=\"rank\"><tr><th>#</th><th>a&amp;b</th></tr><tr><td>1</td><td>&lt;x&gt;</td></tr></table>"
    );
}

#[test]
fn csv_keys_in_order_and_outside_text_neutralised() {
    let mut r = report();
    let keys: Vec<&str> = data_columns(&r).map(|c| c.key).collect();
    assert_eq!(
        keys[..7],
        [
            "rank",
            "provider",
            "instance_type",
            "region",
            "gpu",
            "gpu_count",
            "basis"
        ]
    );
    assert_eq!(keys.len(), 29);
    assert_eq!(keys[20], "place");
    assert_eq!(keys[28], "egress_cost");
    // A serving ranking adds its columns after them.
    assert!(!keys.contains(&"layout"));
    r.rows[0].provider = "=HYPERLINK(1)".into();
    r.rows[0].price_per_hour = -1.5;
    let out = super::super::csv(&r).unwrap();
    let first = out.lines().nth(1).unwrap();
    assert!(first.starts_with("1,'=HYPERLINK(1),x,r1,h100 sxm,8,estimated,on_demand,USD,-1.5,3,"));
    assert!(out.starts_with(&format!("{}\n", keys.join(","))));
}
