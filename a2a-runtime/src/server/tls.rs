//! TLS of the server's listeners (feature `tls`): [`TlsConfig`], given to
//! [`A2aServerBuilder::tls`](super::A2aServerBuilder::tls).

use std::sync::Arc;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Whether a client must present a certificate (with [`TlsConfig::client_ca`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientAuth {
    /// A client may connect without a certificate; one it presents must chain to the client
    /// CA. A request without one reaches the authenticators with no certificate (an
    /// [`MtlsAuthenticator`](crate::auth::MtlsAuthenticator) refuses it as Unauthenticated).
    #[default]
    Optional,
    /// The TLS handshake fails without a certificate chaining to the client CA.
    Required,
}

/// The TLS settings of the server's listeners: the server's certificate chain and key (PEM),
/// and optionally the CA bundle client certificates are verified against (mutual TLS).
///
/// The same settings serve the HTTP bindings and, with `grpc_addr`, the gRPC listener.
/// A certificate a client presents is verified by the TLS layer: one that does not chain to
/// the client CA fails the handshake, whether client authentication is required or optional.
///
/// ```no_run
/// use a2a_runtime::server::{ClientAuth, TlsConfig};
/// let tls = TlsConfig::new(std::fs::read("server.pem")?, std::fs::read("server.key")?)
///     .client_ca(std::fs::read("clients-ca.pem")?, ClientAuth::Required);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct TlsConfig {
    pub(crate) cert_chain_pem: Vec<u8>,
    pub(crate) key_pem: Vec<u8>,
    pub(crate) client_ca_pem: Option<Vec<u8>>,
    pub(crate) client_auth: ClientAuth,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("client_ca", &self.client_ca_pem.is_some())
            .field("client_auth", &self.client_auth)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// TLS with this certificate chain (PEM, the server's certificate first) and private key
    /// (PEM: PKCS#8, PKCS#1 or SEC1). Clients are not asked for a certificate.
    pub fn new(cert_chain_pem: impl Into<Vec<u8>>, key_pem: impl Into<Vec<u8>>) -> Self {
        Self {
            cert_chain_pem: cert_chain_pem.into(),
            key_pem: key_pem.into(),
            client_ca_pem: None,
            client_auth: ClientAuth::Optional,
        }
    }

    /// Asks clients for a certificate issued by one of the CAs in `ca_pem` (mutual TLS), `auth`
    /// saying whether one is required.
    pub fn client_ca(mut self, ca_pem: impl Into<Vec<u8>>, auth: ClientAuth) -> Self {
        self.client_ca_pem = Some(ca_pem.into());
        self.client_auth = auth;
        self
    }

    /// The rustls configuration of these settings, or what is wrong with them.
    pub(crate) fn server_config(&self) -> Result<rustls::ServerConfig, String> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let certs = pem_certs(&self.cert_chain_pem, "the server certificate chain")?;
        let key = PrivateKeyDer::from_pem_slice(&self.key_pem)
            .map_err(|e| format!("the server private key is not a usable PEM key: {e}"))?;
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS protocol versions: {e}"))?;
        let builder = match &self.client_ca_pem {
            None => builder.with_no_client_auth(),
            Some(pem) => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in pem_certs(pem, "the client CA bundle")? {
                    roots
                        .add(cert)
                        .map_err(|e| format!("the client CA bundle has an unusable CA: {e}"))?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                );
                let verifier = match self.client_auth {
                    ClientAuth::Optional => verifier.allow_unauthenticated(),
                    ClientAuth::Required => verifier,
                };
                let verifier = verifier
                    .build()
                    .map_err(|e| format!("the client CA bundle: {e}"))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        builder
            .with_single_cert(certs, key)
            .map_err(|e| format!("the server certificate and key do not make an identity: {e}"))
    }

    /// The same settings for the gRPC listener.
    #[cfg(feature = "grpc")]
    pub(crate) fn grpc_config(&self) -> tonic::transport::ServerTlsConfig {
        use tonic::transport::{Certificate, Identity, ServerTlsConfig};
        let mut config = ServerTlsConfig::new()
            .identity(Identity::from_pem(&self.cert_chain_pem, &self.key_pem));
        if let Some(ca) = &self.client_ca_pem {
            config = config
                .client_ca_root(Certificate::from_pem(ca))
                .client_auth_optional(self.client_auth == ClientAuth::Optional);
        }
        config
    }
}

/// The certificates of a PEM bundle (at least one).
fn pem_certs(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what} is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{what} holds no certificate"));
    }
    Ok(certs)
}

/// The verified certificate (DER) a client presented on this connection: connection data
/// of the actix requests, set when the connection is accepted.
#[derive(Clone, Debug)]
pub(crate) struct PeerCertificate(pub(crate) Arc<[u8]>);

/// Records the client's certificate of a TLS connection (and sets TCP_NODELAY, as on plain
/// connections).
pub(crate) fn on_tls_connect(conn: &dyn std::any::Any, ext: &mut actix_web::dev::Extensions) {
    type Tls = actix_tls::accept::rustls_0_23::TlsStream<actix_web::rt::net::TcpStream>;
    if let Some(tls) = conn.downcast_ref::<Tls>() {
        let (tcp, session) = tls.get_ref();
        let _ = tcp.set_nodelay(true);
        super::peer::on_connect(tcp, ext);
        if let Some(leaf) = session.peer_certificates().and_then(|c| c.first()) {
            ext.insert(PeerCertificate(Arc::from(leaf.as_ref())));
        }
    }
}

/// The client certificate of `req`'s connection, when it presented one.
pub(crate) fn peer_certificate(req: &actix_web::HttpRequest) -> Option<&[u8]> {
    req.conn_data::<PeerCertificate>().map(|c| &c.0[..])
}
