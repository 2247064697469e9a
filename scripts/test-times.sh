#!/usr/bin/env bash
# Where the test time goes: reads `cargo test` output on stdin (or runs
# `cargo test --release "$@"` when stdin is a terminal) and prints each test binary's
# wall time, longest first, with the total. Issue 35 item 18: the README's test command
# stays under 5 minutes on a 2-core machine; the long sustained-load tests are #[ignore]d
# and .ci/run starts them by name.
set -euo pipefail
if [ -t 0 ]; then
  exec > >(cat) 2>&1
  log=$(mktemp)
  cargo test --release "$@" 2>&1 | tee "$log"
  exec < "$log"
fi
echo "where the test time went (wall seconds per test binary, longest first; building not counted):"
awk '
  /^     Running / { name = ($2 == "unittests") ? $3 : $2; next }
  /^   Doc-tests / { name = "doc-tests " $2; next }
  /^test result: / {
    t = $NF; sub(/s$/, "", t)
    if (name != "") printf "%8.1f  %s\n", t, name
    name = ""
  }' | sort -k1,1nr | awk '{ print; total += $1 } END { printf "%8.1f  total\n", total }'
