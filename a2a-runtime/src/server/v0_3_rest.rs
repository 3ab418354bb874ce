//! v0.3 on the HTTP+JSON binding: its `/v1/…` routes below the REST base, served by the same
//! core operations, their bodies translated by [`crate::compat::v0_3::rest`].
//!
//! A request to one of these paths is v0.3's when it has no `A2A-Version` (or `0.3`); with
//! another version it is a v1.0 request of tenant `v1`, which these paths also are.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;

use super::http::ResponseExt as _;
use super::http::content_type;
use super::sse::{self, Framing};
use super::{Inner, rest};
use crate::compat::v0_3::{self, rest as wire};
use crate::core::{Limits, OperationResponse, SeqEvent};
use crate::error::A2aError;
use crate::protocol::{A2aRequest, Operation};
use crate::service::{Answer, Decoded, Payload, Target};

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
    let target = Target::V0_3 {
        operation: op,
        method: req.path().to_owned(),
    };
    let meta = super::http::request_meta(&req, None, Some(target));
    let mut body = Body {
        req: &req,
        payload: &mut payload,
    };
    let served = inner.pipeline.serve(meta, &mut body);
    let mut response = match super::shutdown::until_over(&inner.over, served).await {
        Err(e) => super::http::closing_on_timeout(error_response(&e), &e, payload),
        Ok(Answer::Method { .. }) => error_response(&rest::mismatch()),
        Ok(Answer::Operation(served)) => respond(&inner, op, served, &req),
    };
    super::v0_3::mark_v0_3(&mut response);
    response
}

/// A v0.3 REST request's input: its body (POST), query and path fields, translated.
struct Body<'r> {
    req: &'r HttpRequest,
    payload: &'r mut web::Payload,
}

impl Payload for Body<'_> {
    async fn target(&mut self, _: &Limits) -> Result<Target, A2aError> {
        // Every route names its target.
        Err(rest::mismatch())
    }

    async fn decode(&mut self, target: &Target, limits: &Limits) -> Result<Decoded, A2aError> {
        let Target::V0_3 { operation: op, .. } = target else {
            return Err(rest::mismatch());
        };
        let body = if self.req.method() == actix_web::http::Method::POST {
            rest::read_object(self.req, self.payload, limits).await?
        } else {
            Default::default()
        };
        let info = self.req.match_info();
        let input = wire::Input {
            id: info.get("id").map(str::to_owned),
            task_id: info.get("taskId").map(str::to_owned),
            query: rest::query_object(self.req.query_string()),
            body,
        };
        let params = wire::request_in(*op, input)?;
        A2aRequest::from_params(*op, params).map(Decoded::Operation)
    }
}

fn respond(
    inner: &Inner,
    op: Operation,
    served: OperationResponse,
    req: &actix_web::HttpRequest,
) -> HttpResponse {
    match served.into_stream() {
        Ok((events, activated)) => {
            let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
            sse::response(events, V03RestFraming, inner, builder, req)
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
    super::failure::mark_failure(&mut resp, error);
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
