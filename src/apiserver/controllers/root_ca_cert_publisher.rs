//! The root CA certificate publisher (upstream `pkg/controller/certificates/
//! rootcacertpublisher`): every active namespace has a ConfigMap `kube-root-ca.crt` holding the
//! CA that signed the API server's certificate, which the ServiceAccount admission plugin's
//! projected volume (`kube-api-access-…`) mounts as `ca.crt`. Created when the namespace
//! appears, made again when deleted, and put back when its data or its description is changed.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{self, Controller, ns_name, s, terminating};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::{EventType, StoreEvent};

/// The ConfigMap's name in every namespace.
pub(crate) const CONFIG_MAP: &str = "kube-root-ca.crt";
/// Its one annotation, upstream's words.
const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
    when using internal endpoints such as the internal service IP or kubernetes.default.svc. \
    No other usage is guaranteed across distributions of Kubernetes clusters.";

pub(crate) struct RootCaCertPublisher;

fn data(ca: &str) -> Value {
    json!({ "ca.crt": ca })
}

/// The ConfigMap as the publisher creates it in namespace `ns`.
pub(crate) fn config_map(ns: &str, ca: &str) -> Value {
    json!({"metadata": {"name": CONFIG_MAP, "namespace": ns,
            "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
        "data": data(ca)})
}

impl Controller for RootCaCertPublisher {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/namespaces/", "/registry/configmaps/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(name) = ev.key.strip_prefix("/registry/namespaces/") {
            if ev.kind != EventType::Deleted {
                out.insert((name.to_string(), CONFIG_MAP.to_string()));
            }
        } else if let Some((ns, name)) = ns_name(&ev.key)
            && name == CONFIG_MAP
            && ev.kind != EventType::Added
        {
            out.insert((ns, name));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        api.store
            .list("/registry/namespaces/")
            .0
            .iter()
            .map(|n| (s(n, "/metadata/name").to_string(), CONFIG_MAP.to_string()))
            .collect()
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let Some(ca) = api.root_ca.as_deref() else {
            return true; // a server without a PKI (in-process tests) has no CA to publish
        };
        let Some(namespace) = api.store.get(&format!("/registry/namespaces/{ns}")) else {
            return true;
        };
        if terminating(&namespace) {
            return true;
        }
        let def = workload::def("", "configmaps");
        let Some(cm) = api.store.get(&def.key_for(ns, name)) else {
            return match client::create(api, def, config_map(ns, ca)) {
                Ok(_) => true,
                // Created meanwhile (the next event brings it back here), or the namespace is
                // gone or terminating: nothing to retry, as upstream.
                Err(e) => matches!(e.code, 409 | 404 | 403),
            };
        };
        let described = cm
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
            .and_then(Value::as_str)
            .is_some_and(|d| !d.is_empty());
        if cm.get("data") == Some(&data(ca)) && described {
            return true;
        }
        client::update(api, def, ns, name, |cm| {
            cm["data"] = data(ca);
            if !cm["metadata"]["annotations"].is_object() {
                cm["metadata"]["annotations"] = json!({});
            }
            cm["metadata"]["annotations"][DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
            if let Some(m) = cm.as_object_mut() {
                m.remove("binaryData");
            }
        })
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::controllers::bootstrap;
    use crate::apiserver::filters::authn::TokenFile;
    use crate::apiserver::storage::store::Write;

    /// A cluster bootstrapped without a CA (so without the ConfigMaps), then given one: what
    /// the publisher does is all there is.
    fn api() -> Api {
        let mut api = Api::new(TokenFile::default(), None);
        bootstrap::system(&api);
        api.root_ca = Some("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".into());
        api
    }

    fn published(api: &Api, ns: &str) -> Option<std::sync::Arc<Value>> {
        api.store
            .get(&format!("/registry/configmaps/{ns}/{CONFIG_MAP}"))
    }

    #[test]
    fn every_namespace_gets_the_ca_and_keeps_it() {
        let api = api();
        let mut c = RootCaCertPublisher;
        assert!(published(&api, "kube-system").is_none());
        let all = c.all(&api);
        assert!(all.contains(&("default".to_string(), CONFIG_MAP.to_string())));
        for (ns, name) in &all {
            assert!(c.sync(&api, ns, name));
        }
        let cm = published(&api, "kube-system").expect("published");
        assert_eq!(cm["data"], data(api.root_ca.as_deref().unwrap_or_default()));
        assert_eq!(
            cm["metadata"]["annotations"][DESCRIPTION_ANNOTATION],
            DESCRIPTION
        );

        // Edited: the data and the description are put back, other annotations kept.
        client::update(
            &api,
            workload::def("", "configmaps"),
            "default",
            CONFIG_MAP,
            |cm| {
                cm["data"] = json!({"ca.crt": "mine", "extra": "x"});
                cm["metadata"]["annotations"] = json!({"team": "a"});
            },
        )
        .expect("edit");
        assert!(c.sync(&api, "default", CONFIG_MAP));
        let cm = published(&api, "default").expect("kept");
        assert_eq!(cm["data"], data(api.root_ca.as_deref().unwrap_or_default()));
        assert_eq!(cm["metadata"]["annotations"]["team"], "a");
        assert_eq!(
            cm["metadata"]["annotations"][DESCRIPTION_ANNOTATION],
            DESCRIPTION
        );

        // Deleted: made again.
        api.store
            .delete(
                &format!("/registry/configmaps/default/{CONFIG_MAP}"),
                Write::Commit,
                |_| Ok(()),
            )
            .expect("delete");
        assert!(c.sync(&api, "default", CONFIG_MAP));
        assert!(published(&api, "default").is_some());
    }

    #[test]
    fn a_terminating_namespace_gets_none() {
        let api = api();
        client::update(
            &api,
            workload::def("", "namespaces"),
            "",
            "kube-public",
            |n| {
                n["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
                n["status"]["phase"] = json!("Terminating");
            },
        )
        .ok();
        let mut c = RootCaCertPublisher;
        assert!(c.sync(&api, "kube-public", CONFIG_MAP));
        assert!(published(&api, "kube-public").is_none());
    }
}
