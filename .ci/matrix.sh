#!/usr/bin/env bash
# The portability matrix: the quick suite on every implementation reachable
# without a GPU, each probe `ok` or `unsupported` with a reason, none `failed`; a failure
# names the implementation. Run by .ci/run after the test suite, with the release binary.
#   bash .ci/matrix.sh [OUTDIR]
# Implementations:
#   lavapipe-22.3   the system lavapipe (Mesa 22.3, bookworm), under the Khronos validation
#                   layer with synchronisation validation: any error or warning it logs fails
#   lavapipe-25.0   Mesa 25.0 lavapipe from bookworm-backports, unpacked with dpkg -x into a
#                   folder and chosen with VK_ICD_FILENAMES + LD_LIBRARY_PATH (the system
#                   driver stays as it is), timed with its GPU timestamps
#   swiftshader     SwiftShader's Vulkan ICD from the chromium package, timed with its GPU
#                   timestamps (GPUVALUE_SOFTWARE_TIMESTAMPS=1: the path every real GPU takes)
#   gl-llvmpipe     wgpu's GL backend on Mesa's llvmpipe
#   pocl            the OpenCL executor on PoCL
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${GPUVALUE_BIN:-target/release/gpuvalue}
out=${1:-$(mktemp -d)}
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
failed=()

# Checks one implementation's results file: every probe ok or unsupported (with a reason),
# the adapter the expected one; prints one line and exits non-zero otherwise.
check() {
  python3 - "$@" <<'PY'
import json, sys
name, path, want = sys.argv[1], sys.argv[2], sys.argv[3]
want_ts = len(sys.argv) > 4 and sys.argv[4] == "timestamps"
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{name}: FAILED: no results file ({e})"); sys.exit(1)
a = r["adapter"]
label = f"{a['name']} ({a['backend']}; {a['driver_info']})"
if want.lower() not in (a["name"] + " " + a["driver_info"] + " " + a["backend"]).lower():
    print(f"{name}: FAILED: measured {label}, not the implementation asked for ({want})"); sys.exit(1)
ok = [p for p in r["probes"] if p["status"] == "ok"]
uns = [p for p in r["probes"] if p["status"] == "unsupported"]
bad = [p for p in r["probes"] if p["status"] not in ("ok", "unsupported")]
bad += [p for p in uns if not p.get("reason")]
methods = sorted({p["timing"]["method"] for p in ok if p.get("timing")})
print(f"{name}: {label}: {len(ok)} ok, {len(uns)} unsupported, timed by {', '.join(methods)}")
for p in uns:
    print(f"  unsupported {p['name']}: {p.get('reason')}")
for p in bad:
    print(f"  FAILED {p['name']} ({p['status']}): {p.get('reason')}")
if want_ts:
    ts = [p for p in ok if p.get("timing", {}).get("method") == "gpu_timestamps"]
    fell = [p for p in ok if "disagreed" in (p.get("timing", {}).get("note") or "")]
    print(f"  timestamp path: {len(ts)} figures timed by GPU timestamps, {len(fell)} fell back to the wall clock (said on the figure)")
    if not ts and not fell:
        print("  FAILED: the timestamp path did not run"); sys.exit(1)
sys.exit(1 if bad or not r.get("complete") else 0)
PY
}

# run NAME WANT [timestamps] -- ENV... -- BENCH-ARGS...
run() {
  local name=$1 want=$2 ts=$3
  shift 3
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local s=0
  env "${envs[@]}" "$bin" bench --quick --quiet --out "$out/$name.json" "$@" > "$out/$name.txt" 2>&1 || s=$?
  if ! check "$name" "$out/$name.json" "$want" "$ts"; then
    failed+=("$name")
    tail -5 "$out/$name.txt" | sed "s/^/  $name: /"
  fi
  echo "  ($name: bench exit status $s; output in $out/$name.txt)"
}

# 1. System lavapipe under the validation layer.
layer="$out/layer"
mkdir -p "$layer"
cat > "$layer/vk_layer_settings.txt" <<EOF
khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG
khronos_validation.log_filename = $layer/validation.log
khronos_validation.report_flags = error,warn
khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
EOF
run lavapipe-22.3 "Mesa 22" no VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
  VK_LAYER_SETTINGS_PATH="$layer" -- --backend vulkan --adapter llvmpipe
# The acceptance test's own kernels (exact check, fault switch, VRAM windows) under the same
# layer: a short burn; its verdict may be anything but ERROR (a short window on a shared CPU
# can WARN), the layer must stay silent.
s=0
VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VK_LAYER_SETTINGS_PATH="$layer" \
  "$bin" burn --backend vulkan --adapter llvmpipe --allow-software --duration 6 --size 128 \
  --vram-mib 16 --inject-fault miscompare@1 --quiet > "$out/burn-lavapipe-22.3.txt" 2>&1 || s=$?
if [ "$s" != 4 ]; then
  echo "lavapipe-22.3: FAILED: burn with an injected miscompare exited $s, expected 4 (FAIL)"
  tail -5 "$out/burn-lavapipe-22.3.txt" | sed 's/^/  burn: /'
  failed+=(burn-lavapipe-22.3)
else
  echo "  burn under the validation layer: FAIL as injected (exit 4)"
fi
if [ ! -e "$layer/validation.log" ]; then
  echo "lavapipe-22.3: FAILED: the validation layer did not load (no log at $layer/validation.log; package vulkan-validationlayers)"
  failed+=(validation-layer)
elif [ -s "$layer/validation.log" ]; then
  echo "lavapipe-22.3: FAILED: the validation layer reported:"
  grep -E "Error|WARN|HAZARD" "$layer/validation.log" | cut -c1-400 | sort | uniq -c | head -20
  failed+=(validation-layer)
else
  echo "  validation layer (synchronisation validation on): no error, no warning, no hazard"
fi

# 2. Mesa 25 lavapipe from backports, unpacked beside the system driver.
mesa25="$out/mesa25"
get_mesa25() {
  mkdir -p "$mesa25/debs"
  chmod 777 "$mesa25/debs" # apt's download user writes there
  echo "deb http://deb.debian.org/debian bookworm-backports main" > /etc/apt/sources.list.d/gpuvalue-backports.list
  # Backports are pinned at priority 100 by Debian: nothing installed is upgraded from them.
  apt-get update -qq >/dev/null &&
    (cd "$mesa25/debs" && apt-get download -qq mesa-vulkan-drivers/bookworm-backports \
      libdrm2/bookworm-backports libdrm-amdgpu1/bookworm-backports) &&
    for d in "$mesa25"/debs/*.deb; do dpkg -x "$d" "$mesa25" || return 1; done
}
icd=$(ls "$mesa25"/usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -1 || true)
if [ -z "$icd" ]; then
  get_mesa25 || true
  icd=$(ls "$mesa25"/usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -1 || true)
fi
if [ -z "$icd" ]; then
  echo "lavapipe-25.0: FAILED: could not unpack mesa-vulkan-drivers from bookworm-backports"
  failed+=(lavapipe-25.0)
else
  lib="$mesa25/usr/lib/x86_64-linux-gnu"
  # The ICD file names its driver by the system's path or by name: point it at the unpacked
  # one, so the system lavapipe is never loaded by mistake (the check also reads the version).
  mine="$out/lvp_icd.mesa25.json"
  sed "s|\"library_path\": *\"[^\"]*libvulkan_lvp.so\"|\"library_path\": \"$lib/libvulkan_lvp.so\"|" "$icd" > "$mine"
  run lavapipe-25.0 "Mesa 25" timestamps VK_ICD_FILENAMES="$mine" LD_LIBRARY_PATH="$lib" \
    GPUVALUE_SOFTWARE_TIMESTAMPS=1 -- --backend vulkan
fi

# 3. SwiftShader (chromium's package).
run swiftshader "SwiftShader" timestamps \
  VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json GPUVALUE_SOFTWARE_TIMESTAMPS=1 \
  -- --backend vulkan

# 4. wgpu's GL backend on llvmpipe.
run gl-llvmpipe "gl" no -- --backend gl

# 5. PoCL through the OpenCL executor.
run pocl "opencl" no -- --backend opencl

if [ ${#failed[@]} -gt 0 ]; then
  echo "portability matrix: FAILED on ${failed[*]}"
  exit 1
fi
echo "portability matrix: every implementation passed (files in $out)"
