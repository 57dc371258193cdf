//! The credential report: what `kexplore certs -o json` prints and what the Certificates view
//! shows. Field names and formats are the contract's (../shared/CONTRACT.md, "CERT").

use serde::Serialize;

/// One decoded certificate, every field formatted as openssl prints it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CertSummary {
    /// RFC 2253 order and escaping, as `openssl x509 -noout -subject -nameopt RFC2253`.
    pub subject: String,
    pub issuer: String,
    /// Upper-case hex without separators, as `openssl x509 -noout -serial`.
    pub serial: String,
    pub serial_decimal: String,
    pub version: u32,
    /// RFC 3339 UTC, e.g. `2026-11-21T22:53:34Z`.
    pub not_before: String,
    pub not_after: String,
    /// As `openssl x509 -text` names it, e.g. `sha256WithRSAEncryption`, `ecdsa-with-SHA256`, `ED25519`.
    pub signature_algorithm: String,
    pub public_key: PublicKeyInfo,
    pub is_ca: bool,
    pub path_len: Option<u32>,
    /// openssl's names: `Digital Signature`, `Key Encipherment`, `Certificate Sign`, `CRL Sign`, ...
    pub key_usage: Vec<String>,
    /// openssl's names: `TLS Web Server Authentication`, `TLS Web Client Authentication`, ...
    pub extended_key_usage: Vec<String>,
    pub san: SubjectAltNames,
    /// Upper-case hex with colons, as openssl prints key identifiers.
    pub subject_key_id: Option<String>,
    pub authority_key_id: Option<String>,
    /// Upper-case hex with colons, as `openssl x509 -noout -fingerprint -sha256`.
    pub sha256_fingerprint: String,
    pub self_signed: bool,
    /// `sha256_fingerprint` of the issuing certificate when it is in the kubeconfig.
    pub issued_by: Option<String>,
    /// Not in the contract's JSON: facts the views need.
    #[serde(skip)]
    pub extra: CertExtra,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CertExtra {
    /// Seconds since the Unix epoch, for countdowns and expiry checks.
    pub not_before_unix: i64,
    pub not_after_unix: i64,
    /// Where the certificate came from, e.g. `user 'admin' in /home/x/.kube/config: client-certificate-data`.
    pub origin: String,
    /// Position within its bundle (0-based), for bundles holding several certificates.
    pub index_in_bundle: usize,
    /// The CN, which Kubernetes takes as the user name.
    pub common_name: Option<String>,
    /// The O values, which Kubernetes takes as groups.
    pub organizations: Vec<String>,
    /// The DER bytes, for signature verification and handshakes.
    pub der: Vec<u8>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PublicKeyInfo {
    /// `RSA`, `EC` or `Ed25519`.
    pub algorithm: String,
    pub bits: u32,
    /// openssl's curve name (`prime256v1`, `secp384r1`), null for RSA and Ed25519.
    pub curve: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct SubjectAltNames {
    pub dns: Vec<String>,
    pub ip: Vec<String>,
    pub email: Vec<String>,
    pub uri: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ClientKeyInfo {
    pub algorithm: String,
    pub bits: u32,
    pub curve: Option<String>,
    /// Whether the key's public half equals the client certificate's public key;
    /// null when there is no certificate to compare with.
    pub matches_certificate: Option<bool>,
    /// Not in the contract's JSON: `PKCS#1`, `PKCS#8` (`PKCS#8 v2` when it is) or `SEC1`.
    #[serde(skip)]
    pub format: String,
    /// Not in the contract's JSON: set when the key is PKCS#8 v2, which OpenSSL cannot read.
    #[serde(skip)]
    pub pkcs8_v2: Option<super::key_forms::V1Rewrite>,
}

/// Who Kubernetes' x509 authenticator thinks the client is: CN → user, O → groups.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Identity {
    pub user: String,
    pub groups: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Ok,
    Warn,
    Error,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Check {
    /// Stable kebab-case id, e.g. `client-cert-expired`.
    pub id: String,
    pub status: CheckStatus,
    pub message: String,
    /// The SHA-256 fingerprint of the certificate the check judged, when it judged one (the
    /// TUI opens view 2 on it). Not part of the JSON contract.
    #[serde(skip)]
    pub certificate: Option<String>,
}

impl Check {
    /// The same check, about certificate `c`.
    pub(crate) fn about(mut self, c: &CertSummary) -> Check {
        self.certificate = Some(c.sha256_fingerprint.clone());
        self
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClusterReport {
    pub name: String,
    pub server: String,
    pub tls_server_name: Option<String>,
    pub insecure_skip_tls_verify: bool,
    pub certificate_authority: Vec<CertSummary>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UserReport {
    pub name: String,
    /// `client-certificate|token|exec|basic|none`.
    pub auth: String,
    pub client_certificate: Vec<CertSummary>,
    pub client_key: Option<ClientKeyInfo>,
    pub identity: Option<Identity>,
}

/// One edge of the chain-of-trust tree: `child` was issued by `issuer`
/// (both `sha256_fingerprint`s); `verified` says whether the signature checks out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuance {
    pub child: String,
    pub issuer: String,
    pub verified: bool,
}

/// The TLS facts of a live connection (`certs --connect`); filled by the client module.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ServerReport {
    pub chain: Vec<CertSummary>,
    pub verified: bool,
    pub tls_version: Option<String>,
    pub cipher_suite: Option<String>,
    pub client_certificate_requested: bool,
    pub error: Option<String>,
}

/// The whole report for one context.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CredentialReport {
    pub kubeconfig: Vec<String>,
    pub context: String,
    pub cluster: ClusterReport,
    pub user: UserReport,
    pub checks: Vec<Check>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerReport>,
    /// The issuance edges between all certificates above, for drawing the tree.
    #[serde(skip)]
    pub issuance: Vec<Issuance>,
}

impl CertSummary {
    /// What a person calls it: its CN, else the whole subject.
    pub fn name(&self) -> &str {
        self.extra.common_name.as_deref().unwrap_or(&self.subject)
    }
}

impl CredentialReport {
    /// Every certificate in the report, CA bundle first, then the client chain.
    pub fn all_certificates(&self) -> impl Iterator<Item = &CertSummary> {
        self.cluster
            .certificate_authority
            .iter()
            .chain(self.user.client_certificate.iter())
    }

    /// The CA whose signature on the client certificate verifies (the issuer field is only a
    /// name): what "which CA signed it?" is answered by.
    pub fn client_signer(&self) -> Option<&CertSummary> {
        let leaf = self.user.client_certificate.first()?;
        let edge = self
            .issuance
            .iter()
            .find(|e| e.child == leaf.sha256_fingerprint && e.verified)?;
        self.all_certificates()
            .find(|c| c.sha256_fingerprint == edge.issuer)
    }

    /// The first check of the most severe status, unless every check passed: what a one-line
    /// summary of these credentials must say.
    pub fn worst_check(&self) -> Option<&Check> {
        let worst = self.worst();
        (worst != CheckStatus::Ok)
            .then(|| self.checks.iter().find(|c| c.status == worst))
            .flatten()
    }

    /// The most severe status among the checks.
    pub fn worst(&self) -> CheckStatus {
        self.checks
            .iter()
            .map(|c| c.status)
            .max()
            .unwrap_or(CheckStatus::Ok)
    }
}
