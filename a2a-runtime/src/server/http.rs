//! What the HTTP bindings share: the A2A header names, the request metadata, body reading,
//! content-type checks, and the A2A response headers.

use std::borrow::Cow;

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::web::{self, Bytes, BytesMut};
use actix_web::{HttpRequest, HttpResponseBuilder};
use futures::StreamExt as _;

use crate::core::Limits;
use crate::error::A2aError;
use crate::extension::Activated;
use crate::protocol::RequestHeaders;
use crate::service::{RequestMeta, Target};

/// The `A2A-Version` header name.
pub const A2A_VERSION: &str = "a2a-version";
/// The `A2A-Extensions` header name.
pub const A2A_EXTENSIONS: &str = "a2a-extensions";

/// [`A2A_EXTENSIONS`] as a header name, built once (a name given as a `&str` is parsed again
/// on every use).
pub(crate) static A2A_EXTENSIONS_NAME: HeaderName = HeaderName::from_static(A2A_EXTENSIONS);

/// The v0.3 name of the extensions header, accepted as an alias.
pub const X_A2A_EXTENSIONS: &str = "x-a2a-extensions";
/// The REST media type.
pub const A2A_JSON: &str = "application/a2a+json";

/// What the pipeline needs of an HTTP request besides its body: the headers, the protocol
/// version (the `A2A-Version` header, or the `A2A-Version` query parameter when the header is
/// absent), the peer and its certificate, the tenant of the path and the target of the route.
pub(crate) fn request_meta(
    req: &HttpRequest,
    tenant: Option<String>,
    target: Option<Target>,
) -> RequestMeta<'_> {
    let (headers, version) = copy_headers(req);
    let protocol_version = protocol_version(req, version);
    RequestMeta {
        headers,
        protocol_version,
        peer: req.peer_addr(),
        peer_certificate: peer_certificate(req),
        tenant,
        target,
        last_event_id: header_str(req, &LAST_EVENT_ID),
    }
}

/// The header a reconnecting SSE client sends (the id of the last event it received), built
/// once: a name given as a `&str` that is not a standard header is parsed and allocated on
/// every lookup (about 200 instructions a request, callgrind).
static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The value of header `name` when it is UTF-8.
fn header_str(req: &HttpRequest, name: &HeaderName) -> Option<String> {
    let value = req.headers().get(name)?;
    std::str::from_utf8(value.as_bytes())
        .ok()
        .map(str::to_owned)
}

/// The headers, and the first `A2A-Version` value that is UTF-8 (as `headers.get` would).
fn copy_headers(req: &HttpRequest) -> (RequestHeaders, Option<&str>) {
    // The pass that sizes the copy also finds the version (without a second scan comparing
    // every name).
    let mut version: Option<&str> = None;
    let (count, bytes) = req.headers().iter().fold((0, 0), |(c, b), (n, v)| {
        if version.is_none() && n.as_str() == A2A_VERSION {
            version = std::str::from_utf8(v.as_bytes()).ok();
        }
        (c + 1, b + n.as_str().len() + v.len())
    });
    let mut headers = RequestHeaders::with_capacity(count, bytes);
    for (name, value) in req.headers() {
        // Values are checked when read, as UTF-8 (not just visible ASCII, as
        // `HeaderValue::to_str` would: clients may legitimately send obs-text).
        headers.push_received(name.as_str(), value.as_bytes());
    }
    (headers, version)
}

/// The requested protocol version: the `A2A-Version` header, else the query parameter.
fn protocol_version(req: &HttpRequest, header: Option<&str>) -> Option<Cow<'static, str>> {
    header
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(crate::service::protocol_version)
        .or_else(|| query_param(req.query_string(), "A2A-Version").map(Cow::Owned))
}

/// Adds `WWW-Authenticate` to the response of an Unauthenticated error, and `Retry-After` to
/// the response of an exceeded quota.
pub(crate) fn challenge(response: &mut actix_web::HttpResponseBuilder, error: &A2aError) {
    if let A2aError::QuotaExceeded {
        retry_after_secs, ..
    } = error
    {
        response.insert_header((header::RETRY_AFTER, (*retry_after_secs).max(1)));
    }
    if let A2aError::Unauthenticated { challenge } = error {
        let value = if challenge.is_empty() {
            HeaderValue::from_static("Bearer realm=\"a2a\"")
        } else {
            HeaderValue::from_str(challenge)
                .unwrap_or_else(|_| HeaderValue::from_static("Bearer realm=\"a2a\""))
        };
        response.insert_header((header::WWW_AUTHENTICATE, value));
    }
}

/// The first value of `name` in a query string (percent-decoded).
pub(crate) fn query_param(query: &str, name: &str) -> Option<String> {
    crate::protocol::uri::query_pairs(query)
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// The media type of a request, without parameters (as sent: compare ignoring ASCII case).
pub(crate) fn media_type(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim())
}

/// The `A2A-Version` response header (constant: nothing is parsed or allocated per response).
pub(crate) const fn version_header() -> (HeaderName, HeaderValue) {
    (
        HeaderName::from_static(A2A_VERSION),
        HeaderValue::from_static(crate::PROTOCOL_VERSION),
    )
}

/// A `Content-Type` header with a constant value (a value given as a `&str` is parsed and copied
/// into a new allocation on every response).
pub(crate) const fn content_type(value: &'static str) -> (HeaderName, HeaderValue) {
    (header::CONTENT_TYPE, HeaderValue::from_static(value))
}

/// Checks the request's content type is JSON (`application/json` or `application/a2a+json`).
pub(crate) fn check_json_content_type(req: &HttpRequest) -> Result<(), A2aError> {
    // The usual header, compared whole before it is parsed.
    if req
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == b"application/json")
    {
        return Ok(());
    }
    match media_type(req) {
        Some(t)
            if t.eq_ignore_ascii_case("application/json") || t.eq_ignore_ascii_case(A2A_JSON) =>
        {
            Ok(())
        }
        Some(other) => Err(A2aError::ContentTypeNotSupported(format!(
            "request Content-Type {:?} is not supported; send application/json or {A2A_JSON}",
            other.to_ascii_lowercase()
        ))),
        None => Err(A2aError::ContentTypeNotSupported(format!(
            "request has no Content-Type; send application/json or {A2A_JSON}"
        ))),
    }
}

/// Reads the request body, refusing more than [`Limits::max_body_bytes`] without buffering
/// them, and a body that stalls ([`Limits::body_idle_timeout`]) or trickles
/// ([`Limits::body_timeout`]) with [`A2aError::RequestTimeout`]. A body that arrives in one chunk
/// (the usual small request) is that chunk, not a copy.
pub(crate) async fn read_body(
    req: &HttpRequest,
    payload: &mut web::Payload,
    limits: &Limits,
) -> Result<Bytes, A2aError> {
    let limit = limits.max_body_bytes;
    let too_large = |n: usize| A2aError::PayloadTooLarge { size: n, limit };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if let Some(n) = declared
        && n > limit
    {
        return Err(too_large(n));
    }
    let mut first: Option<Bytes> = None;
    let mut joined: Option<BytesMut> = None;
    let mut size = 0usize;
    // The usual body is in the connection's buffer already, but actix polls the handler before
    // it feeds the body: the first read waits once, with no timer, for the feed in the same
    // pass (a yield: should nothing come, the next read arms the timers). Timers start only
    // for a body still on its way (a tokio timer per request was ~450 instructions of the
    // ~60k a SendMessage costs, callgrind).
    let mut deadline: Option<tokio::time::Instant> = None;
    let mut yielded = false;
    loop {
        let next = match futures::poll!(payload.next()) {
            std::task::Poll::Ready(next) => next,
            std::task::Poll::Pending if !yielded => {
                yielded = true;
                tokio::task::yield_now().await;
                continue;
            }
            std::task::Poll::Pending => {
                let now = tokio::time::Instant::now();
                let whole = *deadline.get_or_insert(now + limits.body_timeout);
                let idle = now + limits.body_idle_timeout;
                let cut = tokio::time::timeout_at(whole.min(idle), payload.next());
                match cut.await {
                    Ok(next) => next,
                    Err(_) => {
                        let why = if whole <= idle {
                            format!(
                                "the request body did not arrive within {:?} ({size} bytes read)",
                                limits.body_timeout
                            )
                        } else {
                            format!(
                                "no request body bytes arrived for {:?} ({size} bytes read)",
                                limits.body_idle_timeout
                            )
                        };
                        return Err(A2aError::RequestTimeout(why));
                    }
                }
            }
        };
        let Some(chunk) = next else { break };
        let chunk = chunk.map_err(|e| {
            A2aError::InvalidRequest(format!("could not read the request body: {e}"))
        })?;
        size += chunk.len();
        if size > limit {
            return Err(too_large(size));
        }
        if let Some(joined) = &mut joined {
            joined.extend_from_slice(&chunk);
        } else if let Some(first) = first.take() {
            let mut both = BytesMut::with_capacity(declared.unwrap_or(size).clamp(size, limit));
            both.extend_from_slice(&first);
            both.extend_from_slice(&chunk);
            joined = Some(both);
        } else {
            first = Some(chunk);
        }
    }
    Ok(joined.map_or_else(|| first.unwrap_or_default(), BytesMut::freeze))
}

/// `response` to a request whose body timed out, holding the unread `payload` until the response
/// is written: the connection then closes after it (a dropped chunked body would be drained
/// first, keeping the stalled connection open). Other responses are returned as they are.
pub(crate) fn closing_on_timeout(
    response: actix_web::HttpResponse,
    error: &A2aError,
    payload: web::Payload,
) -> actix_web::HttpResponse {
    if !matches!(error, A2aError::RequestTimeout(_)) {
        return response;
    }
    response
        .map_body(|_, body| HoldPayload {
            body,
            _payload: payload,
        })
        .map_into_boxed_body()
}

/// A response body that keeps the request's payload alive while it is written.
struct HoldPayload {
    body: actix_web::body::BoxBody,
    _payload: web::Payload,
}

impl actix_web::body::MessageBody for HoldPayload {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> actix_web::body::BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Bytes, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_next(cx)
    }
}

/// The client certificate (DER) of `req`'s TLS connection, when the client presented one.
pub(crate) fn peer_certificate(_req: &HttpRequest) -> Option<&[u8]> {
    #[cfg(feature = "tls")]
    return super::tls::peer_certificate(_req);
    #[cfg(not(feature = "tls"))]
    None
}

/// The `A2A-Extensions` value for `activated` (`None` when it is not a valid header value).
fn echo_header(activated: &Activated) -> Option<HeaderValue> {
    HeaderValue::from_str(&crate::extension::format_extensions_header(
        activated.uris(),
    ))
    .ok()
}

/// Adds the A2A response headers: `A2A-Version`, and `A2A-Extensions` with the activated URIs.
pub(crate) trait ResponseExt {
    fn a2a_headers(&mut self, activated: &Activated) -> &mut Self;
    fn a2a_headers_builder(self, activated: &Activated) -> Self;
}

impl ResponseExt for HttpResponseBuilder {
    fn a2a_headers(&mut self, activated: &Activated) -> &mut Self {
        // Static names: a name parsed from a `&str` is allocated on every response.
        self.insert_header(version_header());
        if !activated.is_empty()
            && let Some(v) = echo_header(activated)
        {
            self.insert_header((A2A_EXTENSIONS_NAME.clone(), v));
        }
        self
    }

    fn a2a_headers_builder(mut self, activated: &Activated) -> Self {
        self.a2a_headers(activated);
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_metadata_reads_the_first_utf8_version_and_borrows_the_one_it_speaks() {
        let ctx = |req: actix_web::test::TestRequest| {
            let req = req.to_http_request();
            let meta = request_meta(&req, None, None);
            (meta.protocol_version, meta.target)
        };
        let v1 = ctx(actix_web::test::TestRequest::default().insert_header((A2A_VERSION, " 1.0 ")));
        assert!(matches!(v1, (Some(Cow::Borrowed("1.0")), None)));
        // Not UTF-8 (obs-text): skipped, the next value is read.
        let req = actix_web::test::TestRequest::default()
            .append_header((A2A_VERSION, &b"1.\xe9"[..]))
            .append_header((A2A_VERSION, "0.3"));
        assert_eq!(ctx(req).0.as_deref(), Some("0.3"));
        // Empty: the query parameter is read instead.
        let req = actix_web::test::TestRequest::with_uri("/?A2A-Version=1.0")
            .insert_header((A2A_VERSION, "  "));
        assert_eq!(ctx(req).0.as_deref(), Some("1.0"));
        assert_eq!(ctx(actix_web::test::TestRequest::default()).0, None);
    }

    #[test]
    fn query_decoding() {
        assert_eq!(
            query_param("a=1&A2A-Version=1.0", "A2A-Version").as_deref(),
            Some("1.0")
        );
        assert_eq!(
            query_param("t=2026-03-01T00%3A00%3A00Z", "t").as_deref(),
            Some("2026-03-01T00:00:00Z")
        );
        assert_eq!(query_param("x=%zz%", "x").as_deref(), Some("%zz%"));
    }
}
