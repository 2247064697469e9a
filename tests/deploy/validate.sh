#!/usr/bin/env bash
# Validates deploy/ against the projects' own schemas and loaders, offline once installed:
#  - Kubernetes manifests: kubernetes-validate (the Kubernetes OpenAPI schemas, vendored in
#    that package, version pinned below), strict: unknown fields and wrong types fail;
#  - the SkyPilot task: SkyPilot's own loader, sky.Task.from_yaml (its JSON schema, field
#    name typos included), without a cloud account;
#  - what the schemas cannot say: Indexed completion, one GPU per pod, `graphics` in
#    NVIDIA_DRIVER_CAPABILITIES, each vendor's resource name, the SkyPilot accelerators.
# Needs PyPI once (pip install into a cached virtual environment); where the packages cannot
# be installed it says so and exits 0 (skipped). Run from .ci/run; about 1-2 minutes the
# first time (SkyPilot's dependencies), seconds with the environment cached.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${GPUVALUE_VALIDATE_VENV:-target/deploy-validate-venv}"
say() { echo "deploy validation: $*"; }
pins=(skypilot==0.14.1 kubernetes-validate==1.37.0)
if [ ! -x "$venv/bin/kubernetes-validate" ] || ! "$venv/bin/python" -c 'import sky' 2>/dev/null; then
    python3 -m venv "$venv" >/dev/null 2>&1 || { say "SKIPPED: python3 -m venv failed (apt-get install python3-venv)"; exit 0; }
    if ! "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >"$venv.log" 2>&1; then
        tail -5 "$venv.log"
        say "SKIPPED: cannot install ${pins[*]} from PyPI (see $venv.log)"
        exit 0
    fi
fi

# Kubernetes: every manifest, strict, against the pinned Kubernetes version's schemas.
"$venv/bin/kubernetes-validate" --strict --kubernetes-version 1.37.0 deploy/kubernetes/*.yaml

# SkyPilot's loader, and the facts the schemas do not check.
"$venv/bin/python" - <<'PY'
import glob, sys
import yaml
import sky

task = sky.Task.from_yaml("deploy/skypilot/gpuvalue.yaml")
accs = sorted(next(iter(r.accelerators)) for r in task.resources)
assert accs == ["A100", "H100", "L4"], accs
assert "GPUVALUE_INSTANCE" in task.envs, task.envs
assert "bench --adapter all" in task.run, task.run
assert task.envs.get("GPUVALUE_MODE") == "bench" and "burn --adapter all" in task.run, task.envs
print(f"SkyPilot {sky.__version__}: task {task.name!r} loads; accelerators {accs}")

for path in sorted(glob.glob("deploy/kubernetes/bench-*.yaml")):
    vendor = path.rsplit("-", 1)[1].removesuffix(".yaml")
    (job,) = [d for d in yaml.safe_load_all(open(path)) if d]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed", path
    assert spec["completions"] == spec["parallelism"] >= 1, path
    (c,) = spec["template"]["spec"]["containers"]
    resource = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu"}[vendor]
    assert c["resources"]["limits"] == {resource: 1}, (path, c["resources"])
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    assert "GPUVALUE_INSTANCE" in env, path
    # bench by default; burn runs the acceptance test with the same command line.
    assert env.get("GPUVALUE_MODE") == "bench" and '"$GPUVALUE_MODE"' in c["args"][0], path
    if vendor == "nvidia":
        caps = env["NVIDIA_DRIVER_CAPABILITIES"].split(",")
        assert "graphics" in caps and "compute" in caps, caps
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    assert "/results" in mounts and "/results/" in c["args"][0], path
    print(f"{path}: Indexed Job, {resource}: 1 per pod, results in /results")
PY
say "PASSED (kubernetes-validate 1.37.0 strict schemas, SkyPilot $("$venv/bin/python" -c 'import sky; print(sky.__version__)') loader)"
