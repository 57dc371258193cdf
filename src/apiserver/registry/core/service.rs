//! core/v1 Service (upstream `pkg/registry/core/service`: `SetDefaults_Service`, the REST
//! allocators of `storage/alloc.go`, `ValidateService`, `printService`). A create takes its
//! ClusterIP and NodePorts from `storage/service_alloc.rs`; an update keeps what the Service
//! was given when the client leaves it out (upstream `patchAllocatedValues`).

use std::net::Ipv4Addr;

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};
use crate::apiserver::storage::service_alloc::{Allocation, SERVICES_PREFIX};

pub(crate) struct Service;

const CLUSTER_IP: &str = "ClusterIP";
const NODE_PORT: &str = "NodePort";
const LOAD_BALANCER: &str = "LoadBalancer";
const EXTERNAL_NAME: &str = "ExternalName";
const NONE: &str = "None";

fn ty(o: &Value) -> &str {
    str_at(o, "/spec/type")
}

fn ports(o: &Value) -> impl Iterator<Item = &Value> {
    o.pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `SetDefaults_Service` and the create strategy's defaults.
fn default(obj: &mut Value) {
    if !obj.get("spec").is_some_and(Value::is_object) {
        obj["spec"] = json!({});
    }
    let spec = &mut obj["spec"];
    if str_at(spec, "/type").is_empty() {
        spec["type"] = json!(CLUSTER_IP);
    }
    if str_at(spec, "/sessionAffinity").is_empty() {
        spec["sessionAffinity"] = json!(NONE);
    }
    let t = str_at(spec, "/type").to_string();
    if let Some(ps) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ps {
            if str_at(p, "/protocol").is_empty() {
                p["protocol"] = json!("TCP");
            }
            let unset = match p.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::Number(n)) => n.as_i64() == Some(0),
                Some(Value::String(s)) => s.is_empty(),
                _ => false,
            };
            if unset && let Some(port) = p.get("port").cloned() {
                p["targetPort"] = port;
            }
        }
    }
    if t != EXTERNAL_NAME && str_at(spec, "/internalTrafficPolicy").is_empty() {
        spec["internalTrafficPolicy"] = json!("Cluster");
    }
    if matches!(t.as_str(), NODE_PORT | LOAD_BALANCER)
        && str_at(spec, "/externalTrafficPolicy").is_empty()
    {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    if t == LOAD_BALANCER && spec.get("allocateLoadBalancerNodePorts").is_none() {
        spec["allocateLoadBalancerNodePorts"] = json!(true);
    }
}

fn validate(o: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let t = ty(o);
    let supported = [CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT];
    if !supported.contains(&t) {
        causes.push(Cause::not_supported("spec.type", &json!(t), &supported));
    }
    let headless = str_at(o, "/spec/clusterIP") == NONE;
    let list: Vec<&Value> = ports(o).collect();
    if t == EXTERNAL_NAME {
        if str_at(o, "/spec/externalName").is_empty() {
            causes.push(Cause::required("spec.externalName", ""));
        }
        let ips = o.pointer("/spec/clusterIPs").and_then(Value::as_array);
        if !str_at(o, "/spec/clusterIP").is_empty() || ips.is_some_and(|a| !a.is_empty()) {
            causes.push(Cause::forbidden(
                "spec.clusterIPs",
                "may not be set for ExternalName services",
            ));
        }
    } else if list.is_empty() && !headless {
        causes.push(Cause::required("spec.ports", ""));
    }
    if let Some(ip) = o.pointer("/spec/clusterIP").and_then(Value::as_str)
        && !ip.is_empty()
        && ip != NONE
        && ip.parse::<Ipv4Addr>().is_err()
    {
        causes.push(Cause::invalid(
            "spec.clusterIPs[0]",
            &json!(ip),
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    let mut names = Vec::new();
    let mut node_ports = Vec::new();
    for (i, p) in list.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = str_at(p, "/name");
        if list.len() > 1 && name.is_empty() {
            causes.push(Cause::required(&format!("{path}.name"), ""));
        } else if !name.is_empty() {
            if names.contains(&name) {
                causes.push(Cause::duplicate(&format!("{path}.name"), &json!(name)));
            }
            names.push(name);
        }
        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&port) {
            causes.push(Cause::invalid(
                &format!("{path}.port"),
                &json!(port),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = str_at(p, "/protocol");
        if !["TCP", "UDP", "SCTP"].contains(&protocol) {
            causes.push(Cause::not_supported(
                &format!("{path}.protocol"),
                &json!(protocol),
                &["SCTP", "TCP", "UDP"],
            ));
        }
        if let Some(np) = p
            .get("nodePort")
            .and_then(Value::as_i64)
            .filter(|n| *n != 0)
        {
            if t == CLUSTER_IP {
                causes.push(Cause::forbidden(
                    &format!("{path}.nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
            if node_ports.contains(&(np, protocol)) {
                causes.push(Cause::duplicate(&format!("{path}.nodePort"), &json!(np)));
            }
            node_ports.push((np, protocol));
        }
    }
    // After every port's own checks: a (protocol, port) pair twice. Upstream's key is an
    // internal ServicePort with only those two set, which field.Duplicate prints with `%#v`.
    let mut seen = Vec::new();
    for (i, p) in list.iter().enumerate() {
        let key = (
            str_at(p, "/protocol"),
            p.get("port").and_then(Value::as_i64).unwrap_or(0),
        );
        if seen.contains(&key) {
            causes.push(Cause::duplicate_printed(
                &format!("spec.ports[{i}]"),
                &format!(
                    "core.ServicePort{{Name:\"\", Protocol:{}, AppProtocol:(*string)(nil), \
                     Port:{}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, \
                     NodePort:0}}",
                    json!(key.0),
                    key.1
                ),
            ));
        }
        seen.push(key);
    }
    causes
}

/// `field.Invalid` whose value is Go's `%v` of a string slice, as the ClusterIP errors carry.
fn cluster_ips_cause(ips: &[String], detail: &str) -> Cause {
    let quoted: Vec<String> = ips.iter().map(|s| format!("{s:?}")).collect();
    Cause::invalid_printed(
        "spec.clusterIPs",
        &format!("[]string{{{}}}", quoted.join(", ")),
        detail,
    )
}

/// Take the ClusterIP and NodePorts `obj` asks for (or any free ones) and write them in. A
/// requested address or port that cannot be had is a 422 (upstream's `field.Invalid`); a range
/// with nothing left is upstream's 500.
fn allocate(api: &Api, obj: &mut Value) -> Result<(), ApiError> {
    let key = format!(
        "{SERVICES_PREFIX}{}/{}",
        str_at(obj, "/metadata/namespace"),
        str_at(obj, "/metadata/name"),
    );
    let mut alloc = api.services.begin(&*api.store, &key);
    if ty(obj) != EXTERNAL_NAME {
        allocate_cluster_ip(&mut alloc, obj)?;
    }
    allocate_node_ports(&mut alloc, obj, &[])?;
    alloc.commit(&key);
    Ok(())
}

/// The ClusterIP `obj` asks for (or any free one; none for a headless Service), with its
/// family fields. A requested address that cannot be had is a 422 (upstream's `field.Invalid`);
/// a range with nothing left is upstream's 500.
fn allocate_cluster_ip(alloc: &mut Allocation<'_>, obj: &mut Value) -> Result<(), ApiError> {
    let name = str_at(obj, "/metadata/name").to_string();
    let requested = match str_at(obj, "/spec/clusterIP") {
        "" => obj
            .pointer("/spec/clusterIPs/0")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        ip => ip.to_string(),
    };
    let spec = &mut obj["spec"];
    if requested == NONE {
        spec["clusterIP"] = json!(NONE);
        spec["clusterIPs"] = json!([NONE]);
    } else {
        let want = (!requested.is_empty()).then(|| requested.parse::<Ipv4Addr>().ok());
        match alloc.ip(want.flatten()) {
            Ok(ip) => {
                spec["clusterIP"] = json!(ip.to_string());
                spec["clusterIPs"] = json!([ip.to_string()]);
            }
            Err(e) if requested.is_empty() => {
                return Err(ApiError::internal(format!(
                    "failed to allocate a serviceIP: {e}"
                )));
            }
            Err(e) => {
                let cause = cluster_ips_cause(
                    std::slice::from_ref(&requested),
                    &format!("failed to allocate IP {requested}: {e}"),
                );
                return Err(ApiError::invalid("", "Service", &name, vec![cause]));
            }
        }
    }
    spec["ipFamilies"] = json!(["IPv4"]);
    spec["ipFamilyPolicy"] = json!("SingleStack");
    Ok(())
}

/// Whether a Service of this type gets node ports.
fn wants_node_ports(obj: &Value) -> bool {
    ty(obj) == NODE_PORT
        || (ty(obj) == LOAD_BALANCER
            && obj.pointer("/spec/allocateLoadBalancerNodePorts") != Some(&json!(false)))
}

/// A node port for each port of `obj` that asks for one or, in a type that has them, has none
/// and held none (`held`: the port and node port pairs of the stored Service, on update). A
/// port asked for must be free; a full range is upstream's 500.
fn allocate_node_ports(
    alloc: &mut Allocation<'_>,
    obj: &mut Value,
    held: &[(Value, i64)],
) -> Result<(), ApiError> {
    let wants = wants_node_ports(obj);
    let name = str_at(obj, "/metadata/name").to_string();
    let Some(ps) = obj.pointer_mut("/spec/ports").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    for (i, p) in ps.iter_mut().enumerate() {
        let asked = p
            .get("nodePort")
            .and_then(Value::as_i64)
            .filter(|n| *n != 0);
        let kept = match asked {
            Some(n) => held.iter().any(|(_, h)| *h == n),
            // prepare_update gives it the port it held for the same port number.
            None => held.iter().any(|(port, _)| Some(port) == p.get("port")),
        };
        if kept || (asked.is_none() && !wants) {
            continue;
        }
        let want = asked.map(|n| u16::try_from(n).unwrap_or(0));
        match alloc.port(want) {
            Ok(n) => p["nodePort"] = json!(n),
            Err(e) if asked.is_none() => {
                return Err(ApiError::internal(format!(
                    "failed to allocate a nodePort: {e}"
                )));
            }
            Err(e) => {
                let cause = Cause::invalid(
                    &format!("spec.ports[{i}].nodePort"),
                    &json!(asked.unwrap_or(0)),
                    &e.to_string(),
                );
                return Err(ApiError::invalid("", "Service", &name, vec![cause]));
            }
        }
    }
    Ok(())
}

/// What an update allocates, as upstream's service REST does on update: a Service that was
/// ExternalName takes a ClusterIP; one that is (or becomes) NodePort or LoadBalancer gets a
/// free port for each port that has none and held none before, and a port it asks for that it
/// did not hold must be free. Held until the update is stored, as a create's are.
fn allocate_update(api: &Api, key: &str, next: &mut Value) -> Result<(), ApiError> {
    let Some(current) = api.store.get(key) else {
        return Ok(()); // gone: the update answers 404
    };
    let held: Vec<(Value, i64)> = ports(&current)
        .filter_map(|p| {
            let np = p
                .get("nodePort")
                .and_then(Value::as_i64)
                .filter(|n| *n != 0)?;
            Some((p.get("port").cloned().unwrap_or_default(), np))
        })
        .collect();
    let mut alloc = api.services.begin(&*api.store, key);
    // An ExternalName Service held no address; as another type it takes one.
    if ty(&current) == EXTERNAL_NAME && ty(next) != EXTERNAL_NAME {
        allocate_cluster_ip(&mut alloc, next)?;
    }
    allocate_node_ports(&mut alloc, next, &held)?;
    alloc.commit(key);
    Ok(())
}

/// Go's `%v` of an int-or-string.
fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// `printService`'s PORT(S): `80/TCP`, `80:30080/TCP`, joined by commas.
fn ports_cell(o: &Value) -> String {
    let parts: Vec<String> = ports(o)
        .map(|p| {
            let port = int_or_string(p.get("port"));
            let proto = str_at(p, "/protocol");
            match p
                .get("nodePort")
                .and_then(Value::as_i64)
                .filter(|n| *n != 0)
            {
                Some(np) => format!("{port}:{np}/{proto}"),
                None => format!("{port}/{proto}"),
            }
        })
        .collect();
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

/// `printService`'s EXTERNAL-IP.
fn external_ip_cell(o: &Value) -> String {
    let external: Vec<&str> = o
        .pointer("/spec/externalIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match ty(o) {
        CLUSTER_IP | NODE_PORT if !external.is_empty() => external.join(","),
        CLUSTER_IP | NODE_PORT => "<none>".into(),
        EXTERNAL_NAME => str_at(o, "/spec/externalName").to_string(),
        LOAD_BALANCER => {
            let mut ips: Vec<String> = o
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|i| match str_at(i, "/ip") {
                    "" => str_at(i, "/hostname").to_string(),
                    ip => ip.to_string(),
                })
                .collect();
            ips.extend(external.iter().map(|s| s.to_string()));
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        _ => "<unknown>".into(),
    }
}

/// A label selector map as `labels.FormatLabels` writes it: sorted `k=v` by commas.
pub(crate) fn selector_text(m: Option<&Value>) -> String {
    let Some(map) = m.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    let mut parts: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    parts.sort();
    parts.join(",")
}

impl Strategy for Service {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Service"
    }
    kind_type!(k8s_openapi::api::core::v1::Service);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Type",
                "string",
                0,
                "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer.",
            ),
            column(
                "Cluster-IP",
                "string",
                0,
                "clusterIP is the IP address of the service and is usually assigned randomly.",
            ),
            column(
                "External-IP",
                "string",
                0,
                "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            ),
            column(
                "Port(s)",
                "string",
                0,
                "The list of ports that are exposed by this service.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
            column(
                "Selector",
                "string",
                1,
                "Route service traffic to pods with label keys and values matching this selector.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let cluster_ip = match str_at(o, "/spec/clusterIP") {
            "" => "<none>",
            ip => ip,
        };
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(ty(o)),
            json!(cluster_ip),
            json!(external_ip_cell(o)),
            json!(ports_cell(o)),
            json!(age_of(o)),
            json!(selector_text(o.pointer("/spec/selector"))),
        ]
    }
    fn defaults(&self, obj: &mut Value) {
        default(obj);
    }
    fn prepare_create(
        &self,
        api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        default(obj);
        obj["status"] = json!({"loadBalancer": {}});
        validate_into_trace("", "Service", obj, trace, validate(obj))?;
        let res = allocate(api, obj);
        trace.stage(
            Stage::Allocation,
            if res.is_ok() {
                Status::Ok
            } else {
                Status::Failed
            },
            json!({"clusterIPs": obj.pointer("/spec/clusterIPs"), "error": res.as_ref().err().map(|e| e.message.clone())}),
        );
        res
    }
    fn after_create(&self, api: &Api, stored: &Value) {
        api.services.committed(&format!(
            "{SERVICES_PREFIX}{}/{}",
            str_at(stored, "/metadata/namespace"),
            str_at(stored, "/metadata/name")
        ));
    }
    fn allocate_update(&self, api: &Api, key: &str, next: &mut Value) -> Result<(), ApiError> {
        allocate_update(api, key, next)
    }
    fn after_update(&self, api: &Api, key: &str) {
        api.services.committed(key);
    }
    fn prepare_update(&self, next: &mut Value, current: &Value) {
        // patchAllocatedValues: what the allocators gave stays when the client leaves it out.
        if ty(next) != EXTERNAL_NAME && ty(current) != EXTERNAL_NAME {
            for f in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
                let missing = match next.pointer(&format!("/spec/{f}")) {
                    None | Some(Value::Null) => true,
                    Some(Value::String(s)) => s.is_empty(),
                    Some(Value::Array(a)) => a.is_empty(),
                    _ => false,
                };
                if missing && let Some(v) = current.pointer(&format!("/spec/{f}")) {
                    next["spec"][f] = v.clone();
                }
            }
        }
        if ty(next) == EXTERNAL_NAME && ty(current) != EXTERNAL_NAME {
            // dropTypeDependentFields: the address and its families go with the old type,
            // each unless the client changed it (validation then says it may not be set).
            let fields = ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"];
            for f in fields.into_iter().chain(["internalTrafficPolicy"]) {
                let pointer = format!("/spec/{f}");
                if next.pointer(&pointer) == current.pointer(&pointer)
                    && let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut)
                {
                    spec.remove(f);
                }
            }
        }
        if matches!(ty(next), CLUSTER_IP | EXTERNAL_NAME)
            && matches!(ty(current), NODE_PORT | LOAD_BALANCER)
        {
            // dropTypeDependentFields: the NodePorts the old type had go with it, unless the
            // client changed them (then validation says they are not allowed).
            let old: Vec<Value> = ports(current).cloned().collect();
            if let Some(ps) = next
                .pointer_mut("/spec/ports")
                .and_then(Value::as_array_mut)
            {
                for p in ps {
                    let same = old.iter().any(|o| {
                        o.get("port") == p.get("port") && o.get("nodePort") == p.get("nodePort")
                    });
                    if same && let Some(m) = p.as_object_mut() {
                        m.remove("nodePort");
                    }
                }
            }
        }
        if matches!(ty(next), NODE_PORT | LOAD_BALANCER) {
            let old: Vec<Value> = ports(current).cloned().collect();
            if let Some(ps) = next
                .pointer_mut("/spec/ports")
                .and_then(Value::as_array_mut)
            {
                for p in ps {
                    if p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                        continue;
                    }
                    if let Some(np) = old
                        .iter()
                        .find(|o| o.get("port") == p.get("port"))
                        .and_then(|o| o.get("nodePort"))
                    {
                        p["nodePort"] = np.clone();
                    }
                }
            }
        }
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        let mut causes = validate(next);
        let old = str_at(current, "/spec/clusterIP");
        let new = str_at(next, "/spec/clusterIP");
        if !old.is_empty() && ty(next) != EXTERNAL_NAME && new != old {
            causes.push(Cause::invalid(
                "spec.clusterIPs[0]",
                &json!(new),
                "may not change once set",
            ));
        }
        causes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_as_kubectl_prints() {
        let mut s = json!({"metadata": {"name": "web"}, "spec": {"type": "NodePort", "selector": {"app": "web", "a": "b"}, "ports": [{"port": 80, "nodePort": 30080}]}});
        default(&mut s);
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        assert_eq!(ports_cell(&s), "80:30080/TCP");
        assert_eq!(external_ip_cell(&s), "<none>");
        assert_eq!(selector_text(s.pointer("/spec/selector")), "a=b,app=web");
        assert!(validate(&s).is_empty(), "{:?}", validate(&s));
        s["spec"]["type"] = json!("ClusterIP");
        let rendered: Vec<String> = validate(&s).iter().map(Cause::rendered).collect();
        assert_eq!(
            rendered,
            vec!["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]
        );
    }

    /// Two ports of one protocol and number, whatever their names: kube-apiserver's
    /// `Duplicate value` with its key printed as Go prints the internal struct. Another
    /// protocol on the same number is a different port.
    #[test]
    fn a_port_and_protocol_twice_is_a_duplicate() {
        let mut s = json!({"metadata": {"name": "dup"}, "spec": {"selector": {"app": "x"},
            "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}, {"name": "c", "port": 80, "protocol": "UDP"}]}});
        default(&mut s);
        let rendered: Vec<String> = validate(&s).iter().map(Cause::rendered).collect();
        assert_eq!(
            rendered,
            vec![
                r#"spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}"#
            ]
        );
    }
}
