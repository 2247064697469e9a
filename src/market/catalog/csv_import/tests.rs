//! The CSV import's unit tests.

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let d = dir.join("aws");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn columns_by_header_zones_merged_and_faults_caught() {
    let dir = tempfile::tempdir().unwrap();
    // Column order differs from SkyPilot's AWS file on purpose.
    let p = write(
        dir.path(),
        "vms.csv",
        "Region,AvailabilityZone,InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice\n\
         us-east-1,use1-az1,p4d.24xlarge,A100,8,96,1152,,21.957642,7.88\n\
         us-east-1,use1-az2,p4d.24xlarge,A100,8,96,1152,,21.957642,8.19\n\
         us-east-1,use1-az3,p4d.24xlarge,A100,8,96,1152,,21.957642,2.4655\n\
         eastus,z1,Standard_ND96isr_H100_v5,H100,12,96,1900,,98.32,98.32\n\
         eastus,z1,Standard_NC24ads_A100_v4,A100-80GB,1,24,220,,3.673,0.444433\n\
         eastus,z1,Custom_A100_box,A100-80GB,1,24,220,,3.673,0.444433\n",
    );
    let mut c = Catalog::embedded();
    c.instances.clear();
    c.origins.clear();
    c.extend(import(&p, "2026-11").unwrap());
    let p4d = c
        .instances
        .iter()
        .find(|i| i.instance_type == "p4d.24xlarge")
        .unwrap();
    assert_eq!(p4d.provider, "aws");
    assert_eq!((p4d.gpu.as_str(), p4d.gpu_count), ("a100-40gb-sxm", 8));
    // Median of the zones, not the 2.4655 outlier.
    assert_eq!(p4d.prices[&PricingModel::Spot].amount, 7.88);
    let f: Vec<String> = c.check().iter().map(|x| x.to_string()).collect();
    assert!(
        f.iter()
            .any(|x| x.contains("Standard_ND96isr_H100_v5") && x.contains("no spot data")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|x| x.contains("line 5, column AcceleratorCount")
                && x.contains("Standard_ND96isr_H100_v5")
                && x.contains("has 8")),
        "{f:?}"
    );
    // The family tells which A100-80GB the NC A100 v4 has; for an unknown family the
    // name mapping assumes the PCIe card of a 1-GPU instance, and the row says so.
    let nc = c
        .instances
        .iter()
        .find(|i| i.instance_type == "Standard_NC24ads_A100_v4")
        .unwrap();
    assert_eq!(nc.gpu, "a100-80gb-pcie");
    let custom = c
        .instances
        .iter()
        .find(|i| i.instance_type == "Custom_A100_box")
        .unwrap();
    assert_eq!(custom.gpu, "a100-80gb-pcie");
    let notes = custom.notes.as_deref().unwrap_or("");
    assert!(notes.contains("assumed a100-80gb-pcie"), "{notes}");
}

#[test]
fn crlf_lines_are_numbered_as_an_editor_shows_them_and_fractions_refused() {
    let text = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region\r\n\
                p3.2xlarge,V100,1,8,61,3.06,us-east-1\r\n\
                p3.2xlarge,V100,1,8,61,-1,us-west-2\r\n\
                half,A100,0.5,4,30.5,0.9,us-west-2\r\n";
    let c = parse(text.as_bytes(), "crlf.csv", "x", "2026-12-01").unwrap();
    let f: Vec<String> = c.load_findings.iter().map(|x| x.to_string()).collect();
    assert!(
        f.iter()
            .any(|x| x.contains("line 3, column Price") && x.contains("negative")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|x| x.contains("line 4, column AcceleratorCount") && x.contains("0.5 of a GPU")),
        "{f:?}"
    );
    assert!(c.instances.iter().all(|i| i.instance_type != "half"));
}

#[test]
fn gcp_host_and_gpu_rows_are_summed() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "gcp.csv",
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone\n\
         a2-highgpu-1g,,,12,85,0.73948,0.2,us-central1,us-central1-a\n\
         ,A100,1,,,2.93391,1.60385,us-central1,us-central1-a\n\
         ,A100,2,,,5.86782,3.2077,us-central1,us-central1-a\n",
    );
    let c = import(&p, "2026-11").unwrap();
    assert_eq!(c.instances.len(), 1);
    let a2 = &c.instances[0];
    assert_eq!((a2.gpu.as_str(), a2.gpu_count), ("a100-40gb-sxm", 1));
    assert!((a2.prices[&PricingModel::OnDemand].amount - 3.67339).abs() < 1e-9);
    assert!((a2.prices[&PricingModel::Spot].amount - 1.80385).abs() < 1e-9);
}

#[test]
fn missing_columns_and_bad_numbers_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "a.csv", "InstanceType,Price,Region\nx,1,r\n");
    let e = import(&p, "2026").unwrap_err().to_string();
    assert!(e.contains("AcceleratorName"), "{e}");
    let p = write(
        dir.path(),
        "b.csv",
        "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx,T4,1,cheap,r\n",
    );
    let e = import(&p, "2026").unwrap_err().to_string();
    assert!(
        e.contains("line 2") && e.contains("Price") && e.contains("cheap"),
        "{e}"
    );
}

#[test]
fn a_region_list_with_empty_parts_reads_as_people_write_it() {
    assert_eq!(super::region_name(", US, NA"), "US, NA");
    assert_eq!(super::region_name("Sweden, SE, EU"), "Sweden, SE, EU");
    assert_eq!(super::region_name(" "), "unstated");
    assert_eq!(super::region_name("us-east-1"), "us-east-1");
}
