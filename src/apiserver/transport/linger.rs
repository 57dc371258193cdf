//! A TCP stream that closes like Go's server does when a request body was left unread: send
//! FIN, then read and discard what the client is still sending for a short while before the
//! socket is dropped. Closing a socket with unread data makes the kernel send RST, and a client
//! that receives RST may lose the answer (a 413) it has not read yet.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// How long a closed connection waits for the client to close before it is dropped.
const LINGER: Duration = Duration::from_millis(500);
/// How much of what the client still sends is read and thrown away meanwhile; past it the
/// client's writes just block until the socket is dropped.
const DISCARD: usize = 1024 * 1024;

pub struct Linger {
    tcp: TcpStream,
    state: State,
}

enum State {
    Open,
    /// FIN sent; discarding input until EOF, the deadline, or `DISCARD` bytes.
    Draining(Pin<Box<Sleep>>, usize),
    Closed,
}

impl Linger {
    pub fn new(tcp: TcpStream) -> Linger {
        Linger {
            tcp,
            state: State::Open,
        }
    }
}

impl AsyncRead for Linger {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Linger {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    // rustls hands over its queued TLS records as one vector: forwarding it makes one
    // writev of a whole HTTP/2 flight instead of a send() per 16 KiB record.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        loop {
            match &mut me.state {
                State::Open => {
                    ready!(Pin::new(&mut me.tcp).poll_shutdown(cx))?;
                    me.state = State::Draining(Box::pin(tokio::time::sleep(LINGER)), 0);
                }
                State::Draining(deadline, discarded) => {
                    if deadline.as_mut().poll(cx).is_ready() {
                        me.state = State::Closed;
                        continue;
                    }
                    if *discarded >= DISCARD {
                        return Poll::Pending;
                    }
                    let mut scratch = [0u8; 16 * 1024];
                    // A bounded amount per poll: a fast sender must not hold the worker.
                    for _ in 0..16 {
                        let mut buf = ReadBuf::new(&mut scratch);
                        match Pin::new(&mut me.tcp).poll_read(cx, &mut buf) {
                            Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                                *discarded += buf.filled().len();
                            }
                            Poll::Ready(_) => {
                                me.state = State::Closed;
                                return Poll::Ready(Ok(()));
                            }
                            Poll::Pending => return Poll::Pending,
                        }
                    }
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                State::Closed => return Poll::Ready(Ok(())),
            }
        }
    }
}
