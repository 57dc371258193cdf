//! Authorization: the privileged-group authorizer (`system:masters` may do anything), then RBAC
//! evaluated over real rbac.authorization.k8s.io/v1 objects from the store, as upstream's
//! `plugin/pkg/auth/authorizer/rbac` does (specs/apiserver.md §3).

use std::sync::{Arc, Mutex};

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject,
};
use serde::Serialize;
use serde_json::Value;

use crate::apiserver::request::info::RequestInfo;
use crate::apiserver::request::user::UserInfo;
use crate::apiserver::storage::interface::Storage;

/// The attributes a decision is about (upstream `authorizer.Attributes`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Attributes {
    pub verb: String,
    pub resource_request: bool,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub path: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Decision {
    pub allowed: bool,
    /// `allow` or `forbid`, as the audit annotation.
    pub decision: &'static str,
    pub reason: String,
    /// Which authorizer decided (`privileged-group`, `RBAC`, or none).
    pub authorizer: &'static str,
}

/// The RBAC objects, decoded once per store revision.
#[derive(Default)]
struct Policy {
    cluster_roles: Vec<ClusterRole>,
    cluster_role_bindings: Vec<ClusterRoleBinding>,
    roles: Vec<Role>,
    role_bindings: Vec<RoleBinding>,
}

fn decode_all<T: serde::de::DeserializeOwned>(store: &dyn Storage, prefix: &str) -> Vec<T> {
    store
        .list(prefix)
        .0
        .iter()
        .filter_map(|v| serde_json::from_value((**v).clone()).ok())
        .collect()
}

#[derive(Default)]
pub struct Authorizer {
    cache: Mutex<Option<(u64, Arc<Policy>)>>,
}

fn subject_matches(s: &Subject, user: &UserInfo, binding_ns: &str) -> bool {
    match s.kind.as_str() {
        "User" => s.name == user.username,
        "Group" => user.in_group(&s.name),
        "ServiceAccount" => {
            let ns = s
                .namespace
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or(binding_ns);
            user.username == format!("system:serviceaccount:{ns}:{}", s.name)
        }
        _ => false,
    }
}

fn describe_subject(s: &Subject, binding_ns: &str) -> String {
    match s.kind.as_str() {
        "ServiceAccount" => {
            let ns = s
                .namespace
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or(binding_ns);
            format!("ServiceAccount \"{}/{ns}\"", s.name)
        }
        k => format!("{k} {:?}", s.name),
    }
}

fn has(list: &[String], v: &str) -> bool {
    list.iter().any(|x| x == "*" || x == v)
}

pub fn rule_allows(rule: &PolicyRule, a: &Attributes) -> bool {
    if !has(&rule.verbs, &a.verb) {
        return false;
    }
    if !a.resource_request {
        return rule.non_resource_urls.iter().flatten().any(|u| {
            u == "*"
                || *u == a.path
                || (u.ends_with('*') && a.path.starts_with(u.trim_end_matches('*')))
        });
    }
    let groups = rule.api_groups.clone().unwrap_or_default();
    if !has(&groups, &a.group) {
        return false;
    }
    let resources = rule.resources.clone().unwrap_or_default();
    let combined = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let res_ok = resources.iter().any(|r| {
        r == "*"
            || *r == combined
            || (!a.subresource.is_empty() && *r == format!("*/{}", a.subresource))
    });
    if !res_ok {
        return false;
    }
    match &rule.resource_names {
        Some(names) if !names.is_empty() => !a.name.is_empty() && names.contains(&a.name),
        _ => true,
    }
}

impl Authorizer {
    fn policy(&self, store: &dyn Storage) -> Arc<Policy> {
        let rv = store.current_rv();
        let mut g = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, p)) = g.as_ref()
            && *at == rv
        {
            return p.clone();
        }
        let p = Arc::new(Policy {
            cluster_roles: decode_all(store, "/registry/clusterroles/"),
            cluster_role_bindings: decode_all(store, "/registry/clusterrolebindings/"),
            roles: decode_all(store, "/registry/roles/"),
            role_bindings: decode_all(store, "/registry/rolebindings/"),
        });
        *g = Some((rv, p.clone()));
        p
    }

    pub(crate) fn authorize(
        &self,
        store: &dyn Storage,
        user: &UserInfo,
        a: &Attributes,
    ) -> Decision {
        if user.in_group("system:masters") {
            return Decision {
                allowed: true,
                decision: "allow",
                reason: String::new(),
                authorizer: "privileged-group",
            };
        }
        let p = self.policy(store);
        let mut reason = None;
        let errors = visit(&p, user, &a.namespace, |rule, grant| {
            if rule_allows(rule, a) {
                reason = Some(grant.reason(&a.namespace));
                return true;
            }
            false
        });
        if let Some(reason) = reason {
            return Decision {
                allowed: true,
                decision: "allow",
                reason,
                authorizer: "RBAC",
            };
        }
        let reason = if errors.is_empty() {
            String::new()
        } else {
            format!("RBAC: {}", errors.join(", "))
        };
        Decision {
            allowed: false,
            decision: "forbid",
            reason,
            authorizer: "",
        }
    }

    /// Every rule that lets `user` do something in `namespace` (cluster-wide ones too), as
    /// kube-apiserver's authorizers list them for a SelfSubjectRulesReview: system:masters'
    /// privileged group first, then RBAC's bindings in the order it visits them. The roles
    /// named by bindings but missing are returned too (the review's evaluationError).
    pub(crate) fn rules_for(
        &self,
        store: &dyn Storage,
        user: &UserInfo,
        namespace: &str,
    ) -> (Vec<PolicyRule>, Vec<String>) {
        let mut rules = Vec::new();
        if user.in_group("system:masters") {
            let all = || Some(vec!["*".to_string()]);
            rules.push(PolicyRule {
                verbs: vec!["*".into()],
                api_groups: all(),
                resources: all(),
                ..Default::default()
            });
            rules.push(PolicyRule {
                verbs: vec!["*".into()],
                non_resource_urls: all(),
                ..Default::default()
            });
        }
        let p = self.policy(store);
        let errors = visit(&p, user, namespace, |rule, _| {
            rules.push(rule.clone());
            false
        });
        (rules, errors)
    }
}

/// The binding through which a rule applies to the user.
struct Grant<'a> {
    binding: &'a str,
    /// "" for a ClusterRoleBinding.
    binding_ns: &'a str,
    role_kind: &'a str,
    role: &'a str,
    subject: &'a Subject,
}

impl Grant<'_> {
    fn reason(&self, namespace: &str) -> String {
        if self.binding_ns.is_empty() {
            format!(
                "RBAC: allowed by ClusterRoleBinding {:?} of ClusterRole {:?} to {}",
                self.binding,
                self.role,
                describe_subject(self.subject, "")
            )
        } else {
            format!(
                "RBAC: allowed by RoleBinding \"{}/{namespace}\" of {} {:?} to {}",
                self.binding,
                self.role_kind,
                self.role,
                describe_subject(self.subject, namespace)
            )
        }
    }
}

/// RBAC's walk (upstream `VisitRulesFor`): each rule of each role bound to `user`, through the
/// ClusterRoleBindings, then the RoleBindings of `namespace` when there is one, until `f`
/// returns true. Returns the roles that bindings name and that do not exist.
fn visit(
    p: &Policy,
    user: &UserInfo,
    namespace: &str,
    mut f: impl FnMut(&PolicyRule, &Grant) -> bool,
) -> Vec<String> {
    let mut errors: Vec<String> = Vec::new();
    let cluster_rules = |name: &str, errors: &mut Vec<String>| -> Vec<PolicyRule> {
        match p
            .cluster_roles
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name))
        {
            Some(r) => r.rules.clone().unwrap_or_default(),
            None => {
                errors.push(format!(
                    "clusterrole.rbac.authorization.k8s.io {name:?} not found"
                ));
                vec![]
            }
        }
    };
    for b in &p.cluster_role_bindings {
        let Some(subject) = b
            .subjects
            .iter()
            .flatten()
            .find(|s| subject_matches(s, user, ""))
        else {
            continue;
        };
        let grant = Grant {
            binding: b.metadata.name.as_deref().unwrap_or_default(),
            binding_ns: "",
            role_kind: "ClusterRole",
            role: &b.role_ref.name,
            subject,
        };
        for rule in cluster_rules(&b.role_ref.name, &mut errors) {
            if f(&rule, &grant) {
                return errors;
            }
        }
    }
    if namespace.is_empty() {
        return errors;
    }
    for b in p
        .role_bindings
        .iter()
        .filter(|b| b.metadata.namespace.as_deref() == Some(namespace))
    {
        let Some(subject) = b
            .subjects
            .iter()
            .flatten()
            .find(|s| subject_matches(s, user, namespace))
        else {
            continue;
        };
        let rules = if b.role_ref.kind == "ClusterRole" {
            cluster_rules(&b.role_ref.name, &mut errors)
        } else {
            match p.roles.iter().find(|r| {
                r.metadata.name.as_deref() == Some(b.role_ref.name.as_str())
                    && r.metadata.namespace.as_deref() == Some(namespace)
            }) {
                Some(r) => r.rules.clone().unwrap_or_default(),
                None => {
                    errors.push(format!(
                        "role.rbac.authorization.k8s.io {:?} not found",
                        b.role_ref.name
                    ));
                    vec![]
                }
            }
        };
        let grant = Grant {
            binding: b.metadata.name.as_deref().unwrap_or_default(),
            binding_ns: namespace,
            role_kind: &b.role_ref.kind,
            role: &b.role_ref.name,
            subject,
        };
        for rule in rules {
            if f(&rule, &grant) {
                return errors;
            }
        }
    }
    errors
}

/// The 403 text for a denied request (`User "jane" cannot create resource "pods" ...`).
pub fn forbidden_text(user: &str, a: &Attributes) -> String {
    if !a.resource_request {
        return format!("User {user:?} cannot {} path {:?}", a.verb, a.path);
    }
    let res = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    if a.namespace.is_empty() {
        format!(
            "User {user:?} cannot {} resource {res:?} in API group {:?} at the cluster scope",
            a.verb, a.group
        )
    } else {
        format!(
            "User {user:?} cannot {} resource {res:?} in API group {:?} in the namespace {:?}",
            a.verb, a.group, a.namespace
        )
    }
}

/// The detail the trace records for a decision.
pub fn trace_detail(a: &Attributes, d: &Decision) -> Value {
    serde_json::json!({"attributes": a, "decision": d.decision, "reason": d.reason, "authorizer": d.authorizer})
}

/// What authorization is asked about a request.
pub(crate) fn attributes(info: &RequestInfo) -> Attributes {
    Attributes {
        verb: info.verb.clone(),
        resource_request: info.is_resource_request,
        group: info.api_group.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.clone(),
        namespace: info.namespace.clone(),
        name: info.name.clone(),
        path: info.path.clone(),
    }
}
