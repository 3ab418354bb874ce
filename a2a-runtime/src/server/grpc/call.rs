//! What every gRPC call of the listener shares: the metadata, peer and certificate of a call
//! as the pipeline's request metadata, and the response metadata.

use std::net::SocketAddr;

use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Request, Status};

use crate::error::A2aError;
use crate::extension::Activated;
use crate::grpc::status::to_status;
use crate::grpc::{EXTENSIONS_KEY, VERSION_KEY};
use crate::protocol::RequestHeaders;
use crate::service::{RequestMeta, Target};

/// The metadata a client sends to resume a task's stream after the event it names (as the SSE
/// bindings' `Last-Event-ID` header).
const LAST_EVENT_ID_KEY: &str = "last-event-id";

/// The pipeline's request metadata from a call (binary `-bin` entries are skipped: A2A service
/// parameters are text).
pub(super) fn request_meta<'a>(call: &'a Call, target: Target) -> RequestMeta<'a> {
    let headers = call.meta.as_ref();
    let bytes = headers
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len())
        .sum();
    let mut copy = RequestHeaders::with_capacity(headers.len(), bytes);
    let mut version = None;
    for (name, value) in headers {
        if name.as_str().ends_with("-bin") {
            continue;
        }
        if version.is_none() && name.as_str() == VERSION_KEY {
            version = std::str::from_utf8(value.as_bytes())
                .ok()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(crate::service::protocol_version);
        }
        copy.push_received(name.as_str(), value.as_bytes());
    }
    RequestMeta {
        headers: copy,
        protocol_version: version,
        peer: call.peer,
        peer_certificate: call.certificate.as_deref(),
        tenant: None,
        target: Some(target),
        last_event_id: headers
            .get(LAST_EVENT_ID_KEY)
            .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
            .map(str::to_owned),
    }
}

/// The response metadata: `a2a-version`, and `a2a-extensions` with the activated URIs.
pub(super) fn response_metadata(meta: &mut MetadataMap, activated: &Activated) {
    meta.insert(
        VERSION_KEY,
        MetadataValue::from_static(crate::PROTOCOL_VERSION),
    );
    if !activated.is_empty() {
        let value = crate::extension::format_extensions_header(activated.uris());
        if let Ok(v) = MetadataValue::try_from(value) {
            meta.insert(EXTENSIONS_KEY, v);
        }
    }
}

/// What a call brings besides its message: the metadata, the peer's address and the
/// client certificate (DER) it presented over TLS.
pub(super) struct Call {
    pub(super) meta: MetadataMap,
    pub(super) peer: Option<SocketAddr>,
    pub(super) certificate: Option<Vec<u8>>,
}

/// A request's metadata, peer and message.
pub(super) fn parts<T>(request: Request<T>) -> (Call, T) {
    let peer = request.remote_addr();
    #[cfg(feature = "tls")]
    let certificate = request
        .peer_certs()
        .and_then(|chain| chain.first().map(|leaf| leaf.to_vec()));
    #[cfg(not(feature = "tls"))]
    let certificate = None;
    let (meta, _, msg) = request.into_parts();
    (
        Call {
            meta,
            peer,
            certificate,
        },
        msg,
    )
}

/// An answer that does not fit the operation (a handler bug): INTERNAL.
pub(super) fn mismatch() -> Status {
    to_status(&A2aError::Internal(
        "the handler answered with a result of another operation".into(),
    ))
}
