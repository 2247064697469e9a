#!/usr/bin/env bash
# Benchmarks N GPUs as a Slurm array job (one task per GPU), then ranks them in a job that
# starts only when every task succeeded (--dependency=afterok; it is cancelled if one fails).
#
#   GPUVALUE_RESULTS_DIR=/shared/gpuvalue/run1 GPUVALUE=/shared/bin/gpuvalue \
#   GPUVALUE_INSTANCE=aws:p5.48xlarge deploy/slurm/submit.sh 8 --partition=gpu
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
rank="$(sbatch --parsable --dependency="afterok:$bench" --kill-on-invalid-dep=yes "$@" "$here/gpuvalue-rank.sbatch")"
rank="${rank%%;*}"
echo "queued: $n bench task(s) in array job $bench; rank job $rank runs when all succeed"
echo "results: $GPUVALUE_RESULTS_DIR/*.json, ranking and report: $GPUVALUE_RESULTS_DIR/summary/"
echo "bench=$bench rank=$rank"
