//! Gates the `k8s` feature's conversions on the Kubernetes version the application picked.
//!
//! A library must not enable a version feature of k8s-openapi: the application does, and
//! k8s-openapi 0.29 tells its dependents which one through its `links` metadata, as
//! `DEP_K8S_OPENAPI_<crate version>_VERSION` = `0x00_MM_NN_00` (1.36 is `0x00_01_24_00`). This
//! script turns it into the cfgs below, which say which API types exist. Without the `k8s`
//! feature there is no such variable and no cfg is set; the script never fails then.

/// Whether a cfg is set for a Kubernetes 1.x minor version.
type Minors = fn(u32) -> bool;

/// Each cfg, with the Kubernetes minor versions (of k8s-openapi 0.29's 1.33–1.37) it is set for.
const CFGS: &[(&str, Minors)] = &[
    // `PodSpec.schedulingGroup` names a standalone PodGroup.
    ("k8s_pod_scheduling_group", |minor| minor >= 36),
    // `PodSpec.workloadRef` names a Workload's group (1.35 only; no standalone PodGroup).
    ("k8s_pod_workload_ref", |minor| minor == 35),
    // The standalone `PodGroup` API versions.
    ("k8s_pod_group_v1alpha2", |minor| minor == 36),
    ("k8s_pod_group_v1alpha3", |minor| minor == 37),
    ("k8s_pod_group_v1beta1", |minor| minor == 37),
];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for (cfg, _) in CFGS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    if std::env::var_os("CARGO_FEATURE_K8S").is_none() {
        return;
    }
    let Some(value) = std::env::vars().find_map(|(key, value)| {
        (key.starts_with("DEP_K8S_OPENAPI_") && key.ends_with("_VERSION")).then_some(value)
    }) else {
        // k8s-openapi's own build script fails first without a version; this is a guard
        // against a k8s-openapi that stops sending it.
        println!(
            "cargo::error=the k8s feature is on but k8s-openapi sent no DEP_K8S_OPENAPI_*_VERSION"
        );
        return;
    };
    let Ok(version) = value.parse::<u32>() else {
        println!("cargo::error=DEP_K8S_OPENAPI_*_VERSION is {value:?}, not a number");
        return;
    };
    let (major, minor) = ((version >> 16) & 0xff, (version >> 8) & 0xff);
    if major != 1 {
        println!("cargo::error=k8s-openapi picked Kubernetes {major}.{minor}; gangsched knows 1.x");
        return;
    }
    for (cfg, enabled) in CFGS {
        if enabled(minor) {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
