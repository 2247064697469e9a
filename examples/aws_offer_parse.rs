//! Times the AWS Price List parser of `catalog update --source aws` on a local offer file
//! (the benchmark in reports/feeds-benchmark.md; `scripts/bench-feeds.sh` runs it):
//! `cargo run --release --example aws_offer_parse -- FILE`. Prints one line of JSON.

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: aws_offer_parse FILE");
    let file = std::fs::File::open(&path).expect("open the offer file");
    let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let t0 = std::time::Instant::now();
    let offer = gpuvalue::market::feeds::aws::parse_reader(file, "us-east-1").expect("parse");
    let s = t0.elapsed().as_secs_f64();
    let types = offer
        .types
        .values()
        .filter(|t| t.on_demand.is_some())
        .count();
    println!(
        "{{\"tool\":\"gpuvalue\",\"bytes\":{bytes},\"seconds\":{s:.4},\"mb_per_s\":{:.1},\"lines\":{},\"kept_rows\":{},\"gpu_types\":{types}}}",
        bytes as f64 / 1e6 / s,
        offer.lines,
        offer.kept_rows
    );
}
