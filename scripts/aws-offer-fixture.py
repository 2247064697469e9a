#!/usr/bin/env python3
"""Writes an AWS Price List EC2 offer file (index.csv) in the real layout: the five preamble
lines, the header of the 2025 offer files (90 columns, read from a public copy), and rows as
AWS writes them (quoted values, empty fields unquoted, the product's attributes repeated on
every price term). The rows are generated, not AWS's: every OS, tenancy, capacity status and
pre-installed software AWS sells (most of a real file, and all of it filtered out), on-demand
and reserved terms (1 and 3 years, standard and convertible, No / Partial / All Upfront, an
upfront fee row beside the hourly one), and Capacity Block rows. GPU on-demand prices are
SkyPilot's aws vms.csv (us-east-1) where it lists the type; reserved prices are on-demand
times fixed ratios (0.63 / 0.60 / 0.58 of a year, 0.45 / 0.42 / 0.40 of three).

usage: aws-offer-fixture.py OUT [--size-mb N] [--small]
  --size-mb N: pad with non-GPU rows to about N MB (the benchmark's 500 MB file)
  --small: one decoy row per filter instead of every combination (the tests' fixture)
"""
import sys, random

HEADER = ["SKU","OfferTermCode","RateCode","TermType","PriceDescription","EffectiveDate","StartingRange","EndingRange","Unit","PricePerUnit","Currency","RelatedTo","LeaseContractLength","PurchaseOption","OfferingClass","Product Family","serviceCode","Location","Location Type","Instance Type","Current Generation","Instance Family","vCPU","Physical Processor","Clock Speed","Memory","Storage","Network Performance","Processor Architecture","Storage Media","Volume Type","Max Volume Size","Max IOPS/volume","Max IOPS Burst Performance","Max throughput/volume","Provisioned","Tenancy","EBS Optimized","Operating System","License Model","Group","Group Description","Transfer Type","From Location","From Location Type","To Location","To Location Type","usageType","operation","AvailabilityZone","CapacityStatus","ClassicNetworkingSupport","Dedicated EBS Throughput","ECU","Elastic Graphics Type","Enhanced Networking Supported","From Region Code","GPU","GPU Memory","Instance","Instance Capacity - 10xlarge","Instance Capacity - 12xlarge","Instance Capacity - 16xlarge","Instance Capacity - 18xlarge","Instance Capacity - 24xlarge","Instance Capacity - 2xlarge","Instance Capacity - 32xlarge","Instance Capacity - 4xlarge","Instance Capacity - 8xlarge","Instance Capacity - 9xlarge","Instance Capacity - large","Instance Capacity - medium","Instance Capacity - metal","Instance Capacity - xlarge","instanceSKU","Intel AVX2 Available","Intel AVX Available","Intel Turbo Available","MarketOption","Normalization Size Factor","Physical Cores","Pre Installed S/W","Processor Features","Product Type","Region Code","Resource Type","serviceName","SnapshotArchiveFeeType","To Region Code","Volume API Name","VPCNetworkingSupport"]

# type: (gpus, vcpu, memory GiB, on-demand USD/h in us-east-1)
GPU_TYPES = {
    "p5.48xlarge": (8, 192, 2048, 55.04),
    "p5.4xlarge": (1, 16, 256, 6.88),
    "p4d.24xlarge": (8, 96, 1152, 21.957642),
    "p4de.24xlarge": (8, 96, 1152, 27.447),
    "p3.2xlarge": (1, 8, 61, 3.06),
    "p3.8xlarge": (4, 32, 244, 12.24),
    "p3.16xlarge": (8, 64, 488, 24.48),
    "g4dn.xlarge": (1, 4, 16, 0.526),
    "g4dn.12xlarge": (4, 48, 192, 3.912),
    "g5.xlarge": (1, 4, 16, 1.006),
    "g5.48xlarge": (8, 192, 768, 16.288),
    "g6.xlarge": (1, 4, 16, 0.8048),
    "g6e.4xlarge": (1, 16, 128, 3.00424),
    "p6-b200.48xlarge": (8, 192, 2048, 113.9328),
    "g5g.xlarge": (1, 4, 8, 0.42),
}
CPU_TYPES = ["c6i.large", "m7i.xlarge", "r6g.2xlarge", "c7g.4xlarge", "m6a.8xlarge", "t3.micro"]
OSES = [("Linux", "No License required", "NA"), ("Windows", "No License required", "NA"),
        ("Windows", "No License required", "SQL Web"), ("RHEL", "No License required", "NA"),
        ("SUSE", "No License required", "NA"), ("Linux", "No License required", "SQL Std")]
TENANCIES = ["Shared", "Dedicated", "Host"]
CAPACITY = ["Used", "UnusedCapacityReservation", "AllocatedCapacityReservation"]
RESERVED = [(1, "No Upfront", 0.63), (1, "Partial Upfront", 0.60), (1, "All Upfront", 0.58),
            (3, "No Upfront", 0.45), (3, "Partial Upfront", 0.42), (3, "All Upfront", 0.40)]

def q(v):
    return "" if v == "" else '"' + str(v).replace('"', '""') + '"'

def line(values):
    return ",".join(q(v) for v in values) + "\n"

def row(sku, term, unit, price, desc, ty, spec, os_, lic, sw, ten, cap, lease="", option="", klass="", market="OnDemand"):
    gpus, vcpu, mem = spec
    d = dict.fromkeys(HEADER, "")
    d.update({"SKU": sku, "OfferTermCode": "JRTCKXETXF" if term == "OnDemand" else "38NPMPTW36",
              "RateCode": f"{sku}.X.6YS6EN2CT7", "TermType": term, "PriceDescription": desc,
              "EffectiveDate": "2026-11-01", "StartingRange": "0" if unit == "Hrs" else "",
              "EndingRange": "Inf" if unit == "Hrs" else "", "Unit": unit,
              "PricePerUnit": f"{price:.10f}" if unit == "Hrs" else f"{price:.0f}", "Currency": "USD",
              "LeaseContractLength": lease, "PurchaseOption": option, "OfferingClass": klass,
              "Product Family": "Compute Instance", "serviceCode": "AmazonEC2",
              "Location": "US East (N. Virginia)", "Location Type": "AWS Region", "Instance Type": ty,
              "Current Generation": "Yes", "Instance Family": "GPU instance" if gpus else "General purpose",
              "vCPU": str(vcpu), "Physical Processor": "AMD EPYC", "Clock Speed": "2.6 GHz",
              "Memory": f"{mem} GiB", "Storage": "EBS only", "Network Performance": "100 Gigabit",
              "Processor Architecture": "64-bit", "Tenancy": ten, "Operating System": os_,
              "License Model": lic, "usageType": f"BoxUsage:{ty}", "operation": "RunInstances",
              "AvailabilityZone": "NA", "CapacityStatus": cap, "ClassicNetworkingSupport": "false",
              "GPU": str(gpus) if gpus else "", "MarketOption": market, "Pre Installed S/W": sw,
              "Region Code": "us-east-1", "serviceName": "Amazon Elastic Compute Cloud",
              "VPCNetworkingSupport": "true"})
    return line(d[h] for h in HEADER)

SMALL = "--small" in sys.argv

def combos():
    """Every OS, tenancy and capacity status; with --small, the kept one and one decoy of each
    filter (their reserved terms too only for the kept one)."""
    if SMALL:
        return [("Linux", "No License required", "NA", "Shared", "Used"),
                ("Windows", "No License required", "NA", "Shared", "Used"),
                ("Linux", "No License required", "SQL Web", "Shared", "Used"),
                ("Linux", "No License required", "NA", "Dedicated", "Used"),
                ("Linux", "No License required", "NA", "Shared", "UnusedCapacityReservation")]
    return [(o, l, s, t, c) for (o, l, s) in OSES for t in TENANCIES for c in CAPACITY]

def type_rows(ty, spec, od, rnd):
    out = []
    for (os_, lic, sw, ten, cap) in combos():
        if True:
            if True:
                sku = f"{abs(hash((ty, os_, sw, ten, cap))) % 10**16:016d}"
                base = od * (1 if (os_, sw) == ("Linux", "NA") else 1.4) * (1 if ten == "Shared" else 1.1)
                base = base if cap == "Used" else 0.0
                out.append(row(sku, "OnDemand", "Hrs", base, f"${base:.3f} per {os_} {ty} Instance Hour", ty, spec, os_, lic, sw, ten, cap))
                kept = (os_, sw, ten, cap) == ("Linux", "NA", "Shared", "Used")
                for years, option, ratio in (RESERVED if kept or not SMALL else []):
                    for klass in ["standard", "convertible"]:
                        r = ratio * (1.0 if klass == "standard" else 1.08)
                        total = base * r * 8760 * years
                        hourly = {"No Upfront": total / (8760 * years), "Partial Upfront": total / 2 / (8760 * years), "All Upfront": 0.0}[option]
                        upfront = {"No Upfront": None, "Partial Upfront": total / 2, "All Upfront": total}[option]
                        lease = f"{years}yr"
                        out.append(row(sku, "Reserved", "Hrs", hourly, f"{os_} ({ty}) reserved instance applied", ty, spec, os_, lic, sw, ten, cap, lease, option, klass))
                        if upfront is not None:
                            out.append(row(sku, "Reserved", "Quantity", upfront, "Upfront Fee", ty, spec, os_, lic, sw, ten, cap, lease, option, klass))
    if spec[0] >= 8:
        # Capacity Blocks: only the OS fee, never a price to rank.
        out.append(row("CB" + ty, "OnDemand", "Hrs", 0.0104, "Linux OS fee for Capacity Blocks", ty, spec, "Linux", "No License required", "NA", "Shared", "Used", market="CapacityBlock"))
    return out

def main():
    out = sys.argv[1]
    size = None
    if "--size-mb" in sys.argv:
        size = float(sys.argv[sys.argv.index("--size-mb") + 1]) * 1e6
    rnd = random.Random(7)
    with open(out, "w", newline="") as f:
        f.write(line(["FormatVersion", "v1.0"]))
        f.write(line(["Disclaimer", "This pricing list is for informational purposes only. All prices are subject to the additional terms included in the pricing pages on http://aws.amazon.com. All Free Tier prices are also subject to the terms included at https://aws.amazon.com/free/"]))
        f.write(line(["Publication Date", "2026-12-01T18:00:00Z"]))
        f.write(line(["Version", "20261201180000"]))
        f.write(line(["OfferCode", "AmazonEC2"]))
        f.write(line(HEADER))
        written = 0
        for ty, (g, v, m, od) in GPU_TYPES.items():
            for r in type_rows(ty, (g, v, m), od, rnd):
                f.write(r); written += len(r)
        i = 0
        while True:
            for ty in CPU_TYPES:
                name = ty if i == 0 else f"{ty.split('.')[0]}{i}.{ty.split('.')[1]}"
                for r in type_rows(name, (0, 8, 32), 0.1 + 0.01 * (i % 50), rnd):
                    f.write(r); written += len(r)
            i += 1
            if size is None or written >= size or SMALL:
                break

main()
