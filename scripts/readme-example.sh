#!/usr/bin/env bash
# Rewrites the README's ranking example with what the release binary prints now (the
# test `the_readme_ranking_example_is_what_a_fresh_machine_prints` compares them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(target/release/gpuvalue rank --budget 500 --top 6 | cat)
python3 - "$out" <<'PY'
import sys
out = sys.argv[1] + "\n"
r = open("README.md").read()
start = r.index("`gpuvalue rank --budget 500 --top 6`")
o = r.index("```text\n", start) + len("```text\n")
e = r.index("```", o)
open("README.md", "w").write(r[:o] + out + r[e:])
PY
