//! `kexplore certs -o json` has exactly the contract's shape (../shared/CONTRACT.md), and the
//! full reports of a few samples are pinned as insta snapshots (paths redacted, clock fixed).
//! Regenerating the samples changes keys and fingerprints: re-run with INSTA_UPDATE=always.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use kexplore::kubeconfig::{Kubeconfig, Selection};
use serde_json::Value;

/// 2026-01-01T00:00:00Z: a fixed "now" so the days-left figures in messages do not move.
const NOW: i64 = 1_767_225_600;

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn assert_cert_shape(c: &Value) {
    assert_eq!(
        keys(c),
        set(&[
            "subject",
            "issuer",
            "serial",
            "serial_decimal",
            "version",
            "not_before",
            "not_after",
            "signature_algorithm",
            "public_key",
            "is_ca",
            "path_len",
            "key_usage",
            "extended_key_usage",
            "san",
            "subject_key_id",
            "authority_key_id",
            "sha256_fingerprint",
            "self_signed",
            "issued_by",
        ])
    );
    assert_eq!(keys(&c["public_key"]), set(&["algorithm", "bits", "curve"]));
    assert_eq!(keys(&c["san"]), set(&["dns", "ip", "email", "uri"]));
    let alg = c["public_key"]["algorithm"].as_str().unwrap_or("");
    assert!(["RSA", "EC", "Ed25519"].contains(&alg), "{alg}");
    for t in ["not_before", "not_after"] {
        let s = c[t].as_str().unwrap_or("");
        assert!(
            s.len() == 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T',
            "{s}"
        );
    }
    let fp = c["sha256_fingerprint"].as_str().unwrap_or("");
    assert_eq!(fp.len(), 32 * 3 - 1, "{fp}");
}

/// Runs the binary on every sample context and checks every key of the contract.
#[test]
fn json_shape_matches_the_contract_for_every_sample() {
    for (path, ctx) in common::all_contexts() {
        let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
            .args(["certs", "-o", "json", "--kubeconfig"])
            .arg(&path)
            .args(["--context", &ctx.context_name])
            .output()
            .expect("binary runs");
        assert_eq!(out.status.code(), Some(0), "{}", path.display());
        let v: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
        assert_eq!(
            keys(&v),
            set(&["kubeconfig", "context", "cluster", "user", "checks"]),
            "no `server` without --connect"
        );
        assert_eq!(
            keys(&v["cluster"]),
            set(&[
                "name",
                "server",
                "tls_server_name",
                "insecure_skip_tls_verify",
                "certificate_authority"
            ])
        );
        assert_eq!(
            keys(&v["user"]),
            set(&[
                "name",
                "auth",
                "client_certificate",
                "client_key",
                "identity"
            ])
        );
        let auth = v["user"]["auth"].as_str().unwrap_or("");
        assert!(
            ["client-certificate", "token", "exec", "basic", "none"].contains(&auth),
            "{auth}"
        );
        if !v["user"]["client_key"].is_null() {
            assert_eq!(
                keys(&v["user"]["client_key"]),
                set(&["algorithm", "bits", "curve", "matches_certificate"])
            );
        }
        if !v["user"]["identity"].is_null() {
            assert_eq!(keys(&v["user"]["identity"]), set(&["user", "groups"]));
        }
        for c in v["cluster"]["certificate_authority"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(
                v["user"]["client_certificate"]
                    .as_array()
                    .into_iter()
                    .flatten(),
            )
        {
            assert_cert_shape(c);
        }
        for check in v["checks"].as_array().expect("checks") {
            assert_eq!(keys(check), set(&["id", "status", "message"]));
            let id = check["id"].as_str().unwrap_or("");
            assert!(
                !id.is_empty() && id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "kebab-case id: {id}"
            );
            let st = check["status"].as_str().unwrap_or("");
            assert!(["ok", "warn", "error"].contains(&st), "{st}");
            // An id always carries the same status (resolve warnings are always warn).
            let expected = kexplore::pki::checks::CATALOGUE
                .iter()
                .find(|(i, _)| *i == id)
                .map(|(_, s)| serde_json::to_value(s).unwrap_or_default());
            match expected {
                Some(e) => assert_eq!(e, check["status"], "{id}"),
                None => assert_eq!(st, "warn", "{id} is not in the catalogue"),
            }
        }
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("PRIVATE KEY"), "no key material in output");
    }
}

fn report_json(file: &str, context: Option<&str>) -> String {
    let path = common::samples().join(file);
    let kc = Kubeconfig::load(&Selection::Explicit(path)).expect("load");
    let ctx = kc.resolve(context).expect("resolve");
    let report = kexplore::pki::inspect_at(&ctx, NOW).expect("inspect");
    let json = serde_json::to_string_pretty(&report).expect("json");
    json.replace(&common::root().display().to_string(), "[ROOT]")
}

#[test]
fn snapshot_alibaba_style() {
    insta::assert_snapshot!(report_json("alibaba-style.yaml", None));
}

#[test]
fn snapshot_wrong_ca() {
    insta::assert_snapshot!(report_json("wrong-ca.yaml", None));
}

#[test]
fn snapshot_expired_client() {
    insta::assert_snapshot!(report_json("expired-client.yaml", None));
}

#[test]
fn snapshot_token_and_exec() {
    insta::assert_snapshot!(report_json("token-and-exec.yaml", Some("exec")));
}
