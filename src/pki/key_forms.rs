//! Private-key encodings that some tools read and others refuse. PKCS#8 v2 (RFC 5958's
//! OneAsymmetricKey: version 1, the public key appended) is what ring and rcgen write; Go reads
//! it, rustls reads it for Ed25519, but OpenSSL 3.0 — and so curl and `openssl s_client` —
//! answers "unsupported". The same key as PKCS#8 v1 (version 0, nothing after the private key)
//! is read by all of them.

use super::der::{read_tlv, sequence_items, tlv};

/// How to turn one PKCS#8 v2 key into v1: a new header, then the original algorithm
/// identifier and private-key octet string, copied byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V1Rewrite {
    /// `SEQUENCE` header and `INTEGER 0`.
    head: Vec<u8>,
    /// Where the algorithm identifier and the private key sit in the v2 DER.
    offset: usize,
    len: usize,
    /// The key's algorithm as the OID says (`Ed25519`, `EC`, `RSA`, or the dotted OID).
    pub algorithm: String,
}

const OID_ED25519: [u8; 3] = [0x2B, 0x65, 0x70];
const OID_EC: [u8; 7] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01];
const OID_RSA: [u8; 9] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01];

/// `Some` when `der` is a PKCS#8 v2 key.
pub fn pkcs8_v2(der: &[u8]) -> Option<V1Rewrite> {
    let items = sequence_items(der)?;
    let [version, alg, key, ..] = items.as_slice() else {
        return None;
    };
    if version.tag != 0x02 || version.value != [0x01] || alg.tag != 0x30 || key.tag != 0x04 {
        return None;
    }
    let offset = alg.raw.as_ptr() as usize - der.as_ptr() as usize;
    let len = alg.raw.len() + key.raw.len();
    let mut body = vec![0x02, 0x01, 0x00];
    body.extend(std::iter::repeat_n(0u8, len));
    let full = tlv(0x30, &body);
    let head = full[..full.len() - len].to_vec();
    let oid = read_tlv(alg.value)
        .filter(|(t, _)| t.tag == 0x06)
        .map(|(t, _)| t.value.to_vec())
        .unwrap_or_default();
    let algorithm = if oid == OID_ED25519 {
        "Ed25519".to_string()
    } else if oid == OID_EC {
        "EC".to_string()
    } else if oid == OID_RSA {
        "RSA".to_string()
    } else {
        x509_parser::der_parser::asn1_rs::Oid::new(oid.into()).to_id_string()
    };
    Some(V1Rewrite {
        head,
        offset,
        len,
        algorithm,
    })
}

impl V1Rewrite {
    /// The same key as PKCS#8 v1 DER.
    pub fn apply(&self, der: &[u8]) -> Option<Vec<u8>> {
        let mut out = self.head.clone();
        out.extend_from_slice(der.get(self.offset..self.offset + self.len)?);
        Some(out)
    }

    /// A shell command doing the rewrite with openssl alone (OpenSSL 3.0 cannot read the v2
    /// key, but `asn1parse` copies its bytes): `printf` writes the new header in octal escapes,
    /// which every POSIX shell's printf understands.
    pub fn command(&self, input: &str, output: &str) -> String {
        let head: String = self.head.iter().map(|b| format!("\\{b:03o}")).collect();
        format!(
            "{{ printf '{head}'; openssl asn1parse -in {input} -offset {} -length {} -noout -out /dev/stdout; }} | openssl pkey -inform DER -out {output}",
            self.offset, self.len
        )
    }

    /// Whether rustls reads this key as it is (ring takes v2 only for Ed25519).
    pub fn rustls_reads(&self) -> bool {
        self.algorithm == "Ed25519"
    }
}

/// A PKCS#8 PEM key in the v1 form every tool reads; other keys come back unchanged.
pub fn openssl_readable_pem(pem: &str) -> String {
    let Ok(key) = super::pem::private_key(pem.as_bytes()) else {
        return pem.to_string();
    };
    match pkcs8_v2(&key.der).and_then(|r| r.apply(&key.der)) {
        Some(v1) => pem_block("PRIVATE KEY", &v1),
        None => pem.to_string(),
    }
}

fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pki::mint::{KeyKind, generate_key};

    #[test]
    fn ring_ed25519_keys_are_v2_and_rewrite_to_the_same_key_in_v1() {
        let key = generate_key(KeyKind::Ed25519).unwrap();
        let v2 = key.serialize_der();
        let rewrite = pkcs8_v2(&v2).expect("ring writes Ed25519 as PKCS#8 v2");
        assert_eq!(rewrite.algorithm, "Ed25519");
        let v1 = rewrite.apply(&v2).unwrap();
        assert!(pkcs8_v2(&v1).is_none(), "the rewrite is v1");
        // The 16-byte v1 prefix every Ed25519 PKCS#8 v1 key starts with, then the seed.
        assert_eq!(
            v1[..16],
            [
                0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22,
                0x04, 0x20
            ]
        );
        let reread = rcgen::KeyPair::try_from(v1.as_slice()).expect("rcgen reads v1");
        assert_eq!(reread.public_key_raw(), key.public_key_raw());
    }

    #[test]
    fn v1_keys_and_other_blocks_are_left_alone() {
        let ec = generate_key(KeyKind::EcdsaP256).unwrap();
        assert!(pkcs8_v2(&ec.serialize_der()).is_none());
        let pem = ec.serialize_pem();
        assert_eq!(openssl_readable_pem(&pem), pem);
        assert_eq!(openssl_readable_pem("not a key"), "not a key");
    }
}
