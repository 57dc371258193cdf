//! Service-account tokens (upstream `pkg/serviceaccount`: `claims.go`, `jwt.go`): the claims a
//! TokenRequest gets, and the token authenticator that accepts them — signature, issuer, time
//! (go-jose's one-minute leeway), audiences, then the service account (and the pod it is bound
//! to) still there with the uid the token names.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::apiserver::filters::jwt::{Es256Key, JwtError, Parts};
use crate::apiserver::request::user::UserInfo;
use crate::apiserver::storage::interface::Storage;

/// kube-apiserver's issuer when `--service-account-issuer` is not given to `kexplore serve`
/// (kubeadm's default).
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// go-jose's `DefaultLeeway`, which `jwt.Claims.Validate` applies to exp, nbf and iat.
const LEEWAY: i64 = 60;

/// The service-account token issuer and authenticator of one server.
#[derive(Debug)]
pub struct ServiceAccountTokens {
    key: Es256Key,
    issuer: String,
    /// `--api-audiences`: unset, they are the issuer (as kube-apiserver defaults them).
    audiences: Vec<String>,
}

/// What a bound token names besides its service account.
#[derive(Default)]
pub(crate) struct Bound<'a> {
    pub(crate) pod: Option<&'a Value>,
    pub(crate) secret: Option<&'a Value>,
    pub(crate) node: Option<&'a Value>,
}

/// An accepted token: who it is, and the audiences it was accepted for.
#[derive(Debug)]
pub(crate) struct Accepted {
    pub(crate) user: UserInfo,
    pub(crate) audiences: Vec<String>,
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

fn reference(o: &Value) -> Value {
    json!({"name": s(o, "/metadata/name"), "uid": s(o, "/metadata/uid")})
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn go_quoted(v: &[String]) -> String {
    let items: Vec<String> = v.iter().map(|a| format!("{a:?}")).collect();
    format!("[{}]", items.join(" "))
}

impl ServiceAccountTokens {
    pub(crate) fn new(key: Es256Key, issuer: &str) -> Self {
        ServiceAccountTokens {
            key,
            issuer: issuer.to_string(),
            audiences: vec![issuer.to_string()],
        }
    }

    /// From the PEM private key kept as the PKI directory's `sa.key`.
    pub fn from_pem(pem: &crate::kubeconfig::Secret<String>, issuer: &str) -> Result<Self, String> {
        let der = crate::pki::key::to_pkcs8_der(pem.expose().as_bytes())
            .ok_or("sa.key: not a PEM private key")?;
        Ok(Self::new(Es256Key::from_pkcs8(der.expose())?, issuer))
    }

    /// A throwaway key, for a server built without a PKI directory (tests, `Api::new`).
    pub(crate) fn ephemeral() -> Result<Self, String> {
        use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let doc = EcdsaKeyPair::generate_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &ring::rand::SystemRandom::new(),
        )
        .map_err(|e| format!("cannot generate a service-account key: {e}"))?;
        Ok(Self::new(
            Es256Key::from_pkcs8(doc.as_ref())?,
            DEFAULT_ISSUER,
        ))
    }

    pub(crate) fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// `token.Claims` + `GenerateToken`: the signed token and its expiry (unix seconds).
    pub(crate) fn issue(
        &self,
        sa: &Value,
        bound: &Bound<'_>,
        expiration_seconds: i64,
        audiences: &[String],
        now: i64,
    ) -> Result<(String, i64), String> {
        let ns = s(sa, "/metadata/namespace");
        let name = s(sa, "/metadata/name");
        let exp = now.saturating_add(expiration_seconds);
        let mut k8s = json!({"namespace": ns, "serviceaccount": reference(sa)});
        if let Some(p) = bound.pod {
            k8s["pod"] = reference(p);
        }
        if let Some(sec) = bound.secret {
            k8s["secret"] = reference(sec);
        }
        if let Some(n) = bound.node {
            k8s["node"] = reference(n);
        }
        let claims = json!({
            "iss": self.issuer,
            "sub": format!("system:serviceaccount:{ns}:{name}"),
            "aud": audiences,
            "exp": exp,
            "iat": now,
            "nbf": now,
            "jti": crate::apiserver::util::uuid(),
            "kubernetes.io": k8s,
        });
        Ok((self.key.sign(&claims)?, exp))
    }

    /// The token authenticator: `None` when the token is not one of ours (not a JWS, or another
    /// issuer: the authenticator abstains), else the user or why the token is refused.
    /// `wanted` are the audiences the caller serves (the API audiences, or a TokenReview's).
    pub(crate) fn authenticate(
        &self,
        store: &dyn Storage,
        token: &str,
        wanted: &[String],
        now: i64,
    ) -> Option<Result<Accepted, String>> {
        let parts = Parts::split(token).ok()?;
        if parts.claims.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return None;
        }
        let claims = match self.key.verify(token) {
            Ok(c) => c,
            Err(JwtError::Malformed(_) | JwtError::Algorithm(_)) => return None,
            Err(e) => return Some(Err(e.to_string())),
        };
        Some(self.validate(store, &claims, wanted, now))
    }

    fn validate(
        &self,
        store: &dyn Storage,
        claims: &Map<String, Value>,
        wanted: &[String],
        now: i64,
    ) -> Result<Accepted, String> {
        let num = |k: &str| claims.get(k).and_then(Value::as_i64);
        if num("exp").is_some_and(|exp| now - LEEWAY > exp) {
            return Err("service account token has expired".into());
        }
        if num("nbf").is_some_and(|nbf| now + LEEWAY < nbf) {
            return Err("service account token is not valid yet".into());
        }
        if num("iat").is_some_and(|iat| now + LEEWAY < iat) {
            return Err("service account token is issued in the future".into());
        }
        let token_auds: Vec<String> = match claims.get("aud") {
            Some(Value::String(a)) => vec![a.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
            _ => Vec::new(),
        };
        let audiences: Vec<String> = token_auds
            .iter()
            .filter(|a| wanted.contains(a))
            .cloned()
            .collect();
        if audiences.is_empty() {
            return Err(format!(
                "token audiences {} is invalid for the target audiences {}",
                go_quoted(&token_auds),
                go_quoted(wanted)
            ));
        }
        let k8s = claims
            .get("kubernetes.io")
            .filter(|v| v.is_object())
            .ok_or("service account token claims could not be validated due to unexpected private claim")?;
        let ns = s(k8s, "/namespace");
        let (sa_name, sa_uid) = (
            s(k8s, "/serviceaccount/name"),
            s(k8s, "/serviceaccount/uid"),
        );
        if ns.is_empty() || sa_name.is_empty() || sa_uid.is_empty() {
            return Err("service account token claims could not be validated due to unexpected private claim".into());
        }
        let sa = store
            .get(&format!("/registry/serviceaccounts/{ns}/{sa_name}"))
            .ok_or_else(|| format!("serviceaccounts {sa_name:?} not found"))?;
        let uid = s(&sa, "/metadata/uid");
        if uid != sa_uid {
            return Err(format!(
                "service account UID ({uid}) does not match claim ({sa_uid})"
            ));
        }
        if sa
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null())
        {
            return Err(format!("service account {ns}/{sa_name} has been deleted"));
        }
        let mut extra = BTreeMap::new();
        if let Some(pod_ref) = k8s.get("pod") {
            let (pod_name, pod_uid) = (s(pod_ref, "/name"), s(pod_ref, "/uid"));
            let pod = store
                .get(&format!("/registry/pods/{ns}/{pod_name}"))
                .ok_or_else(|| format!("pods {pod_name:?} not found"))?;
            let uid = s(&pod, "/metadata/uid");
            if uid != pod_uid {
                return Err(format!("pod UID ({uid}) does not match claim ({pod_uid})"));
            }
            if pod
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|v| !v.is_null())
            {
                return Err(format!("pod {ns}/{pod_name} has been deleted"));
            }
            extra.insert(
                "authentication.kubernetes.io/pod-name".into(),
                vec![pod_name.to_string()],
            );
            extra.insert(
                "authentication.kubernetes.io/pod-uid".into(),
                vec![pod_uid.to_string()],
            );
        }
        if let Some(secret_ref) = k8s.get("secret") {
            let (name, want) = (s(secret_ref, "/name"), s(secret_ref, "/uid"));
            let secret = store
                .get(&format!("/registry/secrets/{ns}/{name}"))
                .ok_or_else(|| format!("secrets {name:?} not found"))?;
            let uid = s(&secret, "/metadata/uid");
            if uid != want {
                return Err(format!("secret UID ({uid}) does not match claim ({want})"));
            }
        }
        if let Some(node_ref) = k8s.get("node") {
            extra.insert(
                "authentication.kubernetes.io/node-name".into(),
                vec![s(node_ref, "/name").to_string()],
            );
            extra.insert(
                "authentication.kubernetes.io/node-uid".into(),
                vec![s(node_ref, "/uid").to_string()],
            );
        }
        if let Some(jti) = claims.get("jti").and_then(Value::as_str) {
            extra.insert(
                "authentication.kubernetes.io/credential-id".into(),
                vec![format!("JTI={jti}")],
            );
        }
        Ok(Accepted {
            user: UserInfo {
                username: format!("system:serviceaccount:{ns}:{sa_name}"),
                uid: uid.to_string(),
                groups: vec![
                    "system:serviceaccounts".into(),
                    format!("system:serviceaccounts:{ns}"),
                ],
                extra,
            },
            audiences,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::store::{Store, Write};

    fn setup() -> (ServiceAccountTokens, Store, Value) {
        let Ok(tokens) = ServiceAccountTokens::ephemeral() else {
            panic!("no key")
        };
        let store = Store::new(crate::apiserver::transport::limits::Limits::default().history);
        let sa = json!({"kind": "ServiceAccount", "apiVersion": "v1",
                        "metadata": {"name": "ci", "namespace": "build", "uid": "u-1"}});
        let _ = store.create(
            "/registry/serviceaccounts/build/ci",
            sa.clone(),
            Write::Commit,
        );
        (tokens, store, sa)
    }

    #[test]
    fn a_token_names_its_account_until_the_account_changes() {
        let (t, store, sa) = setup();
        let auds = t.audiences().to_vec();
        let Ok((token, exp)) = t.issue(&sa, &Bound::default(), 600, &auds, 1_000) else {
            panic!("issue")
        };
        assert_eq!(exp, 1_600);
        let ok = t.authenticate(&store, &token, &auds, 1_100);
        let Some(Ok(a)) = ok else { panic!("{ok:?}") };
        assert_eq!(a.user.username, "system:serviceaccount:build:ci");
        assert_eq!(a.user.uid, "u-1");
        assert_eq!(
            a.user.groups,
            ["system:serviceaccounts", "system:serviceaccounts:build"]
        );
        let err = |now: i64, wanted: &[String]| match t.authenticate(&store, &token, wanted, now) {
            Some(Err(e)) => e,
            other => panic!("{other:?}"),
        };
        // go-jose's minute of leeway on either side.
        assert!(
            t.authenticate(&store, &token, &auds, 1_650)
                .is_some_and(|r| r.is_ok())
        );
        assert_eq!(err(1_661, &auds), "service account token has expired");
        assert_eq!(err(900, &auds), "service account token is not valid yet");
        assert_eq!(
            err(1_100, &["vault".to_string()]),
            format!(
                "token audiences [\"{DEFAULT_ISSUER}\"] is invalid for the target audiences [\"vault\"]"
            )
        );
        let _ = store.delete("/registry/serviceaccounts/build/ci", Write::Commit, |_| {
            Ok(())
        });
        assert_eq!(err(1_100, &auds), "serviceaccounts \"ci\" not found");
        let mut again = sa.clone();
        again["metadata"]["uid"] = json!("u-2");
        let _ = store.create("/registry/serviceaccounts/build/ci", again, Write::Commit);
        assert_eq!(
            err(1_100, &auds),
            "service account UID (u-2) does not match claim (u-1)"
        );
    }

    #[test]
    fn hostile_claims_are_refused_or_ignored_never_a_panic() {
        let (t, store, _) = setup();
        let auds = t.audiences().to_vec();
        // Foreign issuers and non-tokens: the authenticator abstains.
        for claims in [json!({"iss": "https://elsewhere"}), json!({"sub": 1})] {
            let Ok(token) = t.key.sign(&claims) else {
                panic!()
            };
            assert!(t.authenticate(&store, &token, &auds, 0).is_none());
        }
        assert!(t.authenticate(&store, "not.a.jwt", &auds, 0).is_none());
        // Signed by us, but of every wrong shape.
        for claims in [
            json!({"iss": DEFAULT_ISSUER}),
            json!({"iss": DEFAULT_ISSUER, "aud": 7}),
            json!({"iss": DEFAULT_ISSUER, "aud": DEFAULT_ISSUER, "kubernetes.io": "x"}),
            json!({"iss": DEFAULT_ISSUER, "aud": [DEFAULT_ISSUER], "exp": "soon", "kubernetes.io": {}}),
            json!({"iss": DEFAULT_ISSUER, "aud": [DEFAULT_ISSUER], "kubernetes.io": {"namespace": "build", "serviceaccount": {"name": "ci", "uid": "u-1"}, "pod": {"name": 3}}}),
        ] {
            let Ok(token) = t.key.sign(&claims) else {
                panic!()
            };
            assert!(
                matches!(t.authenticate(&store, &token, &auds, 0), Some(Err(_))),
                "{claims}"
            );
        }
    }
}
