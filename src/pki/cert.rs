//! One DER certificate → `CertSummary`, every field formatted as openssl prints it.

use sha2::{Digest, Sha256};
use x509_parser::der_parser::asn1_rs::{FromDer, Oid};
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::X509Certificate;
use x509_parser::public_key::PublicKey;

use super::names::{self, colon_hex};
use super::report::{CertExtra, CertSummary, PublicKeyInfo, SubjectAltNames};

/// Parses one DER certificate. The error is a short phrase (the caller names the origin).
pub fn summarize(der: &[u8], origin: &str, index: usize) -> Result<CertSummary, String> {
    let (rest, cert) = x509_parser::parse_x509_certificate(der).map_err(|_| {
        "is not a valid X.509 certificate (the PEM block holds something else, or is truncated)"
            .to_string()
    })?;
    if !rest.is_empty() {
        return Err("has trailing bytes after the certificate".into());
    }
    let (serial, serial_decimal) = serial_strings(cert.raw_serial());
    let mut s = CertSummary {
        subject: names::rfc2253(cert.subject()),
        issuer: names::rfc2253(cert.issuer()),
        serial,
        serial_decimal,
        version: cert.version().0 + 1,
        not_before: rfc3339(cert.validity().not_before.timestamp()),
        not_after: rfc3339(cert.validity().not_after.timestamp()),
        signature_algorithm: names::signature_algorithm(
            &cert.signature_algorithm.algorithm.to_id_string(),
        ),
        public_key: public_key_info(&cert),
        is_ca: false,
        path_len: None,
        key_usage: Vec::new(),
        extended_key_usage: Vec::new(),
        san: SubjectAltNames::default(),
        subject_key_id: None,
        authority_key_id: None,
        sha256_fingerprint: colon_hex(&Sha256::digest(der)),
        self_signed: false,
        issued_by: None,
        extra: CertExtra {
            not_before_unix: cert.validity().not_before.timestamp(),
            not_after_unix: cert.validity().not_after.timestamp(),
            origin: origin.to_string(),
            index_in_bundle: index,
            common_name: cert
                .subject()
                .iter_common_name()
                .next()
                .and_then(|a| a.as_str().ok())
                .map(str::to_string),
            organizations: cert
                .subject()
                .iter_organization()
                .filter_map(|a| a.as_str().ok())
                .map(str::to_string)
                .collect(),
            der: der.to_vec(),
        },
    };
    read_extensions(&cert, &mut s);
    s.self_signed =
        cert.subject().as_raw() == cert.issuer().as_raw() && cert.verify_signature(None).is_ok();
    Ok(s)
}

/// openssl prints the serial's magnitude as upper-case hex, two digits per byte (so 0xC0318
/// is `0C0318`), with a `-` for negative serials; zero is `00`.
pub fn serial_strings(raw: &[u8]) -> (String, String) {
    let negative = raw.first().is_some_and(|b| b & 0x80 != 0);
    let magnitude = if negative {
        // Two's complement: invert and add one.
        let inverted: Vec<u8> = raw.iter().map(|b| !b).collect();
        num_bigint::BigUint::from_bytes_be(&inverted) + 1u32
    } else {
        num_bigint::BigUint::from_bytes_be(raw)
    };
    let sign = if negative { "-" } else { "" };
    let hex: String = magnitude
        .to_bytes_be()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    (format!("{sign}{hex}"), format!("{sign}{magnitude}"))
}

/// RFC 3339 UTC with a `Z`, e.g. `2026-11-21T22:53:34Z`.
pub fn rfc3339(unix: i64) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_else(|| unix.to_string())
}

fn public_key_info(cert: &X509Certificate<'_>) -> PublicKeyInfo {
    let spki = cert.public_key();
    let oid = spki.algorithm.algorithm.to_id_string();
    match (oid.as_str(), spki.parsed()) {
        (_, Ok(PublicKey::RSA(rsa))) => PublicKeyInfo {
            algorithm: "RSA".into(),
            bits: rsa.key_size() as u32,
            curve: None,
        },
        ("1.2.840.10045.2.1", _) => {
            let curve = spki
                .algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.as_oid().ok())
                .map(|o| names::curve(&o.to_id_string()))
                .unwrap_or_else(|| "unknown".into());
            PublicKeyInfo {
                algorithm: "EC".into(),
                bits: names::curve_bits(&curve),
                curve: Some(curve),
            }
        }
        ("1.3.101.112", _) => PublicKeyInfo {
            algorithm: "Ed25519".into(),
            bits: 256,
            curve: None,
        },
        ("1.3.101.113", _) => PublicKeyInfo {
            algorithm: "Ed448".into(),
            bits: 456,
            curve: None,
        },
        (other, _) => PublicKeyInfo {
            algorithm: other.to_string(),
            bits: (spki.subject_public_key.data.len() * 8) as u32,
            curve: None,
        },
    }
}

fn read_extensions(cert: &X509Certificate<'_>, s: &mut CertSummary) {
    for ext in cert.extensions() {
        match ext.parsed_extension() {
            ParsedExtension::BasicConstraints(bc) => {
                s.is_ca = bc.ca;
                s.path_len = bc.path_len_constraint;
            }
            ParsedExtension::KeyUsage(ku) => s.key_usage = key_usage_names(ku.flags),
            ParsedExtension::ExtendedKeyUsage(_) => {
                // x509-parser's struct loses the order; openssl prints encoding order.
                s.extended_key_usage = <Vec<Oid>>::from_der(ext.value)
                    .map(|(_, oids)| {
                        oids.iter()
                            .map(|o| names::extended_key_usage(&o.to_id_string()))
                            .collect()
                    })
                    .unwrap_or_default();
            }
            ParsedExtension::SubjectAlternativeName(san) => {
                for name in &san.general_names {
                    match name {
                        GeneralName::DNSName(d) => s.san.dns.push(d.to_string()),
                        GeneralName::RFC822Name(e) => s.san.email.push(e.to_string()),
                        GeneralName::URI(u) => s.san.uri.push(u.to_string()),
                        GeneralName::IPAddress(ip) => s.san.ip.push(ip_string(ip)),
                        _ => {}
                    }
                }
            }
            ParsedExtension::SubjectKeyIdentifier(k) => s.subject_key_id = Some(colon_hex(k.0)),
            ParsedExtension::AuthorityKeyIdentifier(a) => {
                s.authority_key_id = a.key_identifier.as_ref().map(|k| colon_hex(k.0));
            }
            _ => {}
        }
    }
}

/// openssl's names, in bit order (v3_bitst.c).
fn key_usage_names(flags: u16) -> Vec<String> {
    const NAMES: [&str; 9] = [
        "Digital Signature",
        "Non Repudiation",
        "Key Encipherment",
        "Data Encipherment",
        "Key Agreement",
        "Certificate Sign",
        "CRL Sign",
        "Encipher Only",
        "Decipher Only",
    ];
    NAMES
        .iter()
        .enumerate()
        .filter(|(bit, _)| flags & (1 << bit) != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// An iPAddress subjectAltName's bytes as an address (4 or 16 of them; None otherwise).
pub(crate) fn ip_addr(bytes: &[u8]) -> Option<std::net::IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(Into::into),
        16 => <[u8; 16]>::try_from(bytes).ok().map(Into::into),
        _ => None,
    }
}

fn ip_string(bytes: &[u8]) -> String {
    ip_addr(bytes).map_or_else(|| colon_hex(bytes), |ip| ip.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_like_openssl() {
        assert_eq!(serial_strings(&[0x0c, 0x03, 0x18]).0, "0C0318");
        assert_eq!(serial_strings(&[0x0c, 0x03, 0x18]).1, "787224");
        // DER adds a leading zero to keep the sign positive; openssl does not print it.
        assert_eq!(serial_strings(&[0x00, 0xc0, 0x31]).0, "C031");
        assert_eq!(serial_strings(&[0x00]).0, "00");
        assert_eq!(serial_strings(&[0xff]), ("-01".into(), "-1".into()));
        assert_eq!(serial_strings(&[0x10, 0x03]).1, "4099");
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_735_689_600), "2025-01-01T00:00:00Z");
    }

    #[test]
    fn key_usage_uses_openssl_words() {
        // digitalSignature | keyCertSign | cRLSign
        assert_eq!(
            key_usage_names(0b110_0001),
            ["Digital Signature", "Certificate Sign", "CRL Sign"]
        );
    }
}
