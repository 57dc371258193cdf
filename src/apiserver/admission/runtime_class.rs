//! The RuntimeClass admission plugin (upstream `plugin/pkg/admission/runtimeclass`): a pod
//! naming a RuntimeClass is refused if the class does not exist, gets the class's overhead
//! (which NodeResourcesFit then adds to its requests), and has the class's node selector and
//! tolerations merged into its own, so the scheduler only places it where that runtime is.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, Toleration};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::apiserver::registry::validation::parse_quantity;
use crate::apiserver::storage::interface::Storage;

const NO_CLASS_OVERHEAD: &str =
    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";
const OVERHEAD_MISMATCH: &str =
    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

/// Admit, then Validate's overhead check, on a pod being created.
pub(crate) fn runtime_class(pod: &mut Pod, store: &dyn Storage) -> Result<(), String> {
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let Some(name) = spec.runtime_class_name.clone().filter(|n| !n.is_empty()) else {
        return match spec.overhead {
            Some(_) => Err(NO_CLASS_OVERHEAD.into()),
            None => Ok(()),
        };
    };
    let class: RuntimeClass = store
        .get(&format!("/registry/runtimeclasses/{name}"))
        .and_then(|v| serde_json::from_value((*v).clone()).ok())
        .ok_or_else(|| format!("pod rejected: RuntimeClass {name:?} not found"))?;
    match class.overhead.and_then(|o| o.pod_fixed) {
        Some(fixed) => {
            if spec
                .overhead
                .as_ref()
                .is_some_and(|o| !o.is_empty() && !same_quantities(o, &fixed))
            {
                return Err(OVERHEAD_MISMATCH.into());
            }
            spec.overhead = Some(fixed);
        }
        None if spec.overhead.is_some() => return Err(NO_CLASS_OVERHEAD.into()),
        None => {}
    }
    let Some(scheduling) = class.scheduling else {
        return Ok(());
    };
    if let Some(wanted) = scheduling.node_selector {
        let selector = spec.node_selector.get_or_insert_with(BTreeMap::new);
        for (k, v) in wanted {
            if let Some(own) = selector.get(&k)
                && *own != v
            {
                return Err(format!(
                    "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; pod.spec.nodeSelector[{k}] = {own}"
                ));
            }
            selector.insert(k, v);
        }
    }
    if let Some(extra) = scheduling.tolerations {
        let own = spec.tolerations.take().unwrap_or_default();
        spec.tolerations = Some(merge_tolerations(own, extra));
    }
    Ok(())
}

/// `apiequality.Semantic.DeepEqual` on resource lists: quantities compared by value.
fn same_quantities(a: &BTreeMap<String, Quantity>, b: &BTreeMap<String, Quantity>) -> bool {
    a.len() == b.len()
        && a.iter().all(|(k, q)| {
            b.get(k)
                .is_some_and(|r| parse_quantity(&q.0) == parse_quantity(&r.0))
        })
}

/// Upstream's `tolerations.MergeTolerations`: both lists, a toleration left out when another
/// one tolerates everything it does (of two equal ones, the first is kept).
fn merge_tolerations(first: Vec<Toleration>, second: Vec<Toleration>) -> Vec<Toleration> {
    let all: Vec<Toleration> = first.into_iter().chain(second).collect();
    let mut merged: Vec<Toleration> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        if merged.iter().any(|m| is_superset(m, t)) {
            continue;
        }
        if all[i + 1..]
            .iter()
            .any(|later| later != t && is_superset(later, t))
        {
            continue;
        }
        merged.push(t.clone());
    }
    merged
}

/// Whether `ss` tolerates everything `t` does (upstream's `isSuperset`).
fn is_superset(ss: &Toleration, t: &Toleration) -> bool {
    if ss == t {
        return true;
    }
    let text = |o: &Option<String>| o.clone().unwrap_or_default();
    let (ss_key, ss_op, ss_effect) = (text(&ss.key), text(&ss.operator), text(&ss.effect));
    if text(&t.key) != ss_key && (!ss_key.is_empty() || ss_op != "Exists") {
        return false;
    }
    if text(&t.effect) != ss_effect && !ss_effect.is_empty() {
        return false;
    }
    if ss_effect == "NoExecute"
        && let Some(limit) = ss.toleration_seconds
        && t.toleration_seconds.is_none_or(|s| s > limit)
    {
        return false;
    }
    match ss_op.as_str() {
        "" | "Equal" => text(&t.operator) == "Equal" && t.value == ss.value,
        "Exists" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::store::{Store, Write};
    use serde_json::json;

    fn pod(spec: serde_json::Value) -> Pod {
        let mut s = json!({"containers": [{"name": "c", "image": "nginx"}]});
        if let (Some(o), Some(extra)) = (s.as_object_mut(), spec.as_object()) {
            o.extend(extra.clone());
        }
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": s})).expect("pod")
    }

    fn store_with_gvisor() -> Store {
        let store = Store::default();
        let class = json!({"metadata": {"name": "gvisor"}, "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            "scheduling": {"nodeSelector": {"sandbox": "gvisor"},
                "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}});
        store
            .create("/registry/runtimeclasses/gvisor", class, Write::Commit)
            .expect("class");
        store
    }

    #[test]
    fn a_class_gives_its_overhead_node_selector_and_tolerations() {
        let store = store_with_gvisor();
        let mut p = pod(
            json!({"runtimeClassName": "gvisor", "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "sandbox", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]}),
        );
        assert_eq!(runtime_class(&mut p, &store), Ok(()));
        let spec = serde_json::to_value(p.spec).expect("spec");
        assert_eq!(spec["overhead"], json!({"cpu": "250m", "memory": "120Mi"}));
        assert_eq!(
            spec["nodeSelector"],
            json!({"disk": "ssd", "sandbox": "gvisor"})
        );
        // The class's Exists toleration covers the pod's Equal one: only it is kept.
        assert_eq!(
            spec["tolerations"],
            json!([{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}])
        );
    }

    #[test]
    fn what_the_plugin_refuses() {
        let store = store_with_gvisor();
        let refused = |spec| runtime_class(&mut pod(spec), &store).err();
        assert_eq!(
            refused(json!({"runtimeClassName": "kata"})).as_deref(),
            Some("pod rejected: RuntimeClass \"kata\" not found")
        );
        assert_eq!(
            refused(json!({"runtimeClassName": "gvisor", "nodeSelector": {"sandbox": "kata"}}))
                .as_deref(),
            Some(
                "conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata"
            )
        );
        assert_eq!(
            refused(json!({"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}})).as_deref(),
            Some(OVERHEAD_MISMATCH)
        );
        assert_eq!(
            refused(
                json!({"runtimeClassName": "gvisor", "overhead": {"cpu": "0.25", "memory": "120Mi"}})
            ),
            None
        );
        assert_eq!(
            refused(json!({"overhead": {"cpu": "1"}})).as_deref(),
            Some(NO_CLASS_OVERHEAD)
        );
    }
}
