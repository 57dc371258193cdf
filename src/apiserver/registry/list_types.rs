//! How each list of the served kinds merges, in one table: the `+patchMergeKey`,
//! `+patchStrategy`, `+listType` and `+listMapKey` markers of upstream's `types.go`
//! (core's: release-1.33, see specs/workloads-etcd-truth.md §4.6; the other groups' from the
//! `types.go` of kubernetes/api, for the fields 1.33 has). k8s-openapi's schemas carry the
//! field shapes but none of these markers, so this table is the single source the OpenAPI
//! documents (as `x-kubernetes-*` extensions), strategic merge patch and server-side apply read.
//! A list that is not here is atomic, as upstream treats an unmarked list.

use serde_json::{Map, Value, json};

/// `+listType` (and `+listMapKey` for maps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListType {
    Atomic,
    /// Scalars, merged as a set of values (`finalizers`).
    Set,
    /// Objects identified by these fields (`ports`: containerPort and protocol).
    Map(&'static [&'static str]),
}

/// One list field of one schema type.
#[derive(Debug)]
pub(crate) struct ListDef {
    /// The schema that owns the field (`io.k8s.api.core.v1.PodSpec`).
    pub owner: &'static str,
    pub field: &'static str,
    /// `+patchMergeKey` (strategic merge patch only).
    pub merge_key: Option<&'static str>,
    /// `+patchStrategy` (`merge`, `merge,retainKeys`).
    pub strategy: Option<&'static str>,
    pub list_type: ListType,
}

const CORE: &str = "io.k8s.api.core.v1.";
const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";

/// A keyed, merged list: same key for strategic merge patch and for apply.
const fn merged(
    owner: &'static str,
    field: &'static str,
    key: &'static str,
    strategy: &'static str,
    keys: &'static [&'static str],
) -> ListDef {
    ListDef {
        owner,
        field,
        merge_key: Some(key),
        strategy: Some(strategy),
        list_type: ListType::Map(keys),
    }
}

const fn atomic(owner: &'static str, field: &'static str) -> ListDef {
    ListDef {
        owner,
        field,
        merge_key: None,
        strategy: None,
        list_type: ListType::Atomic,
    }
}

/// Keyed for apply (`+listType=map`) with no `+patchStrategy`: a strategic merge patch
/// replaces the list whole.
const fn keyed(owner: &'static str, field: &'static str, keys: &'static [&'static str]) -> ListDef {
    ListDef {
        owner,
        field,
        merge_key: None,
        strategy: None,
        list_type: ListType::Map(keys),
    }
}

/// `+listType=set` with no `+patchStrategy`.
const fn set(owner: &'static str, field: &'static str) -> ListDef {
    ListDef {
        owner,
        field,
        merge_key: None,
        strategy: None,
        list_type: ListType::Set,
    }
}

const NAME: &[&str] = &["name"];
const TYPE: &[&str] = &["type"];
const IP: &[&str] = &["ip"];

/// Core's and meta's owners are written without their package prefix; [`lookup`] adds it.
static LISTS: &[ListDef] = &[
    // ObjectMeta
    ListDef {
        owner: "ObjectMeta",
        field: "finalizers",
        merge_key: None,
        strategy: Some("merge"),
        list_type: ListType::Set,
    },
    merged("ObjectMeta", "ownerReferences", "uid", "merge", &["uid"]),
    atomic("ObjectMeta", "managedFields"),
    // PodSpec
    merged("PodSpec", "containers", "name", "merge", NAME),
    merged("PodSpec", "initContainers", "name", "merge", NAME),
    merged("PodSpec", "ephemeralContainers", "name", "merge", NAME),
    merged("PodSpec", "imagePullSecrets", "name", "merge", NAME),
    merged("PodSpec", "schedulingGates", "name", "merge", NAME),
    merged("PodSpec", "volumes", "name", "merge,retainKeys", NAME),
    merged(
        "PodSpec",
        "resourceClaims",
        "name",
        "merge,retainKeys",
        NAME,
    ),
    merged("PodSpec", "hostAliases", "ip", "merge", IP),
    merged(
        "PodSpec",
        "topologySpreadConstraints",
        "topologyKey",
        "merge",
        &["topologyKey", "whenUnsatisfiable"],
    ),
    atomic("PodSpec", "tolerations"),
    atomic("PodSpec", "readinessGates"),
    // Container and EphemeralContainer (the same fields)
    merged(
        "Container",
        "ports",
        "containerPort",
        "merge",
        &["containerPort", "protocol"],
    ),
    merged("Container", "env", "name", "merge", NAME),
    merged(
        "Container",
        "volumeMounts",
        "mountPath",
        "merge",
        &["mountPath"],
    ),
    merged(
        "Container",
        "volumeDevices",
        "devicePath",
        "merge",
        &["devicePath"],
    ),
    atomic("Container", "command"),
    atomic("Container", "args"),
    atomic("Container", "envFrom"),
    atomic("Container", "resizePolicy"),
    merged(
        "EphemeralContainer",
        "ports",
        "containerPort",
        "merge",
        &["containerPort", "protocol"],
    ),
    merged("EphemeralContainer", "env", "name", "merge", NAME),
    merged(
        "EphemeralContainer",
        "volumeMounts",
        "mountPath",
        "merge",
        &["mountPath"],
    ),
    merged(
        "EphemeralContainer",
        "volumeDevices",
        "devicePath",
        "merge",
        &["devicePath"],
    ),
    atomic("EphemeralContainer", "command"),
    atomic("EphemeralContainer", "args"),
    atomic("EphemeralContainer", "envFrom"),
    atomic("EphemeralContainer", "resizePolicy"),
    // PodStatus
    merged("PodStatus", "conditions", "type", "merge", TYPE),
    merged("PodStatus", "podIPs", "ip", "merge", IP),
    ListDef {
        owner: "PodStatus",
        field: "hostIPs",
        merge_key: Some("ip"),
        strategy: Some("merge"),
        list_type: ListType::Atomic,
    },
    atomic("PodStatus", "containerStatuses"),
    atomic("PodStatus", "initContainerStatuses"),
    atomic("PodStatus", "ephemeralContainerStatuses"),
    // Node
    ListDef {
        owner: "NodeSpec",
        field: "podCIDRs",
        merge_key: None,
        strategy: Some("merge"),
        list_type: ListType::Set,
    },
    atomic("NodeSpec", "taints"),
    merged("NodeStatus", "conditions", "type", "merge", TYPE),
    merged("NodeStatus", "addresses", "type", "merge", TYPE),
    atomic("NodeStatus", "images"),
    atomic("NodeStatus", "volumesInUse"),
    atomic("NodeStatus", "volumesAttached"),
    // Namespace, ServiceAccount
    atomic("NamespaceSpec", "finalizers"),
    merged("NamespaceStatus", "conditions", "type", "merge", TYPE),
    merged(
        "ServiceSpec",
        "ports",
        "port",
        "merge",
        &["port", "protocol"],
    ),
    merged("ServiceAccount", "secrets", "name", "merge", NAME),
    atomic("ServiceAccount", "imagePullSecrets"),
    // The other core kinds' conditions, and a container's resource claims
    merged("ServiceStatus", "conditions", "type", "merge", TYPE),
    merged(
        "PersistentVolumeClaimStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    merged(
        "ReplicationControllerStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    merged("ComponentStatus", "conditions", "type", "merge", TYPE),
    merged(
        "PodStatus",
        "resourceClaimStatuses",
        "name",
        "merge,retainKeys",
        NAME,
    ),
    keyed("ResourceRequirements", "claims", NAME),
    // The other groups name their owners in full (`lookup` strips only core's and meta's).
    // apps/v1
    merged(
        "io.k8s.api.apps.v1.DeploymentStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    merged(
        "io.k8s.api.apps.v1.ReplicaSetStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    merged(
        "io.k8s.api.apps.v1.StatefulSetStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    merged(
        "io.k8s.api.apps.v1.DaemonSetStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    atomic("io.k8s.api.apps.v1.StatefulSetSpec", "volumeClaimTemplates"),
    // batch/v1: a Job's conditions merge by type in a strategic merge patch but are atomic
    // to apply.
    ListDef {
        owner: "io.k8s.api.batch.v1.JobStatus",
        field: "conditions",
        merge_key: Some("type"),
        strategy: Some("merge"),
        list_type: ListType::Atomic,
    },
    set("io.k8s.api.batch.v1.UncountedTerminatedPods", "succeeded"),
    set("io.k8s.api.batch.v1.UncountedTerminatedPods", "failed"),
    set(
        "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
        "values",
    ),
    atomic("io.k8s.api.batch.v1.PodFailurePolicy", "rules"),
    atomic(
        "io.k8s.api.batch.v1.PodFailurePolicyRule",
        "onPodConditions",
    ),
    atomic("io.k8s.api.batch.v1.SuccessPolicy", "rules"),
    atomic("io.k8s.api.batch.v1.CronJobStatus", "active"),
    // policy/v1, autoscaling/v2
    merged(
        "io.k8s.api.policy.v1.PodDisruptionBudgetStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    merged(
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus",
        "conditions",
        "type",
        "merge",
        TYPE,
    ),
    atomic(
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec",
        "metrics",
    ),
    atomic(
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus",
        "currentMetrics",
    ),
    atomic("io.k8s.api.autoscaling.v2.HPAScalingRules", "policies"),
    // certificates/v1: keyed by type for apply, no patch strategy (a patch replaces them)
    keyed(
        "io.k8s.api.certificates.v1.CertificateSigningRequestStatus",
        "conditions",
        TYPE,
    ),
    atomic(
        "io.k8s.api.certificates.v1.CertificateSigningRequestSpec",
        "usages",
    ),
    atomic(
        "io.k8s.api.certificates.v1.CertificateSigningRequestSpec",
        "groups",
    ),
    // discovery.k8s.io/v1
    set("io.k8s.api.discovery.v1.Endpoint", "addresses"),
    atomic("io.k8s.api.discovery.v1.EndpointSlice", "endpoints"),
    atomic("io.k8s.api.discovery.v1.EndpointSlice", "ports"),
    // rbac.authorization.k8s.io/v1
    atomic("io.k8s.api.rbac.v1.PolicyRule", "verbs"),
    atomic("io.k8s.api.rbac.v1.PolicyRule", "apiGroups"),
    atomic("io.k8s.api.rbac.v1.PolicyRule", "resources"),
    atomic("io.k8s.api.rbac.v1.PolicyRule", "resourceNames"),
    atomic("io.k8s.api.rbac.v1.PolicyRule", "nonResourceURLs"),
    atomic("io.k8s.api.rbac.v1.Role", "rules"),
    atomic("io.k8s.api.rbac.v1.ClusterRole", "rules"),
    atomic("io.k8s.api.rbac.v1.RoleBinding", "subjects"),
    atomic("io.k8s.api.rbac.v1.ClusterRoleBinding", "subjects"),
    atomic("io.k8s.api.rbac.v1.AggregationRule", "clusterRoleSelectors"),
];

/// The fields other than lists with a `+patchStrategy`, by full schema name: a union whose
/// members kubectl clears with `$retainKeys` (a Deployment's strategy becoming `Recreate`
/// drops its `rollingUpdate`). kubectl reads this from the OpenAPI document.
static FIELD_STRATEGIES: &[(&str, &str, &str)] = &[(
    "io.k8s.api.apps.v1.DeploymentSpec",
    "strategy",
    "retainKeys",
)];

/// The list definition of `field` in the schema named `owner` (full upstream name).
pub(crate) fn lookup(owner: &str, field: &str) -> Option<&'static ListDef> {
    let short = owner
        .strip_prefix(CORE)
        .or_else(|| owner.strip_prefix(META))
        .unwrap_or(owner);
    LISTS.iter().find(|d| d.owner == short && d.field == field)
}

/// Add the `x-kubernetes-*` extensions of every table entry to the property schemas of `schemas`
/// (OpenAPI v3 `components/schemas` or v2 `definitions`), as kube-openapi's generator does.
pub(crate) fn annotate(schemas: &mut Map<String, Value>) {
    for (name, schema) in schemas.iter_mut() {
        let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
            continue;
        };
        for (_, field, strategy) in FIELD_STRATEGIES.iter().filter(|(o, _, _)| o == name) {
            if let Some(p) = props.get_mut(*field).and_then(Value::as_object_mut) {
                p.insert("x-kubernetes-patch-strategy".into(), json!(strategy));
            }
        }
        for (field, prop) in props.iter_mut() {
            let Some(def) = lookup(name, field) else {
                continue;
            };
            let Some(p) = prop.as_object_mut() else {
                continue;
            };
            if let Some(k) = def.merge_key {
                p.insert("x-kubernetes-patch-merge-key".into(), json!(k));
            }
            if let Some(s) = def.strategy {
                p.insert("x-kubernetes-patch-strategy".into(), json!(s));
            }
            let (list_type, keys) = match def.list_type {
                ListType::Atomic => ("atomic", None),
                ListType::Set => ("set", None),
                ListType::Map(keys) => ("map", Some(keys)),
            };
            p.insert("x-kubernetes-list-type".into(), json!(list_type));
            if let Some(keys) = keys {
                p.insert("x-kubernetes-list-map-keys".into(), json!(keys));
            }
        }
    }
}

/// The name of the schema a property of `owner` refers to (`PodSpec.containers` → `Container`),
/// through a `$ref`, an `allOf` of one `$ref`, or the `items` of an array.
pub(crate) fn property_type(
    schemas: &Map<String, Value>,
    owner: &str,
    field: &str,
) -> Option<String> {
    let prop = schemas.get(owner)?.get("properties")?.get(field)?;
    let target = prop.get("items").unwrap_or(prop);
    ref_name(target)
}

/// Whether a property of `owner` is a map of names to values (`additionalProperties`), like
/// labels, rather than a struct.
pub(crate) fn is_map(schemas: &Map<String, Value>, owner: &str, field: &str) -> bool {
    schemas
        .get(owner)
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(field))
        .is_some_and(|p| p.get("additionalProperties").is_some_and(Value::is_object))
}

fn ref_name(schema: &Value) -> Option<String> {
    let r = schema.get("$ref").and_then(Value::as_str).or_else(|| {
        schema
            .get("allOf")?
            .as_array()?
            .first()?
            .get("$ref")?
            .as_str()
    })?;
    r.rsplit('/').next().map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_keyed_by_port_and_protocol_and_merged_by_port() {
        let d = lookup("io.k8s.api.core.v1.Container", "ports");
        assert_eq!(d.and_then(|d| d.merge_key), Some("containerPort"));
        assert_eq!(
            d.map(|d| d.list_type),
            Some(ListType::Map(&["containerPort", "protocol"]))
        );
        assert!(
            lookup("io.k8s.api.core.v1.PodSpec", "tolerations")
                .is_some_and(|d| d.strategy.is_none())
        );
        assert!(lookup("io.k8s.api.core.v1.PodSpec", "nodeName").is_none());
    }

    #[test]
    fn other_groups_are_looked_up_by_their_full_names() {
        let d = lookup("io.k8s.api.apps.v1.DeploymentStatus", "conditions");
        assert_eq!(d.map(|d| d.list_type), Some(ListType::Map(&["type"])));
        let job = lookup("io.k8s.api.batch.v1.JobStatus", "conditions");
        assert_eq!(job.and_then(|d| d.merge_key), Some("type"));
        assert_eq!(job.map(|d| d.list_type), Some(ListType::Atomic));
        // A core short name is core's alone.
        assert!(lookup("io.k8s.api.apps.v1.PodSpec", "containers").is_none());
        assert!(lookup("DeploymentStatus", "conditions").is_none());
    }
}
