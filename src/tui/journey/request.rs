//! The create request two ways: the seed's curl line (client certificate, CA, key, the
//! manifest as the body) and what kubectl puts on the wire for `kubectl create -f`.

use serde_json::Value;

/// The seed's `curl -X POST ... -d@app.json https://.../api/v1/namespaces/NS/pods`; with
/// `dry_run`, the `?dryRun=All` that Space really sends.
pub fn curl(server: &str, ns: &str, file: &str, dry_run: bool) -> String {
    // The API server reads YAML bodies too, when told so.
    let ct = if file.ends_with(".yaml") || file.ends_with(".yml") {
        "application/yaml"
    } else {
        "application/json;charset=utf-8"
    };
    format!(
        "curl -X POST -H 'Content-Type: {ct}' --cert ./client.crt --cacert ./ca.crt --key ./client.key --data-binary @{file} '{}/api/v1/namespaces/{ns}/pods{}'",
        server.trim_end_matches('/'),
        if dry_run { "?dryRun=All" } else { "" }
    )
}

/// `kubectl create -f FILE` as the HTTP request it sends (kubectl 1.27+ asks the server to
/// validate fields strictly and names itself as the field manager; client-go sorts the query).
/// With `dry_run`, `--dry-run=server`, which is what Space sends.
pub fn kubectl(ns: &str, file: &str, dry_run: bool) -> Vec<String> {
    let (flag, query) = if dry_run {
        (" --dry-run=server", "dryRun=All&")
    } else {
        ("", "")
    };
    vec![
        format!("$ kubectl create -f {file}{flag}"),
        format!(
            "POST /api/v1/namespaces/{ns}/pods?{query}fieldManager=kubectl-create&fieldValidation=Strict"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dry_run_is_shown_as_the_dry_run_it_sends() {
        let c = curl("https://h:6443/", "default", "app.json", true);
        assert!(
            c.ends_with("'https://h:6443/api/v1/namespaces/default/pods?dryRun=All'"),
            "{c}"
        );
        let k = kubectl("default", "app.json", true);
        assert_eq!(k[0], "$ kubectl create -f app.json --dry-run=server");
        assert!(
            k[1].starts_with("POST /api/v1/namespaces/default/pods?dryRun=All&"),
            "{}",
            k[1]
        );
        let real = curl("https://h:6443", "default", "app.json", false);
        assert!(!real.contains("dryRun"), "{real}");
        assert!(
            !kubectl("default", "app.json", false)
                .concat()
                .contains("dry")
        );
    }
}
