#!/usr/bin/env bash
# Same-session comparison on a GPU-less machine: lavapipe runs on the host's cores, so its
# figures are judged against those cores' own ceilings, measured right before and after:
# OpenBLAS sgemm (numpy) and a multi-threaded memcpy of the same array size; and against
# lavapipe's own arithmetic peak (the peak probe: multiply-add chains, nothing loaded), which
# does not depend on how wide the BLAS's vectors are. Then df64 against FP32 at 512, both in
# one run (the target "df64 >= 1/10 of FP32" is a ratio within one run).
#   bash scripts/lavapipe-vs-cpu.sh [OUTDIR]      (needs python3 with numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-reports/lavapipe}
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
threads=$(nproc)
cargo build --release --quiet
bin=./target/release/gpuvalue
OPENBLAS_NUM_THREADS=$threads python3 scripts/cpu-ceiling.py --sizes 1024,2048 --copy-mib 128 --threads "$threads" > "$out/ceiling-before.json"
$bin bench --adapter llvmpipe --probes peak,matmul,stream --sizes 1024,2048 --array-mib 128 --quiet --out "$out/bench.json" > "$out/bench.txt"
OPENBLAS_NUM_THREADS=$threads python3 scripts/cpu-ceiling.py --sizes 1024,2048 --copy-mib 128 --threads "$threads" > "$out/ceiling-after.json"
$bin bench --adapter llvmpipe --probes matmul,double --sizes 512 --quiet --out "$out/df64-512.json" > "$out/df64-512.txt"
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
b = json.load(open(f"{d}/bench.json"))
cs = [json.load(open(f"{d}/ceiling-{w}.json")) for w in ("before", "after")]
med = {p["name"]: p["value"]["median"] for p in b["probes"] if p.get("value")}
lines = []
for n in (1024, 2048):
    g = med.get(f"matmul_f32 {n}x{n}x{n}")
    blas = [next(s["gflops_median"] for s in c["sgemm"] if s["n"] == n) for c in cs]
    if g:
        lines.append(f"matmul {n}: lavapipe {g:.1f} GFLOPS, OpenBLAS {blas[0]:.1f} / {blas[1]:.1f} (before/after) -> {100*g/max(blas):.0f}% .. {100*g/min(blas):.0f}%")
peak = b and next((p["value"] for p in b["probes"] if p.get("figure") == "peak_f32" and p.get("value")), None)
if peak:
    lines.append(f"lavapipe FP32 multiply-add peak: {peak['median']:.1f} GFLOPS (min {peak['min']:.1f}, max {peak['max']:.1f})")
    for n in (1024, 2048):
        g = med.get(f"matmul_f32 {n}x{n}x{n}")
        if g:
            lines.append(f"matmul {n}: {100*g/peak['max']:.0f}% .. {100*g/peak['median']:.0f}% of lavapipe's own peak (max / median)")
mc = [c["memcpy"]["gbps_median"] for c in cs]
for k in ("copy", "triad"):
    g = med.get(f"stream {k}")
    if g:
        lines.append(f"stream {k}: lavapipe {g:.2f} GB/s, memcpy {mc[0]:.1f} / {mc[1]:.1f} GB/s -> {100*g/max(mc):.0f}% .. {100*g/min(mc):.0f}%")
dd = json.load(open(f"{d}/df64-512.json"))
dv = {p.get("figure"): p for p in dd["probes"] if p.get("value") and p.get("status") == "ok"}
if "matmul_df64" in dv and "matmul_f32" in dv:
    f, x = dv["matmul_f32"]["value"]["median"], dv["matmul_df64"]
    lines.append(
        f"df64 512: {x['value']['median']:.2f} GFLOPS, FP32 {f:.1f} in the same run -> 1/{f / x['value']['median']:.1f}"
        f" (error {x['validation']['error']:.1e}; {x['kernel']['label']})"
    )
lines.append(f"host: {b['host'].get('cpu_model', '?')}; {b['adapter']['name']}")
open(f"{d}/summary.txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
