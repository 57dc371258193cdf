//! Strategic merge patch, as apimachinery's `strategicpatch` applies one on the server: lists
//! merged by the patch merge key of [`list_types`] (the same the OpenAPI documents announce),
//! and the directives clients send — `$patch: replace | delete` on a map or a list item,
//! `$retainKeys` (kubectl's way to clear the other members of a union, such as a Deployment's
//! `rollingUpdate` when its strategy becomes `Recreate`), `$setElementOrder/<list>` (the order
//! the client wants) and `$deleteFromPrimitiveList/<list>`.
//!
//! Order follows upstream's `normalizeElementOrder`: the items a patch names keep the patch's
//! order, the others the live list's, and an item the live list did not have comes before the
//! live items around it — `kubectl patch` adding a container puts it first, as on a cluster.

use serde_json::{Map, Value};

use crate::apiserver::codec::go_print;
use crate::apiserver::registry::list_types;
use crate::apiserver::request::status::ApiError;

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Where a merge is in the object: the schemas of its kind and the schema of the current level.
#[derive(Clone, Copy)]
pub(crate) struct Level<'a> {
    pub(crate) schemas: &'a Map<String, Value>,
    pub(crate) ty: Option<&'a str>,
}

impl<'a> Level<'a> {
    fn child(self, ty: &'a Option<String>) -> Level<'a> {
        Level {
            schemas: self.schemas,
            ty: ty.as_deref(),
        }
    }

    fn child_type(self, field: &str) -> Option<String> {
        self.ty
            .and_then(|ty| list_types::property_type(self.schemas, ty, field))
    }

    /// `(merges, merge key)` of the list `field` at this level.
    fn list(self, field: &str) -> (bool, Option<&'static str>) {
        let def = self.ty.and_then(|ty| list_types::lookup(ty, field));
        let merges = def
            .and_then(|d| d.strategy)
            .is_some_and(|s| s.split(',').any(|s| s == "merge"));
        (merges, def.and_then(|d| d.merge_key))
    }
}

/// Upstream's `mergepatch.ErrBadPatchType`: the directive and the map that holds it, as Go
/// prints them; a 500, as kube-apiserver does not sort this error among the bad requests.
fn bad_patch_type(directive: &Value, holder: &Value) -> ApiError {
    ApiError::internal(format!(
        "unknown patch type: {} in map: {}",
        go_print::s(directive),
        go_print::v(holder)
    ))
}

/// Merge `patch` into `target`. A malformed directive is a 400, the rest a 500, as
/// kube-apiserver's `interpretStrategicMergePatchError` sorts them.
pub(crate) fn merge(target: &mut Value, patch: &Value, level: Level<'_>) -> Result<(), ApiError> {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    if let Some(directive) = p.get(DIRECTIVE) {
        match directive.as_str() {
            Some("replace") => {
                let mut m = p.clone();
                m.remove(DIRECTIVE);
                *target = Value::Object(m);
            }
            Some("delete") => *target = Value::Object(Map::new()),
            _ => return Err(bad_patch_type(directive, patch)),
        }
        return Ok(());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        return Ok(());
    };
    retain_keys(t, p)?;
    let ordered = set_element_order(t, p, level)?;
    for (k, pv) in p {
        if k == RETAIN_KEYS || k.starts_with(SET_ELEMENT_ORDER) || ordered.contains(&k.as_str()) {
            continue;
        }
        if let Some(field) = k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            // kubectl's way to take values out of a merged list of scalars (finalizers).
            match (t.get_mut(field), pv) {
                (Some(Value::Array(ta)), Value::Array(gone)) => ta.retain(|v| !gone.contains(v)),
                (None, _) => {}
                _ => {
                    return Err(ApiError::bad_request(
                        "invalid patch format of primitive list",
                    ));
                }
            }
            continue;
        }
        if pv.is_null() {
            t.remove(k);
            continue;
        }
        let child_ty = level.child_type(k);
        let child = level.child(&child_ty);
        match (t.get_mut(k), pv) {
            (Some(tv @ Value::Object(_)), Value::Object(_)) => merge(tv, pv, child)?,
            (Some(Value::Array(ta)), Value::Array(pa)) => {
                let (merges, key) = level.list(k);
                if merges {
                    let merged = merge_list(std::mem::take(ta), pa, key, child)?;
                    *ta = merged;
                } else {
                    *ta = pa.clone();
                }
            }
            _ => {
                t.insert(k.clone(), pv.clone());
            }
        }
    }
    Ok(())
}

/// `$retainKeys`: every field the patch sets must be listed; the live fields not listed go.
fn retain_keys(t: &mut Map<String, Value>, p: &Map<String, Value>) -> Result<(), ApiError> {
    let Some(keys) = p.get(RETAIN_KEYS) else {
        return Ok(());
    };
    let Some(keys) = keys.as_array() else {
        return Err(ApiError::bad_request("invalid patch format of retainKeys"));
    };
    let listed = |k: &str| keys.iter().any(|x| x.as_str() == Some(k));
    let unlisted = p.iter().any(|(k, v)| {
        !v.is_null()
            && k != RETAIN_KEYS
            && !k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            && !k.starts_with(SET_ELEMENT_ORDER)
            && !listed(k)
    });
    if unlisted {
        return Err(ApiError::bad_request("invalid patch format of retainKeys"));
    }
    t.retain(|k, _| listed(k));
    Ok(())
}

/// `$setElementOrder/<list>`: the list merged with the patch's items, then put in the order
/// given. Returns the lists it handled.
fn set_element_order<'p>(
    t: &mut Map<String, Value>,
    p: &'p Map<String, Value>,
    level: Level<'_>,
) -> Result<Vec<&'p str>, ApiError> {
    let mut handled = Vec::new();
    for (k, order) in p {
        let Some(field) = k.strip_prefix(SET_ELEMENT_ORDER) else {
            continue;
        };
        let bad = || ApiError::bad_request("invalid patch format of setElementOrder list");
        let order = order.as_array().ok_or_else(bad)?;
        let (merges, key) = level.list(field);
        let live = match t.get(field) {
            Some(Value::Array(a)) => Some(a.as_slice()),
            Some(_) => return Err(bad()),
            None => None,
        };
        let patch = match p.get(field) {
            Some(Value::Array(a)) => Some(a.as_slice()),
            Some(_) => return Err(bad()),
            None => None,
        };
        if !in_order(patch.unwrap_or_default(), order, key) {
            return Err(bad());
        }
        let child_ty = level.child_type(field);
        let child = level.child(&child_ty);
        let merged = match (live, patch) {
            (Some(l), None) => l.to_vec(),
            (None, Some(pa)) => pa.to_vec(),
            (Some(l), Some(pa)) if merges => merge_list(l.to_vec(), pa, key, child)?,
            (Some(_), Some(pa)) => pa.to_vec(),
            (None, None) => continue,
        };
        let (named, server_only): (Vec<_>, Vec<_>) = merged
            .into_iter()
            .partition(|item| position(order, item, key).is_some());
        let ordered = normalize(named, server_only, order, live.unwrap_or_default(), key);
        t.insert(field.to_string(), Value::Array(ordered));
        handled.push(field);
    }
    Ok(handled)
}

/// The patch's items (other than deletions) appear in `order`, in the same relative order.
fn in_order(patch: &[Value], order: &[Value], key: Option<&str>) -> bool {
    let mut last = 0;
    for item in patch {
        if item.get(DIRECTIVE).is_some() {
            continue;
        }
        match position(order, item, key) {
            Some(i) if i >= last => last = i,
            _ => return false,
        }
    }
    true
}

/// Upstream's `mergeSlice`: a list with a merge strategy.
fn merge_list(
    mut live: Vec<Value>,
    patch: &[Value],
    key: Option<&str>,
    item: Level<'_>,
) -> Result<Vec<Value>, ApiError> {
    if live.is_empty() && patch.is_empty() {
        return Ok(live);
    }
    let maps = live.iter().chain(patch).any(Value::is_object);
    let Some(key) = key.filter(|_| maps) else {
        if maps {
            return Err(ApiError::internal(
                "cannot merge lists without merge key for type map",
            ));
        }
        // Scalars (finalizers): the union.
        let mut merged = live.clone();
        for v in patch {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        let (named, server_only) = merged.into_iter().partition(|v| patch.contains(v));
        return Ok(normalize(named, server_only, patch, &live, None));
    };
    // Items with a directive: `delete` takes the live item out, `replace` the whole list.
    let mut items = Vec::with_capacity(patch.len());
    let mut replace = false;
    for p in patch {
        let Some(directive) = p.get(DIRECTIVE) else {
            items.push(p.clone());
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let id = p.get(key).ok_or_else(|| no_merge_key(key))?;
                live.retain(|x| x.get(key) != Some(id));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(ApiError::internal(
                    "merging lists cannot yet be specified in the patch",
                ));
            }
            _ => return Err(bad_patch_type(directive, p)),
        }
    }
    if replace {
        return Ok(items);
    }
    let before = live.clone();
    for p in &items {
        let id = p.get(key).ok_or_else(|| no_merge_key(key))?;
        match live.iter().position(|x| x.get(key) == Some(id)) {
            Some(i) => merge(&mut live[i], p, item)?,
            None => live.push(p.clone()),
        }
    }
    let (named, server_only) = live
        .into_iter()
        .partition(|x| position(&items, x, Some(key)).is_some());
    Ok(normalize(named, server_only, &items, &before, Some(key)))
}

fn no_merge_key(key: &str) -> ApiError {
    ApiError::internal(format!("map does not contain declared merge key: {key}"))
}

/// Where `item` is in `list`: by its merge key for maps, by value for scalars.
fn position(list: &[Value], item: &Value, key: Option<&str>) -> Option<usize> {
    match key {
        Some(key) => {
            let id = item.get(key)?;
            list.iter().position(|x| x.get(key) == Some(id))
        }
        None => list.iter().position(|x| x == item),
    }
}

/// Upstream's `normalizeElementOrder`: `named` sorted by `patch_order`, `server_only` by the
/// live order, then interleaved by the live order — an item the live list lacks goes first.
fn normalize(
    mut named: Vec<Value>,
    mut server_only: Vec<Value>,
    patch_order: &[Value],
    live: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    let rank = |order: &[Value], v: &Value| position(order, v, key).unwrap_or(usize::MAX);
    named.sort_by_key(|v| rank(patch_order, v));
    server_only.sort_by_key(|v| rank(live, v));
    let mut out = Vec::with_capacity(named.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = named.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => match (position(live, l, key), position(live, r, key)) {
                (Some(li), Some(ri)) => li < ri,
                _ => false,
            },
        };
        out.extend(if take_left { left.next() } else { right.next() });
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::apiserver::endpoints::patch::apply;
    use crate::apiserver::registry::resources::{self, ResourceDef};

    fn def(group: &str, resource: &str) -> &'static ResourceDef {
        resources::lookup(group, "v1", resource).expect("served")
    }

    fn smp(resource: &str, live: Value, patch: Value) -> Result<Value, u16> {
        let group = match resource {
            "deployments" => "apps",
            "jobs" => "batch",
            "certificatesigningrequests" => "certificates.k8s.io",
            _ => "",
        };
        let body = serde_json::to_vec(&patch).unwrap_or_default();
        apply(
            def(group, resource),
            "application/strategic-merge-patch+json",
            &live,
            &body,
        )
        .map_err(|e| e.code)
    }

    fn names(v: &Value, pointer: &str) -> Vec<String> {
        v.pointer(pointer)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|x| {
                        x.get("name")
                            .unwrap_or(x)
                            .as_str()
                            .unwrap_or_default()
                            .to_string()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn an_item_the_live_list_lacks_comes_first_the_others_keep_their_order() {
        let live = json!({"metadata": {"finalizers": ["a", "b"]},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let out = smp(
            "pods",
            live,
            json!({"metadata": {"finalizers": ["b", "c"]},
            "spec": {"containers": [{"name": "b", "image": "y"}, {"name": "c"}]}}),
        );
        let out = out.unwrap_or_default();
        assert_eq!(names(&out, "/metadata/finalizers"), ["a", "b", "c"]);
        assert_eq!(names(&out, "/spec/containers"), ["a", "b", "c"]);
        let live = json!({"spec": {"containers": [{"name": "app"}]}});
        let out = smp(
            "pods",
            live,
            json!({"spec": {"containers": [{"name": "sidecar"}]}}),
        );
        assert_eq!(
            names(&out.unwrap_or_default(), "/spec/containers"),
            ["sidecar", "app"]
        );
    }

    #[test]
    fn set_element_order_puts_the_merged_list_in_the_clients_order() {
        let live = json!({"metadata": {"finalizers": ["1", "2", "4"]},
            "spec": {"containers": [{"name": "c1"}, {"name": "c2"}]}});
        let patch = json!({
            "metadata": {"$setElementOrder/finalizers": ["1", "2", "3"], "finalizers": ["3"]},
            "spec": {"$setElementOrder/containers": [{"name": "c3"}, {"name": "c2"}, {"name": "c1"}],
                     "containers": [{"name": "c3", "image": "z"}]},
        });
        let out = smp("pods", live, patch).unwrap_or_default();
        assert_eq!(names(&out, "/metadata/finalizers"), ["1", "2", "3", "4"]);
        assert_eq!(names(&out, "/spec/containers"), ["c3", "c2", "c1"]);
        let bad = json!({"spec": {"$setElementOrder/containers": [{"name": "a"}],
                                  "containers": [{"name": "b"}]}});
        assert_eq!(smp("pods", json!({"spec": {}}), bad), Err(400));
    }

    #[test]
    fn retain_keys_clears_the_union_members_not_listed() {
        let live = json!({"spec": {"strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}});
        let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
        let out = smp("deployments", live.clone(), patch).unwrap_or_default();
        assert_eq!(
            out.pointer("/spec/strategy"),
            Some(&json!({"type": "Recreate"}))
        );
        let unlisted =
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}});
        assert_eq!(smp("deployments", live, unlisted), Err(400));
        // A volume's source changes: the old one goes (PodSpec.volumes is merge,retainKeys).
        let live = json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}});
        let patch = json!({"spec": {"volumes": [
            {"$retainKeys": ["configMap", "name"], "name": "v", "configMap": {"name": "cm"}}]}});
        let out = smp("pods", live, patch).unwrap_or_default();
        assert_eq!(
            out.pointer("/spec/volumes"),
            Some(&json!([{"name": "v", "configMap": {"name": "cm"}}]))
        );
    }

    /// Other groups' status conditions carry upstream's markers too: a Deployment's and a
    /// Job's merge by type (a controller patching one condition keeps the others); a CSR's have
    /// no patch strategy, so a patch replaces them.
    #[test]
    fn status_conditions_merge_by_type_where_upstream_marks_them() {
        let types = |v: &Value| -> Vec<String> {
            v.pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| c["type"].as_str().unwrap_or_default().to_string())
                .collect()
        };
        let live = json!({"status": {"conditions": [
            {"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]}});
        let patch = json!({"status": {"conditions": [
            {"type": "Progressing", "status": "False"}, {"type": "Custom", "status": "True"}]}});
        for resource in ["deployments", "jobs"] {
            let out = smp(resource, live.clone(), patch.clone()).unwrap_or_default();
            assert_eq!(
                types(&out),
                ["Available", "Progressing", "Custom"],
                "{resource}: {out}"
            );
            assert_eq!(
                out.pointer("/status/conditions/1/status"),
                Some(&json!("False"))
            );
        }
        let out = smp("certificatesigningrequests", live, patch).unwrap_or_default();
        assert_eq!(types(&out), ["Progressing", "Custom"]);
    }

    #[test]
    fn patch_directives_replace_or_delete_a_map_or_a_list() {
        let live = json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}],
            "dnsPolicy": "ClusterFirst"}}}});
        let replace = json!({"spec": {"template": {"spec": {"$patch": "replace",
            "containers": [{"name": "only"}]}}}});
        let out = smp("deployments", live.clone(), replace).unwrap_or_default();
        assert_eq!(
            out.pointer("/spec/template/spec"),
            Some(&json!({"containers": [{"name": "only"}]}))
        );
        let delete = json!({"spec": {"template": {"spec": {"$patch": "delete"}}}});
        let out = smp("deployments", live.clone(), delete).unwrap_or_default();
        assert_eq!(out.pointer("/spec/template/spec"), Some(&json!({})));
        let list = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "x"}, {"$patch": "replace"}]}}}});
        let out = smp("deployments", live.clone(), list).unwrap_or_default();
        assert_eq!(names(&out, "/spec/template/spec/containers"), ["x"]);
        let item = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}});
        let out = smp("deployments", live.clone(), item).unwrap_or_default();
        assert_eq!(names(&out, "/spec/template/spec/containers"), ["b"]);
        let bogus = json!({"spec": {"$patch": "bogus"}});
        assert_eq!(smp("deployments", live, bogus), Err(500));
    }
}

#[cfg(test)]
mod bad_directive_tests {
    use serde_json::json;

    use crate::apiserver::endpoints::patch::apply;
    use crate::apiserver::registry::resources;

    /// Upstream's words for a `$patch` it does not know, in a map and in a list's item.
    #[test]
    fn an_unknown_patch_type_names_the_map_that_holds_it() {
        let def = resources::lookup("", "v1", "pods").expect("served");
        let live = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
        let said = |patch: serde_json::Value| {
            let body = serde_json::to_vec(&patch).unwrap_or_default();
            match apply(def, "application/strategic-merge-patch+json", &live, &body) {
                Err(e) => (e.code, e.message),
                Ok(v) => panic!("applied: {v}"),
            }
        };
        assert_eq!(
            said(json!({"metadata": {"$patch": "bogus", "labels": {"a": "b"}}})),
            (
                500,
                "Internal error occurred: unknown patch type: bogus in map: map[$patch:bogus labels:map[a:b]]".to_string()
            )
        );
        assert_eq!(
            said(json!({"spec": {"containers": [{"name": "c", "$patch": 7}]}})),
            (
                500,
                "Internal error occurred: unknown patch type: %!s(int64=7) in map: map[$patch:7 name:c]".to_string()
            )
        );
    }
}
