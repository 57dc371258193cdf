//! Response bodies (whole or streamed for watch) and content negotiation: JSON, YAML, Table.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Bytes, Frame};
use tokio::sync::mpsc;

/// A response body: a whole buffer, or a stream of chunks (watch), flushed as they come.
pub enum ApiBody {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
    /// A body that holds something until it is sent or dropped (a watch slot, the connection's
    /// in-flight mark) and may be ended early (a watch at server shutdown).
    Held(Box<Held>),
}

pub struct Held {
    inner: ApiBody,
    _guards: Vec<Box<dyn Send + Sync>>,
    /// When this resolves the body ends cleanly, as a watch ends at its timeout.
    end: Option<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>,
}

impl ApiBody {
    pub fn full(b: impl Into<Bytes>) -> Self {
        ApiBody::Full(Some(b.into()))
    }
    pub fn empty() -> Self {
        ApiBody::Full(None)
    }

    fn into_held(self) -> Box<Held> {
        match self {
            ApiBody::Held(h) => h,
            inner => Box::new(Held {
                inner,
                _guards: Vec::new(),
                end: None,
            }),
        }
    }

    /// Keep `guard` alive for as long as this body is.
    pub fn hold(self, guard: impl Send + Sync + 'static) -> Self {
        let mut h = self.into_held();
        h._guards.push(Box::new(guard));
        ApiBody::Held(h)
    }

    /// End a streamed body cleanly once `end` resolves; a whole body is unaffected.
    pub fn end_when(self, end: impl Future<Output = ()> + Send + Sync + 'static) -> Self {
        if !self.is_stream() {
            return self;
        }
        let mut h = self.into_held();
        h.end = Some(Box::pin(end));
        ApiBody::Held(h)
    }

    pub fn is_stream(&self) -> bool {
        match self {
            ApiBody::Full(_) => false,
            ApiBody::Stream(_) => true,
            ApiBody::Held(h) => h.inner.is_stream(),
        }
    }
}

impl hyper::body::Body for ApiBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ApiBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ApiBody::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            ApiBody::Held(h) => {
                if let Some(end) = h.end.as_mut()
                    && end.as_mut().poll(cx).is_ready()
                {
                    h.inner = ApiBody::empty();
                    h.end = None;
                }
                Pin::new(&mut h.inner).poll_frame(cx)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ApiBody::Held(h) => h.inner.is_end_stream(),
            other => matches!(other, ApiBody::Full(None)),
        }
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            ApiBody::Full(Some(b)) => hyper::body::SizeHint::with_exact(b.len() as u64),
            ApiBody::Full(None) => hyper::body::SizeHint::with_exact(0),
            ApiBody::Stream(_) => hyper::body::SizeHint::default(),
            ApiBody::Held(h) => h.inner.size_hint(),
        }
    }
}

/// What the client asked to get back (from `Accept`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
    /// `application/json;as=Table;v=v1;g=meta.k8s.io` (or v1beta1).
    Table {
        v1beta1: bool,
    },
}

/// Pick the first acceptable media type in the client's order. None → 406.
/// Protobuf is accepted only alongside JSON: we answer JSON, which kubectl takes.
pub fn negotiate(accept: Option<&str>, allow_table: bool) -> Option<Format> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Some(Format::Json);
    };
    for item in accept.split(',') {
        let mut parts = item.split(';').map(str::trim);
        let mt = parts.next().unwrap_or_default().to_ascii_lowercase();
        let params: Vec<(String, String)> = parts
            .filter_map(|p| {
                p.split_once('=')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            })
            .collect();
        let param = |k: &str| {
            params
                .iter()
                .find(|(pk, _)| pk == k)
                .map(|(_, v)| v.as_str())
        };
        match mt.as_str() {
            "application/json" => match param("as") {
                None => return Some(Format::Json),
                Some("Table") if allow_table && param("g") == Some("meta.k8s.io") => {
                    return Some(Format::Table {
                        v1beta1: param("v") == Some("v1beta1"),
                    });
                }
                _ => continue,
            },
            "application/yaml" => {
                if param("as").is_none() {
                    return Some(Format::Yaml);
                }
            }
            "*/*" | "application/*" => return Some(Format::Json),
            _ => continue,
        }
    }
    None
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Yaml => "application/yaml",
            Format::Table { v1beta1: false } => "application/json;as=Table;v=v1;g=meta.k8s.io",
            Format::Table { v1beta1: true } => "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        }
    }

    pub fn encode(self, v: &serde_json::Value) -> Bytes {
        match self {
            Format::Yaml => Bytes::from(serde_yaml::to_string(v).unwrap_or_default()),
            _ => {
                let mut out = serde_json::to_vec(v).unwrap_or_default();
                out.push(b'\n');
                Bytes::from(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            negotiate(Some(kubectl), true),
            Some(Format::Table { v1beta1: false })
        );
        assert_eq!(negotiate(Some(kubectl), false), Some(Format::Json));
        assert_eq!(
            negotiate(Some("application/yaml"), true),
            Some(Format::Yaml)
        );
        assert_eq!(
            negotiate(
                Some("application/vnd.kubernetes.protobuf,application/json"),
                true
            ),
            Some(Format::Json)
        );
        assert_eq!(negotiate(Some("text/html"), true), None);
        assert_eq!(negotiate(None, true), Some(Format::Json));
    }
}
