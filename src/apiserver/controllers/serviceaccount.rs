//! The service-account controller (upstream `pkg/controller/serviceaccount/
//! serviceaccounts_controller.go`): every active namespace has a `default` ServiceAccount,
//! created when the namespace appears and again if someone deletes it.

use std::collections::BTreeSet;

use serde_json::json;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{self, Controller, ns_name, s, terminating};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::{EventType, StoreEvent};

/// The account every namespace gets.
pub(crate) const DEFAULT: &str = "default";

pub(crate) struct ServiceAccounts;

impl Controller for ServiceAccounts {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/namespaces/", "/registry/serviceaccounts/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(name) = ev.key.strip_prefix("/registry/namespaces/") {
            if ev.kind != EventType::Deleted {
                out.insert((name.to_string(), DEFAULT.to_string()));
            }
        } else if ev.kind == EventType::Deleted
            && let Some((ns, name)) = ns_name(&ev.key)
            && name == DEFAULT
        {
            out.insert((ns, name));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        api.store
            .list("/registry/namespaces/")
            .0
            .iter()
            .map(|n| (s(n, "/metadata/name").to_string(), DEFAULT.to_string()))
            .collect()
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let Some(namespace) = api.store.get(&format!("/registry/namespaces/{ns}")) else {
            return true;
        };
        let sa_def = workload::def("", "serviceaccounts");
        if terminating(&namespace) || api.store.get(&sa_def.key_for(ns, name)).is_some() {
            return true;
        }
        match client::create(
            api,
            sa_def,
            json!({"metadata": {"name": name, "namespace": ns}}),
        ) {
            Ok(_) => true,
            // Created meanwhile, or the namespace began terminating: nothing to do.
            Err(e) => e.code == 409 || e.code == 403,
        }
    }
}
