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
//! - The usual request object is read in one structural pass, then its params are parsed
//!   (see [`scan_envelope`]); anything else goes through serde_json's full parse, which gives
//!   the exact error. Both read a request the same way.

use std::borrow::Cow;
use std::future::Future;

use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::http::{
    check_json_content_type, content_type, read_body, request_context_with, request_headers,
};
use super::sse::{self, Framing};
use super::{Inner, ResponseExt as _};
use crate::auth::AuthRequest;
use crate::core::{SeqEvent, Served};
use crate::error::A2aError;
use crate::extension::{Activated, RequestContext};
use crate::json;
use crate::protocol::{A2aRequest, Operation, RequestHeaders};

/// The `id` member: absent (a notification) or any raw JSON value, kept verbatim (borrowed from
/// the body).
#[derive(Default)]
struct RawId<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for RawId<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| Self(Some(raw)))
    }
}

/// The request object as serde_json reads it (the full parser, for any well-formed JSON).
#[derive(Deserialize)]
struct WireEnvelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow)]
    id: RawId<'a>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

/// The members of a request object, each as its raw JSON text (absent: `None`).
#[derive(Debug, Default, PartialEq)]
struct Envelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    method: Option<&'a str>,
    params: Option<&'a str>,
}

impl<'a> Envelope<'a> {
    /// The members at the places [`scan_envelope`] found in `text`.
    fn at(text: &'a str, spans: [Option<(usize, usize)>; 4]) -> Self {
        let [jsonrpc, id, method, params] = spans.map(|s| s.and_then(|(a, b)| text.get(a..b)));
        Self {
            jsonrpc,
            id,
            method,
            params,
        }
    }
}

impl<'a> From<WireEnvelope<'a>> for Envelope<'a> {
    fn from(w: WireEnvelope<'a>) -> Self {
        Self {
            jsonrpc: w.jsonrpc.map(RawValue::get),
            id: w.id.0.map(RawValue::get),
            method: w.method.map(RawValue::get),
            params: w.params.map(RawValue::get),
        }
    }
}

const NULL_ID: &str = "null";

/// The longest `id` accepted, as its JSON text (256 bytes): the id is echoed in the response and
/// in every event of a stream, so a long one would multiply the response.
pub(crate) const MAX_ID_BYTES: usize = 256;

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
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(id.as_bytes());
    body.extend_from_slice(br#","result":"#);
    body
}

/// Closes an [`envelope`] holding a result and sends it with the A2A headers.
fn finish_result(mut body: Vec<u8>, activated: &Activated) -> HttpResponse {
    body.push(b'}');
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
/// ([`scan_envelope`]) and its params' parse; anything else, or any failure on that path, through
/// the full parser, which gives the exact error.
fn parse<'b>(
    inner: &Inner,
    req: &HttpRequest,
    body: &'b [u8],
    notification: &mut bool,
    headers: &mut Option<RequestHeaders>,
) -> Result<(Option<&'b str>, Parsed<'b>), Failure<'b>> {
    let max_depth = inner.service.limits().max_json_depth;
    if let Some(spans) = scan_envelope(body, max_depth)
        && let Ok(text) = simdutf8::basic::from_utf8(body)
    {
        let envelope = Envelope::at(text, spans);
        if let Ok(parsed) = parse_envelope(inner, req, envelope, notification, headers) {
            return Ok(parsed);
        }
        // The params may not even be JSON: the full parser tells.
        *notification = false;
    }
    json::check_depth(body, max_depth).map_err(|e| (None, e))?;
    // Validated with SIMD; the standard library only to describe a failure.
    let text = simdutf8::basic::from_utf8(body).map_err(|_| {
        let detail = std::str::from_utf8(body).err();
        let detail = detail.map(|e| e.to_string()).unwrap_or_default();
        (
            None,
            A2aError::Parse(format!("body is not UTF-8: {detail}")),
        )
    })?;
    let first = text.trim_start().as_bytes().first().copied();
    if first == Some(b'[') {
        // Well-formed JSON is required before we call it a batch.
        serde_json::from_str::<serde::de::IgnoredAny>(text)
            .map_err(|e| (None, A2aError::Parse(e.to_string())))?;
        return Err((
            None,
            A2aError::InvalidRequest(
                "batch requests are not supported; send one request per HTTP call".into(),
            ),
        ));
    }
    let envelope: WireEnvelope<'_> = match serde_json::from_str(text) {
        Ok(env) => env,
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            return Err((
                None,
                A2aError::InvalidRequest(format!("not a JSON-RPC 2.0 request object: {e}")),
            ));
        }
        Err(e) => return Err((None, A2aError::Parse(e.to_string()))),
    };
    parse_envelope(inner, req, envelope.into(), notification, headers)
}

/// Checks the envelope's members and decodes the params of a well-formed request object.
fn parse_envelope<'b>(
    inner: &Inner,
    req: &HttpRequest,
    envelope: Envelope<'b>,
    notification: &mut bool,
    headers: &mut Option<RequestHeaders>,
) -> Result<(Option<&'b str>, Parsed<'b>), Failure<'b>> {
    let id = match envelope.id {
        None => None,
        Some(raw) => {
            let t = raw.trim_start();
            let valid = t.starts_with('"')
                || t.starts_with('-')
                || t.as_bytes().first().is_some_and(u8::is_ascii_digit)
                || t == "null";
            if !valid {
                return Err((
                    None,
                    A2aError::InvalidRequest("id must be a string, a number or null".into()),
                ));
            }
            if raw.len() > MAX_ID_BYTES {
                return Err((
                    None,
                    A2aError::InvalidRequest(format!(
                        "id is {} bytes long; at most {MAX_ID_BYTES} are accepted",
                        raw.len()
                    )),
                ));
            }
            Some(raw)
        }
    };
    let fail = |e: A2aError| (id, e);
    if envelope.jsonrpc != Some("\"2.0\"") {
        return Err(fail(A2aError::InvalidRequest(
            r#"jsonrpc must be "2.0""#.into(),
        )));
    }
    // Borrowed from the body unless it holds escapes.
    let method: Cow<'_, str> =
        match envelope.method {
            Some(raw) => match serde_json::from_str::<&str>(raw) {
                Ok(plain) => Cow::Borrowed(plain),
                Err(_) => Cow::Owned(serde_json::from_str::<String>(raw).map_err(|_| {
                    fail(A2aError::InvalidRequest("method must be a string".into()))
                })?),
            },
            None => return Err(fail(A2aError::InvalidRequest("method is required".into()))),
        };
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

/// One structural pass over the usual request object, in place of the depth check and the full
/// parse: an object whose members are only `jsonrpc`, `id`, `method` and `params` (each at
/// most once, in any order, their names without escapes), `jsonrpc` and `method` strings and an
/// `id` string without escapes or control characters (or an `id` number or `null`), and an
/// object `params` nested no deeper than `max_depth` (counted as [`json::check_depth`] counts).
///
/// Returns where each member's value is (`jsonrpc`, `id`, `method`, `params`), or `None` for
/// anything else. Everything but the content of `params` is checked here to be well-formed; that
/// content is parsed in full next, and a request whose params fail to parse goes through the
/// full parser too. So a request read this way is one the full parser reads the same way.
fn scan_envelope(body: &[u8], max_depth: usize) -> Option<[Option<(usize, usize)>; 4]> {
    let ws = |mut i: usize| {
        while matches!(body.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    };
    let mut spans = [None; 4];
    let mut i = ws(0);
    if body.get(i) != Some(&b'{') || max_depth == 0 {
        return None;
    }
    i = ws(i + 1);
    if body.get(i) == Some(&b'}') {
        return (ws(i + 1) == body.len()).then_some(spans);
    }
    loop {
        let (key_start, key_end) = plain_string(body, i)?;
        let slot = match body.get(key_start..key_end)? {
            b"jsonrpc" => 0,
            b"id" => 1,
            b"method" => 2,
            b"params" => 3,
            _ => return None,
        };
        i = ws(key_end + 1);
        if body.get(i) != Some(&b':') {
            return None;
        }
        let start = ws(i + 1);
        let end = match (slot, body.get(start)?) {
            (3, b'{') => object_end(body, start, max_depth)?,
            (3, _) => return None,
            (1, b'n') => (body.get(start..start + 4)? == b"null").then_some(start + 4)?,
            (1, b'-' | b'0'..=b'9') => number_end(body, start)?,
            (_, b'"') => plain_string(body, start)?.1 + 1,
            _ => return None,
        };
        if spans[slot].replace((start, end)).is_some() {
            // A repeated member: the full parser's error.
            return None;
        }
        i = ws(end);
        match body.get(i)? {
            b',' => i = ws(i + 1),
            b'}' => return (ws(i + 1) == body.len()).then_some(spans),
            _ => return None,
        }
    }
}

/// The string starting with the quote at `i`, when it holds no escape and no control character:
/// where its content starts and where its closing quote is.
fn plain_string(body: &[u8], i: usize) -> Option<(usize, usize)> {
    if body.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let rest = body.get(start..)?;
    let len = rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    (rest.get(len) == Some(&b'"')).then_some((start, start + len))
}

/// Just past the JSON number starting at `i` (exactly the JSON grammar: `-`, then `0` or digits
/// not starting with `0`, then an optional fraction and exponent).
fn number_end(body: &[u8], i: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let from = i;
        while body.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut i = if body.get(i) == Some(&b'-') { i + 1 } else { i };
    i = match body.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i)?,
        _ => return None,
    };
    if body.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(body.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(body.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

/// Just past the object or array starting at `i`, a member of the request object (depth 1),
/// found by its brackets (strings skipped); `None` when it is unterminated or nests deeper than
/// `max_depth`. Its content is not checked.
fn object_end(body: &[u8], mut i: usize, max_depth: usize) -> Option<usize> {
    let mut depth = 1usize;
    loop {
        match *body.get(i)? {
            b'"' => {
                i = json::skip_string(body, i + 1);
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > max_depth {
                    return None;
                }
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 1 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
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
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","error":"#);
    let _ = serde_json::to_writer(&mut *out, &error.to_jsonrpc_error());
    out.push(b'}');
}

struct JsonRpcFraming {
    id: String,
}

impl Framing for JsonRpcFraming {
    fn event(&self, event: &SeqEvent, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        out.extend_from_slice(self.id.as_bytes());
        out.extend_from_slice(br#","result":"#);
        let _ = crate::json_out::to_writer(out, &event.event);
        out.push(b'}');
    }

    fn error(&self, error: &A2aError, out: &mut Vec<u8>) {
        write_error(&self.id, error, out);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// What the full parser reads from `body` (depth check, serde envelope), if it reads it.
    fn full(body: &str, max_depth: usize) -> Option<Envelope<'_>> {
        json::check_depth(body.as_bytes(), max_depth).ok()?;
        serde_json::from_str::<WireEnvelope<'_>>(body)
            .ok()
            .map(Envelope::from)
    }

    /// What the structural pass reads from `body`, if it reads it.
    fn scanned(body: &str, max_depth: usize) -> Option<Envelope<'_>> {
        let spans = scan_envelope(body.as_bytes(), max_depth)?;
        Some(Envelope::at(body, spans))
    }

    /// The structural pass's promise: what it reads, the full parser reads the same way, unless
    /// the params it found are not JSON (then the request goes to the full parser).
    fn agrees(body: &str, max_depth: usize) {
        let Some(fast) = scanned(body, max_depth) else {
            return;
        };
        let params_are_json = fast
            .params
            .is_none_or(|p| serde_json::from_str::<serde::de::IgnoredAny>(p).is_ok());
        if params_are_json {
            assert_eq!(Some(fast), full(body, max_depth), "{body}");
        }
    }

    const SEND: &str = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi \"there\" {[}"}]}}}"#;

    #[test]
    fn the_usual_requests_are_read_as_the_full_parser_reads_them() {
        let bodies = [
            SEND,
            r#" { "params" : {} , "method":"GetTask", "id" : "a-1", "jsonrpc" : "2.0" } "#,
            "{\"jsonrpc\":\"2.0\",\n\"id\":null,\r\"method\":\"x\",\t\"params\":{\"a\":[[],{}]}}",
            r#"{"jsonrpc":"2.0","method":"GetTask","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":-0.5e+10,"method":"GetTask"}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"GetTask"}"#,
            r#"{"jsonrpc":"2.0","id":12E3,"method":"GetTask"}"#,
            "{}",
            r#"{"id":"é ünïcode","jsonrpc":"2.0","method":"m"}"#,
        ];
        for body in bodies {
            let fast = scanned(body, 64).unwrap_or_else(|| panic!("not scanned: {body}"));
            assert_eq!(Some(fast), full(body, 64), "{body}");
        }
    }

    #[test]
    fn anything_unusual_is_left_to_the_full_parser() {
        let bodies = [
            // Escapes, other members, repeated members, other value kinds.
            r#"{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"m"}"#,
            r#"{"json\u0072pc":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
            // Not a JSON number, not an object, not JSON, trailing bytes, batches.
            r#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1e,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":nul,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
            r#"{"jsonrpc":"2.0","id":1 "method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\u{1}\",\"method\":\"m\"}",
            r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
            "",
            "   ",
            "\"x\"",
        ];
        for body in bodies {
            assert_eq!(scanned(body, 64), None, "{body}");
        }
    }

    #[test]
    fn depth_is_counted_as_the_depth_check_counts_it() {
        // The request object is level 1, params level 2, each bracket inside one more.
        let nested = |levels: usize| {
            let inner = "[".repeat(levels) + &"]".repeat(levels);
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{inner},"s":"[[[[[["}}}}"#
            )
        };
        for levels in 0..6 {
            let body = nested(levels);
            for max_depth in 0..10 {
                let within = json::check_depth(body.as_bytes(), max_depth).is_ok();
                assert_eq!(
                    scanned(&body, max_depth).is_some(),
                    within,
                    "{body} {max_depth}"
                );
                agrees(&body, max_depth);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn a_mangled_request_is_read_as_the_full_parser_reads_it_or_left_to_it(
            edits in proptest::collection::vec(
                (0usize..200, proptest::sample::select(
                    vec!["", "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "0", "-", "n", "é", "\u{1}"]
                ), 0usize..3),
                1..4,
            )
        ) {
            let mut body = SEND.to_owned();
            for (at, insert, remove) in edits {
                let mut at = at.min(body.len());
                while !body.is_char_boundary(at) {
                    at -= 1;
                }
                let mut end = (at + remove).min(body.len());
                while !body.is_char_boundary(end) {
                    end += 1;
                }
                body.replace_range(at..end, insert);
            }
            agrees(&body, 64);
            agrees(&body, 4);
        }
    }
}
