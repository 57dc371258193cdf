//! The ResourceQuota admission plugin and the usage the quota controller reports (upstream
//! `plugin/pkg/admission/resourcequota` and `pkg/quota/v1/evaluator/core`): a create that would
//! take a namespace past a quota's `hard` is refused with upstream's 403, `exceeded quota: <name>,
//! requested: ..., used: ..., limited: ...`; a pod that leaves out a compute resource a quota
//! limits, with `failed quota: <name>: must specify ...`. Usage is counted from the store at
//! admission, so it never lags behind the quota controller's `status.used`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::apiserver::registry::conversion;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::util::At;
use crate::scheduler::quantity::Quantity;

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.at(p).and_then(Value::as_str).unwrap_or_default()
}

/// The quota names of a kind's object count (`count/<plural>[.<group>]` and the short ones).
fn count_names(def: &ResourceDef) -> Vec<String> {
    let mut out = vec![if def.group.is_empty() {
        format!("count/{}", def.plural)
    } else {
        format!("count/{}.{}", def.plural, def.group)
    }];
    if def.group.is_empty()
        && matches!(
            def.plural,
            "pods"
                | "services"
                | "secrets"
                | "configmaps"
                | "persistentvolumeclaims"
                | "resourcequotas"
                | "replicationcontrollers"
        )
    {
        out.push(def.plural.to_string());
    }
    out
}

/// A compute resource in its unit: cpu in millicores, the rest in whole units.
fn amount(resource: &str, text: &str) -> i64 {
    let Ok(q) = Quantity::parse(text) else {
        return 0;
    };
    if resource == "cpu" {
        q.milli_value().unwrap_or(0)
    } else {
        q.value().unwrap_or(0)
    }
}

/// What one object uses of each quota resource (upstream's evaluators' `Usage`).
pub(crate) fn usage_of(def: &ResourceDef, obj: &Value) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    if def.group.is_empty()
        && def.plural == "pods"
        && matches!(s(obj, "/status/phase"), "Succeeded" | "Failed")
    {
        return out;
    }
    for n in count_names(def) {
        out.insert(n, 1);
    }
    match (def.group, def.plural) {
        ("", "pods") => {
            for c in obj
                .at("/spec/containers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for (kind, prefix) in [("requests", "requests."), ("limits", "limits.")] {
                    for (r, v) in c
                        .at(&format!("/resources/{kind}"))
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                    {
                        let n = amount(r, v.as_str().unwrap_or_default());
                        *out.entry(format!("{prefix}{r}")).or_default() += n;
                        if kind == "requests" && matches!(r.as_str(), "cpu" | "memory") {
                            *out.entry(r.clone()).or_default() += n;
                        }
                    }
                }
            }
        }
        ("", "services") => {
            let ports = obj
                .at("/spec/ports")
                .and_then(Value::as_array)
                .map_or(0, |p| {
                    p.iter()
                        .filter(|p| p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0)
                        .count()
                });
            match s(obj, "/spec/type") {
                "NodePort" => {
                    out.insert("services.nodeports".into(), ports as i64);
                }
                "LoadBalancer" => {
                    out.insert("services.loadbalancers".into(), 1);
                    out.insert("services.nodeports".into(), ports as i64);
                }
                _ => {}
            }
        }
        ("", "persistentvolumeclaims") => {
            let storage = amount("storage", s(obj, "/spec/resources/requests/storage"));
            out.insert("requests.storage".into(), storage);
        }
        _ => {}
    }
    out
}

/// A namespace's usage of the resources a quota names.
pub(crate) fn namespace_usage(
    api: &Api,
    ns: &str,
    hard: &serde_json::Map<String, Value>,
) -> BTreeMap<String, i64> {
    let mut used: BTreeMap<String, i64> = hard.keys().map(|k| (k.clone(), 0)).collect();
    for def in crate::apiserver::registry::resources::RESOURCES
        .iter()
        .filter(|d| d.namespaced && d.stored())
    {
        if conversion::converts(def) {
            continue; // the same objects as the form they are stored in
        }
        let names = count_names(def);
        let computes = matches!(
            (def.group, def.plural),
            ("", "pods" | "services" | "persistentvolumeclaims")
        );
        if !computes && !names.iter().any(|n| hard.contains_key(n)) {
            continue;
        }
        for obj in api.store.list(&def.prefix_for(ns)).0 {
            if def.plural == "pods"
                && obj
                    .at("/metadata/deletionTimestamp")
                    .is_some_and(|v| !v.is_null())
            {
                continue;
            }
            for (k, v) in usage_of(def, &obj) {
                if let Some(u) = used.get_mut(&k) {
                    *u += v;
                }
            }
        }
    }
    used
}

/// A quantity of `resource` as Go's `Quantity.String()` writes a canonical one.
pub(crate) fn render(resource: &str, n: i64) -> String {
    if resource.ends_with("cpu") {
        return if n % 1000 == 0 {
            (n / 1000).to_string()
        } else {
            format!("{n}m")
        };
    }
    if resource.ends_with("memory") || resource.ends_with("storage") {
        for (unit, size) in [
            ("Ti", 1i64 << 40),
            ("Gi", 1 << 30),
            ("Mi", 1 << 20),
            ("Ki", 1 << 10),
        ] {
            if n != 0 && n % size == 0 {
                return format!("{}{unit}", n / size);
            }
        }
    }
    n.to_string()
}

/// A quota's hard limit of `resource` in the unit usage is counted in.
fn hard_amount(resource: &str, text: &str) -> i64 {
    let base = resource.rsplit('.').next().unwrap_or(resource);
    amount(if base == "cpu" { "cpu" } else { base }, text)
}

/// `prettyPrint`: `k=v` sorted, by commas.
fn pretty(m: &BTreeMap<String, String>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// ResourceQuota (validating) on a create: every quota of the namespace checked.
pub(crate) fn admit(api: &Api, def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    let ns = s(obj, "/metadata/namespace");
    if !def.namespaced || ns.is_empty() || !def.stored() {
        return Ok(());
    }
    let quotas = api.store.list(&format!("/registry/resourcequotas/{ns}/")).0;
    if quotas.is_empty() {
        return Ok(());
    }
    let requested = usage_of(def, obj);
    let name = s(obj, "/metadata/name");
    let forbidden = |text: String| {
        Err(ApiError::admission_forbidden(
            def.group, def.plural, name, &text,
        ))
    };
    for q in &quotas {
        let Some(hard) = q.at("/spec/hard").and_then(Value::as_object) else {
            continue;
        };
        let qname = s(q, "/metadata/name");
        if def.plural == "pods" && def.group.is_empty() {
            let mut missing: Vec<&str> = hard
                .keys()
                .filter(|k| {
                    matches!(
                        k.as_str(),
                        "requests.cpu"
                            | "requests.memory"
                            | "limits.cpu"
                            | "limits.memory"
                            | "cpu"
                            | "memory"
                    )
                })
                .filter(|k| !requested.contains_key(k.as_str()))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                missing.sort();
                return forbidden(format!(
                    "failed quota: {qname}: must specify {}",
                    missing.join(",")
                ));
            }
        }
        if !hard.keys().any(|k| requested.contains_key(k)) {
            continue;
        }
        let used = namespace_usage(api, ns, hard);
        let (mut req, mut use_, mut lim) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for (k, h) in hard {
            let Some(r) = requested.get(k) else { continue };
            let limit = hard_amount(k, h.as_str().unwrap_or_default());
            let u = used.get(k).copied().unwrap_or(0);
            if u + r > limit {
                req.insert(k.clone(), render(k, *r));
                use_.insert(k.clone(), render(k, u));
                lim.insert(k.clone(), h.as_str().unwrap_or_default().to_string());
            }
        }
        if !req.is_empty() {
            return forbidden(format!(
                "exceeded quota: {qname}, requested: {}, used: {}, limited: {}",
                pretty(&req),
                pretty(&use_),
                pretty(&lim)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_render_as_go_writes_them() {
        assert_eq!(render("limits.cpu", 2000), "2");
        assert_eq!(render("requests.cpu", 500), "500m");
        assert_eq!(render("requests.memory", 1 << 30), "1Gi");
        assert_eq!(render("pods", 3), "3");
        assert_eq!(hard_amount("limits.cpu", "1"), 1000);
    }
}
