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

use std::borrow::Cow;
use std::future::Future;

use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};

use super::http::{
    check_json_content_type, content_type, read_body, request_context_with, request_headers,
};
use super::sse::{self, Framing};
use super::{Inner, ResponseExt as _};
use crate::auth::AuthRequest;
use crate::core::{SeqEvent, Served};
use crate::error::A2aError;
use crate::extension::{Activated, RequestContext};
use crate::json::{
    self,
    rpc::{self, Member, NULL_ID},
};
use crate::protocol::{A2aRequest, Operation, RequestHeaders};

/// Serves one JSON-RPC request.
pub(crate) async fn handle(
    inner: web::Data<Inner>,
    req: HttpRequest,
    mut payload: web::Payload,
) -> HttpResponse {
    // Before the envelope is read there is no id: failures answer with a null one.
    let (principal, headers) = match &inner.guard {
        None => (None, None),
        Some(guard) => {
            // Before the body is read: the operation and tenant are in it, not known yet. The
            // copy of the headers made for it is the request context's.
            let headers = request_headers(&req);
            let auth = AuthRequest {
                headers: &headers,
                peer: req.peer_addr(),
                peer_certificate: super::http::peer_certificate(&req),
                tenant: None,
                operation: None,
            };
            match guard.authenticate(&auth).await {
                Ok(p) => (Some(p), Some(headers)),
                Err(e) => return error_response(NULL_ID, &e),
            }
        }
    };
    let body = match read_json_body(&inner, &req, &mut payload).await {
        Ok(body) => body,
        Err(e) => {
            return super::http::closing_on_timeout(error_response(NULL_ID, &e), &e, payload);
        }
    };
    let mut notification = false;
    let (id, outcome) = match process(&inner, &req, &body, &mut notification, principal, headers) {
        Ok((id, Some(run))) => (id, super::shutdown::until_over(&inner.over, run).await),
        Ok((id, None)) => (id, Ok(Outcome::Notification)),
        Err((id, e)) => (id, Err(e)),
    };
    // JSON-RPC 2.0: the server never answers a (valid) notification, not even an error.
    let outcome = if notification {
        Ok(Outcome::Notification)
    } else {
        outcome
    };
    let id = id.unwrap_or(NULL_ID);
    match outcome {
        Err(e) => error_response(id, &e),
        Ok(Outcome::Notification) => HttpResponse::NoContent()
            .a2a_headers(&Activated::default())
            .finish(),
        Ok(Outcome::Raw(result, activated)) => result_response(id, &result, &activated),
        Ok(Outcome::V03(op, served)) => super::v0_3::response(&inner, id, op, *served),
        Ok(Outcome::Done(served)) => match served.into_stream() {
            Ok((events, activated)) => {
                let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
                let framing = JsonRpcFraming { id: id.to_owned() };
                sse::response(events, framing, &inner, builder)
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

enum Outcome {
    Notification,
    /// A result (its extensions already filtered by the echo setting).
    Done(Box<Served>),
    Raw(Vec<u8>, Activated),
    /// The result of a v0.3 request, to translate.
    V03(Operation, Box<Served>),
}

type Failure<'b> = (Option<&'b str>, A2aError);

/// The request body, once its content type and size are checked (its nesting depth is checked
/// by [`parse`]).
async fn read_json_body(
    inner: &Inner,
    req: &HttpRequest,
    payload: &mut web::Payload,
) -> Result<Bytes, A2aError> {
    check_json_content_type(req)?;
    let limits = inner.service.limits();
    read_body(req, payload, limits).await
}

/// A request read from its envelope, ready to run.
// Moved once, into its future (a box for the large variant would cost an allocation per
// request and save nothing).
#[allow(clippy::large_enum_variant)]
enum Parsed<'b> {
    /// One of the protocol's operations.
    Op(RequestContext, A2aRequest),
    /// A method added by an extension, with its params.
    Method(RequestContext, Cow<'b, str>, serde_json::Value),
    /// A v0.3 method, its params translated.
    V03(RequestContext, A2aRequest),
}

/// Reads the request and starts it: its id, and the future of its outcome (`None` for a
/// streaming method sent as a notification, which is not started).
#[allow(clippy::type_complexity)]
fn process<'b>(
    inner: &'b Inner,
    req: &HttpRequest,
    body: &'b [u8],
    notification: &mut bool,
    principal: Option<crate::protocol::Principal>,
    mut headers: Option<RequestHeaders>,
) -> Result<
    (
        Option<&'b str>,
        Option<impl Future<Output = Result<Outcome, A2aError>> + 'b>,
    ),
    Failure<'b>,
> {
    let (id, mut parsed) = parse(inner, req, body, notification, &mut headers)?;
    if let Some(principal) = principal {
        match &mut parsed {
            Parsed::Op(ctx, _) | Parsed::Method(ctx, ..) | Parsed::V03(ctx, _) => {
                ctx.principal = principal
            }
        }
    }
    match &mut parsed {
        Parsed::Op(ctx, request) | Parsed::V03(ctx, request) => {
            inner.authorize(ctx, request).map_err(|e| (id, e))?
        }
        Parsed::Method(ctx, method, params) => {
            if let Some(guard) = &inner.guard {
                let tenant = params
                    .get("tenant")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default();
                guard
                    .authorize_method(ctx, method, tenant)
                    .map_err(|e| (id, e))?;
            }
        }
    }
    if id.is_none()
        && matches!(&parsed, Parsed::Op(_, r) | Parsed::V03(_, r) if r.operation().is_streaming())
    {
        return Ok((None, None));
    }
    Ok((id, Some(run(inner, parsed))))
}

/// The future of a parsed request (`parsed` is moved in whole: a request's future then holds
/// only this future across its await, not the parsed request too).
fn run<'b>(
    inner: &'b Inner,
    parsed: Parsed<'b>,
) -> impl Future<Output = Result<Outcome, A2aError>> + 'b {
    use futures::FutureExt as _;
    use futures::future::Either;
    match parsed {
        Parsed::Op(ctx, request) => Either::Left(inner.service.call(ctx, request).map(|result| {
            result.map(|mut served| {
                served.activated = inner.echo(std::mem::take(&mut served.activated));
                Outcome::Done(Box::new(served))
            })
        })),
        Parsed::Method(ctx, method, value) => {
            Either::Right(extension_method(inner, ctx, method, value))
        }
        Parsed::V03(ctx, request) => Either::Right(v0_3_call(inner, ctx, request)),
    }
}

/// Runs a method added by an extension (boxed: its state would otherwise enlarge every
/// request's future).
fn extension_method<'b>(
    inner: &'b Inner,
    ctx: RequestContext,
    method: Cow<'b, str>,
    value: serde_json::Value,
) -> futures::future::BoxFuture<'b, Result<Outcome, A2aError>> {
    Box::pin(async move {
        let (result, activated) = inner.service.call_method(ctx, &method, value).await?;
        let bytes = serde_json::to_vec(&result).map_err(|e| A2aError::Internal(e.to_string()))?;
        Ok(Outcome::Raw(bytes, inner.echo(activated)))
    })
}

/// Runs a v0.3 request (boxed, as [`extension_method`]).
fn v0_3_call<'b>(
    inner: &'b Inner,
    ctx: RequestContext,
    request: A2aRequest,
) -> futures::future::BoxFuture<'b, Result<Outcome, A2aError>> {
    Box::pin(async move {
        let op = request.operation();
        let mut served = inner.service.call(ctx, request).await?;
        served.activated = inner.echo(std::mem::take(&mut served.activated));
        Ok(Outcome::V03(op, Box::new(served)))
    })
}

/// Reads the request from the body: the usual request through one structural pass
/// ([`rpc::scan`]) and its params' parse; anything else, or any failure on that path, through
/// the full parser ([`rpc::read`]), which gives the exact error.
fn parse<'b>(
    inner: &Inner,
    req: &HttpRequest,
    body: &'b [u8],
    notification: &mut bool,
    headers: &mut Option<RequestHeaders>,
) -> Result<(Option<&'b str>, Parsed<'b>), Failure<'b>> {
    let max_depth = inner.service.limits().max_json_depth;
    if let Some(envelope) = rpc::scan(body, max_depth) {
        if let Ok(parsed) = parse_envelope(inner, req, envelope, notification, headers) {
            return Ok(parsed);
        }
        // The params may not even be JSON: the full parser tells.
        *notification = false;
    }
    let envelope = rpc::read(body, max_depth).map_err(|e| (None, e))?;
    parse_envelope(inner, req, envelope, notification, headers)
}

/// Checks the envelope's members and decodes the params of a well-formed request object.
fn parse_envelope<'b>(
    inner: &Inner,
    req: &HttpRequest,
    envelope: rpc::Envelope<'b>,
    notification: &mut bool,
    headers: &mut Option<RequestHeaders>,
) -> Result<(Option<&'b str>, Parsed<'b>), Failure<'b>> {
    let id = envelope.checked_id().map_err(|e| (None, e))?;
    let fail = |e: A2aError| (id, e);
    let method = envelope.checked_method().map_err(fail)?;
    *notification = id.is_none();
    // The headers already copied for authentication, if any (taken once: a retry of the full
    // parser after the quick one failed copies them again).
    let mut ctx = request_context_with(req, None, headers.take());
    let op = Operation::from_method(&method);
    let params = envelope.params.unwrap_or("{}");
    let params_trim = params.trim_start();
    if op.is_none()
        && let Some(op) = super::v0_3::operation(inner, &method)
    {
        if !(params_trim.starts_with('{') || params_trim == "null") {
            return Err(fail(A2aError::invalid_field("params", "must be an object")));
        }
        let (ctx, request) = super::v0_3::begin(inner, ctx, &method, op, params).map_err(fail)?;
        return Ok((id, Parsed::V03(ctx, request)));
    }
    if op.is_some() && !inner.versions.v1_0 {
        return Err(fail(A2aError::VersionNotSupported {
            requested: ctx.protocol_version.as_deref().unwrap_or("0.3").to_owned(),
            supported: vec!["0.3".to_owned()],
        }));
    }
    inner.service.begin(&mut ctx).map_err(fail)?;
    if !(params_trim.starts_with('{') || params_trim == "null") {
        return Err(fail(A2aError::invalid_field("params", "must be an object")));
    }
    let Some(op) = op else {
        if !inner.service.has_method(&method) {
            return Err(fail(A2aError::MethodNotFound {
                method: method.into_owned(),
                hint: Vec::new(),
            }));
        }
        // A method added by an extension.
        let value: serde_json::Value = if params_trim == "null" {
            serde_json::Value::Object(Default::default())
        } else {
            json::from_raw(params).map_err(fail)?
        };
        return Ok((id, Parsed::Method(ctx, method, value)));
    };
    let request = A2aRequest::from_raw(op, params).map_err(fail)?;
    Ok((id, Parsed::Op(ctx, request)))
}

/// A JSON-RPC error response (HTTP 200, or 413 for an oversized body).
pub(crate) fn error_response(id: &str, error: &A2aError) -> HttpResponse {
    let status = match error {
        A2aError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        // As every binding answers a missing credential (the spec's authentication duty).
        A2aError::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
        A2aError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
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
    super::observe::mark_failure(&mut resp, error);
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
