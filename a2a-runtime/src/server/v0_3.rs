//! v0.3 on the JSON-RPC binding: its method names are served by the same core operations, their
//! params and results translated by [`crate::compat::v0_3::convert`].

use std::borrow::Cow;

use actix_web::HttpResponse;
use actix_web::http::header::{HeaderName, HeaderValue};
use serde_json::Value;

use super::http::content_type;
use super::sse::{self, Framing};
use super::{Inner, ResponseExt as _};
use crate::compat::v0_3::{self, convert};
use crate::core::{SeqEvent, Served};
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::json::{
    self,
    rpc::{self, Member},
};
use crate::protocol::{A2aRequest, Operation};

/// Which protocol versions a server answers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Versions {
    pub(crate) v1_0: bool,
    pub(crate) v0_3: bool,
}

impl Default for Versions {
    fn default() -> Self {
        Self {
            v1_0: true,
            v0_3: true,
        }
    }
}

/// The operation of `method` when it is a v0.3 method name this server answers.
pub(crate) fn operation(inner: &Inner, method: &str) -> Option<Operation> {
    if inner.versions.v0_3 {
        v0_3::operation(method)
    } else {
        None
    }
}

/// Starts a v0.3 request: its version is checked (no `A2A-Version`, or `0.3`), the core's
/// checks run as for v1.0, and the params are translated.
pub(crate) fn begin(
    inner: &Inner,
    mut ctx: RequestContext,
    method: &str,
    op: Operation,
    params: &str,
) -> Result<(RequestContext, A2aRequest), A2aError> {
    let header = ctx.protocol_version.as_deref();
    if !v0_3::is_requested(header) {
        // A v0.3 method asked for as another version is no method of that version.
        return Err(A2aError::MethodNotFound {
            method: method.to_owned(),
            hint: Vec::new(),
        });
    }
    // The core serves v1.0: the request enters it translated.
    ctx.protocol_version = Some(Cow::Borrowed(crate::PROTOCOL_VERSION));
    inner.service.begin(&mut ctx)?;
    let value: Value = if params.trim() == "null" {
        Value::Object(Default::default())
    } else {
        json::from_raw(params)?
    };
    let value = convert::params_in(op, value)?;
    let request = A2aRequest::from_params(op, value)?;
    Ok((ctx, request))
}

/// The JSON-RPC response to a v0.3 request: `A2A-Version: 0.3`, and the activated extensions
/// also in v0.3's `X-A2A-Extensions`.
pub(crate) fn response(inner: &Inner, id: &str, op: Operation, served: Served) -> HttpResponse {
    let mut response = respond(inner, id, op, served);
    mark_v0_3(&mut response);
    response
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

fn respond(inner: &Inner, id: &str, op: Operation, served: Served) -> HttpResponse {
    match served.into_stream() {
        Ok((events, activated)) => {
            let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
            let framing = V03Framing { id: id.to_owned() };
            sse::response(events, framing, inner, builder)
        }
        Err(unary) => {
            let result = match unary.to_json() {
                Some(Ok(json)) => serde_json::from_slice::<Value>(&json).ok(),
                _ => None,
            };
            let Some(result) = result else {
                return super::jsonrpc::error_response(
                    id,
                    &A2aError::Internal("could not encode the result".into()),
                );
            };
            let result = convert::result_out(op, result);
            let mut body = Vec::with_capacity(512);
            write_result(id, &result, &mut body);
            HttpResponse::Ok()
                .a2a_headers(&unary.activated)
                .insert_header(content_type("application/json"))
                .body(body)
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
