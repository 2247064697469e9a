#!/usr/bin/env python3
"""Writes the `gpuhunt` source's test fixture: dstack's published catalog layout
(`v3/<provider>/version`, `v3/<provider>/<version>/catalog.zip` holding `<provider>.csv`),
written by gpuhunt's own code (`gpuhunt._internal.storage.dump`, gpuhunt 0.1.34 from PyPI)
from the real SkyPilot v8 rows in tests/fixtures/feeds (no published gpuhunt row is public:
reports/research/gpuhunt-catalog-format.md). A row's values are SkyPilot's; the format,
quoting and line endings are gpuhunt's.

usage: python3 -m venv /tmp/gh && /tmp/gh/bin/pip install gpuhunt==0.1.34
       /tmp/gh/bin/python scripts/gpuhunt-fixture.py
"""
import ast, csv, os, zipfile
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt._internal.storage import dump

ROOT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "feeds")
SKY = os.path.join(ROOT, "raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8")
OUT = os.path.join(ROOT, "dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3")
VERSION = "20261203-1"
# gpuhunt provider -> SkyPilot cloud
PROVIDERS = {"lambdalabs": "lambda", "nebius": "nebius", "verda": "verda", "oci": "oci"}


def items(provider, cloud):
    for r in csv.DictReader(open(os.path.join(SKY, cloud, "vms.csv"), newline="")):
        if not r.get("AcceleratorName") or not r.get("Price"):
            continue
        n = float(r["AcceleratorCount"] or 0)
        if n < 1 or n != int(n):
            continue
        n = int(n)
        info = ast.literal_eval(r["GpuInfo"]) if r["GpuInfo"].startswith("{") else None
        gb = None
        if info and info.get("Gpus"):
            mib = info["Gpus"][0].get("MemoryInfo", {}).get("SizeInMiB")
            if mib:
                # SkyPilot's per-GPU MiB in these four files; gpuhunt keeps GB per GPU
                gb = round(mib / 1024)
        for spot, price in ((False, r["Price"]), (True, r.get("SpotPrice"))):
            if not price:
                continue
            yield CatalogItem(
                provider=provider,
                instance_name=r["InstanceType"],
                location=r["Region"],
                price=float(price),
                cpu=int(float(r["vCPUs"])),
                memory=float(r["MemoryGiB"]),
                gpu_count=n,
                gpu_name=r["AcceleratorName"],
                gpu_memory=gb,
                spot=spot,
                disk_size=None,
                gpu_vendor=AcceleratorVendor.AMD if r["AcceleratorName"].startswith("MI") else AcceleratorVendor.NVIDIA,
            )


for provider, cloud in PROVIDERS.items():
    d = os.path.join(OUT, provider, VERSION)
    os.makedirs(d, exist_ok=True)
    csv_path = os.path.join("/tmp", f"{provider}.csv")
    dump(items(provider, cloud), csv_path)
    with zipfile.ZipFile(os.path.join(d, "catalog.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.write(csv_path, arcname=f"{provider}.csv")
    with open(os.path.join(OUT, provider, "version"), "w") as f:
        f.write(VERSION + "\n")
    print(provider, os.path.getsize(os.path.join(d, "catalog.zip")))
