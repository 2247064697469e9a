#!/usr/bin/env bash
# Builds the browser version of gpuvalue into OUTDIR: the library as WebAssembly
# (wasm32-unknown-unknown, [profile.web]: size-optimised release), its JavaScript glue from
# the wasm-bindgen CLI of exactly the version Cargo.lock resolves (installed with
# `cargo install` into target/tools; not wasm-pack), `wasm-opt -Oz` when binaryen is installed,
# and the page from web/. For example:
#   scripts/build-web.sh target/web-page
#   python3 -m http.server --bind 127.0.0.1 8000 -d target/web-page
#
# Exit status: 0 built; 3 a prerequisite could not be had (the wasm32 target through rustup,
# the wasm-bindgen CLI through crates.io), so callers may skip where offline; anything else is
# a real failure (a compile error, a wasm over the size limit).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ]; then
  echo "usage: scripts/build-web.sh OUTDIR" >&2
  exit 2
fi
OUT=$1
CARGO=${CARGO:-cargo}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
TOOLS="$TARGET_DIR/tools"
WASM_BINDGEN="$TOOLS/bin/wasm-bindgen"
# The wasm after wasm-bindgen (and wasm-opt) may not exceed this.
LIMIT_BYTES=3000000

# target/web is cargo's own directory for the web profile (host build scripts, deps): the page
# would be served beside them.
if [ "$(realpath -m "$OUT")" = "$(realpath -m "$TARGET_DIR/web")" ]; then
  echo "build-web: $OUT is cargo's directory for the web profile; use another, e.g. $TARGET_DIR/web-page" >&2
  exit 2
fi

unavailable() {
  echo "build-web: $*" >&2
  exit 3
}

step() { echo "build-web: $*"; }

# 1. The wasm32 target's standard library.
if command -v rustup >/dev/null; then
  rustup target add wasm32-unknown-unknown >&2 ||
    unavailable "rustup could not add the wasm32-unknown-unknown target"
elif [ ! -d "$(rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ]; then
  unavailable "no rustup, and this Rust has no wasm32-unknown-unknown standard library"
fi

# 2. The wasm-bindgen version the lockfile resolves: the CLI must match it exactly.
V=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
if [ -z "$V" ]; then
  echo "build-web: Cargo.lock has no wasm-bindgen package" >&2
  exit 1
fi

# 3. The wasm-bindgen CLI of that version, unless target/tools already has it.
have=$("$WASM_BINDGEN" --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$V" ]; then
  step "installing wasm-bindgen-cli $V into $TOOLS (was: ${have:-none})"
  # --locked first (the CLI's own lockfile). A registry mirror can lag behind it (a locked
  # dependency version not served yet): then resolve against what it serves, said.
  if ! "$CARGO" install wasm-bindgen-cli --version "=$V" --locked --root "$TOOLS" >&2; then
    step "cargo install --locked failed; retrying without --locked (dependencies resolved now)"
    "$CARGO" install wasm-bindgen-cli --version "=$V" --root "$TOOLS" >&2 ||
      unavailable "cargo install wasm-bindgen-cli --version =$V failed"
  fi
fi

# 4. The library as a cdylib for the browser ([lib] stays rlib-only for native builds).
step "compiling the library for wasm32-unknown-unknown (profile web)"
"$CARGO" rustc --lib --crate-type cdylib --target wasm32-unknown-unknown --profile web >&2
WASM="$TARGET_DIR/wasm32-unknown-unknown/web/gpuvalue.wasm"
if [ ! -f "$WASM" ]; then
  echo "build-web: cargo built no $WASM" >&2
  exit 1
fi

# 5. The JavaScript glue (ES module for <script type="module">, no bundler).
mkdir -p "$OUT"
rm -f "$OUT/gpuvalue.js" "$OUT/gpuvalue_bg.wasm"
"$WASM_BINDGEN" --target web --no-typescript --out-name gpuvalue --out-dir "$OUT" "$WASM"

# 6. Optional: binaryen's wasm-opt (Debian package binaryen). Features as rustc emits them.
if command -v wasm-opt >/dev/null; then
  step "wasm-opt -Oz ($(wasm-opt --version))"
  if wasm-opt -Oz --enable-bulk-memory --enable-mutable-globals --enable-sign-ext \
    --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue \
    "$OUT/gpuvalue_bg.wasm" -o "$OUT/gpuvalue_bg.opt.wasm"; then
    mv "$OUT/gpuvalue_bg.opt.wasm" "$OUT/gpuvalue_bg.wasm"
  else
    rm -f "$OUT/gpuvalue_bg.opt.wasm"
    step "wasm-opt failed; keeping wasm-bindgen's output as it is"
  fi
else
  step "wasm-opt not installed (Debian package binaryen): skipped, the wasm is not further shrunk"
fi

# 7. The page.
cp web/* "$OUT/"

size=$(stat -c %s "$OUT/gpuvalue_bg.wasm")
step "$OUT/gpuvalue_bg.wasm: $size bytes ($((size / 1024)) KiB); limit $LIMIT_BYTES bytes"
if [ "$size" -gt "$LIMIT_BYTES" ]; then
  echo "build-web: the wasm is over the size limit ($size > $LIMIT_BYTES bytes)" >&2
  exit 1
fi
step "built $OUT (serve it: python3 -m http.server --bind 127.0.0.1 8000 -d $OUT)"
