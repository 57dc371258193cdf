//! Reading request bodies within MaxRequestBodyBytes, and draining the ones we will not use.

use http_body_util::BodyExt;
use hyper::body::{Buf, Bytes};

use super::decode::MAX_BODY;
use super::status::ApiError;

/// How much of an unwanted body we read and discard before answering: an HTTP/2 client
/// (curl) reports a stream error when the server answers before the upload is finished.
const DRAIN_CAP: usize = 64 * 1024 * 1024;

/// Read the body, up to MaxRequestBodyBytes; over that, drain the rest and answer 413.
pub async fn read_body<B>(body: B) -> Result<Bytes, ApiError>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut body = std::pin::pin!(body);
    let mut buf = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            ApiError::bad_request(format!("error reading request body: {}", e.into()))
        })?;
        if let Ok(mut data) = frame.into_data() {
            seen += data.remaining();
            while data.has_remaining() {
                let n = data.chunk().len();
                if seen <= MAX_BODY {
                    buf.extend_from_slice(data.chunk());
                }
                data.advance(n);
            }
            if seen > DRAIN_CAP {
                break;
            }
        }
    }
    if seen > MAX_BODY {
        return Err(ApiError::too_large(MAX_BODY));
    }
    Ok(Bytes::from(buf))
}

/// Discard a body we will not use (bounded).
pub async fn drain<B>(body: B)
where
    B: hyper::body::Body,
{
    let mut body = std::pin::pin!(body);
    let mut seen = 0usize;
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(d) = frame.into_data() {
            seen += d.remaining();
            if seen > DRAIN_CAP {
                break;
            }
        }
    }
}
