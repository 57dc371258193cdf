//! TaintToleration: Filter rejects a node with an untolerated NoSchedule/NoExecute taint;
//! Score counts untolerated PreferNoSchedule taints, normalized in reverse (fewer is better).

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::scheduler::framework::{
    CycleContext, FilterPlugin, MAX_NODE_SCORE, ScorePlugin, Status, default_normalize,
};
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "TaintToleration";
/// The label narrow columns and one-line sums use (the CLI's score table, view 5).
pub const SHORT: &str = "Taint";
/// v1.35+ (#134740, back-ported to v1.34 patches).
pub const REASON_GENERIC: &str = "node(s) had untolerated taint(s)";

/// `Toleration.ToleratesTaint`.
pub fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    let effect = t.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = t.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match t.operator.as_deref().unwrap_or("") {
        "" | "Equal" => t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// The first taint with a NoSchedule/NoExecute effect that no toleration tolerates.
pub fn first_untolerated_hard_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
) -> Option<&'a Taint> {
    taints.iter().find(|taint| {
        matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerations.iter().any(|t| tolerates(t, taint))
    })
}

/// The reason text for an untolerated taint in the modelled version.
pub fn reason(taint: &Taint, generic: bool) -> String {
    if generic {
        REASON_GENERIC.to_string()
    } else {
        format!(
            "node(s) had untolerated taint {{{}: {}}}",
            taint.key,
            taint.value.as_deref().unwrap_or("")
        )
    }
}

pub struct TaintToleration;

impl FilterPlugin for TaintToleration {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        match first_untolerated_hard_taint(&node.taints, &cx.pod.tolerations) {
            Some(t) => Status::unresolvable(reason(t, cx.version.generic_taint_reason())),
            None => Status::success(),
        }
    }
}

/// Score side: PreScore keeps the tolerations that can tolerate PreferNoSchedule.
#[derive(Default)]
pub struct TaintTolerationScore {
    prefer: Vec<Toleration>,
}

impl ScorePlugin for TaintTolerationScore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_score(&mut self, cx: &CycleContext, _feasible: &[usize]) -> Status {
        self.prefer = cx
            .pod
            .tolerations
            .iter()
            .filter(|t| matches!(t.effect.as_deref().unwrap_or(""), "" | "PreferNoSchedule"))
            .cloned()
            .collect();
        Status::success()
    }

    fn score(&self, _cx: &CycleContext, node: &NodeInfo) -> i64 {
        node.taints
            .iter()
            .filter(|taint| taint.effect == "PreferNoSchedule")
            .filter(|taint| !self.prefer.iter().any(|t| tolerates(t, taint)))
            .count() as i64
    }

    fn normalize(&self, _cx: &CycleContext, _feasible: &[usize], scores: &mut [i64]) {
        default_normalize(MAX_NODE_SCORE, true, scores);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tol(v: serde_json::Value) -> Toleration {
        serde_json::from_value(v).unwrap()
    }
    fn taint(k: &str, v: &str, e: &str) -> Taint {
        Taint {
            key: k.into(),
            value: Some(v.into()),
            effect: e.into(),
            ..Taint::default()
        }
    }

    #[test]
    fn matching_rules() {
        let t = taint("dedicated", "gpu", "NoSchedule");
        assert!(tolerates(&tol(json!({"operator": "Exists"})), &t));
        assert!(tolerates(
            &tol(json!({"key": "dedicated", "value": "gpu"})),
            &t
        ));
        assert!(!tolerates(
            &tol(json!({"key": "dedicated", "value": "cpu"})),
            &t
        ));
        assert!(!tolerates(
            &tol(json!({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"})),
            &t
        ));
        assert_eq!(
            reason(
                &taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
                false
            ),
            "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
        );
    }
}
