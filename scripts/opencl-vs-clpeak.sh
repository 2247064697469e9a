#!/usr/bin/env bash
# Same-session comparison of gpuvalue's OpenCL probes with clpeak, the vendor-neutral peer,
# on the same OpenCL device (PoCL on a GPU-less machine; any OpenCL GPU elsewhere): clpeak
# before, gpuvalue's bench, clpeak after, then one summary with the host's CPU model.
# The targets (issue 22): our stream triad, peak, transfer and latency at least clpeak's
# best figure of the two runs; matmul FP32 at least 50% of our own peak figure.
#   bash scripts/opencl-vs-clpeak.sh [OUTDIR] [DEVICE-NAME-PART]   (needs clpeak, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-reports/pocl}
dev=${2:-}
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
command -v clpeak >/dev/null || { echo "clpeak not found (Debian: apt-get install clpeak)" >&2; exit 2; }
bin=${GPUVALUE_BIN:-./target/release/gpuvalue}
if [ -z "${GPUVALUE_BIN:-}" ]; then cargo build --release --quiet; fi
adapter=()
if [ -n "$dev" ]; then adapter=(--adapter "$dev"); fi
tests=(--global-bandwidth --compute-sp --transfer-bandwidth --kernel-latency)
clpeak "${tests[@]}" > "$out/clpeak-before.txt" 2>&1
"$bin" bench --backend opencl "${adapter[@]}" --probes peak,matmul,stream,transfer,latency \
  --sizes 512,1024,2048 --array-mib 128 --quiet --out "$out/bench.json" > "$out/bench.txt" || true
clpeak "${tests[@]}" > "$out/clpeak-after.txt" 2>&1
python3 - "$out" <<'PY'
import json, re, sys
d = sys.argv[1]

def clpeak(path):
    """{section: {entry: value}} from clpeak's text output."""
    sec, out = None, {}
    for line in open(path):
        s = line.strip()
        m = re.match(r"^(.*\((GBPS|GFLOPS|us)\))\s*$", s)
        if m:
            sec = m.group(1)
            out.setdefault(sec, {})
            continue
        m = re.match(r"^(.+?)\s*:\s*([0-9.]+)\s*(us)?\s*$", s)
        if m and "latency" in m.group(1).lower():
            # "Kernel launch latency : 41.47 us" has no section header of its own.
            out.setdefault("Kernel launch latency (us)", {})["latency"] = float(m.group(2))
        elif m and sec:
            out[sec][m.group(1).strip()] = float(m.group(2))
    return out

runs = [clpeak(f"{d}/clpeak-{w}.txt") for w in ("before", "after")]

def best(section_part, entry_part=""):
    vals = [v for r in runs for s, e in r.items() if section_part in s.lower()
            for k, v in e.items() if entry_part in k.lower()]
    return (max(vals), min(vals)) if vals else (None, None)

b = json.load(open(f"{d}/bench.json"))
ok = [p for p in b["probes"] if p.get("status") == "ok" and p.get("value")]
def ours(figure, pick=max):
    v = [p["value"]["median"] for p in ok if p.get("figure") == figure]
    return pick(v) if v else None

lines = []
def vs(name, mine, theirs, unit, higher=True):
    if mine is None or theirs is None:
        lines.append(f"{name}: gpuvalue {mine}, clpeak {theirs} (missing)")
        return
    met = mine >= theirs if higher else mine <= theirs
    ratio = mine / theirs
    lines.append(f"{name}: gpuvalue {mine:.2f} {unit}, clpeak best {theirs:.2f} {unit} -> {ratio:.2f}x {'MET' if met else 'NOT MET'}")

bw_best, bw_worst = best("global memory bandwidth")
vs("stream triad vs clpeak global bandwidth", ours("stream_triad"), bw_best, "GB/s")
lines.append(f"  (clpeak global bandwidth over its vector widths and both runs: {bw_worst} .. {bw_best} GB/s; gpuvalue copy {ours('stream_copy')}, dot {ours('stream_dot')})")
sp_best, sp_worst = best("single-precision compute")
vs("peak vs clpeak single-precision compute", ours("peak_f32"), sp_best, "GFLOPS")
lines.append(f"  (clpeak SP compute over its vector widths and both runs: {sp_worst} .. {sp_best} GFLOPS)")
w, _ = best("transfer bandwidth", "enqueuewritebuffer")
r, _ = best("transfer bandwidth", "enqueuereadbuffer")
vs("transfer host->device vs clpeak enqueueWriteBuffer", ours("transfer_to_device"), w, "GB/s")
vs("transfer device->host vs clpeak enqueueReadBuffer", ours("transfer_to_host"), r, "GB/s")
_, lat = best("latency")
vs("dispatch in a batch vs clpeak kernel launch latency", ours("latency_dispatch", min), lat, "us", higher=False)
vs("dispatch round trip vs clpeak kernel launch latency", ours("latency_round_trip", min), lat, "us", higher=False)
peak = ours("peak_f32")
for p in ok:
    if p.get("figure") == "matmul_f32" and peak:
        g = p["value"]["median"]
        lines.append(f"{p['name']}: {g:.1f} GFLOPS = {100 * g / peak:.0f}% of our peak {peak:.1f} ({'MET' if g >= 0.5 * peak else 'NOT MET'}: target 50%)")
lines.append(f"host: {b['host'].get('cpu_model', '?')}, {b['host'].get('cpu_threads', '?')} logical CPUs; device: {b['adapter']['name']} ({b['adapter']['driver']})")
open(f"{d}/summary.txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
