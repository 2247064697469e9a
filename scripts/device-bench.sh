#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (no Rust, no network there): the release binary
# built on the workstation travels with the working tree, so nothing is built on the device.
#   here:   cargo build --release
#   there:  bash scripts/device-bench.sh OUTDIR     (carry: target/release/gpuvalue, .gl)
# If the machine has no Vulkan loader, `.gl/` holds the loader's .deb files (libvulkan1 and
# friends, downloaded on the workstation) and they are unpacked first. Writes into OUTDIR:
# devices.txt/json, one results file per adapter (full suite), and the bench table.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: device-bench.sh OUTDIR}
mkdir -p "$out"
bin=${GPUVALUE_BIN:-target/release/gpuvalue}
[ -x "$bin" ] || { echo "no binary at $bin: build it with cargo build --release and carry it" >&2; exit 1; }
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
if ! ldconfig -p | grep -q libvulkan.so.1 && compgen -G ".gl/*.deb" >/dev/null; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
# NVIDIA's ICD may live outside the loader's default search path on container hosts.
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then
  export VK_DRIVER_FILES=$icd
fi
{ uname -a; nproc; nvidia-smi -L 2>/dev/null || true; } > "$out/machine.txt"
"$bin" devices | tee "$out/devices.txt"
"$bin" devices --format json > "$out/devices.json"
# Full suite on every adapter; a probe that hangs is cut by the bench's own watchdog.
"$bin" bench --adapter all --quiet --out "$out/bench.json" | tee "$out/bench.txt"
ls -l "$out"
