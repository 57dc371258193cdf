//! Names as openssl prints them: distinguished names in RFC 2253 form
//! (`openssl x509 -noout -subject -nameopt RFC2253`) and the OID names `openssl x509 -text`
//! uses for signature algorithms, extended key usages and curves.
//!
//! openssl's RFC2253 option is: reverse the attribute order, `,` between RDNs and `+` inside a
//! multi-valued RDN, short attribute names (dotted OID when unknown), values converted to UTF-8
//! with `, + " \ < > ;` backslash-escaped, `#` escaped first, space escaped first and last,
//! control bytes and every byte above 0x7F as `\XX`, and unknown attributes or non-string
//! values dumped as `#` + hex of their DER.

use x509_parser::der_parser::asn1_rs::Tag;
use x509_parser::x509::X509Name;

/// openssl's short name for a DN attribute OID, if it has one we know.
fn attribute_short_name(oid: &str) -> Option<&'static str> {
    Some(match oid {
        "2.5.4.3" => "CN",
        "2.5.4.4" => "SN",
        "2.5.4.5" => "serialNumber",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.9" => "street",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "2.5.4.12" => "title",
        "2.5.4.13" => "description",
        "2.5.4.15" => "businessCategory",
        "2.5.4.17" => "postalCode",
        "2.5.4.41" => "name",
        "2.5.4.42" => "GN",
        "2.5.4.43" => "initials",
        "2.5.4.44" => "generationQualifier",
        "2.5.4.46" => "dnQualifier",
        "2.5.4.65" => "pseudonym",
        "2.5.4.97" => "organizationIdentifier",
        "1.2.840.113549.1.9.1" => "emailAddress",
        "1.2.840.113549.1.9.2" => "unstructuredName",
        "0.9.2342.19200300.100.1.1" => "UID",
        "0.9.2342.19200300.100.1.25" => "DC",
        "1.3.6.1.4.1.311.60.2.1.1" => "jurisdictionL",
        "1.3.6.1.4.1.311.60.2.1.2" => "jurisdictionST",
        "1.3.6.1.4.1.311.60.2.1.3" => "jurisdictionC",
        _ => return None,
    })
}

/// The code points of a string value, by its ASN.1 type; `None` for types openssl dumps as hex.
fn code_points(tag: Tag, data: &[u8]) -> Option<Vec<u32>> {
    match tag {
        Tag::Utf8String => std::str::from_utf8(data)
            .ok()
            .map(|s| s.chars().map(u32::from).collect()),
        // openssl reads these one byte per character (T61 as Latin-1).
        Tag::PrintableString
        | Tag::Ia5String
        | Tag::T61String
        | Tag::VisibleString
        | Tag::NumericString => Some(data.iter().map(|b| u32::from(*b)).collect()),
        Tag::BmpString if data.len().is_multiple_of(2) => Some(
            data.chunks(2)
                .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
                .collect(),
        ),
        Tag::UniversalString if data.len().is_multiple_of(4) => Some(
            data.chunks(4)
                .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        _ => None,
    }
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Escapes one value as openssl's `do_buf`/`do_esc_char` do with the RFC2253 flags.
fn escape_value(chars: &[u32]) -> String {
    let mut out = String::new();
    let n = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        // openssl marks "first" then overwrites it with "last", so a one-character value
        // only gets the trailing-position rule.
        let last = i + 1 == n;
        let first = i == 0 && !last;
        let mut utf8 = [0u8; 4];
        let bytes: &[u8] = match char::from_u32(c) {
            Some(ch) => ch.encode_utf8(&mut utf8).as_bytes(),
            None => {
                out.push_str(&format!("\\W{c:08X}"));
                continue;
            }
        };
        for &b in bytes {
            match b {
                b',' | b'+' | b'"' | b'\\' | b'<' | b'>' | b';' => {
                    out.push('\\');
                    out.push(b as char);
                }
                b'#' if first => out.push_str("\\#"),
                b' ' if first || last => out.push_str("\\ "),
                0..=0x1F | 0x7F..=0xFF => out.push_str(&format!("\\{b:02X}")),
                _ => out.push(b as char),
            }
        }
    }
    out
}

/// `openssl x509 -noout -subject -nameopt RFC2253`, without the `subject=` prefix.
pub fn rfc2253(name: &X509Name<'_>) -> String {
    // (rdn index, attribute) flattened in encoding order, then walked backwards as openssl does.
    let flat: Vec<(usize, String)> = name
        .iter_rdn()
        .enumerate()
        .flat_map(|(i, rdn)| {
            rdn.iter()
                .map(move |atv| (i, format_attribute(atv)))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut out = String::new();
    let mut prev: Option<usize> = None;
    for (rdn, text) in flat.iter().rev() {
        if let Some(p) = prev {
            out.push(if p == *rdn { '+' } else { ',' });
        }
        out.push_str(text);
        prev = Some(*rdn);
    }
    out
}

fn format_attribute(atv: &x509_parser::x509::AttributeTypeAndValue<'_>) -> String {
    let oid = atv.attr_type().to_id_string();
    let value = atv.attr_value();
    match attribute_short_name(&oid) {
        Some(sn) => match code_points(value.tag(), value.data) {
            Some(cp) => format!("{sn}={}", escape_value(&cp)),
            None => format!("{sn}=#{}", hex_upper(&any_der(value))),
        },
        None => format!("{oid}=#{}", hex_upper(&any_der(value))),
    }
}

/// The value's full DER (tag, length, content), for the `#hex` dump form.
fn any_der(value: &x509_parser::der_parser::asn1_rs::Any<'_>) -> Vec<u8> {
    use x509_parser::der_parser::asn1_rs::ToDer;
    value.to_der_vec().unwrap_or_else(|_| value.data.to_vec())
}

/// openssl's long name of a signature algorithm (`Signature Algorithm:` in `-text`).
pub fn signature_algorithm(oid: &str) -> String {
    match oid {
        "1.2.840.113549.1.1.4" => "md5WithRSAEncryption",
        "1.2.840.113549.1.1.5" => "sha1WithRSAEncryption",
        "1.2.840.113549.1.1.10" => "rsassaPss",
        "1.2.840.113549.1.1.11" => "sha256WithRSAEncryption",
        "1.2.840.113549.1.1.12" => "sha384WithRSAEncryption",
        "1.2.840.113549.1.1.13" => "sha512WithRSAEncryption",
        "1.2.840.113549.1.1.14" => "sha224WithRSAEncryption",
        "1.2.840.10045.4.1" => "ecdsa-with-SHA1",
        "1.2.840.10045.4.3.1" => "ecdsa-with-SHA224",
        "1.2.840.10045.4.3.2" => "ecdsa-with-SHA256",
        "1.2.840.10045.4.3.3" => "ecdsa-with-SHA384",
        "1.2.840.10045.4.3.4" => "ecdsa-with-SHA512",
        "1.3.101.112" => "ED25519",
        "1.3.101.113" => "ED448",
        "1.2.840.10040.4.3" => "dsaWithSHA1",
        "2.16.840.1.101.3.4.3.2" => "dsa_with_SHA256",
        other => return other.to_string(),
    }
    .to_string()
}

/// openssl's long name of an extended key usage (`X509v3 Extended Key Usage:` in `-text`).
pub fn extended_key_usage(oid: &str) -> String {
    match oid {
        "1.3.6.1.5.5.7.3.1" => "TLS Web Server Authentication",
        "1.3.6.1.5.5.7.3.2" => "TLS Web Client Authentication",
        "1.3.6.1.5.5.7.3.3" => "Code Signing",
        "1.3.6.1.5.5.7.3.4" => "E-mail Protection",
        "1.3.6.1.5.5.7.3.8" => "Time Stamping",
        "1.3.6.1.5.5.7.3.9" => "OCSP Signing",
        "2.5.29.37.0" => "Any Extended Key Usage",
        other => return other.to_string(),
    }
    .to_string()
}

/// openssl's curve name (`ASN1 OID:` in `-text`).
pub fn curve(oid: &str) -> String {
    match oid {
        "1.2.840.10045.3.1.7" => "prime256v1",
        "1.3.132.0.34" => "secp384r1",
        "1.3.132.0.35" => "secp521r1",
        "1.3.132.0.10" => "secp256k1",
        other => return other.to_string(),
    }
    .to_string()
}

/// Bits of a named curve, for the `bits` field of EC keys.
pub fn curve_bits(curve: &str) -> u32 {
    match curve {
        "prime256v1" | "secp256k1" => 256,
        "secp384r1" => 384,
        "secp521r1" => 521,
        _ => 0,
    }
}

/// `AA:BB:...`, the way openssl prints fingerprints and key identifiers.
pub fn colon_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        escape_value(&s.chars().map(u32::from).collect::<Vec<_>>())
    }

    #[test]
    fn escapes_like_openssl() {
        assert_eq!(esc("a,b+c\"d\\e<f>g;h"), "a\\,b\\+c\\\"d\\\\e\\<f\\>g\\;h");
        assert_eq!(esc("#x"), "\\#x");
        assert_eq!(esc("x#"), "x#");
        assert_eq!(esc(" a "), "\\ a\\ ");
        assert_eq!(esc("a b"), "a b");
        assert_eq!(esc("é"), "\\C3\\A9");
        assert_eq!(esc("system:masters"), "system:masters");
        assert_eq!(esc(""), "");
        assert_eq!(esc("\n"), "\\0A");
    }

    #[test]
    fn colon_hex_is_upper() {
        assert_eq!(colon_hex(&[0x0a, 0xff, 0]), "0A:FF:00");
    }
}
