//! The `continue` token of a chunked list, as kube-apiserver's storage writes and reads it
//! (upstream `apiserver/pkg/storage/continue.go`): unpadded URL-safe base64 of
//! `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key>"}`, where `start` is the key after the
//! last one read, relative to the collection's key prefix. A client that decodes one sees what
//! it would see from a real cluster, and a bad one is refused with upstream's words.

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use crate::apiserver::request::status::ApiError;

const VERSION: &str = "meta.k8s.io/v1";
const NOT_VALID: &str = "continue key is not valid";

/// Go's `base64.RawURLEncoding` on decode: no padding, and bits after the last whole byte are
/// ignored rather than refused.
const RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone),
);

#[derive(serde::Serialize, serde::Deserialize)]
struct Token {
    // Go's json.Unmarshal leaves a missing field at its zero value; the checks below name it.
    #[serde(default)]
    v: String,
    #[serde(default)]
    rv: i64,
    #[serde(default)]
    start: String,
}

/// The token for a list that goes on at `key` (the last key read plus `"\0"`) at revision `rv`
/// (-1: at the latest revision, after a 410).
pub fn encode(rv: i64, key: &str, prefix: &str) -> String {
    let t = Token {
        v: VERSION.into(),
        rv,
        start: key.strip_prefix(prefix).unwrap_or(key).to_string(),
    };
    RAW_URL.encode(serde_json::to_vec(&t).unwrap_or_default())
}

/// The key a continued list starts from and the revision it reads; a token that is not one
/// is a 400 with upstream's message.
pub fn decode(token: &str, prefix: &str) -> Result<(String, i64), ApiError> {
    let refuse = |why: String| ApiError::bad_request(format!("invalid continue token: {why}"));
    let raw = go_raw_url_decode(token).map_err(|at| {
        refuse(format!(
            "{NOT_VALID}: illegal base64 data at input byte {at}"
        ))
    })?;
    let t: Token = serde_json::from_slice(&raw).map_err(|e| refuse(format!("{NOT_VALID}: {e}")))?;
    if t.v != VERSION {
        return Err(refuse(format!(
            "{NOT_VALID}: server does not recognize this encoded version {}",
            t.v
        )));
    }
    if t.rv == 0 {
        return Err(refuse(format!(
            "{NOT_VALID}: incorrect encoded start resourceVersion (version {VERSION})"
        )));
    }
    if t.start.is_empty() {
        return Err(refuse(format!(
            "{NOT_VALID}: encoded start key empty (version {VERSION})"
        )));
    }
    // A start key that would climb out of the collection (`../`, `//`) is refused, as
    // upstream's path.Clean comparison refuses it, so a token never ranges beyond `prefix`.
    let key = if t.start.starts_with('/') {
        t.start.clone()
    } else {
        format!("/{}", t.start)
    };
    if !is_clean(&key) {
        return Err(refuse(format!("{NOT_VALID}: {}", t.start)));
    }
    Ok((format!("{prefix}{}", &key[1..]), t.rv))
}

/// Whether Go's `path.Clean` leaves this rooted path as it is.
fn is_clean(key: &str) -> bool {
    key == "/"
        || key[1..]
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// Decodes as Go's `RawURLEncoding.DecodeString` does, failing at the byte offset Go reports:
/// the first byte outside the alphabet (CR and LF are skipped), or the last byte when one
/// character is left over.
fn go_raw_url_decode(s: &str) -> Result<Vec<u8>, usize> {
    let bytes = s.as_bytes();
    let mut kept = Vec::with_capacity(bytes.len());
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => kept.push(c),
            b'\r' | b'\n' => {}
            _ => return Err(i),
        }
    }
    let last = bytes.len().saturating_sub(1);
    if kept.len() % 4 == 1 {
        return Err(last);
    }
    RAW_URL.decode(&kept).map_err(|_| last)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "/registry/pods/default/";

    fn refused(token: &str) -> String {
        match decode(token, P) {
            Err(e) => {
                assert_eq!((e.code, e.reason), (400, "BadRequest"));
                e.message
            }
            Ok(k) => panic!("accepted: {k:?}"),
        }
    }

    #[test]
    fn a_token_names_the_next_key_relative_to_the_collection() {
        let tok = encode(42, "/registry/pods/default/web-1\u{0}", P);
        let raw = RAW_URL.decode(&tok).expect("base64");
        assert_eq!(
            String::from_utf8_lossy(&raw),
            r#"{"v":"meta.k8s.io/v1","rv":42,"start":"web-1\u0000"}"#
        );
        assert!(!tok.contains('='), "unpadded: {tok}");
        assert_eq!(
            decode(&tok, P).ok(),
            Some(("/registry/pods/default/web-1\u{0}".to_string(), 42))
        );
        // Read by another collection, the same start is a key of that collection.
        let (key, _) = decode(&tok, "/registry/pods/").expect("decodes");
        assert_eq!(key, "/registry/pods/web-1\u{0}");
    }

    #[test]
    fn bad_tokens_get_upstreams_words() {
        let b64 = |s: &str| RAW_URL.encode(s);
        for (token, said) in [
            (
                "abc!".to_string(),
                "continue key is not valid: illegal base64 data at input byte 3",
            ),
            (
                // Go's raw encoding has no padding: '=' is a byte outside the alphabet.
                format!("{}=", b64("{}")),
                "continue key is not valid: illegal base64 data at input byte 3",
            ),
            (
                "abcde".to_string(),
                "continue key is not valid: illegal base64 data at input byte 4",
            ),
            (
                b64(r#"{"v":"meta.k8s.io/v2","rv":5,"start":"a"}"#),
                "continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2",
            ),
            (
                b64(r#"{"v":"meta.k8s.io/v1","start":"a"}"#),
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            ),
            (
                b64(r#"{"v":"meta.k8s.io/v1","rv":5}"#),
                "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
            ),
            (
                b64(r#"{"v":"meta.k8s.io/v1","rv":5,"start":"../kube-system/x"}"#),
                "continue key is not valid: ../kube-system/x",
            ),
            (
                b64(r#"{"v":"meta.k8s.io/v1","rv":5,"start":"a//b"}"#),
                "continue key is not valid: a//b",
            ),
        ] {
            assert_eq!(
                refused(&token),
                format!("invalid continue token: {said}"),
                "{token}"
            );
        }
        assert!(
            refused(&b64("not json"))
                .starts_with("invalid continue token: continue key is not valid: "),
        );
    }

    #[test]
    fn decoding_is_as_lenient_as_gos() {
        // Line breaks are skipped, and stray bits after the last byte ignored ("e30" and "e31"
        // are both "{}").
        let lenient = ["e30", "e31", "e3\n0"];
        for t in lenient {
            assert_eq!(go_raw_url_decode(t).ok(), Some(b"{}".to_vec()), "{t}");
        }
        assert_eq!(
            decode(&encode(-1, "/registry/pods/default/b", P), P)
                .map(|t| t.1)
                .ok(),
            Some(-1)
        );
    }
}
