//! Client configuration: [`ClientOptions`], [`Auth`], [`RequestInterceptor`], per-call options.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::A2aError;
use crate::types::{Metadata, ProtocolBinding, SendMessageConfiguration};

/// What to do when a configured extension is not declared by the agent's card.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExtensionCheck {
    /// Do not compare with the card.
    Off,
    /// Log a warning (default).
    #[default]
    Warn,
    /// Refuse to build the client.
    Fail,
}

/// An outgoing HTTP request, as an interceptor sees it.
#[derive(Clone, Debug)]
pub struct OutgoingRequest {
    /// The A2A method (JSON-RPC name) being called.
    pub method: &'static str,
    /// The URL.
    pub url: String,
    /// Extra headers to send (add yours here).
    pub headers: Vec<(String, String)>,
}

/// Changes every outgoing request (custom authentication, tracing headers...).
pub trait RequestInterceptor: Send + Sync + fmt::Debug + 'static {
    /// Called before each request is sent; an error aborts the call.
    fn intercept(&self, request: &mut OutgoingRequest) -> Result<(), A2aError>;
}

/// How the client authenticates.
#[derive(Clone)]
pub enum Auth {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// An API key in a header.
    ApiKey {
        /// The header name (e.g. `X-API-Key`).
        header: String,
        /// The key.
        value: String,
    },
    /// Anything else.
    Interceptor(Arc<dyn RequestInterceptor>),
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            Self::ApiKey { header, .. } => write!(f, "ApiKey({header}: <redacted>)"),
            Self::Interceptor(i) => f.debug_tuple("Interceptor").field(i).finish(),
        }
    }
}

/// Options of an [`A2aClient`](super::A2aClient).
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Timeout of a unary call, and of a stream until its response headers arrive.
    pub timeout: Duration,
    /// Longest silence tolerated on an open stream (servers send keep-alives).
    pub stream_idle_timeout: Duration,
    /// Authentication.
    pub auth: Option<Auth>,
    /// The binding to prefer when the card offers several (default: the card's order).
    pub preferred_binding: Option<ProtocolBinding>,
    /// Where the card lives below the agent's base URL.
    pub card_path: String,
    /// Compare the configured extensions with the card.
    pub extension_check: ExtensionCheck,
    /// TLS settings: a custom trust root, a client certificate (mutual TLS). With settings, a
    /// GRPC interface given as `host:port` is dialed over TLS; without, over h2c (HTTPS URLs
    /// are verified against the system's roots).
    pub tls: Option<ClientTls>,
}

/// The client's TLS settings (see [`ClientOptions::tls`]).
///
/// ```no_run
/// use a2a_runtime::client::{ClientOptions, ClientTls};
/// let options = ClientOptions {
///     tls: Some(
///         ClientTls::new()
///             .root_ca(std::fs::read("ca.pem")?)
///             .identity(std::fs::read("client.pem")?, std::fs::read("client.key")?),
///     ),
///     ..ClientOptions::default()
/// };
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct ClientTls {
    pub(crate) root_ca_pem: Option<Vec<u8>>,
    pub(crate) identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls")
            .field("root_ca", &self.root_ca_pem.is_some())
            .field("identity", &self.identity.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl ClientTls {
    /// TLS trusting the system's roots, without a client certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Trusts only the CA certificates of this PEM bundle (instead of the system's roots).
    pub fn root_ca(mut self, ca_pem: impl Into<Vec<u8>>) -> Self {
        self.root_ca_pem = Some(ca_pem.into());
        self
    }

    /// Presents this certificate chain and private key (PEM) to servers that ask for one.
    pub fn identity(mut self, cert_pem: impl Into<Vec<u8>>, key_pem: impl Into<Vec<u8>>) -> Self {
        self.identity = Some((cert_pem.into(), key_pem.into()));
        self
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            timeout: Duration::from_secs(30),
            stream_idle_timeout: Duration::from_secs(90),
            auth: None,
            preferred_binding: None,
            card_path: "/.well-known/agent-card.json".into(),
            extension_check: ExtensionCheck::Warn,
            tls: None,
        }
    }
}

/// Options of one send or stream call.
#[derive(Clone, Debug, Default)]
pub struct SendOptions {
    /// Continue this task.
    pub task_id: Option<String>,
    /// In this context.
    pub context_id: Option<String>,
    /// The request configuration (history length, return immediately, push config...).
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata.
    pub metadata: Metadata,
    /// Shortcut for `configuration.historyLength`.
    pub history_length: Option<i32>,
    /// Extra headers for this call.
    pub headers: Vec<(String, String)>,
    /// Timeout for this call (default: the client's).
    pub timeout: Option<Duration>,
}

/// Options of calls other than send.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    /// Extra headers for this call.
    pub headers: Vec<(String, String)>,
    /// Timeout for this call (default: the client's).
    pub timeout: Option<Duration>,
}
