//! The JSON-RPC 2.0 binding: one POST endpoint, v1.0 method names, ids echoed byte for byte.
//!
//! - Content-Type is checked before the body is read (-32005 ContentTypeNotSupported).
//! - A body that is not JSON is -32700; an envelope that is not a JSON-RPC 2.0 request object
//!   is -32600; an unknown method is -32601; params of the wrong shape are -32602.
//! - Batch requests (a JSON array) are answered with one -32600 error: A2A defines no batch
//!   semantics for streaming methods, and the reference SDKs reject batches too.
//! - A notification (no `id` member) is executed and answered with HTTP 204 and no body, as
//!   JSON-RPC 2.0 requires no response object for it; streaming methods are not started.
//! - Errors are sent with HTTP 200 and the error object carries `data: [ErrorInfo | BadRequest]`.
//! - The envelope is read and written by [`crate::json::rpc`].

use std::ops::Range;

use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};

use super::Inner;
use super::http::ResponseExt as _;
use super::http::{check_json_content_type, content_type, read_body};
use super::sse::{self, Framing};
use crate::core::{Limits, SeqEvent};
use crate::error::A2aError;
use crate::extension::Activated;
use crate::json::{
    self,
    rpc::{self, Envelope, Member, NULL_ID},
};
use crate::protocol::{A2aRequest, Operation};
use crate::service::{Answer, Decoded, Payload, Target};

/// Serves one JSON-RPC request.
pub(crate) async fn handle(
    inner: web::Data<Inner>,
    req: HttpRequest,
    mut payload: web::Payload,
) -> HttpResponse {
    let meta = super::http::request_meta(&req, None, None);
    let mut body = Body {
        inner: &inner,
        req: &req,
        payload: &mut payload,
        bytes: Bytes::new(),
        id: None,
        notification: false,
        read: Read::Not,
        decoded: false,
    };
    let outcome = super::shutdown::until_over(&inner.over, inner.pipeline.serve(meta, &mut body))
        .await
        .map_err(|e| body.exact_error(e));
    // JSON-RPC 2.0: the server never answers a (valid) notification, not even an error.
    if body.notification {
        return HttpResponse::NoContent()
            .a2a_headers(&Activated::default())
            .finish();
    }
    // The body's borrow of the payload ends here: a timed-out body's response holds it.
    let Body {
        bytes, id, read, ..
    } = body;
    let id = id
        .and_then(|r| bytes.get(r))
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or(NULL_ID);
    let v0_3 = match &read {
        Read::Scanned(s) | Read::Full(s) => s.v0_3,
        Read::Not => None,
    };
    match outcome {
        Err(e) => super::http::closing_on_timeout(error_response(id, &e), &e, payload),
        Ok(Answer::Method { result, activated }) => match serde_json::to_vec(&result) {
            Ok(result) => result_response(id, &result, &activated),
            Err(e) => error_response(id, &A2aError::Internal(e.to_string())),
        },
        Ok(Answer::Operation(served)) => match v0_3 {
            Some(op) => super::v0_3::response(&inner, id, op, served, &req)
                .unwrap_or_else(|e| error_response(id, &e)),
            None => match served.into_stream() {
                Ok((events, activated)) => {
                    let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
                    let framing = JsonRpcFraming { id: id.to_owned() };
                    sse::response(events, framing, &inner, builder, &req)
                }
                Err(unary) => {
                    // The result is encoded straight into the envelope.
                    let mut body = envelope(id, 768);
                    match unary.write_json(&mut body) {
                        Some(Ok(())) => finish_result(body, &unary.activated),
                        _ => error_response(
                            id,
                            &A2aError::Internal("could not encode the result".into()),
                        ),
                    }
                }
            },
        },
    }
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}` with the A2A headers.
fn result_response(id: &str, result: &[u8], activated: &Activated) -> HttpResponse {
    let mut body = envelope(id, result.len());
    body.extend_from_slice(result);
    finish_result(body, activated)
}

/// `{"jsonrpc":"2.0","id":<id>,"result":` with room for `room` more bytes.
fn envelope(id: &str, room: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(room + id.len() + 32);
    rpc::open(&mut body, id, Member::Result);
    body
}

/// Closes an [`envelope`] holding a result and sends it with the A2A headers.
fn finish_result(mut body: Vec<u8>, activated: &Activated) -> HttpResponse {
    rpc::close(&mut body);
    HttpResponse::Ok()
        .a2a_headers(activated)
        .insert_header(content_type("application/json"))
        .body(body)
}

/// How far the envelope was read.
enum Read {
    /// Not yet (the request was refused before its body was read, or the body could not be).
    Not,
    /// By the one structural pass of the usual request ([`rpc::scan`]).
    Scanned(Spans),
    /// By the full parser ([`rpc::read`]), which gives the exact error.
    Full(Spans),
}

/// Where the envelope's params are in the body, and the operation of a v0.3 method.
struct Spans {
    params: Option<Range<usize>>,
    /// The operation of a v0.3 method name.
    v0_3: Option<Operation>,
}

/// A JSON-RPC request's body, read and decoded as the pipeline asks.
struct Body<'r> {
    inner: &'r Inner,
    req: &'r HttpRequest,
    payload: &'r mut web::Payload,
    bytes: Bytes,
    id: Option<Range<usize>>,
    /// True for a request object without `id`.
    notification: bool,
    read: Read,
    /// True once the params were decoded: errors after that are the operation's.
    decoded: bool,
}

impl Body<'_> {
    /// `error`, or the full parser's error when the request was read by the quick pass and
    /// failed before its params were decoded (that pass does not check the params' content).
    fn exact_error(&mut self, error: A2aError) -> A2aError {
        if self.decoded || !matches!(self.read, Read::Scanned(_)) {
            return error;
        }
        match rpc::read(&self.bytes, self.inner.pipeline.limits().max_json_depth) {
            Ok(_) => error,
            Err(e) => {
                self.id = None;
                self.notification = false;
                e
            }
        }
    }

    /// Reads the envelope's members: its id, its method.
    fn envelope(&mut self, envelope: Envelope<'_>) -> Result<(Spans, Target), A2aError> {
        // The members are slices of the body: kept as ranges, so the body can move.
        let base = self.bytes.as_ptr() as usize;
        let len = self.bytes.len();
        let at = |s: &str| {
            let start = (s.as_ptr() as usize).checked_sub(base)?;
            (start + s.len() <= len).then_some(start..start + s.len())
        };
        let id = envelope.checked_id()?;
        self.id = id.and_then(at);
        let method = envelope.checked_method()?;
        self.notification = id.is_none();
        let params = envelope.params.and_then(at);
        let spans = |v0_3| Spans {
            params: params.clone(),
            v0_3,
        };
        if let Some(op) = Operation::from_method(&method) {
            return Ok((spans(None), Target::Operation(op)));
        }
        if self.inner.pipeline.versions().v0_3
            && let Some(op) = crate::compat::v0_3::operation(&method)
        {
            object_params(envelope.params.unwrap_or("{}"))?;
            let target = Target::V0_3 {
                operation: op,
                method: method.into_owned(),
            };
            return Ok((spans(Some(op)), target));
        }
        Ok((spans(None), Target::Method(method.into_owned())))
    }

    /// The raw params (`{}` when absent).
    fn params(&self) -> &str {
        let spans = match &self.read {
            Read::Scanned(s) | Read::Full(s) => s,
            Read::Not => return "{}",
        };
        spans
            .params
            .clone()
            .and_then(|r| self.bytes.get(r))
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("{}")
    }
}

impl Payload for Body<'_> {
    /// Reads the body (its content type and size checked) and its envelope: the usual request
    /// through one structural pass ([`rpc::scan`]), anything else, or any failure on that
    /// path, through the full parser ([`rpc::read`]), which gives the exact error.
    async fn target(&mut self, limits: &Limits) -> Result<Target, A2aError> {
        check_json_content_type(self.req)?;
        self.bytes = read_body(self.req, self.payload, limits).await?;
        let bytes = self.bytes.clone();
        if let Some(envelope) = rpc::scan(&bytes, limits.max_json_depth)
            && let Ok((spans, target)) = self.envelope(envelope)
        {
            self.read = Read::Scanned(spans);
            return Ok(target);
        }
        self.id = None;
        self.notification = false;
        let envelope = rpc::read(&bytes, limits.max_json_depth)?;
        let (spans, target) = self.envelope(envelope)?;
        self.read = Read::Full(spans);
        Ok(target)
    }

    async fn decode(&mut self, target: &Target, _: &Limits) -> Result<Decoded, A2aError> {
        let params = self.params();
        let decoded = match target {
            Target::Operation(op) => {
                object_params(params)?;
                Decoded::Operation(A2aRequest::from_raw(*op, params)?)
            }
            Target::V0_3 { operation, .. } => {
                let value = params_value(params)?;
                let value = crate::compat::v0_3::convert::params_in(*operation, value)?;
                Decoded::Operation(A2aRequest::from_params(*operation, value)?)
            }
            Target::Method(_) | Target::MethodAt(_) => Decoded::Method(params_value(params)?),
        };
        self.decoded = true;
        if self.notification && target.operation().is_some_and(Operation::is_streaming) {
            // Not started: nobody would read its events (and a notification is not answered).
            return Err(A2aError::InvalidRequest(
                "a streaming method cannot be sent as a notification".into(),
            ));
        }
        Ok(decoded)
    }
}

/// The raw params when they are an object, `None` when they are `null`; anything else is an
/// invalid-params error.
fn object_params(params: &str) -> Result<Option<&str>, A2aError> {
    let trimmed = params.trim_start();
    if trimmed == "null" {
        Ok(None)
    } else if trimmed.starts_with('{') {
        Ok(Some(params))
    } else {
        Err(A2aError::invalid_field("params", "must be an object"))
    }
}

/// The params as a JSON object (`null` as an empty one).
fn params_value(params: &str) -> Result<serde_json::Value, A2aError> {
    match object_params(params)? {
        None => Ok(serde_json::Value::Object(Default::default())),
        Some(raw) => json::from_raw(raw),
    }
}

/// A JSON-RPC error response (HTTP 200; 413 for an oversized body, 401 for a missing
/// credential, 408 for a late body, 429 for an exceeded quota).
pub(crate) fn error_response(id: &str, error: &A2aError) -> HttpResponse {
    let status = match error {
        A2aError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        // As every binding answers a missing credential (the spec's authentication duty).
        A2aError::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
        A2aError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
        // Told apart by HTTP clients and proxies without reading the body, with `Retry-After`.
        A2aError::QuotaExceeded { .. } => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::OK,
    };
    let mut body = Vec::with_capacity(256);
    write_error(id, error, &mut body);
    let mut response = HttpResponse::build(status);
    response
        .insert_header(content_type("application/json"))
        .insert_header(super::http::version_header());
    super::http::challenge(&mut response, error);
    let mut resp = response.body(body);
    super::failure::mark_failure(&mut resp, error);
    resp
}

fn write_error(id: &str, error: &A2aError, out: &mut Vec<u8>) {
    let _ = rpc::write(out, id, Member::Error, &error.to_jsonrpc_error());
}

struct JsonRpcFraming {
    id: String,
}

impl Framing for JsonRpcFraming {
    fn event(&self, event: &SeqEvent, out: &mut Vec<u8>) {
        let _ = rpc::write(out, &self.id, Member::Result, &event.event);
    }

    fn error(&self, error: &A2aError, out: &mut Vec<u8>) {
        write_error(&self.id, error, out);
    }
}
