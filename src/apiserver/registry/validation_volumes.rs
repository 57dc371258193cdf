//! A pod's volumes and its containers' mounts of them (upstream `ValidateVolumes`,
//! `validateVolumeSource` and `ValidateVolumeMounts`): one source per volume, names that are
//! DNS labels and unique, mounts that name a valid volume at a unique path.

use std::collections::HashSet;

use k8s_openapi::api::core::v1::{Container, Volume, VolumeMount};
use serde_json::json;

use crate::apiserver::registry::formats::{self, parse_quantity};
use crate::apiserver::request::status::Cause;

/// The sources upstream checks, in the order it checks them, by the name its field path uses.
/// Only the first one set is validated; each later one is refused.
fn sources(v: &Volume) -> [(&'static str, bool); 30] {
    [
        ("emptyDir", v.empty_dir.is_some()),
        ("hostPath", v.host_path.is_some()),
        ("gitRepo", v.git_repo.is_some()),
        ("gcePersistentDisk", v.gce_persistent_disk.is_some()),
        ("awsElasticBlockStore", v.aws_elastic_block_store.is_some()),
        ("secret", v.secret.is_some()),
        ("nfs", v.nfs.is_some()),
        ("iscsi", v.iscsi.is_some()),
        ("glusterfs", v.glusterfs.is_some()),
        ("flocker", v.flocker.is_some()),
        ("persistentVolumeClaim", v.persistent_volume_claim.is_some()),
        ("rbd", v.rbd.is_some()),
        ("cinder", v.cinder.is_some()),
        ("cephfs", v.cephfs.is_some()),
        ("quobyte", v.quobyte.is_some()),
        // Upstream's own spelling in this one error's path.
        ("downwarAPI", v.downward_api.is_some()),
        ("fc", v.fc.is_some()),
        ("flexVolume", v.flex_volume.is_some()),
        ("configMap", v.config_map.is_some()),
        ("azureFile", v.azure_file.is_some()),
        ("vsphereVolume", v.vsphere_volume.is_some()),
        ("photonPersistentDisk", v.photon_persistent_disk.is_some()),
        ("portworxVolume", v.portworx_volume.is_some()),
        ("azureDisk", v.azure_disk.is_some()),
        ("storageos", v.storageos.is_some()),
        ("projected", v.projected.is_some()),
        ("scaleIO", v.scale_io.is_some()),
        ("csi", v.csi.is_some()),
        ("ephemeral", v.ephemeral.is_some()),
        ("image", v.image.is_some()),
    ]
}

const MODE_RANGE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

fn source(v: &Volume, path: &str, out: &mut Vec<Cause>) {
    let mut first = None;
    for (name, set) in sources(v) {
        if !set {
            continue;
        }
        if first.is_none() {
            first = Some(name);
        } else {
            out.push(Cause::forbidden(
                &format!("{path}.{name}"),
                "may not specify more than 1 volume type",
            ));
        }
    }
    let mode = |m: Option<i32>, field: &str, out: &mut Vec<Cause>| {
        if let Some(m) = m.filter(|m| !(0..=0o777).contains(m)) {
            out.push(Cause::invalid(field, &json!(m), MODE_RANGE));
        }
    };
    match first {
        None => out.push(Cause::required(path, "must specify a volume type")),
        Some("emptyDir") => {
            let limit = v.empty_dir.as_ref().and_then(|e| e.size_limit.as_ref());
            if limit
                .and_then(|q| parse_quantity(&q.0))
                .is_some_and(|q| q < 0.0)
            {
                out.push(Cause::forbidden(
                    &format!("{path}.emptyDir.sizeLimit"),
                    "SizeLimit field must be a valid resource quantity",
                ));
            }
        }
        Some("hostPath") => {
            let hp = v.host_path.as_ref().expect("set");
            let f = format!("{path}.hostPath");
            if hp.path.is_empty() {
                out.push(Cause::required(&format!("{f}.path"), ""));
                return;
            }
            if hp.path.split('/').any(|e| e == "..") {
                out.push(Cause::invalid(
                    &format!("{f}.path"),
                    &json!(hp.path),
                    "must not contain '..'",
                ));
            }
            const TYPES: [&str; 8] = [
                "",
                "BlockDevice",
                "CharDevice",
                "Directory",
                "DirectoryOrCreate",
                "File",
                "FileOrCreate",
                "Socket",
            ];
            if let Some(t) = hp.type_.as_deref().filter(|t| !TYPES.contains(t)) {
                out.push(Cause::not_supported(
                    &format!("{f}.type"),
                    &json!(t),
                    &TYPES,
                ));
            }
        }
        Some("secret") => {
            let s = v.secret.as_ref().expect("set");
            let f = format!("{path}.secret");
            if s.secret_name.as_deref().unwrap_or_default().is_empty() {
                out.push(Cause::required(&format!("{f}.secretName"), ""));
            }
            mode(s.default_mode, &format!("{f}.defaultMode"), out);
        }
        Some("configMap") => {
            let c = v.config_map.as_ref().expect("set");
            let f = format!("{path}.configMap");
            if c.name.is_empty() {
                out.push(Cause::required(&format!("{f}.name"), ""));
            }
            mode(c.default_mode, &format!("{f}.defaultMode"), out);
        }
        Some("persistentVolumeClaim") => {
            let c = v.persistent_volume_claim.as_ref().expect("set");
            if c.claim_name.is_empty() {
                out.push(Cause::required(
                    &format!("{path}.persistentVolumeClaim.claimName"),
                    "",
                ));
            }
        }
        Some(_) => {}
    }
}

/// Every cause of `spec.volumes`, and the names of the valid volumes: the only ones a mount
/// may name (an invalid volume is left out, so a later one of its name is not a duplicate).
pub(crate) fn validate_volumes(volumes: &[Volume], out: &mut Vec<Cause>) -> HashSet<String> {
    let mut valid = HashSet::new();
    for (i, v) in volumes.iter().enumerate() {
        let path = format!("spec.volumes[{i}]");
        let mut errs = Vec::new();
        source(v, &path, &mut errs);
        let name = format!("{path}.name");
        if v.name.is_empty() {
            errs.push(Cause::required(&name, ""));
        } else {
            for m in formats::dns1123_label(&v.name) {
                errs.push(Cause::invalid(&name, &json!(v.name), &m));
            }
        }
        if valid.contains(&v.name) {
            errs.push(Cause::duplicate(&name, &json!(v.name)));
        }
        if errs.is_empty() {
            valid.insert(v.name.clone());
        } else {
            out.append(&mut errs);
        }
    }
    valid
}

/// A path inside the volume: relative, and never climbing out of it.
fn sub_path(field: &str, p: &str, out: &mut Vec<Cause>) {
    if p.starts_with('/') {
        out.push(Cause::invalid(field, &json!(p), "must be a relative path"));
    }
    if p.split('/').any(|e| e == "..") {
        out.push(Cause::invalid(field, &json!(p), "must not contain '..'"));
    }
}

/// `ValidateVolumeMounts` for the container at `path` (`spec.containers[0]`). Upstream reports
/// the subPath checks at the list (`…volumeMounts.subPath`), not at the mount.
pub(crate) fn validate_volume_mounts(
    c: &Container,
    path: &str,
    volumes: &HashSet<String>,
    out: &mut Vec<Cause>,
) {
    let list = format!("{path}.volumeMounts");
    let mut paths = HashSet::new();
    for (j, m) in c.volume_mounts.iter().flatten().enumerate() {
        let VolumeMount {
            name, mount_path, ..
        } = m;
        let idx = format!("{list}[{j}]");
        if name.is_empty() {
            out.push(Cause::required(&format!("{idx}.name"), ""));
        }
        if !volumes.contains(name) {
            out.push(Cause::not_found(&format!("{idx}.name"), &json!(name)));
        }
        if mount_path.is_empty() {
            out.push(Cause::required(&format!("{idx}.mountPath"), ""));
        }
        if !paths.insert(mount_path.as_str()) {
            out.push(Cause::invalid(
                &format!("{idx}.mountPath"),
                &json!(mount_path),
                "must be unique",
            ));
        }
        if let Some(p) = m.sub_path.as_deref().filter(|p| !p.is_empty()) {
            sub_path(&format!("{list}.subPath"), p, out);
        }
        if let Some(p) = m.sub_path_expr.as_deref().filter(|p| !p.is_empty()) {
            if m.sub_path.as_deref().is_some_and(|s| !s.is_empty()) {
                out.push(Cause::invalid(
                    &format!("{idx}.subPathExpr"),
                    &json!(p),
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            sub_path(&format!("{list}.subPathExpr"), p, out);
        }
        const PROPAGATION: [&str; 3] = ["Bidirectional", "HostToContainer", "None"];
        if let Some(mp) = m.mount_propagation.as_deref() {
            let field = format!("{list}.mountPropagation");
            if !PROPAGATION.contains(&mp) {
                out.push(Cause::not_supported(&field, &json!(mp), &PROPAGATION));
            } else if mp == "Bidirectional"
                && !c
                    .security_context
                    .as_ref()
                    .and_then(|s| s.privileged)
                    .unwrap_or(false)
            {
                out.push(Cause::forbidden(
                    &field,
                    "Bidirectional mount propagation is available only to privileged containers",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn volumes(v: serde_json::Value) -> (Vec<String>, HashSet<String>) {
        let vols: Vec<Volume> = serde_json::from_value(v).unwrap();
        let mut out = Vec::new();
        let valid = validate_volumes(&vols, &mut out);
        (out.iter().map(Cause::rendered).collect(), valid)
    }

    fn mounts(c: serde_json::Value, valid: &[&str]) -> Vec<String> {
        let c: Container = serde_json::from_value(c).unwrap();
        let valid = valid.iter().map(|s| s.to_string()).collect();
        let mut out = Vec::new();
        validate_volume_mounts(&c, "spec.containers[0]", &valid, &mut out);
        out.iter().map(Cause::rendered).collect()
    }

    #[test]
    fn a_volume_needs_one_source_and_a_unique_label_name() {
        let (errs, valid) = volumes(json!([
            {"name": "data", "emptyDir": {}},
            {"name": "data", "emptyDir": {}},
            {"name": "none"},
            {"name": "two", "emptyDir": {}, "hostPath": {"path": "/x"}},
            {"name": "Bad_Name", "configMap": {"name": "c"}},
            {"name": "a.b", "secret": {"secretName": "s", "defaultMode": 1000}},
            {"name": "claim", "persistentVolumeClaim": {"claimName": ""}},
        ]));
        assert_eq!(
            errs,
            [
                "spec.volumes[1].name: Duplicate value: \"data\"",
                "spec.volumes[2]: Required value: must specify a volume type",
                "spec.volumes[3].hostPath: Forbidden: may not specify more than 1 volume type",
                format!(
                    "spec.volumes[4].name: Invalid value: \"Bad_Name\": {}",
                    formats::DNS1123_LABEL
                )
                .as_str(),
                "spec.volumes[5].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive",
                "spec.volumes[5].name: Invalid value: \"a.b\": must not contain dots",
                "spec.volumes[6].persistentVolumeClaim.claimName: Required value",
            ]
        );
        assert_eq!(valid, HashSet::from(["data".to_string()]));
    }

    #[test]
    fn a_later_volume_named_as_an_invalid_one_is_no_duplicate() {
        let (errs, valid) = volumes(json!([{"name": "x"}, {"name": "x", "emptyDir": {}}]));
        assert_eq!(
            errs,
            ["spec.volumes[0]: Required value: must specify a volume type"]
        );
        assert!(valid.contains("x"));
    }

    #[test]
    fn mounts_name_a_valid_volume_at_a_unique_path() {
        let errs = mounts(
            json!({"name": "c", "volumeMounts": [
                {"name": "data", "mountPath": "/d"},
                {"name": "nope", "mountPath": "/d"},
                {"name": "data", "mountPath": "", "subPath": "/abs/../x"},
                {"name": "data", "mountPath": "/p", "mountPropagation": "Bidirectional"},
            ]}),
            &["data"],
        );
        assert_eq!(
            errs,
            [
                "spec.containers[0].volumeMounts[1].name: Not found: \"nope\"",
                "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/d\": must be unique",
                "spec.containers[0].volumeMounts[2].mountPath: Required value",
                "spec.containers[0].volumeMounts.subPath: Invalid value: \"/abs/../x\": must be a relative path",
                "spec.containers[0].volumeMounts.subPath: Invalid value: \"/abs/../x\": must not contain '..'",
                "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers",
            ]
        );
        assert!(
            mounts(
                json!({"name": "c", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}),
                &["data"]
            )
            .is_empty()
        );
    }
}
