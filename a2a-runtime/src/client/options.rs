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
    /// How a call whose connection drops reconnects: a stream resumes, a send whose answer
    /// was lost goes again with the same `messageId`.
    pub reconnect: Reconnect,
    /// The most a server can make the client hold.
    pub limits: ClientLimits,
    /// The keys (pinned, or a JWKS the caller names) a signed card is verified with when it
    /// is fetched; the outcome is [`A2aClient::card_signature`](super::A2aClient::card_signature).
    /// Without it, signatures are not checked ([`CardSignature::NotChecked`](super::CardSignature::NotChecked)).
    #[cfg(feature = "jwt")]
    pub card_verifier: Option<crate::auth::signing::CardVerifier>,
}

/// How a call survives a dropped connection (see [`ClientOptions::reconnect`]): a stream
/// resumes after its last event, a send whose answer was lost goes again.
///
/// When the connection breaks (reset, cut in the middle of an event, closed before a final
/// event, silent longer than the idle timeout) and the server gave the events ids (the SSE
/// `id:` field; on gRPC, the `a2a-first-event-id` metadata), the stream sends SubscribeToTask
/// for its task with `Last-Event-ID` set to the last event it yielded, and goes on with the
/// events that follow: every event once, in order. It waits `initial_backoff` before the first
/// attempt, doubling up to `max_backoff`, and gives up after `max_attempts` attempts in a row
/// without an event: the stream then ends with the error of the last attempt.
///
/// A stream whose server gives no ids cannot resume: it ends with the error of the broken
/// connection, as with `Reconnect::never()`. An error the agent answered (an `event: error`,
/// a gRPC status with details) ends the stream without reconnecting.
///
/// A send whose answer was lost — a blocking SendMessage, or a SendStreamingMessage whose
/// connection broke before its first event (nothing names its task yet) — is sent again,
/// the same request with the same `messageId`, so a server that keeps sends exactly once
/// (ours: README "Repeated sends") answers with the task the first one started and the agent
/// runs once. The answer is lost when the connection is refused, reset or closed before the
/// answer, when the call's timeout runs out (the timeout holds for each attempt), when a
/// proxy answers HTTP 502, 503 or 504 without an A2A error, and on a gRPC `UNAVAILABLE`
/// without details. An answer of the server (an A2A error, any other HTTP status) is never
/// sent again, nor a message without a `messageId` (every [`MessageInput`](super::MessageInput)
/// has one, fixed before the first attempt). The waits and the limit are the ones above:
/// `max_attempts` sends after the first, the last one's error when all are lost.
///
/// ```
/// use std::time::Duration;
/// use a2a_runtime::client::{ClientOptions, Reconnect};
///
/// let options = ClientOptions {
///     reconnect: Reconnect {
///         max_attempts: 10,
///         initial_backoff: Duration::from_millis(50),
///         max_backoff: Duration::from_secs(2),
///     },
///     ..ClientOptions::default()
/// };
/// assert_eq!(Reconnect::never().max_attempts, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reconnect {
    /// Attempts in a row without an event before the stream gives up (0: never reconnect).
    pub max_attempts: u32,
    /// The wait before the first attempt.
    pub initial_backoff: Duration,
    /// The longest wait between attempts (the wait doubles from `initial_backoff`).
    pub max_backoff: Duration,
}

impl Reconnect {
    /// Never reconnect: a dropped connection ends the stream with its error.
    pub fn never() -> Self {
        Self {
            max_attempts: 0,
            ..Self::default()
        }
    }

    /// The wait before attempt `n` (from 1).
    pub(crate) fn backoff(&self, n: u32) -> Duration {
        let factor = 1u32
            .checked_shl(n.saturating_sub(1).min(16))
            .unwrap_or(u32::MAX);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

impl Default for Reconnect {
    /// 5 attempts, waiting 100 ms, 200 ms, 400 ms, 800 ms, 1.6 s (at most 5 s).
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

/// The most a server can make the client hold (see [`ClientOptions::limits`]); past a limit
/// the call fails with [`ClientError::TooLarge`](super::ClientError::TooLarge).
///
/// ```
/// use a2a_runtime::client::{ClientLimits, ClientOptions};
///
/// let options = ClientOptions {
///     limits: ClientLimits {
///         max_response_bytes: 1 << 20,
///         ..ClientLimits::default()
///     },
///     ..ClientOptions::default()
/// };
/// # let _ = options;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientLimits {
    /// The largest answer body of a unary call or of the agent card, and the largest gRPC
    /// message, in bytes (default 16 MiB).
    pub max_response_bytes: usize,
    /// The longest line of an event stream, in bytes (default 4 MiB).
    pub max_sse_line_bytes: usize,
    /// The largest event of an event stream (its `data:` lines together), in bytes (default
    /// 8 MiB).
    pub max_sse_event_bytes: usize,
    /// How many decoded events a stream holds before its reader takes them (default 256):
    /// the rest of what the server sent waits undecoded, so a burst never piles up.
    pub max_buffered_events: usize,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            max_response_bytes: 16 * 1024 * 1024,
            max_sse_line_bytes: 4 * 1024 * 1024,
            max_sse_event_bytes: 8 * 1024 * 1024,
            max_buffered_events: 256,
        }
    }
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
    pub(crate) insecure: bool,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls")
            .field("root_ca", &self.root_ca_pem.is_some())
            .field("identity", &self.identity.as_ref().map(|_| "<redacted>"))
            .field("insecure", &self.insecure)
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

    /// Accepts any server certificate, expired, self-signed or for another host: the
    /// connection is encrypted but the server is not authenticated, so anyone on the path can
    /// read what is sent, credentials included. For development against a test server only.
    /// HTTP bindings only: a gRPC call over `https://` with it fails (`ClientError::Local`).
    pub fn danger_accept_invalid_certs(mut self, accept: bool) -> Self {
        self.insecure = accept;
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
            reconnect: Reconnect::default(),
            limits: ClientLimits::default(),
            #[cfg(feature = "jwt")]
            card_verifier: None,
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
    /// URIs of extensions to activate for this call, besides the client's.
    pub extensions: Vec<String>,
}

impl SendOptions {
    /// The options of the call itself (headers, timeout, extensions).
    pub(crate) fn call(&self) -> CallOptions {
        CallOptions {
            headers: self.headers.clone(),
            timeout: self.timeout,
            extensions: self.extensions.clone(),
        }
    }
}

/// Options of one call other than send: headers, timeout and extensions for this call only.
///
/// ```no_run
/// use std::time::Duration;
/// use a2a_runtime::client::CallOptions;
///
/// # async fn run(client: a2a_runtime::client::A2aClient) -> Result<(), a2a_runtime::client::ClientError> {
/// let opts = CallOptions::default()
///     .header("x-request-id", "r-1")
///     .timeout(Duration::from_secs(5))
///     .extension("https://example.com/ext/trace/v1");
/// let task = client.get_task_with("t-1", None, opts).await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    /// Extra headers for this call.
    pub headers: Vec<(String, String)>,
    /// Timeout for this call (default: the client's).
    pub timeout: Option<Duration>,
    /// URIs of extensions to activate for this call (sent in `A2A-Extensions` with the
    /// client's).
    pub extensions: Vec<String>,
}

impl CallOptions {
    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Activates the extension with this URI for the call.
    pub fn extension(mut self, uri: impl Into<String>) -> Self {
        self.extensions.push(uri.into());
        self
    }
}
