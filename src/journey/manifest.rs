//! The manifest a journey follows: one object of a kind it can follow, read from YAML or JSON.
//! The `journey` command and the TUI's view 4 read files through this one parser, so both
//! refuse the same files in the same words.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::workload;

const KINDS: &str = "Pod, Deployment, ReplicaSet, DaemonSet or StatefulSet";

/// The object in `text` (read from `path`), or what is wrong with it, naming the file.
pub fn parse(text: &str, path: &Path) -> Result<Value, String> {
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(text)
        .map(Value::deserialize)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: not a YAML or JSON manifest: {e}", path.display()))?;
    let docs: Vec<Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    let v = match docs.as_slice() {
        [one] => one.clone(),
        [] => return Err(format!("{}: the file holds no object", path.display())),
        many => {
            return Err(format!(
                "{}: {} YAML documents ({}); a journey follows one object of kind {KINDS}: \
                 give it a file with that object alone",
                path.display(),
                many.len(),
                kinds(many)
            ));
        }
    };
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
    if kind != "Pod" && workload::kind_of(&v).is_none() {
        let what = match v.get("items").and_then(Value::as_array) {
            Some(items) if kind == "List" => {
                format!("a List of {} objects ({})", items.len(), kinds(items))
            }
            _ if kind.is_empty() => "an object with no kind".to_string(),
            _ => format!("a {kind}"),
        };
        return Err(format!(
            "{}: {what}; a journey follows one object of kind {KINDS}",
            path.display()
        ));
    }
    if v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        let what = if kind == "Pod" { "pod" } else { kind };
        return Err(format!(
            "{}: the {what} needs metadata.name",
            path.display()
        ));
    }
    Ok(v)
}

/// The kinds of `objects`, in order, as `Service, StatefulSet`.
fn kinds(objects: &[Value]) -> String {
    let names: Vec<&str> = objects
        .iter()
        .map(|o| o.get("kind").and_then(Value::as_str).unwrap_or("no kind"))
        .collect();
    names.join(", ")
}

/// kubectl's `-n`: puts the object in `ns` when the manifest leaves its namespace open, and
/// refuses, in kubectl's words, one that names another.
pub fn in_namespace(v: &mut Value, ns: &str) -> Result<(), String> {
    let meta = v
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or("the manifest has no metadata")?;
    match meta.get("namespace").and_then(Value::as_str) {
        Some(own) if !own.is_empty() && own != ns => Err(format!(
            "the namespace from the provided object \"{own}\" does not match the namespace \"{ns}\". You must pass '--namespace={own}' to perform this operation."
        )),
        _ => {
            meta.insert("namespace".into(), ns.into());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Value, String> {
        parse(text, Path::new("m.yaml"))
    }

    #[test]
    fn one_followable_object_is_read_and_others_are_named() {
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n";
        assert_eq!(parsed(pod).expect("a pod")["metadata"]["name"], "p");
        assert_eq!(
            parsed(&format!("---\n{pod}---\n")).expect("a pod between separators")["kind"],
            "Pod"
        );
        let two =
            "kind: Service\nmetadata: {name: s}\n---\nkind: StatefulSet\nmetadata: {name: w}\n";
        assert_eq!(
            parsed(two).unwrap_err(),
            "m.yaml: 2 YAML documents (Service, StatefulSet); a journey follows one object of kind \
             Pod, Deployment, ReplicaSet, DaemonSet or StatefulSet: give it a file with that object alone"
        );
        let list = "kind: List\nitems: [{kind: Node}, {kind: Pod}]\n";
        assert_eq!(
            parsed(list).unwrap_err(),
            "m.yaml: a List of 2 objects (Node, Pod); a journey follows one object of kind Pod, \
             Deployment, ReplicaSet, DaemonSet or StatefulSet"
        );
        assert!(
            parsed("kind: ConfigMap\nmetadata: {name: c}\n")
                .unwrap_err()
                .starts_with("m.yaml: a ConfigMap; a journey follows one object of kind Pod")
        );
        assert_eq!(parsed("").unwrap_err(), "m.yaml: the file holds no object");
        assert_eq!(
            parsed("kind: Pod\nmetadata: {}\n").unwrap_err(),
            "m.yaml: the pod needs metadata.name"
        );
        assert!(
            parsed("{")
                .unwrap_err()
                .starts_with("m.yaml: not a YAML or JSON manifest")
        );
    }

    #[test]
    fn dash_n_fills_an_open_namespace_and_refuses_another() {
        let mut open = serde_json::json!({"kind": "Pod", "metadata": {"name": "app"}});
        assert_eq!(in_namespace(&mut open, "shop"), Ok(()));
        assert_eq!(open["metadata"]["namespace"], "shop");
        let mut same = open.clone();
        assert_eq!(in_namespace(&mut same, "shop"), Ok(()));
        let err = in_namespace(&mut open, "other").unwrap_err();
        assert!(
            err.starts_with("the namespace from the provided object \"shop\" does not match the namespace \"other\""),
            "{err}"
        );
        assert_eq!(open["metadata"]["namespace"], "shop");
    }
}
