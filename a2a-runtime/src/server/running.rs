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
    /// The agents served (one, unless started by a
    /// [`MultiAgentServer`](super::MultiAgentServer)).
    pub(super) inners: Vec<web::Data<Inner>>,
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
        tracing::info!(grace = ?self.grace(), "shutting down");
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
        let grace = self.grace();
        tokio::select! {
            joined = &mut self.join => {
                let http = joined.map_err(std::io::Error::other);
                self.stop_grpc().await?;
                return http?;
            }
            () = tokio::time::sleep(grace) => {}
        }
        for inner in &self.inners {
            inner.over.cancel();
        }
        let tasks = self
            .inners
            .iter()
            .map(|inner| inner.handler.shutdown(inner.cancel_on_shutdown));
        futures::future::join_all(tasks).await;
        stopped.await;
        let http = (&mut self.join).await.map_err(std::io::Error::other);
        self.stop_grpc().await?;
        http?
    }

    /// The longest grace period of the agents served.
    fn grace(&self) -> std::time::Duration {
        self.inners
            .iter()
            .map(|inner| inner.shutdown_grace)
            .max()
            .unwrap_or_default()
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
        let flush = self.inner.shutdown_grace.as_secs() + 5;
        #[cfg(feature = "grpc")]
        let grpc = match &self.grpc {
            Some(addr) => {
                let pipelines = grpc::Pipelines::One(self.inner.pipeline.clone());
                let running = grpc::start(pipelines, addr, self.grpc_tls()).await?;
                add_grpc_interface(&self.inner, running.addr, "");
                Some(running)
            }
            None => None,
        };
        let server = run_http(
            config,
            flush,
            listener,
            self.workers,
            #[cfg(feature = "tls")]
            self.tls.as_ref().map(|(_, rustls)| &**rustls),
        );
        let server = match server {
            Ok(server) => server,
            Err(e) => {
                #[cfg(feature = "grpc")]
                if let Some(grpc) = grpc {
                    let _ = grpc.stop().await;
                }
                return Err(e);
            }
        };
        let handle = server.handle();
        let join = tokio::spawn(server);
        Ok(RunningServer {
            addr: local,
            scheme,
            handle,
            join,
            #[cfg(feature = "grpc")]
            grpc,
            inners: vec![self.inner.clone()],
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

    pub(super) fn set_base_url(&self, base: &str) {
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

/// The actix server of `config`: the grace period is run by `RunningServer` (streams get a
/// final event when it is over); actix's own timeout (`flush`, in seconds) only bounds the
/// flush of those last events. Signals are handled by `RunningServer::wait`. A client's FIN
/// does not end the response under way: a complete request followed by a half-close is
/// answered. A stream ends at the FIN itself (see `peer`): its subscriber is released without
/// waiting for a write to fail.
pub(super) fn run_http<F>(
    config: F,
    flush: u64,
    listener: std::net::TcpListener,
    workers: Option<usize>,
    #[cfg(feature = "tls")] tls: Option<&rustls::ServerConfig>,
) -> std::io::Result<actix_web::dev::Server>
where
    F: Fn(&mut web::ServiceConfig) + Clone + Send + 'static,
{
    let local = listener.local_addr()?;
    #[cfg(feature = "tls")]
    let scheme = if tls.is_some() { "https" } else { "http" };
    #[cfg(not(feature = "tls"))]
    let scheme = "http";
    let server =
        actix_web::HttpServer::new(move || actix_web::App::new().configure(config.clone()))
            .on_connect(on_connect)
            .h1_allow_half_closed(true)
            .disable_signals()
            .shutdown_timeout(flush);
    #[cfg(feature = "tls")]
    let mut server = match tls {
        Some(rustls) => server.listen_rustls_0_23(listener, rustls.clone())?,
        None => server.listen(listener)?,
    };
    #[cfg(not(feature = "tls"))]
    let mut server = server.listen(listener)?;
    if let Some(n) = workers {
        server = server.workers(n);
    }
    let server = server.run();
    tracing::info!(target: "a2a::server", "listening on {scheme}://{local}");
    Ok(server)
}

/// Adds the gRPC listener's address to the card's interfaces (for the agent addressed by
/// `tenant`; empty: the only agent).
#[cfg(feature = "grpc")]
pub(super) fn add_grpc_interface(inner: &Inner, addr: SocketAddr, tenant: &str) {
    let doc = inner.card();
    let card = grpc::with_grpc_interface_for(doc.card.clone(), &addr.to_string(), tenant);
    let card = inner.urls.sign(card);
    if let Ok(mut slot) = inner.card.write() {
        *slot = Arc::new(doc.replaced(card));
    }
}
