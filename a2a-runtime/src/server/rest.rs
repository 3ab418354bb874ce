//! The HTTP+JSON (REST) binding: every route of the spec, plain and under a `/{tenant}` prefix.
//!
//! POST bodies are the request message (fields bound in the path win); GET and DELETE take their
//! fields from the query string (camelCase names, decoded with the same ProtoJSON leniency as
//! bodies). Errors are `google.rpc.Status` in AIP-193 form with the table's HTTP status.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Map, Value};

use super::Inner;
use super::http::ResponseExt as _;
use super::http::{A2A_JSON, check_json_content_type, content_type, read_body};
use super::sse::{self, Framing};
use crate::core::{Limits, SeqEvent};
use crate::error::A2aError;
use crate::json;
use crate::protocol::{A2aRequest, Operation};
use crate::service::{Answer, Decoded, Payload, Target};

/// Serves one REST request for `op`.
pub(crate) async fn handle(
    inner: web::Data<Inner>,
    req: HttpRequest,
    payload: web::Payload,
    op: Operation,
) -> HttpResponse {
    handle_in(inner, req, payload, op, None).await
}

/// Serves one REST request for `op` in `tenant` (`None`: the tenant of the path).
pub(crate) async fn handle_in(
    inner: web::Data<Inner>,
    req: HttpRequest,
    payload: web::Payload,
    op: Operation,
    tenant: Option<&'static str>,
) -> HttpResponse {
    let tenant = tenant
        .or_else(|| req.match_info().get("tenant"))
        .map(str::to_owned);
    serve(inner, req, payload, tenant, Target::Operation(op)).await
}

/// Serves an extension method at `/extensions/…` (POST, JSON body = params).
pub(crate) async fn handle_method(
    inner: web::Data<Inner>,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let info = req.match_info();
    let tenant = info.get("tenant").map(str::to_owned);
    let path = format!("/extensions/{}", info.get("tail").unwrap_or_default());
    serve(inner, req, payload, tenant, Target::MethodAt(path)).await
}

/// Runs a REST request for `target` through the pipeline and encodes its answer.
async fn serve(
    inner: web::Data<Inner>,
    req: HttpRequest,
    mut payload: web::Payload,
    tenant: Option<String>,
    target: Target,
) -> HttpResponse {
    let meta = super::http::request_meta(&req, tenant.clone(), Some(target));
    let mut body = Body {
        req: &req,
        payload: &mut payload,
        tenant,
    };
    let served = inner.pipeline.serve(meta, &mut body);
    match super::shutdown::until_over(&inner.over, served).await {
        Err(e) => super::http::closing_on_timeout(error_response(&e), &e, payload),
        Ok(Answer::Method { result, activated }) => match serde_json::to_vec(&result) {
            Ok(body) => HttpResponse::Ok()
                .a2a_headers(&activated)
                .insert_header(content_type(A2A_JSON))
                .body(body),
            Err(e) => error_response(&A2aError::Internal(e.to_string())),
        },
        Ok(Answer::Operation(served)) => match served.into_stream() {
            Ok((events, activated)) => {
                let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
                sse::response(events, RestFraming, &inner, builder, &req)
            }
            Err(unary) => match unary.to_json() {
                Some(Ok(body)) => HttpResponse::Ok()
                    .a2a_headers(&unary.activated)
                    .insert_header(content_type(A2A_JSON))
                    .body(body),
                _ => error_response(&A2aError::Internal("could not encode the result".into())),
            },
        },
    }
}

/// An answer of another kind than the request (a method's result to an operation).
pub(crate) fn mismatch() -> A2aError {
    A2aError::Internal("the answer does not fit the request".into())
}

/// A REST request's input: its body (POST) or its query, with the fields of its path.
pub(crate) struct Body<'r> {
    pub(crate) req: &'r HttpRequest,
    pub(crate) payload: &'r mut web::Payload,
    pub(crate) tenant: Option<String>,
}

impl Payload for Body<'_> {
    async fn target(&mut self, _: &Limits) -> Result<Target, A2aError> {
        // Every route names its target.
        Err(mismatch())
    }

    async fn decode(&mut self, target: &Target, limits: &Limits) -> Result<Decoded, A2aError> {
        match target {
            Target::Operation(op) => {
                let object = self.object(limits).await?;
                A2aRequest::from_params(*op, Value::Object(object)).map(Decoded::Operation)
            }
            Target::MethodAt(_) => self.method_params(limits).await.map(Decoded::Method),
            Target::Method(_) | Target::V0_3 { .. } => Err(mismatch()),
        }
    }
}

impl Body<'_> {
    /// The request as one JSON object: the body's or the query's fields, then those bound in
    /// the path, which take precedence.
    async fn object(&mut self, limits: &Limits) -> Result<Map<String, Value>, A2aError> {
        let mut object = if self.req.method() == actix_web::http::Method::POST {
            read_object(self.req, self.payload, limits).await?
        } else {
            query_object(self.req.query_string())
        };
        let info = self.req.match_info();
        if let Some(id) = info.get("id") {
            object.insert("id".to_owned(), Value::String(id.to_owned()));
        }
        if let Some(task_id) = info.get("taskId") {
            object.remove("task_id");
            object.insert("taskId".to_owned(), Value::String(task_id.to_owned()));
        }
        if let Some(t) = &self.tenant {
            object.insert("tenant".to_owned(), Value::String(t.clone()));
        }
        Ok(object)
    }

    /// An extension method's params: the JSON body (an empty body is an empty object).
    async fn method_params(&mut self, limits: &Limits) -> Result<Value, A2aError> {
        if self.req.headers().contains_key(header::CONTENT_TYPE) {
            check_json_content_type(self.req)?;
        }
        let body = read_body(self.req, self.payload, limits).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            Ok(Value::Object(Map::new()))
        } else {
            json::decode::<Value>(&body, limits.max_json_depth)
        }
    }
}

/// A POST body: a JSON object (an empty body is an empty object), its content type checked.
pub(crate) async fn read_object(
    req: &HttpRequest,
    payload: &mut web::Payload,
    limits: &Limits,
) -> Result<Map<String, Value>, A2aError> {
    let declared_empty = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() == b"0");
    if !declared_empty && req.headers().contains_key(header::CONTENT_TYPE) {
        check_json_content_type(req)?;
    }
    let body = read_body(req, payload, limits).await?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    if !req.headers().contains_key(header::CONTENT_TYPE) {
        check_json_content_type(req)?;
    }
    match json::decode::<Value>(&body, limits.max_json_depth)? {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        _ => Err(A2aError::invalid_field(
            "",
            "the request body must be a JSON object",
        )),
    }
}

/// The query string as a JSON object of strings (enum numbers become numbers).
pub(crate) fn query_object(query: &str) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in crate::protocol::uri::query_pairs(query) {
        if k.eq_ignore_ascii_case("a2a-version") {
            continue;
        }
        let value = if k == "status" && !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            v.parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(v))
        } else {
            Value::String(v)
        };
        m.insert(k, value);
    }
    m
}

/// A REST error response: `{"error": {code, status, message, details}}`.
pub(crate) fn error_response(error: &A2aError) -> HttpResponse {
    let status =
        StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(&error.to_rest_body()).unwrap_or_default();
    let mut response = HttpResponse::build(status);
    response
        .insert_header(content_type("application/json"))
        .insert_header(super::http::version_header());
    super::http::challenge(&mut response, error);
    let mut resp = response.body(body);
    super::failure::mark_failure(&mut resp, error);
    resp
}

struct RestFraming;

impl Framing for RestFraming {
    fn event(&self, event: &SeqEvent, out: &mut Vec<u8>) {
        let _ = crate::json::writer::to_writer(out, &event.event);
    }

    fn error(&self, error: &A2aError, out: &mut Vec<u8>) {
        let _ = serde_json::to_writer(&mut *out, &error.to_rest_body());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_becomes_a_lenient_object() {
        let m = query_object("pageSize=5&status=2&includeArtifacts=true&A2A-Version=1.0");
        assert_eq!(m.get("pageSize"), Some(&Value::String("5".into())));
        assert_eq!(m.get("status"), Some(&Value::from(2)));
        assert!(!m.contains_key("A2A-Version"));
    }
}
