//! The ClusterRole aggregation controller (upstream `pkg/controller/clusterroleaggregation`): a
//! ClusterRole with an `aggregationRule` holds the rules of every ClusterRole its selectors
//! pick, and nothing else. The bootstrap `view`, `edit` and `admin` are built so; a role
//! created later with the label `rbac.authorization.k8s.io/aggregate-to-view: "true"` adds
//! its rules to `view` (and through it to `edit` and `admin`), and they go when it goes.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{self, Controller, s};
use crate::apiserver::registry::apps::workload::selector_matches;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util::At;

const PREFIX: &str = "/registry/clusterroles/";

pub(crate) struct ClusterRoleAggregation;

fn def() -> &'static ResourceDef {
    workload::def("rbac.authorization.k8s.io", "clusterroles")
}

/// The rules `role` aggregates from `roles` (None: it has no aggregationRule): for each
/// selector in turn, the roles it picks in name order, but never `role` itself, each rule
/// once (upstream `syncClusterRole`).
pub(crate) fn aggregated_rules(role: &Value, roles: &[Arc<Value>]) -> Option<Vec<Value>> {
    let rule = role.get("aggregationRule").filter(|r| r.is_object())?;
    let own = s(role, "/metadata/name");
    let mut out: Vec<Value> = Vec::new();
    for selector in rule
        .get("clusterRoleSelectors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut picked: Vec<&Arc<Value>> = roles
            .iter()
            .filter(|r| s(r, "/metadata/name") != own)
            .filter(|r| selector_matches(Some(selector), r.at("/metadata/labels")))
            .collect();
        picked.sort_by(|a, b| s(a, "/metadata/name").cmp(s(b, "/metadata/name")));
        for r in picked {
            for rule in r
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !out.iter().any(|o| same_rule(o, rule)) {
                    out.push(rule.clone());
                }
            }
        }
    }
    Some(out)
}

/// `equality.Semantic.DeepEqual` of two PolicyRules: a missing list equals an empty one.
fn same_rule(a: &Value, b: &Value) -> bool {
    let list = |r: &Value, k: &str| -> Vec<Value> {
        r.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    [
        "verbs",
        "apiGroups",
        "resources",
        "resourceNames",
        "nonResourceURLs",
    ]
    .iter()
    .all(|k| list(a, k) == list(b, k))
}

fn same_rules(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_rule(x, y))
}

impl Controller for ClusterRoleAggregation {
    fn prefixes(&self) -> &'static [&'static str] {
        &[PREFIX]
    }

    /// Any ClusterRole's change may concern any aggregated one (upstream queues them all: the
    /// set is small and the dependency graph unknown).
    fn dirty(&mut self, api: &Api, _ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        out.extend(self.all(api));
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        api.store
            .list(PREFIX)
            .0
            .iter()
            .filter(|r| r.get("aggregationRule").is_some_and(Value::is_object))
            .map(|r| (String::new(), s(r, "/metadata/name").to_string()))
            .collect()
    }

    fn sync(&mut self, api: &Api, _ns: &str, name: &str) -> bool {
        let Some(role) = api.store.get(&def().key_for("", name)) else {
            return true;
        };
        let roles = api.store.list(PREFIX).0;
        let Some(rules) = aggregated_rules(&role, &roles) else {
            return true;
        };
        let current = role.get("rules").and_then(Value::as_array);
        if same_rules(current.map_or(&[], Vec::as_slice), &rules) {
            return true;
        }
        client::update(api, def(), "", name, |o| {
            o["rules"] = Value::Array(rules.clone());
        })
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn role(name: &str, labels: Value, rules: Value) -> Arc<Value> {
        Arc::new(json!({"metadata": {"name": name, "labels": labels}, "rules": rules}))
    }

    fn get(res: &str) -> Value {
        json!({"verbs": ["get"], "apiGroups": [""], "resources": [res]})
    }

    #[test]
    fn each_selector_in_turn_its_roles_by_name_each_rule_once() {
        let agg = json!({"metadata": {"name": "view", "labels": {"feed": "view"}},
            "aggregationRule": {"clusterRoleSelectors": [
                {"matchLabels": {"feed": "view"}}, {"matchLabels": {"extra": "yes"}}]},
            "rules": [get("stale")]});
        let roles = vec![
            role("zeta", json!({"feed": "view"}), json!([get("pods")])),
            role(
                "alpha",
                json!({"feed": "view"}),
                json!([get("services"), {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": []}]),
            ),
            role("beta", json!({"extra": "yes"}), json!([get("configmaps")])),
            role("other", json!({}), json!([get("secrets")])),
            Arc::new(agg.clone()),
        ];
        let rules = aggregated_rules(&agg, &roles).expect("aggregated");
        // alpha before zeta; zeta's pods rule equals alpha's (an empty resourceNames is none);
        // the role's own stale rule and the unlabelled role's are not kept.
        assert_eq!(
            rules,
            [
                get("services"),
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": []}),
                get("configmaps"),
            ]
        );
        assert!(aggregated_rules(&get("x"), &roles).is_none());
        let no_selectors = json!({"metadata": {"name": "r"}, "aggregationRule": {}});
        assert_eq!(aggregated_rules(&no_selectors, &roles), Some(vec![]));
    }
}
