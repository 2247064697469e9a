#!/usr/bin/env python3
"""Build src/data/serving_points.json, the published LLM-serving runs the serving model is
calibrated on, from the collected tables under reports/research/serving-2026/ (each row
names its file and commit there) and the older points of src/data/calibration.json.

Which rows are kept, and why the rest are not (counted in the output's `left_out`):
- InferenceX (SemiAnalysis): single-node aggregated runs (sglang, tensorrt-llm, atom) of
  DeepSeek-R1; its total (input+output) tokens per second per GPU, with or without
  multi-token prediction (speculative decoding with the MTP layer: marked `mtp`); and the
  disaggregated multi-node runs whose notes give the prefill/decode split (`disaggregated`:
  each pool's workers and a worker's layout), all held out: estimated, never fitted on. Left
  out: disaggregated runs whose split is not published.
- TensorRT-LLM perf-overview: output tokens per second, per GPU (newest tables) or per TP/PP
  group (older ones, divided by the group's GPUs here); requests all at once, so the batch is
  what memory holds up to TensorRT-LLM's max_batch_size (2048).
- MLPerf Inference v5.1, closed division, Llama 2 70B only: the one model whose prompt length
  is known (mean 222 tokens of the dataset); Offline at the memory's batch, Server and
  Interactive at the published tokens per second per user. Other MLPerf models: no prompt
  length in the results (left out).
- AMD ROCm page: left out (its "Throughput (tokens/s)" does not say output or total).
Held out of the fit: every fourth point by a hash of its id (sha1, first byte % 4 == 0), so
which points are held out does not depend on their order or on the fit.

Usage: python3 scripts/serving-points.py > src/data/serving_points.json
"""

import csv
import hashlib
import re
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..")
RESEARCH = os.path.join(ROOT, "reports/research/serving-2026")
MODELS = {
    "deepseek-r1": "deepseek-r1",
    "qwen3-235b-a22b": "qwen3-235b-a22b",
    "gpt-oss-120b": "gpt-oss-120b",
    "gpt-oss-20b": "gpt-oss-20b",
    "llama4-maverick": "llama4-maverick",
    "mixtral-8x7b": "mixtral-8x7b",
    "kimi-k2": "kimi-k2",
    "llama3-8b": "8b",
    "llama3-70b": "70b",
    "llama2-70b": "70b",
    "llama3-405b": "405b",
}
GPUS = {"h100-sxm", "h200-sxm", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x",
        "mi355x", "h200-nvl", "h100-nvl", "l40s", "rtx-pro-6000-server"}


def held_out(pid):
    return hashlib.sha1(pid.encode()).digest()[0] % 4 == 0


SPLIT = re.compile(r"prefill (\d+)x\(tp(\d+),ep(\d+),dpa=(true|false)\)=(\d+) GPUs; "
                   r"decode (\d+)x\(tp(\d+),ep(\d+),dpa=(true|false)\)=(\d+) GPUs")


def pool(workers, tp, ep, dpa, gpus):
    """One pool of a disaggregated deployment: its workers and each worker's layout (the
    worker's GPUs as its tensor-parallel width; experts over all of them where spread)."""
    g = int(gpus) // int(workers)
    s = f"tp={g}"
    if int(ep) > 1:
        s += f",ep={g}"
    if dpa == "true":
        s += ",dp-attention"
    return {"workers": int(workers), "layout": s}


def split(notes):
    m = SPLIT.search(notes)
    if not m:
        return None
    return {"prefill": pool(*m.group(1, 2, 3, 4, 5)), "decode": pool(*m.group(6, 7, 8, 9, 10))}


def parallel(r):
    tp, ep, dpa = r["tp"], r["ep"], r["dp_attention"]
    if not tp:
        return None
    s = f"tp={tp}"
    if ep and ep not in ("1", "0") and ep == tp:
        s += f",ep={ep}"
    if dpa == "true":
        s += ",dp-attention"
    return s


def num(x):
    v = float(x)
    return int(v) if v == int(v) else v


def point(r, pid, metric, published, **extra):
    p = {
        "id": pid,
        "gpu": r["gpu"],
        "gpus": int(r["gpus"]) * int(r["nodes"] or 1),
        "model": MODELS[r["model"]],
        "precision": r["precision"],
        "prompt_tokens": num(r["isl"]),
        "output_tokens": num(r["osl"]),
        "metric": metric,
        "published": round(published, 3),
        "framework": r["framework"],
        "source": r["source"],
        "date": r["date"],
        "split": "held-out" if held_out(pid) else "fit",
    }
    p.update({k: v for k, v in extra.items() if v is not None})
    if p.get("disaggregated"):
        # Disaggregated runs are estimated, never fitted on: held out, all of them.
        p["split"] = "held-out"
    return p


def inferencex(left):
    out = []
    for r in csv.DictReader(open(os.path.join(RESEARCH, "inferencex/points.csv"))):
        if r["metric"] != "total_tok_s_per_gpu":
            continue
        mtp = "spec_decode=mtp" in r["notes"]
        disagg = None
        if r["nodes"] != "1" or "disagg" in r["framework"] or r["framework"].startswith("dynamo"):
            disagg = split(r["notes"])
            if disagg is None:
                left["inferencex: disaggregated, its prefill/decode split not published"] += 1
                continue
        if r["gpu"] not in GPUS:
            left["inferencex: GPU the catalog lacks"] += 1
            continue
        if not r["tp"] and disagg is None:
            left["inferencex: no layout stated"] += 1
            continue
        if disagg:
            # The deployment's GPUs are its two pools' (the row's gpus column already).
            r = dict(r, nodes="1")
        out.append(point(
            r, "ix-" + r["source_id"].removeprefix("ixapp-"), "total_tok_s_per_gpu",
            float(r["value"]), concurrency=num(r["concurrency"]),
            parallel=None if disagg else parallel(r), disaggregated=disagg,
            tok_s_per_user=float(r["tok_s_per_user"]) if r["tok_s_per_user"] else None,
            ttft_s=float(r["ttft_s"]) if r["ttft_s"] else None,
            conditions=r["notes"].split(";")[0][:90],
            mtp=True if mtp else None))
    return out


def other(left):
    out = []
    seen = {}
    for i, r in enumerate(csv.DictReader(open(os.path.join(RESEARCH, "other/points.csv")))):
        sid = r["source_id"]
        if r["gpu"] not in GPUS or r["model"] not in MODELS or r["precision"] not in ("fp16", "fp8", "fp4"):
            left[f"{sid}: GPU, model or precision the catalog or presets lack"] += 1
            continue
        if sid == "amd-rocm":
            left["amd-rocm: throughput column does not say output or total"] += 1
            continue
        if sid.startswith("mlperf"):
            if r["model"] != "llama2-70b":
                left["mlperf: prompt length not published for this model"] += 1
                continue
            if "OPEN" in r["notes"]:
                left["mlperf: open division (model may be modified)"] += 1
                continue
            r = dict(r, isl="222")
        if not r["isl"] or not r["osl"]:
            left[f"{sid}: lengths not stated"] += 1
            continue
        gpus = int(r["gpus"]) * int(r["nodes"] or 1)
        value = float(r["value"])
        if r["metric"] == "output_tok_s_system":
            value /= gpus
        scenario = ""
        if "scenario=" in r["notes"]:
            scenario = r["notes"].split("scenario=")[1].split(";")[0]
        key = (sid, r["gpu"], r["model"], r["precision"], r["isl"], r["osl"], r["tp"], r["ep"], gpus, scenario, round(value, 1))
        if key in seen:
            left[f"{sid}: the same figure twice"] += 1
            continue
        seen[key] = True
        pid = f"{sid}-{r['gpu']}-{r['model']}-{r['precision']}-{r['isl']}-{r['osl']}-{gpus}g-{i}"
        note = r["notes"][:90]
        if r["model"].startswith("gpt-oss") and r["precision"] == "fp8":
            # gpt-oss has one checkpoint, MXFP4 experts and BF16 the rest; the tables'
            # "(FP8)" on Hopper is not its weights (the FP8 model list names no gpt-oss):
            # served as shipped, its matmuls 16-bit there (TRITON MoE backend, W4A16).
            r = dict(r, precision="fp4")
            note = "the MXFP4 checkpoint as shipped (table says FP8: Hopper's W4A16 run); " + note
        interactive = scenario in ("Server", "Interactive") and r["tok_s_per_user"]
        out.append(point(
            r, pid, "output_tok_s_per_gpu", value,
            parallel=parallel(r),
            tok_s_per_user=float(r["tok_s_per_user"]) if interactive else None,
            max_batch=None if interactive else 2048,
            conditions=f"{scenario or 'max throughput'}; {note}"))
    return out


def older(left):
    """The serving points calibration.json held before (TensorRT-LLM 0.17, TGI, MLPerf v4.1/v5.1)."""
    cal = json.load(open(os.path.join(RESEARCH, "older-points.json")))
    out = []
    for p in cal["points"]:
        job = p.get("job") or {}
        if job.get("kind") != "llm-serve":
            continue
        gpus = p.get("gpus", 1)
        q = {
            "id": p["id"], "gpu": p["gpu"], "gpus": gpus, "model": job["model"],
            "precision": job["precision"], "prompt_tokens": job["prompt_tokens"],
            "output_tokens": job["output_tokens"], "metric": "output_tok_s_per_gpu",
            "published": round(p["published"] / gpus, 3), "framework": "",
            "source": p["source"], "date": p["date"],
            "split": "held-out" if held_out(p["id"]) else "fit",
            "conditions": p["conditions"],
        }
        if job.get("concurrency"):
            q["concurrency"] = job["concurrency"]
        else:
            q["max_batch"] = 2048
        out.append(q)
    return out


def main():
    import collections
    left = collections.Counter()
    points = older(left) + inferencex(left) + other(left)
    ids = [p["id"] for p in points]
    assert len(ids) == len(set(ids)), "duplicate ids"
    head = {
        "schema_version": 1,
        "description": "Published LLM-serving runs (per GPU), built by scripts/serving-points.py from reports/research/serving-2026/ and the earlier points of calibration.json; split: fit or held-out (never fitted on).",
        "left_out": dict(sorted(left.items())),
    }
    # One point a line: a reviewable diff, a third of the indented size.
    w = sys.stdout.write
    w(json.dumps(head, indent=1)[:-2] + ',\n "points": [\n')
    w(",\n".join("  " + json.dumps(p, ensure_ascii=False) for p in points))
    w("\n ]\n}\n")


main()
