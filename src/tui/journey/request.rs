//! The create request two ways: the seed's curl line (client certificate, CA, key, the
//! manifest as the body) and what kubectl puts on the wire for `kubectl create -f`.

use serde_json::Value;

/// The seed's `curl -X POST ... -d@app.json https://.../api/v1/namespaces/NS/pods`.
pub fn curl(server: &str, ns: &str, file: &str) -> String {
    format!(
        "curl -X POST -H 'Content-Type: application/json;charset=utf-8' --cert ./client.crt --cacert ./ca.crt --key ./client.key -d@{file} {}/api/v1/namespaces/{ns}/pods",
        server.trim_end_matches('/')
    )
}

/// `kubectl create -f FILE` as the HTTP request it sends (kubectl 1.27+ asks the server to
/// validate fields strictly and names itself as the field manager).
pub fn kubectl(ns: &str, file: &str) -> Vec<String> {
    vec![
        format!("$ kubectl create -f {file}"),
        format!(
            "POST /api/v1/namespaces/{ns}/pods?fieldManager=kubectl-create&fieldValidation=Strict"
        ),
        "Content-Type: application/json".into(),
        "Accept: application/json".into(),
        "User-Agent: kubectl/v1.33 (linux/amd64)".into(),
        "(client certificate and key from the kubeconfig, in the TLS handshake)".into(),
    ]
}

/// `a.b.c` of a JSON pointer into `v`, as one compact line (for admission diffs).
pub fn value_at(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer).map(|x| match x {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    })
}
