//! v0.3's HTTP+JSON binding: its routes and the JSON of its bodies.
//!
//! v0.3's REST bodies are the JSON of v0.3's protobuf messages, not its JSON-RPC shapes: no
//! `kind`; a message's parts are `content`; file parts are `{file: {fileWithUri |
//! fileWithBytes, mimeType, name}}` and data parts `{data: {data}}`; `TASK_STATE_CANCELLED`;
//! push configs are `{name: "tasks/{t}/pushNotificationConfigs/{id}", pushNotificationConfig}`.
//! Errors are `{code, message, data?}` (the JSON-RPC error object) with an HTTP status.

use serde_json::{Map, Value};

use super::shape;
#[cfg(any(feature = "server", test))]
use super::shape::Shape;
use crate::error::A2aError;
use crate::protocol::Operation;

type Object = Map<String, Value>;

/// The v0.3 REST routes: method, path below the binding's base, operation.
#[cfg(any(feature = "server", test))]
pub(crate) const ROUTES: &[(&str, &str, Operation)] = &[
    ("POST", "/v1/message:send", Operation::SendMessage),
    (
        "POST",
        "/v1/message:stream",
        Operation::SendStreamingMessage,
    ),
    (
        "GET",
        "/v1/tasks/{id}:subscribe",
        Operation::SubscribeToTask,
    ),
    (
        "POST",
        "/v1/tasks/{id}:subscribe",
        Operation::SubscribeToTask,
    ),
    ("POST", "/v1/tasks/{id}:cancel", Operation::CancelTask),
    ("GET", "/v1/tasks/{id}", Operation::GetTask),
    (
        "POST",
        "/v1/tasks/{taskId}/pushNotificationConfigs",
        Operation::CreateTaskPushNotificationConfig,
    ),
    (
        "GET",
        "/v1/tasks/{taskId}/pushNotificationConfigs",
        Operation::ListTaskPushNotificationConfigs,
    ),
    (
        "GET",
        "/v1/tasks/{taskId}/pushNotificationConfigs/{id}",
        Operation::GetTaskPushNotificationConfig,
    ),
    (
        "DELETE",
        "/v1/tasks/{taskId}/pushNotificationConfigs/{id}",
        Operation::DeleteTaskPushNotificationConfig,
    ),
    ("GET", "/v1/card", Operation::GetExtendedAgentCard),
];

/// The HTTP status of an error on v0.3's REST binding (the table of the reference SDK's
/// server; the body's `code` says which error it is).
#[cfg(any(feature = "server", test))]
pub(crate) fn http_status(error: &A2aError) -> u16 {
    match error.code() {
        -32700 | -32600 => match error {
            A2aError::PayloadTooLarge { .. } => 413,
            A2aError::RequestTimeout(_) => 408,
            _ => 400,
        },
        -32601 | -32001 | -32007 => 404,
        -32602 => 422,
        -32002 => 409,
        -32003 | -32004 => 501,
        -32005 => 415,
        -32006 => 502,
        -31401 => 401,
        -31403 => 403,
        -31429 => 429,
        -32603 => match error {
            A2aError::Unavailable(_) => 503,
            _ => 500,
        },
        _ => 400,
    }
}

/// The error body: `{code, message, data}`.
#[cfg(any(feature = "server", test))]
pub(crate) fn error_body(error: &A2aError) -> Value {
    error.to_jsonrpc_error()
}

/// An error read from a v0.3 REST answer: the body's JSON-RPC `code` when it has one, the
/// HTTP status otherwise (the reference server sends `{message}` only).
#[cfg(any(feature = "client", test))]
pub(crate) fn error_in(status: u16, body: &Value) -> A2aError {
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("error without message");
    if let Some(code) = body
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
    {
        let details = body
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        return A2aError::from_wire(code, message, &details);
    }
    let msg = message.to_owned();
    match status {
        404 => A2aError::TaskNotFound {
            task_id: String::new(),
        },
        409 => A2aError::TaskNotCancelable {
            task_id: String::new(),
            state: String::new(),
        },
        501 => A2aError::UnsupportedOperation(msg),
        415 => A2aError::ContentTypeNotSupported(msg),
        401 => A2aError::Unauthenticated {
            challenge: String::new(),
        },
        403 => A2aError::PermissionDenied(msg),
        400 | 422 => A2aError::invalid_field("", msg),
        _ => A2aError::InvalidAgentResponse(format!("HTTP {status}: {msg}")),
    }
}

fn object(value: Value, field: &str) -> Result<Object, A2aError> {
    match value {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Object::new()),
        _ => Err(A2aError::invalid_field(field, "must be an object")),
    }
}

/// Moves `from` to `to` (the proto field name or its JSON name, whichever is there).
fn rename(m: &mut Object, from: &str, to: &str) {
    if let Some(v) = m.remove(from) {
        m.entry(to.to_owned()).or_insert(v);
    }
}

// ---- v0.3 proto JSON → v1.0 JSON ------------------------------------------------------------

fn part_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut p = object(value, field)?;
    if let Some(file) = p.remove("file") {
        let file = object(file, &format!("{field}.file"))?;
        for (k, v) in file {
            let to = match k.as_str() {
                "fileWithBytes" | "file_with_bytes" => "raw",
                "fileWithUri" | "file_with_uri" => "url",
                "mimeType" | "mime_type" => "mediaType",
                "name" => "filename",
                _ => continue,
            };
            p.insert(to.into(), v);
        }
    } else if let Some(data) = p.remove("data") {
        let data = match data {
            Value::Object(mut d) if d.contains_key("data") => d.remove("data").unwrap_or_default(),
            other => other,
        };
        p.insert("data".into(), data);
    } else if !p.contains_key("text") {
        return Err(A2aError::invalid_field(
            field,
            "must be a text, file or data part",
        ));
    }
    Ok(Value::Object(p))
}

fn parts_in(m: &mut Object, key: &str, field: &str) -> Result<(), A2aError> {
    let parts = match m.remove(key) {
        Some(Value::Array(parts)) => parts,
        Some(Value::Null) | None => return Ok(()),
        Some(_) => return Err(A2aError::invalid_field(field, "must be an array")),
    };
    let parts = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| part_in(p, &format!("{field}[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    m.insert("parts".into(), Value::Array(parts));
    Ok(())
}

fn role_in(m: &mut Object) {
    let v1 = match m.get("role").and_then(Value::as_str) {
        Some("user") => "ROLE_USER",
        Some("agent") => "ROLE_AGENT",
        _ => return,
    };
    m.insert("role".into(), Value::from(v1));
}

/// A v0.3 proto `Message` as v1.0's.
fn message_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut m = object(value, field)?;
    for (from, to) in [
        ("message_id", "messageId"),
        ("context_id", "contextId"),
        ("task_id", "taskId"),
    ] {
        rename(&mut m, from, to);
    }
    role_in(&mut m);
    if m.contains_key("content") {
        parts_in(&mut m, "content", &format!("{field}.content"))?;
    } else {
        parts_in(&mut m, "parts", &format!("{field}.parts"))?;
    }
    Ok(Value::Object(m))
}

#[cfg(any(feature = "client", test))]
fn state_in(s: &mut Object) {
    if s.get("state").and_then(Value::as_str) == Some("TASK_STATE_CANCELLED") {
        s.insert("state".into(), Value::from("TASK_STATE_CANCELED"));
    }
}

#[cfg(any(feature = "client", test))]
fn status_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut s = object(value, field)?;
    state_in(&mut s);
    rename(&mut s, "update", "message");
    if let Some(m) = s.remove("message")
        && !m.is_null()
    {
        s.insert(
            "message".into(),
            message_in(m, &format!("{field}.message"))?,
        );
    }
    Ok(Value::Object(s))
}

#[cfg(any(feature = "client", test))]
fn artifact_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut a = object(value, field)?;
    parts_in(&mut a, "parts", &format!("{field}.parts"))?;
    Ok(Value::Object(a))
}

#[cfg(any(feature = "client", test))]
fn each(
    m: &mut Object,
    key: &str,
    f: fn(Value, &str) -> Result<Value, A2aError>,
) -> Result<(), A2aError> {
    if let Some(Value::Array(items)) = m.remove(key) {
        let items = items
            .into_iter()
            .enumerate()
            .map(|(i, v)| f(v, &format!("{key}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        m.insert(key.to_owned(), Value::Array(items));
    }
    Ok(())
}

#[cfg(any(feature = "client", test))]
fn task_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut t = object(value, field)?;
    if let Some(s) = t.remove("status") {
        t.insert("status".into(), status_in(s, &format!("{field}.status"))?);
    }
    each(&mut t, "artifacts", artifact_in)?;
    each(&mut t, "history", message_in)?;
    Ok(Value::Object(t))
}

/// A v0.3 `PushNotificationConfig` of task `task_id` as a v1.0 `TaskPushNotificationConfig`.
fn push_config_in(value: Value, task_id: Option<&str>, field: &str) -> Result<Value, A2aError> {
    let mut c = object(value, field)?;
    if let Some(t) = task_id {
        c.insert("taskId".into(), Value::from(t));
    }
    if let Some(auth) = c.remove("authentication") {
        let mut auth = object(auth, &format!("{field}.authentication"))?;
        if let Some(schemes) = auth.remove("schemes") {
            let first = schemes
                .as_array()
                .and_then(|s| s.first())
                .cloned()
                .unwrap_or(Value::from(""));
            auth.insert("scheme".into(), first);
        }
        c.insert("authentication".into(), Value::Object(auth));
    }
    Ok(Value::Object(c))
}

/// The last segment of a resource name (`tasks/t/pushNotificationConfigs/p` → `p`).
#[cfg(any(feature = "server", test))]
fn last_segment(name: Option<&Value>) -> Option<String> {
    name.and_then(Value::as_str)
        .and_then(|n| n.rsplit('/').next())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The create body in any of its forms (the whole `CreateTaskPushNotificationConfigRequest`,
/// its `config`, or a bare `PushNotificationConfig`) as v1.0's config of task `task_id`.
#[cfg(any(feature = "server", test))]
fn create_push_in(body: Object, task_id: &str) -> Result<Value, A2aError> {
    let mut body = body;
    let config_id = body.remove("configId").or_else(|| body.remove("config_id"));
    let mut config = match body.remove("config") {
        Some(c) => object(c, "config")?,
        None => body,
    };
    let name = config.remove("name");
    let push = match config
        .remove("pushNotificationConfig")
        .or_else(|| config.remove("push_notification_config"))
    {
        Some(p) => p,
        None => Value::Object(config),
    };
    let mut push = object(
        push_config_in(push, Some(task_id), "pushNotificationConfig")?,
        "pushNotificationConfig",
    )?;
    let id = push
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            config_id
                .as_ref()
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        })
        .or_else(|| last_segment(name.as_ref()).filter(|s| s != "pushNotificationConfigs"))
        // v0.3 servers name a config after its task when the client gives no id.
        .unwrap_or_else(|| task_id.to_owned());
    push.insert("id".into(), Value::from(id));
    Ok(Value::Object(push))
}

/// What a v0.3 REST request carries: the path's `{id}` and `{taskId}`, the query and the body.
#[derive(Debug, Default)]
#[cfg(any(feature = "server", test))]
pub(crate) struct Input {
    pub(crate) id: Option<String>,
    pub(crate) task_id: Option<String>,
    pub(crate) query: Object,
    pub(crate) body: Object,
}

/// The v1.0 params of a v0.3 REST request for `op`.
#[cfg(any(feature = "server", test))]
pub(crate) fn request_in(op: Operation, input: Input) -> Result<Value, A2aError> {
    let Input {
        id,
        task_id,
        query,
        mut body,
    } = input;
    let id = id.unwrap_or_default();
    let task_id = task_id.unwrap_or_default();
    let mut p = Object::new();
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            let message = body
                .remove("message")
                .or_else(|| body.remove("request"))
                .unwrap_or(Value::Null);
            p.insert("message".into(), message_in(message, "message")?);
            let c = body.remove("configuration").unwrap_or(Value::Null);
            {
                let mut c = object(c, "configuration")?;
                rename(&mut c, "accepted_output_modes", "acceptedOutputModes");
                rename(&mut c, "history_length", "historyLength");
                // A proto bool: absent is false, so only `blocking: true` waits (as the
                // reference server reads it); v1.0 says it the other way round.
                let blocking = c.remove("blocking") == Some(Value::Bool(true));
                if !blocking && op == Operation::SendMessage {
                    c.insert("returnImmediately".into(), Value::Bool(true));
                }
                rename(&mut c, "push_notification", "pushNotification");
                if let Some(push) = c.remove("pushNotification") {
                    c.insert(
                        "taskPushNotificationConfig".into(),
                        push_config_in(push, None, "configuration.pushNotification")?,
                    );
                }
                p.insert("configuration".into(), Value::Object(c));
            }
            if let Some(m) = body.remove("metadata") {
                p.insert("metadata".into(), m);
            }
        }
        Operation::GetTask => {
            p.insert("id".into(), Value::from(id));
            let mut query = query;
            rename(&mut query, "history_length", "historyLength");
            if let Some(h) = query.remove("historyLength") {
                p.insert("historyLength".into(), h);
            }
        }
        Operation::CancelTask | Operation::SubscribeToTask => {
            p.insert("id".into(), Value::from(id));
            if op == Operation::CancelTask
                && let Some(m) = body.remove("metadata")
            {
                p.insert("metadata".into(), m);
            }
        }
        Operation::CreateTaskPushNotificationConfig => return create_push_in(body, &task_id),
        Operation::GetTaskPushNotificationConfig | Operation::DeleteTaskPushNotificationConfig => {
            p.insert("taskId".into(), Value::from(task_id));
            p.insert("id".into(), Value::from(id));
        }
        Operation::ListTaskPushNotificationConfigs => {
            p.insert("taskId".into(), Value::from(task_id));
            let mut query = query;
            rename(&mut query, "page_size", "pageSize");
            rename(&mut query, "page_token", "pageToken");
            for k in ["pageSize", "pageToken"] {
                if let Some(v) = query.remove(k) {
                    p.insert(k.into(), v);
                }
            }
        }
        _ => {}
    }
    Ok(Value::Object(p))
}

// ---- v1.0 JSON → v0.3 proto JSON ------------------------------------------------------------

fn part_out(value: Value) -> Value {
    let Value::Object(mut p) = value else {
        return value;
    };
    let mut out = Object::new();
    if let Some(text) = p.remove("text") {
        out.insert("text".into(), text);
    } else if let Some(data) = p.remove("data") {
        // A v0.3 data part holds an object; anything else travels wrapped.
        let data = if data.is_object() {
            data
        } else {
            serde_json::json!({ "value": data })
        };
        out.insert("data".into(), serde_json::json!({ "data": data }));
    } else {
        let mut file = Object::new();
        if let Some(raw) = p.remove("raw") {
            file.insert("fileWithBytes".into(), raw);
        }
        if let Some(url) = p.remove("url") {
            file.insert("fileWithUri".into(), url);
        }
        if let Some(media) = p.remove("mediaType") {
            file.insert("mimeType".into(), media);
        }
        if let Some(name) = p.remove("filename") {
            file.insert("name".into(), name);
        }
        out.insert("file".into(), Value::Object(file));
    }
    if let Some(m) = p.remove("metadata") {
        out.insert("metadata".into(), m);
    }
    Value::Object(out)
}

fn parts_out(m: &mut Object, key: &str) {
    let parts = match m.remove("parts") {
        Some(Value::Array(parts)) => parts.into_iter().map(part_out).collect(),
        _ => Vec::new(),
    };
    m.insert(key.into(), Value::Array(parts));
}

fn message_out(value: Value) -> Value {
    let Value::Object(mut m) = value else {
        return value;
    };
    parts_out(&mut m, "content");
    // v0.3 has no references to other tasks in its proto.
    m.remove("referenceTaskIds");
    Value::Object(m)
}

#[cfg(any(feature = "server", test))]
fn artifact_out(value: Value) -> Value {
    let Value::Object(mut a) = value else {
        return value;
    };
    parts_out(&mut a, "parts");
    Value::Object(a)
}

/// v0.3's REST bodies, the JSON of its protobuf messages: no `kind`, proto state names
/// (`TASK_STATE_CANCELLED`).
#[cfg(any(feature = "server", test))]
struct Proto;

#[cfg(any(feature = "server", test))]
impl Shape for Proto {
    const KINDS: bool = false;

    fn message(value: Value) -> Value {
        message_out(value)
    }

    fn artifact(value: Value) -> Value {
        artifact_out(value)
    }

    fn state(s: &mut Object) {
        if s.get("state").and_then(Value::as_str) == Some("TASK_STATE_CANCELED") {
            s.insert("state".into(), Value::from("TASK_STATE_CANCELLED"));
        }
    }
}

/// A v1.0 `StreamResponse` (or `SendMessageResponse`) as v0.3's: each member converted, in
/// its wrapper.
#[cfg(any(feature = "server", test))]
pub(crate) fn event_out(value: Value) -> Value {
    let Value::Object(m) = value else {
        return value;
    };
    let mut out = Object::new();
    for (key, inner) in m {
        let inner = shape::event_out::<Proto>(&key, inner);
        out.insert(key, inner);
    }
    Value::Object(out)
}

/// A v1.0 `TaskPushNotificationConfig` as v0.3's (`{name, pushNotificationConfig}`).
fn push_out(value: Value) -> Value {
    let Value::Object(c) = value else {
        return value;
    };
    let (task_id, c) = shape::push_config_out(c);
    let task_id = task_id.as_str().unwrap_or_default();
    let id = c.get("id").and_then(Value::as_str).unwrap_or_default();
    serde_json::json!({
        "name": format!("tasks/{task_id}/pushNotificationConfigs/{id}"),
        "pushNotificationConfig": c,
    })
}

/// The v0.3 REST body of the v1.0 result of `op`.
#[cfg(any(feature = "server", test))]
pub(crate) fn result_out(op: Operation, result: Value) -> Value {
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            event_out(result)
        }
        Operation::GetTask | Operation::CancelTask => shape::task_out::<Proto>(result),
        Operation::CreateTaskPushNotificationConfig | Operation::GetTaskPushNotificationConfig => {
            push_out(result)
        }
        Operation::ListTaskPushNotificationConfigs => {
            let Value::Object(mut m) = result else {
                return result;
            };
            let configs = match m.remove("configs") {
                Some(Value::Array(c)) => c.into_iter().map(push_out).collect(),
                _ => Vec::new(),
            };
            m.insert("configs".into(), Value::Array(configs));
            Value::Object(m)
        }
        Operation::DeleteTaskPushNotificationConfig => Value::Object(Object::new()),
        Operation::GetExtendedAgentCard => super::convert::result_out(op, result),
        _ => result,
    }
}

// ---- client side: v1.0 params → v0.3 requests, v0.3 bodies → v1.0 results ------------------

/// A v0.3 REST request: HTTP method, path below the interface URL (query included), body.
#[derive(Debug, PartialEq)]
#[cfg(any(feature = "client", test))]
pub(crate) struct Request {
    pub(crate) method: &'static str,
    pub(crate) path: String,
    pub(crate) body: Option<Value>,
}

/// The v0.3 REST request for the v1.0 params of `op` (`None`: v0.3 has no such operation).
#[cfg(any(feature = "client", test))]
pub(crate) fn request_out(op: Operation, params: Value) -> Option<Request> {
    let mut p = match params {
        Value::Object(p) => p,
        _ => Object::new(),
    };
    let mut s = |k: &str| {
        p.remove(k)
            .and_then(|v| v.as_str().map(crate::protocol::uri::encode_component))
            .unwrap_or_default()
    };
    let (method, path, body) = match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            let path = if op == Operation::SendMessage {
                "/v1/message:send"
            } else {
                "/v1/message:stream"
            };
            let mut body = Object::new();
            if let Some(m) = p.remove("message") {
                body.insert("message".into(), message_out(m));
            }
            // Always said: a proto bool left out is false (do not wait), v1.0's default waits.
            let mut c = match p.remove("configuration") {
                Some(Value::Object(c)) => c,
                _ => Object::new(),
            };
            let immediate = c.remove("returnImmediately") == Some(Value::Bool(true));
            c.insert("blocking".into(), Value::Bool(!immediate));
            if let Some(push) = c.remove("taskPushNotificationConfig")
                && let Some(cfg) = push_out(push).get("pushNotificationConfig")
            {
                c.insert("pushNotification".into(), cfg.clone());
            }
            body.insert("configuration".into(), Value::Object(c));
            if let Some(m) = p.remove("metadata") {
                body.insert("metadata".into(), m);
            }
            ("POST", path.to_owned(), Some(Value::Object(body)))
        }
        Operation::GetTask => {
            let id = s("id");
            let query = match p.get("historyLength") {
                Some(Value::Number(n)) => format!("?historyLength={n}"),
                _ => String::new(),
            };
            ("GET", format!("/v1/tasks/{id}{query}"), None)
        }
        Operation::CancelTask => {
            let id = s("id");
            let body = serde_json::json!({ "name": format!("tasks/{id}") });
            ("POST", format!("/v1/tasks/{id}:cancel"), Some(body))
        }
        Operation::SubscribeToTask => ("GET", format!("/v1/tasks/{}:subscribe", s("id")), None),
        Operation::CreateTaskPushNotificationConfig => {
            let task_id = p
                .get("taskId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let config = push_out(Value::Object(p));
            let config_id = config
                .pointer("/pushNotificationConfig/id")
                .cloned()
                .unwrap_or(Value::from(""));
            let body = serde_json::json!({
                "parent": format!("tasks/{task_id}"),
                "configId": config_id,
                "config": config,
            });
            (
                "POST",
                format!(
                    "/v1/tasks/{}/pushNotificationConfigs",
                    crate::protocol::uri::encode_component(&task_id)
                ),
                Some(body),
            )
        }
        Operation::GetTaskPushNotificationConfig | Operation::DeleteTaskPushNotificationConfig => {
            let (task_id, id) = (s("taskId"), s("id"));
            let method = if op == Operation::GetTaskPushNotificationConfig {
                "GET"
            } else {
                "DELETE"
            };
            (
                method,
                format!("/v1/tasks/{task_id}/pushNotificationConfigs/{id}"),
                None,
            )
        }
        Operation::ListTaskPushNotificationConfigs => (
            "GET",
            format!("/v1/tasks/{}/pushNotificationConfigs", s("taskId")),
            None,
        ),
        Operation::GetExtendedAgentCard => ("GET", "/v1/card".to_owned(), None),
        _ => return None,
    };
    Some(Request { method, path, body })
}

/// A v0.3 push config (`{name, pushNotificationConfig}`) as v1.0's.
#[cfg(any(feature = "client", test))]
fn push_in(value: Value) -> Result<Value, A2aError> {
    let mut m = object(value, "config")?;
    let name = m.remove("name");
    let task_id = name
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|n| n.strip_prefix("tasks/"))
        .and_then(|n| n.split('/').next())
        .map(str::to_owned);
    let config = m
        .remove("pushNotificationConfig")
        .or_else(|| m.remove("push_notification_config"))
        .unwrap_or(Value::Null);
    push_config_in(config, task_id.as_deref(), "pushNotificationConfig")
}

/// A v0.3 stream event or send result as v1.0's.
#[cfg(any(feature = "client", test))]
pub(crate) fn event_in(value: Value) -> Result<Value, A2aError> {
    let m = object(value, "result")?;
    let mut out = Object::new();
    for (key, inner) in m {
        let (key, inner) = match key.as_str() {
            "task" => (key, task_in(inner, "task")?),
            "message" | "msg" => ("message".to_owned(), message_in(inner, "message")?),
            "statusUpdate" | "status_update" => {
                let mut e = object(inner, "statusUpdate")?;
                e.remove("final");
                if let Some(s) = e.remove("status") {
                    e.insert("status".into(), status_in(s, "statusUpdate.status")?);
                }
                ("statusUpdate".to_owned(), Value::Object(e))
            }
            "artifactUpdate" | "artifact_update" => {
                let mut e = object(inner, "artifactUpdate")?;
                if let Some(a) = e.remove("artifact") {
                    e.insert(
                        "artifact".into(),
                        artifact_in(a, "artifactUpdate.artifact")?,
                    );
                }
                ("artifactUpdate".to_owned(), Value::Object(e))
            }
            _ => continue,
        };
        out.insert(key, inner);
    }
    if out.is_empty() {
        return Err(A2aError::InvalidAgentResponse(
            "a v0.3 result with none of task, message, statusUpdate, artifactUpdate".into(),
        ));
    }
    Ok(Value::Object(out))
}

/// The v1.0 result of the v0.3 REST body answering `op`.
#[cfg(any(feature = "client", test))]
pub(crate) fn result_in(op: Operation, body: Value) -> Result<Value, A2aError> {
    let invalid = |e: A2aError| A2aError::InvalidAgentResponse(format!("a v0.3 answer: {e}"));
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            event_in(body)
        }
        Operation::GetTask | Operation::CancelTask => task_in(body, "task").map_err(invalid),
        Operation::CreateTaskPushNotificationConfig | Operation::GetTaskPushNotificationConfig => {
            push_in(body).map_err(invalid)
        }
        Operation::ListTaskPushNotificationConfigs => {
            let items = match body {
                Value::Object(mut m) => m.remove("configs").unwrap_or(Value::Null),
                other => other,
            };
            let items = match items {
                Value::Array(items) => items,
                Value::Null => Vec::new(),
                _ => {
                    return Err(A2aError::InvalidAgentResponse(
                        "a v0.3 push config list holds an array of configs".into(),
                    ));
                }
            };
            let configs = items
                .into_iter()
                .map(push_in)
                .collect::<Result<Vec<_>, _>>()
                .map_err(invalid)?;
            Ok(serde_json::json!({ "configs": configs }))
        }
        Operation::DeleteTaskPushNotificationConfig => Ok(Value::Object(Object::new())),
        Operation::GetExtendedAgentCard => Ok(super::convert::card_in(body)),
        _ => Ok(body),
    }
}

#[cfg(test)]
mod tests;
