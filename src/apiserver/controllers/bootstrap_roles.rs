//! The user-facing ClusterRoles of kube-apiserver's bootstrap policy (upstream
//! `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`): `view`, `edit` and `admin`, the
//! roles a workshop binds (`kubectl create rolebinding … --clusterrole=view`). As upstream, each
//! is built by aggregation (`clusterrole_aggregation.rs`): its own rules live in
//! `system:aggregate-to-<name>`, labelled to feed it, and `view` feeds `edit`, which feeds
//! `admin`. The rules are upstream's, for the kinds this server serves.

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

/// The label that feeds a ClusterRole's rules to the user-facing role `name`.
fn aggregate_to(name: &str) -> String {
    format!("rbac.authorization.k8s.io/aggregate-to-{name}")
}

/// One user-facing role: its name, its own rules (held by `system:aggregate-to-<name>`), and
/// the role it feeds in turn.
pub(crate) struct UserFacing {
    pub(crate) name: &'static str,
    rules: fn() -> Vec<Value>,
    feeds: Option<&'static str>,
}

/// In the order they are built: each feeds the next.
pub(crate) const USER_FACING: [UserFacing; 3] = [
    UserFacing {
        name: "view",
        rules: view,
        feeds: Some("edit"),
    },
    UserFacing {
        name: "edit",
        rules: edit,
        feeds: Some("admin"),
    },
    UserFacing {
        name: "admin",
        rules: admin,
        feeds: None,
    },
];

impl UserFacing {
    /// `system:aggregate-to-<name>`: its labels and rules.
    pub(crate) fn source(&self) -> (String, Value, Vec<Value>) {
        (
            format!("system:aggregate-to-{}", self.name),
            json!({ aggregate_to(self.name): "true" }),
            (self.rules)(),
        )
    }
    /// The role itself, without rules: the label of the role it feeds, and the
    /// aggregationRule that picks what feeds it.
    pub(crate) fn role(&self) -> (Value, Value) {
        let labels = match self.feeds {
            Some(next) => json!({ aggregate_to(next): "true" }),
            None => json!({}),
        };
        let rule =
            json!({"clusterRoleSelectors": [{"matchLabels": { aggregate_to(self.name): "true" }}]});
        (labels, rule)
    }
}
