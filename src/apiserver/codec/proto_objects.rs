//! Bodies sent as `application/vnd.kubernetes.protobuf` (client-go v0.32+ typed clients, so
//! kubectl 1.32+'s `create serviceaccount|namespace|role|…`, the DeleteOptions of `drain`, the
//! reviews of `auth whoami|can-i`) turned into the JSON object the same client would have sent
//! as JSON, so one pipeline (defaults, validation, storage) serves both. The field numbers come
//! from upstream's generated.proto through proto_schema.rs; a field number the schema does not
//! list is skipped, as kube-apiserver skips unknown protobuf fields.

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use crate::apiserver::codec::proto::{Field, Message, Msg, Ty, unwrap_envelope};
use crate::apiserver::codec::proto_schema;
use crate::apiserver::registry::go_zero::omitted;
use crate::apiserver::util;

/// Whether a protobuf body of this kind can be read.
pub fn supported(api_version: &str, kind: &str) -> bool {
    proto_schema::root(api_version, kind).is_some()
}

/// The envelope's object as JSON with its apiVersion and kind, or why it cannot be read.
pub fn decode(expected_kind: &str, body: &[u8]) -> Result<Value, String> {
    let (api_version, kind, raw) =
        unwrap_envelope(body).ok_or("invalid protobuf envelope (no k8s\\0 prefix)")?;
    if kind != expected_kind {
        return Err(format!(
            "unexpected kind {kind:?} in version {api_version:?}, expected {expected_kind}"
        ));
    }
    let msg = proto_schema::root(&api_version, &kind)
        .ok_or_else(|| format!("{kind} in version {api_version:?} is not accepted as protobuf"))?;
    let parsed = Message::parse(raw).ok_or("malformed protobuf")?;
    let mut obj = object(&parsed, msg, 0)?;
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    Ok(Value::Object(obj))
}

/// Pods nest about a dozen messages deep; anything far deeper is not an object of these kinds.
const MAX_DEPTH: usize = 32;

fn object(msg: &Message<'_>, schema: &Msg, depth: usize) -> Result<Map<String, Value>, String> {
    if depth > MAX_DEPTH {
        return Err("protobuf nested too deeply".into());
    }
    let mut out = Map::new();
    for &(num, name, ty) in schema.fields {
        let values: Vec<Field<'_>> = msg.all(num).collect();
        let Some(last) = values.last() else {
            continue;
        };
        let where_ = || format!("{}.{name}", schema.name);
        let v = match ty {
            Ty::List(inner) => {
                list(&values, inner, depth).map_err(|e| format!("{}: {e}", where_()))?
            }
            Ty::Msgs(inner) => Value::Array(
                values
                    .iter()
                    .map(|f| nested(f, inner, depth))
                    .collect::<Result<_, _>>()?,
            ),
            Ty::Map(inner) => {
                let mut m = Map::new();
                for f in &values {
                    let e = Message::parse(bytes(f)?).ok_or("malformed map entry")?;
                    let key = text(e.bytes(1).unwrap_or_default())?;
                    let value = match e.all(2).last() {
                        Some(f) => single(&f, inner, depth)?,
                        None => zero_of(inner),
                    };
                    m.insert(key, value);
                }
                Value::Object(m)
            }
            Ty::Inline(inner) => {
                if let Value::Object(m) = nested(last, inner, depth)? {
                    out.extend(m);
                }
                continue;
            }
            _ => single(last, &ty, depth).map_err(|e| format!("{}: {e}", where_()))?,
        };
        if omitted(name, &v) {
            continue;
        }
        out.insert(name.into(), v);
    }
    Ok(out)
}

/// A map entry with no value holds the value type's zero.
fn zero_of(ty: &Ty) -> Value {
    match ty {
        Ty::Items => json!([]),
        _ => json!(""),
    }
}

fn nested(f: &Field<'_>, schema: &Msg, depth: usize) -> Result<Value, String> {
    let m = Message::parse(bytes(f)?).ok_or_else(|| format!("malformed {}", schema.name))?;
    object(&m, schema, depth + 1).map(Value::Object)
}

fn list(values: &[Field<'_>], inner: &Ty, depth: usize) -> Result<Value, String> {
    let mut out = Vec::new();
    for f in values {
        match (inner, f) {
            // A packed list of numbers: one length-delimited run of varints.
            (Ty::Int, Field::Bytes(b)) => {
                let mut pos = 0;
                while pos < b.len() {
                    let v = crate::apiserver::codec::proto::read_varint(b, &mut pos)
                        .ok_or("malformed packed list")?;
                    out.push(json!(v as i64));
                }
            }
            _ => out.push(single(f, inner, depth)?),
        }
    }
    Ok(Value::Array(out))
}

fn single(f: &Field<'_>, ty: &Ty, depth: usize) -> Result<Value, String> {
    Ok(match ty {
        Ty::Str => json!(text(bytes(f)?)?),
        Ty::Int => json!(varint(f)? as i64),
        Ty::Bool => json!(varint(f)? != 0),
        Ty::Bytes => {
            use base64::Engine as _;
            json!(base64::engine::general_purpose::STANDARD.encode(bytes(f)?))
        }
        Ty::Time | Ty::MicroTime => time_of(bytes(f)?, matches!(ty, Ty::MicroTime))?,
        Ty::Quantity => {
            let m = Message::parse(bytes(f)?).ok_or("malformed Quantity")?;
            json!(text(m.bytes(1).unwrap_or_default())?)
        }
        Ty::IntOrString => {
            let m = Message::parse(bytes(f)?).ok_or("malformed IntOrString")?;
            let is_string = m
                .all(1)
                .last()
                .is_some_and(|t| matches!(t, Field::Varint(1)));
            if is_string {
                json!(text(m.bytes(3).unwrap_or_default())?)
            } else {
                match m.all(2).last() {
                    Some(v) => json!(varint(&v)? as i32),
                    None => json!(0),
                }
            }
        }
        Ty::RawJson => {
            let m = Message::parse(bytes(f)?).ok_or("malformed raw object")?;
            let raw = m.bytes(1).unwrap_or_default();
            if raw.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(raw).map_err(|_| "an embedded object is not JSON")?
            }
        }
        Ty::Items => {
            let m = Message::parse(bytes(f)?).ok_or("malformed list")?;
            Value::Array(
                m.all(1)
                    .map(|i| bytes(&i).and_then(text).map(Value::from))
                    .collect::<Result<_, _>>()?,
            )
        }
        Ty::Msg(inner) => nested(f, inner, depth)?,
        Ty::List(_) | Ty::Map(_) | Ty::Msgs(_) | Ty::Inline(_) => {
            return Err("a list or an inlined struct inside a list".into());
        }
    })
}

/// `metav1.Time` keeps whole seconds (upstream's Unmarshal drops the nanos); an empty message is
/// the zero time, which JSON leaves out.
fn time_of(b: &[u8], micro: bool) -> Result<Value, String> {
    if b.is_empty() {
        return Ok(Value::Null);
    }
    let m = Message::parse(b).ok_or("malformed time")?;
    let seconds = m
        .all(1)
        .last()
        .map(|f| varint(&f))
        .transpose()?
        .unwrap_or(0) as i64;
    let nanos = m
        .all(2)
        .last()
        .map(|f| varint(&f))
        .transpose()?
        .unwrap_or(0) as i64;
    let t = OffsetDateTime::from_unix_timestamp(seconds).map_err(|_| "time out of range")?;
    Ok(json!(if micro {
        let t = t + time::Duration::nanoseconds(nanos);
        util::rfc3339_micro(t)
    } else {
        util::rfc3339(t)
    }))
}

fn bytes<'a>(f: &Field<'a>) -> Result<&'a [u8], String> {
    match f {
        Field::Bytes(b) => Ok(b),
        _ => Err("a length-delimited field has another wire type".into()),
    }
}

fn varint(f: &Field<'_>) -> Result<u64, String> {
    match f {
        Field::Varint(v) => Ok(*v),
        _ => Err("a varint field has another wire type".into()),
    }
}

fn text(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|_| "a string field is not UTF-8".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body kubectl 1.33 sent to `kexplore serve` (captured with `-v=8`; each test names the
    /// command line), as JSON.
    fn captured(kind: &str, body: &[u8]) -> Value {
        decode(kind, body).unwrap_or_else(|e| panic!("{kind}: {e}"))
    }

    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!("../../../tests/fixtures/protobuf/", $name, ".pb"))
        };
    }

    #[test]
    fn kubectl_create_serviceaccount_and_namespace() {
        // kubectl create serviceaccount builder -n default
        assert_eq!(
            captured("ServiceAccount", fixture!("serviceaccount")),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder", "namespace": "default"}})
        );
        // kubectl create namespace team-b
        assert_eq!(
            captured("Namespace", fixture!("namespace")),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}, "spec": {}, "status": {}})
        );
    }

    #[test]
    fn kubectl_create_roles_and_bindings() {
        // kubectl create role editor -n team-b --verb=create,delete --resource=pods,pods/status
        //   --resource-name=app
        assert_eq!(
            captured("Role", fixture!("role")),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                   "metadata": {"name": "editor", "namespace": "team-b"},
                   "rules": [{"apiGroups": [""], "resourceNames": ["app"], "resources": ["pods", "pods/status"], "verbs": ["create", "delete"]}]})
        );
        // kubectl create rolebinding edits -n team-b --role=editor
        //   --serviceaccount=team-b:default --user=jane
        assert_eq!(
            captured("RoleBinding", fixture!("rolebinding")),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "edits", "namespace": "team-b"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "editor"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"},
                                {"kind": "ServiceAccount", "name": "default", "namespace": "team-b"}]})
        );
        // kubectl create clusterrole agg --aggregation-rule=rbac.example.com/aggregate-to-view=true
        assert_eq!(
            captured("ClusterRole", fixture!("clusterrole")),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg"},
                   "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-view": "true"}}]}})
        );
        // kubectl create clusterrolebinding agg --clusterrole=agg --group=devs
        assert_eq!(
            captured("ClusterRoleBinding", fixture!("clusterrolebinding")),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "agg"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "agg"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}]})
        );
    }

    #[test]
    fn kubectl_create_priorityclass_keeps_a_negative_value() {
        // kubectl create priorityclass low --value=-5 --description=batch
        //   --preemption-policy=Never --global-default=false
        assert_eq!(
            captured("PriorityClass", fixture!("priorityclass")),
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"},
                   "value": -5, "description": "batch", "preemptionPolicy": "Never"})
        );
    }

    #[test]
    fn kubectl_create_ingress_keeps_path_types_ports_and_tls() {
        // kubectl create ingress web --class=nginx --rule="foo.com/=web:80"
        //   --rule="bar.com/*=api:8080,tls=bar-cert"
        let backend =
            |name: &str, port: i64| json!({"service": {"name": name, "port": {"number": port}}});
        assert_eq!(
            captured("Ingress", fixture!("ingress")),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
                   "spec": {"ingressClassName": "nginx",
                            "rules": [{"host": "foo.com", "http": {"paths": [{"path": "/", "pathType": "Exact", "backend": backend("web", 80)}]}},
                                      {"host": "bar.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend("api", 8080)}]}}],
                            "tls": [{"hosts": ["bar.com"], "secretName": "bar-cert"}]},
                   "status": {"loadBalancer": {}}})
        );
    }

    #[test]
    fn kubectl_drain_delete_options_keep_grace_period_zero() {
        // kubectl drain node-2 --ignore-daemonsets --force --grace-period=0
        assert_eq!(
            captured("DeleteOptions", fixture!("deleteoptions")),
            json!({"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
        );
    }

    #[test]
    fn kubectl_auth_reviews() {
        // kubectl auth can-i list pods -n kube-system
        assert_eq!(
            captured(
                "SelfSubjectAccessReview",
                fixture!("selfsubjectaccessreview")
            ),
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
                   "spec": {"resourceAttributes": {"namespace": "kube-system", "resource": "pods", "verb": "list"}}, "status": {}})
        );
        // kubectl auth whoami
        assert_eq!(
            captured("SelfSubjectReview", fixture!("selfsubjectreview")),
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {}, "status": {"userInfo": {}}})
        );
    }

    fn tag(num: u64, wire: u64) -> Vec<u8> {
        varint_bytes((num << 3) | wire)
    }

    fn varint_bytes(mut n: u64) -> Vec<u8> {
        let mut v = Vec::new();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                v.push(b);
                return v;
            }
            v.push(b | 0x80);
        }
    }

    fn ld(num: u64, data: &[u8]) -> Vec<u8> {
        [tag(num, 2), varint_bytes(data.len() as u64), data.to_vec()].concat()
    }

    fn int(num: u64, v: i64) -> Vec<u8> {
        [tag(num, 0), varint_bytes(v as u64)].concat()
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let tm = [ld(1, api_version.as_bytes()), ld(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), ld(1, &tm), ld(2, raw)].concat()
    }

    /// What a client-go program (not kubectl) sends for a pod: times, quantities, int-or-string
    /// ports, pointer zeros, an int64 list and Go's zero-valued scalars.
    #[test]
    fn a_pod_from_a_go_client() {
        let time = [int(1, 1_764_000_000), int(2, 5)].concat();
        let meta = [
            ld(1, b"web"),
            ld(2, b""),
            int(7, 0),
            ld(8, &time),
            ld(11, &[ld(1, b"app"), ld(2, b"web")].concat()),
        ]
        .concat();
        let quantity = |q: &str| ld(1, q.as_bytes());
        // ResourceRequirements.requests (2): one map entry per resource.
        let resources = [
            ld(2, &[ld(1, b"cpu"), ld(2, &quantity("250m"))].concat()),
            ld(2, &[ld(1, b"memory"), ld(2, &quantity("64Mi"))].concat()),
        ]
        .concat();
        let http_get = [
            ld(1, b"/healthz"),
            ld(2, &[int(1, 1), ld(3, b"http")].concat()),
        ]
        .concat();
        let probe = ld(1, &ld(2, &http_get));
        let container = [
            ld(1, b"web"),
            ld(2, b"nginx"),
            ld(6, &[int(3, 8080), ld(4, b"TCP")].concat()),
            ld(8, &resources),
            ld(10, &probe),
            int(16, 0),
        ]
        .concat();
        let security = [int(2, 0), int(4, 1000), int(4, 2000)].concat();
        let spec = [
            ld(2, &container),
            int(4, 0),
            int(11, 0),
            ld(14, &security),
            ld(
                22,
                &[
                    ld(1, b"node.kubernetes.io/not-ready"),
                    ld(4, b"NoExecute"),
                    int(5, 300),
                ]
                .concat(),
            ),
            int(25, -10),
        ]
        .concat();
        let body = envelope("v1", "Pod", &[ld(1, &meta), ld(2, &spec)].concat());
        assert_eq!(
            captured("Pod", &body),
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web", "creationTimestamp": "2025-11-24T16:00:00Z", "labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "web", "image": "nginx",
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}}
                    }],
                    "terminationGracePeriodSeconds": 0,
                    "securityContext": {"runAsUser": 0, "supplementalGroups": [1000, 2000]},
                    "tolerations": [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute", "tolerationSeconds": 300}],
                    "priority": -10
                }
            })
        );
    }

    #[test]
    fn a_lease_renew_time_has_microseconds() {
        let micro = [int(1, 1_764_000_000), int(2, 123_456_789)].concat();
        let spec = [ld(1, b"kexplore-1"), int(2, 15), ld(4, &micro), int(5, 0)].concat();
        let body = envelope(
            "coordination.k8s.io/v1",
            "Lease",
            &[ld(1, &ld(1, b"kube-scheduler")), ld(2, &spec)].concat(),
        );
        assert_eq!(
            captured("Lease", &body)["spec"],
            json!({"holderIdentity": "kexplore-1", "leaseDurationSeconds": 15,
                   "renewTime": "2025-11-24T16:00:00.123456Z", "leaseTransitions": 0})
        );
    }

    #[test]
    fn a_secrets_bytes_are_base64_as_in_json() {
        // Secret: metadata 1, data 2 (map<string, bytes>), type 3.
        let entry = [ld(1, b"password"), ld(2, &[0x00, 0xff, b'x'])].concat();
        let body = envelope(
            "v1",
            "Secret",
            &[ld(1, &ld(1, b"s")), ld(2, &entry)].concat(),
        );
        assert_eq!(
            captured("Secret", &body),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                   "data": {"password": "AP94"}})
        );
    }

    #[test]
    fn wrong_kind_unknown_kind_garbage_and_bad_utf8_are_errors() {
        let raw = ld(1, &ld(1, b"x"));
        assert!(decode("Role", &envelope("v1", "Namespace", &raw)).is_err());
        assert!(
            decode(
                "PersistentVolume",
                &envelope("v1", "PersistentVolume", &raw)
            )
            .is_err()
        );
        assert!(decode("Role", b"not protobuf").is_err());
        let rbac = "rbac.authorization.k8s.io/v1";
        assert!(decode("Role", &envelope(rbac, "Role", &[0xff])).is_err());
        assert!(
            decode(
                "Role",
                &envelope(rbac, "Role", &ld(1, &ld(1, &[0xc3, 0x28])))
            )
            .is_err()
        );
        // A field number this schema does not know is skipped, as kube-apiserver skips it.
        let v = decode(
            "Role",
            &envelope(rbac, "Role", &[raw, ld(99, b"x")].concat()),
        );
        assert_eq!(
            v.ok().map(|v| v["metadata"].clone()),
            Some(json!({"name": "x"}))
        );
        assert!(supported("v1", "Pod") && supported("v1", "DeleteOptions"));
        assert!(!supported("v1", "PersistentVolume") && !supported("v1beta1", "Role"));
        assert!(supported("apps/v1", "Deployment") && supported("v1", "Secret"));
    }
}
