#!/usr/bin/env bash
# Injects each fault into a quick bench and prints, per fault, how the run ended: exit
# status, the failed probe's reason, the incidents recorded, the next probe's status, time.
# Usage: bash scripts/fault-drill.sh [gpuvalue binary]   (Markdown table on stdout)
set -euo pipefail
bin=${1:-target/release/gpuvalue}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GPUVALUE_RUN_DIR="$dir/runs" XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
echo "| fault | probes | exit | failed probe: reason | incidents | next probe | seconds |"
echo "|---|---|---|---|---|---|---|"
while read -r fault probes extra; do
  out="$dir/$fault.json"
  start=$(date +%s.%N)
  set +e
  # shellcheck disable=SC2086
  "$bin" bench --quick -q --array-mib 8 --probes "$probes" --inject-fault "$fault" -o "$out" $extra >/dev/null 2>&1
  rc=$?
  set -e
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  python3 - "$out" "$fault" "$probes" "$rc" "$secs" "$extra" <<'PY'
import json, sys
path, fault, probes, rc, secs, extra = sys.argv[1:]
d = json.load(open(path))
target = probes.split(",")[0]
nxt = probes.split(",")[1]
failed = [p for p in d["probes"] if p["status"] == "failed"]
reason = (failed[0]["reason"] if failed else "none")[:110].replace("|", "/")
inc = ", ".join(i["kind"] for i in d.get("incidents", [])) or "-"
after = sorted({p["status"] for p in d["probes"] if p["probe"] == nxt})
print(f"| `{fault}` {extra} | {probes} | {rc} | {reason} | {inc} | {nxt}: {'/'.join(after)} | {float(secs):.1f} |")
PY
done <<'LIST'
oom@transfer transfer,latency
compile@latency latency,transfer
lost@transfer transfer,latency
panic@transfer transfer,latency
hang@latency latency,transfer --wait-timeout 1
stuck@latency latency,transfer --wait-timeout 0.5
hang@stream stream,latency --probe-timeout 2
LIST
