//! What a pod reads from the store before its containers can start, checked as a kubelet
//! does: its ConfigMap and Secret volumes, projected ones too (upstream's volume manager: the
//! pod waits in ContainerCreating with FailedMount events), and each container's environment
//! taken from them (`makeEnvironmentVariables`: the container waits with
//! CreateContainerConfigError). The words are upstream's: the kubelet's ConfigMap and Secret
//! managers name the resource in the singular (`configmap "app" not found`).

use serde_json::Value;

use crate::apiserver::request::context::Api;
use crate::apiserver::util::At;

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.at(p).and_then(Value::as_str).unwrap_or_default()
}

/// The elements of the array at `key` (none when absent).
fn items<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn optional(v: &Value) -> bool {
    v.get("optional").and_then(Value::as_bool) == Some(true)
}

/// The two kinds a pod may read, as the kubelet names them.
#[derive(Clone, Copy)]
enum Source {
    ConfigMap,
    Secret,
}

impl Source {
    fn fetch(self, api: &Api, ns: &str, name: &str) -> Option<std::sync::Arc<Value>> {
        let plural = match self {
            Source::ConfigMap => "configmaps",
            Source::Secret => "secrets",
        };
        api.store.get(&format!("/registry/{plural}/{ns}/{name}"))
    }

    fn not_found(self, name: &str) -> String {
        match self {
            Source::ConfigMap => format!("configmap {name:?} not found"),
            Source::Secret => format!("secret {name:?} not found"),
        }
    }

    /// Whether the object holds `key` (a ConfigMap in `data` or `binaryData`).
    fn has(self, obj: &Value, key: &str) -> bool {
        let in_map = |field: &str| obj.get(field).and_then(|d| d.get(key)).is_some();
        match self {
            Source::ConfigMap => in_map("data") || in_map("binaryData"),
            Source::Secret => in_map("data"),
        }
    }

    /// A volume's `items` naming a key the object lacks.
    fn missing_item(self, key: &str) -> String {
        match self {
            Source::ConfigMap => format!("configmap references non-existent config key: {key}"),
            Source::Secret => format!("references non-existent secret key: {key}"),
        }
    }

    /// An env var's key the object lacks.
    fn missing_key(self, key: &str, ns: &str, name: &str) -> String {
        match self {
            Source::ConfigMap => format!("couldn't find key {key} in ConfigMap {ns}/{name}"),
            Source::Secret => format!("couldn't find key {key} in Secret {ns}/{name}"),
        }
    }
}

/// One ConfigMap or Secret a volume projects: why it cannot be set up, if it cannot.
fn volume_source(api: &Api, ns: &str, kind: Source, name: &str, src: &Value) -> Option<String> {
    let Some(obj) = kind.fetch(api, ns, name) else {
        return (!optional(src)).then(|| kind.not_found(name));
    };
    let items = src.get("items").and_then(Value::as_array)?;
    items
        .iter()
        .map(|i| s(i, "/key"))
        .find(|k| !kind.has(&obj, k) && !optional(src))
        .map(|k| kind.missing_item(k))
}

/// The first volume the kubelet cannot set up, as its FailedMount event says it:
/// `MountVolume.SetUp failed for volume "cfg" : configmap "app" not found`.
pub(crate) fn failed_mount(api: &Api, pod: &Value) -> Option<String> {
    let ns = s(pod, "/metadata/namespace");
    let volumes = pod.at("/spec/volumes").and_then(Value::as_array)?;
    // The ConfigMap and Secret a volume, or one of its projected sources, names: a Secret
    // volume names its object `secretName`, a projected Secret source `name`.
    let sources = |holder: &Value, secret_name: &str| -> Vec<String> {
        let mut out = Vec::new();
        if let Some(cm) = holder.get("configMap") {
            out.extend(volume_source(
                api,
                ns,
                Source::ConfigMap,
                s(cm, "/name"),
                cm,
            ));
        }
        if let Some(sec) = holder.get("secret") {
            out.extend(volume_source(
                api,
                ns,
                Source::Secret,
                s(sec, secret_name),
                sec,
            ));
        }
        out
    };
    volumes.iter().find_map(|v| {
        let mut errors = sources(v, "/secretName");
        for src in v
            .at("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            errors.extend(sources(src, "/name"));
        }
        // A projected volume gathers every source's error, as utilerrors.NewAggregate prints
        // them: one alone as it is, several in brackets.
        let why = match errors.len() {
            0 => return None,
            1 => errors.remove(0),
            _ => format!("[{}]", errors.join(", ")),
        };
        Some(format!(
            "MountVolume.SetUp failed for volume {:?} : {why}",
            s(v, "/name")
        ))
    })
}

/// Why the kubelet cannot make `container`'s environment (CreateContainerConfigError's
/// message), if it cannot: a ConfigMap or Secret it names is missing, or lacks the key.
pub(crate) fn config_error(api: &Api, pod: &Value, container: &Value) -> Option<String> {
    let ns = s(pod, "/metadata/namespace");
    for from in items(container, "envFrom") {
        for (field, kind) in [
            ("configMapRef", Source::ConfigMap),
            ("secretRef", Source::Secret),
        ] {
            if let Some(r) = from.get(field) {
                let name = s(r, "/name");
                if kind.fetch(api, ns, name).is_none() && !optional(r) {
                    return Some(kind.not_found(name));
                }
            }
        }
    }
    for env in items(container, "env") {
        for (field, kind) in [
            ("configMapKeyRef", Source::ConfigMap),
            ("secretKeyRef", Source::Secret),
        ] {
            let Some(r) = env.at("/valueFrom").and_then(|f| f.get(field)) else {
                continue;
            };
            let (name, key) = (s(r, "/name"), s(r, "/key"));
            match kind.fetch(api, ns, name) {
                None if !optional(r) => return Some(kind.not_found(name)),
                Some(obj) if !kind.has(&obj, key) && !optional(r) => {
                    return Some(kind.missing_key(key, ns, name));
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::filters::authn::TokenFile;
    use crate::apiserver::storage::store::Write;
    use serde_json::json;

    fn api_with(objects: &[(&str, Value)]) -> Api {
        let api = Api::new(TokenFile::default(), None);
        for (key, v) in objects {
            api.store
                .create(key, v.clone(), Write::Commit)
                .expect("create");
        }
        api
    }

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})
    }

    #[test]
    fn volumes_as_the_kubelet_mounts_them() {
        let api = api_with(&[
            (
                "/registry/configmaps/default/cfg",
                json!({"metadata": {"name": "cfg"}, "data": {"a": "1"}, "binaryData": {"b": "AA=="}}),
            ),
            (
                "/registry/secrets/default/sec",
                json!({"metadata": {"name": "sec"}, "data": {"t": "eA=="}}),
            ),
        ]);
        let vol = |v: Value| failed_mount(&api, &pod(json!({"volumes": [v]})));
        assert_eq!(
            vol(json!({"name": "v", "configMap": {"name": "cfg"}})),
            None
        );
        assert_eq!(
            vol(json!({"name": "v", "configMap": {"name": "nope"}})).as_deref(),
            Some(r#"MountVolume.SetUp failed for volume "v" : configmap "nope" not found"#)
        );
        assert_eq!(
            vol(json!({"name": "v", "configMap": {"name": "nope", "optional": true}})),
            None
        );
        assert_eq!(
            vol(json!({"name": "v", "configMap": {"name": "cfg", "items": [{"key": "b", "path": "b"}, {"key": "c", "path": "c"}]}})).as_deref(),
            Some(r#"MountVolume.SetUp failed for volume "v" : configmap references non-existent config key: c"#)
        );
        assert_eq!(
            vol(json!({"name": "s", "secret": {"secretName": "gone"}})).as_deref(),
            Some(r#"MountVolume.SetUp failed for volume "s" : secret "gone" not found"#)
        );
        assert_eq!(
            vol(json!({"name": "s", "secret": {"secretName": "sec", "items": [{"key": "u", "path": "u"}]}})).as_deref(),
            Some(r#"MountVolume.SetUp failed for volume "s" : references non-existent secret key: u"#)
        );
        // The service-account volume admission adds, before the root CA publisher has run.
        assert_eq!(
            vol(json!({"name": "kube-api-access-x", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}))
            .as_deref(),
            Some(r#"MountVolume.SetUp failed for volume "kube-api-access-x" : configmap "kube-root-ca.crt" not found"#)
        );
        assert_eq!(
            vol(json!({"name": "both", "projected": {"sources": [
                {"configMap": {"name": "a"}}, {"secret": {"name": "b"}}]}}))
            .as_deref(),
            Some(
                r#"MountVolume.SetUp failed for volume "both" : [configmap "a" not found, secret "b" not found]"#
            )
        );
        assert_eq!(vol(json!({"name": "e", "emptyDir": {}})), None);
    }

    #[test]
    fn environment_as_the_kubelet_makes_it() {
        let api = api_with(&[
            (
                "/registry/configmaps/default/cfg",
                json!({"metadata": {"name": "cfg"}, "data": {"a": "1"}}),
            ),
            (
                "/registry/secrets/default/sec",
                json!({"metadata": {"name": "sec"}, "data": {"t": "eA=="}}),
            ),
        ]);
        let p = pod(json!({}));
        let env = |c: Value| config_error(&api, &p, &c);
        let key_ref = |field: &str, name: &str, key: &str, optional: bool| json!({"name": "c", "env": [{"name": "X", "valueFrom": {field: {"name": name, "key": key, "optional": optional}}}]});
        assert_eq!(env(key_ref("configMapKeyRef", "cfg", "a", false)), None);
        assert_eq!(
            env(key_ref("configMapKeyRef", "nope", "a", false)).as_deref(),
            Some(r#"configmap "nope" not found"#)
        );
        assert_eq!(env(key_ref("configMapKeyRef", "nope", "a", true)), None);
        assert_eq!(
            env(key_ref("configMapKeyRef", "cfg", "b", false)).as_deref(),
            Some("couldn't find key b in ConfigMap default/cfg")
        );
        assert_eq!(
            env(key_ref("secretKeyRef", "sec", "u", false)).as_deref(),
            Some("couldn't find key u in Secret default/sec")
        );
        assert_eq!(
            env(key_ref("secretKeyRef", "gone", "u", false)).as_deref(),
            Some(r#"secret "gone" not found"#)
        );
        assert_eq!(
            env(json!({"name": "c", "envFrom": [{"secretRef": {"name": "gone"}}]})).as_deref(),
            Some(r#"secret "gone" not found"#)
        );
        assert_eq!(
            env(
                json!({"name": "c", "envFrom": [{"configMapRef": {"name": "gone", "optional": true}}, {"configMapRef": {"name": "cfg"}}]})
            ),
            None
        );
        assert_eq!(
            env(
                json!({"name": "c", "env": [{"name": "A", "value": "1"}, {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]})
            ),
            None
        );
    }
}
