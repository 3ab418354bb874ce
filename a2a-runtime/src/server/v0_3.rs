//! v0.3 on the JSON-RPC binding: its method names are served by the same core operations, their
//! params and results translated by [`crate::compat::v0_3::convert`].

use actix_web::HttpResponse;
use actix_web::http::header::{HeaderName, HeaderValue};
use serde_json::Value;

use super::Inner;
use super::http::ResponseExt as _;
use super::http::content_type;
use super::sse::{self, Framing};
use crate::compat::v0_3::convert;
use crate::core::{OperationResponse, SeqEvent};
use crate::error::A2aError;
use crate::json::rpc::{self, Member};
use crate::protocol::Operation;

/// The JSON-RPC response to a v0.3 request: `A2A-Version: 0.3`, and the activated extensions
/// also in v0.3's `X-A2A-Extensions`; an error when the result cannot be encoded.
pub(crate) fn response(
    inner: &Inner,
    id: &str,
    op: Operation,
    served: OperationResponse,
    req: &actix_web::HttpRequest,
) -> Result<HttpResponse, A2aError> {
    let mut response = respond(inner, id, op, served, req)?;
    mark_v0_3(&mut response);
    Ok(response)
}

/// Marks a response as v0.3's: `A2A-Version: 0.3`, and the activated extensions also in
/// v0.3's `X-A2A-Extensions`.
pub(crate) fn mark_v0_3(response: &mut HttpResponse) {
    let headers = response.headers_mut();
    headers.insert(
        HeaderName::from_static(super::A2A_VERSION),
        HeaderValue::from_static("0.3"),
    );
    if let Some(v) = headers.get(super::A2A_EXTENSIONS).cloned() {
        headers.insert(HeaderName::from_static(super::X_A2A_EXTENSIONS), v);
    }
}

fn respond(
    inner: &Inner,
    id: &str,
    op: Operation,
    served: OperationResponse,
    req: &actix_web::HttpRequest,
) -> Result<HttpResponse, A2aError> {
    match served.into_stream() {
        Ok((events, activated)) => {
            let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
            let framing = V03Framing { id: id.to_owned() };
            Ok(sse::response(events, framing, inner, builder, req))
        }
        Err(unary) => {
            let result = match unary.to_json() {
                Some(Ok(json)) => serde_json::from_slice::<Value>(&json).ok(),
                _ => None,
            };
            let Some(result) = result else {
                return Err(A2aError::Internal("could not encode the result".into()));
            };
            let result = convert::result_out(op, result);
            let mut body = Vec::with_capacity(512);
            write_result(id, &result, &mut body);
            Ok(HttpResponse::Ok()
                .a2a_headers(&unary.activated)
                .insert_header(content_type("application/json"))
                .body(body))
        }
    }
}

fn write_result(id: &str, result: &Value, out: &mut Vec<u8>) {
    let _ = rpc::write(out, id, Member::Result, result);
}

/// Frames stream events as v0.3 JSON-RPC responses (`kind`, `final`).
struct V03Framing {
    id: String,
}

impl Framing for V03Framing {
    fn event(&self, event: &SeqEvent, out: &mut Vec<u8>) {
        let value = serde_json::to_value(&event.event).unwrap_or(Value::Null);
        write_result(&self.id, &convert::event_out(value), out);
    }

    fn error(&self, error: &A2aError, out: &mut Vec<u8>) {
        let _ = rpc::write(out, &self.id, Member::Error, &convert::error_out(error));
    }
}
