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
trap 'rm -f "$JSON"' EXIT
"$B" calibration --serving --points --format json >"$JSON"
{
  echo "# The serving model against published serving runs"
  echo
  echo "Run on $(date -u +%Y-%m-%d) with gpuvalue $(git rev-parse --short HEAD) on $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) CPUs; the figures do not depend on the machine)."
  echo 'Command: `gpuvalue calibration --serving --format markdown` (the points: `--points`), this file by'
  echo '`bash scripts/serving-calibration-report.sh`. Ratio = the model'"'"'s estimate / the published figure,'
  echo 'in the published metric (InferenceX: input+output tokens/s per GPU; TensorRT-LLM, MLPerf: output'
  echo 'tokens/s per GPU). "held out": a quarter of the points by a hash of the id, never fitted on.'
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
} >"$OUT"
echo "wrote $OUT"
