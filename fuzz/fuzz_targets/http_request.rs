//! Any bytes as one HTTP request to the embedded API server, handled exactly as a connection's
//! request would be (`chain::handle`: authentication, authorization, admission, validation,
//! storage, response) but without sockets. The input is HTTP/1-like text so the corpus can be
//! seeded with real requests and mutated meaningfully:
//!
//! ```text
//! METHOD /path?query
//! Header-Name: value
//! ...
//!
//! body bytes
//! ```
//!
//! Tokens `admin-token` (system:masters) and `jane-token` (developers) are accepted. A streaming
//! answer (watch) is read for at most 20 ms. Every answer must be a response, never a panic.
#![no_main]

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request};
use kexplore::apiserver::filters::chain;
use kexplore::apiserver::request::context::Api;
use kexplore::apiserver::filters::authn::TokenFile;
use kexplore::apiserver::controllers::bootstrap;
use kexplore::apiserver::transport::tls::ConnInfo;
use libfuzzer_sys::fuzz_target;

const TOKENS: &str = "admin-token,kexplore-admin,1,system:masters\njane-token,jane,2,developers\n";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    })
}

fn split_once<'a>(data: &'a [u8], sep: &[u8]) -> (&'a [u8], &'a [u8]) {
    match data.windows(sep.len()).position(|w| w == sep) {
        Some(i) => (&data[..i], &data[i + sep.len()..]),
        None => (data, &[]),
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 256 * 1024 {
        return;
    }
    let (head, body) = split_once(data, b"\n\n");
    let mut lines = head.split(|&b| b == b'\n');
    let Some(first) = lines.next() else { return };
    let (method, uri) = split_once(first, b" ");
    let Ok(method) = Method::from_bytes(method) else {
        return;
    };
    let Ok(uri) = std::str::from_utf8(uri) else {
        return;
    };
    let mut b = Request::builder().method(method).uri(uri);
    for line in lines {
        let (name, value) = split_once(line, b":");
        let value = value.strip_prefix(b" ").unwrap_or(value);
        let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name),
            hyper::header::HeaderValue::from_bytes(value),
        ) else {
            continue;
        };
        b = b.header(name, value);
    }
    // What hyper would refuse before the handler sees it, the handler never sees.
    let Ok(req) = b.body(Full::new(Bytes::copy_from_slice(body))) else {
        return;
    };
    let Ok(tokens) = TokenFile::parse(Path::new("tokens.csv"), TOKENS) else {
        return;
    };
    let api = Arc::new(Api::new(tokens, None));
    bootstrap::system(&api);
    bootstrap::demo(&api);
    runtime().block_on(async {
        let resp = chain::handle(&api, &ConnInfo::default(), req).await;
        let _ = tokio::time::timeout(Duration::from_millis(20), resp.into_body().collect()).await;
    });
});
