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

use std::borrow::Cow;

use actix_web::http::{StatusCode, header};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::http::{check_json_content_type, read_body, request_context};
use super::sse::{self, Framing};
use super::{Inner, ResponseExt as _};
use crate::core::{A2aRequest, A2aResponse, Operation, SeqEvent};
use crate::error::A2aError;
use crate::extension::Activated;
use crate::json;

/// The `id` member: absent (a notification) or any raw JSON value, kept verbatim (borrowed from
/// the body).
#[derive(Default)]
struct RawId<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for RawId<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| Self(Some(raw)))
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow)]
    id: RawId<'a>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

const NULL_ID: &str = "null";

/// Serves one JSON-RPC request.
pub(crate) async fn handle(
    inner: web::Data<Inner>,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    // Before the envelope is read there is no id: failures answer with a null one.
    let body = match read_json_body(&inner, &req, payload).await {
        Ok(body) => body,
        Err(e) => return error_response(NULL_ID, &e),
    };
    let mut notification = false;
    let (id, outcome) = match process(&inner, &req, &body, &mut notification).await {
        Ok(ok) => ok,
        // JSON-RPC 2.0: the server never answers a (valid) notification, not even an error.
        Err(_) if notification => (None, Ok(Outcome::Notification)),
        Err((id, e)) => (id, Err(e)),
    };
    let id = id.unwrap_or(NULL_ID);
    match outcome {
        Err(e) => error_response(id, &e),
        Ok(Outcome::Notification) => HttpResponse::NoContent()
            .a2a_headers(&Activated::default())
            .finish(),
        Ok(Outcome::Raw(result, activated)) => result_response(id, &result, &activated),
        Ok(Outcome::Done(resp, activated)) => match *resp {
            A2aResponse::Stream(events) => {
                let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
                let framing = JsonRpcFraming { id: id.to_owned() };
                sse::response(events, framing, inner.keep_alive, builder)
            }
            unary => {
                // The result is encoded straight into the envelope.
                let mut body = envelope(id, 768);
                match unary.write_json(&mut body) {
                    Some(Ok(())) => finish_result(body, &activated),
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
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .body(body)
}

enum Outcome {
    Notification,
    Done(Box<A2aResponse>, Activated),
    Raw(Vec<u8>, Activated),
}

type Failure<'b> = (Option<&'b str>, A2aError);

/// The request body, once its content type, size and nesting depth are checked.
async fn read_json_body(
    inner: &Inner,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<Bytes, A2aError> {
    check_json_content_type(req)?;
    let limits = inner.service.limits();
    let body = read_body(req, payload, limits.max_body_bytes).await?;
    json::check_depth(&body, limits.max_json_depth)?;
    Ok(body)
}

async fn process<'b>(
    inner: &Inner,
    req: &HttpRequest,
    body: &'b [u8],
    notification: &mut bool,
) -> Result<(Option<&'b str>, Result<Outcome, A2aError>), Failure<'b>> {
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
    let envelope: Envelope<'_> = match serde_json::from_str(text) {
        Ok(env) => env,
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            return Err((
                None,
                A2aError::InvalidRequest(format!("not a JSON-RPC 2.0 request object: {e}")),
            ));
        }
        Err(e) => return Err((None, A2aError::Parse(e.to_string()))),
    };
    let id = match envelope.id.0 {
        None => None,
        Some(raw) => {
            let t = raw.get().trim_start();
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
            Some(raw.get())
        }
    };
    let fail = |e: A2aError| (id, e);
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(fail(A2aError::InvalidRequest(
            r#"jsonrpc must be "2.0""#.into(),
        )));
    }
    // Borrowed from the body unless it holds escapes.
    let method: Cow<'_, str> =
        match envelope.method {
            Some(raw) => match serde_json::from_str::<&str>(raw.get()) {
                Ok(plain) => Cow::Borrowed(plain),
                Err(_) => Cow::Owned(serde_json::from_str::<String>(raw.get()).map_err(|_| {
                    fail(A2aError::InvalidRequest("method must be a string".into()))
                })?),
            },
            None => return Err(fail(A2aError::InvalidRequest("method is required".into()))),
        };
    *notification = id.is_none();
    let mut ctx = request_context(req, None);
    inner.service.begin(&mut ctx).map_err(fail)?;
    let params = envelope.params.map_or("{}", RawValue::get);
    let params_trim = params.trim_start();
    if !(params_trim.starts_with('{') || params_trim == "null") {
        return Err(fail(A2aError::invalid_field("params", "must be an object")));
    }
    let Some(op) = Operation::from_method(&method) else {
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
        // Boxed: this path's state would otherwise enlarge every request's future.
        let (result, activated) = Box::pin(inner.service.call_method(ctx, &method, value))
            .await
            .map_err(fail)?;
        if id.is_none() {
            return Ok((None, Ok(Outcome::Notification)));
        }
        let bytes =
            serde_json::to_vec(&result).map_err(|e| fail(A2aError::Internal(e.to_string())))?;
        return Ok((id, Ok(Outcome::Raw(bytes, inner.echo(activated)))));
    };
    let request = A2aRequest::from_raw(op, params).map_err(fail)?;
    if id.is_none() && op.is_streaming() {
        return Ok((None, Ok(Outcome::Notification)));
    }
    let notification = id.is_none();
    let result = inner.service.call(ctx, request).await;
    let outcome = match result {
        Ok(_) if notification => Ok(Outcome::Notification),
        Ok(served) => Ok(Outcome::Done(
            Box::new(served.response),
            inner.echo(served.activated),
        )),
        Err(_) if notification => Ok(Outcome::Notification),
        Err(e) => Err(e),
    };
    Ok((id, outcome))
}

/// A JSON-RPC error response (HTTP 200, or 413 for an oversized body).
pub(crate) fn error_response(id: &str, error: &A2aError) -> HttpResponse {
    let status = if matches!(error, A2aError::PayloadTooLarge { .. }) {
        StatusCode::PAYLOAD_TOO_LARGE
    } else {
        StatusCode::OK
    };
    let mut body = Vec::with_capacity(256);
    write_error(id, error, &mut body);
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .insert_header((super::http::A2A_VERSION, crate::PROTOCOL_VERSION))
        .body(body)
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
