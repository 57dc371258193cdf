//! The user-facing ClusterRoles of kube-apiserver's bootstrap policy (upstream
//! `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`): `view`, `edit` and `admin`, the
//! roles a workshop binds (`kubectl create rolebinding … --clusterrole=view`). Upstream builds
//! them by aggregation from the `system:aggregate-to-*` roles; here each holds the union of
//! those rules for the kinds this server serves, written once at bootstrap (no aggregation
//! controller runs: a role labelled `aggregate-to-view` later is not folded in).

use serde_json::{Value, json};

const READ: [&str; 3] = ["get", "list", "watch"];
const WRITE: [&str; 5] = ["create", "delete", "deletecollection", "patch", "update"];

fn rule(verbs: &[&str], group: &str, resources: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": [group], "resources": resources})
}

/// `system:aggregate-to-view`: reading everything of a namespace but Secrets and what would
/// escalate (exec, attach, proxies).
fn view() -> Vec<Value> {
    vec![
        rule(
            &READ,
            "",
            &[
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "configmaps",
            ],
        ),
        rule(
            &READ,
            "",
            &[
                "limitranges",
                "resourcequotas",
                "bindings",
                "events",
                "pods/status",
                "resourcequotas/status",
                "namespaces/status",
                "replicationcontrollers/status",
                "pods/log",
            ],
        ),
        rule(&READ, "", &["namespaces"]),
        rule(&READ, "discovery.k8s.io", &["endpointslices"]),
        rule(
            &READ,
            "apps",
            &[
                "controllerrevisions",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
            ],
        ),
        rule(
            &READ,
            "autoscaling",
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
        ),
        rule(
            &READ,
            "batch",
            &["jobs", "cronjobs", "cronjobs/status", "jobs/status"],
        ),
        rule(
            &READ,
            "policy",
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        rule(
            &READ,
            "networking.k8s.io",
            &["networkpolicies", "ingresses", "ingresses/status"],
        ),
    ]
}

/// `system:aggregate-to-edit`: writing them, Secrets, and the escalating reads.
fn edit() -> Vec<Value> {
    let read_write: Vec<&str> = READ.iter().chain(WRITE.iter()).copied().collect();
    vec![
        rule(
            &READ,
            "",
            &[
                "pods/attach",
                "pods/proxy",
                "pods/exec",
                "pods/portforward",
                "secrets",
                "services/proxy",
            ],
        ),
        rule(&["impersonate"], "", &["serviceaccounts"]),
        rule(
            &WRITE,
            "",
            &[
                "pods",
                "pods/attach",
                "pods/proxy",
                "pods/exec",
                "pods/portforward",
            ],
        ),
        rule(&["create"], "", &["pods/eviction"]),
        rule(
            &WRITE,
            "",
            &[
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/proxy",
                "persistentvolumeclaims",
                "configmaps",
                "secrets",
                "events",
            ],
        ),
        rule(&["create"], "", &["serviceaccounts/token"]),
        rule(
            &WRITE,
            "apps",
            &[
                "statefulsets",
                "statefulsets/scale",
                "daemonsets",
                "deployments",
                "deployments/scale",
                "deployments/rollback",
                "replicasets",
                "replicasets/scale",
            ],
        ),
        rule(&WRITE, "autoscaling", &["horizontalpodautoscalers"]),
        rule(&WRITE, "batch", &["jobs", "cronjobs"]),
        rule(&WRITE, "policy", &["poddisruptionbudgets"]),
        rule(
            &WRITE,
            "networking.k8s.io",
            &["networkpolicies", "ingresses"],
        ),
        rule(&read_write, "coordination.k8s.io", &["leases"]),
    ]
}

/// `system:aggregate-to-admin`: a namespace's own RBAC too.
fn admin() -> Vec<Value> {
    let read_write: Vec<&str> = READ.iter().chain(WRITE.iter()).copied().collect();
    vec![
        rule(
            &["create"],
            "authorization.k8s.io",
            &["localsubjectaccessreviews"],
        ),
        rule(
            &read_write,
            "rbac.authorization.k8s.io",
            &["roles", "rolebindings"],
        ),
    ]
}

/// Each role and its rules, as the aggregation leaves them: admin ⊃ edit ⊃ view.
pub(crate) fn user_facing() -> [(&'static str, Vec<Value>); 3] {
    let view = view();
    let edit: Vec<Value> = edit().into_iter().chain(view.iter().cloned()).collect();
    let admin: Vec<Value> = admin().into_iter().chain(edit.iter().cloned()).collect();
    [("admin", admin), ("edit", edit), ("view", view)]
}
