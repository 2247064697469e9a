#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (no Rust, no network there): the release binary
# built on the workstation travels with the working tree, so nothing is built on the device.
#   here:   cargo build --release
#   there:  bash scripts/device-bench.sh OUTDIR     (carry: target/release/gpuvalue, .gl)
# If the machine has no Vulkan loader, `.gl/` (ignored by git, carried too) holds the
# loader's .deb files (libvulkan1 and friends, downloaded on the workstation); they are
# unpacked first. The same goes for the OpenCL ICD loader (ocl-icd-libopencl1*.deb in .gl/)
# when libOpenCL.so.1 is missing. Writes into OUTDIR: machine.txt, devices.txt/json (every
# backend), then for each backend B in GPUVALUE_BACKENDS (default "vulkan opencl") whose
# `devices --backend B` lists a hardware device: devices.B.txt/json and OUTDIR/B/ with one
# results file per adapter (`bench --backend B --adapter all`, the full suite; only results
# files, so `gpuvalue rank --results OUTDIR/B` takes the folder) and the bench table
# (bench.txt). A backend without a hardware device (no loader, no driver: an AMD
# Instinct GPU has no Vulkan driver) is skipped, saying so. With no hardware device on any
# backend, every adapter is benched as before into OUTDIR (bench.json, bench.txt).
# GPUVALUE_BUDGET (seconds per adapter and backend) keeps the run inside a lent machine's
# per-command limit; its default, 300 s split over the backends that have a hardware
# device, keeps one GPU's total at 300 s however many backends reach it.
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
# The OpenCL ICD loader (the opencl backend loads libOpenCL.so.1 at run time).
if ! ldconfig -p 2>/dev/null | grep libOpenCL.so.1 >/dev/null; then
  if compgen -G ".gl/ocl-icd-libopencl1*.deb" >/dev/null; then
    for f in .gl/ocl-icd-libopencl1*.deb; do dpkg -x "$f" /; done
    ldconfig
  elif [ ! -e /opt/rocm/lib/libOpenCL.so.1 ]; then
    echo "warning: no OpenCL ICD loader (libOpenCL.so.1) found: the opencl backend will list nothing" >&2
  fi
fi
# ROCm keeps its ICD loader in /opt/rocm/lib.
if [ -e /opt/rocm/lib/libOpenCL.so.1 ]; then
  export LD_LIBRARY_PATH="/opt/rocm/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# NVIDIA's ICD may live outside the loader's default search path on container hosts
# (VK_ICD_FILENAMES for loaders older than 1.3.207).
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then
  export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
fi
# NVIDIA's OpenCL driver (libnvidia-opencl.so.1) may be mounted without an ICD file naming
# it: give the loader one, beside the host's own (OCL_ICD_VENDORS: a directory of .icd files).
if [ -z "${OCL_ICD_VENDORS:-}" ] && ldconfig -p 2>/dev/null | grep libnvidia-opencl.so.1 >/dev/null \
  && ! grep -ls libnvidia-opencl /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
  vendors=$(mktemp -d)
  cp /etc/OpenCL/vendors/*.icd "$vendors/" 2>/dev/null || true
  echo libnvidia-opencl.so.1 > "$vendors/nvidia.icd"
  export OCL_ICD_VENDORS=$vendors
fi
{
  uname -a
  echo "cpus: $(nproc)"
  nvidia-smi -L 2>/dev/null || true
  ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d 2>/dev/null || true
  ls /etc/OpenCL/vendors ${OCL_ICD_VENDORS:+"$OCL_ICD_VENDORS"} 2>/dev/null || true
  ls -l /dev/kfd 2>/dev/null || true
} > "$out/machine.txt"
"$bin" devices | tee "$out/devices.txt"
"$bin" devices --format json > "$out/devices.json"

# True when `devices --backend B --format json` lists a device with "software": false (an
# empty list, or an error because the backend has no device or no loader, is false).
has_hardware() {
  local json
  json=$("$bin" devices --backend "$1" --format json 2>/dev/null) || return 1
  grep '"software": false' <<<"$json" >/dev/null
}
backends=()
for b in ${GPUVALUE_BACKENDS:-vulkan opencl}; do
  if has_hardware "$b"; then
    backends+=("$b")
  else
    echo "backend $b: no hardware device, skipped"
  fi
done
budget=${GPUVALUE_BUDGET:-$((300 / (${#backends[@]} > 0 ? ${#backends[@]} : 1)))}

# The full suite on every adapter; a probe that hangs is cut by the bench's own watchdog.
# bench exits non-zero when a probe fails: say so, keep what was written, run the other
# backends all the same; the script's status is the first non-zero one.
rc=0
for b in ${backends[@]+"${backends[@]}"}; do
  mkdir -p "$out/$b"
  "$bin" devices --backend "$b" | tee "$out/devices.$b.txt"
  "$bin" devices --backend "$b" --format json > "$out/devices.$b.json" || true
  s=0
  "$bin" bench --backend "$b" --adapter all --quiet --time-budget "$budget" \
    --out "$out/$b/bench.json" > "$out/$b/bench.txt" || s=$?
  cat "$out/$b/bench.txt"
  echo "backend $b: bench exit status $s"
  [ "$rc" -ne 0 ] || rc=$s
done
if [ "${#backends[@]}" -eq 0 ]; then
  echo "no backend lists a hardware device: benching every adapter (software ones included)"
  "$bin" bench --adapter all --quiet --time-budget "$budget" \
    --out "$out/bench.json" > "$out/bench.txt" || rc=$?
  cat "$out/bench.txt"
fi
ls -lR "$out"
echo "bench exit status: $rc"
exit "$rc"
