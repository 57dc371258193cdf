//! The resources this server serves, in one table: discovery, OpenAPI, RBAC checks, storage keys
//! and the router all read it, so adding a resource is one line here plus its strategy.

/// One REST resource (upstream: an `APIResource` plus its storage prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceDef {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub verbs: &'static [&'static str],
    /// The etcd key segment (`minions` for nodes, as upstream).
    pub key: &'static str,
    pub subresources: &'static [&'static str],
    pub categories: &'static [&'static str],
}

const CRUD: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const CREATE_ONLY: &[&str] = &["create"];
/// A kind read from the live process, not from storage (`componentstatuses`).
const READ_ONLY: &[&str] = &["get", "list"];
/// A stored kind nothing may write (`customresourcedefinitions`: no custom resources here).
const READ_AND_WATCH: &[&str] = &["get", "list", "watch"];

#[allow(clippy::too_many_arguments)]
const fn r(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    verbs: &'static [&'static str],
    key: &'static str,
    subresources: &'static [&'static str],
    categories: &'static [&'static str],
) -> ResourceDef {
    ResourceDef {
        group,
        version,
        plural,
        singular,
        kind,
        namespaced,
        short_names,
        verbs,
        key,
        subresources,
        categories,
    }
}

pub const RBAC: &str = "rbac.authorization.k8s.io";
pub const NETWORKING: &str = crate::apiserver::registry::networking::GROUP;

pub static RESOURCES: &[ResourceDef] = &[
    r(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        false,
        &["ns"],
        CRUD,
        "namespaces",
        &["status"],
        &[],
    ),
    r(
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        false,
        &["no"],
        CRUD,
        "minions",
        &["status"],
        &[],
    ),
    r(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        true,
        &["po"],
        CRUD,
        "pods",
        &[
            "binding",
            "status",
            "ephemeralcontainers",
            "eviction",
            "log",
            "exec",
            "attach",
            "portforward",
        ],
        &["all"],
    ),
    r(
        "",
        "v1",
        "componentstatuses",
        "componentstatus",
        "ComponentStatus",
        false,
        &["cs"],
        READ_ONLY,
        "",
        &[],
        &[],
    ),
    r(
        "",
        "v1",
        "bindings",
        "binding",
        "Binding",
        true,
        &[],
        CREATE_ONLY,
        "bindings",
        &[],
        &[],
    ),
    r(
        "",
        "v1",
        "configmaps",
        "configmap",
        "ConfigMap",
        true,
        &["cm"],
        CRUD,
        "configmaps",
        &[],
        &[],
    ),
    r(
        "",
        "v1",
        "events",
        "event",
        "Event",
        true,
        &["ev"],
        CRUD,
        "events",
        &[],
        &[],
    ),
    r(
        "",
        "v1",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        true,
        &["sa"],
        CRUD,
        "serviceaccounts",
        &["token"],
        &[],
    ),
    r(
        "",
        "v1",
        "secrets",
        "secret",
        "Secret",
        true,
        &[],
        CRUD,
        "secrets",
        &[],
        &[],
    ),
    r(
        "",
        "v1",
        "services",
        "service",
        "Service",
        true,
        &["svc"],
        CRUD,
        "services/specs",
        &["status"],
        &["all"],
    ),
    r(
        "",
        "v1",
        "endpoints",
        "endpoints",
        "Endpoints",
        true,
        &["ep"],
        CRUD,
        "services/endpoints",
        &[],
        &[],
    ),
    r(
        "",
        "v1",
        "persistentvolumes",
        "persistentvolume",
        "PersistentVolume",
        false,
        &["pv"],
        CRUD,
        "persistentvolumes",
        &["status"],
        &[],
    ),
    r(
        "",
        "v1",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
        CRUD,
        "persistentvolumeclaims",
        &["status"],
        &[],
    ),
    r(
        "",
        "v1",
        "limitranges",
        "limitrange",
        "LimitRange",
        true,
        &["limits"],
        CRUD,
        "limitranges",
        &[],
        &[],
    ),
    r(
        "",
        "v1",
        "resourcequotas",
        "resourcequota",
        "ResourceQuota",
        true,
        &["quota"],
        CRUD,
        "resourcequotas",
        &["status"],
        &[],
    ),
    r(
        "",
        "v1",
        "replicationcontrollers",
        "replicationcontroller",
        "ReplicationController",
        true,
        &["rc"],
        CRUD,
        "controllers",
        &["status", "scale"],
        &["all"],
    ),
    r(
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        "endpointslice",
        "EndpointSlice",
        true,
        &[],
        CRUD,
        "endpointslices",
        &[],
        &[],
    ),
    r(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        true,
        &["deploy"],
        CRUD,
        "deployments",
        &["status", "scale"],
        &["all"],
    ),
    r(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        &["rs"],
        CRUD,
        "replicasets",
        &["status", "scale"],
        &["all"],
    ),
    r(
        "apps",
        "v1",
        "daemonsets",
        "daemonset",
        "DaemonSet",
        true,
        &["ds"],
        CRUD,
        "daemonsets",
        &["status"],
        &["all"],
    ),
    r(
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        &["sts"],
        CRUD,
        "statefulsets",
        &["status", "scale"],
        &["all"],
    ),
    r(
        "apps",
        "v1",
        "controllerrevisions",
        "controllerrevision",
        "ControllerRevision",
        true,
        &[],
        CRUD,
        "controllerrevisions",
        &[],
        &[],
    ),
    r(
        "certificates.k8s.io",
        "v1",
        "certificatesigningrequests",
        "certificatesigningrequest",
        "CertificateSigningRequest",
        false,
        &["csr"],
        CRUD,
        "certificatesigningrequests",
        &["status", "approval"],
        &[],
    ),
    // Stored once, as autoscaling/v2 (the preferred version, so listed first); autoscaling/v1
    // is the same objects converted (`registry/conversion.rs`).
    r(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        true,
        &["hpa"],
        CRUD,
        "horizontalpodautoscalers",
        &["status"],
        &["all"],
    ),
    r(
        "autoscaling",
        "v1",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        true,
        &["hpa"],
        CRUD,
        "horizontalpodautoscalers",
        &["status"],
        &["all"],
    ),
    r(
        "batch",
        "v1",
        "jobs",
        "job",
        "Job",
        true,
        &[],
        CRUD,
        "jobs",
        &["status"],
        &["all"],
    ),
    r(
        "batch",
        "v1",
        "cronjobs",
        "cronjob",
        "CronJob",
        true,
        &["cj"],
        CRUD,
        "cronjobs",
        &["status"],
        &["all"],
    ),
    r(
        NETWORKING,
        "v1",
        "ingresses",
        "ingress",
        "Ingress",
        true,
        &["ing"],
        CRUD,
        // kube-apiserver keeps ingresses under the singular (test/integration/etcd/data.go).
        "ingress",
        &["status"],
        &[],
    ),
    r(
        NETWORKING,
        "v1",
        "ingressclasses",
        "ingressclass",
        "IngressClass",
        false,
        &[],
        CRUD,
        "ingressclasses",
        &[],
        &[],
    ),
    r(
        NETWORKING,
        "v1",
        "networkpolicies",
        "networkpolicy",
        "NetworkPolicy",
        true,
        &["netpol"],
        CRUD,
        "networkpolicies",
        &[],
        &[],
    ),
    r(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        true,
        &["pdb"],
        CRUD,
        "poddisruptionbudgets",
        &["status"],
        &[],
    ),
    r(
        "events.k8s.io",
        "v1",
        "events",
        "event",
        "Event",
        true,
        &["ev"],
        CRUD,
        "events",
        &[],
        &[],
    ),
    r(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "priorityclass",
        "PriorityClass",
        false,
        &["pc"],
        CRUD,
        "priorityclasses",
        &[],
        &[],
    ),
    r(
        crate::apiserver::registry::storage::GROUP,
        "v1",
        "storageclasses",
        "storageclass",
        "StorageClass",
        false,
        &["sc"],
        CRUD,
        "storageclasses",
        &[],
        &[],
    ),
    r(
        "coordination.k8s.io",
        "v1",
        "leases",
        "lease",
        "Lease",
        true,
        &[],
        CRUD,
        "leases",
        &[],
        &[],
    ),
    r(
        RBAC,
        "v1",
        "clusterroles",
        "clusterrole",
        "ClusterRole",
        false,
        &[],
        CRUD,
        "clusterroles",
        &[],
        &[],
    ),
    r(
        RBAC,
        "v1",
        "clusterrolebindings",
        "clusterrolebinding",
        "ClusterRoleBinding",
        false,
        &[],
        CRUD,
        "clusterrolebindings",
        &[],
        &[],
    ),
    r(
        RBAC,
        "v1",
        "roles",
        "role",
        "Role",
        true,
        &[],
        CRUD,
        "roles",
        &[],
        &[],
    ),
    r(
        RBAC,
        "v1",
        "rolebindings",
        "rolebinding",
        "RoleBinding",
        true,
        &[],
        CRUD,
        "rolebindings",
        &[],
        &[],
    ),
    r(
        "authentication.k8s.io",
        "v1",
        "selfsubjectreviews",
        "selfsubjectreview",
        "SelfSubjectReview",
        false,
        &[],
        CREATE_ONLY,
        "",
        &[],
        &[],
    ),
    r(
        "authentication.k8s.io",
        "v1beta1",
        "selfsubjectreviews",
        "selfsubjectreview",
        "SelfSubjectReview",
        false,
        &[],
        CREATE_ONLY,
        "",
        &[],
        &[],
    ),
    r(
        "authentication.k8s.io",
        "v1",
        "tokenreviews",
        "tokenreview",
        "TokenReview",
        false,
        &[],
        CREATE_ONLY,
        "",
        &[],
        &[],
    ),
    r(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "selfsubjectaccessreview",
        "SelfSubjectAccessReview",
        false,
        &[],
        CREATE_ONLY,
        "",
        &[],
        &[],
    ),
    r(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        false,
        &["crd", "crds"],
        READ_AND_WATCH,
        "apiextensions.k8s.io/customresourcedefinitions",
        &[],
        &["api-extensions"],
    ),
    r(
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "subjectaccessreview",
        "SubjectAccessReview",
        false,
        &[],
        CREATE_ONLY,
        "",
        &[],
        &[],
    ),
    r(
        "authorization.k8s.io",
        "v1",
        "localsubjectaccessreviews",
        "localsubjectaccessreview",
        "LocalSubjectAccessReview",
        true,
        &[],
        CREATE_ONLY,
        "",
        &[],
        &[],
    ),
    r(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "selfsubjectrulesreview",
        "SelfSubjectRulesReview",
        false,
        &[],
        CREATE_ONLY,
        "",
        &[],
        &[],
    ),
];

impl ResourceDef {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Only resources with a storage key are stored; reviews are computed per request.
    /// kube-apiserver's warning on every request to a deprecated kind's routes, errors
    /// included (`k8s.io/api/core/v1/lifecycle.go`, worded by the deprecation package).
    pub fn deprecation(&self) -> Option<&'static str> {
        match (self.group, self.version, self.plural) {
            ("", "v1", "componentstatuses") => Some("v1 ComponentStatus is deprecated in v1.19+"),
            ("", "v1", "endpoints") => {
                Some("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
            }
            _ => None,
        }
    }

    pub fn stored(&self) -> bool {
        !self.key.is_empty()
    }

    /// `/registry/pods/default/app`, `/registry/minions/node-1`.
    pub fn key_for(&self, namespace: &str, name: &str) -> String {
        if self.namespaced {
            format!("/registry/{}/{namespace}/{name}", self.key)
        } else {
            format!("/registry/{}/{name}", self.key)
        }
    }

    /// The prefix a list or watch covers: one namespace, or all of them.
    pub fn prefix_for(&self, namespace: &str) -> String {
        if self.namespaced && !namespace.is_empty() {
            format!("/registry/{}/{namespace}/", self.key)
        } else {
            format!("/registry/{}/", self.key)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
}

pub fn lookup(group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

pub fn by_kind(group: &str, kind: &str) -> Option<&'static ResourceDef> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.kind == kind)
}

/// The group/versions served, in discovery order (core first).
pub fn group_versions() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for r in RESOURCES {
        match out.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, vs)) => {
                if !vs.contains(&r.version) {
                    vs.push(r.version);
                }
            }
            None => out.push((r.group, vec![r.version])),
        }
    }
    out
}
