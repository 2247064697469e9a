//! Instance families and the GPU they carry, where the accelerator column alone cannot tell
//! (AWS, GCP, Azure and Lambda type names), and GCP's split host and GPU rows.

/// Instance families and the GPU they carry, whatever the accelerator column says:
/// (prefix of the lowercased type, text it must also contain, catalog GPU id). The first
/// match wins, so the more specific entries come first. From the providers' instance-type
/// pages and `../shared/catalog-facts.md`.
pub(super) const FAMILY_GPUS: &[(&str, &str, &str)] = &[
    // AWS
    ("p3dn.", "", "v100-sxm2-32gb"),
    ("p3.", "", "v100-sxm2-16gb"),
    ("p4de.", "", "a100-80gb-sxm"),
    ("p4d.", "", "a100-40gb-sxm"),
    ("p5en.", "", "h200-sxm"),
    ("p5e.", "", "h200-sxm"),
    ("p5.", "", "h100-sxm"),
    ("p6-b200.", "", "b200"),
    ("p6-b300.", "", "b300"),
    ("p6e-gb200.", "", "gb200"),
    ("g4dn.", "", "t4"),
    ("g5.", "", "a10g"),
    ("g6e.", "", "l40s"),
    ("g6.", "", "l4"),
    ("gr6.", "", "l4"),
    // GCP (N1 hosts take attached GPUs: only their V100 needs the family to be named)
    ("a2-ultragpu-", "", "a100-80gb-sxm"),
    ("a2-highgpu-", "", "a100-40gb-sxm"),
    ("a2-megagpu-", "", "a100-40gb-sxm"),
    ("a3-ultragpu-", "", "h200-sxm"),
    ("a3-", "", "h100-sxm"),
    ("g2-", "", "l4"),
    // Azure
    ("standard_nd", "isr_h100_v5", "h100-sxm"),
    ("standard_nd", "isr_h200_v5", "h200-sxm"),
    ("standard_nd", "isr_mi300x_v5", "mi300x"),
    ("standard_nd", "_gb200_v6", "gb200"),
    // NC H100 v5 is the H100 NVL (94 GB, PCIe); NC RTX PRO 6000 BSE v6 the Blackwell Server
    // Edition card.
    ("standard_nc", "_h100_v5", "h100-nvl"),
    ("standard_nc", "_rtxpro6000bse_v6", "rtx-pro-6000-server"),
    ("standard_nd96amsr_a100_v4", "", "a100-80gb-sxm"),
    ("standard_nd96ams_a100_v4", "", "a100-80gb-sxm"),
    ("standard_nv", "ads_a10_v5", "a10"),
    ("standard_nd96asr_v4", "", "a100-40gb-sxm"),
    ("standard_nd40rs_v2", "", "v100-sxm2-32gb"),
    ("standard_nc", "ads_a100_v4", "a100-80gb-pcie"),
    ("standard_nc", "as_t4_v3", "t4"),
    ("standard_nc", "s_v3", "v100-pcie-16gb"),
    // Lambda: the plain 1x/2x/4x A100 types are the 40 GB PCIe card; `_sxm4` and 8x are SXM4.
    ("gpu_", "a100_80gb_sxm4", "a100-80gb-sxm"),
    ("gpu_", "a100_sxm4", "a100-40gb-sxm"),
    ("gpu_1x_a100", "", "a100-40gb-pcie"),
    ("gpu_2x_a100", "", "a100-40gb-pcie"),
    ("gpu_4x_a100", "", "a100-40gb-pcie"),
    ("gpu_8x_a100", "", "a100-40gb-sxm"),
    ("gpu_", "h100_sxm5", "h100-sxm"),
    ("gpu_", "h100_pcie", "h100-pcie"),
    // (gpu_8x_v100: Lambda says "8x Tesla V100 (16 GB)", not SXM2 or PCIe: left ambiguous.)
];

/// The catalog GPU an instance family carries, where the family tells (`p4d.` is the
/// A100 40 GB SXM): for feeds that name no GPU model (the AWS Price List).
pub fn family_gpu(instance_type: &str) -> Option<&'static str> {
    let ty = instance_type.to_lowercase();
    FAMILY_GPUS
        .iter()
        .find(|(prefix, has, _)| ty.starts_with(prefix) && ty.contains(has))
        .map(|(_, _, id)| *id)
}

/// Attached GPUs whose name alone is ambiguous but whose host family tells (GCP N1 V100s
/// are SXM2 16 GB): (prefix of the lowercased type, accelerator name, catalog GPU id).
pub(super) const HOST_GPUS: &[(&str, &str, &str)] = &[("n1-", "V100", "v100-sxm2-16gb")];

/// GCP machine families and the accelerator they carry; the count is the `-<n>g` suffix.
pub(super) const GCP_FAMILIES: &[(&str, &str)] = &[
    ("a2-highgpu-", "A100"),
    ("a2-megagpu-", "A100"),
    ("a2-ultragpu-", "A100-80GB"),
    ("a3-highgpu-", "H100"),
    ("a3-megagpu-", "H100-MEGA"),
];
