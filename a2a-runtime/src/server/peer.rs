//! Whether a client has closed its side of the connection (its FIN), for the streams that
//! must end then.
//!
//! actix-http either drops a connection as soon as it reads the client's FIN, the response
//! under way included (`h1_allow_half_closed(false)`), or goes on until the response is
//! complete (`true`, which the server uses: a complete request followed by a half-close, as
//! `nc -N` and HTTP/1.0-style clients send it, is answered). An SSE response is never
//! complete, so a stream watches the connection itself: each connection's socket is
//! duplicated when it is accepted ([`on_connect`]), and a stream waits on its own duplicate
//! for the read side to reach end of file ([`PeerClosed`]), without reading any byte.

use std::task::{Context, Poll};

use actix_web::HttpRequest;

/// A duplicate of a connection's socket, kept in the connection's data.
struct PeerSocket(socket2::Socket);

/// Keeps a duplicate of `tcp`, the socket of a new connection, for [`PeerClosed::of`].
pub(crate) fn on_connect(
    tcp: &actix_web::rt::net::TcpStream,
    ext: &mut actix_web::dev::Extensions,
) {
    if let Ok(socket) = socket2::SockRef::from(tcp).try_clone() {
        ext.insert(PeerSocket(socket));
    }
}

/// Watches whether the client of a request has closed its side of the connection.
#[derive(Debug)]
pub(crate) struct PeerClosed(tokio::net::TcpStream);

/// What [`PeerClosed::poll`] saw.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Peer {
    /// The client's FIN (or a reset) arrived.
    Closed,
    /// The client sent bytes the server has not read yet (a pipelined request): the watch
    /// cannot tell more, and a write that fails is what ends the stream then.
    Sending,
}

impl PeerClosed {
    /// A watch on the connection of `req` (none when its socket could not be duplicated).
    pub(crate) fn of(req: &HttpRequest) -> Option<Self> {
        let socket = req.conn_data::<PeerSocket>()?.0.try_clone().ok()?;
        tokio::net::TcpStream::from_std(socket.into())
            .ok()
            .map(Self)
    }

    /// Ready once the client closed or sent more; looks without reading (the bytes the client
    /// sends are the server's to read).
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<Peer> {
        let mut byte = [0u8; 1];
        let mut buf = tokio::io::ReadBuf::new(&mut byte);
        match self.0.poll_peek(cx, &mut buf) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(0) | Err(_)) => Poll::Ready(Peer::Closed),
            Poll::Ready(Ok(_)) => Poll::Ready(Peer::Sending),
        }
    }
}
