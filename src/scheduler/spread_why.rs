//! Why PodTopologySpread scored the nodes as it did, in the terms a reader reasons with: the
//! constraints in force (the pod's own, or the system defaults with the selector its owning
//! controller and Services give), how many matching pods each node's domain already holds,
//! and the skew placing the pod there would make. The counts are redone from the snapshot the
//! cycle ran on; the scores beside them are the engine's own, so the two can be compared.

use serde::Serialize;

use crate::scheduler::plugins::node_affinity::pod_matches_node;
use crate::scheduler::plugins::pod_topology_spread::{
    self, HOSTNAME, NAME, SpreadArgs, count_matching,
};
use crate::scheduler::podinfo::{PodInfo, SpreadConstraint};
use crate::scheduler::snapshot::Snapshot;
use crate::scheduler::trace::PodTrace;

#[derive(Debug, Clone, Serialize)]
pub struct SpreadWhy {
    /// `system defaults` or `the pod's topologySpreadConstraints`.
    pub constraints_from: &'static str,
    /// The pod's controller (`kind`, `name`) whose selector the system defaults use.
    pub owner: Option<Owner>,
    /// Selectors of the Services in the pod's namespace that select it (`k=v,…`).
    pub services: Vec<String>,
    pub constraints: Vec<ConstraintWhy>,
    /// One entry per node the engine scored, in its order.
    pub nodes: Vec<NodeWhy>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Owner {
    pub kind: String,
    pub name: String,
    /// Whether the scheduler knew the owner's selector (a controller it was told about).
    pub selector_known: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConstraintWhy {
    #[serde(rename = "topologyKey")]
    pub topology_key: String,
    #[serde(rename = "maxSkew")]
    pub max_skew: i64,
    #[serde(rename = "whenUnsatisfiable")]
    pub when_unsatisfiable: &'static str,
    /// Matching pods per domain among the scored nodes, and the smallest count.
    pub domains: Vec<Domain>,
    pub min: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Domain {
    pub value: String,
    pub matching: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeWhy {
    pub node: String,
    pub constraints: Vec<NodeConstraint>,
    /// The engine's PodTopologySpread scores for the node.
    pub raw: i64,
    pub normalized: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeConstraint {
    #[serde(rename = "topologyKey")]
    pub topology_key: String,
    /// The node's domain; None when the node lacks the key (the constraint counts nothing).
    pub value: Option<String>,
    pub matching: i64,
    /// matching + 1 (the pod itself) − the smallest domain's count.
    pub skew_if_here: Option<i64>,
}

/// The explanation for one cycle, or None when PodTopologySpread did not score (an older
/// profile, no feasible node) or no constraint applied to the pod.
pub fn explain(
    snap: &Snapshot,
    pod: &PodInfo,
    trace: &PodTrace,
    args: &SpreadArgs,
) -> Option<SpreadWhy> {
    let scored: Vec<(usize, i64, i64)> = trace
        .score
        .iter()
        .filter_map(|s| {
            let p = s.plugins.iter().find(|p| p.name == NAME)?;
            Some((*snap.node_index.get(&*s.node)?, p.raw, p.normalized))
        })
        .collect();
    if scored.is_empty() {
        return None;
    }
    let own = !pod.spread_constraints.is_empty();
    let constraints: Vec<SpreadConstraint> = if own {
        pod.spread_constraints
            .iter()
            .filter(|c| !c.do_not_schedule)
            .cloned()
            .collect()
    } else {
        pod_topology_spread::default_constraints(snap, pod, args, false)
    };
    if constraints.is_empty() {
        return None;
    }
    let domain_count = |c: &SpreadConstraint, value: &str| -> i64 {
        if c.topology_key == HOSTNAME {
            return snap
                .nodes
                .iter()
                .filter(|n| n.labels.get(HOSTNAME).map(String::as_str) == Some(value))
                .map(|n| count_matching(snap, n, &c.selector, &pod.namespace))
                .sum();
        }
        snap.nodes
            .iter()
            .filter(|n| n.labels.get(&c.topology_key).map(String::as_str) == Some(value))
            .filter(|n| !c.honor_node_affinity || pod_matches_node(pod, n))
            .map(|n| count_matching(snap, n, &c.selector, &pod.namespace))
            .sum()
    };
    let whys: Vec<ConstraintWhy> = constraints
        .iter()
        .map(|c| {
            let mut domains: Vec<Domain> = Vec::new();
            for &(k, _, _) in &scored {
                let Some(v) = snap.nodes[k].labels.get(&c.topology_key) else {
                    continue;
                };
                if domains.iter().all(|d| d.value != *v) {
                    domains.push(Domain {
                        value: v.clone(),
                        matching: domain_count(c, v),
                    });
                }
            }
            ConstraintWhy {
                topology_key: c.topology_key.clone(),
                max_skew: c.max_skew,
                when_unsatisfiable: if c.do_not_schedule {
                    "DoNotSchedule"
                } else {
                    "ScheduleAnyway"
                },
                min: domains.iter().map(|d| d.matching).min(),
                domains,
            }
        })
        .collect();
    let self_match = |c: &SpreadConstraint| i64::from(c.selector.matches(&pod.labels));
    let nodes = scored
        .iter()
        .map(|&(k, raw, normalized)| {
            let node = &snap.nodes[k];
            let constraints = constraints
                .iter()
                .zip(&whys)
                .map(|(c, w)| {
                    let value = node.labels.get(&c.topology_key).cloned();
                    let matching = value
                        .as_ref()
                        .and_then(|v| w.domains.iter().find(|d| d.value == *v))
                        .map_or(0, |d| d.matching);
                    NodeConstraint {
                        topology_key: c.topology_key.clone(),
                        skew_if_here: value
                            .as_ref()
                            .and(w.min)
                            .map(|min| matching + self_match(c) - min),
                        value,
                        matching,
                    }
                })
                .collect();
            NodeWhy {
                node: node.name.clone(),
                constraints,
                raw,
                normalized,
            }
        })
        .collect();
    let services = snap
        .services
        .iter()
        .filter(|(ns, sel)| {
            *ns == pod.namespace
                && !sel.is_empty()
                && sel.iter().all(|(k, v)| pod.labels.get(k) == Some(v))
        })
        .map(|(_, sel)| {
            sel.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    Some(SpreadWhy {
        constraints_from: if own {
            "the pod's topologySpreadConstraints"
        } else {
            "system defaults"
        },
        owner: pod.owner.as_ref().map(|(kind, name)| Owner {
            kind: kind.clone(),
            name: name.clone(),
            selector_known: snap.controllers.contains_key(&(
                pod.namespace.clone(),
                kind.clone(),
                name.clone(),
            )),
        }),
        services,
        constraints: whys,
        nodes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::selector::{Labels, Selector};
    use crate::scheduler::testutil::node;
    use crate::scheduler::version::NEWEST;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    fn owned(name: &str, node_name: Option<&str>) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                     "uid": "u", "controller": true}]},
            "spec": {"nodeName": node_name, "containers": [{"name": "c"}]}
        }))
        .unwrap()
    }

    fn why(with_owner: bool) -> Option<SpreadWhy> {
        let nodes: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|n| node(n, json!({"kubernetes.io/hostname": n}), json!({})))
            .collect();
        let mut snap = Snapshot::build(&nodes, &[owned("web-1-x", Some("a"))], true).unwrap();
        if with_owner {
            let mut sel = Labels::new();
            sel.insert("app".into(), "web".into());
            snap.controllers.insert(
                ("default".into(), "ReplicaSet".into(), "web-1".into()),
                Selector::from_labels(&sel),
            );
        }
        let info = snap.pod_info(&owned("web-1-y", None)).unwrap();
        let trace = crate::scheduler::Scheduler::new(NEWEST, None, 0).schedule_one(&snap, &info);
        explain(&snap, &info, &trace, &SpreadArgs::default())
    }

    #[test]
    fn the_owner_s_pods_are_counted_per_node_with_the_skew_each_would_make() {
        let w = why(true).expect("the system defaults apply");
        assert_eq!(w.constraints_from, "system defaults");
        let owner = w.owner.as_ref().expect("owner");
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("ReplicaSet", "web-1")
        );
        assert!(owner.selector_known);
        let host = &w.constraints[0];
        assert_eq!((host.topology_key.as_str(), host.max_skew), (HOSTNAME, 3));
        assert_eq!(host.min, Some(0));
        let on = |n: &str| w.nodes.iter().find(|x| x.node == n).expect("scored");
        assert_eq!(on("a").constraints[0].matching, 1);
        assert_eq!(on("a").constraints[0].skew_if_here, Some(2));
        assert_eq!(on("b").constraints[0].skew_if_here, Some(1));
        // The engine's own scores stand beside the counts: the crowded node scores lower.
        assert!(on("a").normalized < on("b").normalized, "{w:?}");
        // No node has a zone: that default constraint counts nothing.
        assert!(w.constraints[1].domains.is_empty());
    }

    #[test]
    fn without_a_known_owner_nothing_selects_the_pod_and_there_is_nothing_to_explain() {
        assert!(why(false).is_none());
    }
}
