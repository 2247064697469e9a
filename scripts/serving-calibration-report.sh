#!/usr/bin/env bash
# Writes reports/serving-calibration.md: the serving model against every published serving
# run in src/data/serving_points.json, the fitted part and the held-out part apart, per GPU,
# per source and per model (gpuvalue calibration --serving). Usage:
#   cargo build --release && bash scripts/serving-calibration-report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=${GPUVALUE:-target/release/gpuvalue}
OUT=reports/serving-calibration.md
JSON=$(mktemp)
trap 'rm -f "$JSON" "$JSON.rank"' EXIT
"$B" calibration --serving --points --format json >"$JSON"
{
  echo "# The serving model against published serving runs"
  echo
  echo "Run on $(date -u +%Y-%m-%d) with gpuvalue $(git rev-parse --short HEAD) on $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) CPUs; the figures do not depend on the machine)."
  echo 'Command: `gpuvalue calibration --serving --format markdown` (the points: `--points`), this file by'
  echo '`bash scripts/serving-calibration-report.sh`. Ratio = the model'"'"'s estimate / the published figure,'
  echo 'in the published metric (InferenceX: input+output tokens/s per GPU; TensorRT-LLM, MLPerf: output'
  echo 'tokens/s per GPU). "held out": a quarter of the points by a hash of the id, never fitted on.'
  echo 'Below the per-GPU table, the leave-one-group-out cross-validation: each source (a repository at'
  echo 'one commit), each model and each GPU type held out whole, the fits refitted without it, then'
  echo 'estimated. That, not the random quarter, is what a buyer meets on a model, GPU or harness the fit'
  echo 'never saw; the README quotes its leave-one-source-out figure.'
  echo
  echo "## Per GPU"
  echo
  "$B" calibration --serving --format markdown
  echo
  python3 - "$JSON" <<'PY'
import json, sys, collections
pts = json.load(open(sys.argv[1]))["points"]
def source(p):
    i = p["id"]
    if i.startswith("ix-"): return "InferenceX (SemiAnalysis)"
    if i.startswith("trtllm"): return "TensorRT-LLM perf-overview"
    if i.startswith("mlperf-v5.1"): return "MLPerf Inference v5.1, Llama 2 70B"
    return "earlier points (calibration.json until 2026-12-06)"
def table(title, key):
    g = collections.defaultdict(list)
    for p in pts:
        g[(key(p), p["split"])].append(p)
    print(f"## Per {title}\n")
    print(f"| {title} | part | points | within 1.5x | median ratio | p10-p90 | not run |")
    print("|---|---|---|---|---|---|---|")
    for k in sorted(g):
        v = g[k]
        r = sorted(x["ratio"] for x in v if x["ratio"])
        w = sum(1 for x in v if x["ratio"] and 1 / 1.5 <= x["ratio"] <= 1.5)
        q = lambda f: r[round((len(r) - 1) * f)] if r else float("nan")
        part = "held out" if k[1] == "held-out" else "fit"
        print(f"| {k[0]} | {part} | {len(v)} | {100 * w / len(v):.0f}% | {q(.5):.2f} | {q(.1):.2f}-{q(.9):.2f} | {len(v) - len(r)} |")
    print()
table("source", source)
table("model", lambda p: p["model"])
print("## The earlier points (dense models)\n")
print("| point | GPU | ratio |\n|---|---|---|")
for p in pts:
    if source(p).startswith("earlier"):
        print(f"| {p['id']} | {p['gpu']} | {p['ratio']:.2f} |")
print()
PY
  echo "## Time to first token"
  echo
  echo "InferenceX's published medians of 8x H200, SGLang, DeepSeek-R1 FP8, TP8, 1k/1k (its runs at each"
  echo "concurrency, reports/research/serving-2026/inferencex/points.csv) against the model's estimate"
  echo '(`gpuvalue rank --job llm-serve --model deepseek-r1 --prompt-tokens 1024 --output-tokens 1024'
  echo '--concurrency C --gpu h200-sxm --parallel tp=8 --format json`):'
  echo
  echo "| concurrency | runs | published TTFT | model TTFT | published total tok/s/GPU | model | ratio |"
  echo "|---|---|---|---|---|---|---|"
  for c in 4 16 64; do
    "$B" rank --job llm-serve --model deepseek-r1 --prompt-tokens 1024 --output-tokens 1024 \
      --concurrency "$c" --gpu h200-sxm --parallel tp=8 --format json --top 1 >"$JSON.rank"
    python3 - "$c" "$JSON.rank" <<'PY'
import csv, json, statistics, sys
c = sys.argv[1]
row = json.load(open(sys.argv[2]))["rows"][0]
runs = [r for r in csv.DictReader(open("reports/research/serving-2026/inferencex/points.csv"))
        if r["gpu"] == "h200-sxm" and r["isl"] == r["osl"] == "1024" and r["precision"] == "fp8"
        and r["framework"] == "sglang" and r["tp"] == "8" and r["ep"] in ("1", "")
        and r["dp_attention"] == "false" and r["nodes"] == "1" and "mtp" not in r["notes"]
        and r["concurrency"] == c and r["metric"] == "total_tok_s_per_gpu"]
ttft = statistics.median(float(r["ttft_s"]) for r in runs)
tput = statistics.median(float(r["value"]) for r in runs)
m = row["total_tok_s_per_gpu"]
print(f"| {c} | {len(runs)} | {ttft:.3f} s | {row['ttft_s']:.3f} s | {tput:.1f} | {m:.1f} | {m / tput:.2f} |")
PY
  done
  echo
  cat <<'TXT'
## Reading it

- The fit: per vendor, five numbers for throughput (the share of the STREAM-triad bandwidth a
  decode step's reads reach, the share of the matrix engines' rate the matmuls reach, a fixed
  cost a step (at most 1.5 ms, as engines with CUDA graphs run), one a layer and one a
  collective), least squares on the log ratio over the points marked fit; then two for the
  time to first token (a request's fixed latency and a lone prompt's share of the matrix
  rate) on the published TTFTs (`gpuvalue calibration --fit-serving`, 3 s here, most of it
  the cross-validated tie band). The held-out quarter is chosen by a hash of each point's
  id, so the split does not depend on the fit or the order.
- Speculative decoding: InferenceX's single-node runs with MTP are points too (`mtp` in
  `src/data/serving_points.json`), estimated with the published acceptance (DeepSeek-V3's
  report: 85% for the second token, one draft a step), not a fitted one.
- Judge it by the cross-validation table, not the fit/held-out split: the random quarter
  comes from the same sweeps as the fitted points. Each refit there starts from a fixed
  prior, never from the stored fits. With each GPU type held out whole and refitted without
  (2026-12-07): H200 and L40S 96%, B200 and GB200 90%, MI300X 87%, MI325X 75% within 1.5x;
  with each model held out: Llama 3 8B 100%, Mixtral 93%, Llama 3.1 405B 82%, DeepSeek-R1
  80%. The fixed costs a step, a layer and a collective are what let one model fit both 4
  and 256 requests in flight.
- Where it misses, held out the same way: gpt-oss-120b 59% (median 1.45x high at maximum
  throughput; counting its weight-only MXFP4 matmuls on the FP8 engines, as TensorRT-LLM and
  vLLM run them, brought it down from 1.8x, and why the rest remains is not known), Llama 4
  Maverick 59% and Llama 3 70B 67% (about 0.75x low), MI355X 55% (one AMD fit for CDNA3 and
  CDNA4), B300 59%, the RTX PRO 6000 60%. Times to first token: each engine with 20 or more
  published TTFTs on a vendor has its own TTFT parameters (NVIDIA: SGLang, TensorRT-LLM;
  AMD: SGLang, ATOM); with the GPU type held out H200's are 40% within 1.5x (SGLang on H200
  stays flat with concurrency where SGLang on Blackwell grows) and B300's 37%. The
  disaggregated runs are never fitted: their own row says how the disaggregated model does.
- Not run: points whose published layout leaves no room for one request's KV cache in 90%
  of the memory (servers run closer to the memory's end than the model assumes).
TXT
} >"$OUT"
echo "wrote $OUT"
