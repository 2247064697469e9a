#!/usr/bin/env bash
# One shot on any Linux GPU machine: build the release binary, list the adapters, run the
# full bench on every adapter, and leave the results files in ./results/.
#   bash scripts/bench-gpu.sh [extra bench options...]
set -euo pipefail
cd "$(dirname "$0")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust from https://rustup.rs first" >&2
  exit 1
fi
cargo build --release
./target/release/gpuvalue devices | tee results-devices.txt
./target/release/gpuvalue devices --json > results-devices.json
./target/release/gpuvalue bench --adapter all --quiet "$@"
ls -l results/
