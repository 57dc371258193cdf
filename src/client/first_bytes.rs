//! The first bytes a server sends, kept while the handshake reads them. When they are not a TLS
//! record they say what the port speaks instead, and Go tells the cases apart by them: a reply
//! starting `HTTP/` is "server gave HTTP response to HTTPS client", anything else "first record
//! does not look like a TLS handshake".

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How many bytes are kept: enough for an HTTP status line's start.
const KEEP: usize = 64;

/// A stream that copies the first `KEEP` bytes it reads into `seen`.
pub(crate) struct FirstBytes<S> {
    inner: S,
    pub(crate) seen: Arc<Mutex<Vec<u8>>>,
}

impl<S> FirstBytes<S> {
    pub(crate) fn new(inner: S) -> Self {
        FirstBytes {
            inner,
            seen: Arc::default(),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for FirstBytes<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled
            && let Ok(mut seen) = this.seen.lock()
        {
            let room = KEEP.saturating_sub(seen.len());
            let new = &buf.filled()[before..];
            seen.extend_from_slice(&new[..new.len().min(room)]);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FirstBytes<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
