//! Update validation (upstream `BeforeUpdate`, `ValidateObjectMetaAccessorUpdate`,
//! `ValidatePodUpdate`, `ValidatePodStatusUpdate`): what an update may change, what it silently
//! may not, and the 422 causes for the rest, with kube-apiserver's field paths and texts.
//! Objects are compared as JSON after the same decoding and defaulting on both sides.

use serde_json::{Map, Value, json};

use crate::apiserver::registry::{go_zero, validation_meta};
use crate::apiserver::request::status::Cause;

/// The fields a pod update may change, as upstream's `updatablePodSpecFields` lists them.
pub(crate) const UPDATABLE_POD_SPEC_FIELDS: [&str; 5] = [
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

const IMMUTABLE: &str = "field is immutable";

/// `BeforeUpdate`'s silent part: the uid when the update has none, and a deletion already
/// under way, are taken from the stored object rather than refused. (creationTimestamp and
/// generation are always taken from it: `kinds::merge_update`.)
pub(crate) fn before_update(next: &mut Value, old: &Value) {
    let Some(meta) = next
        .as_object_mut()
        .map(|o| o.entry("metadata").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let old_meta = |k: &str| {
        old.pointer(&format!("/metadata/{k}"))
            .filter(|v| !v.is_null())
    };
    if meta
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
        && let Some(uid) = old_meta("uid")
    {
        meta.insert("uid".into(), uid.clone());
    }
    if let Some(t) = old_meta("deletionTimestamp") {
        meta.insert("deletionTimestamp".into(), t.clone());
    }
    if meta
        .get("deletionGracePeriodSeconds")
        .is_none_or(Value::is_null)
        && let Some(g) = old_meta("deletionGracePeriodSeconds")
    {
        meta.insert("deletionGracePeriodSeconds".into(), g.clone());
    }
}

/// `ValidateObjectMetaAccessorUpdate`, for every kind.
pub(crate) fn validate_object_meta_update(new: &Value, old: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let get = |v: &'_ Value, k: &str| -> Value {
        v.pointer(&format!("/metadata/{k}"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    if !get(old, "deletionTimestamp").is_null() {
        let strings = |v: Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        };
        let before = strings(get(old, "finalizers"));
        let mut added: Vec<String> = strings(get(new, "finalizers"))
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        added.sort();
        added.dedup();
        if !added.is_empty() {
            let list: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
            out.push(Cause::forbidden(
                "metadata.finalizers",
                &format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    list.join(", ")
                ),
            ));
        }
    }
    if get(new, "resourceVersion")
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        out.push(Cause::invalid(
            "metadata.resourceVersion",
            &json!(""),
            "must be specified for an update",
        ));
    }
    let generation = |v: &Value| get(v, "generation").as_i64().unwrap_or(0);
    if generation(new) < generation(old) {
        out.push(Cause::invalid(
            "metadata.generation",
            &json!(generation(new)),
            "must not be decremented",
        ));
    }
    for k in ["name", "namespace", "uid"] {
        let (n, o) = (get(new, k), get(old, k));
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        if text(&n) != text(&o) {
            out.push(Cause::invalid(
                &format!("metadata.{k}"),
                &json!(text(&n)),
                IMMUTABLE,
            ));
        }
    }
    // Times print as Go's time.Time String(); an unset one as null.
    for k in ["creationTimestamp", "deletionTimestamp"] {
        let (n, o) = (get(new, k), get(old, k));
        if n != o {
            let shown = n.as_str().map(go_time).unwrap_or_else(|| "null".into());
            out.push(Cause::invalid_printed(
                &format!("metadata.{k}"),
                &shown,
                IMMUTABLE,
            ));
        }
    }
    let (n, o) = (
        get(new, "deletionGracePeriodSeconds"),
        get(old, "deletionGracePeriodSeconds"),
    );
    if n != o {
        out.push(Cause::invalid(
            "metadata.deletionGracePeriodSeconds",
            &n,
            IMMUTABLE,
        ));
    }
    validation_meta::common(new.get("metadata"), &mut out);
    out
}

/// RFC 3339 (`2026-11-25T07:23:35Z`) as Go's `time.Time.String()` prints a UTC time.
fn go_time(t: &str) -> String {
    match t.strip_suffix('Z').and_then(|t| t.split_once('T')) {
        Some((date, clock)) => format!("{date} {clock} +0000 UTC"),
        None => t.to_string(),
    }
}

/// `ValidatePodSpecificAnnotationUpdates`: the mirror-pod and AppArmor annotations are fixed
/// at create. (Upstream walks Go maps, in no fixed order; keys are sorted here.)
pub(crate) fn validate_pod_annotation_updates(new: &Value, old: &Value) -> Vec<Cause> {
    const MIRROR: &str = "kubernetes.io/config.mirror";
    const APPARMOR: &str = "container.apparmor.security.beta.kubernetes.io/";
    let annotations = |v: &Value| -> Map<String, Value> {
        v.pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (new, old) = (annotations(new), annotations(old));
    let mut out = Vec::new();
    let mut keys: Vec<&String> = old.keys().collect();
    keys.sort();
    for k in keys {
        if new.get(k) == old.get(k) {
            continue;
        }
        let field = format!("metadata.annotations[{k}]");
        if k.starts_with(APPARMOR) {
            out.push(Cause::forbidden(
                &field,
                "may not remove or update AppArmor annotations",
            ));
        }
        if k == MIRROR {
            out.push(Cause::forbidden(
                &field,
                "may not remove or update mirror pod annotation",
            ));
        }
    }
    let mut keys: Vec<&String> = new.keys().filter(|k| !old.contains_key(*k)).collect();
    keys.sort();
    for k in keys {
        let field = format!("metadata.annotations[{k}]");
        if k.starts_with(APPARMOR) {
            out.push(Cause::forbidden(&field, "may not add AppArmor annotations"));
        }
        if k == MIRROR {
            out.push(Cause::forbidden(
                &field,
                "may not add mirror pod annotation",
            ));
        }
    }
    out
}

/// The pod-specific part of `ValidatePodUpdate` (its metadata part is
/// `validate_object_meta_update`, its create-time part `validation::validate_pod`).
pub(crate) fn validate_pod_spec_update(new: &Value, old: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let (ns, os) = (&new["spec"], &old["spec"]);
    for (key, field) in [
        ("containers", "spec.containers"),
        ("initContainers", "spec.initContainers"),
    ] {
        let (nc, oc) = (items(ns, key), items(os, key));
        if nc.len() != oc.len() {
            out.push(Cause::forbidden(
                field,
                "pod updates may not add or remove containers",
            ));
            return out;
        }
        for (i, c) in nc.iter().enumerate() {
            let image = c["image"].as_str().unwrap_or_default();
            if image.is_empty() {
                out.push(Cause::required(&format!("{field}[{i}].image"), ""));
            }
            if image.trim() != image {
                out.push(Cause::invalid(
                    &format!("{field}[{i}].image"),
                    &json!(image),
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    let ads = "spec.activeDeadlineSeconds";
    match (
        ns["activeDeadlineSeconds"].as_i64(),
        os["activeDeadlineSeconds"].as_i64(),
    ) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            out.push(Cause::invalid(
                ads,
                &json!(n),
                "must be between 0 and 2147483647, inclusive",
            ));
            return out;
        }
        (Some(n), Some(o)) if o < n => {
            out.push(Cause::invalid(
                ads,
                &json!(n),
                "must be less than or equal to previous value",
            ));
            return out;
        }
        (None, Some(_)) => out.push(Cause::invalid(
            ads,
            &Value::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    // Tolerations: each old one must still be there, tolerationSeconds aside.
    let toleration = |t: &Value| {
        ["key", "operator", "value", "effect"]
            .map(|k| t[k].as_str().unwrap_or_default().to_string())
    };
    let new_tolerations: Vec<_> = items(ns, "tolerations").iter().map(toleration).collect();
    if items(os, "tolerations")
        .iter()
        .any(|t| !new_tolerations.contains(&toleration(t)))
    {
        out.push(Cause::forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        ));
    }
    // Scheduling gates: removals only.
    let gate = |g: &Value| g["name"].as_str().unwrap_or_default().to_string();
    let old_gates: Vec<String> = items(os, "schedulingGates").iter().map(gate).collect();
    for (i, g) in items(ns, "schedulingGates").iter().enumerate() {
        let name = gate(g);
        if !old_gates.contains(&name) {
            out.push(Cause::forbidden(
                &format!("spec.schedulingGates[{i}].name"),
                &format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            ));
        }
    }
    let (old_spec, new_spec) = (normalized(os), normalized(ns));
    if old_spec == new_spec {
        return out;
    }
    let mut munged = munge(&new_spec, &old_spec);
    if !items(os, "schedulingGates").is_empty() {
        gated_pod_mutations(&mut munged, &old_spec, &mut out);
    }
    let munged = normalized(&munged);
    if munged != old_spec {
        let mut lines = Vec::new();
        diff("spec", &old_spec, &munged, &mut lines);
        out.push(Cause::forbidden(
            "spec",
            &format!(
                "pod updates may not change fields other than {}\n{}",
                UPDATABLE_POD_SPEC_FIELDS.join(","),
                lines.join("\n")
            ),
        ));
    }
    out
}

/// The new spec with what may change taken from the old one, as upstream munges it before
/// its final comparison.
fn munge(new: &Value, old: &Value) -> Value {
    let mut m = new.clone();
    for key in ["containers", "initContainers"] {
        if let Some(list) = m.get_mut(key).and_then(Value::as_array_mut) {
            for (i, c) in list.iter_mut().enumerate() {
                if let Some(c) = c.as_object_mut() {
                    match old.pointer(&format!("/{key}/{i}/image")) {
                        Some(image) => c.insert("image".into(), image.clone()),
                        None => c.remove("image"),
                    };
                }
            }
        }
    }
    let Some(spec) = m.as_object_mut() else {
        return m;
    };
    for key in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old.get(key) {
            Some(v) => spec.insert(key.into(), v.clone()),
            None => spec.remove(key),
        };
    }
    let grace = "terminationGracePeriodSeconds";
    if old[grace].as_i64().is_some_and(|g| g < 0) && spec.get(grace) == Some(&json!(1)) {
        spec.insert(grace.into(), old[grace].clone());
    }
    m
}

/// A pod still held by scheduling gates may gain node selector entries and node affinity
/// requirements (never lose or change them); both are then taken from the old spec, so they
/// do not count as a forbidden change.
fn gated_pod_mutations(munged: &mut Value, old: &Value, out: &mut Vec<Cause>) {
    let Some(m) = munged.as_object_mut() else {
        return;
    };
    let old_selector = old.get("nodeSelector");
    if m.get("nodeSelector") != old_selector {
        let new_selector = m.get("nodeSelector").cloned().unwrap_or(Value::Null);
        let kept = old_selector
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .all(|(k, v)| new_selector.get(k) == Some(v));
        if !kept {
            out.push(Cause::invalid(
                "spec.nodeSelector",
                &new_selector,
                "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
            ));
        }
        match old_selector {
            Some(v) => m.insert("nodeSelector".into(), v.clone()),
            None => m.remove("nodeSelector"),
        };
    }
    let old_affinity = old.pointer("/affinity/nodeAffinity");
    let new_affinity = m.get("affinity").and_then(|a| a.get("nodeAffinity"));
    if new_affinity != old_affinity {
        node_affinity_mutations(new_affinity, old_affinity, out);
        let affinity = m.entry("affinity").or_insert_with(|| json!({}));
        if let Some(a) = affinity.as_object_mut() {
            match old_affinity {
                Some(v) => a.insert("nodeAffinity".into(), v.clone()),
                None => a.remove("nodeAffinity"),
            };
        }
    }
}

/// `validateNodeAffinityMutation`: with required terms set, their number stays and each term
/// only gains requirements.
fn node_affinity_mutations(new: Option<&Value>, old: Option<&Value>, out: &mut Vec<Cause>) {
    let terms = |v: Option<&Value>| -> Vec<Value> {
        v.and_then(|v| {
            v.pointer("/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        })
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
    };
    let (old_terms, new_terms) = (terms(old), terms(new));
    let path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    if old_terms.is_empty() {
        return;
    }
    if old_terms.len() != new_terms.len() {
        let shown = if new_terms.is_empty() {
            Value::Null
        } else {
            Value::Array(new_terms.iter().map(go_term).collect())
        };
        out.push(Cause::invalid(
            path,
            &shown,
            "no additions/deletions to non-empty NodeSelectorTerms list are allowed",
        ));
        return;
    }
    for (i, (n, o)) in new_terms.iter().zip(&old_terms).enumerate() {
        let only_added = ["matchExpressions", "matchFields"].iter().all(|k| {
            let (nl, ol) = (items(n, k), items(o, k));
            nl.len() >= ol.len() && nl[..ol.len()] == *ol
        });
        let was_empty =
            items(o, "matchExpressions").is_empty() && items(o, "matchFields").is_empty();
        let stays_empty =
            items(n, "matchExpressions").is_empty() && items(n, "matchFields").is_empty();
        if !only_added || (was_empty && !stays_empty) {
            out.push(Cause::invalid(
                &format!("{path}[{i}]"),
                &go_term(n),
                "only additions are allowed (no mutations or deletions)",
            ));
        }
    }
}

/// A NodeSelectorTerm as upstream prints an invalid value: the JSON of its internal Go type,
/// whose fields carry Go's names and whose empty lists are null.
fn go_term(t: &Value) -> Value {
    let requirements = |k: &str| -> Value {
        let list = items(t, k);
        if list.is_empty() {
            return Value::Null;
        }
        Value::Array(
            list.iter()
                .map(|r| {
                    let values = items(r, "values");
                    json!({"Key": r["key"], "Operator": r["operator"],
                           "Values": if values.is_empty() { Value::Null } else { json!(values) }})
                })
                .collect(),
        )
    };
    json!({"MatchExpressions": requirements("matchExpressions"), "MatchFields": requirements("matchFields")})
}

/// `ValidatePodStatusUpdate`'s checks on what a status write may not touch.
pub(crate) fn validate_pod_status_update(new: &Value, old: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    if new.pointer("/spec/nodeName") != old.pointer("/spec/nodeName") {
        out.push(Cause::forbidden(
            "status.nodeName",
            "may not be changed directly",
        ));
    }
    let qos = |v: &Value| {
        v.pointer("/status/qosClass")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if qos(new) != qos(old) {
        out.push(Cause::invalid(
            "status.qosClass",
            &json!(qos(new)),
            IMMUTABLE,
        ));
    }
    out
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The value with null, `[]` and `{}` members left out (upstream's semantic equality treats a
/// nil and an empty slice or map alike), and the zeros Go's JSON leaves out (`hostNetwork:
/// false`, which kube-apiserver decodes to the same struct as no `hostNetwork`). JSON does not
/// say which `{}` is a map and which a pointer to an empty struct, so both count as absent.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                let x = normalized(x);
                let empty = match &x {
                    Value::Array(a) => a.is_empty(),
                    Value::Object(o) => o.is_empty(),
                    other => go_zero::omitted(k, other),
                };
                if !empty {
                    out.insert(k.clone(), x);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// The changed leaves between two specs, `- path: old` / `+ path: new`. Upstream appends Go's
/// `cmp.Diff` of the two PodSpecs here; this is kexplore's shorter listing of the same changes
/// in the API's field names, not cmp's format.
pub(crate) fn diff(path: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(&p, x, y, out),
                    (Some(x), None) => out.push(format!("- {p}: {x}")),
                    (None, Some(y)) => out.push(format!("+ {p}: {y}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let p = format!("{path}[{i}]");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => diff(&p, x, y, out),
                    (Some(x), None) => out.push(format!("- {p}: {x}")),
                    (None, Some(y)) => out.push(format!("+ {p}: {y}")),
                    (None, None) => {}
                }
            }
        }
        (a, b) if a != b => {
            out.push(format!("- {path}: {a}"));
            out.push(format!("+ {path}: {b}"));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored pod as the create path leaves it, with `spec` changes applied.
    fn pod(spec: Value) -> Value {
        let mut p = json!({
            "metadata": {"name": "app", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
                         "generation": 1, "creationTimestamp": "2026-11-25T07:23:35Z"},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}],
                     "nodeName": "node-1", "terminationGracePeriodSeconds": 30},
        });
        if let (Some(base), Value::Object(extra)) = (p["spec"].as_object_mut(), spec) {
            base.extend(extra);
        }
        p
    }

    fn texts(causes: &[Cause]) -> Vec<String> {
        causes.iter().map(Cause::rendered).collect()
    }

    fn spec_errors(old: Value, new: Value) -> Vec<String> {
        texts(&validate_pod_spec_update(&pod(new), &pod(old)))
    }

    #[test]
    fn images_may_change_but_not_to_nothing() {
        assert!(
            spec_errors(
                json!({}),
                json!({"containers": [{"name": "app", "image": "nginx:1.27"}]})
            )
            .is_empty()
        );
        assert_eq!(
            spec_errors(
                json!({}),
                json!({"containers": [{"name": "app", "image": ""}]})
            ),
            ["spec.containers[0].image: Required value"]
        );
        assert_eq!(
            spec_errors(
                json!({}),
                json!({"containers": [{"name": "app", "image": " nginx"}]})
            ),
            [
                r#"spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace"#
            ]
        );
    }

    #[test]
    fn containers_may_not_come_or_go() {
        let two =
            json!({"containers": [{"name": "app", "image": "a"}, {"name": "b", "image": "b"}]});
        assert_eq!(
            spec_errors(json!({}), two.clone()),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
        assert_eq!(
            spec_errors(two, json!({})),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
    }

    #[test]
    fn anything_else_is_forbidden_with_the_list_and_the_changed_fields() {
        let list = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";
        assert_eq!(
            spec_errors(
                json!({}),
                json!({"containers": [{"name": "web", "image": "nginx:1.25"}]})
            ),
            [format!(
                "spec: Forbidden: pod updates may not change fields other than {list}\n- spec.containers[0].name: \"app\"\n+ spec.containers[0].name: \"web\""
            )]
        );
        // A rename together with an image change: the image is allowed, so only the name shows.
        let e = spec_errors(
            json!({}),
            json!({"containers": [{"name": "web", "image": "nginx:2"}]}),
        );
        assert!(e.len() == 1 && !e[0].contains(".image:"), "{e:?}");
        assert_eq!(
            spec_errors(json!({}), json!({"nodeName": "node-2"})),
            [format!(
                "spec: Forbidden: pod updates may not change fields other than {list}\n- spec.nodeName: \"node-1\"\n+ spec.nodeName: \"node-2\""
            )]
        );
        let e = spec_errors(json!({}), json!({"nodeName": null}));
        assert!(e[0].ends_with("\n- spec.nodeName: \"node-1\""), "{e:?}");
    }

    #[test]
    fn active_deadline_may_be_set_or_lowered() {
        assert!(spec_errors(json!({}), json!({"activeDeadlineSeconds": 10})).is_empty());
        assert!(
            spec_errors(
                json!({"activeDeadlineSeconds": 10}),
                json!({"activeDeadlineSeconds": 5})
            )
            .is_empty()
        );
        assert_eq!(
            spec_errors(
                json!({"activeDeadlineSeconds": 10}),
                json!({"activeDeadlineSeconds": 20})
            ),
            [
                "spec.activeDeadlineSeconds: Invalid value: 20: must be less than or equal to previous value"
            ]
        );
        assert_eq!(
            spec_errors(json!({"activeDeadlineSeconds": 10}), json!({})),
            [
                "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"
            ]
        );
        assert_eq!(
            spec_errors(json!({}), json!({"activeDeadlineSeconds": -1})),
            [
                "spec.activeDeadlineSeconds: Invalid value: -1: must be between 0 and 2147483647, inclusive"
            ]
        );
    }

    #[test]
    fn tolerations_may_only_be_added_and_gates_only_removed() {
        let t = json!({"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"});
        let mut t9 = t.clone();
        t9["tolerationSeconds"] = json!(9);
        assert!(
            spec_errors(
                json!({"tolerations": [t]}),
                json!({"tolerations": [t9, {"operator": "Exists"}]})
            )
            .is_empty()
        );
        let mut w = t.clone();
        w["value"] = json!("w");
        assert_eq!(
            spec_errors(json!({"tolerations": [t]}), json!({"tolerations": [w]})),
            [
                "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
            ]
        );
        let gates = |names: &[&str]| json!({"schedulingGates": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()});
        let old = gates(&["g1", "g2"]);
        assert!(spec_errors(old.clone(), gates(&["g2"])).is_empty());
        assert_eq!(
            spec_errors(old, gates(&["g1", "g3"])),
            [
                "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g3'"
            ]
        );
    }

    #[test]
    fn gated_pods_may_extend_their_node_selector_and_affinity() {
        let gated = |extra: Value| {
            let mut s = json!({"schedulingGates": [{"name": "g"}], "nodeName": null});
            if let (Some(m), Value::Object(e)) = (s.as_object_mut(), extra) {
                m.extend(e);
            }
            s
        };
        let sel = |v: Value| gated(json!({"nodeSelector": v}));
        assert!(spec_errors(sel(json!({"a": "b"})), sel(json!({"a": "b", "c": "d"}))).is_empty());
        assert_eq!(
            spec_errors(sel(json!({"a": "b"})), sel(json!({"a": "z", "c": "d"}))),
            [
                r#"spec.nodeSelector: Invalid value: {"a":"z","c":"d"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)"#
            ]
        );
        let a = json!({"key": "a", "operator": "In", "values": ["x"]});
        let b = json!({"key": "b", "operator": "Exists"});
        let aff = |terms: Vec<Vec<&Value>>| {
            let terms: Vec<Value> = terms
                .into_iter()
                .map(|t| json!({"matchExpressions": t}))
                .collect();
            gated(
                json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}),
            )
        };
        assert!(spec_errors(aff(vec![vec![&a]]), aff(vec![vec![&a, &b]])).is_empty());
        assert!(spec_errors(gated(json!({})), aff(vec![vec![&a]])).is_empty());
        assert_eq!(
            spec_errors(aff(vec![vec![&a]]), aff(vec![vec![&b]])),
            [
                r#"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: Invalid value: {"MatchExpressions":[{"Key":"b","Operator":"Exists","Values":null}],"MatchFields":null}: only additions are allowed (no mutations or deletions)"#
            ]
        );
        assert_eq!(
            spec_errors(aff(vec![vec![&a]]), aff(vec![vec![&a], vec![&b]])),
            [
                r#"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Invalid value: [{"MatchExpressions":[{"Key":"a","Operator":"In","Values":["x"]}],"MatchFields":null},{"MatchExpressions":[{"Key":"b","Operator":"Exists","Values":null}],"MatchFields":null}]: no additions/deletions to non-empty NodeSelectorTerms list are allowed"#
            ]
        );
        // Without gates, the same change is a forbidden spec change.
        let e = spec_errors(
            json!({"nodeSelector": {"a": "b"}}),
            json!({"nodeSelector": {"a": "b", "c": "d"}}),
        );
        assert!(
            e.len() == 1 && e[0].contains("+ spec.nodeSelector.c: \"d\""),
            "{e:?}"
        );
    }

    #[test]
    fn mirror_and_apparmor_annotations_are_fixed() {
        let with = |a: Value| {
            let mut p = pod(json!({}));
            p["metadata"]["annotations"] = a;
            p
        };
        let old = with(json!({"kubernetes.io/config.mirror": "x", "keep": "1"}));
        let new = with(
            json!({"keep": "2", "container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}),
        );
        assert_eq!(
            texts(&validate_pod_annotation_updates(&new, &old)),
            [
                "metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not remove or update mirror pod annotation",
                "metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Forbidden: may not add AppArmor annotations",
            ]
        );
    }

    #[test]
    fn grace_period_may_go_from_negative_to_one_only() {
        assert!(
            spec_errors(
                json!({"terminationGracePeriodSeconds": -1}),
                json!({"terminationGracePeriodSeconds": 1})
            )
            .is_empty()
        );
        let e = spec_errors(json!({}), json!({"terminationGracePeriodSeconds": 1}));
        assert!(
            e.len() == 1 && e[0].contains("terminationGracePeriodSeconds: 30"),
            "{e:?}"
        );
    }

    #[test]
    fn empty_and_absent_lists_and_maps_are_the_same() {
        assert!(
            spec_errors(
                json!({}),
                json!({"nodeSelector": {}, "volumes": [], "hostname": null})
            )
            .is_empty()
        );
    }

    #[test]
    fn zeros_go_omits_are_the_same_as_absent_and_pointer_zeros_are_not() {
        let e = spec_errors(
            json!({}),
            json!({"hostNetwork": false, "hostIPC": false, "subdomain": ""}),
        );
        assert!(e.is_empty(), "{e:?}");
        assert!(!spec_errors(json!({}), json!({"hostNetwork": true})).is_empty());
        assert!(!spec_errors(json!({}), json!({"automountServiceAccountToken": false})).is_empty());
    }

    #[test]
    fn metadata_that_may_not_change() {
        let old = pod(json!({}));
        let errs = |f: &dyn Fn(&mut Value)| {
            let mut new = old.clone();
            f(&mut new);
            texts(&validate_object_meta_update(&new, &old))
        };
        assert!(errs(&|p| p["metadata"]["labels"] = json!({"a": "b"})).is_empty());
        assert_eq!(
            errs(&|p| p["metadata"]["uid"] = json!("u-2")),
            [r#"metadata.uid: Invalid value: "u-2": field is immutable"#]
        );
        assert_eq!(
            errs(&|p| p["metadata"]["namespace"] = json!("other")),
            [r#"metadata.namespace: Invalid value: "other": field is immutable"#]
        );
        assert_eq!(
            errs(&|p| p["metadata"]["creationTimestamp"] = json!("2030-01-01T00:00:00Z")),
            [
                "metadata.creationTimestamp: Invalid value: 2030-01-01 00:00:00 +0000 UTC: field is immutable"
            ]
        );
        assert_eq!(
            errs(&|p| p["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z")),
            [
                "metadata.deletionTimestamp: Invalid value: 2030-01-01 00:00:00 +0000 UTC: field is immutable"
            ]
        );
        assert_eq!(
            errs(&|p| p["metadata"]["deletionGracePeriodSeconds"] = json!(5)),
            ["metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable"]
        );
        assert_eq!(
            errs(&|p| p["metadata"]["generation"] = json!(0)),
            ["metadata.generation: Invalid value: 0: must not be decremented"]
        );
        assert_eq!(
            errs(&|p| p["metadata"]["resourceVersion"] = json!("")),
            [r#"metadata.resourceVersion: Invalid value: "": must be specified for an update"#]
        );
        // A deletion under way: finalizers may go, not come.
        let mut deleting = old.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
        deleting["metadata"]["finalizers"] = json!(["a"]);
        let mut new = deleting.clone();
        new["metadata"]["finalizers"] = json!(["z", "a", "b"]);
        assert_eq!(
            texts(&validate_object_meta_update(&new, &deleting)),
            [
                r#"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "z"}"#
            ]
        );
    }

    #[test]
    fn before_update_restores_what_is_reverted_silently() {
        let mut old = pod(json!({}));
        old["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
        old["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        let mut new = json!({"metadata": {"name": "app"}});
        before_update(&mut new, &old);
        assert_eq!(new["metadata"]["uid"], "u-1");
        assert_eq!(new["metadata"]["deletionTimestamp"], "2030-01-01T00:00:00Z");
        assert_eq!(new["metadata"]["deletionGracePeriodSeconds"], 30);
        // A different uid or grace period is kept, for validation to refuse.
        let mut new = json!({"metadata": {"uid": "u-2", "deletionGracePeriodSeconds": 5}});
        before_update(&mut new, &old);
        assert_eq!(new["metadata"]["uid"], "u-2");
        assert_eq!(new["metadata"]["deletionGracePeriodSeconds"], 5);
    }

    #[test]
    fn status_writes_may_not_move_the_pod_or_change_its_qos() {
        let mut old = pod(json!({}));
        old["status"] = json!({"qosClass": "BestEffort"});
        let mut new = old.clone();
        new["spec"]["nodeName"] = json!("node-2");
        new["status"]["qosClass"] = json!("Guaranteed");
        assert_eq!(
            texts(&validate_pod_status_update(&new, &old)),
            [
                "status.nodeName: Forbidden: may not be changed directly",
                r#"status.qosClass: Invalid value: "Guaranteed": field is immutable"#
            ]
        );
    }
}
