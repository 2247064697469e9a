#!/usr/bin/env bash
# Benchmarks N GPUs as a Slurm array job (one task per GPU), then ranks them in a job that
# starts only when every task succeeded (--dependency=afterok; it is cancelled if one fails).
#
#   GPUVALUE_RESULTS_DIR=/shared/gpuvalue/run1 GPUVALUE=/shared/bin/gpuvalue \
#   GPUVALUE_INSTANCE=aws:p5.48xlarge deploy/slurm/submit.sh 8 --partition=gpu
#
# GPUVALUE_MODE=burn runs the acceptance test on each GPU instead (see gpuvalue-bench.sbatch);
# the summary job then runs after every task ended, passed or not (--dependency=afterany),
# and lists each GPU's verdict.
#
# Arguments: the number of GPUs (array tasks, default 8), then sbatch options for both jobs.
# Prints "bench=JOBID rank=JOBID" last.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
n="${1:-8}"
shift || true
: "${GPUVALUE_RESULTS_DIR:?set GPUVALUE_RESULTS_DIR to a directory every node can write}"
case "$n" in '' | *[!0-9]* | 0) echo "submit.sh: expected a number of GPUs >= 1, got '$n'" >&2; exit 2 ;; esac
export GPUVALUE_RESULTS_DIR
bench="$(sbatch --parsable --array="0-$((n - 1))" "$@" "$here/gpuvalue-bench.sbatch")"
bench="${bench%%;*}" # --parsable prints JOBID[;CLUSTER]
after=afterok
if [ "${GPUVALUE_MODE:-bench}" = burn ]; then after=afterany; fi
export GPUVALUE_MODE="${GPUVALUE_MODE:-bench}"
rank="$(sbatch --parsable --dependency="$after:$bench" --kill-on-invalid-dep=yes "$@" "$here/gpuvalue-rank.sbatch")"
rank="${rank%%;*}"
echo "queued: $n $GPUVALUE_MODE task(s) in array job $bench; rank job $rank runs when all $([ "$after" = afterany ] && echo end || echo succeed)"
echo "results: $GPUVALUE_RESULTS_DIR/*.json, ranking and report: $GPUVALUE_RESULTS_DIR/summary/"
echo "bench=$bench rank=$rank"
