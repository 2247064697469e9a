//! LLM jobs with parameters: the physics' consequences a buyer sees (which instances can
//! hold the model, what LoRA saves), every assumption printed, and the job as a scenario
//! file that ranks the same.

use crate::common::gpuvalue;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json", "--top", "5000"]);
    let o = gpuvalue(&a);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    // A ranking where nothing ranks says why and exits 1; one with rows exits 0.
    let empty = v["rows"].as_array().is_some_and(|r| r.is_empty());
    let want = if empty { Some(1) } else { Some(0) };
    assert_eq!(
        o.status.code(),
        want,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    v
}

fn gpus(v: &Value) -> Vec<(String, u64)> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["gpu"].as_str().unwrap().to_string(),
                r["gpu_count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The cost per job of the row of instance type `t`, if it was ranked.
fn cost(v: &Value, t: &str) -> Option<f64> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["instance_type"] == t)
        .map(|r| r["cost_per_job"].as_f64().unwrap())
}

#[test]
fn a_70b_model_in_fp8_ranks_8_gpu_nodes_sharded_and_refuses_24_gb_cards() {
    let v = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--precision",
        "fp8",
    ]);
    let ranked = gpus(&v);
    for g in ["h100-sxm", "h200-sxm", "mi300x"] {
        assert!(
            ranked.contains(&(g.to_string(), 8)),
            "no 8x {g} in {ranked:?}"
        );
    }
    let refused = v["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["instance"] == "aws/g5.xlarge/us-east-1")
        .expect("the 24 GB A10G is refused");
    let why = refused["reason"].as_str().unwrap();
    assert!(
        why.contains("24 GB per GPU") && why.contains("required"),
        "{why}"
    );
    // Every row states its layout: copies of the model and the batch their memory holds.
    for r in v["rows"].as_array().unwrap() {
        let l = &r["timing"]["layout"];
        let (t, n) = (
            l["gpus_per_copy"].as_u64().unwrap(),
            l["copies"].as_u64().unwrap(),
        );
        assert_eq!(t * n, r["gpu_count"].as_u64().unwrap(), "{l}");
        assert!(l["batch"].as_f64().unwrap() >= 1.0, "{l}");
    }
    // FP16 weights are twice FP8's: slower decode, never cheaper on the same node.
    let f16 = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--precision",
        "fp16",
    ]);
    let (a, b) = (
        cost(&v, "p5.48xlarge").unwrap(),
        cost(&f16, "p5.48xlarge").unwrap(),
    );
    assert!(b > a, "fp16 {b} vs fp8 {a}");
}

#[test]
fn lora_costs_less_than_full_fine_tuning_which_needs_the_state_sharded() {
    let args = |m| {
        vec![
            "rank",
            "--job",
            "llm-finetune",
            "--model",
            "8b",
            "--tokens",
            "1e9",
            "--method",
            m,
            // The model's time and price alone: the weights taken out are costed apart.
            "--egress-gb",
            "0",
        ]
    };
    let lora = json(&args("lora"));
    let full = json(&args("full"));
    let (l, f) = (
        cost(&lora, "p5.48xlarge").unwrap(),
        cost(&full, "p5.48xlarge").unwrap(),
    );
    assert!((f / l - 8.0 / 6.0).abs() < 1e-6, "full {f} / lora {l}");
    // 128 GB of Adam state fits no single GPU, but 8 x 80 GB sharded.
    assert!(cost(&full, "p5.4xlarge").is_none());
    assert!(cost(&lora, "p5.4xlarge").is_some());
}

#[test]
fn every_assumption_is_printed_and_the_job_prints_as_a_scenario_that_ranks_the_same() {
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "8b",
        "--precision",
        "fp8",
    ]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("Assumption: ") && t.contains("prefill") && t.contains("KV cache"),
        "{t}"
    );
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "8b",
        "--precision",
        "fp8",
        "--print-scenario",
    ]);
    assert!(o.status.success());
    let file = String::from_utf8(o.stdout).unwrap();
    let parsed = gpuvalue::value::scenario::ScenarioFile::parse(&file, "printed").unwrap();
    let id = parsed.scenarios[0].id.clone();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.json");
    std::fs::write(&p, &file).unwrap();
    let from_file = json(&[
        "rank",
        "--scenarios",
        p.to_str().unwrap(),
        "--scenario",
        &id,
    ]);
    let from_job = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "8b",
        "--precision",
        "fp8",
    ]);
    assert_eq!(from_file["rows"], from_job["rows"]);
}

/// Data-parallel training carries its collectives over the instance's interconnect: hidden
/// behind the compute on NVLink, adding the excess on a slow link, and said when the
/// catalog states no link.
#[test]
fn the_collectives_of_data_parallel_training_cost_what_outlasts_the_compute() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("links.json");
    let row = |name: &str, bus: f64| {
        format!(
            r#"{{"provider": "mine", "instance_type": "{name}", "region": "home", "gpu": "h100-sxm",
            "gpu_count": 8, "vcpu": 96, "ram_gib": 1024, "source": "my quote", "as_of": "2026-11",
            "confidence": "high", "prices": {{"on_demand": {{"amount": 30, "currency": "USD", "per": "hour"}}}},
            "interconnect": {{"kind": "test link", "bus_gbps": {bus}, "source": "test"}}}}"#
        )
    };
    std::fs::write(
        &p,
        format!(
            r#"{{"schema_version": 1, "instances": [{}, {}]}}"#,
            row("fast", 370.0),
            row("slow", 0.5)
        ),
    )
    .unwrap();
    let v = json(&[
        "rank",
        "--job",
        "llm-finetune",
        "--method",
        "full",
        "--catalog-add",
        p.to_str().unwrap(),
        "--provider",
        "mine",
    ]);
    let row = |t: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_type"] == t)
            .unwrap()
            .clone()
    };
    let (fast, slow) = (row("fast"), row("slow"));
    let comm = |r: &Value| r["timing"]["comm"].clone();
    let exposed = |r: &Value| comm(r)["exposed"].as_f64().unwrap();
    assert_eq!(comm(&fast)["kind"], "counted", "{}", comm(&fast));
    assert_eq!(exposed(&fast), 0.0, "{}", comm(&fast));
    assert!(exposed(&slow) > 0.0, "{}", comm(&slow));
    let (f, s) = (
        fast["hours_per_job"].as_f64().unwrap(),
        slow["hours_per_job"].as_f64().unwrap(),
    );
    // 3 x 16 GB x 7/8 per step at 0.5 GB/s: 84 s a step, 1908 steps, far past the compute.
    assert!(s > 1.5 * f, "slow link {s} h, fast {f} h");
    // An 8-GPU instance without a stated link runs over its GPU's baseboard (V100 SXM2:
    // NVLink); PCIe cards without one are charged PCIe of their generation, marked.
    let all = json(&["rank", "--job", "llm-finetune", "--method", "lora"]);
    let rows = all["rows"].as_array().unwrap();
    let v100 = rows
        .iter()
        .find(|r| r["instance_type"] == "gpu_8x_v100")
        .expect("LoRA of 8B fits 8 x 16 GB");
    assert_eq!(comm(v100)["kind"], "counted", "{v100}");
    assert_eq!(v100["link"]["basis"], "board", "{v100}");
    assert!(comm(v100)["link"].as_str().unwrap().contains("NVLink2"));
    let pcie = rows
        .iter()
        .find(|r| r["gpu"] == "l40s" && r["gpu_count"] == 8 && r.get("link").is_some())
        .expect("an 8 x L40S row");
    assert_eq!(pcie["link"]["basis"], "assumed", "{pcie}");
    assert_eq!(comm(pcie)["link"], "PCIe Gen4 x16", "{pcie}");
    assert_eq!(comm(pcie)["bus_gbps"], 24.0, "{pcie}");
    assert!(rows.iter().all(|r| comm(r)["kind"] != "no_link"));
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-finetune",
        "--method",
        "lora",
        "--gpu",
        "l40s",
    ]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("L40S †") && t.contains("† PCIe assumed"), "{t}");
}

#[test]
fn a_stated_throughput_is_served_by_the_whole_instances_that_keep_up() {
    let base = [
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--precision",
        "fp8",
        "--output-tokens",
        "200",
    ];
    let at = |rate: &str| {
        let mut a = base.to_vec();
        a.extend(["--request-rate", rate]);
        json(&a)
    };
    let (slow, fast) = (at("2"), at("50"));
    // The same traffic as a fixed number of requests: one instance's hours for it.
    let mut fixed = base.to_vec();
    fixed.extend(["--requests", "180000"]);
    let fixed = json(&fixed);
    let one = |t: &str| {
        fixed["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_type"] == t)
            .unwrap()["hours_per_job"]
            .as_f64()
            .unwrap()
    };
    for r in fast["rows"].as_array().unwrap() {
        let t = r["instance_type"].as_str().unwrap();
        let n = r["steady"]["instances"].as_f64().unwrap();
        let load = r["steady"]["load"].as_f64().unwrap();
        // An hour of 50 requests/s is 180,000 requests: as many instances as that takes
        // hours on one, each busy for its share.
        assert_eq!(n, (one(t) * (1.0 - 1e-9)).ceil().max(1.0), "{t}");
        assert!((load * n - one(t)).abs() < 1e-6 * n, "{t}: {load} x {n}");
        assert_eq!(r["hours_per_job"], 1.0);
        let price = r["price_per_hour"].as_f64().unwrap();
        // The responses taken out are costed beside the instances' hours.
        let out = r["egress"]["cost"].as_f64().unwrap_or(0.0);
        let cost = r["cost_per_job"].as_f64().unwrap() - out;
        assert!(
            (cost - price * n).abs() < 1e-9 * cost,
            "{t}: {cost} vs {price} x {n}"
        );
    }
    // Light traffic needs one instance wherever the model fits, mostly idle: the cheapest
    // instance per hour that holds the model wins, not the fastest per request.
    // (A slow card that serves under 2 requests/s needs as many as the rate takes.)
    for r in slow["rows"].as_array().unwrap() {
        let t = r["instance_type"].as_str().unwrap();
        let per_second = 180_000.0 / (one(t) * 3600.0);
        let want = (2.0 / per_second * (1.0 - 1e-9)).ceil().max(1.0);
        assert_eq!(r["steady"]["instances"].as_f64().unwrap(), want, "{r}");
    }
    assert!(
        slow["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["steady"]["instances"] == 1)
            .count()
            > 10
    );
    // The winner is the cheapest hour of the instances it takes: a cheaper card that
    // needs three to keep up (4 x RTX 3090 at 0.67 USD/h) loses to one L40S pair at 0.76.
    let cheapest = slow["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cost_per_job"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(slow["rows"][0]["cost_per_job"].as_f64().unwrap(), cheapest);
    assert_eq!(slow["rows"][0]["steady"]["instances"], 1);
    // A rate of output tokens is the request rate times the output tokens.
    let mut tok = base.to_vec();
    tok.extend(["--token-rate", "10000"]);
    let tok = json(&tok);
    assert_eq!(
        tok["rows"][0]["cost_per_job"],
        fast["rows"][0]["cost_per_job"]
    );
    // One size only: a rate and a number of requests are refused together.
    let mut both = base.to_vec();
    both.extend(["--request-rate", "2", "--requests", "10"]);
    let o = gpuvalue(&both);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--requests"));
    // The table says how many instances each row takes and what the cost covers.
    let mut table = base.to_vec();
    table.extend(["--request-rate", "50"]);
    let o = gpuvalue(&table);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("instances") && out.contains("busy)"), "{out}");
    assert!(out.contains("Steady rate:"), "{out}");
}

/// A job no instance can hold says why nothing ranks, by its commonest reasons, instead of
/// an empty table and "as of .".
#[test]
fn a_job_nothing_can_hold_says_why_nothing_ranks() {
    for format in ["table", "markdown"] {
        let o = gpuvalue(&[
            "rank",
            "--job",
            "llm-serve",
            "--model-params",
            "1e13",
            "--format",
            format,
        ]);
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert_eq!(o.status.code(), Some(1), "nothing ranks: a failure\n{out}");
        assert!(
            out.contains("Nothing ranks: none of the"),
            "{format}: {out}"
        );
        assert!(out.contains("GB required (e.g. "), "{format}: {out}");
        assert!(!out.contains("as of ."), "{format}: {out}");
        assert!(!out.contains("│ # │"), "{format}: {out}");
    }
}

/// A steady rate's "job" is a period of traffic: the table and the budget say so instead of
/// "time/job 1.00 h" and "341 jobs".
#[test]
fn a_steady_rate_is_worded_as_traffic() {
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-serve",
        "--request-rate",
        "5",
        "--budget",
        "1000",
        "--top",
        "3",
        "--wide",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{out}");
    // A served model's table gives its price per million tokens, not a time per job.
    assert!(out.contains("USD/Mtok"), "{out}");
    assert!(
        !out.contains("time/job") && !out.contains(" jobs ("),
        "{out}"
    );
    assert!(out.contains("h of traffic │"), "{out}");
    assert!(
        out.contains("the hours of this traffic it pays for"),
        "{out}"
    );
}

/// FP4 serving runs the matmuls on the FP4 engines where the GPU has them
/// (Blackwell, MI355X), with 4.5-bit weights (NVFP4's scales) and an FP8 KV cache; a GPU
/// without FP4 engines serves the FP4 weights on its FP8 (else FP16) engines and the row
/// says so; fine-tuning in FP4 is refused with the reason.
#[test]
fn fp4_serving_uses_the_fp4_engines_where_they_exist_and_says_where_not() {
    let v = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--precision",
        "fp4",
    ]);
    let rows = v["rows"].as_array().unwrap();
    let first = |gpu: &str| {
        rows.iter()
            .find(|r| r["gpu"] == gpu)
            .unwrap_or_else(|| panic!("no {gpu} row"))["figures"][0]
            .clone()
    };
    for gpu in ["b200", "gb200", "mi355x"] {
        let f = first(gpu);
        assert_eq!(f["figure"], "matmul_fp4_matrix", "{f}");
        assert_eq!(f["derivation"]["used"], "matmul_fp4_matrix", "{f}");
        // The engines' factor is the earlier fit, now an assumption under the serving
        // model's own fitted shares (src/data/serving.json).
        assert_eq!(f["derivation"]["origin"], "assumed", "{f}");
        assert!(
            (f["derivation"]["factor"].as_f64().unwrap() - 0.5).abs() < 0.05,
            "{f}"
        );
    }
    for (gpu, used) in [
        ("h100-sxm", "matmul_fp8_matrix"),
        ("a100-80gb-sxm", "matmul_f16_matrix"),
    ] {
        let f = first(gpu);
        assert_eq!(f["derivation"]["used"], used, "{f}");
        assert!(
            f["basis"]
                .as_str()
                .unwrap()
                .contains("no FP4 matrix engines on this GPU"),
            "{f}"
        );
    }
    // The weights of a 70B model in FP4 with NVFP4's scales: 0.5625 bytes a parameter.
    let text = v["scenario"].to_string();
    assert!(text.contains("39.7"), "{text}");
    // On the same B200s, FP4 serves faster than FP8.
    let fp8 = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--precision",
        "fp8",
    ]);
    let hours = |v: &serde_json::Value, t: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_type"] == t)
            .unwrap()["hours_per_job"]
            .as_f64()
            .unwrap()
    };
    let b200 = rows
        .iter()
        .find(|r| r["gpu"] == "b200" && r["gpu_count"] == 8)
        .unwrap()["instance_type"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(hours(&v, &b200) < hours(&fp8, &b200), "{b200}");
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-finetune",
        "--model",
        "8b",
        "--precision",
        "fp4",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--precision fp4: fine-tuning computes in fp16")
    );
}

/// A job bigger than one instance runs on several identical ones. A full
/// fine-tune of a 70B model (1,130 GB of state) fits no 8x H100 node; `--nodes auto` takes
/// the fewest that hold it, where the provider publishes the network between them, and
/// prices all of them; the collectives run within a node over its link and between nodes
/// over that network. Serving, spot and types without a published network are not ranked
/// on several nodes, each with its reason.
#[test]
fn a_job_bigger_than_one_instance_runs_on_the_fewest_nodes_that_hold_it() {
    let full = [
        "rank",
        "--job",
        "llm-finetune",
        "--model",
        "70b",
        "--method",
        "full",
    ];
    let with = |extra: &[&str]| {
        let mut a = full.to_vec();
        a.extend(extra);
        a.push("--details");
        json(&a)
    };
    let one = with(&["--gpu", "h100"]);
    assert!(
        one["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["gpu_count"].as_u64() > Some(8) || r["gpu"] != "h100-sxm"),
        "an 8x H100 node cannot hold the full fine-tune"
    );
    let auto = with(&["--gpu", "h100", "--nodes", "auto"]);
    let rows = auto["rows"].as_array().unwrap();
    let p5 = rows
        .iter()
        .find(|r| r["instance_type"] == "p5.48xlarge")
        .expect("p5.48xlarge ranks on several nodes");
    assert_eq!(p5["nodes"], 2, "{p5}");
    let link = p5["timing"]["comm"]["link"].as_str().unwrap();
    assert!(
        link.contains("EFA") && link.contains("between 2 nodes"),
        "{link}"
    );
    // Its price is both nodes'.
    let cat = gpuvalue(&[
        "catalog",
        "--provider",
        "aws",
        "--gpu",
        "h100",
        "--format",
        "json",
    ]);
    let cat: Value = serde_json::from_slice(&cat.stdout).unwrap();
    let node_price = cat["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["instance_type"] == "p5.48xlarge" && i["region"] == p5["region"])
        .unwrap()["prices"]["on_demand"]["amount"]
        .as_f64()
        .unwrap();
    let total = p5["price_per_hour"].as_f64().unwrap();
    assert!(
        (total - 2.0 * node_price).abs() < 1e-6 * total,
        "{total} vs 2 x {node_price}"
    );
    // A type whose provider publishes no network between its nodes is not ranked on two.
    let reasons: Vec<String> = auto["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["instance"]
                .as_str()
                .unwrap()
                .starts_with("lambda/gpu_8x_h100_sxm5/")
        })
        .map(|e| e["reason"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !reasons.is_empty() && reasons.iter().all(|r| r.contains("network between nodes")),
        "{reasons:?}"
    );
    // More nodes finish sooner; the communication they add costs (never saves) money.
    let lora = |n: &str| {
        let v = json(&[
            "rank",
            "--job",
            "llm-finetune",
            "--model",
            "70b",
            "--nodes",
            n,
            "--provider",
            "aws",
            "--gpu",
            "h100",
        ]);
        let r = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_type"] == "p5.48xlarge" && r["region"] == "us-east-1")
            .unwrap()
            .clone();
        (
            r["hours_per_job"].as_f64().unwrap(),
            r["cost_per_job"].as_f64().unwrap(),
        )
    };
    let (h1, c1) = lora("1");
    let (h4, c4) = lora("4");
    assert!(h4 < h1 / 3.0, "{h4} vs {h1}");
    assert!(c4 >= c1 * 0.999, "{c4} vs {c1}");
    // A served model that fits no 8-GPU node of 80 GB runs over two of them, its copy's
    // collectives over the network between them (DeepSeek-R1 in FP8: 671 GB of weights).
    let serve = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "deepseek-r1",
        "--nodes",
        "auto",
        "--gpu",
        "h100-sxm",
        "--details",
    ]);
    let rows = serve["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{serve}");
    for r in rows {
        assert!(
            r["nodes"].as_u64().unwrap_or(1) * r["gpu_count"].as_u64().unwrap() >= 16,
            "{r}"
        );
        assert!(r["gpus_per_copy"].as_u64().unwrap() >= 16, "{r}");
    }
    for bad in ["0", "1025", "many"] {
        let o = gpuvalue(&["rank", "--nodes", bad]);
        assert_eq!(o.status.code(), Some(2), "--nodes {bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("expected a number of nodes"));
    }
}

/// A precision a GPU lacks is refused with the reason, or run as frameworks run it and named
/// so; `--details` gives each row a short block, not a 35-line column.
#[test]
fn fp8_on_a_gpu_without_fp8_engines_is_refused_or_named_for_what_runs() {
    let serve = [
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--precision",
        "fp8",
    ];
    let v = json(&serve);
    let rows = v["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| !r["gpu"].as_str().unwrap().starts_with("v100"))
    );
    let why = v["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["instance"].as_str().unwrap().contains("v100"))
        .expect("a V100 instance is listed as not ranked");
    assert!(
        why["reason"]
            .as_str()
            .unwrap()
            .contains("no FP8 or FP4 matrix engines"),
        "{why}"
    );
    // An A100 serves FP8 weights dequantised on its FP16 engines, and says so.
    let a100 = rows
        .iter()
        .find(|r| r["gpu"] == "a100-80gb-sxm")
        .expect("an A100 row");
    let fig = &a100["figures"][0];
    assert_eq!(fig["figure"], "matmul_fp8_matrix", "{fig}");
    assert_eq!(fig["derivation"]["used"], "matmul_f16_matrix", "{fig}");
    let mut a = serve.to_vec();
    a.extend(["--gpu", "a100-80gb-sxm", "--details", "--top", "3"]);
    let o = gpuvalue(&a);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("FP16 matrix engines") && t.contains("for the FP8 matrix engines work"),
        "{t}"
    );
    // Each row: three table lines at most and a block of a few lines under the table (its
    // figures, factors, copies and batch, the data out).
    let block_lines = t
        .lines()
        .skip_while(|l| !l.starts_with('╰'))
        .skip(1)
        .take_while(|l| !l.starts_with("Assumption"))
        .count();
    assert!((3..=3 * 9).contains(&block_lines), "{block_lines}:\n{t}");
    assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
    // Training in FP8 needs FP8 engines.
    let ft = json(&[
        "rank",
        "--job",
        "llm-finetune",
        "--precision",
        "fp8",
        "--gpu",
        "a100-80gb-sxm",
    ]);
    assert!(ft["rows"].as_array().unwrap().is_empty(), "{ft}");
    assert!(
        ft["excluded"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("no FP8 matrix engines"),
        "{ft}"
    );
}

/// The rows of a ranking by provider, instance type and region, with their cost per job.
fn costs_by_row(v: &Value) -> std::collections::BTreeMap<String, (f64, Value)> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                row_key(r),
                (r["cost_per_job"].as_f64().unwrap(), r["egress"].clone()),
            )
        })
        .collect()
}

#[test]
fn data_out_of_the_cloud_is_costed_at_each_provider_s_published_price_or_listed_unpriced() {
    let base = [
        "rank",
        "--job",
        "llm-finetune",
        "--model",
        "8b",
        "--method",
        "full",
    ];
    let with = |gb: &str| {
        let mut a = base.to_vec();
        a.extend(["--egress-gb", gb]);
        costs_by_row(&json(&a))
    };
    let (none, tb) = (with("0"), with("1000"));
    assert_eq!(none.len(), tb.len());
    let mut seen = std::collections::BTreeSet::new();
    for (k, (c1, e)) in &tb {
        let (c0, e0) = &none[k];
        assert!(e0.is_null(), "{k}: no data out, no egress field: {e0}");
        let provider = k.split(' ').next().unwrap().trim_matches('"');
        let added = c1 - c0;
        match provider {
            // AWS's first 10 TB: 0.09 USD a GB; GCP's 0.12 USD a GiB; RunPod charges none.
            "aws" => assert!((added - 90.0).abs() < 1e-6, "{k}: {added}"),
            "gcp" => assert!((added - 120.0 * 1e9 / 1073741824.0).abs() < 1e-6, "{k}"),
            "runpod" => assert_eq!(added, 0.0, "{k}"),
            // No published price: not counted, and the row says so (cost null).
            "vast" | "hyperbolic" | "lium" => {
                assert_eq!(added, 0.0, "{k}");
                assert!(e["cost"].is_null() && e["gb"] == 1000.0, "{k}: {e}");
            }
            _ => {}
        }
        assert!(
            (added - e["cost"].as_f64().unwrap_or(0.0)).abs() < 1e-6,
            "{k}: {added} vs {e}"
        );
        seen.insert(provider.to_string());
    }
    for p in ["aws", "gcp", "runpod", "vast"] {
        assert!(seen.contains(p), "no {p} row among {seen:?}");
    }
    // Without --egress-gb a full fine-tune takes its weights out: 2 bytes a parameter.
    let v = json(&base);
    let gb = v["scenario"]["egress"]["gb"].as_f64().unwrap();
    assert!((15.0..17.0).contains(&gb), "{gb}");
    // The table lists the unpriced providers of the rows it shows, by place.
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-finetune",
        "--model",
        "8b",
        "--method",
        "full",
        "--top",
        "40",
    ]);
    let t = String::from_utf8_lossy(&o.stdout).replace("\n  ", " ");
    assert!(
        t.contains("Egress: a job takes 16.1 GB out of the cloud"),
        "{t}"
    );
    assert!(
        t.contains("not assumed free): ") && t.contains("vast (#"),
        "{t}"
    );
    // A negative amount is refused, naming the option.
    let o = gpuvalue(&["rank", "--egress-gb", "-5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--egress-gb"));
}

/// The serving figures of every row of a ranking, by instance key (in rank order).
fn serving_rows(v: &Value) -> Vec<(String, Value)> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (row_key(r), r.clone()))
        .collect()
}

/// A row's instance: provider, type and region.
fn row_key(r: &Value) -> String {
    format!("{} {} {}", r["provider"], r["instance_type"], r["region"])
}

const R1: [&str; 10] = [
    "rank",
    "--job",
    "llm-serve",
    "--precision",
    "fp8",
    "--prompt-tokens",
    "1024",
    "--output-tokens",
    "1024",
    "--concurrency",
];

#[test]
fn deepseek_r1_ranks_the_market_with_its_serving_figures_and_cost_per_million_tokens() {
    let mut a = R1.to_vec();
    a.extend(["64", "--model", "deepseek-r1"]);
    let preset = json(&a);
    let rows = serving_rows(&preset);
    assert!(rows.len() > 20, "{}", rows.len());
    for (k, r) in &rows {
        for key in [
            "tok_s_per_gpu",
            "total_tok_s_per_gpu",
            "tok_s_per_user",
            "ttft_s",
            "cost_per_million_tokens",
            "cost_per_million_total_tokens",
        ] {
            let x = r[key].as_f64().unwrap_or(f64::NAN);
            assert!(x.is_finite() && x > 0.0, "{k}: {key} = {}", r[key]);
        }
        // Cost per million = price per hour / tokens an hour, over every GPU of the row.
        let gpus = (r["gpu_count"].as_f64().unwrap()) * r["nodes"].as_f64().unwrap_or(1.0);
        let want = r["price_per_hour"].as_f64().unwrap()
            / (r["tok_s_per_gpu"].as_f64().unwrap() * gpus * 3600.0)
            * 1e6;
        let got = r["cost_per_million_tokens"].as_f64().unwrap();
        assert!((got / want - 1.0).abs() < 1e-9, "{k}: {got} vs {want}");
        // 1k in, 1k out: input+output is twice the output.
        let ratio =
            r["total_tok_s_per_gpu"].as_f64().unwrap() / r["tok_s_per_gpu"].as_f64().unwrap();
        assert!((ratio - 2.0).abs() < 1e-9, "{k}: {ratio}");
        assert_eq!(r["concurrency"].as_f64(), Some(64.0), "{k}");
    }
    // The same model from its config.json ranks the same.
    let mut a = R1.to_vec();
    a.extend(["64", "--model-config", "src/data/models/deepseek-r1.json"]);
    let from_config = json(&a);
    let keys = |v: &Value| serving_rows(v).into_iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(keys(&preset), keys(&from_config));
    // An interactivity target changes the order, and every row meets it.
    let mut a = R1[..9].to_vec();
    a.extend(["--model", "deepseek-r1", "--interactivity", "50"]);
    let fast = json(&a);
    for (k, r) in serving_rows(&fast) {
        assert!(r["tok_s_per_user"].as_f64().unwrap() >= 50.0, "{k}");
    }
    assert_ne!(keys(&preset)[..10], keys(&fast)[..10]);
}

#[test]
fn vllm_sglang_and_inferencex_results_rank_as_measured() {
    let f = "tests/fixtures/serving";
    for (file, on, gpu) in [
        (
            format!("{f}/vllm_dsr1_fp8_h200_tp8_conc64.json"),
            Some("8xh200-sxm"),
            "h200-sxm",
        ),
        (
            format!("{f}/sglang_dsr1_fp8_mi300x_tp8_conc64.txt"),
            Some("8xmi300x"),
            "mi300x",
        ),
        (
            format!("{f}/agg_dsr1_fp8_b200_tp8_conc64.json"),
            None,
            "b200",
        ),
    ] {
        let mut a = R1.to_vec();
        a.extend(["64", "--model", "deepseek-r1", "--results", &file]);
        if let Some(on) = on {
            a.extend(["--results-on", on]);
        }
        let v = json(&a);
        let rows = serving_rows(&v);
        let measured: Vec<&(String, Value)> = rows
            .iter()
            .filter(|(_, r)| r["basis"] == "measured")
            .collect();
        assert!(!measured.is_empty(), "{file}: no measured row");
        for (k, r) in &measured {
            assert_eq!(r["gpu"], gpu, "{k}");
            assert!(r["measured"].as_str().unwrap().contains(&file), "{k}");
        }
        // Every other GPU's rows stay estimates.
        assert!(
            rows.iter()
                .all(|(_, r)| r["gpu"] == gpu || r["basis"] == "estimated")
        );
    }
    // The published figures come through: the H200 file's 245.9 output tokens/s per GPU.
    let mut a = R1.to_vec();
    let file = format!("{f}/vllm_dsr1_fp8_h200_tp8_conc64.json");
    a.extend([
        "64",
        "--model",
        "deepseek-r1",
        "--results",
        &file,
        "--results-on",
        "8xh200-sxm",
    ]);
    let v = json(&a);
    let r = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["basis"] == "measured")
        .unwrap();
    assert!(
        (r["tok_s_per_gpu"].as_f64().unwrap() - 245.88).abs() < 0.01,
        "{r}"
    );
    assert!(
        (r["tok_s_per_user"].as_f64().unwrap() - 31.12).abs() < 0.01,
        "{r}"
    );
    // Another model's job is not ranked on it, and the file is named with what it measured.
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "70b",
        "--prompt-tokens",
        "1024",
        "--output-tokens",
        "1024",
        "--results",
        &file,
        "--results-on",
        "8xh200-sxm",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("matches no ranked row") && err.contains("DeepSeek-R1"),
        "{err}"
    );
}

#[test]
fn a_serving_file_that_is_none_of_the_formats_is_refused_naming_what_is_missing() {
    // Serving `model` with `file` among the results.
    let serve = |model: &str, file: &str| {
        gpuvalue(&[
            "rank",
            "--job",
            "llm-serve",
            "--model",
            model,
            "--results",
            file,
        ])
    };
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bench.json");
    std::fs::write(&bad, r#"{"output_throughput": 100.0, "duration": 3}"#).unwrap();
    let o = serve("8b", bad.to_str().unwrap());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bench.json")
            && err.contains("missing completed, total_input_tokens, total_output_tokens"),
        "{err}"
    );
    // A vLLM file without its GPUs asks for them.
    let o = serve(
        "deepseek-r1",
        "tests/fixtures/serving/vllm_dsr1_fp8_h200_tp8_conc64.json",
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--results-on"));
    // The real vLLM file reads its GPUs from its metadata (4x L40S).
    let o = serve(
        "8b",
        "tests/fixtures/serving/vllm_llama32_3b_4xl40s_results.json",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("4x l40s") && err.contains("Llama-3.2-3B"),
        "{err}"
    );
}

#[test]
fn the_sweep_gives_each_gpu_types_curve_and_the_api_price_its_break_even() {
    let v = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "deepseek-r1",
        "--sweep",
    ]);
    let points = v["points"].as_array().unwrap();
    let gpus = v["gpus"].as_array().unwrap();
    assert!(gpus.len() >= 4, "{gpus:?}");
    for g in gpus {
        let curve: Vec<&Value> = points.iter().filter(|p| &p["gpu"] == g).collect();
        // Faster per user costs more per token, and each point meets its target.
        for w in curve.windows(2) {
            assert!(
                w[1]["tok_s_per_gpu"].as_f64() <= w[0]["tok_s_per_gpu"].as_f64(),
                "{g}"
            );
        }
        for p in &curve {
            assert!(p["tok_s_per_user"].as_f64().unwrap() >= p["interactivity"].as_f64().unwrap());
        }
    }
    let api = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "deepseek-r1",
        "--concurrency",
        "64",
        "--api-price",
        "0.55/2.19",
    ]);
    for r in api["rows"].as_array().unwrap() {
        let cost = r["cost_per_million_tokens"].as_f64().unwrap();
        let a = r["api_cost_per_million_tokens"].as_f64().unwrap();
        // 1000 prompt and 200 output tokens: 5 x 0.55 + 2.19 a million output tokens.
        assert!((a - (5.0 * 0.55 + 2.19)).abs() < 1e-9, "{a}");
        assert!((r["beats_api_above"].as_f64().unwrap() - cost / a).abs() < 1e-9);
    }
    let o = gpuvalue(&["rank", "--job", "llm-serve", "--api-price", "cheap"]);
    assert_eq!(o.status.code(), Some(2));
    let o = gpuvalue(&["rank", "--job", "llm-finetune", "--interactivity", "20"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A serving result claiming more than its GPUs can compute is refused, naming the file and
/// the field, instead of ranking first as measured at a price near zero.
#[test]
fn a_serving_result_past_what_its_gpu_can_compute_is_refused() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/serving/vllm_dsr1_fp8_h200_tp8_conc64.json"
    );
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
    v["output_throughput"] = serde_json::json!(1e12);
    v["total_token_throughput"] = serde_json::json!(2e12);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claims.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let o = gpuvalue(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "deepseek-r1",
        "--prompt-tokens",
        "1024",
        "--output-tokens",
        "1024",
        "--concurrency",
        "64",
        "--results",
        file.to_str().unwrap(),
        "--results-on",
        "8xh200-sxm",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("claims.json")
            && err.contains("`output_throughput`")
            && err.contains("is past"),
        "{err}"
    );
}

#[test]
fn a_serving_job_takes_its_tokens_at_the_rows_throughput_speculative_or_not() {
    // The hours a job takes are its output tokens at the row's tokens per second per GPU
    // over every GPU: a speculative (MTP) row emits several tokens a request a step, so its
    // hours are not requests over the step time; the same figure prices its million tokens.
    let v = json(&[
        "rank",
        "--job",
        "llm-serve",
        "--model",
        "deepseek-r1",
        "--prompt-tokens",
        "1024",
        "--output-tokens",
        "1024",
        "--gpu",
        "h200-sxm",
    ]);
    let tokens = 1e6 * 1024.0;
    let rows = v["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["layout"].as_str().unwrap().contains("mtp"))
    );
    for r in rows {
        let gpus = r["gpu_count"].as_f64().unwrap();
        let made = r["hours_per_job"].as_f64().unwrap()
            * 3600.0
            * r["tok_s_per_gpu"].as_f64().unwrap()
            * gpus;
        assert!(
            (made / tokens - 1.0).abs() < 1e-6,
            "{}: {made} tokens",
            r["layout"]
        );
        // Energy: each GPU at its board power for those hours, per token the same.
        let e = &r["energy"];
        let kwh =
            gpus * e["watts_per_gpu"].as_f64().unwrap() * r["hours_per_job"].as_f64().unwrap()
                / 1e3;
        assert!((e["kwh_per_job"].as_f64().unwrap() / kwh - 1.0).abs() < 1e-9);
        let j = e["joules_per_token"].as_f64().unwrap();
        assert!((j * tokens / 3.6e6 / kwh - 1.0).abs() < 1e-6);
    }
}
