//! v0.3 on the HTTP+JSON binding: its `/v1/…` routes below the REST base, served by the same
//! core operations, their bodies translated by [`crate::compat::v0_3::rest`].
//!
//! A request to one of these paths is v0.3's when it has no `A2A-Version` (or `0.3`); with
//! another version it is a v1.0 request of tenant `v1`, which these paths also are.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;

use super::http::{content_type, request_context};
use super::sse::{self, Framing};
use super::{Inner, ResponseExt as _, rest};
use crate::auth::AuthOperation;
use crate::compat::v0_3::{self, rest as wire};
use crate::core::{SeqEvent, Served};
use crate::error::A2aError;
use crate::protocol::{A2aRequest, Operation};

/// The tenant a v1.0 request to a v0.3 path is in.
const TENANT: &str = "v1";

/// Serves one request to a v0.3 REST route of `op`.
pub(crate) async fn handle(
    inner: web::Data<Inner>,
    req: HttpRequest,
    mut payload: web::Payload,
    op: Operation,
) -> HttpResponse {
    let version = req
        .headers()
        .get(super::A2A_VERSION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| super::http::query_param(req.query_string(), "A2A-Version"));
    if !v0_3::is_requested(version.as_deref()) {
        if op == Operation::GetExtendedAgentCard {
            // `/v1/card` is no v1.0 route.
            return rest::error_response(&A2aError::MethodNotFound {
                method: req.path().to_owned(),
                hint: Vec::new(),
            });
        }
        return rest::handle_in(inner, req, payload, op, Some(TENANT)).await;
    }
    let processed = process(&inner, &req, &mut payload, op);
    let mut response = match super::shutdown::until_over(&inner.over, processed).await {
        Err(e) => super::http::closing_on_timeout(error_response(&e), &e, payload),
        Ok(served) => respond(&inner, op, served),
    };
    super::v0_3::mark_v0_3(&mut response);
    response
}

async fn process(
    inner: &Inner,
    req: &HttpRequest,
    payload: &mut web::Payload,
    op: Operation,
) -> Result<Served, A2aError> {
    let mut ctx = request_context(req, None);
    if let Some(guard) = &inner.guard {
        let auth = rest::auth_request(req, &ctx, None, AuthOperation::Core(op));
        ctx.principal = guard.authenticate(&auth).await?;
    }
    // The core serves v1.0: the request enters it translated.
    ctx.protocol_version = Some(std::borrow::Cow::Borrowed(crate::PROTOCOL_VERSION));
    inner.service.begin(&mut ctx)?;
    let info = req.match_info();
    let body = if req.method() == actix_web::http::Method::POST {
        rest::read_object(inner, req, payload).await?
    } else {
        Default::default()
    };
    let input = wire::Input {
        id: info.get("id").map(str::to_owned),
        task_id: info.get("taskId").map(str::to_owned),
        query: rest::query_object(req.query_string()),
        body,
    };
    let params = wire::request_in(op, input)?;
    let request = A2aRequest::from_params(op, params)?;
    inner.authorize(&mut ctx, &request)?;
    let mut served = inner.service.call(ctx, request).await?;
    served.activated = inner.echo(std::mem::take(&mut served.activated));
    Ok(served)
}

fn respond(inner: &Inner, op: Operation, served: Served) -> HttpResponse {
    match served.into_stream() {
        Ok((events, activated)) => {
            let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
            sse::response(events, V03RestFraming, inner, builder)
        }
        Err(unary) => {
            let result = match unary.to_json() {
                Some(Ok(json)) => serde_json::from_slice::<Value>(&json).ok(),
                _ => None,
            };
            let Some(result) = result else {
                return error_response(&A2aError::Internal("could not encode the result".into()));
            };
            let body = serde_json::to_vec(&wire::result_out(op, result)).unwrap_or_default();
            HttpResponse::Ok()
                .a2a_headers(&unary.activated)
                .insert_header(content_type("application/json"))
                .body(body)
        }
    }
}

/// A v0.3 REST error: `{code, message, data}` with the status of v0.3's table.
fn error_response(error: &A2aError) -> HttpResponse {
    let status =
        StatusCode::from_u16(wire::http_status(error)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(&wire::error_body(error)).unwrap_or_default();
    let mut response = HttpResponse::build(status);
    response.insert_header(content_type("application/json"));
    super::http::challenge(&mut response, error);
    let mut resp = response.body(body);
    super::observe::mark_failure(&mut resp, error);
    resp
}

/// Frames stream events as v0.3 proto JSON (`StreamResponse`).
struct V03RestFraming;

impl Framing for V03RestFraming {
    fn event(&self, event: &SeqEvent, out: &mut Vec<u8>) {
        let value = serde_json::to_value(&event.event).unwrap_or(Value::Null);
        let _ = serde_json::to_writer(&mut *out, &wire::event_out(value));
    }

    fn error(&self, error: &A2aError, out: &mut Vec<u8>) {
        let _ = serde_json::to_writer(&mut *out, &wire::error_body(error));
    }
}
