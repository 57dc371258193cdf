//! The client key: which algorithm and size, which encoding, and whether its public half is the
//! one in the client certificate. The public half is derived from the private key (RSA: the
//! modulus and exponent stored in it; EC and Ed25519: computed by ring from the private scalar
//! or seed), never taken on trust from an optional field. Key bytes are never printed.

use rustls_pki_types::pem::SectionKind;
use x509_parser::public_key::PublicKey;

use super::der::{read_tlv, sequence_items, tlv};
use super::names;
use super::pem::{self, PemProblem};
use crate::kubeconfig::Secret;

const OID_RSA: &str = "1.2.840.113549.1.1.1";
const OID_EC: &str = "1.2.840.10045.2.1";
const OID_ED25519: &str = "1.3.101.112";

/// How the key was encoded, named as people know the formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFormat {
    /// `RSA PRIVATE KEY` (kubeadm's choice).
    Pkcs1,
    /// `PRIVATE KEY`.
    Pkcs8,
    /// `EC PRIVATE KEY`.
    Sec1,
}

impl KeyFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyFormat::Pkcs1 => "PKCS#1",
            KeyFormat::Pkcs8 => "PKCS#8",
            KeyFormat::Sec1 => "SEC1",
        }
    }
}

/// What the public half can be compared with. EC keeps the scalar (redacted) because ring
/// checks it against a candidate point rather than handing the point out.
enum PublicHalf {
    Rsa { modulus: Vec<u8>, exponent: Vec<u8> },
    Ec { scalar: Secret<Vec<u8>> },
    Ed25519 { public: Vec<u8> },
    Unknown,
}

/// A parsed private key: facts only. No Debug derive, so it can never be printed whole.
pub struct ParsedKey {
    pub algorithm: String,
    pub bits: u32,
    pub curve: Option<String>,
    pub format: KeyFormat,
    public: PublicHalf,
}

impl std::fmt::Debug for ParsedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ParsedKey({} {} bits {:?} {})",
            self.algorithm,
            self.bits,
            self.curve,
            self.format.as_str()
        )
    }
}

/// Reasons a key cannot be read (the caller names the origin).
#[derive(Debug, thiserror::Error)]
pub enum KeyProblem {
    #[error(transparent)]
    Pem(#[from] PemProblem),
    #[error("is not a valid {0} private key")]
    Malformed(&'static str),
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|x| **x == 0).count();
    &b[n..]
}

fn bit_len(b: &[u8]) -> u32 {
    let b = strip_zeros(b);
    match b.first() {
        Some(first) => (b.len() as u32 - 1) * 8 + (8 - first.leading_zeros()),
        None => 0,
    }
}

/// Reads the first private key of a PEM blob.
pub fn parse(pem_bytes: &[u8]) -> Result<ParsedKey, KeyProblem> {
    let key = pem::private_key(pem_bytes)?;
    match key.kind {
        SectionKind::RsaPrivateKey => rsa_pkcs1(&key.der, KeyFormat::Pkcs1),
        SectionKind::EcPrivateKey => sec1(&key.der, None, KeyFormat::Sec1),
        _ => pkcs8(&key.der),
    }
}

/// RSAPrivateKey ::= SEQUENCE { version, modulus, publicExponent, privateExponent, ... }
fn rsa_pkcs1(der: &[u8], format: KeyFormat) -> Result<ParsedKey, KeyProblem> {
    let bad = || KeyProblem::Malformed("RSA (PKCS#1)");
    let items = sequence_items(der).ok_or_else(bad)?;
    let (modulus, exponent) = match items.as_slice() {
        [v, n, e, ..] if v.tag == 0x02 && n.tag == 0x02 && e.tag == 0x02 => {
            (strip_zeros(n.value).to_vec(), strip_zeros(e.value).to_vec())
        }
        _ => return Err(bad()),
    };
    Ok(ParsedKey {
        algorithm: "RSA".into(),
        bits: bit_len(&modulus),
        curve: None,
        format,
        public: PublicHalf::Rsa { modulus, exponent },
    })
}

/// ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING, [0] parameters, [1] publicKey }
fn sec1(der: &[u8], curve_oid: Option<String>, format: KeyFormat) -> Result<ParsedKey, KeyProblem> {
    let bad = || KeyProblem::Malformed("EC (SEC1)");
    let items = sequence_items(der).ok_or_else(bad)?;
    let scalar = match items.as_slice() {
        [v, k, ..] if v.tag == 0x02 && k.tag == 0x04 => k.value.to_vec(),
        _ => return Err(bad()),
    };
    // The curve is in [0] for SEC1 files, in the AlgorithmIdentifier for PKCS#8.
    let from_params = items
        .iter()
        .find(|t| t.tag == 0xA0)
        .and_then(|t| read_tlv(t.value))
        .filter(|(t, _)| t.tag == 0x06)
        .map(|(t, _)| oid_string(t.value));
    let curve = names::curve(&curve_oid.or(from_params).ok_or_else(bad)?);
    Ok(ParsedKey {
        algorithm: "EC".into(),
        bits: names::curve_bits(&curve),
        curve: Some(curve),
        format,
        public: PublicHalf::Ec {
            scalar: Secret::new(scalar),
        },
    })
}

/// PrivateKeyInfo ::= SEQUENCE { version, AlgorithmIdentifier, privateKey OCTET STRING, ... }
fn pkcs8(der: &[u8]) -> Result<ParsedKey, KeyProblem> {
    let bad = || KeyProblem::Malformed("PKCS#8");
    let items = sequence_items(der).ok_or_else(bad)?;
    let (alg, inner) = match items.as_slice() {
        [v, alg, k, ..] if v.tag == 0x02 && alg.tag == 0x30 && k.tag == 0x04 => (alg, k.value),
        _ => return Err(bad()),
    };
    let alg_items = sequence_items(alg.raw).ok_or_else(bad)?;
    let oid = alg_items
        .first()
        .filter(|t| t.tag == 0x06)
        .map(|t| oid_string(t.value))
        .ok_or_else(bad)?;
    match oid.as_str() {
        OID_RSA => rsa_pkcs1(inner, KeyFormat::Pkcs8),
        OID_EC => {
            let curve = alg_items
                .get(1)
                .filter(|t| t.tag == 0x06)
                .map(|t| oid_string(t.value));
            sec1(inner, curve, KeyFormat::Pkcs8)
        }
        OID_ED25519 => {
            // CurvePrivateKey ::= OCTET STRING (the 32-byte seed)
            let seed = read_tlv(inner)
                .filter(|(t, _)| t.tag == 0x04 && t.value.len() == 32)
                .map(|(t, _)| t.value)
                .ok_or(KeyProblem::Malformed("Ed25519 (PKCS#8)"))?;
            let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(seed)
                .map_err(|_| KeyProblem::Malformed("Ed25519 (PKCS#8)"))?;
            use ring::signature::KeyPair as _;
            Ok(ParsedKey {
                algorithm: "Ed25519".into(),
                bits: 256,
                curve: None,
                format: KeyFormat::Pkcs8,
                public: PublicHalf::Ed25519 {
                    public: pair.public_key().as_ref().to_vec(),
                },
            })
        }
        other => Ok(ParsedKey {
            algorithm: other.to_string(),
            bits: 0,
            curve: None,
            format: KeyFormat::Pkcs8,
            public: PublicHalf::Unknown,
        }),
    }
}

/// The same key as PKCS#8 DER, which is the only form rcgen (with ring) can sign with:
/// PKCS#1 and SEC1 keys are wrapped in a PrivateKeyInfo. `None` when the PEM holds no key or
/// a SEC1 key names no curve.
pub fn to_pkcs8_der(pem_bytes: &[u8]) -> Option<Secret<Vec<u8>>> {
    let key = pem::private_key(pem_bytes).ok()?;
    let (algorithm, inner) = match key.kind {
        SectionKind::PrivateKey => return Some(Secret::new(key.der)),
        SectionKind::RsaPrivateKey => {
            let mut alg = tlv(
                0x06,
                &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01],
            );
            alg.extend([0x05, 0x00]);
            (alg, key.der)
        }
        SectionKind::EcPrivateKey => {
            let items = sequence_items(&key.der)?;
            let curve = items
                .iter()
                .find(|t| t.tag == 0xA0)
                .and_then(|t| read_tlv(t.value))
                .filter(|(t, _)| t.tag == 0x06)?
                .0
                .raw
                .to_vec();
            let mut alg = tlv(0x06, &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]);
            alg.extend(curve);
            (alg, key.der)
        }
        _ => return None,
    };
    let mut body = vec![0x02, 0x01, 0x00];
    body.extend(tlv(0x30, &algorithm));
    body.extend(tlv(0x04, &inner));
    Some(Secret::new(tlv(0x30, &body)))
}

fn oid_string(content: &[u8]) -> String {
    x509_parser::der_parser::asn1_rs::Oid::new(content.into()).to_id_string()
}

impl ParsedKey {
    /// Whether this key's public half is the certificate's public key; `None` when the
    /// algorithm is one we cannot compare (e.g. a curve ring does not implement).
    pub fn matches_certificate(&self, cert_der: &[u8]) -> Option<bool> {
        let (_, cert) = x509_parser::parse_x509_certificate(cert_der).ok()?;
        let spki = cert.public_key();
        match &self.public {
            PublicHalf::Rsa { modulus, exponent } => match spki.parsed() {
                Ok(PublicKey::RSA(r)) => Some(
                    strip_zeros(r.modulus) == modulus.as_slice()
                        && strip_zeros(r.exponent) == exponent.as_slice(),
                ),
                _ => Some(false),
            },
            PublicHalf::Ec { scalar } => {
                let cert_curve = spki
                    .algorithm
                    .parameters
                    .as_ref()
                    .and_then(|p| p.as_oid().ok())
                    .map(|o| names::curve(&o.to_id_string()));
                if cert_curve != self.curve {
                    return Some(false);
                }
                let (alg, len): (_, usize) = match self.curve.as_deref() {
                    Some("prime256v1") => (&ring::signature::ECDSA_P256_SHA256_ASN1_SIGNING, 32),
                    Some("secp384r1") => (&ring::signature::ECDSA_P384_SHA384_ASN1_SIGNING, 48),
                    _ => return None,
                };
                // ring derives the point from the scalar and refuses a point that differs.
                let s = scalar.expose();
                let mut padded = vec![0u8; len.saturating_sub(s.len())];
                padded.extend_from_slice(s);
                let rng = ring::rand::SystemRandom::new();
                Some(
                    ring::signature::EcdsaKeyPair::from_private_key_and_public_key(
                        alg,
                        &padded,
                        spki.subject_public_key.data.as_ref(),
                        &rng,
                    )
                    .is_ok(),
                )
            }
            PublicHalf::Ed25519 { public } => {
                Some(spki.subject_public_key.data.as_ref() == public.as_slice())
            }
            PublicHalf::Unknown => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pki::mint::{KeyKind, generate_key};
    use crate::pki::testkit::*;

    fn leaf_for(key: &rcgen::KeyPair) -> Vec<u8> {
        let ca = ca("kubernetes");
        ca.issue(&client_spec("k", &[]), key).unwrap().cert_der
    }

    #[test]
    fn ec_and_ed25519_pkcs8() {
        for (kind, alg, curve, bits) in [
            (KeyKind::EcdsaP256, "EC", Some("prime256v1"), 256),
            (KeyKind::EcdsaP384, "EC", Some("secp384r1"), 384),
            (KeyKind::Ed25519, "Ed25519", None, 256),
        ] {
            let key = generate_key(kind).unwrap();
            let other = generate_key(kind).unwrap();
            let parsed = parse(key.serialize_pem().as_bytes()).unwrap();
            assert_eq!(parsed.algorithm, alg);
            assert_eq!(parsed.curve.as_deref(), curve);
            assert_eq!(parsed.bits, bits);
            assert_eq!(parsed.format, KeyFormat::Pkcs8);
            assert_eq!(parsed.matches_certificate(&leaf_for(&key)), Some(true));
            assert_eq!(parsed.matches_certificate(&leaf_for(&other)), Some(false));
        }
    }

    #[test]
    fn rsa_pkcs1_and_pkcs8() {
        use rsa::pkcs1::EncodeRsaPrivateKey as _;
        use rsa::pkcs8::{EncodePrivateKey as _, LineEnding};
        let rsa = rsa::RsaPrivateKey::new(&mut rand::thread_rng(), 2048).unwrap();
        let pkcs8 = rsa.to_pkcs8_pem(LineEnding::LF).unwrap();
        let signer = rcgen::KeyPair::from_pem(&pkcs8).unwrap();
        let cert = leaf_for(&signer);
        let p8 = parse(pkcs8.as_bytes()).unwrap();
        let p1 = parse(rsa.to_pkcs1_pem(LineEnding::LF).unwrap().as_bytes()).unwrap();
        assert_eq!((p8.format, p1.format), (KeyFormat::Pkcs8, KeyFormat::Pkcs1));
        for k in [&p8, &p1] {
            assert_eq!(
                (k.algorithm.as_str(), k.bits, k.curve.clone()),
                ("RSA", 2048, None)
            );
            assert_eq!(k.matches_certificate(&cert), Some(true));
        }
        let ec_cert = leaf_for(&generate_key(KeyKind::EcdsaP256).unwrap());
        assert_eq!(p1.matches_certificate(&ec_cert), Some(false));
    }

    #[test]
    fn sec1_with_and_without_the_public_key() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kubeconfigs/ecdsa.yaml");
        let text = std::fs::read_to_string(path).unwrap();
        let field = |f: &str| {
            let b64 = text
                .lines()
                .find_map(|l| l.trim().strip_prefix(f))
                .unwrap()
                .trim();
            crate::kubeconfig::resolve::decode_base64(b64).unwrap()
        };
        let key_pem = field("client-key-data:");
        let cert_pem = field("client-certificate-data:");
        let cert = crate::pki::pem::certificates(&cert_pem).unwrap().remove(0);
        let k = parse(&key_pem).unwrap();
        assert_eq!(k.format, KeyFormat::Sec1);
        assert_eq!(k.curve.as_deref(), Some("prime256v1"));
        assert_eq!(k.matches_certificate(&cert), Some(true));
        // Without [1] publicKey the match is still decided, by deriving the point.
        let der = crate::pki::pem::private_key(&key_pem).unwrap().der;
        let items = sequence_items(&der).unwrap();
        let body: Vec<u8> = items
            .iter()
            .filter(|t| t.tag != 0xA1)
            .flat_map(|t| t.raw.to_vec())
            .collect();
        let mut short = vec![0x30, body.len() as u8];
        short.extend(body);
        use base64::Engine as _;
        let pem = format!(
            "-----BEGIN EC PRIVATE KEY-----\n{}\n-----END EC PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(&short)
        );
        let k = parse(pem.as_bytes()).unwrap();
        assert_eq!(k.matches_certificate(&cert), Some(true));
        assert!(!format!("{k:?}").contains("PRIVATE"));
    }

    #[test]
    fn garbage_keys_are_named() {
        let junk = "-----BEGIN RSA PRIVATE KEY-----\nMAMCAQE=\n-----END RSA PRIVATE KEY-----\n";
        let e = parse(junk.as_bytes()).err().unwrap().to_string();
        assert_eq!(e, "is not a valid RSA (PKCS#1) private key");
        let e = parse(b"not a key").err().unwrap().to_string();
        assert!(e.starts_with("is not PEM"), "{e}");
    }
}
