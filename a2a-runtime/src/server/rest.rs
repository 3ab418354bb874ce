//! The HTTP+JSON (REST) binding: every route of the spec, plain and under a `/{tenant}` prefix.
//!
//! POST bodies are the request message (fields bound in the path win); GET and DELETE take their
//! fields from the query string (camelCase names, decoded with the same ProtoJSON leniency as
//! bodies). Errors are `google.rpc.Status` in AIP-193 form with the table's HTTP status.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Map, Value};

use super::http::{A2A_JSON, check_json_content_type, content_type, read_body, request_context};
use super::sse::{self, Framing};
use super::{Inner, ResponseExt as _};
use crate::auth::{AuthOperation, AuthRequest};
use crate::core::{SeqEvent, Served};
use crate::error::A2aError;
use crate::extension::Activated;
use crate::json;
use crate::protocol::{A2aRequest, Operation};

/// Where an operation takes its input from.
#[derive(Clone, Copy, Debug)]
enum Input {
    Body,
    Query,
}

/// The REST routes: method, path below the binding's base, operation, input.
pub(crate) const ROUTES: &[(&str, &str, Operation)] = &[
    ("POST", "/message:send", Operation::SendMessage),
    ("POST", "/message:stream", Operation::SendStreamingMessage),
    ("GET", "/tasks", Operation::ListTasks),
    ("GET", "/tasks/{id}:subscribe", Operation::SubscribeToTask),
    ("POST", "/tasks/{id}:subscribe", Operation::SubscribeToTask),
    ("POST", "/tasks/{id}:cancel", Operation::CancelTask),
    ("GET", "/tasks/{id}", Operation::GetTask),
    (
        "POST",
        "/tasks/{taskId}/pushNotificationConfigs",
        Operation::CreateTaskPushNotificationConfig,
    ),
    (
        "GET",
        "/tasks/{taskId}/pushNotificationConfigs",
        Operation::ListTaskPushNotificationConfigs,
    ),
    (
        "GET",
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        Operation::GetTaskPushNotificationConfig,
    ),
    (
        "DELETE",
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        Operation::DeleteTaskPushNotificationConfig,
    ),
    ("GET", "/extendedAgentCard", Operation::GetExtendedAgentCard),
];

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
    mut payload: web::Payload,
    op: Operation,
    tenant: Option<&'static str>,
) -> HttpResponse {
    let processed = process(&inner, &req, &mut payload, op, tenant);
    match super::shutdown::until_over(&inner.over, processed).await {
        Err(e) => super::http::closing_on_timeout(error_response(&e), &e, payload),
        Ok(served) => match served.into_stream() {
            Ok((events, activated)) => {
                let builder = HttpResponse::Ok().a2a_headers_builder(&activated);
                sse::response(events, RestFraming, &inner, builder)
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

async fn process(
    inner: &Inner,
    req: &HttpRequest,
    payload: &mut web::Payload,
    op: Operation,
    tenant: Option<&'static str>,
) -> Result<Served, A2aError> {
    let info = req.match_info();
    let tenant = tenant.or_else(|| info.get("tenant")).map(str::to_owned);
    let mut ctx = request_context(req, tenant.as_deref());
    if let Some(guard) = &inner.guard {
        ctx.principal = guard
            .authenticate(&auth_request(
                req,
                &ctx,
                tenant.as_deref(),
                AuthOperation::Core(op),
            ))
            .await?;
    }
    inner.service.begin(&mut ctx)?;
    let input = if req.method() == actix_web::http::Method::POST {
        Input::Body
    } else {
        Input::Query
    };
    let mut object = match input {
        Input::Body => read_object(inner, req, payload).await?,
        Input::Query => query_object(req.query_string()),
    };
    // Fields bound in the path take precedence over the body's or the query's.
    if let Some(id) = info.get("id") {
        object.insert("id".to_owned(), Value::String(id.to_owned()));
    }
    if let Some(task_id) = info.get("taskId") {
        object.remove("task_id");
        object.insert("taskId".to_owned(), Value::String(task_id.to_owned()));
    }
    if let Some(t) = &tenant {
        object.insert("tenant".to_owned(), Value::String(t.clone()));
    }
    let request = A2aRequest::from_params(op, Value::Object(object))?;
    inner.authorize(&mut ctx, &request)?;
    let mut served = inner.service.call(ctx, request).await?;
    served.activated = inner.echo(std::mem::take(&mut served.activated));
    Ok(served)
}

/// A POST body: a JSON object (an empty body is an empty object), its content type checked.
pub(crate) async fn read_object(
    inner: &Inner,
    req: &HttpRequest,
    payload: &mut web::Payload,
) -> Result<Map<String, Value>, A2aError> {
    let limits = inner.service.limits();
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

/// Serves an extension method at `/extensions/…` (POST, JSON body = params).
pub(crate) async fn handle_method(
    inner: web::Data<Inner>,
    req: HttpRequest,
    mut payload: web::Payload,
) -> HttpResponse {
    match process_method(&inner, &req, &mut payload).await {
        Err(e) => super::http::closing_on_timeout(error_response(&e), &e, payload),
        Ok((result, activated)) => match serde_json::to_vec(&result) {
            Ok(body) => HttpResponse::Ok()
                .a2a_headers(&activated)
                .insert_header(content_type(A2A_JSON))
                .body(body),
            Err(e) => error_response(&A2aError::Internal(e.to_string())),
        },
    }
}

async fn process_method(
    inner: &Inner,
    req: &HttpRequest,
    payload: &mut web::Payload,
) -> Result<(Value, Activated), A2aError> {
    let info = req.match_info();
    let tenant = info.get("tenant").map(str::to_owned);
    let path = format!("/extensions/{}", info.get("tail").unwrap_or_default());
    let mut ctx = request_context(req, tenant.as_deref());
    if let Some(guard) = &inner.guard {
        let op = AuthOperation::Method(&path);
        ctx.principal = guard
            .authenticate(&auth_request(req, &ctx, tenant.as_deref(), op))
            .await?;
    }
    inner.service.begin(&mut ctx)?;
    let Some(method) = inner.service.method_at(&path) else {
        return Err(A2aError::MethodNotFound {
            method: path,
            hint: Vec::new(),
        });
    };
    let limits = inner.service.limits();
    if req.headers().contains_key(header::CONTENT_TYPE) {
        check_json_content_type(req)?;
    }
    let body = read_body(req, payload, limits).await?;
    let params = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        json::decode::<Value>(&body, limits.max_json_depth)?
    };
    if let Some(guard) = &inner.guard {
        let tenant = tenant
            .as_deref()
            .or_else(|| params.get("tenant").and_then(Value::as_str))
            .unwrap_or_default();
        guard.authorize_method(&ctx, method, tenant)?;
    }
    let (result, activated) = inner.service.call_method(ctx, method, params).await?;
    Ok((result, inner.echo(activated)))
}

/// What the authenticator sees of a REST request.
pub(crate) fn auth_request<'a>(
    req: &'a HttpRequest,
    ctx: &'a crate::extension::RequestContext,
    tenant: Option<&'a str>,
    operation: AuthOperation<'a>,
) -> AuthRequest<'a> {
    AuthRequest {
        headers: &ctx.headers,
        peer: req.peer_addr(),
        peer_certificate: super::http::peer_certificate(req),
        tenant,
        operation: Some(operation),
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
    super::observe::mark_failure(&mut resp, error);
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
