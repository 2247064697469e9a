#!/usr/bin/env python3
"""The feeds benchmark, every figure from one run on this machine:

  1. an AWS Price List offer file of about 500 MB in the real layout
     (scripts/aws-offer-fixture.py), read once to warm the page cache;
  2. `cat FILE > /dev/null`: the ceiling;
  3. gpuvalue's AWS parser alone (examples/aws_offer_parse.rs);
  4. dstack's gpuhunt's own AWS parser alone (scripts/gpuhunt-aws-parse.py; PyPI gpuhunt in
     a venv, its network calls stubbed);
  5. `gpuvalue catalog update --source aws` through a mirror on 127.0.0.1 (HTTP, sha256,
     snapshot written): wall time and peak RSS;
  6. `gpuvalue catalog update` of every source (the tests' SkyPilot files and the 500 MB
     AWS file) through the mirror: wall time.

Each timing is the median of RUNS runs (min..max given), after one warm-up run.
usage: bench-feeds.py [--size-mb 500] [--runs 3]; prints Markdown; needs a release build of
gpuvalue and of the example (`cargo build --release --example aws_offer_parse`).
"""
import json, os, platform, resource, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target/release/gpuvalue")
EXAMPLE = os.path.join(ROOT, "target/release/examples/aws_offer_parse")
VENV = os.environ.get("GPUHUNT_VENV", "/tmp/gh-venv")
REL = "pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv"


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def timed(cmd, **kw):
    """Wall seconds, peak RSS of the child in MB, stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    s = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if p.returncode not in (0,):
        sys.exit(f"{cmd}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return s, (rss if rss > before / 1024 else None), p.stdout


def runs(n, f):
    f()  # warm-up, not counted
    return [f() for _ in range(n)]


def summary(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}..{max(xs):.2f})"


def main():
    size, n = arg("--size-mb", 500), arg("--runs", 3)
    work = tempfile.mkdtemp(prefix="gpuvalue-bench-")
    mirror = os.path.join(work, "mirror")
    shutil.copytree(os.path.join(ROOT, "tests/fixtures/feeds"), mirror)
    offer = os.path.join(mirror, REL)
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts/aws-offer-fixture.py"), offer,
                    "--size-mb", str(size)], check=True, env=env)
    mb = os.path.getsize(offer) / 1e6
    cat = runs(n, lambda: timed(["sh", "-c", f"cat '{offer}' > /dev/null"])[0])
    ours = runs(n, lambda: json.loads(timed([EXAMPLE, offer])[2]))
    if not os.path.exists(os.path.join(VENV, "bin/python")):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([os.path.join(VENV, "bin/pip"), "install", "-q", "gpuhunt"], check=True)
    theirs = runs(n, lambda: json.loads(timed([os.path.join(VENV, "bin/python"),
                  os.path.join(ROOT, "scripts/gpuhunt-aws-parse.py"), offer])[2]))
    server = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"],
                              cwd=mirror, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = server.stdout.readline().split("port ")[1].split()[0]
    base = f"http://127.0.0.1:{port}"

    def update(*extra):
        home = tempfile.mkdtemp(dir=work)
        cmd = [BIN, "catalog", "update", "--mirror", base, "--max-download", "2000", *extra]
        # Peak RSS of this child alone: a fresh Python per run reads RUSAGE_CHILDREN.
        probe = ("import resource,subprocess,sys,time;t=time.perf_counter();"
                 "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
                 "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)")
        out = subprocess.run([sys.executable, "-c", probe, *cmd], check=True, text=True,
                             stdout=subprocess.PIPE, env=dict(os.environ, GPUVALUE_HOME=home)).stdout
        s, rss = out.split()
        return float(s), float(rss)

    aws = runs(n, lambda: update("--source", "aws"))
    full = runs(n, lambda: update())
    server.terminate()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    rate = lambda r: r["mb_per_s"]
    print(f"Offer file: {mb:.0f} MB ({REL}, generated in the real layout); CPU: {cpu}, "
          f"{os.cpu_count()} logical CPUs; {n} runs after one warm-up, median (min..max).\n")
    print("| what | MB/s | seconds | peak RSS MB | rows |")
    print("|---|---|---|---|---|")
    print(f"| `cat FILE > /dev/null` (ceiling) | {summary([mb / s for s in cat])} | {summary(cat)} | | |")
    print(f"| gpuvalue AWS parser (example aws_offer_parse) | {summary([rate(r) for r in ours])} | "
          f"{summary([r['seconds'] for r in ours])} | | {ours[0]['kept_rows']} rows kept, {ours[0]['gpu_types']} GPU types |")
    print(f"| gpuhunt {theirs[0]['version']} AWS parser (its AWSProvider.get, network stubbed) | "
          f"{summary([rate(r) for r in theirs])} | {summary([r['seconds'] for r in theirs])} | | {theirs[0]['rows']} offers |")
    print(f"| `gpuvalue catalog update --source aws` via a 127.0.0.1 mirror | {summary([mb / s for s, _ in aws])} | "
          f"{summary([s for s, _ in aws])} | {summary([r for _, r in aws])} | |")
    print(f"| `gpuvalue catalog update` (every source) via the mirror | | {summary([s for s, _ in full])} | "
          f"{summary([r for _, r in full])} | |")
    ratio = statistics.median([rate(r) for r in ours]) / statistics.median([rate(r) for r in theirs])
    print(f"\ngpuvalue / gpuhunt parse rate: {ratio:.1f}x; gpuvalue / cat: "
          f"{statistics.median([rate(r) for r in ours]) / statistics.median([mb / s for s in cat]):.2f}")
    shutil.rmtree(work, ignore_errors=True)


main()
