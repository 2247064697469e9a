#!/usr/bin/env python3
"""Same-session CPU ceilings for judging lavapipe figures (lavapipe runs on these cores).

sgemm: numpy's BLAS (OpenBLAS in the PyPI wheel) C = A @ B in float32, median of 10 runs.
memcpy: np.copyto of an array of the given size split across THREADS threads (numpy drops
the GIL while copying), counted as bytes read + bytes written like STREAM copy.

  OPENBLAS_NUM_THREADS=2 python3 scripts/cpu-ceiling.py --sizes 1024,2048 --copy-mib 128
"""
import argparse, json, os, statistics, threading, time
import numpy as np

def timed(fn, runs):
    fn(); fn()  # warm-up, not counted
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return ts

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1024,2048")
    ap.add_argument("--copy-mib", type=int, default=128)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OPENBLAS_NUM_THREADS", "2")))
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    out = {"threads": a.threads, "sgemm": [], "memcpy": None}
    rng = np.random.default_rng(1)
    for n in [int(s) for s in a.sizes.split(",")]:
        A = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        B = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        ts = timed(lambda: A @ B, a.runs)
        g = [2 * n**3 / t * 1e-9 for t in ts]
        out["sgemm"].append({"n": n, "gflops_median": statistics.median(g), "min": min(g), "max": max(g), "runs": a.runs})
    n = a.copy_mib << 20 >> 2
    src = rng.uniform(-1, 1, n).astype(np.float32); dst = np.empty_like(src)
    parts = np.array_split(np.arange(n), a.threads)
    bounds = [(p[0], p[-1] + 1) for p in parts]
    def copy():
        th = [threading.Thread(target=np.copyto, args=(dst[s:e], src[s:e])) for s, e in bounds]
        [t.start() for t in th]; [t.join() for t in th]
    ts = timed(copy, a.runs)
    g = [2 * src.nbytes / t * 1e-9 for t in ts]
    assert np.array_equal(src, dst)
    out["memcpy"] = {"bytes": src.nbytes, "gbps_median": statistics.median(g), "min": min(g), "max": max(g), "runs": a.runs}
    print(json.dumps(out, indent=1))

if __name__ == "__main__":
    main()
