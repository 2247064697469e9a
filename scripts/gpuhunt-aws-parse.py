#!/usr/bin/env python3
"""Times dstack's gpuhunt (PyPI `gpuhunt`) parsing an AWS Price List EC2 offer CSV from disk.

usage: gpuhunt-aws-parse.py FILE [REGION]

Runs the installed gpuhunt's own AWSProvider.get() on FILE and prints one line of JSON:
{"tool", "version", "bytes", "seconds", "mb_per_s", "rows"} (MB = 1e6 bytes; seconds is the
wall time of get() only). rows is the number of CatalogItem offers gpuhunt returns; with
REGION, only those whose location is REGION (gpuhunt reads one all-region index.csv, so
the region cannot be passed to it, only used to count).

Nothing is fetched. What is stubbed, and why:
  * the download: gpuhunt skips it when its cache_path exists, and cache_path is FILE; the
    download method is also replaced by one that raises, so a bad path fails loudly.
  * boto3 / EC2 API calls made by get() after the parse: _fill_gpu_details
    (ec2:DescribeInstanceTypes, fills GPU name/memory) and _with_spot_offers
    (ec2:DescribeSpotPriceHistory, adds spot offers) become no-ops, so the offers are the
    parsed on-demand rows as is (GPU name/memory left None).
  * _get_ec2_api_regions (called by __init__; reads botocore's bundled endpoint data, no
    network) is replaced by an empty set, so boto3 need not be importable.
  * if boto3/botocore are not installed, empty stand-in modules are registered so that
    gpuhunt.providers.aws (which imports them at top level) still imports.
"""
import json, os, sys, time, types


def stub_missing_aws_sdk():
    """Registers stand-ins for boto3/botocore when absent; gpuhunt only needs the names."""
    try:
        import boto3, botocore.config, botocore.exceptions  # noqa: F401
        return
    except ImportError:
        pass
    boto3 = types.ModuleType("boto3")
    boto3.client = boto3.session = None
    config = types.ModuleType("botocore.config")
    config.Config = lambda *a, **k: None
    exceptions = types.ModuleType("botocore.exceptions")
    for name in ("ClientError", "ConnectTimeoutError", "EndpointConnectionError"):
        setattr(exceptions, name, type(name, (Exception,), {}))
    botocore = types.ModuleType("botocore")
    botocore.config, botocore.exceptions = config, exceptions
    sys.modules.update({"boto3": boto3, "botocore": botocore,
                        "botocore.config": config, "botocore.exceptions": exceptions})


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    path = os.path.abspath(sys.argv[1])
    region = sys.argv[2] if len(sys.argv) == 3 else None
    if not os.path.isfile(path):
        sys.exit(f"no such file: {path}")

    stub_missing_aws_sdk()
    from importlib.metadata import version
    from gpuhunt.providers import aws

    def no_download(self):
        raise RuntimeError(f"gpuhunt tried to download the pricing file (cache_path={self.cache_path})")

    aws._get_ec2_api_regions = lambda: set()
    aws.AWSProvider._download_pricing_file = no_download
    aws.AWSProvider._fill_gpu_details = lambda self, offers: None
    aws.AWSProvider._with_spot_offers = lambda self, offers: offers

    provider = aws.AWSProvider(cache_path=path)  # existing cache_path: read instead of download
    size = os.path.getsize(path)
    t0 = time.perf_counter()
    offers = provider.get()  # preamble skip, prefilter, csv.DictReader, _skip, CatalogItem rows
    seconds = time.perf_counter() - t0
    rows = sum(1 for o in offers if region is None or o.location == region)
    print(json.dumps({"tool": "gpuhunt", "version": version("gpuhunt"), "bytes": size,
                      "seconds": round(seconds, 4), "mb_per_s": round(size / 1e6 / seconds, 2),
                      "rows": rows}))


if __name__ == "__main__":
    main()
