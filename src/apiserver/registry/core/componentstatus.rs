//! v1 ComponentStatus (upstream `pkg/registry/core/componentstatus`, printer
//! `printComponentStatus`): `kubectl get componentstatuses`, the control plane's health as the
//! API server sees it at the moment of asking. Nothing is stored; every get and list checks
//! again. Deprecated upstream since 1.19 and still served, with a warning on every answer
//! (`ResourceDef::deprecation`).
//!
//! Upstream probes kube-scheduler's and kube-controller-manager's `/healthz` on loopback and
//! reads etcd's health key; here the two components are loops of this process, so their own
//! leader-election loops answer for them (`controllers::components`), and `etcd-0` is the
//! storage backend's health check, listed only when the cluster is kept in etcd.

use serde_json::{Value, json};

use crate::apiserver::controllers::leader_election::{KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER};
use crate::apiserver::endpoints::list_options::selectors;
use crate::apiserver::endpoints::reply::{object_reply, table_list};
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategy::{NAME_DESCRIPTION, Strategy, column, kind_type, str_at};
use crate::apiserver::request::components::State;
use crate::apiserver::request::context::{Api, Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{Stage, Status};

pub(crate) struct ComponentStatus;

impl Strategy for ComponentStatus {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "ComponentStatus"
    }
    kind_type!(k8s_openapi::api::core::v1::ComponentStatus);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Status", "string", 0, "Status of the component conditions"),
            column(
                "Message",
                "string",
                0,
                "Message of the component conditions",
            ),
            column("Error", "string", 0, "Error of the component conditions"),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let healthy = o
            .pointer("/conditions")
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|c| str_at(c, "/type") == "Healthy"));
        let (status, message, error) = match healthy {
            Some(c) => (
                if str_at(c, "/status") == "True" {
                    "Healthy"
                } else {
                    "Unhealthy"
                },
                str_at(c, "/message"),
                str_at(c, "/error"),
            ),
            None => ("Unknown", "", ""),
        };
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(status),
            json!(message),
            json!(error),
        ]
    }
}

/// How one check came out: healthy (upstream's message is then `ok`), or not, with upstream's
/// split of a failed probe's words (`message` for a component that did not answer, `error` for etcd).
enum Health {
    Ok,
    Failed { message: String, error: String },
}

/// The components checked, in a fixed order (upstream's list is in the order its probes
/// finish), or only the one named; etcd's check runs only when the cluster is kept there.
fn checks(api: &Api, only: Option<&str>) -> Vec<(&'static str, Health)> {
    let wanted = |name: &str| only.is_none_or(|o| o == name);
    let mut all = Vec::new();
    for (name, lease) in [
        ("scheduler", KUBE_SCHEDULER),
        ("controller-manager", KUBE_CONTROLLER_MANAGER),
    ] {
        if wanted(name) {
            all.push((name, component(api, lease)));
        }
    }
    if wanted("etcd-0")
        && let Some((_, result)) = api.store.health()
    {
        let health = match result {
            Ok(()) => Health::Ok,
            Err(error) => Health::Failed {
                message: String::new(),
                error,
            },
        };
        all.push(("etcd-0", health));
    }
    all
}

/// An in-process component, as its leader-election loop last reported it.
fn component(api: &Api, lease: &str) -> Health {
    match api.components.state(lease) {
        Some(State::Running) => Health::Ok,
        Some(State::LoopEnded) => Health::Failed {
            message: format!("{lease} holds its Lease but its loops have ended"),
            error: String::new(),
        },
        None => Health::Failed {
            message: format!("{lease} does not run in this server"),
            error: String::new(),
        },
    }
}

/// The object upstream builds: a name and one `Healthy` condition, nothing stored about it.
fn object(name: &str, health: &Health) -> Value {
    let condition = match health {
        Health::Ok => json!({"type": "Healthy", "status": "True", "message": "ok"}),
        Health::Failed { message, error } => {
            let mut c = json!({"type": "Healthy", "status": "False"});
            if !message.is_empty() {
                c["message"] = json!(message);
            }
            if !error.is_empty() {
                c["error"] = json!(error);
            }
            c
        }
    };
    json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name, "creationTimestamp": null},
        "conditions": [condition],
    })
}

pub(crate) fn get(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let name = ctx.info.name.clone();
    let found = checks(ctx.api, Some(&name)).pop();
    // Upstream names the singular resource: `componentstatus "x" not found`.
    let Some(v) = found.map(|(n, h)| object(n, &h)) else {
        return Err(ApiError::not_found("", "componentstatus", &name));
    };
    record(ctx, std::slice::from_ref(&v));
    object_reply(ctx, def, 200, v)
}

pub(crate) fn list(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (labels, fields) = selectors(ctx, def)?;
    let items: Vec<Value> = checks(ctx.api, None)
        .iter()
        .map(|(n, h)| object(n, h))
        .filter(|o| labels.matches(o) && fields.matches(def.kind, o))
        .collect();
    record(ctx, &items);
    let refs: Vec<&Value> = items.iter().collect();
    if let Some(t) = table_list(ctx, def, &refs, json!({})) {
        return Ok(t);
    }
    Ok(Reply::Object {
        code: 200,
        value: json!({"kind": def.list_kind(), "apiVersion": "v1", "metadata": {}, "items": items}),
    })
}

/// The journey's storage stage says what was read instead: the live checks, not etcd.
fn record(ctx: &mut Ctx<'_>, items: &[Value]) {
    let checked: Vec<Value> = items
        .iter()
        .map(|o| {
            let cells = ComponentStatus.cells(o);
            json!({"name": cells[0], "status": cells[1]})
        })
        .collect();
    ctx.trace.stage(
        Stage::Storage,
        Status::Ok,
        json!({"operation": "check components (not stored)", "components": checked}),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_status_follows_the_healthy_condition() {
        let ok = object("scheduler", &Health::Ok);
        assert_eq!(
            ComponentStatus.cells(&ok),
            vec![json!("scheduler"), json!("Healthy"), json!("ok"), json!("")]
        );
        let down = object(
            "etcd-0",
            &Health::Failed {
                message: String::new(),
                error: "error getting data from etcd: context deadline exceeded".into(),
            },
        );
        assert_eq!(down["conditions"][0]["status"], "False");
        assert!(down["conditions"][0].get("message").is_none());
        assert_eq!(
            ComponentStatus.cells(&down)[1..],
            [
                json!("Unhealthy"),
                json!(""),
                json!("error getting data from etcd: context deadline exceeded")
            ]
        );
        let bare = json!({"metadata": {"name": "x"}});
        assert_eq!(ComponentStatus.cells(&bare)[1], json!("Unknown"));
    }

    #[test]
    fn components_not_run_here_are_unhealthy_and_unknown_names_absent() {
        let api = Api::new(Default::default(), None);
        let checked = |name: &str| {
            let (n, h) = checks(&api, Some(name)).pop()?;
            Some(object(n, &h))
        };
        // The in-memory store has no etcd to list.
        let all: Vec<&str> = checks(&api, None).iter().map(|(n, _)| *n).collect();
        assert_eq!(all, ["scheduler", "controller-manager"]);
        let v = checked("scheduler").expect("listed");
        assert_eq!(
            ComponentStatus.cells(&v)[1..3],
            [
                json!("Unhealthy"),
                json!("kube-scheduler does not run in this server")
            ]
        );
        api.components.set(KUBE_SCHEDULER, State::Running);
        let v = checked("scheduler").expect("listed");
        assert_eq!(v["conditions"][0]["message"], "ok");
        api.components.set(KUBE_SCHEDULER, State::LoopEnded);
        let v = checked("scheduler").expect("listed");
        assert_eq!(v["conditions"][0]["status"], "False");
        assert!(checked("etcd-0").is_none());
        assert!(checked("kubelet").is_none());
    }
}
