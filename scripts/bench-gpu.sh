#!/usr/bin/env bash
# One shot on any Linux GPU machine: build the release binary, list the adapters, run the
# full bench on every adapter of every backend that reaches a hardware GPU, and leave the
# results files in ./results/.
#   bash scripts/bench-gpu.sh [extra bench options...]
# Backends tried, in order: GPUVALUE_BACKENDS (default "vulkan opencl"). A backend is benched
# (`bench --backend B --adapter all`) when `devices --backend B` lists a hardware device:
# an NVIDIA GPU is measured twice (Vulkan and OpenCL), an AMD Instinct GPU through OpenCL
# only (no Vulkan driver reaches it), a backend with no device (no ICD loader, no driver) is
# skipped, saying so. Results go to results/<backend>/ (one file per adapter), so
# `gpuvalue rank --results results/vulkan` ranks one backend's figures. With no hardware
# device on any of them, every adapter of every backend is benched as before (software
# adapters such as lavapipe included) into results/. The exit status is the first non-zero
# bench status (bench exits non-zero when a probe fails); every backend runs regardless.
# Extra options go to every bench; the script sets --backend, --adapter and --out itself.
set -euo pipefail
cd "$(dirname "$0")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust from https://rustup.rs first" >&2
  exit 1
fi
cargo build --release
bin=./target/release/gpuvalue
"$bin" devices | tee results-devices.txt
"$bin" devices --json > results-devices.json

# True when `devices --backend B --format json` lists a device with "software": false (an
# empty list, or an error because the backend has no device or no loader, is false).
has_hardware() {
  local json
  json=$("$bin" devices --backend "$1" --format json 2>/dev/null) || return 1
  grep '"software": false' <<<"$json" >/dev/null
}

host=$(hostname)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rc=0
benched=0
for b in ${GPUVALUE_BACKENDS:-vulkan opencl}; do
  if ! has_hardware "$b"; then
    echo "backend $b: no hardware device, skipped"
    continue
  fi
  mkdir -p "results/$b"
  "$bin" devices --backend "$b" --format json > "results-devices.$b.json" || true
  echo "backend $b: benching every adapter"
  s=0
  "$bin" bench --backend "$b" --adapter all --quiet --out "results/$b/$host-$b-$stamp.json" "$@" || s=$?
  echo "backend $b: bench exit status $s"
  [ "$rc" -ne 0 ] || rc=$s
  benched=$((benched + 1))
done
if [ "$benched" -eq 0 ]; then
  echo "no backend lists a hardware device: benching every adapter (software ones included)"
  "$bin" bench --adapter all --quiet "$@" || rc=$?
fi
ls -lR results/ 2>/dev/null || true
exit "$rc"
