//! Reading request bodies within the body limit (kube-apiserver's `MaxRequestBodyBytes`).
//!
//! A body we will not use is not read to its end: one announced larger than the limit is
//! refused from its `Content-Length` alone, one that grows past the limit is refused the moment
//! it does, and one that comes with a request refused earlier (401, 403, 429) is left unread.
//! hyper then closes an HTTP/1.1 connection after the answer (the unread rest cannot be
//! skipped; `linger::Linger` keeps the close from turning into a reset that loses the answer)
//! and resets just the stream on HTTP/2. One courtesy on HTTP/2: curl (7.88 here) drops the
//! answer of a stream reset while it uploads ("Stream error in the HTTP/2 framing layer"), so
//! a body announced no larger than twice the limit is read and thrown away first, within
//! `COURTESY_TIME`.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::{Buf, Bytes, Frame};
use tokio::time::{Instant, Sleep};

use crate::apiserver::request::status::ApiError;

/// How long an HTTP/2 client gets to finish sending a body we will not use.
const COURTESY_TIME: Duration = Duration::from_secs(10);

/// The body's announced length, when the client sent a valid `Content-Length`.
pub fn announced_len(headers: &hyper::HeaderMap) -> Option<u64> {
    headers
        .get(hyper::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The request's body did not arrive within `--request-timeout`.
#[derive(Debug)]
pub struct BodyTimeout;

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("request body not received within the request timeout")
    }
}

impl std::error::Error for BodyTimeout {}

/// A request body that fails with `BodyTimeout` once its deadline passes: a client that sends
/// its headers and then trickles (or withholds) the body cannot hold a request open forever.
pub struct TimedBody<B> {
    inner: B,
    /// When the body must be complete; None: no deadline.
    until: Option<Instant>,
    /// Armed the first time the body is not ready, so a body that arrives with its head (and
    /// the empty body of a GET) never touches the timer.
    timer: Option<Pin<Box<Sleep>>>,
}

impl<B> TimedBody<B> {
    /// `timeout` zero: no deadline.
    pub fn new(inner: B, timeout: Duration) -> Self {
        TimedBody {
            inner,
            until: (!timeout.is_zero()).then(|| Instant::now() + timeout),
            timer: None,
        }
    }
}

impl<B> hyper::body::Body for TimedBody<B>
where
    B: hyper::body::Body + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, BoxError>>> {
        let me = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut me.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let Some(until) = me.until else {
            return Poll::Pending;
        };
        let timer = me
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(until)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// kube-apiserver's answer when a request outlives `--request-timeout`.
fn timed_out() -> ApiError {
    ApiError {
        code: 504,
        reason: "Timeout",
        message:
            "Timeout: request did not complete within requested timeout - context deadline exceeded"
                .into(),
        details: None,
        list_continue: None,
    }
}

/// How a request's body arrives: what it announced and over which protocol.
#[derive(Debug, Clone, Copy)]
pub struct Incoming {
    pub announced: Option<u64>,
    pub http2: bool,
    pub limit: usize,
}

impl Incoming {
    /// Whether a refused body is read and thrown away before the answer (see the module).
    fn courtesy(&self) -> bool {
        self.http2
            && self
                .announced
                .is_some_and(|n| n <= (self.limit as u64).saturating_mul(2))
    }
}

/// Get rid of a body we will not use: left unread, or on HTTP/2 drained as a courtesy.
pub async fn discard<B>(body: B, how: Incoming)
where
    B: hyper::body::Body,
{
    if !how.courtesy() {
        return;
    }
    let drain = async {
        let mut body = std::pin::pin!(body);
        while let Some(Ok(_)) = body.frame().await {}
    };
    let _ = tokio::time::timeout(COURTESY_TIME, drain).await;
}

/// Read the body, up to the limit; beyond it, 413 without reading the rest.
pub async fn read_body<B>(body: B, how: Incoming) -> Result<Bytes, ApiError>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let limit = how.limit;
    if how.announced.is_some_and(|n| n > limit as u64) {
        discard(body, how).await;
        return Err(ApiError::too_large(limit));
    }
    let mut body = std::pin::pin!(body);
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            let e: BoxError = e.into();
            if e.is::<BodyTimeout>() {
                timed_out()
            } else {
                ApiError::bad_request(format!("error reading request body: {e}"))
            }
        })?;
        if let Ok(mut data) = frame.into_data() {
            if buf.len() + data.remaining() > limit {
                return Err(ApiError::too_large(limit));
            }
            while data.has_remaining() {
                let n = data.chunk().len();
                buf.extend_from_slice(data.chunk());
                data.advance(n);
            }
        }
    }
    Ok(Bytes::from(buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::body::Frame;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A body of `chunks` frames of two bytes each, or one that must never be polled.
    struct Chunks(Option<usize>);

    impl hyper::body::Body for Chunks {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            let Some(left) = self.0 else {
                panic!("the body was read");
            };
            if left == 0 {
                return Poll::Ready(None);
            }
            self.0 = Some(left - 1);
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"xx")))))
        }
    }

    fn h1(announced: Option<u64>, limit: usize) -> Incoming {
        Incoming {
            announced,
            http2: false,
            limit,
        }
    }

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn within_the_limit_is_read_whole() {
        let b = run(read_body(Chunks(Some(2)), h1(Some(4), 4)));
        assert_eq!(b.ok().as_deref(), Some(&b"xxxx"[..]));
    }

    #[test]
    fn announced_over_the_limit_is_413_without_reading() {
        let e = run(read_body(Chunks(None), h1(Some(5), 4)))
            .err()
            .map(|e| e.code);
        assert_eq!(e, Some(413));
    }

    #[test]
    fn growing_past_the_limit_is_413() {
        let e = run(read_body(Chunks(Some(10)), h1(None, 5)))
            .err()
            .map(|e| e.message);
        assert_eq!(e.as_deref(), Some("Request entity too large: limit is 5"));
    }
}
