//! The string formats of apimachinery's `util/validation` that the networking kinds check
//! (subdomains, wildcard hosts, DNS-1035 labels, qualified names and label values, port
//! numbers, domain-prefixed paths, IPs and CIDRs as Go's "sloppy" parsers read them), each
//! answering upstream's messages so a cause reads as kube-apiserver writes it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::apiserver::request::status::Cause;

pub(crate) const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
pub(crate) const DNS1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

pub fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(is_dns1123_label)
}

/// Go's `validation.RegexError`: the message, its examples and the regular expression.
pub(crate) fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let shown: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        shown.join(" or ")
    )
}

fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `IsDNS1123Subdomain`.
pub(crate) fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len(253));
    }
    if !is_dns1123_subdomain(s) {
        out.push(DNS1123_SUBDOMAIN.to_string());
    }
    out
}

/// `IsDNS1123Label` (a namespace name).
pub(crate) fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len(63));
    }
    if !is_dns1123_label(s) {
        // Long enough already said; a valid subdomain that is no label can only have dots.
        out.push(if is_dns1123_subdomain(s) {
            "must not contain dots".to_string()
        } else {
            DNS1123_LABEL.to_string()
        });
    }
    out
}

/// `IsWildcardDNS1123Subdomain`: `*.` then a subdomain (RFC 1034 §4.3.3).
pub(crate) fn wildcard_dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len(253));
    }
    if !s.strip_prefix("*.").is_some_and(is_dns1123_subdomain) {
        out.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["*.example.com"],
        ));
    }
    out
}

/// `IsDNS1035Label` (a Service name: it must start with a letter).
pub(crate) fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len(63));
    }
    if !(is_dns1123_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())) {
        out.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    out
}

const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName`: a label key, an optional subdomain prefix and `/`, then a name.
pub(crate) fn qualified_name(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let mut out = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_string());
            } else {
                out.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        out.push(format!("name part {}", max_len(63)));
    }
    if !is_qualified_name_part(name) {
        out.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    out
}

/// `IsValidLabelValue`: empty, or a qualified name's name part.
pub(crate) fn label_value(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len(63));
    }
    if !s.is_empty() && !is_qualified_name_part(s) {
        out.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    out
}

/// `IsValidPortNum`.
pub(crate) fn port_num(n: i64) -> Vec<String> {
    if (1..=65535).contains(&n) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_string()]
    }
}

/// `content.IsPathSegmentName`: what a name in a URL path may not be.
pub(crate) fn path_segment_name(s: &str) -> Vec<String> {
    if s == "." || s == ".." {
        return vec![format!("may not be '{s}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| s.contains(**bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// `IsDomainPrefixedPath` (an IngressClass controller, `example.com/ingress-nginx`).
pub(crate) fn domain_prefixed_path(field: &str, s: &str, out: &mut Vec<Cause>) {
    use serde_json::json;
    if s.is_empty() {
        out.push(Cause::required(field, ""));
        return;
    }
    let Some((host, path)) = s
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        out.push(Cause::invalid(
            field,
            &json!(s),
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        ));
        return;
    };
    for m in dns1123_subdomain(host) {
        out.push(Cause::invalid(field, &json!(host), &m));
    }
    let path_ok = path
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&c));
    if !path_ok {
        out.push(Cause::invalid(
            field,
            &json!(path),
            &regex_error("Invalid path", r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+", &[]),
        ));
    }
}

/// A quantity as a number (e.g. `1.5Gi` → 1610612736, `250m` → 0.25); None when malformed.
pub fn parse_quantity(q: &str) -> Option<f64> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(q.len());
    let (num, suffix) = q.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        s if s.starts_with(['e', 'E']) => 10f64.powi(s[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * mult)
}

/// Go's `netutils.ParseIPSloppy`: IPv4 octets may carry leading zeros (`010.0.0.1`).
pub(crate) fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    if s.contains(':') {
        return s.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let octets: Vec<u8> = s
        .split('.')
        .map(|o| {
            (!o.is_empty() && o.len() <= 3 && o.bytes().all(|c| c.is_ascii_digit()))
                .then(|| o.parse::<u8>().ok())
                .flatten()
        })
        .collect::<Option<_>>()?;
    let [a, b, c, d] = octets.as_slice() else {
        return None;
    };
    Some(IpAddr::V4(Ipv4Addr::new(*a, *b, *c, *d)))
}

/// A CIDR as `netutils.ParseCIDRSloppy` reads it: its network address (host bits cleared)
/// and prefix length.
pub(crate) fn parse_cidr_sloppy(s: &str) -> Option<(IpAddr, u8)> {
    let (ip, len) = s.split_once('/')?;
    let ip = parse_ip_sloppy(ip)?;
    let bits = if ip.is_ipv4() { 32 } else { 128 };
    if len.is_empty() || len.len() > 3 || !len.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let len: u8 = len.parse().ok().filter(|l| *l <= bits)?;
    Some((mask(ip, len), len))
}

fn mask(ip: IpAddr, len: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let m = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & m))
        }
        IpAddr::V6(a) => {
            let m = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & m))
        }
    }
}

/// Whether `inner` lies in `outer` and is strictly smaller (an ipBlock's `except`).
pub(crate) fn strict_subset(outer: (IpAddr, u8), inner: (IpAddr, u8)) -> bool {
    outer.0.is_ipv4() == inner.0.is_ipv4() && outer.1 < inner.1 && mask(inner.0, outer.1) == outer.0
}

pub(crate) const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
pub(crate) const IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_apimachinerys() {
        assert!(dns1123_subdomain("foo.com").is_empty());
        assert!(wildcard_dns1123_subdomain("*.foo.com").is_empty());
        assert_eq!(
            wildcard_dns1123_subdomain("foo.*.com"),
            [
                "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        assert_eq!(
            dns1035_label("1web"),
            [
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert!(qualified_name("app.kubernetes.io/name").is_empty());
        assert_eq!(
            qualified_name("a/b/c")[0],
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        );
        assert_eq!(qualified_name("/x"), ["prefix part must be non-empty"]);
        assert!(label_value("").is_empty());
        assert_eq!(label_value("-x").len(), 1);
        assert_eq!(path_segment_name(".."), ["may not be '..'"]);
    }

    #[test]
    fn cidrs_parse_as_go_does() {
        let c = |s| parse_cidr_sloppy(s);
        assert_eq!(c("10.0.0.7/8"), Some(("10.0.0.0".parse().unwrap(), 8)));
        assert_eq!(c("010.0.0.0/8"), Some(("10.0.0.0".parse().unwrap(), 8)));
        assert_eq!(c("10.0.0.0/33"), None);
        assert_eq!(c("10.0.0.0"), None);
        assert_eq!(c("fd00::/64").map(|x| x.1), Some(64));
        let outer = c("10.0.0.0/8").unwrap();
        assert!(strict_subset(outer, c("10.1.0.0/16").unwrap()));
        assert!(!strict_subset(outer, c("10.0.0.0/8").unwrap()));
        assert!(!strict_subset(outer, c("11.0.0.0/16").unwrap()));
        assert!(!strict_subset(outer, c("fd00::/64").unwrap()));
        assert!(parse_ip_sloppy("1.2.3.4").is_some());
        assert!(parse_ip_sloppy("foo.com").is_none());
    }
}
