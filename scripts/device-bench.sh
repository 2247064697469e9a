#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (no Rust, no network there): the release binary
# built on the workstation travels with the working tree, so nothing is built on the device.
#   here:   cargo build --release
#   there:  bash scripts/device-bench.sh OUTDIR     (carry: target/release/gpuvalue, .gl)
# If the machine has no Vulkan loader, `.gl/` (ignored by git, carried too) holds the
# loader's .deb files (libvulkan1 and friends, downloaded on the workstation); they are
# unpacked first. Writes into OUTDIR: machine.txt, devices.txt/json, one results file per
# adapter (the full suite) and the bench table. GPUVALUE_BUDGET (seconds per adapter,
# default 300) keeps the run inside a lent machine's per-command limit.
set -euo pipefail
out=${1:?usage: device-bench.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
bin=${GPUVALUE_BIN:-target/release/gpuvalue}
[ -x "$bin" ] || { echo "no binary at $bin: build it with cargo build --release and carry it" >&2; exit 1; }
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
# grep reads all of ldconfig's output (no -q), so pipefail cannot see a SIGPIPE here.
if ! ldconfig -p 2>/dev/null | grep libvulkan.so.1 >/dev/null; then
  if compgen -G ".gl/*.deb" >/dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  else
    echo "warning: no Vulkan loader found and no .gl/*.deb to unpack" >&2
  fi
fi
# NVIDIA's ICD may live outside the loader's default search path on container hosts
# (VK_ICD_FILENAMES for loaders older than 1.3.207).
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then
  export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
fi
{
  uname -a
  echo "cpus: $(nproc)"
  nvidia-smi -L 2>/dev/null || true
  ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d 2>/dev/null || true
} > "$out/machine.txt"
"$bin" devices | tee "$out/devices.txt"
"$bin" devices --format json > "$out/devices.json"
# The full suite on every adapter; a probe that hangs is cut by the bench's own watchdog.
# bench exits non-zero when a probe fails: say so, keep what was written.
rc=0
"$bin" bench --adapter all --quiet --time-budget "${GPUVALUE_BUDGET:-300}" \
  --out "$out/bench.json" > "$out/bench.txt" || rc=$?
cat "$out/bench.txt"
ls -l "$out"
echo "bench exit status: $rc"
exit "$rc"
