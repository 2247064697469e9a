#!/usr/bin/env bash
# Where the test time goes. Reads `cargo test` output on stdin (or runs
# `cargo test --release "$@"` when stdin is a terminal) and prints each test binary's wall
# time, longest first, with the total: the library's and the binary's unit tests, the
# integration tests (one binary, `it`) and the doc tests. The README's test command stays
# under 5 minutes on a 2-core machine; the long sustained-load tests are #[ignore]d and
# .ci/run starts them by name.
#
# `scripts/test-times.sh --modules [FILTER...]` splits the integration tests' time by
# module instead: it builds the `it` binary, then runs each module's tests (those whose
# names start with `MODULE::`, by exact name, `--ignored` ones left out) on their own and
# prints each run's wall time. That is each module alone on the machine, as when every
# module was a binary of its own; in `cargo test` they run side by side, so the sum is more
# than the `it` binary's time there. FILTERs keep only the modules they name.
set -euo pipefail
if [ "${1:-}" = --modules ]; then
  shift
  bin=$(cargo test --release --test it --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n1)
  [ -x "$bin" ] || { echo "test-times: could not build the it test binary" >&2; exit 1; }
  names=$(mktemp)
  "$bin" --list 2>/dev/null | sed -n 's/: test$//p' >"$names"
  echo "where the integration tests' time went (wall seconds per module, each run alone, longest first):"
  for module in $(cut -d: -f1 "$names" | sort -u); do
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$module"; then continue; fi
    mapfile -t tests < <(grep "^$module::" "$names")
    start=$(date +%s.%N)
    if ! "$bin" --exact "${tests[@]}" >/dev/null 2>&1; then
      echo "test-times: $module failed (run: cargo test --release --test it $module::)" >&2
    fi
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" -v m="$module" 'BEGIN { printf "%8.1f  %s\n", b - a, m }'
  done | sort -k1,1nr | awk '{ print; total += $1 } END { printf "%8.1f  total\n", total }'
  rm -f "$names"
  exit 0
fi
if [ -t 0 ]; then
  exec > >(cat) 2>&1
  log=$(mktemp)
  cargo test --release "$@" 2>&1 | tee "$log"
  exec < "$log"
fi
echo "where the test time went (wall seconds per test binary, longest first; building not counted;"
echo "scripts/test-times.sh --modules splits the integration tests' by module):"
awk '
  /^     Running / { name = ($2 == "unittests") ? $3 : $2; next }
  /^   Doc-tests / { name = "doc-tests " $2; next }
  /^test result: / {
    t = $NF; sub(/s$/, "", t)
    if (name != "") printf "%8.1f  %s\n", t, name
    name = ""
  }' | sort -k1,1nr | awk '{ print; total += $1 } END { printf "%8.1f  total\n", total }'
