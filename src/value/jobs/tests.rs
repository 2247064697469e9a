use super::*;
use crate::value::scenario::Rate;
use crate::value::scenario::serving::{Machine, Parallel};

#[test]
fn full_fine_tuning_costs_8_x_params_x_tokens_and_16_bytes_a_parameter() {
    let s = Finetune {
        model: preset("8b").unwrap(),
        tokens: 1e9,
        method: Method::Full,
        seq_len: 4096.0,
        compute: Precision::Fp16,
    }
    .scenario()
    .unwrap();
    assert!((s.terms[0].work - 8.0 * 8.03e9 * 1e9).abs() < 1e9);
    let sharded: f64 = s.sharded_memory.iter().map(|m| m.gb).sum();
    assert!((sharded - 16.0 * 8.03).abs() < 0.01);
    // 128 GB of state over 8 GPUs: each needs 16 GB plus its activations.
    let per_gpu = s.memory_floor_on(8).unwrap();
    assert!(per_gpu > 16.0 && per_gpu < 22.0, "{per_gpu}");
    assert!(s.memory_floor_on(1).unwrap() > 128.0);
}

#[test]
fn lora_needs_fewer_flop_and_far_less_memory_than_full() {
    let f = |method| {
        Finetune {
            model: preset("8b").unwrap(),
            tokens: 1e9,
            method,
            seq_len: 4096.0,
            compute: Precision::Fp16,
        }
        .scenario()
        .unwrap()
    };
    let (full, lora, qlora) = (f(Method::Full), f(Method::Lora), f(Method::Qlora));
    assert!((lora.terms[0].work / full.terms[0].work - 0.75).abs() < 1e-9);
    assert!(lora.memory_floor_on(1).unwrap() < 24.0);
    assert!(qlora.memory_floor_on(1).unwrap() < lora.memory_floor_on(1).unwrap());
}

fn serve(model: &str, precision: Option<Precision>) -> Serve {
    Serve {
        requests: 1e5,
        ..Serve::chats(preset(model).unwrap(), precision)
    }
}

/// An H200-like GPU: 141 GB, 4.8 TB/s x 0.87 triad, 1979 TFLOPS FP8 x 0.5, NVLink 370.
fn h200() -> Machine {
    Machine {
        mem_gb: 141.0,
        bandwidth: 4800.0 * 0.87,
        flops: 1.979e6 * 0.5,
        bus_gbps: Some(370.0),
        node_gpus: 8,
        net_gbps: None,
        fit: crate::value::scenario::serving::fits().for_gpu(None),
    }
}

#[test]
fn a_decode_step_reads_the_dense_weights_and_the_experts_its_batch_touches() {
    // DeepSeek-R1 in FP8 (DESIGN 5c): about 37 GB at one request, 94 GB at 4, 580 at 64,
    // nearly all 660 GB of experts by 128.
    let s = serve("deepseek-r1", Some(Precision::Fp8))
        .serving()
        .unwrap();
    let e = s.experts.unwrap();
    let read = |b: f64| s.dense_gb + e.layers * s.touched(b) * e.gb;
    for (b, want) in [(1.0, 37.0), (4.0, 94.0), (64.0, 580.0)] {
        assert!((read(b) / want - 1.0).abs() < 0.05, "B={b}: {} GB", read(b));
    }
    assert!(read(128.0) > 0.97 * (s.dense_gb + e.layers * e.count * e.gb));
    assert_eq!(s.touched(0.0), 0.0);
    // MLA: (512 + 64) elements a token and layer, 1 byte in FP8, whole on every rank.
    assert!((s.kv_mb_per_token - 61.0 * 576.0 / 1e6).abs() < 1e-9);
    assert_eq!(s.kv_split, 1.0);
    // A dense model reads all its weights every step whatever the batch.
    let d = serve("70b", Some(Precision::Fp8)).serving().unwrap();
    assert!(d.experts.is_none() && d.touched(64.0) == 0.0);
    assert_eq!(d.kv_split, 8.0);
}

#[test]
fn fixed_costs_make_low_concurrency_latency_bound() {
    // The weight-streaming bound is reached only as the batch grows (DESIGN 5c: H200 FP8
    // DeepSeek-R1 runs reach about 18% of it at 4 in flight, about 49% at 64).
    let s = serve("deepseek-r1", Some(Precision::Fp8))
        .serving()
        .unwrap();
    let m = h200();
    let p = Parallel::parse("tp=8,ep=8").unwrap();
    let share = |b: f64| {
        let pt = s.point(&p, &m, b);
        let e = s.experts.unwrap();
        let bound = (s.dense_gb + e.layers * s.touched(b) * e.gb) * 1e9 / (8.0 * m.bandwidth * 1e9);
        bound / pt.step_s
    };
    assert!(share(4.0) < share(64.0), "{} {}", share(4.0), share(64.0));
    assert!(
        share(4.0) < 0.4 && share(64.0) > 0.3,
        "{} {}",
        share(4.0),
        share(64.0)
    );
    // More requests in flight: more tokens per GPU, fewer per user.
    let (a, b) = (s.point(&p, &m, 4.0), s.point(&p, &m, 64.0));
    assert!(b.tok_s_per_gpu > a.tok_s_per_gpu && b.tok_s_per_user < a.tok_s_per_user);
    assert!((a.total_tok_s_per_gpu / a.tok_s_per_gpu - 2.0).abs() < 1e-9);
}

#[test]
fn an_interactivity_target_takes_the_most_requests_that_still_meet_it() {
    let mut job = serve("deepseek-r1", Some(Precision::Fp8));
    let free = job.serving().unwrap().best_on(8, &h200()).unwrap();
    job.interactivity = Some(50.0);
    let s = job.serving().unwrap();
    let pt = s.best_on(8, &h200()).unwrap();
    assert!(pt.tok_s_per_user >= 50.0, "{pt:?}");
    assert!(pt.concurrency < free.concurrency);
    // One request more would miss it (unless the memory stopped it first).
    if pt.concurrency < pt.max_concurrency {
        let next = s.point(&pt.parallel, &h200(), pt.concurrency + 1.0);
        assert!(next.tok_s_per_user < 50.0);
    }
    // A target no layout reaches says so, with what it reaches.
    job.interactivity = Some(5000.0);
    let e = job.serving().unwrap().best_on(8, &h200()).unwrap_err();
    assert!(e.contains("tokens/s per user") && e.contains("5000"), "{e}");
}

#[test]
fn the_layout_is_chosen_or_given_and_checked() {
    let s = serve("deepseek-r1", Some(Precision::Fp8))
        .serving()
        .unwrap();
    // 671 GB of FP8 weights fit no layout of fewer than 8 H200s.
    let pt = s.best_on(8, &h200()).unwrap();
    assert_eq!(pt.gpus, 8);
    assert!(s.best_on(4, &h200()).is_err());
    // MLA under tensor parallelism holds every request's cache on every rank; data-parallel
    // attention splits the requests: it holds many more.
    let tp = Parallel::parse("tp=8").unwrap();
    let dpa = Parallel::parse("tp=8,ep=8,dp-attention").unwrap();
    assert!(s.max_concurrency(&dpa, 141.0) > 4.0 * s.max_concurrency(&tp, 141.0));
    // --parallel fixes it; a dense model has no experts to spread.
    let mut job = serve("70b", Some(Precision::Fp8));
    job.parallel = Some(Parallel::parse("tp=8,ep=8").unwrap());
    assert!(job.scenario().unwrap_err().to_string().contains("dense"));
    for bad in ["tp=8,ep=4", "tp=0", "pp=2", "tp8,xx"] {
        assert!(Parallel::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(Parallel::parse("tp8 ep8 dpa").unwrap(), dpa);
    // Concurrency and a target together are refused.
    let mut job = serve("8b", None);
    job.concurrency = Some(8.0);
    job.interactivity = Some(50.0);
    assert!(job.scenario().is_err());
}

#[test]
fn the_precision_is_the_configs_unless_asked() {
    // gpt-oss ships MXFP4 experts (4.25 bits) and BF16 attention: about 65 GB, multiplied
    // with 8-bit activations (weight-only: not on the FP4 engines).
    let s = serve("gpt-oss-120b", None).serving().unwrap();
    assert_eq!(s.engines, Rate::MatmulFp8Matrix);
    assert!((s.weight_gb() - 65.0).abs() < 3.0, "{}", s.weight_gb());
    // Half its layers attend to a window of 128 tokens.
    assert_eq!(s.window.unwrap().tokens, 128.0);
    let fp8 = serve("gpt-oss-120b", Some(Precision::Fp8))
        .serving()
        .unwrap();
    assert!((fp8.weight_gb() - 117.0).abs() < 3.0, "{}", fp8.weight_gb());
    // DeepSeek-R1 ships FP8: its engines without --precision.
    let r1 = serve("deepseek-r1", None).serving().unwrap();
    assert_eq!(r1.engines, Rate::MatmulFp8Matrix);
    // Llama presets ship nothing: 16-bit.
    assert_eq!(
        serve("8b", None).serving().unwrap().engines,
        Rate::MatmulF16Matrix
    );
}

#[test]
fn a_size_takes_its_shape_from_the_family_and_its_name_from_its_parameters() {
    // Between and at the family's members: the members' own shapes, whichever preset
    // the count was given on.
    for from in ["8b", "70b", "405b"] {
        let m = preset(from).unwrap().with_params(405.85e9);
        assert_eq!((m.layers, m.hidden), (126.0, 16384.0), "{from}");
        let m = preset(from).unwrap().with_params(70.6e9);
        assert_eq!((m.layers, m.hidden), (80.0, 8192.0), "{from}");
    }
    let m = preset("8b").unwrap().with_params(30e9);
    assert!(m.layers > 32.0 && m.layers < 80.0 && m.hidden > 4096.0 && m.hidden < 8192.0);
    assert_eq!(m.hidden % 128.0, 0.0);
    // Scaling 8B's shape to 405B gave 26.4 MB of all-reduce a token: the
    // family's trend gives Llama 3.1 405B's width and 0.26 MB of FP8 KV cache.
    let mut job = serve("8b", Some(Precision::Fp8));
    job.model = preset("8b").unwrap().with_params(405e9);
    let s = job.scenario().unwrap();
    let sv = s.serving.as_ref().unwrap();
    assert_eq!(sv.hidden, 16384.0);
    assert!(
        (sv.kv_mb_per_token - 0.258).abs() < 0.01,
        "{}",
        sv.kv_mb_per_token
    );
    assert_eq!(s.id, "llm-serve-405b-fp8");
    // Named by the parameters, not the preset the shape came from.
    for (p, want) in [(70e9, "70b"), (13e9, "13b"), (1.3e9, "1.3b"), (1e13, "10t")] {
        let m = preset("8b").unwrap().with_params(p);
        assert_eq!(m.label(), want);
    }
    assert_eq!(preset("8b").unwrap().prose(), "Llama 3 8B");
    assert_eq!(
        preset("8b").unwrap().with_params(8.5e9).prose(),
        "an 8.5B model of Llama 3's shape"
    );
    assert_eq!(
        preset("llama2-7b").unwrap().with_params(13e9).prose(),
        "a 13B model of Llama 2's shape"
    );
    assert!(preset("13b").is_err());
}

#[test]
fn a_fine_tune_computes_in_fp16_or_fp8_and_refuses_int4() {
    let job = |compute| Finetune {
        model: preset("70b").unwrap(),
        tokens: 1e8,
        method: Method::Lora,
        seq_len: 8192.0,
        compute,
    };
    let fp16 = job(Precision::Fp16).scenario().unwrap();
    let fp8 = job(Precision::Fp8).scenario().unwrap();
    assert_eq!(fp16.terms[0].figure, Rate::LlmTrainF16Matrix);
    assert_eq!(fp8.terms[0].figure, Rate::LlmTrainFp8Matrix);
    // The same work, a distinct id, the precision said.
    assert_eq!(fp16.terms[0].work, fp8.terms[0].work);
    assert!(fp8.id.ends_with("-fp8") && !fp16.id.ends_with("-fp8"));
    assert!(fp8.description.contains("FP8 matrix engines"));
    let e = job(Precision::Int4).scenario().unwrap_err().to_string();
    assert!(e.contains("--method qlora"), "{e}");
    // A calibration point's job reads the field, and without it means fp16.
    let spec: JobSpec = serde_json::from_str(
        r#"{"kind": "llm-finetune", "model": "8b", "method": "lora", "tokens": 1e6, "seq_len": 1024}"#,
    )
    .unwrap();
    assert_eq!(
        spec.scenario().unwrap().terms[0].figure,
        Rate::LlmTrainF16Matrix
    );
}

#[test]
fn configs_give_the_published_totals() {
    // (preset, total, active) as the model cards publish them.
    for (name, total, active) in [
        ("deepseek-r1", 671e9, 37e9),
        ("qwen3-235b-a22b", 235e9, 22e9),
        ("gpt-oss-120b", 117e9, 5.1e9),
        ("gpt-oss-20b", 21e9, 3.6e9),
        ("mixtral-8x7b", 46.7e9, 12.9e9),
        ("kimi-k2", 1.04e12, 32e9),
        ("llama4-maverick", 400e9, 17e9),
    ] {
        let m = preset(name).unwrap();
        assert!(
            (m.params / total - 1.0).abs() < 0.03,
            "{name}: {:.4e} total",
            m.params
        );
        // Llama 4 Maverick's card says 17B active; its shapes give 16.1B (biases, norms and
        // the card's rounding aside): within 8%.
        let tol = if name == "llama4-maverick" {
            0.08
        } else {
            0.05
        };
        assert!(
            (m.active() / active - 1.0).abs() < tol,
            "{name}: {:.4e} active",
            m.active()
        );
        assert!(m.is_moe(), "{name}");
    }
    let r1 = preset("deepseek-r1").unwrap();
    let moe = r1.moe.unwrap();
    assert_eq!((moe.experts, moe.per_token, moe.layers), (256.0, 8.0, 58.0));
    assert!(matches!(
        r1.attention,
        Attention::Mla {
            kv_lora_rank: 512.0,
            rope_dim: 64.0
        }
    ));
    assert_eq!(r1.shipped.unwrap().precision, Precision::Fp8);
    let oss = preset("gpt-oss-120b").unwrap();
    assert_eq!(
        oss.sliding,
        Some(Sliding {
            window: 128.0,
            layers: 18.0
        })
    );
    // The dense Llama configs give the presets' counts.
    let dense = parse_config(
        include_str!("../../../tests/fixtures/models/llama3-8b.json"),
        "llama3-8b.json",
    )
    .unwrap();
    assert!(
        (dense.params / 8.03e9 - 1.0).abs() < 0.01,
        "{}",
        dense.params
    );
    assert!(!dense.is_moe());
}

#[test]
fn a_config_it_cannot_read_names_the_file_the_field_and_what_was_expected() {
    let r1 = include_str!("../../data/models/deepseek-r1.json");
    let mut v: serde_json::Value = serde_json::from_str(r1).unwrap();
    v["num_experts_per_tok"] = serde_json::json!("eight");
    let e = parse_config(&v.to_string(), "r1.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("r1.json")
            && e.contains("`num_experts_per_tok`")
            && e.contains("expected a positive number"),
        "{e}"
    );
    v["num_experts_per_tok"] = serde_json::json!(300);
    let e = parse_config(&v.to_string(), "r1.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most the 256 routed experts"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(r1).unwrap();
    v.as_object_mut().unwrap().remove("hidden_size");
    let e = parse_config(&v.to_string(), "r1.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`hidden_size`") && e.contains("missing"), "{e}");
    v["hidden_size"] = serde_json::json!(7168);
    v["quantization_config"]["quant_method"] = serde_json::json!("bitnet");
    // A format it cannot cost is refused when served as it ships, and --precision overrides.
    let m = parse_config(&v.to_string(), "r1.json").unwrap();
    let mut job = serve("deepseek-r1", None);
    job.model = m;
    let e = job.serving().unwrap_err().to_string();
    assert!(
        e.contains("quant_method") && e.contains("bitnet") && e.contains("--precision"),
        "{e}"
    );
    job.precision = Some(Precision::Fp8);
    assert!(job.serving().is_ok());
    let e = parse_config("[1, 2]", "list.json").unwrap_err().to_string();
    assert!(e.contains("list.json") && e.contains("JSON object"), "{e}");
    let e = parse_config("{", "bad.json").unwrap_err().to_string();
    assert!(e.contains("bad.json"), "{e}");
}

#[test]
fn a_moe_fine_tune_computes_on_the_active_parameters_and_holds_all_of_them() {
    let job = |model: &str| {
        Finetune {
            model: preset(model).unwrap(),
            tokens: 1e8,
            method: Method::Lora,
            seq_len: 4096.0,
            compute: Precision::Fp16,
        }
        .scenario()
        .unwrap()
    };
    let s = job("qwen3-235b-a22b");
    let m = preset("qwen3-235b-a22b").unwrap();
    assert!((s.terms[0].work / (6.0 * m.active() * 1e8) - 1.0).abs() < 1e-9);
    let held: f64 = s.sharded_memory.iter().map(|n| n.gb).sum();
    assert!(held > 2.0 * 230.0, "{held}");
    // Expert parallelism: the tokens go to the experts and back.
    assert!(s.collectives.as_ref().unwrap().all_to_all.unwrap() > 0.0);
    assert!(job("8b").collectives.as_ref().unwrap().all_to_all.is_none());
    assert!(s.collectives.as_ref().unwrap().seconds(8.0, 370.0) > 0.0);
}

#[test]
fn a_target_never_raises_tokens_per_gpu_above_the_untargeted_answer() {
    // Engines cap the batch (vLLM max_num_seqs, SGLang max_running_requests): a latency
    // target picks a batch under the cap, never above it.
    for model in ["deepseek-r1", "gpt-oss-120b", "70b"] {
        let mut job = serve(model, Some(Precision::Fp8));
        let free = job.serving().unwrap().best_on(8, &h200()).unwrap();
        assert!(free.concurrency <= MAX_BATCH, "{model}: {free:?}");
        for (i, t) in [
            (Some(1.0), None),
            (None, Some(10.0)),
            (Some(5.0), Some(100.0)),
        ] {
            job.interactivity = i;
            job.ttft_s = t;
            let pt = job.serving().unwrap().best_on(8, &h200()).unwrap();
            assert!(
                pt.tok_s_per_gpu <= free.tok_s_per_gpu * (1.0 + 1e-9),
                "{model} {i:?} {t:?}: {} over {}",
                pt.tok_s_per_gpu,
                free.tok_s_per_gpu
            );
            assert!(pt.concurrency <= MAX_BATCH);
        }
        // A stated limit is the cap the target works under.
        job.interactivity = Some(1.0);
        job.ttft_s = None;
        job.max_batch = Some(32.0);
        let pt = job.serving().unwrap().best_on(8, &h200()).unwrap();
        assert!(pt.concurrency <= 32.0, "{model}: {pt:?}");
    }
    // A concurrency over the stated limit is refused, naming both.
    let mut job = serve("70b", None);
    job.concurrency = Some(64.0);
    job.max_batch = Some(32.0);
    let e = job.serving().unwrap_err().to_string();
    assert!(
        e.contains("--concurrency 64") && e.contains("--max-batch 32"),
        "{e}"
    );
}

/// A config with one field changed, parsed: Err's text.
fn hostile(base: &str, edit: impl Fn(&mut serde_json::Value)) -> Result<Model, String> {
    let mut v: serde_json::Value = serde_json::from_str(base).unwrap();
    edit(&mut v);
    parse_config(&v.to_string(), "config.json").map_err(|e| e.to_string())
}

#[test]
fn hostile_configs_are_refused_naming_the_file_the_field_and_what_was_expected() {
    let oss = include_str!("../../data/models/gpt-oss-120b.json");
    let r1 = include_str!("../../data/models/deepseek-r1.json");
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            oss,
            Box::new(|v| v["num_local_experts"] = 0.into()),
            "`num_local_experts`: expected 2 or more",
        ),
        (
            oss,
            Box::new(|v| v["num_hidden_layers"] = 36.5.into()),
            "`num_hidden_layers`: expected a positive whole number",
        ),
        (
            oss,
            Box::new(|v| v["num_key_value_heads"] = 7.into()),
            "`num_key_value_heads`: expected a divisor of num_attention_heads (64)",
        ),
        (
            oss,
            Box::new(|v| {
                v["layer_types"].as_array_mut().unwrap().pop();
            }),
            "`layer_types`: expected one entry per layer (36",
        ),
        (
            oss,
            Box::new(|v| v["layer_types"][3] = "linear_attention".into()),
            "linear_attention",
        ),
        (
            r1,
            Box::new(|v| v["full_attention_interval"] = 4.into()),
            "`full_attention_interval`: marks a hybrid model",
        ),
        (
            r1,
            Box::new(|v| v["layers_block_type"] = serde_json::json!(["mamba"])),
            "hybrid",
        ),
    ];
    for (base, edit, want) in cases {
        let e = hostile(base, edit).unwrap_err();
        assert!(e.contains("config.json") && e.contains(want), "{want}: {e}");
    }
    // The context is checked against the job.
    let m = parse_config(oss, "config.json").unwrap();
    let mut job = serve("gpt-oss-120b", None);
    job.model = m;
    job.prompt_tokens = 200_000.0;
    let e = job.serving().unwrap_err().to_string();
    assert!(
        e.contains("context of 131072") && e.contains("max_position_embeddings"),
        "{e}"
    );
}

#[test]
fn the_quantization_formats_people_ship_are_read_right() {
    let base = include_str!("../../data/models/mixtral-8x7b.json");
    let with = |q: serde_json::Value| {
        hostile(base, move |v| v["quantization_config"] = q.clone()).unwrap()
    };
    let bytes = |m: &Model| m.shipped.map(|s| (s.precision, s.other_bytes));
    let ct = |bits: u64, kind: &str| serde_json::json!({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": bits, "type": kind}}}});
    assert_eq!(bytes(&with(ct(8, "float"))).unwrap().0, Precision::Fp8);
    assert_eq!(bytes(&with(ct(4, "int"))).unwrap().0, Precision::Int4);
    assert_eq!(bytes(&with(ct(4, "float"))).unwrap().0, Precision::Fp4);
    let int8 = with(ct(8, "int")).shipped.unwrap();
    assert!(int8.other_bytes > 1.0 && int8.other_bytes < 1.1 && int8.compute == Precision::Fp16);
    let gptq8 = with(serde_json::json!({"quant_method": "gptq", "bits": 8}))
        .shipped
        .unwrap();
    assert!(
        gptq8.other_bytes > 1.0,
        "GPTQ 8-bit costed as {} bytes",
        gptq8.other_bytes
    );
    let gptq4 = with(serde_json::json!({"quant_method": "gptq", "bits": 4}))
        .shipped
        .unwrap();
    assert!(gptq4.other_bytes < 0.6);
    let bnb = with(serde_json::json!({"quant_method": "bitsandbytes", "load_in_4bit": true}));
    assert_eq!(bnb.shipped.unwrap().precision, Precision::Int4);
    let odd = with(serde_json::json!({"quant_method": "gptq", "bits": 3}));
    assert!(
        odd.unread_quantization
            .unwrap()
            .contains("`quantization_config.bits`: expected 4 or 8")
    );
}

#[test]
fn an_engine_changes_the_time_to_first_token_and_never_the_throughput() {
    use crate::value::scenario::engine::Engine;
    use crate::value::scenario::serving::fits;
    let s = Serve {
        concurrency: Some(64.0),
        ..Serve::chats(preset("deepseek-r1").unwrap(), None)
    }
    .serving()
    .unwrap();
    let on = |engine: Option<Engine>| {
        let m = Machine {
            mem_gb: 141.0,
            bandwidth: 4800.0 * 0.87,
            flops: 1.979e6,
            bus_gbps: Some(450.0),
            node_gpus: 8,
            net_gbps: None,
            fit: fits().for_engine("NVIDIA", engine),
        };
        s.best_on(8, &m).unwrap()
    };
    let (pooled, trt, sglang) = (
        on(None),
        on(Some(Engine::TensorrtLlm)),
        on(Some(Engine::Sglang)),
    );
    assert_eq!(pooled.tok_s_per_gpu, trt.tok_s_per_gpu);
    assert_eq!(pooled.tok_s_per_gpu, sglang.tok_s_per_gpu);
    // Published: TensorRT-LLM's TTFTs at 64 clients stay near 0.15 s on 8 H200s, SGLang's
    // on Blackwell grow past 0.5 s; the fits keep that order.
    assert!(
        trt.ttft_s < sglang.ttft_s,
        "{} {}",
        trt.ttft_s,
        sglang.ttft_s
    );
    // An engine without its own fit on a vendor takes the vendor's pool.
    assert_eq!(on(Some(Engine::Atom)).ttft_s, pooled.ttft_s);
}

#[test]
fn a_precision_parses_as_the_command_line_takes_it_in_any_case() {
    use clap::ValueEnum;
    for p in Precision::value_variants() {
        let name = p.to_possible_value().unwrap().get_name().to_string();
        assert_eq!(name.parse::<Precision>(), Ok(*p));
        assert_eq!(name.to_uppercase().parse::<Precision>(), Ok(*p));
    }
    let e = "fp6".parse::<Precision>().unwrap_err();
    assert!(e.contains("expected fp16, fp8, int4 or fp4"), "{e}");
}
