//! Compact JWS with ES256 (RFC 7515/7518), the form kube-apiserver's service-account tokens take
//! when its `--service-account-signing-key-file` is an ECDSA P-256 key: `header.payload.signature`,
//! each base64url without padding, the signature the fixed 64-byte `r || s`. Everything read
//! here comes from a client, so every step is bounded and fallible, never a panic.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use serde_json::{Map, Value, json};
use sha2::Digest;

/// Far above any token this server issues (about 1 KiB); a longer bearer token is not ours.
pub(crate) const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The DER prefix of a P-256 SubjectPublicKeyInfo, before the 65-byte uncompressed point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JwtError {
    /// Not a compact JWS at all (the authenticator abstains, as go-jose's parse fails).
    #[error("{0}")]
    Malformed(String),
    /// A JWS with an algorithm other than ES256 (`none` included).
    #[error("unexpected signature algorithm {0:?}; expected [\"ES256\"]")]
    Algorithm(String),
    #[error("go-jose/go-jose: error in cryptographic primitive")]
    Signature,
}

/// An ES256 signing key and the key id kube-apiserver derives from its public half.
pub(crate) struct Es256Key {
    pair: EcdsaKeyPair,
    kid: String,
}

impl std::fmt::Debug for Es256Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Es256Key(kid {})", self.kid)
    }
}

impl Es256Key {
    /// From an unencrypted PKCS#8 document (what `pki::key::to_pkcs8_der` yields).
    pub(crate) fn from_pkcs8(der: &[u8]) -> Result<Self, String> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|e| format!("not an ECDSA P-256 private key: {e}"))?;
        // keyIDFromPublicKey: SHA-256 of the PKIX DER of the public key, base64url.
        let digest = sha2::Sha256::digest(spki_der(pair.public_key().as_ref()));
        let kid = URL_SAFE_NO_PAD.encode(digest);
        Ok(Es256Key { pair, kid })
    }

    #[cfg(test)]
    pub(crate) fn kid(&self) -> &str {
        &self.kid
    }

    /// Sign `claims` (a JSON object) as a compact JWS.
    pub(crate) fn sign(&self, claims: &Value) -> Result<String, String> {
        let header = json!({"alg": "ES256", "kid": self.kid});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| "failed to generate token: signing failed".to_string())?;
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref())))
    }

    /// The claims of a token this key signed, after checking its form, algorithm and signature.
    /// Time, issuer and audience are the caller's to judge.
    pub(crate) fn verify(&self, token: &str) -> Result<Map<String, Value>, JwtError> {
        let parts = Parts::split(token)?;
        let alg = parts
            .header
            .get("alg")
            .and_then(Value::as_str)
            .unwrap_or("");
        if alg != "ES256" {
            return Err(JwtError::Algorithm(alg.to_string()));
        }
        let sig = URL_SAFE_NO_PAD
            .decode(parts.signature)
            .map_err(|_| JwtError::Malformed("illegal base64 data in signature".into()))?;
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, self.pair.public_key().as_ref())
            .verify(parts.signing_input.as_bytes(), &sig)
            .map_err(|_| JwtError::Signature)?;
        Ok(parts.claims)
    }
}

fn spki_der(point: &[u8]) -> Vec<u8> {
    let mut der = P256_SPKI_PREFIX.to_vec();
    der.extend_from_slice(point);
    der
}

/// A compact JWS taken apart without verifying it.
pub(crate) struct Parts<'a> {
    pub(crate) header: Map<String, Value>,
    pub(crate) claims: Map<String, Value>,
    signing_input: &'a str,
    signature: &'a str,
}

impl<'a> Parts<'a> {
    pub(crate) fn split(token: &'a str) -> Result<Self, JwtError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(JwtError::Malformed("token too long".into()));
        }
        let mut it = token.split('.');
        let (Some(h), Some(p), Some(s), None) = (it.next(), it.next(), it.next(), it.next()) else {
            return Err(JwtError::Malformed(
                "compact JWS format must have three parts".into(),
            ));
        };
        let object = |part: &str, what: &str| -> Result<Map<String, Value>, JwtError> {
            let bytes = URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| JwtError::Malformed(format!("illegal base64 data in {what}")))?;
            match serde_json::from_slice(&bytes) {
                Ok(Value::Object(m)) => Ok(m),
                _ => Err(JwtError::Malformed(format!("{what} is not a JSON object"))),
            }
        };
        Ok(Parts {
            header: object(h, "header")?,
            claims: object(p, "payload")?,
            signing_input: &token[..h.len() + 1 + p.len()],
            signature: s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Es256Key {
        let doc =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new());
        match doc {
            Ok(d) => match Es256Key::from_pkcs8(d.as_ref()) {
                Ok(k) => k,
                Err(e) => panic!("{e}"),
            },
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_signed_token_verifies_and_carries_its_claims() {
        let k = key();
        let t = k.sign(&json!({"sub": "x", "n": 1})).unwrap_or_default();
        let claims = k.verify(&t).unwrap_or_default();
        assert_eq!(claims.get("sub"), Some(&json!("x")));
        let header = Parts::split(&t).map(|p| p.header).unwrap_or_default();
        assert_eq!(header.get("alg"), Some(&json!("ES256")));
        assert_eq!(header.get("kid"), Some(&json!(k.kid())));
    }

    #[test]
    fn tampering_another_key_and_alg_none_are_refused() {
        let (k, other) = (key(), key());
        let t = k.sign(&json!({"sub": "a"})).unwrap_or_default();
        let parts: Vec<&str> = t.split('.').collect();
        let forged = format!(
            "{}.{}.{}",
            parts[0],
            URL_SAFE_NO_PAD.encode(json!({"sub": "admin"}).to_string()),
            parts[2]
        );
        assert_eq!(k.verify(&forged), Err(JwtError::Signature));
        assert_eq!(other.verify(&t), Err(JwtError::Signature));
        let none = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
            parts[1]
        );
        assert_eq!(k.verify(&none), Err(JwtError::Algorithm("none".into())));
        let hs = format!(
            "{}.{}.{}",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256"}"#),
            parts[1],
            parts[2]
        );
        assert!(matches!(k.verify(&hs), Err(JwtError::Algorithm(_))));
    }

    #[test]
    fn hostile_input_is_an_error_never_a_panic() {
        let k = key();
        let long = "a".repeat(MAX_TOKEN_BYTES + 1);
        let cases = [
            "",
            ".",
            "..",
            "...",
            "a.b.c",
            "a.b.c.d",
            "!!!.###.$$$",
            "eyJ9.eyJ9.",
            "e30.e30.",
            "e30.e30.e30",
            "W10.e30.AA",
            "bnVsbA.e30.AA",
            "\u{1F600}.\u{1F600}.\u{1F600}",
            long.as_str(),
        ];
        for c in cases {
            assert!(k.verify(c).is_err(), "{c:?}");
        }
        // Every prefix and every single-byte change of a real token.
        let t = k.sign(&json!({"sub": "a"})).unwrap_or_default();
        for i in 0..t.len() {
            assert!(k.verify(&t[..i]).is_err());
            let mut b = t.clone().into_bytes();
            b[i] = if b[i] == b'A' { b'B' } else { b'A' };
            if let Ok(s) = String::from_utf8(b)
                && s != t
            {
                assert!(k.verify(&s).is_err(), "{s}");
            }
        }
    }
}
