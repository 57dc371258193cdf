//! Minting certificates with rcgen: CAs, intermediates and leaves with an explicit subject
//! order, validity window, key usages, EKUs and SANs. Used by the sample generator and, later,
//! by the embedded API server. Parameters in; PEM certificate and a redacted key out.
//!
//! ring cannot generate RSA keys; pass an RSA key in as PKCS#8 PEM (`KeyPair::from_pem`).

use std::net::IpAddr;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType, SerialNumber,
};

use rustls_pki_types::pem::PemObject as _;

use crate::kubeconfig::Secret;

#[derive(Debug, thiserror::Error)]
pub enum MintError {
    #[error("cannot mint certificate: {0}")]
    Rcgen(#[from] rcgen::Error),
    #[error("invalid validity time {0}")]
    Time(i64),
    #[error("invalid SAN '{0}'")]
    San(String),
    #[error("a subject may hold at most two values of one attribute here (more than two {0})")]
    Repeated(&'static str),
}

/// The attributes a Kubernetes PKI uses, in the order given (= encoding order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attr {
    C,
    ST,
    L,
    O,
    OU,
    CN,
}

/// Key algorithms ring can generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    EcdsaP256,
    EcdsaP384,
    Ed25519,
}

/// A fresh key pair.
pub fn generate_key(kind: KeyKind) -> Result<KeyPair, MintError> {
    let alg = match kind {
        KeyKind::EcdsaP256 => &rcgen::PKCS_ECDSA_P256_SHA256,
        KeyKind::EcdsaP384 => &rcgen::PKCS_ECDSA_P384_SHA384,
        KeyKind::Ed25519 => &rcgen::PKCS_ED25519,
    };
    Ok(KeyPair::generate_for(alg)?)
}

/// A key pair from PEM: PKCS#8, or PKCS#1 (`RSA PRIVATE KEY`, as kubeadm writes) and SEC1
/// (`EC PRIVATE KEY`), which are rewrapped as PKCS#8 because rcgen with ring reads only that.
/// RSA keys can be signed with, though ring cannot create them.
pub fn key_from_pem(pem: &Secret<String>) -> Result<KeyPair, MintError> {
    match super::key::to_pkcs8_der(pem.expose().as_bytes()) {
        Some(der) => Ok(KeyPair::try_from(der.expose().as_slice())?),
        None => Ok(KeyPair::from_pem(pem.expose())?),
    }
}

/// What to put in one certificate.
#[derive(Debug, Clone)]
pub struct CertSpec {
    /// In encoding order; openssl's RFC 2253 form prints it reversed.
    pub subject: Vec<(Attr, String)>,
    /// Big-endian serial; random when `None`.
    pub serial: Option<Vec<u8>>,
    /// Unix seconds.
    pub not_before: i64,
    pub not_after: i64,
    /// `Some(path_len)` for a CA (`Some(None)` = unconstrained); `None` for a leaf (CA:FALSE).
    pub ca: Option<Option<u8>>,
    pub key_usages: Vec<KeyUsagePurpose>,
    pub extended_key_usages: Vec<ExtendedKeyUsagePurpose>,
    pub dns_names: Vec<String>,
    pub ip_addresses: Vec<IpAddr>,
    /// rfc822Name subjectAltNames (what a request's `emailAddress` SANs ask for).
    pub email_addresses: Vec<String>,
    pub uris: Vec<String>,
}

impl CertSpec {
    /// A CA with kubeadm's key usages (Digital Signature, Key Encipherment, Certificate Sign).
    pub fn ca(subject: Vec<(Attr, String)>, not_before: i64, not_after: i64) -> CertSpec {
        CertSpec {
            subject,
            serial: None,
            not_before,
            not_after,
            ca: Some(None),
            key_usages: vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
                KeyUsagePurpose::KeyCertSign,
            ],
            extended_key_usages: Vec::new(),
            dns_names: Vec::new(),
            ip_addresses: Vec::new(),
            email_addresses: Vec::new(),
            uris: Vec::new(),
        }
    }

    /// A client certificate as kubeadm issues one: CN = user, O = groups, clientAuth.
    pub fn client(subject: Vec<(Attr, String)>, not_before: i64, not_after: i64) -> CertSpec {
        CertSpec {
            ca: None,
            key_usages: vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
            ],
            extended_key_usages: vec![ExtendedKeyUsagePurpose::ClientAuth],
            ..CertSpec::ca(subject, not_before, not_after)
        }
    }

    /// A serving certificate for the API server.
    pub fn server(
        subject: Vec<(Attr, String)>,
        dns_names: Vec<String>,
        ip_addresses: Vec<IpAddr>,
        not_before: i64,
        not_after: i64,
    ) -> CertSpec {
        CertSpec {
            extended_key_usages: vec![ExtendedKeyUsagePurpose::ServerAuth],
            dns_names,
            ip_addresses,
            ..CertSpec::client(subject, not_before, not_after)
        }
    }

    fn params(&self) -> Result<CertificateParams, MintError> {
        let mut p = CertificateParams::new(Vec::<String>::new())?;
        let mut dn = DistinguishedName::new();
        let mut seen: Vec<Attr> = Vec::new();
        for (attr, value) in &self.subject {
            let (ty, arc, name) = match attr {
                Attr::C => (DnType::CountryName, 6, "C"),
                Attr::ST => (DnType::StateOrProvinceName, 8, "ST"),
                Attr::L => (DnType::LocalityName, 7, "L"),
                Attr::O => (DnType::OrganizationName, 10, "O"),
                Attr::OU => (DnType::OrganizationalUnitName, 11, "OU"),
                Attr::CN => (DnType::CommonName, 3, "CN"),
            };
            // rcgen keeps one value per attribute type; a second one (a second group, O) is
            // written under the same OID as a custom type, which encodes identically.
            let repeats = seen.iter().filter(|a| *a == attr).count();
            let ty = match repeats {
                0 => ty,
                1 => DnType::CustomDnType(vec![2, 5, 4, arc]),
                _ => return Err(MintError::Repeated(name)),
            };
            seen.push(*attr);
            dn.push(ty, value.as_str());
        }
        p.distinguished_name = dn;
        p.serial_number = self.serial.as_deref().map(SerialNumber::from_slice);
        p.not_before = time::OffsetDateTime::from_unix_timestamp(self.not_before)
            .map_err(|_| MintError::Time(self.not_before))?;
        p.not_after = time::OffsetDateTime::from_unix_timestamp(self.not_after)
            .map_err(|_| MintError::Time(self.not_after))?;
        p.is_ca = match self.ca {
            Some(None) => IsCa::Ca(BasicConstraints::Unconstrained),
            Some(Some(n)) => IsCa::Ca(BasicConstraints::Constrained(n)),
            // ExplicitNoCa writes CA:FALSE and a subject key identifier, as kubeadm's leaves have.
            None => IsCa::ExplicitNoCa,
        };
        p.key_usages = self.key_usages.clone();
        p.extended_key_usages = self.extended_key_usages.clone();
        // rcgen holds these names as IA5 strings: ASCII, or the request cannot be signed.
        let ia5 = |n: &String| n.clone().try_into().map_err(|_| MintError::San(n.clone()));
        for d in &self.dns_names {
            p.subject_alt_names.push(SanType::DnsName(ia5(d)?));
        }
        for ip in &self.ip_addresses {
            p.subject_alt_names.push(SanType::IpAddress(*ip));
        }
        for e in &self.email_addresses {
            p.subject_alt_names.push(SanType::Rfc822Name(ia5(e)?));
        }
        for u in &self.uris {
            p.subject_alt_names.push(SanType::URI(ia5(u)?));
        }
        Ok(p)
    }
}

/// A minted certificate and its key. The key is PKCS#8 v1 PEM (the form OpenSSL reads as
/// well as Go and rustls) inside a `Secret`.
#[derive(Debug, Clone)]
pub struct Minted {
    pub cert_pem: String,
    pub cert_der: Vec<u8>,
    pub key_pem: Secret<String>,
}

/// A CA that can issue: its own certificate plus rcgen's issuer (name, key id, key).
pub struct Authority {
    pub cert: Minted,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority")
            .field("cert", &self.cert)
            .finish_non_exhaustive()
    }
}

fn minted(cert: &rcgen::Certificate, key: &KeyPair) -> Minted {
    Minted {
        cert_pem: cert.pem(),
        cert_der: cert.der().to_vec(),
        key_pem: Secret::new(super::key_forms::openssl_readable_pem(&key.serialize_pem())),
    }
}

impl Authority {
    /// A self-signed root.
    pub fn self_signed(spec: &CertSpec, key: KeyPair) -> Result<Authority, MintError> {
        let params = spec.params()?;
        let cert = params.self_signed(&key)?;
        let cert = minted(&cert, &key);
        Ok(Authority {
            cert,
            issuer: Issuer::new(params, key),
        })
    }

    /// An existing CA, e.g. one kept in a PKI directory between runs.
    pub fn from_pem(cert_pem: &str, key_pem: &Secret<String>) -> Result<Authority, MintError> {
        let key = key_from_pem(key_pem)?;
        let der = rustls_pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes())
            .map_err(|_| MintError::Rcgen(rcgen::Error::CouldNotParseCertificate))?;
        let cert = Minted {
            cert_pem: cert_pem.to_string(),
            cert_der: der.to_vec(),
            key_pem: Secret::new(super::key_forms::openssl_readable_pem(&key.serialize_pem())),
        };
        Ok(Authority {
            cert,
            issuer: Issuer::from_ca_cert_der(&der, key)?,
        })
    }

    /// A leaf (or any certificate that will not issue others) signed by this CA.
    pub fn issue(&self, spec: &CertSpec, key: &KeyPair) -> Result<Minted, MintError> {
        let mut params = spec.params()?;
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(key, &self.issuer)?;
        Ok(minted(&cert, key))
    }

    /// A certificate for a public key whose private half we do not hold (a CSR's key, or an
    /// RSA key ring cannot load, e.g. one shorter than 2048 bits). Returns PEM and DER.
    pub fn issue_for_public_key(
        &self,
        spec: &CertSpec,
        spki_der: &[u8],
    ) -> Result<(String, Vec<u8>), MintError> {
        let public = rcgen::SubjectPublicKeyInfo::from_der(spki_der)?;
        let mut params = spec.params()?;
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&public, &self.issuer)?;
        Ok((cert.pem(), cert.der().to_vec()))
    }

    /// An intermediate CA signed by this CA.
    pub fn issue_ca(&self, spec: &CertSpec, key: KeyPair) -> Result<Authority, MintError> {
        let mut params = spec.params()?;
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&key, &self.issuer)?;
        let cert = minted(&cert, &key);
        Ok(Authority {
            cert,
            issuer: Issuer::new(params, key),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rel: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample-kubeconfigs")
            .join(rel);
        std::fs::read_to_string(p).unwrap()
    }

    /// The committed CAs (PKCS#1 RSA keys) can issue, and what they issue verifies.
    #[test]
    fn sample_cas_with_pkcs1_keys_can_issue() {
        for dir in ["kubeadm/ca", "alibaba-style/cluster-ca"] {
            let ca = Authority::from_pem(
                &sample(&format!("pki/{dir}.crt")),
                &Secret::new(sample(&format!("pki/{dir}.key"))),
            )
            .unwrap();
            let key = generate_key(KeyKind::EcdsaP256).unwrap();
            let leaf = ca
                .issue(
                    &CertSpec::client(vec![(Attr::CN, "x".into())], Y2025, Y2125),
                    &key,
                )
                .unwrap();
            let (_, l) = x509_parser::parse_x509_certificate(&leaf.cert_der).unwrap();
            let (_, c) = x509_parser::parse_x509_certificate(&ca.cert.cert_der).unwrap();
            assert!(l.verify_signature(Some(c.public_key())).is_ok(), "{dir}");
            assert_eq!(l.issuer().as_raw(), c.subject().as_raw());
        }
    }

    #[test]
    fn sec1_keys_load() {
        let text = sample("ecdsa.yaml");
        let b64 = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("client-key-data: "))
            .unwrap();
        let pem = crate::kubeconfig::resolve::decode_base64(b64).unwrap();
        let pem = String::from_utf8(pem).unwrap();
        assert!(pem.contains("EC PRIVATE KEY"));
        key_from_pem(&Secret::new(pem)).unwrap();
    }

    const Y2025: i64 = 1_735_689_600;
    const Y2125: i64 = 4_891_363_200;

    /// A user in two groups: both organizations are in the certificate, as Kubernetes reads
    /// groups from every O; a third value of one attribute is refused, not dropped.
    #[test]
    fn a_second_organization_is_kept_and_a_third_refused() {
        let root = Authority::self_signed(
            &CertSpec::ca(vec![(Attr::CN, "root".into())], Y2025, Y2125),
            generate_key(KeyKind::EcdsaP256).unwrap(),
        )
        .unwrap();
        let key = generate_key(KeyKind::EcdsaP256).unwrap();
        let subject = |orgs: &[&str]| {
            let mut s = vec![(Attr::CN, "alice".to_string())];
            s.extend(orgs.iter().map(|o| (Attr::O, o.to_string())));
            CertSpec::client(s, Y2025, Y2125)
        };
        let two = root.issue(&subject(&["devs", "ops"]), &key).unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(&two.cert_der).unwrap();
        let orgs: Vec<&str> = cert
            .subject()
            .iter_organization()
            .filter_map(|a| a.as_str().ok())
            .collect();
        assert_eq!(orgs, ["devs", "ops"]);
        let three = root.issue(&subject(&["a", "b", "c"]), &key);
        assert!(matches!(three, Err(MintError::Repeated("O"))), "{three:?}");
    }

    #[test]
    fn a_chain_verifies_and_keeps_subject_order() {
        let root = Authority::self_signed(
            &CertSpec::ca(
                vec![(Attr::O, "Acme".into()), (Attr::CN, "root".into())],
                Y2025,
                Y2125,
            ),
            generate_key(KeyKind::EcdsaP256).unwrap(),
        )
        .unwrap();
        let mid = root
            .issue_ca(
                &CertSpec::ca(vec![(Attr::CN, "mid".into())], Y2025, Y2125),
                generate_key(KeyKind::EcdsaP384).unwrap(),
            )
            .unwrap();
        let key = generate_key(KeyKind::Ed25519).unwrap();
        let leaf = mid
            .issue(
                &CertSpec::client(
                    vec![
                        (Attr::O, "system:masters".into()),
                        (Attr::CN, "admin".into()),
                    ],
                    Y2025,
                    Y2125,
                ),
                &key,
            )
            .unwrap();
        let s = crate::pki::cert::summarize(&leaf.cert_der, "test", 0).unwrap();
        assert_eq!(s.subject, "CN=admin,O=system:masters");
        assert_eq!(s.issuer, "CN=mid");
        assert_eq!(s.not_before, "2025-01-01T00:00:00Z");
        assert_eq!(s.extended_key_usage, ["TLS Web Client Authentication"]);
        assert!(s.subject_key_id.is_some() && s.authority_key_id.is_some());
        let (_, l) = x509_parser::parse_x509_certificate(&leaf.cert_der).unwrap();
        let (_, m) = x509_parser::parse_x509_certificate(&mid.cert.cert_der).unwrap();
        assert!(l.verify_signature(Some(m.public_key())).is_ok());
        assert!(!format!("{leaf:?}").contains("PRIVATE"));
    }
}
