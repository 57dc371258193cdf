//! What kube-controller-manager's in-tree volume plugins answer the PersistentVolume controller
//! (upstream `cmd/kube-controller-manager/app/plugins.go`, `pkg/volume/plugins.go`): since the
//! cloud plugins moved to CSI it carries hostPath, nfs, local and csi. Only hostPath can delete a
//! volume, and only one under `/tmp/`; none provisions unless the manager is started with
//! `--enable-hostpath-provisioner`. Everything else is an external provisioner's job.

use serde_json::Value;

use crate::apiserver::controllers::workload::s;

pub(crate) const ANN_PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";
const ANN_MIGRATED_TO: &str = "pv.kubernetes.io/migrated-to";

const HOST_PATH: &str = "kubernetes.io/host-path";
/// The plugins kube-controller-manager loads that neither provision nor delete.
const NEITHER: [&str; 3] = [
    "kubernetes.io/nfs",
    "kubernetes.io/local-volume",
    "kubernetes.io/csi",
];
/// The volume sources those plugins support, by their field in a PersistentVolume's spec.
const NEITHER_SOURCES: [&str; 3] = ["nfs", "local", "csi"];
/// In-tree names whose volumes CSI migration hands to a CSI driver, an external provisioner.
const MIGRATED: [&str; 7] = [
    "kubernetes.io/aws-ebs",
    "kubernetes.io/gce-pd",
    "kubernetes.io/cinder",
    "kubernetes.io/azure-disk",
    "kubernetes.io/azure-file",
    "kubernetes.io/vsphere-volume",
    "kubernetes.io/portworx-volume",
];

/// What reclaiming a Released volume with policy Delete does (`deleteVolumeOperation`).
#[derive(Debug, PartialEq)]
pub(crate) enum Reclaim {
    /// An external provisioner deletes it; the controller leaves it Released.
    External,
    /// The hostPath deleter removes the directory, then the controller deletes the volume.
    Delete,
    /// No deleter: the volume goes Failed with this message, and a VolumeFailedDelete event.
    Fail(String),
}

/// `findDeletablePlugin`, then the deleter's own check.
pub(crate) fn reclaim_delete(pv: &Value) -> Reclaim {
    let annotation = |k: &str| {
        pv.pointer("/metadata/annotations")
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    if !annotation(ANN_MIGRATED_TO).is_empty() {
        return Reclaim::External;
    }
    let by = annotation(ANN_PROVISIONED_BY);
    if !by.is_empty() && by != HOST_PATH {
        // The plugin that provisioned it, looked up by name.
        return if !by.starts_with("kubernetes.io/") || MIGRATED.contains(&by) {
            Reclaim::External
        } else if NEITHER.contains(&by) {
            Reclaim::Fail("no deletable volume plugin matched".into())
        } else {
            Reclaim::Fail(format!("no volume plugin matched name: {by}"))
        };
    }
    let spec = pv.get("spec");
    if let Some(path) = spec
        .and_then(|sp| sp.get("hostPath"))
        .map(|h| s(h, "/path"))
    {
        // The deleter's `regexp.MatchString("/tmp/.+")`: anywhere in the path.
        return if path
            .find("/tmp/")
            .is_some_and(|i| i + "/tmp/".len() < path.len())
        {
            Reclaim::Delete
        } else {
            Reclaim::Fail(format!(
                "host_path deleter only supports /tmp/.+ but received provided {path}"
            ))
        };
    }
    let why = if NEITHER_SOURCES
        .iter()
        .any(|k| spec.and_then(|sp| sp.get(*k)).is_some_and(|v| !v.is_null()))
    {
        "no deletable volume plugin matched"
    } else {
        "no volume plugin matched"
    };
    Reclaim::Fail(format!(
        "error getting deleter volume plugin for volume \"{}\": {why}",
        s(pv, "/metadata/name")
    ))
}

/// Why the PersistentVolume controller provisions nothing for a class, in its
/// ProvisioningFailed words.
#[derive(Debug, PartialEq)]
pub(crate) enum Refusal {
    /// `findProvisionablePlugin` found no plugin of that in-tree name: the claim is left as it is.
    NoPlugin(String),
    /// The plugin was found and the claim annotated with it, but it would not provision.
    Disabled(String),
}

/// What becomes of a claim of a class naming `provisioner`: None when it is external (the claim
/// waits for it), else why no in-tree plugin provisions it.
pub(crate) fn cannot_provision(provisioner: &str) -> Option<Refusal> {
    if !provisioner.starts_with("kubernetes.io/") || MIGRATED.contains(&provisioner) {
        return None;
    }
    Some(if provisioner == HOST_PATH {
        // Without --enable-hostpath-provisioner, as every cluster but a test one runs.
        Refusal::Disabled(format!(
            "Failed to create provisioner: provisioning in volume plugin \"{HOST_PATH}\" is disabled"
        ))
    } else if NEITHER.contains(&provisioner) {
        Refusal::NoPlugin("no provisionable volume plugin matched".into())
    } else {
        Refusal::NoPlugin(format!("no volume plugin matched name: {provisioner}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pv(spec: Value, annotations: Value) -> Value {
        json!({"metadata": {"name": "pv1", "annotations": annotations}, "spec": spec})
    }

    #[test]
    fn static_volumes_fail_as_upstreams_controller_reports() {
        let cases = [
            (json!({"hostPath": {"path": "/tmp/data"}}), Reclaim::Delete),
            (json!({"hostPath": {"path": "/srv/tmp/x"}}), Reclaim::Delete),
            (
                json!({"hostPath": {"path": "/mnt/data"}}),
                Reclaim::Fail(
                    "host_path deleter only supports /tmp/.+ but received provided /mnt/data"
                        .into(),
                ),
            ),
            (
                json!({"hostPath": {"path": "/tmp/"}}),
                Reclaim::Fail(
                    "host_path deleter only supports /tmp/.+ but received provided /tmp/".into(),
                ),
            ),
            (
                json!({"local": {"path": "/mnt/disks/a"}}),
                Reclaim::Fail(
                    "error getting deleter volume plugin for volume \"pv1\": no deletable volume plugin matched".into(),
                ),
            ),
            (
                json!({"csi": {"driver": "d", "volumeHandle": "h"}}),
                Reclaim::Fail(
                    "error getting deleter volume plugin for volume \"pv1\": no deletable volume plugin matched".into(),
                ),
            ),
            (
                json!({"iscsi": {"targetPortal": "t", "iqn": "i", "lun": 0}}),
                Reclaim::Fail(
                    "error getting deleter volume plugin for volume \"pv1\": no volume plugin matched".into(),
                ),
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(reclaim_delete(&pv(spec.clone(), json!({}))), want, "{spec}");
        }
    }

    #[test]
    fn provisioned_volumes_are_their_provisioners_to_delete() {
        let local = json!({"local": {"path": "/mnt/disks/a"}});
        for (by, want) in [
            ("kexplore.dev/hostpath", Reclaim::External),
            ("rancher.io/local-path", Reclaim::External),
            ("kubernetes.io/aws-ebs", Reclaim::External),
            (
                "kubernetes.io/local-volume",
                Reclaim::Fail("no deletable volume plugin matched".into()),
            ),
            (
                "kubernetes.io/no-provisioner",
                Reclaim::Fail("no volume plugin matched name: kubernetes.io/no-provisioner".into()),
            ),
        ] {
            let v = pv(local.clone(), json!({ANN_PROVISIONED_BY: by}));
            assert_eq!(reclaim_delete(&v), want, "{by}");
        }
        let migrated = pv(local, json!({ANN_MIGRATED_TO: "ebs.csi.aws.com"}));
        assert_eq!(reclaim_delete(&migrated), Reclaim::External);
    }

    #[test]
    fn in_tree_names_no_plugin_provisions() {
        assert_eq!(
            cannot_provision("kubernetes.io/no-provisioner"),
            Some(Refusal::NoPlugin(
                "no volume plugin matched name: kubernetes.io/no-provisioner".into()
            ))
        );
        assert_eq!(
            cannot_provision("kubernetes.io/nfs"),
            Some(Refusal::NoPlugin(
                "no provisionable volume plugin matched".into()
            ))
        );
        assert_eq!(
            cannot_provision("kubernetes.io/host-path"),
            Some(Refusal::Disabled(
                "Failed to create provisioner: provisioning in volume plugin \"kubernetes.io/host-path\" is disabled".into()
            ))
        );
        for external in [
            "kexplore.dev/hostpath",
            "rancher.io/local-path",
            "kubernetes.io/gce-pd",
        ] {
            assert_eq!(cannot_provision(external), None, "{external}");
        }
    }
}
