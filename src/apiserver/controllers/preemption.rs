//! Preemption carried out by the scheduler loop (upstream `framework/preemption`
//! `prepareCandidate`): when the engine's DefaultPreemption finds a node where evicting
//! lower-priority pods makes room, each victim gets the `DisruptionTarget` condition
//! (`PreemptionByScheduler`), is deleted gracefully and gets a `Preempted` event; then the
//! preemptor's `status.nominatedNodeName` names the node. The preemptor binds in a later cycle,
//! once the victims are gone (the engine does not preempt again while they terminate).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::controllers::taint_eviction::set_disruption_target;
use crate::apiserver::registry::resources;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::{StoreError, Write};
use crate::scheduler::preemption::DisruptionBudget;
use crate::scheduler::selector::Selector;
use crate::scheduler::trace::Preemption;

const REASON: &str = "PreemptionByScheduler";

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

/// The PodDisruptionBudgets in the store, as preemption reads them; none when the kind is not
/// served (a budget whose selector does not parse protects nothing, as upstream skips it).
pub(crate) fn budgets(api: &Api) -> Vec<DisruptionBudget> {
    api.store
        .list("/registry/poddisruptionbudgets/")
        .0
        .iter()
        .filter_map(|b| {
            let sel: LabelSelector =
                serde_json::from_value(b.pointer("/spec/selector")?.clone()).ok()?;
            Some(DisruptionBudget {
                namespace: str_at(b, "/metadata/namespace").to_string(),
                selector: Selector::from_label_selector(Some(&sel)),
                disruptions_allowed: b
                    .pointer("/status/disruptionsAllowed")
                    .and_then(Value::as_i64)
                    .and_then(|n| i32::try_from(n).ok())
                    .unwrap_or(0),
            })
        })
        .collect()
}

/// The snapshot `pod` is scheduled against when other pending pods of at least its priority
/// hold a nomination (upstream `addNominatedPods`): they count as placed on their nominated
/// node, so the room a preemption made is not taken by another pod. `None`: no such pod.
pub(crate) fn with_nominated(snapshot: &[Pod], pod: &Pod) -> Option<Vec<Pod>> {
    let priority = |p: &Pod| p.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
    let reserved: Vec<Pod> = snapshot
        .iter()
        .filter(|p| p.metadata.uid != pod.metadata.uid && priority(p) >= priority(pod))
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let node = p.status.as_ref()?.nominated_node_name.clone()?;
            let spec = p.spec.as_ref()?;
            if node.is_empty() || spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
                return None;
            }
            let mut placed = p.clone();
            if let Some(s) = placed.spec.as_mut() {
                s.node_name = Some(node);
            }
            Some(placed)
        })
        .collect();
    if reserved.is_empty() {
        return None;
    }
    let mut out: Vec<Pod> = snapshot
        .iter()
        .filter(|p| !reserved.iter().any(|r| r.metadata.uid == p.metadata.uid))
        .cloned()
        .collect();
    out.extend(reserved);
    Some(out)
}

/// Evicts the plan's victims for `preemptor` and nominates its node. Answers what was done, in
/// a sentence for the pod's trace.
pub(crate) fn carry_out(api: &Api, preemptor: &Value, plan: &Preemption) -> String {
    let Some(def) = resources::lookup("", "v1", "pods") else {
        return String::new();
    };
    let scheduler = match str_at(preemptor, "/spec/schedulerName") {
        "" => "default-scheduler",
        s => s,
    };
    let message = format!("{scheduler}: preempting to accommodate a higher priority pod");
    let uid = str_at(preemptor, "/metadata/uid").to_string();
    let mut evicted = Vec::new();
    for victim in &plan.victims {
        let Some((ns, name)) = victim.split_once('/') else {
            continue;
        };
        let key = def.key_for(ns, name);
        let Some(cur) = api.store.get(&key) else {
            continue;
        };
        // Already on its way out: nothing more to do for it.
        if cur.pointer("/metadata/deletionTimestamp").is_some()
            || str_at(&cur, "/spec/nodeName") != plan.node
        {
            continue;
        }
        let victim_uid = str_at(&cur, "/metadata/uid").to_string();
        let marked = api.store.update(&key, None, Write::Commit, |c| {
            if str_at(c, "/metadata/uid") != victim_uid {
                return Err(StoreError::Rejected("pod was replaced".into()));
            }
            let mut next = c.clone();
            set_disruption_target(&mut next, REASON, &message);
            crate::apiserver::endpoints::managed_fields::record_pod_status_write(
                c,
                &mut next,
                "kube-scheduler",
            );
            Ok(next)
        });
        let Ok(marked) = marked else { continue };
        if client::delete(api, def, ns, name).is_err() {
            continue;
        }
        events::record(
            api,
            &marked,
            Reporter::Scheduler {
                profile: scheduler_name(preemptor),
            },
            "Normal",
            "Preempted",
            "Preempting",
            &format!("Preempted by pod {uid} on node {}", plan.node),
            "",
        );
        evicted.push(victim.clone());
    }
    let pkey = def.key_for(
        str_at(preemptor, "/metadata/namespace"),
        str_at(preemptor, "/metadata/name"),
    );
    let _ = api.store.update(&pkey, None, Write::Commit, |c| {
        if str_at(c, "/metadata/uid") != uid {
            return Err(StoreError::Rejected("pod was replaced".into()));
        }
        let mut next = c.clone();
        next["status"]["nominatedNodeName"] = json!(plan.node);
        crate::apiserver::endpoints::managed_fields::record_pod_status_write(
            c,
            &mut next,
            "kube-scheduler",
        );
        Ok(next)
    });
    format!(
        "the embedded scheduler carried out this preemption: {} got DisruptionTarget ({REASON}) and were deleted; nominatedNodeName is {}",
        if evicted.is_empty() {
            "no pod (the victims were already going)".to_string()
        } else {
            evicted.join(", ")
        },
        plan.node
    )
}

/// The profile a pod asked for (`spec.schedulerName`, defaulted as the API server does).
pub(crate) fn scheduler_name(pod: &Value) -> &str {
    pod.pointer("/spec/schedulerName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(crate::scheduler::DEFAULT_SCHEDULER)
}
