//! What a binding hands the [`Pipeline`](super::Pipeline): the request's metadata, and a
//! [`Payload`] that reads and decodes the rest when the pipeline asks for it.

use std::borrow::Cow;
use std::future::Future;
use std::net::SocketAddr;

use crate::auth::AuthOperation;
use crate::core::Limits;
use crate::error::A2aError;
use crate::protocol::{A2aRequest, Operation, RequestHeaders};

/// What the transport carries besides the payload, known before the payload is read.
#[derive(Clone, Debug, Default)]
pub struct RequestMeta<'a> {
    /// The request's headers (gRPC: its text metadata).
    pub headers: RequestHeaders,
    /// The `A2A-Version` the client asked for (`None` when absent or empty, which means 0.3).
    pub protocol_version: Option<Cow<'static, str>>,
    /// The peer's address, when the transport knows it.
    pub peer: Option<SocketAddr>,
    /// The certificate (DER) the client presented over TLS, verified by the TLS layer.
    pub peer_certificate: Option<&'a [u8]>,
    /// The tenant, when the transport carries it outside the payload (a path prefix).
    pub tenant: Option<String>,
    /// What the request addresses, when the transport names it outside the payload (a route, a
    /// gRPC method); `None` when only the payload says (JSON-RPC): the pipeline then asks
    /// [`Payload::target`] after authentication.
    pub target: Option<Target>,
    /// The id of the last event the client received, when it reconnects to resume a task's
    /// stream after it (HTTP: the SSE `Last-Event-ID` header; gRPC: `last-event-id` metadata).
    pub last_event_id: Option<String>,
}

impl RequestMeta<'_> {
    /// Metadata with `headers`, the protocol version read from their `A2A-Version`.
    pub fn from_headers(headers: RequestHeaders) -> Self {
        let protocol_version = headers
            .get("a2a-version")
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(protocol_version);
        Self {
            headers,
            protocol_version,
            ..Self::default()
        }
    }
}

/// A requested protocol version as the request context keeps it (borrowed for the version
/// this crate speaks: no allocation for the usual request).
pub(crate) fn protocol_version(value: &str) -> Cow<'static, str> {
    match value {
        crate::PROTOCOL_VERSION => Cow::Borrowed(crate::PROTOCOL_VERSION),
        other => Cow::Owned(other.to_owned()),
    }
}

/// Where a SubscribeToTask resumes: the event id the client sent, as a sequence number. Only
/// a SubscribeToTask resumes; other operations ignore the id.
pub(crate) fn resume_after(
    target: &Target,
    last_event_id: Option<&str>,
) -> Result<Option<u64>, A2aError> {
    if target.operation() != Some(Operation::SubscribeToTask) {
        return Ok(None);
    }
    match last_event_id.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            A2aError::invalid_field(
                "Last-Event-ID",
                format!(
                    "{} is not an event id of this server (a sequence number)",
                    crate::error::quoted(v)
                ),
            )
        }),
    }
}

/// What a request addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A protocol operation, in v1.0.
    Operation(Operation),
    /// A protocol operation in a v0.3 dialect; `method` is the name the client used (a
    /// JSON-RPC method), for the error when the request asks for another version.
    V0_3 {
        /// The operation.
        operation: Operation,
        /// The v0.3 name of the method, as the client sent it.
        method: String,
    },
    /// A method added by an extension, by its JSON-RPC name.
    Method(String),
    /// A method added by an extension, by its HTTP+JSON path (`/extensions/…`).
    MethodAt(String),
}

impl Target {
    /// The operation as authentication and authorization see it.
    pub fn auth_operation(&self) -> AuthOperation<'_> {
        match self {
            Self::Operation(op) | Self::V0_3 { operation: op, .. } => AuthOperation::Core(*op),
            Self::Method(name) | Self::MethodAt(name) => AuthOperation::Method(name),
        }
    }

    /// The protocol operation, when the target is one.
    pub fn operation(&self) -> Option<Operation> {
        match self {
            Self::Operation(op) | Self::V0_3 { operation: op, .. } => Some(*op),
            Self::Method(_) | Self::MethodAt(_) => None,
        }
    }
}

/// A decoded payload.
// Moved once, from the payload into the pipeline's dispatch: a box would cost an allocation per
// request and save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Decoded {
    /// The params of a protocol operation.
    Operation(A2aRequest),
    /// The params of an extension's method.
    Method(serde_json::Value),
}

/// Reads and decodes a request's payload, in the two steps the pipeline asks for.
///
/// A binding implements it over its transport: the pipeline calls it only once the caller is
/// authenticated (nothing is read for a refused credential), and asks for the params only
/// once the version and the extensions are negotiated.
pub trait Payload {
    /// What the request addresses, read from the payload. Called after authentication, and only
    /// when [`RequestMeta::target`] is `None`.
    fn target(&mut self, limits: &Limits) -> impl Future<Output = Result<Target, A2aError>>;

    /// The params of the request for `target`, decoded. Called after negotiation.
    fn decode(
        &mut self,
        target: &Target,
        limits: &Limits,
    ) -> impl Future<Output = Result<Decoded, A2aError>>;
}
