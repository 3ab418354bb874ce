//! [`RunningServer`]: a server started with [`A2aServer::start`](super::A2aServer::start), and
//! its graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use actix_web::web;

#[cfg(feature = "grpc")]
use super::grpc;
use super::{A2aServer, Inner};

/// A server started with [`A2aServer::start`](super::A2aServer::start).
pub struct RunningServer {
    /// The bound address.
    pub addr: SocketAddr,
    pub(super) scheme: &'static str,
    pub(super) handle: ServerHandle,
    pub(super) join: tokio::task::JoinHandle<std::io::Result<()>>,
    #[cfg(feature = "grpc")]
    pub(super) grpc: Option<grpc::RunningGrpc>,
    pub(super) inner: web::Data<Inner>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// `http://<addr>`, or `https://<addr>` with TLS.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// The bound address of the gRPC listener, when one was configured
    /// (`A2aServerBuilder::grpc_addr`).
    #[cfg(feature = "grpc")]
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.grpc.as_ref().map(|g| g.addr)
    }

    /// Waits until the server stops: on Ctrl-C or SIGTERM it shuts down gracefully (as
    /// [`RunningServer::stop`]); a stop through [`RunningServer::handle`] ends it at once. The
    /// gRPC listener stops with it.
    pub async fn wait(mut self) -> std::io::Result<()> {
        tokio::select! {
            joined = &mut self.join => {
                let http = joined.map_err(std::io::Error::other);
                self.stop_grpc().await?;
                return http?;
            }
            () = super::shutdown::signal() => {}
        }
        tracing::info!(grace = ?self.inner.shutdown_grace, "shutting down");
        self.shut_down().await
    }

    /// A handle that can stop the server from elsewhere.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Stops the server gracefully and waits for it: no new connections; open requests have
    /// the grace period ([`A2aServerBuilder::shutdown_grace`](super::A2aServerBuilder::shutdown_grace)) to finish, then open streams get
    /// a final `event: error` (Unavailable), waiting requests an Unavailable error, and the
    /// running tasks are canceled unless configured otherwise.
    pub async fn stop(self) {
        let _ = self.shut_down().await;
    }

    async fn shut_down(mut self) -> std::io::Result<()> {
        // Sends the command now; the future only waits for the workers to end.
        let stopped = self.handle.stop(true);
        tokio::select! {
            joined = &mut self.join => {
                let http = joined.map_err(std::io::Error::other);
                self.stop_grpc().await?;
                return http?;
            }
            () = tokio::time::sleep(self.inner.shutdown_grace) => {}
        }
        self.inner.over.cancel();
        self.inner
            .handler
            .shutdown(self.inner.cancel_on_shutdown)
            .await;
        stopped.await;
        let http = (&mut self.join).await.map_err(std::io::Error::other);
        self.stop_grpc().await?;
        http?
    }

    /// Stops the gRPC listener, when there is one.
    async fn stop_grpc(&mut self) -> std::io::Result<()> {
        #[cfg(feature = "grpc")]
        if let Some(grpc) = self.grpc.take() {
            grpc.stop().await?;
        }
        Ok(())
    }
}

impl A2aServer {
    /// Binds `addr` and starts serving in the background; returns the bound address and a
    /// handle to stop it. When the builder had no explicit URL, the card's interfaces use the
    /// bound address.
    pub async fn start(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<RunningServer> {
        let listener = std::net::TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        let scheme = self.scheme();
        if !self.inner.urls.is_fixed() {
            self.set_base_url(&format!("{scheme}://{local}"));
        }
        let config = self.config();
        // The grace period is run by `RunningServer` (streams get a final event when it is
        // over); actix's own timeout only bounds the flush of those last events. Signals are
        // handled by `RunningServer::wait`. A client's FIN does not end the response under
        // way: a complete request followed by a half-close is answered. A stream ends at the
        // FIN itself (see `peer`): its subscriber is released without waiting for a write to
        // fail.
        let flush = self.inner.shutdown_grace.as_secs() + 5;
        let server =
            actix_web::HttpServer::new(move || actix_web::App::new().configure(config.clone()))
                .on_connect(on_connect)
                .h1_allow_half_closed(true)
                .disable_signals()
                .shutdown_timeout(flush);
        #[cfg(feature = "tls")]
        let mut server = match &self.tls {
            Some((_, rustls)) => server.listen_rustls_0_23(listener, (**rustls).clone())?,
            None => server.listen(listener)?,
        };
        #[cfg(not(feature = "tls"))]
        let mut server = server.listen(listener)?;
        if let Some(n) = self.workers {
            server = server.workers(n);
        }
        #[cfg(feature = "grpc")]
        let grpc = match &self.grpc {
            Some(addr) => {
                let pipeline = self.inner.pipeline.clone();
                let running = grpc::start(pipeline, addr, self.grpc_tls()).await?;
                tracing::info!(target: "a2a::server", "gRPC listening on {}", running.addr);
                add_grpc_interface(&self.inner, running.addr);
                Some(running)
            }
            None => None,
        };
        let server = server.run();
        tracing::info!(target: "a2a::server", "listening on {scheme}://{local}");
        let handle = server.handle();
        let join = tokio::spawn(server);
        Ok(RunningServer {
            addr: local,
            scheme,
            handle,
            join,
            #[cfg(feature = "grpc")]
            grpc,
            inner: self.inner.clone(),
        })
    }

    /// Serves on `addr` until Ctrl-C or SIGTERM, then shuts down gracefully (see
    /// [`A2aServerBuilder::shutdown_grace`](super::A2aServerBuilder::shutdown_grace)).
    pub async fn serve(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        self.start(addr).await?.wait().await
    }

    /// `https` when the listeners speak TLS, else `http`.
    fn scheme(&self) -> &'static str {
        #[cfg(feature = "tls")]
        if self.tls.is_some() {
            return "https";
        }
        "http"
    }

    /// The TLS settings of the gRPC listener.
    #[cfg(feature = "grpc")]
    fn grpc_tls(&self) -> Option<&grpc::TlsSettings> {
        #[cfg(feature = "tls")]
        return self.tls.as_ref().map(|(settings, _)| settings);
        #[cfg(not(feature = "tls"))]
        None
    }

    fn set_base_url(&self, base: &str) {
        let doc = self.inner.urls.doc_at(base);
        if let Ok(mut slot) = self.inner.card.write() {
            *slot = Arc::new(doc);
        }
        self.inner.urls.fix();
    }
}

/// Sets TCP_NODELAY on each accepted connection: SSE events (and the headers sent before the
/// first one) are small writes that would otherwise wait for the client's delayed ACK (Nagle),
/// up to 40 ms each. On a TLS connection, also records the client's certificate.
fn on_connect(conn: &dyn std::any::Any, _ext: &mut actix_web::dev::Extensions) {
    if let Some(tcp) = conn.downcast_ref::<actix_web::rt::net::TcpStream>() {
        let _ = tcp.set_nodelay(true);
        super::peer::on_connect(tcp, _ext);
    }
    #[cfg(feature = "tls")]
    super::tls::on_tls_connect(conn, _ext);
}

/// Adds the gRPC listener's address to the card's interfaces.
#[cfg(feature = "grpc")]
fn add_grpc_interface(inner: &Inner, addr: SocketAddr) {
    let doc = inner.card();
    let card = grpc::with_grpc_interface(doc.card.clone(), &addr.to_string());
    let card = inner.urls.sign(card);
    if let Ok(mut slot) = inner.card.write() {
        *slot = Arc::new(doc.replaced(card));
    }
}
