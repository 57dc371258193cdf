//! Test data built in code: a kubeconfig with two files and a credential report with a
//! three-level chain, so views are tested without files, clocks or `pki::inspect`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::kubeconfig::Kubeconfig;
use crate::kubeconfig::load::parse;
use crate::pki::*;
use crate::tui::session::{ContextFacts, LoadedContext, Source};
use crate::tui::state::AppState;

/// 2026-11-22T00:00:00Z: the fixed "now" of every rendering test.
pub const NOW: i64 = 1_795_305_600;
const DAY: i64 = 86_400;

const MAIN: &str = r#"
apiVersion: v1
kind: Config
current-context: admin@prod
clusters:
- name: prod
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: "AAAA"}
- name: lab
  cluster: {server: "https://lab.example.com:6443", certificate-authority: missing.crt}
users:
- name: admin
  user: {client-certificate-data: "AAAA", client-key-data: "AAAA"}
- name: dev
  user: {token: secret-token}
contexts:
- name: admin@prod
  context: {cluster: prod, user: admin}
- name: dev@lab
  context: {cluster: lab, user: dev, namespace: dev}
"#;

const EXTRA: &str = r#"
apiVersion: v1
kind: Config
current-context: ignored-because-main-wins
users:
- name: ci
  user:
    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1beta1}
contexts:
- name: ci@prod
  context: {cluster: prod, user: ci}
"#;

pub fn kubeconfig() -> Kubeconfig {
    let main = PathBuf::from("/home/ann/.kube/config");
    let extra = PathBuf::from("/home/ann/.kube/ci.yaml");
    let gone = PathBuf::from("/home/ann/.kube/gone.yaml");
    Kubeconfig::merge(vec![
        (main.clone(), parse(&main, MAIN.as_bytes()).ok()),
        (gone, None),
        (extra.clone(), parse(&extra, EXTRA.as_bytes()).ok()),
    ])
}

fn cert(cn: &str, orgs: &[&str], issuer: &str, fp: &str, is_ca: bool, origin: &str) -> CertSummary {
    let subject = orgs
        .iter()
        .map(|o| format!("O={o}"))
        .chain([format!("CN={cn}")])
        .collect::<Vec<_>>()
        .join(",");
    CertSummary {
        subject: subject.clone(),
        issuer: format!("CN={issuer}"),
        serial: "41B466243F70".into(),
        serial_decimal: "72258011234160".into(),
        version: 3,
        not_before: "2026-11-21T00:00:00Z".into(),
        not_after: "2027-11-21T05:00:00Z".into(),
        signature_algorithm: "ecdsa-with-SHA256".into(),
        public_key: PublicKeyInfo {
            algorithm: "EC".into(),
            bits: 256,
            curve: Some("prime256v1".into()),
        },
        is_ca,
        path_len: None,
        key_usage: if is_ca {
            vec!["Digital Signature".into(), "Certificate Sign".into()]
        } else {
            vec!["Digital Signature".into()]
        },
        extended_key_usage: if is_ca {
            vec![]
        } else {
            vec!["TLS Web Client Authentication".into()]
        },
        san: SubjectAltNames::default(),
        subject_key_id: Some("AB:CD".into()),
        authority_key_id: None,
        sha256_fingerprint: fp.into(),
        self_signed: cn == issuer,
        issued_by: None,
        extra: CertExtra {
            not_before_unix: NOW - DAY,
            not_after_unix: NOW + 364 * DAY + 5 * 3600,
            origin: origin.into(),
            index_in_bundle: 0,
            common_name: Some(cn.into()),
            organizations: orgs.iter().map(|o| o.to_string()).collect(),
            der: vec![],
        },
    }
}

/// Root CA → cluster CA → client cert, as in the alibaba-style sample; the CA bundle holds
/// both CAs and the client chain holds the leaf.
pub fn report() -> CredentialReport {
    let ca_origin = "cluster 'prod' in /home/ann/.kube/config: certificate-authority-data";
    let cert_origin = "user 'admin' in /home/ann/.kube/config: client-certificate-data";
    let root = cert("root-ca", &[], "root-ca", "AA:01", true, ca_origin);
    let mid = cert("cluster-ca", &[], "root-ca", "BB:02", true, ca_origin);
    let mut leaf = cert(
        "ann",
        &["system:users", "dev"],
        "cluster-ca",
        "CC:03",
        false,
        cert_origin,
    );
    leaf.extra.not_after_unix = NOW + 10 * DAY;
    leaf.not_after = "2026-12-02T00:00:00Z".into();
    let edge = |c: &str, i: &str, v: bool| Issuance {
        child: c.into(),
        issuer: i.into(),
        verified: v,
    };
    CredentialReport {
        kubeconfig: vec!["/home/ann/.kube/config".into()],
        context: "admin@prod".into(),
        cluster: ClusterReport {
            name: "prod".into(),
            server: "https://10.0.0.1:6443".into(),
            tls_server_name: None,
            insecure_skip_tls_verify: false,
            certificate_authority: vec![root, mid],
        },
        user: UserReport {
            name: "admin".into(),
            auth: "client-certificate".into(),
            client_certificate: vec![leaf],
            client_key: Some(ClientKeyInfo {
                algorithm: "EC".into(),
                bits: 256,
                curve: Some("prime256v1".into()),
                matches_certificate: Some(true),
                format: "SEC1".into(),
                pkcs8_v2: None,
            }),
            identity: Some(Identity {
                user: "ann".into(),
                groups: vec!["system:users".into(), "dev".into()],
            }),
        },
        checks: vec![
            Check {
                id: "client-cert-chain".into(),
                status: CheckStatus::Ok,
                message: "client certificate is signed by a CA in the kubeconfig".into(),
                certificate: None,
            },
            Check {
                id: "client-cert-expiring".into(),
                status: CheckStatus::Warn,
                message: "client certificate expires in 10 days".into(),
                certificate: None,
            },
        ],
        server: None,
        issuance: vec![
            edge("AA:01", "AA:01", true),
            edge("BB:02", "AA:01", true),
            edge("CC:03", "BB:02", true),
        ],
    }
}

pub fn loaded(report: Result<CredentialReport, String>) -> LoadedContext {
    LoadedContext {
        name: "admin@prod".into(),
        resolved: Ok(ContextFacts {
            cluster: "prod".into(),
            server: "https://10.0.0.1:6443".into(),
            user: "admin".into(),
            auth: "client-certificate".into(),
            namespace: "default".into(),
            ca_origin: Some(
                "cluster 'prod' in /home/ann/.kube/config: certificate-authority-data".into(),
            ),
            cert_origin: Some(
                "user 'admin' in /home/ann/.kube/config: client-certificate-data".into(),
            ),
            warnings: vec![],
        }),
        report: Some(report),
    }
}

/// The state of a TUI started on the fixture kubeconfig with the report inspected.
pub fn state() -> AppState {
    let source = Source::Loaded {
        kubeconfig: Arc::new(kubeconfig()),
        selection:
            "KUBECONFIG=/home/ann/.kube/config:/home/ann/.kube/gone.yaml:/home/ann/.kube/ci.yaml"
                .into(),
    };
    let mut s = AppState::new(source, Some(loaded(Ok(report()))), NOW);
    s.size = (120, 40);
    s
}

/// `keys` pressed one after another through the keymap and `update`: the effects asked for.
pub fn press(
    state: &mut AppState,
    keys: &[crossterm::event::KeyCode],
) -> Vec<crate::tui::update::Effect> {
    use crossterm::event::{Event, KeyEvent, KeyModifiers};
    let km = crate::tui::keymap::KeyMap::default();
    let mut effects = Vec::new();
    for k in keys {
        let ev =
            crate::tui::app::AppEvent::Input(Event::Key(KeyEvent::new(*k, KeyModifiers::NONE)));
        if let Some(a) = crate::tui::app::to_action(ev, state, &km) {
            effects.extend(crate::tui::update::update(state, a));
        }
    }
    effects
}

/// The fixture's state with the seed's app.json as view 4's pod; `embedded` says whether the
/// server is the embedded sandbox.
pub fn with_app_json(embedded: bool) -> AppState {
    let mut s = state();
    s.journey = crate::tui::journey::JourneyState::new(
        "app.json".into(),
        Some(include_str!("../../../scenarios/app.json")),
        embedded,
    );
    s
}
