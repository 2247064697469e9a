#!/usr/bin/env python3
"""Convert InferenceX (SemiAnalysis) API-row snapshots into points.csv.

Inputs (copied verbatim into raw/ from git, see SOURCES.md):
  raw/vng_<commit7>_benchmarks.json          /api/v1/benchmarks?model=DeepSeek-R1-0528 (latest per config)
  raw/vng_<commit7>_benchmarks-history.json  /api/v1/benchmarks/history?model=DeepSeek-R1-0528&isl=..&osl=..

Every output number is copied from a row of those files, except
output_tok_s_per_gpu for multi-node disaggregated rows, which is re-based from
"per decode GPU" to "per GPU of the whole deployment" (see SOURCES.md) and
flagged in notes.
"""
import csv
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "raw")

FORK = "vngcloud/InferenceX-app"  # public fork of SemiAnalysisAI/InferenceX-app carrying the upstream commits
FILES = [
    # (commit, raw filename, path in repo) -- newest first; duplicates keep the first seen
    ("528c4146b8f502fcbce8df7870a935a970cbae25", "vng_528c414_benchmarks.json",
     "packages/app/cypress/fixtures/api/benchmarks.json"),
    ("528c4146b8f502fcbce8df7870a935a970cbae25", "vng_528c414_benchmarks-history.json",
     "packages/app/cypress/fixtures/api/benchmarks-history.json"),
    ("cac6246e9fef70841e48e1434cbf10bb9a2802a8", "vng_cac6246_benchmarks.json",
     "packages/app/cypress/fixtures/api/benchmarks.json"),
    ("cac6246e9fef70841e48e1434cbf10bb9a2802a8", "vng_cac6246_benchmarks-history.json",
     "packages/app/cypress/fixtures/api/benchmarks-history.json"),
]

GPU = {"h100": "h100-sxm", "h200": "h200-sxm", "b200": "b200", "b300": "b300",
       "gb200": "gb200", "gb300": "gb300", "mi300x": "mi300x", "mi325x": "mi325x",
       "mi355x": "mi355x"}
GPUS_PER_NODE = {"gb200": 4, "gb300": 4}  # NVL72 compute trays; everything else 8-GPU servers
MODEL = {"dsr1": "deepseek-r1", "gptoss": "gpt-oss-120b", "llama70b": "llama3-70b",
         "qwen3": "qwen3-235b-a22b"}
PREC = {"fp8": "fp8", "fp4": "fp4", "mxfp4": "fp4", "nvfp4": "fp4", "bf16": "fp16", "fp16": "fp16"}
FRAMEWORK = {"sglang": "sglang", "vllm": "vllm", "trt": "tensorrt-llm", "atom": "atom",
             "dynamo-trt": "dynamo-tensorrt-llm", "dynamo-sglang": "dynamo-sglang",
             "dynamo-vllm": "dynamo-vllm", "mori-sglang": "sglang-mori-disagg"}

HEADER = ["source_id", "source", "date", "gpu", "gpus", "nodes", "model", "precision", "isl", "osl",
          "concurrency", "tp", "ep", "dp_attention", "framework", "metric", "value", "tok_s_per_user",
          "ttft_s", "notes"]


def fmt(x, nd=4):
    if x is None:
        return ""
    return f"{x:.{nd}f}".rstrip("0").rstrip(".")


def key_of(r):
    return (r["hardware"], r["framework"], r["model"], r["precision"], r["spec_method"], r["disagg"],
            r["is_multinode"], r["prefill_tp"], r["prefill_ep"], r["prefill_dp_attention"],
            r["prefill_num_workers"], r["decode_tp"], r["decode_ep"], r["decode_dp_attention"],
            r["decode_num_workers"], r["num_prefill_gpu"], r["num_decode_gpu"], r["isl"], r["osl"],
            r["conc"], r["date"], r.get("run_url"))


def main():
    seen = {}
    order = []
    for commit, fname, path in FILES:
        rows = json.load(open(os.path.join(RAW, fname)))
        for i, r in enumerate(rows):
            k = key_of(r)
            if k in seen:
                seen[k]["also"].append(f"{fname}#{i}")
                # sanity: identical measurement must carry identical headline numbers
                a = seen[k]["row"]["metrics"]["tput_per_gpu"]
                b = r["metrics"]["tput_per_gpu"]
                assert abs(a - b) <= 1e-6 * max(1, abs(a)), (k, a, b)
                continue
            seen[k] = {"row": r, "commit": commit, "fname": fname, "path": path, "idx": i, "also": []}
            order.append(k)

    out = []
    skipped = []
    for n, k in enumerate(order):
        e = seen[k]
        r = e["row"]
        m = r["metrics"]
        hw = GPU.get(r["hardware"])
        model = MODEL.get(r["model"])
        prec = PREC.get(r["precision"])
        if not (hw and model and prec):
            skipped.append((r["hardware"], r["model"], r["precision"]))
            continue
        fw = FRAMEWORK.get(r["framework"], r["framework"])
        notes = []
        if r["spec_method"] and r["spec_method"] != "none":
            notes.append(f"spec_decode={r['spec_method']}")
        out_val = m.get("output_tput_per_gpu")
        out_note = None
        if r["is_multinode"]:
            P, D = r["num_prefill_gpu"], r["num_decode_gpu"]
            gpus = P + D
            tp, ep, dpa = r["decode_tp"], r["decode_ep"], r["decode_dp_attention"]
            notes.append(
                f"disagg multinode: prefill {r['prefill_num_workers']}x(tp{r['prefill_tp']},ep{r['prefill_ep']},"
                f"dpa={str(r['prefill_dp_attention']).lower()})={P} GPUs; decode {r['decode_num_workers']}x"
                f"(tp{r['decode_tp']},ep{r['decode_ep']},dpa={str(r['decode_dp_attention']).lower()})={D} GPUs; "
                f"tp/ep/dp_attention columns = decode workers")
            if out_val is not None and "input_tput_per_gpu" in m:
                lhs = m["tput_per_gpu"] * gpus
                rhs = out_val * D + m["input_tput_per_gpu"] * P
                if abs(lhs - rhs) <= 0.01 * lhs:
                    out_val = out_val * D / gpus
                    out_note = ("output_tok_s_per_gpu re-based to all prefill+decode GPUs "
                                f"(source output_tput_per_gpu={fmt(m['output_tput_per_gpu'])} is per decode GPU)")
                else:
                    out_val = None
            else:
                out_val = None
            nodes = math.ceil(gpus / GPUS_PER_NODE.get(r["hardware"], 8))
        elif r["disagg"]:
            # legacy v1 (pre-2025-12-19) GB200 Dynamo rows: single 'tp' field that held the
            # whole deployment's GPU count; prefill/decode split not recorded.
            gpus = r["decode_tp"]
            tp, ep, dpa = "", "", ""
            notes.append(f"legacy v1 disagg row: app reports tp={r['decode_tp']} (taken as total GPUs of the "
                         "deployment, the tput_per_gpu denominator); prefill/decode split unknown")
            out_val = None
            nodes = math.ceil(gpus / GPUS_PER_NODE.get(r["hardware"], 8))
        else:
            # single-node aggregated serving: process_result.py divides by TP (num_gpus = tp*pp*pcp)
            gpus = r["decode_tp"]
            tp, ep, dpa = r["decode_tp"], r["decode_ep"], r["decode_dp_attention"]
            nodes = 1
        if r.get("image"):
            notes.append(f"image={r['image']}")
        if r.get("run_url"):
            notes.append(f"run={r['run_url']}")
        if e["also"]:
            notes.append("also in " + "; ".join(x.split('#')[0] for x in e["also"]))
        src = f"{FORK}@{e['commit']}:{e['path']}#{e['idx']}"
        sid = f"ixapp-{e['commit'][:7]}-{'hist' if 'history' in e['fname'] else 'latest'}-{e['idx']}"
        common = dict(source=src, date=r["date"], gpu=hw, gpus=gpus, nodes=nodes, model=model,
                      precision=prec, isl=r["isl"], osl=r["osl"], concurrency=r["conc"], tp=tp, ep=ep,
                      dp_attention=str(dpa).lower() if dpa != "" else "", framework=fw,
                      tok_s_per_user=fmt(m.get("median_intvty")), ttft_s=fmt(m.get("median_ttft"), 5))
        out.append(dict(common, source_id=sid, metric="total_tok_s_per_gpu", value=fmt(m["tput_per_gpu"]),
                        notes="; ".join(notes)))
        if out_val is not None:
            nn = notes + ([out_note] if out_note else [])
            out.append(dict(common, source_id=sid, metric="output_tok_s_per_gpu", value=fmt(out_val),
                            notes="; ".join(nn)))

    with open(os.path.join(HERE, "points.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        w.writeheader()
        for row in out:
            w.writerow(row)
    print(f"unique measurements: {len(order)}; csv rows: {len(out)}; skipped: {len(skipped)}")


if __name__ == "__main__":
    main()
