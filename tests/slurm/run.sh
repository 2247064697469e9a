#!/usr/bin/env bash
# A real one-node Slurm cluster runs the project's own deploy/slurm scripts: an array of 2
# bench tasks on lavapipe (one fake GPU, so they run one after the other, each granted
# CUDA_VISIBLE_DEVICES=0), then the dependent rank + report job. Checks every task and the
# rank job ended COMPLETED (sbatch's exit code is not enough: a cancelled dependent job
# exits 0) and that `rank --results DIR` ranks from both files.
#
# Needs root (or sudo) and apt: installs Debian's slurmctld slurmd slurm-client munge. Where
# they cannot be installed it says so and exits 0 (skipped). Daemons are started here in the
# foreground (-D) in the background, and stopped by PID on exit. Run from the repository
# root after `cargo build --release` (uses target/release/gpuvalue).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
bin="${GPUVALUE_BIN:-$root/target/release/gpuvalue}"
start_s=$SECONDS
say() { echo "slurm test: $*"; }
[ -x "$bin" ] || { say "FAIL: $bin not built (cargo build --release first)"; exit 1; }

SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
        say "SKIPPED: needs root or password-less sudo to install and run Slurm"; exit 0
    fi
fi

# --- install (package init scripts must not start daemons) ---------------------------
pkgs=(slurmctld slurmd slurm-client munge)
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
    || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    policy=/usr/sbin/policy-rc.d
    made_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod +x "$policy"
        made_policy=1
    fi
    export DEBIAN_FRONTEND=noninteractive
    installed=""
    if $SUDO apt-get install -y -q "${pkgs[@]}" >/tmp/slurm-test-apt.log 2>&1 \
        || { $SUDO apt-get update -q >>/tmp/slurm-test-apt.log 2>&1 \
            && $SUDO apt-get install -y -q "${pkgs[@]}" >>/tmp/slurm-test-apt.log 2>&1; }; then
        installed=1
    fi
    [ -n "$made_policy" ] && $SUDO rm -f "$policy"
    if [ -z "$installed" ]; then
        tail -5 /tmp/slurm-test-apt.log
        say "SKIPPED: cannot install ${pkgs[*]} (see /tmp/slurm-test-apt.log)"
        exit 0
    fi
    say "installed ${pkgs[*]} in $((SECONDS - start_s)) s"
fi

# --- a private cluster: config, state and logs in a temporary directory ------------------
work="$(mktemp -d /tmp/gpuvalue-slurm.XXXXXX)"
chmod 755 "$work"
host="$(hostname -s)"
# Ports of our own (not the defaults) so a Slurm already on this machine is not disturbed.
port=$((20000 + ($$ % 10000) * 2))
pids=()
jobs_to_cancel=""
cleanup() {
    local rc=$?
    [ -n "$jobs_to_cancel" ] && SLURM_CONF="$work/slurm.conf" scancel $jobs_to_cancel 2>/dev/null || true
    for p in "${pids[@]}"; do $SUDO kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do $SUDO kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
        $SUDO kill -9 "$p" 2>/dev/null || true
    done
    if [ "$rc" != 0 ]; then
        say "logs kept in $work"
        for f in "$work"/*.log "$work"/run/*.out; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done
    else
        $SUDO rm -rf "$work"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/state" "$work/spool" "$work/run" "$work/results"
cat >"$work/slurm.conf" <<CONF
ClusterName=gpuvaluetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
ReturnToService=2
MinJobAge=600
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:1 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
echo "Name=gpu File=/dev/null" >"$work/gres.conf"
export SLURM_CONF="$work/slurm.conf"

# munge: /run/munge owned by munge, a key, munged in the foreground as munge.
$SUDO mkdir -p /run/munge
$SUDO chown munge:munge /run/munge
$SUDO chmod 755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    $SUDO mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null \
        || $SUDO dd if=/dev/urandom of=/etc/munge/munge.key bs=1k count=1 status=none
    $SUDO chown munge:munge /etc/munge/munge.key
    $SUDO chmod 400 /etc/munge/munge.key
fi
if [ -S /run/munge/munge.socket.2 ] && munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "using the munged already running"
else
    $SUDO setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F \
        >"$work/munged.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    munge -n </dev/null | unmunge >/dev/null || { say "FAIL: munged did not start"; exit 1; }
fi

$SUDO env SLURM_CONF="$SLURM_CONF" slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
$SUDO env SLURM_CONF="$SLURM_CONF" slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 100); do
    state="$(sinfo -h -n "$host" -o %t 2>/dev/null || true)"
    [ "$state" = idle ] && break
    sleep 0.3
done
[ "$state" = idle ] || { say "FAIL: node $host is '${state:-unreachable}', not idle"; exit 1; }
say "cluster up (node $host idle, ports $port/$((port + 1))) after $((SECONDS - start_s)) s"

# --- the project's own scripts: 2 bench tasks + the dependent rank job --------------------
export GPUVALUE="$bin" GPUVALUE_RESULTS_DIR="$work/results"
export GPUVALUE_INSTANCE="aws:p5.48xlarge:us-east-1"
# Small on 2 cores: matmul at one size, small arrays, a short budget.
export GPUVALUE_BENCH_ARGS="--quick --probes matmul,stream,latency --sizes 128 --array-mib 4 --time-budget 5"
export GPUVALUE_RANK_ARGS="--top 5"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$work/run}"
# Submits N tasks with submit.sh and waits (bounded) until neither job has a task pending or
# running; sets bench and rank to the two job ids.
submit_and_wait() {
    local submitted ids left=1
    submitted="$(deploy/slurm/submit.sh "$1" --chdir="$work/run")"
    echo "$submitted"
    ids="$(echo "$submitted" | tail -1)"
    bench="$(echo "$ids" | sed -n 's/^bench=\([0-9]*\) rank=\([0-9]*\)$/\1/p')"
    rank="$(echo "$ids" | sed -n 's/^bench=\([0-9]*\) rank=\([0-9]*\)$/\2/p')"
    [ -n "$bench" ] && [ -n "$rank" ] || { say "FAIL: no job ids in '$ids'"; exit 1; }
    jobs_to_cancel="$bench $rank"
    for _ in $(seq 600); do
        left="$(squeue -h -j "$bench,$rank" -t PENDING,RUNNING,CONFIGURING,COMPLETING 2>/dev/null | wc -l)"
        [ "$left" = 0 ] && break
        sleep 0.5
    done
    [ "$left" = 0 ] || { say "FAIL: jobs still queued after 300 s"; squeue; exit 1; }
    jobs_to_cancel=""
}
submit_and_wait 2

# Every array task and the rank job: JobState=COMPLETED, exit code 0.
states="$(scontrol -o show job "$bench"; scontrol -o show job "$rank")"
echo "$states" | sed -n 's/^JobId=\([0-9]*\).*ArrayTaskId=\([0-9]*\).*JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\).*/  array task \2 (job \1): \3, exit \4/p;
                          s/^JobId=\([0-9]*\) JobName=gpuvalue-rank.*JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\).*/  rank job \1: \2, exit \3/p'
tasks="$(echo "$states" | grep -c 'JobName=gpuvalue-bench' || true)"
done_tasks="$(echo "$states" | grep 'JobName=gpuvalue-bench' | grep -c 'JobState=COMPLETED .*ExitCode=0:0' || true)"
rank_done="$(echo "$states" | grep 'JobName=gpuvalue-rank' | grep -c 'JobState=COMPLETED .*ExitCode=0:0' || true)"
[ "$tasks" -ge 2 ] && [ "$done_tasks" = "$tasks" ] \
    || { say "FAIL: $done_tasks of $tasks bench tasks COMPLETED with exit 0"; exit 1; }
[ "$rank_done" = 1 ] || { say "FAIL: the rank job did not complete"; exit 1; }

# The task logs show Slurm's grant and what --adapter visible made of it.
grep -h "CUDA_VISIBLE_DEVICES=0" "$work"/run/gpuvalue-bench-*.out >/dev/null \
    || { say "FAIL: the tasks were not granted CUDA_VISIBLE_DEVICES=0"; exit 1; }
grep -h "note: --adapter visible" "$work"/run/gpuvalue-bench-*.out | head -1

# Two results files, both ranked, grouped as one instance.
files=("$work"/results/*.json)
[ "${#files[@]}" = 2 ] || { say "FAIL: ${#files[@]} results files, expected 2"; exit 1; }
for f in "${files[@]}"; do
    grep -q '"instance_type": "p5.48xlarge"' "$f" || { say "FAIL: $f lacks the instance"; exit 1; }
done
[ -s "$work/results/summary/report/report.html" ] || { say "FAIL: the rank job wrote no report"; exit 1; }
machines="$("$bin" rank --results "$work/results" --format json \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["machines"]), len(d["fleet"]["groups"][0]["members"]))')"
[ "$machines" = "2 2" ] || { say "FAIL: rank used '$machines' (machines, group members), expected '2 2'"; exit 1; }
grep -E "^fleet" "$work/results/summary/rank.txt" | cut -c1-160
say "PASSED: 2 array tasks + rank job COMPLETED on a one-node Slurm cluster; rank ranked both files ($((SECONDS - start_s)) s)"

# --- burn mode: one task running the acceptance test, a fault injected so the verdict is
# known (FAIL, exit 4); the summary job must still run (afterany), list the verdict and
# leave that GPU's bench files out of the ranking.
export GPUVALUE_MODE=burn
export GPUVALUE_BURN_ARGS="--allow-software --duration 6 --size 128 --vram-mib 8 --inject-fault miscompare@2"
submit_and_wait 1
burn="$bench"
states="$(scontrol -o show job "$burn"; scontrol -o show job "$rank")"
echo "$states" | grep 'JobName=gpuvalue-bench' | grep -q 'ExitCode=4:0' \
    || { say "FAIL: the burn task did not exit 4 (FAIL): $(echo "$states" | grep -o 'JobState=[A-Z]* .*ExitCode=[0-9:]*' | head -1)"; exit 1; }
echo "$states" | grep 'JobName=gpuvalue-rank' | grep -q 'JobState=COMPLETED .*ExitCode=0:0' \
    || { say "FAIL: the summary job did not run after the failed burn task"; exit 1; }
grep -q "^burn FAIL" "$work/results/summary/rank.txt" \
    || { say "FAIL: the summary does not list the burn verdict"; exit 1; }
grep -q "^burn EXCLUDED" "$work/results/summary/rank.txt" \
    || { say "FAIL: the failed GPU's bench files were ranked"; exit 1; }
grep -E "^burn" "$work/results/summary/rank.txt" | cut -c1-160
say "PASSED: burn mode: the task exited 4 (FAIL), the summary listed the verdict and left the GPU's files out ($((SECONDS - start_s)) s)"
