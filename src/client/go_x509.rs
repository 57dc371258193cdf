//! What Go's crypto/x509 (kubectl's verifier) says about a server chain, worked out from the
//! certificates themselves. Go checks in its own order — the leaf's validity period, then the
//! host name, then the chain to the roots — and accepts things rustls refuses (a pinned leaf, a
//! version 1 CA), so kubectl's words cannot be translated from rustls's error: they are derived
//! here the way `Certificate.Verify` reaches them. Where the outcome depends on Go's release or
//! on checks modelled nowhere here (SHA-1 signatures, name constraints, system roots), the
//! answer is `Unsure` and nothing is claimed.

use std::net::IpAddr;

use x509_parser::extensions::GeneralName;
use x509_parser::oid_registry::{
    OID_KEY_TYPE_EC_PUBLIC_KEY, OID_PKCS1_RSAENCRYPTION, OID_SIG_ED25519,
};
use x509_parser::prelude::{FromDer, X509Certificate};

use crate::pki::cert::ip_addr;

/// Go's verdict on a server chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Accepts,
    /// The error text, e.g. `x509: certificate signed by unknown authority`.
    Rejects(String),
    /// Go's answer depends on something not modelled here.
    Unsure,
}

/// What Go needs to verify a server chain, as crypto/tls hands it over.
pub(crate) struct Inputs<'a> {
    /// As presented, leaf first; the rest become `Intermediates`.
    pub chain: &'a [Vec<u8>],
    /// The kubeconfig's CA bundle; `None` means the system roots.
    pub roots: Option<&'a [Vec<u8>]>,
    /// `tls-server-name`, else the URL's host: Go's `DNSName`.
    pub host: &'a str,
    /// Unix seconds.
    pub now: i64,
}

/// Go's `Certificate.Verify` on the presented leaf.
pub(crate) fn verify(i: &Inputs<'_>) -> Verdict {
    let parsed: Option<Vec<X509Certificate<'_>>> = i
        .chain
        .iter()
        .map(|d| X509Certificate::from_der(d).ok().map(|(_, c)| c))
        .collect();
    let Some(presented) = parsed.filter(|p| !p.is_empty()) else {
        return Verdict::Unsure;
    };
    let leaf = &presented[0];
    if let Some(e) = validity(leaf, i.now) {
        return Verdict::Rejects(e);
    }
    if let Some(e) = hostname_error(leaf, i.host) {
        return Verdict::Rejects(e);
    }
    let Some(root_ders) = i.roots else {
        return Verdict::Unsure;
    };
    if root_ders
        .iter()
        .any(|r| r.as_slice() == i.chain[0].as_slice())
    {
        return Verdict::Accepts;
    }
    let roots: Vec<X509Certificate<'_>> = dedup(root_ders)
        .into_iter()
        .filter_map(|d| X509Certificate::from_der(d).ok().map(|(_, c)| c))
        .collect();
    let intermediates: Vec<X509Certificate<'_>> = dedup(&i.chain[1..])
        .into_iter()
        .filter_map(|d| X509Certificate::from_der(d).ok().map(|(_, c)| c))
        .collect();
    let pools = Pools {
        roots: &roots,
        intermediates: &intermediates,
        now: i.now,
    };
    match pools.build(leaf, &mut vec![leaf]) {
        Step::Chains(chains) if chains.iter().any(|c| server_auth_allowed(c)) => Verdict::Accepts,
        Step::Chains(_) => {
            Verdict::Rejects("x509: certificate specifies an incompatible key usage".into())
        }
        Step::Failed(e) => Verdict::Rejects(e),
        Step::Unsure => Verdict::Unsure,
    }
}

/// A CertPool keeps one copy of each certificate.
fn dedup(ders: &[Vec<u8>]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = Vec::new();
    for d in ders {
        if !out.contains(&d.as_slice()) {
            out.push(d);
        }
    }
    out
}

fn rfc3339(secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| secs.to_string())
}

/// `isValid`'s period check. Go prints its own clock in the process's time zone; kexplore
/// prints UTC (the same instant; identical wording where kubectl runs with TZ=UTC).
fn validity(c: &X509Certificate<'_>, now: i64) -> Option<String> {
    let (nb, na) = (
        c.validity().not_before.timestamp(),
        c.validity().not_after.timestamp(),
    );
    let detail = if now < nb {
        format!("current time {} is before {}", rfc3339(now), rfc3339(nb))
    } else if now > na {
        format!("current time {} is after {}", rfc3339(now), rfc3339(na))
    } else {
        return None;
    };
    Some(format!(
        "x509: certificate has expired or is not yet valid: {detail}"
    ))
}

fn dns_names<'a>(c: &'a X509Certificate<'_>) -> Vec<&'a str> {
    sans(c)
        .into_iter()
        .filter_map(|g| match g {
            GeneralName::DNSName(d) => Some(*d),
            _ => None,
        })
        .collect()
}

fn ip_sans(c: &X509Certificate<'_>) -> Vec<IpAddr> {
    sans(c)
        .into_iter()
        .filter_map(|g| match g {
            GeneralName::IPAddress(b) => ip_addr(b),
            _ => None,
        })
        .collect()
}

fn sans<'a>(c: &'a X509Certificate<'_>) -> Vec<&'a GeneralName<'a>> {
    c.subject_alternative_name()
        .ok()
        .flatten()
        .map(|s| s.value.general_names.iter().collect())
        .unwrap_or_default()
}

/// Go's `net.IP.String`: an IPv4-mapped IPv6 address prints as IPv4.
fn go_ip(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    }
}

fn same_ip(a: &IpAddr, b: &IpAddr) -> bool {
    a.to_canonical() == b.to_canonical()
}

/// `VerifyHostname`, and `HostnameError.Error()` when it fails.
fn hostname_error(c: &X509Certificate<'_>, host: &str) -> Option<String> {
    let candidate_ip = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = candidate_ip.parse::<IpAddr>() {
        let ips = ip_sans(c);
        if ips.iter().any(|s| same_ip(s, &ip)) {
            return None;
        }
        return Some(hostname_words(c, candidate_ip, Some(&ips)));
    }
    let name = host.to_ascii_lowercase();
    let valid_name = valid_hostname(&name, false);
    let matched = dns_names(c).iter().any(|pattern| {
        if valid_name && valid_hostname(pattern, true) {
            match_hostnames(pattern, &name)
        } else {
            match_exactly(pattern, &name)
        }
    });
    (!matched).then(|| hostname_words(c, host, None))
}

fn hostname_words(c: &X509Certificate<'_>, host: &str, ips: Option<&[IpAddr]>) -> String {
    let has_san = c.subject_alternative_name().ok().flatten().is_some();
    let cn = c
        .subject()
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok())
        .unwrap_or("");
    if !has_san && match_hostnames(cn, host) {
        return "x509: certificate relies on legacy Common Name field, use SANs instead".into();
    }
    let valid = match ips {
        Some([]) => {
            return format!(
                "x509: cannot validate certificate for {host} because it doesn't contain any IP SANs"
            );
        }
        Some(ips) => ips.iter().map(go_ip).collect::<Vec<_>>().join(", "),
        None => dns_names(c).join(", "),
    };
    if valid.is_empty() {
        return format!("x509: certificate is not valid for any names, but wanted to match {host}");
    }
    format!("x509: certificate is valid for {valid}, not {host}")
}

fn valid_hostname(host: &str, is_pattern: bool) -> bool {
    let host = if is_pattern {
        host
    } else {
        host.strip_suffix('.').unwrap_or(host)
    };
    if host.is_empty() {
        return false;
    }
    host.split('.').enumerate().all(|(i, part)| {
        if part.is_empty() {
            return false;
        }
        if is_pattern && i == 0 && part == "*" {
            return true;
        }
        part.chars()
            .enumerate()
            .all(|(j, ch)| ch.is_ascii_alphanumeric() || (ch == '-' && j != 0) || ch == '_')
    })
}

fn match_exactly(a: &str, b: &str) -> bool {
    if a.is_empty() || a == "." || b.is_empty() || b == "." {
        return false;
    }
    a.eq_ignore_ascii_case(b)
}

fn match_hostnames(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if pattern.is_empty() || host.is_empty() {
        return false;
    }
    let (p, h): (Vec<&str>, Vec<&str>) = (pattern.split('.').collect(), host.split('.').collect());
    p.len() == h.len()
        && p.iter()
            .zip(&h)
            .enumerate()
            .all(|(i, (pp, hp))| (i == 0 && *pp == "*") || pp == hp)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Root,
    Intermediate,
}

enum Step<'a> {
    Chains(Vec<Vec<&'a X509Certificate<'a>>>),
    Failed(String),
    Unsure,
}

struct Pools<'a> {
    roots: &'a [X509Certificate<'a>],
    intermediates: &'a [X509Certificate<'a>],
    now: i64,
}

fn subject_key_id<'a>(c: &'a X509Certificate<'_>) -> &'a [u8] {
    c.iter_extensions()
        .find_map(|e| match e.parsed_extension() {
            x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(k) => Some(k.0),
            _ => None,
        })
        .unwrap_or(&[])
}

fn authority_key_id<'a>(c: &'a X509Certificate<'_>) -> &'a [u8] {
    c.iter_extensions()
        .find_map(|e| match e.parsed_extension() {
            x509_parser::extensions::ParsedExtension::AuthorityKeyIdentifier(a) => {
                a.key_identifier.as_ref().map(|k| k.0)
            }
            _ => None,
        })
        .unwrap_or(&[])
}

impl<'a> Pools<'a> {
    /// `findPotentialParents`: same-named certificates, those whose key id matches first.
    fn parents(
        &self,
        pool: &'a [X509Certificate<'a>],
        child: &X509Certificate<'_>,
    ) -> Vec<&'a X509Certificate<'a>> {
        let aki = authority_key_id(child);
        let mut ranked: Vec<(u8, &'a X509Certificate<'a>)> = pool
            .iter()
            .filter(|c| c.subject().as_raw() == child.issuer().as_raw())
            .map(|c| {
                let ski = subject_key_id(c);
                let rank = if ski == aki {
                    0
                } else if ski.is_empty() || aki.is_empty() {
                    1
                } else {
                    2
                };
                (rank, c)
            })
            .collect();
        ranked.sort_by_key(|(r, _)| *r);
        ranked.into_iter().map(|(_, c)| c).collect()
    }

    /// `buildChains`: the last candidate's error wins, a signature failure only hints.
    fn build(
        &self,
        cert: &'a X509Certificate<'a>,
        chain: &mut Vec<&'a X509Certificate<'a>>,
    ) -> Step<'a> {
        if chain.len() > 8 {
            return Step::Unsure;
        }
        let candidates: Vec<(Kind, &'a X509Certificate<'a>)> = self
            .parents(self.roots, cert)
            .into_iter()
            .map(|c| (Kind::Root, c))
            .chain(
                self.parents(self.intermediates, cert)
                    .into_iter()
                    .map(|c| (Kind::Intermediate, c)),
            )
            .collect();
        let mut chains = Vec::new();
        let mut hint: Option<(String, &X509Certificate<'_>)> = None;
        let mut err: Option<String> = None;
        for (kind, cand) in candidates {
            if already_in_chain(cand, chain) {
                continue;
            }
            match check_signature_from(cert, cand) {
                Sig::Ok => {}
                Sig::Fails(e) => {
                    hint.get_or_insert((e, cand));
                    continue;
                }
                Sig::Unsure => return Step::Unsure,
            }
            err = match self.is_valid(cand, kind, chain) {
                Ok(()) => None,
                Err(None) => return Step::Unsure,
                Err(Some(e)) => Some(e),
            };
            if err.is_some() {
                continue;
            }
            match kind {
                Kind::Root => {
                    let mut c = chain.clone();
                    c.push(cand);
                    chains.push(c);
                }
                Kind::Intermediate => {
                    chain.push(cand);
                    let below = self.build(cand, chain);
                    chain.pop();
                    match below {
                        Step::Chains(c) => chains.extend(c),
                        Step::Failed(e) => err = Some(e),
                        Step::Unsure => return Step::Unsure,
                    }
                }
            }
        }
        if !chains.is_empty() {
            return Step::Chains(chains);
        }
        if let Some(e) = err {
            return Step::Failed(e);
        }
        let mut words = String::from("x509: certificate signed by unknown authority");
        if let Some((e, c)) = hint {
            words.push_str(&format!(
                " (possibly because of {} while trying to verify candidate authority certificate {})",
                go_quote(&e),
                go_quote(&display_name(c))
            ));
        }
        Step::Failed(words)
    }

    /// `isValid` for a CA candidate. `Err(None)`: something this model does not check.
    fn is_valid(
        &self,
        c: &X509Certificate<'_>,
        kind: Kind,
        chain: &[&X509Certificate<'_>],
    ) -> Result<(), Option<String>> {
        if c.extensions().iter().any(|e| {
            e.critical
                && matches!(
                    e.parsed_extension(),
                    x509_parser::extensions::ParsedExtension::UnsupportedExtension { .. }
                )
        }) {
            return Err(None);
        }
        if let Some(e) = validity(c, self.now) {
            return Err(Some(e));
        }
        if c.name_constraints().ok().flatten().is_some() {
            return Err(None);
        }
        let bc = c.basic_constraints().ok().flatten().map(|b| b.value);
        if kind == Kind::Intermediate && !bc.is_some_and(|b| b.ca) {
            return Err(Some(
                "x509: certificate is not authorized to sign other certificates".into(),
            ));
        }
        if let Some(max) = bc.and_then(|b| b.path_len_constraint)
            && chain.len().saturating_sub(1) > max as usize
        {
            return Err(Some(
                "x509: too many intermediates for path length constraint".into(),
            ));
        }
        Ok(())
    }
}

/// `alreadyInChain`: same subject, same key and same SANs.
fn already_in_chain(c: &X509Certificate<'_>, chain: &[&X509Certificate<'_>]) -> bool {
    let san = |x: &X509Certificate<'_>| {
        x.iter_extensions()
            .find(|e| e.oid == x509_parser::oid_registry::OID_X509_EXT_SUBJECT_ALT_NAME)
            .map(|e| e.value.to_vec())
    };
    chain.iter().any(|k| {
        k.subject().as_raw() == c.subject().as_raw()
            && k.public_key().raw == c.public_key().raw
            && san(k) == san(c)
    })
}

/// Every EKU in the chain allows server authentication (or any use, or says nothing).
fn server_auth_allowed(chain: &[&X509Certificate<'_>]) -> bool {
    chain
        .iter()
        .all(|c| match c.extended_key_usage().ok().flatten() {
            None => true,
            Some(e) => e.value.any || e.value.server_auth,
        })
}

enum Sig {
    Ok,
    Fails(String),
    Unsure,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyType {
    Rsa,
    Ecdsa,
    Ed25519,
}

impl KeyType {
    fn algo(self) -> &'static str {
        match self {
            KeyType::Rsa => "RSA",
            KeyType::Ecdsa => "ECDSA",
            KeyType::Ed25519 => "Ed25519",
        }
    }
    /// Go's `%T` of the parsed public key.
    fn go_type(self) -> &'static str {
        match self {
            KeyType::Rsa => "*rsa.PublicKey",
            KeyType::Ecdsa => "*ecdsa.PublicKey",
            KeyType::Ed25519 => "ed25519.PublicKey",
        }
    }
    fn failure(self) -> &'static str {
        match self {
            KeyType::Rsa => "crypto/rsa: verification error",
            KeyType::Ecdsa => "x509: ECDSA verification failure",
            KeyType::Ed25519 => "x509: Ed25519 verification failure",
        }
    }
}

fn key_type(c: &X509Certificate<'_>) -> Option<KeyType> {
    let oid = &c.public_key().algorithm.algorithm;
    if *oid == OID_PKCS1_RSAENCRYPTION {
        Some(KeyType::Rsa)
    } else if *oid == OID_KEY_TYPE_EC_PUBLIC_KEY {
        Some(KeyType::Ecdsa)
    } else if *oid == OID_SIG_ED25519 {
        Some(KeyType::Ed25519)
    } else {
        None
    }
}

/// The key type a signature algorithm needs; `None` for SHA-1, MD5 and the unknown, whose
/// treatment changed across Go releases.
fn signature_key_type(c: &X509Certificate<'_>) -> Option<KeyType> {
    match c.signature_algorithm.algorithm.to_id_string().as_str() {
        "1.2.840.113549.1.1.11"
        | "1.2.840.113549.1.1.12"
        | "1.2.840.113549.1.1.13"
        | "1.2.840.113549.1.1.10" => Some(KeyType::Rsa),
        "1.2.840.10045.4.3.2" | "1.2.840.10045.4.3.3" | "1.2.840.10045.4.3.4" => {
            Some(KeyType::Ecdsa)
        }
        "1.3.101.112" => Some(KeyType::Ed25519),
        _ => None,
    }
}

/// `CheckSignatureFrom`.
fn check_signature_from(child: &X509Certificate<'_>, parent: &X509Certificate<'_>) -> Sig {
    let bc = parent.basic_constraints().ok().flatten().map(|b| b.value);
    let v3 = parent.version().0 == 2;
    let cannot_sign =
        "x509: invalid signature: parent certificate cannot sign this kind of certificate";
    if (v3 && bc.is_none()) || bc.is_some_and(|b| !b.ca) {
        return Sig::Fails(cannot_sign.into());
    }
    if let Some(ku) = parent.key_usage().ok().flatten()
        && ku.value.flags != 0
        && !ku.value.key_cert_sign()
    {
        return Sig::Fails(cannot_sign.into());
    }
    let (Some(wanted), Some(have)) = (signature_key_type(child), key_type(parent)) else {
        return Sig::Unsure;
    };
    if wanted != have {
        return Sig::Fails(format!(
            "x509: signature algorithm specifies an {} public key, but have public key of type {}",
            wanted.algo(),
            have.go_type()
        ));
    }
    match child.verify_signature(Some(parent.public_key())) {
        Ok(()) => Sig::Ok,
        Err(_) => Sig::Fails(have.failure().into()),
    }
}

/// The name Go gives a candidate CA in the hint: CN, else the first O, else the serial.
fn display_name(c: &X509Certificate<'_>) -> String {
    let first = |mut it: Box<
        dyn Iterator<Item = &x509_parser::x509::AttributeTypeAndValue<'_>> + '_,
    >| { it.next().and_then(|a| a.as_str().ok()).map(str::to_string) };
    first(Box::new(c.subject().iter_common_name()))
        .filter(|s| !s.is_empty())
        .or_else(|| first(Box::new(c.subject().iter_organization())))
        .unwrap_or_else(|| format!("serial:{}", c.serial))
}

/// Go's `%q`: double quotes, backslash escapes for quotes, backslashes and control characters.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "go_x509_tests.rs"]
mod tests;
