//! The sources that need keys (Lambda, Alibaba Cloud, Tencent Cloud, GCP's billing
//! catalog): skipped without their keys, priced with them, and no key ever written or sent
//! to the mirror. One test for the four: they share the run and the search for the keys.

use super::*;

/// Fake keys, each a value no fixture contains.
const KEYS: &[(&str, &str)] = &[
    ("LAMBDA_API_KEY", "secret_lambda_7f3a9c1e55"),
    ("GCP_API_KEY", "AIzaSecretGcp3e9f0c"),
    ("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI5tSecretId9b2c"),
    ("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "aliSecretKey4d8e1f"),
    ("TENCENTCLOUD_SECRET_ID", "AKIDsecretTencent0c4a"),
    ("TENCENTCLOUD_SECRET_KEY", "tcSecretKey6e1b9d"),
];

fn run_keyed(home: &Path, args: &[&str], keys: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpuvalue"));
    c.args(args)
        .env("GPUVALUE_HOME", home)
        .env_remove("GPUVALUE_MIRROR")
        .env("COLUMNS", "10000")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir());
    for (k, v) in KEYS {
        if keys {
            c.env(k, v);
        } else {
            c.env_remove(k);
        }
    }
    c.output().expect("run gpuvalue")
}

/// Every file under `dir`, as text.
fn everything_under(dir: &Path, out: &mut String) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            everything_under(&p, out);
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
}

#[test]
fn keyed_sources_skip_without_keys_and_never_write_a_key() {
    let files = fixtures_copy();
    let s = Server::start(files.path());
    let home = tempfile::tempdir().unwrap();
    let keyed = [
        "catalog",
        "update",
        "--source",
        "lambda",
        "--source",
        "alibaba",
        "--source",
        "tencent",
        "--source",
        "gcp",
        "--mirror",
        &s.base,
        "--timeout",
        "5",
    ];
    // Without their keys: skipped and said, not a failure; nothing written for them.
    let o = run_keyed(home.path(), &keyed, false);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("lambda: skipped: set LAMBDA_API_KEY"), "{t}");
    assert!(
        t.contains("tencent: skipped: set TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY"),
        "{t}"
    );
    assert!(t.contains("gcp: skipped: set GCP_API_KEY"), "{t}");
    assert!(!home.path().join("sources/lambda").exists());
    // With them (fake keys; the mirror answers from files): every source priced.
    let mut all = String::new();
    let o = run_keyed(home.path(), &keyed, true);
    all.push_str(&text(&o));
    assert!(o.status.success(), "{}", text(&o));
    for args in [
        &["catalog", "--format", "json"][..],
        &["catalog", "update", "--list"],
        &["rank", "--provider", "tencent", "--currency", "CNY"],
        &["catalog", "check"],
    ] {
        let o = run_keyed(home.path(), args, true);
        all.push_str(&text(&o));
    }
    let cat = catalog_json(home.path());
    let h100 = instance(&cat, ("lambda", "gpu_8x_h100_sxm5", "asia-northeast-1"));
    assert_eq!(h100["prices"]["on_demand"]["amount"], 31.92, "{h100}");
    assert!(
        h100["source"]
            .as_str()
            .unwrap()
            .starts_with("Lambda Cloud API")
    );
    let a10 = instance(&cat, ("alibaba", "ecs.gn7i-c8g1.2xlarge", "cn-beijing"));
    assert_eq!(a10["prices"]["on_demand"]["amount"], 9.5326, "{a10}");
    assert!(
        a10["source"].as_str().unwrap().contains("DescribePrice"),
        "{a10}"
    );
    assert_eq!(a10["as_of"], cat_day(&a10["source"]));
    // GCP: a machine's price is its vCPUs, memory and GPUs at their SKUs, summed, per
    // region of the SKUs; a kind with a part missing (spot A2: only a core SKU) is not
    // priced.
    let p = |v: &serde_json::Value, m: &str| v["prices"][m]["amount"].as_f64().unwrap();
    let a2 = instance(&cat, ("gcp", "a2-highgpu-1g", "us-west1"));
    assert!((p(a2, "on_demand") - 3.673385).abs() < 1e-9, "{a2}");
    assert!(a2["prices"].get("spot").is_none(), "{a2}");
    assert_eq!(a2["gpu"], "a100-40gb-sxm");
    let a3 = instance(&cat, ("gcp", "a3-highgpu-8g", "us-east4"));
    assert!((p(a3, "on_demand") - (8.0 * 9.796550569 + 8.0 * 1.18251)).abs() < 1e-5);
    let g2 = instance(&cat, ("gcp", "g2-standard-48", "us-central1"));
    assert!((p(g2, "on_demand") - 4.001665148).abs() < 1e-9, "{g2}");
    assert!(
        cat["instances"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["provider"] != "gcp" || i["region"] != "global"),
        "a licence SKU's region made a row"
    );
    // Zone 1 answers "sold out", zone 2 has no answer, zone 3 sells it.
    let gn7 = instance(&cat, ("tencent", "GN7.2XLARGE32", "ap-beijing"));
    assert!(
        gn7["source"].as_str().unwrap().contains("ap-beijing-3"),
        "{gn7}"
    );
    // No key in anything written or shown, nor in anything the mirror received.
    everything_under(home.path(), &mut all);
    all.push_str(&s.seen.lock().unwrap().join("\n"));
    for (var, value) in KEYS {
        assert!(
            !all.contains(value),
            "{var}'s value was written or sent to the mirror"
        );
    }
}

/// The day in a source's "fetched YYYY-MM-DDT..." text.
fn cat_day(source: &serde_json::Value) -> String {
    let s = source.as_str().unwrap();
    let i = s.find("fetched ").unwrap() + 8;
    s[i..i + 10].to_string()
}
