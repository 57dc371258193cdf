//! Where a pod may go, as the API server checks it before the scheduler ever reads it
//! (upstream `validateAffinity` and `validateTopologySpreadConstraints`): operators that take
//! the values they need, label keys that are qualified names, weights in 1–100, topology keys.

use k8s_openapi::api::core::v1::{
    Affinity, NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm, TopologySpreadConstraint,
    WeightedPodAffinityTerm,
};
use serde_json::json;

use crate::apiserver::registry::{formats, label_selector};
use crate::apiserver::request::status::Cause;

const WEIGHT_RANGE: &str = "must be in the range 1-100";

/// `ValidateLabelName`: each message of a key that is not a qualified name.
fn label_name(key: &str, field: &str, out: &mut Vec<Cause>) {
    for m in formats::qualified_name(key) {
        out.push(Cause::invalid(field, &json!(key), &m));
    }
}

/// `ValidateNodeSelectorRequirement`. A preferred term's values may be any string.
fn node_requirement(
    r: &NodeSelectorRequirement,
    path: &str,
    check_values: bool,
    out: &mut Vec<Cause>,
) {
    let values = r.values.as_deref().unwrap_or_default();
    let vf = format!("{path}.values");
    match r.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => out.push(Cause::required(
            &vf,
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => out.push(Cause::forbidden(
            &vf,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if values.len() != 1 => out.push(Cause::required(
            &vf,
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        op => out.push(Cause::invalid(
            &format!("{path}.operator"),
            &json!(op),
            "not a valid selector operator",
        )),
    }
    label_name(&r.key, &format!("{path}.key"), out);
    if check_values {
        for (k, v) in values.iter().enumerate() {
            for m in formats::label_value(v) {
                out.push(Cause::invalid(
                    &format!("{path}.values[{k}]"),
                    &json!(v),
                    &m,
                ));
            }
        }
    }
}

/// `ValidateNodeFieldSelectorRequirement`: only `metadata.name`, with one node name.
fn field_requirement(r: &NodeSelectorRequirement, path: &str, out: &mut Vec<Cause>) {
    let values = r.values.as_deref().unwrap_or_default();
    match r.operator.as_str() {
        "In" | "NotIn" if values.len() != 1 => out.push(Cause::required(
            &format!("{path}.values"),
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        )),
        "In" | "NotIn" => {}
        op => out.push(Cause::invalid(
            &format!("{path}.operator"),
            &json!(op),
            "not a valid selector operator",
        )),
    }
    if r.key != "metadata.name" {
        out.push(Cause::invalid(
            &format!("{path}.key"),
            &json!(r.key),
            "not a valid field selector key",
        ));
    }
    for (k, v) in values.iter().enumerate() {
        for m in formats::dns1123_subdomain(v) {
            out.push(Cause::invalid(
                &format!("{path}.values[{k}]"),
                &json!(v),
                &m,
            ));
        }
    }
}

fn node_term(t: &NodeSelectorTerm, path: &str, check_values: bool, out: &mut Vec<Cause>) {
    for (j, r) in t.match_expressions.iter().flatten().enumerate() {
        node_requirement(
            r,
            &format!("{path}.matchExpressions[{j}]"),
            check_values,
            out,
        );
    }
    for (j, r) in t.match_fields.iter().flatten().enumerate() {
        field_requirement(r, &format!("{path}.matchFields[{j}]"), out);
    }
}

fn pod_term(t: &PodAffinityTerm, path: &str, out: &mut Vec<Cause>) {
    if let Some(s) = &t.label_selector {
        label_selector::validate(s, &format!("{path}.labelSelector"), out);
    }
    if let Some(s) = &t.namespace_selector {
        label_selector::validate(s, &format!("{path}.namespaceSelector"), out);
    }
    for ns in t.namespaces.iter().flatten() {
        // Upstream reports these at `namespace`, without the list's index.
        for m in formats::dns1123_label(ns) {
            out.push(Cause::invalid(&format!("{path}.namespace"), &json!(ns), &m));
        }
    }
    for (field, keys) in [
        ("matchLabelKeys", &t.match_label_keys),
        ("mismatchLabelKeys", &t.mismatch_label_keys),
    ] {
        let keys = keys.as_deref().unwrap_or_default();
        if !keys.is_empty() && t.label_selector.is_none() {
            out.push(Cause::forbidden(
                &format!("{path}.{field}"),
                "must not be specified when labelSelector is not set",
            ));
        }
        for (k, key) in keys.iter().enumerate() {
            label_name(key, &format!("{path}.{field}[{k}]"), out);
        }
    }
    let tk = format!("{path}.topologyKey");
    if t.topology_key.is_empty() {
        out.push(Cause::required(&tk, "can not be empty"));
    }
    label_name(&t.topology_key, &tk, out);
}

fn weighted(terms: &[WeightedPodAffinityTerm], path: &str, out: &mut Vec<Cause>) {
    for (i, w) in terms.iter().enumerate() {
        if !(1..=100).contains(&w.weight) {
            out.push(Cause::invalid(
                &format!("{path}[{i}].weight"),
                &json!(w.weight),
                WEIGHT_RANGE,
            ));
        }
        pod_term(
            &w.pod_affinity_term,
            &format!("{path}[{i}].podAffinityTerm"),
            out,
        );
    }
}

/// `validateAffinity` at `spec.affinity`.
pub(crate) fn validate_affinity(a: &Affinity, out: &mut Vec<Cause>) {
    const REQ: &str = "requiredDuringSchedulingIgnoredDuringExecution";
    const PREF: &str = "preferredDuringSchedulingIgnoredDuringExecution";
    if let Some(na) = &a.node_affinity {
        let path = "spec.affinity.nodeAffinity";
        if let Some(sel) = &na.required_during_scheduling_ignored_during_execution {
            let terms = format!("{path}.{REQ}.nodeSelectorTerms");
            if sel.node_selector_terms.is_empty() {
                out.push(Cause::required(
                    &terms,
                    "must have at least one node selector term",
                ));
            }
            for (i, t) in sel.node_selector_terms.iter().enumerate() {
                node_term(t, &format!("{terms}[{i}]"), true, out);
            }
        }
        for (i, p) in na
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .enumerate()
        {
            let f = format!("{path}.{PREF}[{i}]");
            if !(1..=100).contains(&p.weight) {
                out.push(Cause::invalid(
                    &format!("{f}.weight"),
                    &json!(p.weight),
                    WEIGHT_RANGE,
                ));
            }
            node_term(&p.preference, &format!("{f}.preference"), false, out);
        }
    }
    let pod_kinds = [
        (
            "podAffinity",
            a.pod_affinity.as_ref().map(|p| {
                (
                    &p.required_during_scheduling_ignored_during_execution,
                    &p.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
        (
            "podAntiAffinity",
            a.pod_anti_affinity.as_ref().map(|p| {
                (
                    &p.required_during_scheduling_ignored_during_execution,
                    &p.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
    ];
    for (kind, terms) in pod_kinds {
        let Some((required, preferred)) = terms else {
            continue;
        };
        let path = format!("spec.affinity.{kind}");
        for (i, t) in required.iter().flatten().enumerate() {
            pod_term(t, &format!("{path}.{REQ}[{i}]"), out);
        }
        weighted(
            preferred.as_deref().unwrap_or_default(),
            &format!("{path}.{PREF}"),
            out,
        );
    }
}

/// `validateTopologySpreadConstraints` at `spec.topologySpreadConstraints`.
pub(crate) fn validate_topology_spread(cs: &[TopologySpreadConstraint], out: &mut Vec<Cause>) {
    const WHEN: [&str; 2] = ["DoNotSchedule", "ScheduleAnyway"];
    const POLICIES: [&str; 2] = ["Honor", "Ignore"];
    for (i, c) in cs.iter().enumerate() {
        let p = format!("spec.topologySpreadConstraints[{i}]");
        if c.max_skew <= 0 {
            out.push(Cause::invalid(
                &format!("{p}.maxSkew"),
                &json!(c.max_skew),
                "must be greater than zero",
            ));
        }
        if c.topology_key.is_empty() {
            out.push(Cause::required(
                &format!("{p}.topologyKey"),
                "can not be empty",
            ));
        }
        if !WHEN.contains(&c.when_unsatisfiable.as_str()) {
            out.push(Cause::not_supported(
                &format!("{p}.whenUnsatisfiable"),
                &json!(c.when_unsatisfiable),
                &WHEN,
            ));
        }
        let repeated = cs[i + 1..].iter().any(|o| {
            o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
        });
        if repeated {
            out.push(Cause::duplicate(
                &format!("{p}.{{topologyKey, whenUnsatisfiable}}"),
                &json!(format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable)),
            ));
        }
        if let Some(md) = c.min_domains {
            let f = format!("{p}.minDomains");
            if md <= 0 {
                out.push(Cause::invalid(&f, &json!(md), "must be greater than zero"));
            }
            if c.when_unsatisfiable != "DoNotSchedule" {
                out.push(Cause::invalid(
                    &f,
                    &json!(md),
                    &format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {}",
                        c.when_unsatisfiable
                    ),
                ));
            }
        }
        for (field, policy) in [
            ("nodeAffinityPolicy", &c.node_affinity_policy),
            ("nodeTaintsPolicy", &c.node_taints_policy),
        ] {
            if let Some(v) = policy.as_deref().filter(|v| !POLICIES.contains(v)) {
                out.push(Cause::not_supported(
                    &format!("{p}.{field}"),
                    &json!(v),
                    &POLICIES,
                ));
            }
        }
        let keys = c.match_label_keys.as_deref().unwrap_or_default();
        if !keys.is_empty() && c.label_selector.is_none() {
            out.push(Cause::forbidden(
                &format!("{p}.matchLabelKeys"),
                "must not be specified when labelSelector is not set",
            ));
        }
        for (k, key) in keys.iter().enumerate() {
            label_name(key, &format!("{p}.matchLabelKeys[{k}]"), out);
        }
        if let Some(s) = &c.label_selector {
            label_selector::validate(s, &format!("{p}.labelSelector"), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn affinity(a: serde_json::Value) -> Vec<String> {
        let a: Affinity = serde_json::from_value(a).unwrap();
        let mut out = Vec::new();
        validate_affinity(&a, &mut out);
        out.iter().map(Cause::rendered).collect()
    }

    fn spread(c: serde_json::Value) -> Vec<String> {
        let c: Vec<TopologySpreadConstraint> = serde_json::from_value(c).unwrap();
        let mut out = Vec::new();
        validate_topology_spread(&c, &mut out);
        out.iter().map(Cause::rendered).collect()
    }

    #[test]
    fn node_affinity_operators_take_the_values_they_need() {
        let req = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
        assert_eq!(
            affinity(
                json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}})
            ),
            [format!(
                "{req}: Required value: must have at least one node selector term"
            )]
        );
        let errs = affinity(json!({"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "a", "operator": "In"},
                {"key": "a", "operator": "Exists", "values": ["x"]},
                {"key": "a", "operator": "Gt", "values": ["1", "2"]},
                {"key": "a", "operator": "Bogus"},
                {"key": "a", "operator": "Lt", "values": ["x"]},
            ]}, {"matchFields": [{"key": "spec.nodeName", "operator": "In", "values": ["n"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["not a label value!"]}]}}],
        }}));
        assert_eq!(
            errs,
            [
                format!("{req}[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
                format!("{req}[0].matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
                format!("{req}[0].matchExpressions[2].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"),
                format!("{req}[0].matchExpressions[3].operator: Invalid value: \"Bogus\": not a valid selector operator"),
                format!("{req}[1].matchFields[0].key: Invalid value: \"spec.nodeName\": not a valid field selector key"),
                "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100".to_string(),
            ]
        );
    }

    #[test]
    fn pod_affinity_terms_need_a_topology_key() {
        let errs = affinity(json!({"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"a": "b"}}}],
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101, "podAffinityTerm": {"topologyKey": "zone", "namespaces": ["Bad"]}}],
        }}));
        let p = "spec.affinity.podAntiAffinity";
        assert_eq!(
            errs[0],
            format!(
                "{p}.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty"
            )
        );
        assert_eq!(
            errs[1],
            format!(
                "{p}.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: \"\": name part must be non-empty"
            )
        );
        assert!(errs[2].contains("topologyKey: Invalid value: \"\": name part must consist of"));
        assert_eq!(
            errs[3],
            format!(
                "{p}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: must be in the range 1-100"
            )
        );
        assert!(errs[4].starts_with(&format!("{p}.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespace: Invalid value: \"Bad\": a lowercase RFC 1123 label")));
        assert_eq!(errs.len(), 5);
    }

    #[test]
    fn spread_constraints() {
        let p = "spec.topologySpreadConstraints";
        assert_eq!(
            spread(json!([
                {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Maybe"},
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2, "nodeTaintsPolicy": "Sometimes"},
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "matchLabelKeys": ["app"]},
            ])),
            [
                format!("{p}[0].maxSkew: Invalid value: 0: must be greater than zero"),
                format!("{p}[0].topologyKey: Required value: can not be empty"),
                format!(
                    "{p}[0].whenUnsatisfiable: Unsupported value: \"Maybe\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
                ),
                format!(
                    "{p}[1].{{topologyKey, whenUnsatisfiable}}: Duplicate value: \"{{zone, ScheduleAnyway}}\""
                ),
                format!(
                    "{p}[1].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"
                ),
                format!(
                    "{p}[1].nodeTaintsPolicy: Unsupported value: \"Sometimes\": supported values: \"Honor\", \"Ignore\""
                ),
                format!(
                    "{p}[2].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"
                ),
            ]
        );
        assert!(spread(json!([{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}])).is_empty());
    }
}
