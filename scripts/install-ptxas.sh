#!/usr/bin/env bash
# NVIDIA's ptxas for tests/it/kernels.rs, from PyPI (nvidia-cuda-nvcc-cu12, a pinned version) into
# a virtual environment under target/ (ignored by git): no CUDA install, no GPU, no root.
# Prints the ptxas path on its last line; use it as GPUVALUE_PTXAS.
#   export GPUVALUE_PTXAS=$(scripts/install-ptxas.sh | tail -n1)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=12.9.86
VENV=target/ptxas-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" >&2
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check "nvidia-cuda-nvcc-cu12==$VERSION" >&2
PTXAS=$(ls "$PWD/$VENV"/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas)
"$PTXAS" --version | tail -n1 >&2
echo "$PTXAS"
