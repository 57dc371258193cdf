//! The LimitRanger admission plugin for pods (upstream `plugin/pkg/admission/limitranger`):
//! containers get the namespace's LimitRange defaults for what they leave out (recorded in the
//! `kubernetes.io/limit-ranger` annotation), then min, max and limit/request ratio are enforced
//! per Container and per Pod, with upstream's words.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use serde_json::Value;

use crate::apiserver::storage::interface::Storage;
use crate::scheduler::quantity::Quantity;

const ANNOTATION: &str = "kubernetes.io/limit-ranger";

type Resources = BTreeMap<String, K8sQuantity>;

fn list_of(l: &Value, field: &str) -> Resources {
    l.get(field)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// `requestLimitEnforcedValues`: milli-units, the precision both sides can be compared at.
fn milli(q: &K8sQuantity) -> i64 {
    Quantity::parse(&q.0)
        .and_then(|q| q.milli_value())
        .unwrap_or(i64::MAX)
}

fn min_constraint(
    ty: &str,
    r: &str,
    enforced: &K8sQuantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let e = &enforced.0;
    match req.get(r) {
        None => {
            return Some(format!(
                "minimum {r} usage per {ty} is {e}.  No request is specified"
            ));
        }
        Some(q) if milli(q) < milli(enforced) => {
            return Some(format!(
                "minimum {r} usage per {ty} is {e}, but request is {}",
                q.0
            ));
        }
        _ => {}
    }
    match lim.get(r) {
        Some(q) if milli(q) < milli(enforced) => Some(format!(
            "minimum {r} usage per {ty} is {e}, but limit is {}",
            q.0
        )),
        _ => None,
    }
}

fn max_constraint(
    ty: &str,
    r: &str,
    enforced: &K8sQuantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let e = &enforced.0;
    match lim.get(r) {
        None => {
            return Some(format!(
                "maximum {r} usage per {ty} is {e}.  No limit is specified"
            ));
        }
        Some(q) if milli(q) > milli(enforced) => {
            return Some(format!(
                "maximum {r} usage per {ty} is {e}, but limit is {}",
                q.0
            ));
        }
        _ => {}
    }
    match req.get(r) {
        Some(q) if milli(q) > milli(enforced) => Some(format!(
            "maximum {r} usage per {ty} is {e}, but request is {}",
            q.0
        )),
        _ => None,
    }
}

fn ratio_constraint(
    ty: &str,
    r: &str,
    enforced: &K8sQuantity,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let e = &enforced.0;
    let rq = req.get(r).map(milli).filter(|v| *v != 0);
    let lm = lim.get(r).map(milli).filter(|v| *v != 0);
    let Some(rq) = rq else {
        return Some(format!(
            "{r} max limit to request ratio per {ty} is {e}, but no request is specified or request is 0"
        ));
    };
    let Some(lm) = lm else {
        return Some(format!(
            "{r} max limit to request ratio per {ty} is {e}, but no limit is specified or limit is 0"
        ));
    };
    let observed = lm as f64 / rq as f64;
    (observed * 1000.0 > milli(enforced) as f64).then(|| {
        format!(
            "{r} max limit to request ratio per {ty} is {e}, but provided ratio is {observed:.6}"
        )
    })
}

fn check(ty: &str, l: &Value, req: &Resources, lim: &Resources, errs: &mut Vec<String>) {
    for (r, v) in list_of(l, "min") {
        errs.extend(min_constraint(ty, &r, &v, req, lim));
    }
    for (r, v) in list_of(l, "max") {
        errs.extend(max_constraint(ty, &r, &v, req, lim));
    }
    for (r, v) in list_of(l, "maxLimitRequestRatio") {
        errs.extend(ratio_constraint(ty, &r, &v, req, lim));
    }
}

fn merge(
    c: &mut Container,
    prefix: &str,
    req: &Resources,
    lim: &Resources,
    notes: &mut Vec<String>,
) {
    let res = c.resources.get_or_insert_with(Default::default);
    let mut set_req = Vec::new();
    let mut set_lim = Vec::new();
    let limits = res.limits.get_or_insert_with(Default::default);
    for (k, v) in lim {
        if !limits.contains_key(k) {
            limits.insert(k.clone(), v.clone());
            set_lim.push(k.clone());
        }
    }
    let requests = res.requests.get_or_insert_with(Default::default);
    for (k, v) in req {
        if !requests.contains_key(k) {
            requests.insert(k.clone(), v.clone());
            set_req.push(k.clone());
        }
    }
    if res.limits.as_ref().is_some_and(BTreeMap::is_empty) {
        res.limits = None;
    }
    if res.requests.as_ref().is_some_and(BTreeMap::is_empty) {
        res.requests = None;
    }
    if !set_req.is_empty() {
        notes.push(format!(
            "{} request for {prefix} {}",
            set_req.join(", "),
            c.name
        ));
    }
    if !set_lim.is_empty() {
        notes.push(format!(
            "{} limit for {prefix} {}",
            set_lim.join(", "),
            c.name
        ));
    }
}

fn sum(lists: impl Iterator<Item = Resources>) -> Resources {
    let lists: Vec<Resources> = lists.collect();
    let mut out = Resources::new();
    let keys: std::collections::BTreeSet<String> =
        lists.iter().flat_map(|l| l.keys().cloned()).collect();
    for k in keys {
        if lists.iter().all(|l| l.contains_key(&k)) {
            let total: i64 = lists.iter().filter_map(|l| l.get(&k)).map(milli).sum();
            let text = if total % 1000 == 0 {
                (total / 1000).to_string()
            } else {
                format!("{total}m")
            };
            out.insert(k, K8sQuantity(text));
        }
    }
    out
}

/// LimitRanger on a pod create: defaults, then every LimitRange of the namespace enforced.
pub(crate) fn limit_ranger(pod: &mut Pod, ns: &str, store: &dyn Storage) -> Result<(), String> {
    let ranges = store.list(&format!("/registry/limitranges/{ns}/")).0;
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let mut errs = Vec::new();
    let mut notes = Vec::new();
    for lr in &ranges {
        let items: Vec<&Value> = lr
            .pointer("/spec/limits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        let (mut req, mut lim) = (Resources::new(), Resources::new());
        for l in items
            .iter()
            .filter(|l| l.get("type").and_then(Value::as_str) == Some("Container"))
        {
            req.extend(list_of(l, "defaultRequest"));
            lim.extend(list_of(l, "default"));
        }
        for c in spec.containers.iter_mut() {
            merge(c, "container", &req, &lim, &mut notes);
        }
        for c in spec.init_containers.iter_mut().flatten() {
            merge(c, "init container", &req, &lim, &mut notes);
        }
    }
    for lr in &ranges {
        for l in lr
            .pointer("/spec/limits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let reqs = |c: &Container| {
                c.resources
                    .as_ref()
                    .and_then(|r| r.requests.clone())
                    .unwrap_or_default()
            };
            let lims = |c: &Container| {
                c.resources
                    .as_ref()
                    .and_then(|r| r.limits.clone())
                    .unwrap_or_default()
            };
            match l.get("type").and_then(Value::as_str) {
                Some("Container") => {
                    for c in spec
                        .containers
                        .iter()
                        .chain(spec.init_containers.iter().flatten())
                    {
                        check("Container", l, &reqs(c), &lims(c), &mut errs);
                    }
                }
                Some("Pod") => {
                    let r = sum(spec.containers.iter().map(reqs));
                    let m = sum(spec.containers.iter().map(lims));
                    check("Pod", l, &r, &m, &mut errs);
                }
                _ => {}
            }
        }
    }
    if !notes.is_empty() {
        pod.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                ANNOTATION.into(),
                format!("LimitRanger plugin set: {}", notes.join("; ")),
            );
    }
    match errs.len() {
        0 => Ok(()),
        1 => Err(errs.remove(0)),
        // utilerrors.NewAggregate's text for several.
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}
