//! Any bytes as certificate or key material, PEM or not: decoding must never panic.
#![no_main]

use kexplore::pki::{cert, key, pem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(ders) = pem::certificates(data) {
        for (i, der) in ders.iter().enumerate() {
            let _ = cert::summarize(der, "fuzz", i);
        }
    }
    // The DER path: bytes that are a certificate without PEM armour.
    let _ = cert::summarize(data, "fuzz", 0);
    if let Ok(k) = key::parse(data) {
        let _ = k.matches_certificate(data);
    }
    let _ = pem::private_key(data);
});
