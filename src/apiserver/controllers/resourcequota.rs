//! kube-controller-manager's resource quota controller (upstream `pkg/controller/resourcequota`):
//! each ResourceQuota's `status.hard` and `status.used` recounted when its namespace's objects
//! change, so `kubectl describe quota` and `get quota` show what admission counts.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{Controller, def, ns_name, s};
use crate::apiserver::registry::core::resourcequota::status;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;

pub(crate) struct ResourceQuotas;

const QUOTAS: &str = "/registry/resourcequotas/";

impl Controller for ResourceQuotas {
    fn prefixes(&self) -> &'static [&'static str] {
        &[
            QUOTAS,
            "/registry/pods/",
            "/registry/services/specs/",
            "/registry/secrets/",
            "/registry/configmaps/",
            "/registry/persistentvolumeclaims/",
        ]
    }
    fn dirty(&mut self, api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        let Some((ns, _)) = ns_name(&ev.key) else {
            return;
        };
        for q in client::list(api, def("", "resourcequotas"), &ns) {
            out.insert((ns.clone(), s(&q, "/metadata/name").to_string()));
        }
    }
    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        client::list(api, def("", "resourcequotas"), "")
            .iter()
            .map(|q| {
                (
                    s(q, "/metadata/namespace").to_string(),
                    s(q, "/metadata/name").to_string(),
                )
            })
            .collect()
    }
    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let quota_def = def("", "resourcequotas");
        let Some(q) = api.store.get(&quota_def.key_for(ns, name)) else {
            return true;
        };
        let next: Value = status(api, &q);
        if q.get("status") == Some(&next) {
            return true;
        }
        client::update(api, quota_def, ns, name, |o| o["status"] = next.clone()).is_ok()
    }
}
