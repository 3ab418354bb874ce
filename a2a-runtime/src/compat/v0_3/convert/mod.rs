//! v0.3 JSON ⇄ v1.0 JSON, shape by shape.
//!
//! `*_in` functions read what a v0.3 peer sends and give the v1.0 shape our types decode;
//! `*_out` functions take the v1.0 JSON our types encode and give the v0.3 shape. Members the
//! two versions share are moved as they are; unknown members are kept (v1.0 decoding ignores
//! them, v0.3 peers too).

use serde_json::{Map, Value};

use super::shape;
#[cfg(any(feature = "server", test))]
use super::shape::Shape;
use crate::error::A2aError;
use crate::protocol::Operation;
#[cfg(any(feature = "server", test))]
use crate::types::AgentCard;

type Object = Map<String, Value>;

fn bad(field: &str, what: &str) -> A2aError {
    A2aError::invalid_field(field, what)
}

fn object(value: Value, field: &str) -> Result<Object, A2aError> {
    match value {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Object::new()),
        _ => Err(bad(field, "must be an object")),
    }
}

/// Renames `from` to `to` when present.
fn rename(m: &mut Object, from: &str, to: &str) {
    if let Some(v) = m.remove(from) {
        m.insert(to.to_owned(), v);
    }
}

// ---- enums ----------------------------------------------------------------------------------

/// v0.3 task states and their v1.0 names.
const STATES: &[(&str, &str)] = &[
    ("submitted", "TASK_STATE_SUBMITTED"),
    ("working", "TASK_STATE_WORKING"),
    ("input-required", "TASK_STATE_INPUT_REQUIRED"),
    ("completed", "TASK_STATE_COMPLETED"),
    ("canceled", "TASK_STATE_CANCELED"),
    ("failed", "TASK_STATE_FAILED"),
    ("rejected", "TASK_STATE_REJECTED"),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
    ("unknown", "TASK_STATE_UNSPECIFIED"),
];

#[cfg(any(feature = "server", test))]
fn state_out(v1: &str) -> &str {
    STATES
        .iter()
        .find(|(_, b)| *b == v1)
        .map_or("unknown", |(a, _)| a)
}

#[cfg(any(feature = "client", test))]
fn state_in(v03: &str) -> Option<&'static str> {
    STATES.iter().find(|(a, _)| *a == v03).map(|(_, b)| *b)
}

fn role_in(v: &Value) -> Value {
    match v.as_str() {
        Some("user") => Value::from("ROLE_USER"),
        Some("agent") => Value::from("ROLE_AGENT"),
        _ => v.clone(),
    }
}

fn role_out(v: &Value) -> Value {
    match v.as_str() {
        Some("ROLE_USER") => Value::from("user"),
        Some("ROLE_AGENT") => Value::from("agent"),
        _ => v.clone(),
    }
}

// ---- parts, messages, artifacts, tasks (v0.3 → v1.0) ---------------------------------------

fn part_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut p = object(value, field)?;
    let kind = p.remove("kind");
    let kind = kind.as_ref().and_then(Value::as_str).map(str::to_owned);
    let kind = kind.or_else(|| {
        ["text", "file", "data"]
            .into_iter()
            .find(|k| p.contains_key(*k))
            .map(str::to_owned)
    });
    match kind.as_deref() {
        Some("text") => {}
        Some("data") => {}
        Some("file") => {
            let file = object(
                p.remove("file").unwrap_or(Value::Null),
                &format!("{field}.file"),
            )?;
            for (k, v) in file {
                match k.as_str() {
                    "bytes" => p.insert("raw".into(), v),
                    "uri" => p.insert("url".into(), v),
                    "mimeType" | "mime_type" => p.insert("mediaType".into(), v),
                    "name" => p.insert("filename".into(), v),
                    _ => None,
                };
            }
        }
        _ => return Err(bad(field, "must be a text, file or data part (kind)")),
    }
    Ok(Value::Object(p))
}

fn parts_in(m: &mut Object, field: &str) -> Result<(), A2aError> {
    if let Some(Value::Array(parts)) = m.remove("parts") {
        let parts = parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| part_in(p, &format!("{field}.parts[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        m.insert("parts".into(), Value::Array(parts));
    }
    Ok(())
}

/// A v0.3 `Message` as v1.0's.
pub(crate) fn message_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut m = object(value, field)?;
    m.remove("kind");
    if let Some(role) = m.get("role") {
        let role = role_in(role);
        m.insert("role".into(), role);
    }
    parts_in(&mut m, field)?;
    Ok(Value::Object(m))
}

#[cfg(any(feature = "client", test))]
fn status_in(value: Value, field: &str) -> Result<Value, A2aError> {
    let mut s = object(value, field)?;
    if let Some(v1) = s.get("state").and_then(Value::as_str).and_then(state_in) {
        s.insert("state".into(), Value::from(v1));
    }
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
    parts_in(&mut a, field)?;
    Ok(Value::Object(a))
}

/// A v0.3 `Task` as v1.0's.
#[cfg(any(feature = "client", test))]
pub(crate) fn task_in(value: Value) -> Result<Value, A2aError> {
    let mut t = object(value, "task")?;
    t.remove("kind");
    if let Some(s) = t.remove("status") {
        t.insert("status".into(), status_in(s, "status")?);
    }
    map_array(&mut t, "artifacts", artifact_in)?;
    map_array(&mut t, "history", message_in)?;
    Ok(Value::Object(t))
}

#[cfg(any(feature = "client", test))]
fn map_array(
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

/// A v0.3 `PushNotificationConfig` of task `task_id` as a v1.0 `TaskPushNotificationConfig`.
fn push_config_in(value: Value, task_id: Option<Value>, field: &str) -> Result<Value, A2aError> {
    let mut c = object(value, field)?;
    if let Some(task_id) = task_id {
        c.insert("taskId".into(), task_id);
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

/// The v0.3 params of `op` as the v1.0 params.
#[cfg(any(feature = "server", test))]
pub(crate) fn params_in(op: Operation, params: Value) -> Result<Value, A2aError> {
    let mut p = object(params, "params")?;
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            if let Some(m) = p.remove("message") {
                p.insert("message".into(), message_in(m, "message")?);
            }
            if let Some(c) = p.remove("configuration") {
                let mut c = object(c, "configuration")?;
                if let Some(blocking) = c.remove("blocking") {
                    // v0.3 waits unless told not to; v1.0 says it the other way round.
                    if blocking == Value::Bool(false) {
                        c.insert("returnImmediately".into(), Value::Bool(true));
                    }
                }
                if let Some(push) = c.remove("pushNotificationConfig") {
                    c.insert(
                        "taskPushNotificationConfig".into(),
                        push_config_in(push, None, "configuration.pushNotificationConfig")?,
                    );
                }
                p.insert("configuration".into(), Value::Object(c));
            }
        }
        Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask => {}
        Operation::CreateTaskPushNotificationConfig => {
            let task_id = p.remove("taskId").or_else(|| p.remove("id"));
            let config = p.remove("pushNotificationConfig").unwrap_or(Value::Null);
            let mut config = object(
                push_config_in(config, task_id.clone(), "pushNotificationConfig")?,
                "",
            )?;
            // v0.3 servers name a config after its task when the client gives no id, so a
            // later `get` without an id finds it.
            if config
                .get("id")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
                && let Some(t) = task_id
            {
                config.insert("id".into(), t);
            }
            return Ok(Value::Object(config));
        }
        Operation::GetTaskPushNotificationConfig | Operation::DeleteTaskPushNotificationConfig => {
            let task_id = p.remove("id").unwrap_or(Value::Null);
            let config_id = p
                .remove("pushNotificationConfigId")
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                .unwrap_or_else(|| task_id.clone());
            p.insert("taskId".into(), task_id);
            p.insert("id".into(), config_id);
        }
        Operation::ListTaskPushNotificationConfigs => rename(&mut p, "id", "taskId"),
        _ => {}
    }
    p.remove("metadata")
        .filter(|_| {
            matches!(
                op,
                Operation::SendMessage | Operation::SendStreamingMessage | Operation::CancelTask
            )
        })
        .map(|m| p.insert("metadata".into(), m));
    Ok(Value::Object(p))
}

// ---- v1.0 → v0.3 ----------------------------------------------------------------------------

fn part_out(value: Value) -> Value {
    let Value::Object(mut p) = value else {
        return value;
    };
    let mut out = Object::new();
    if let Some(text) = p.remove("text") {
        out.insert("kind".into(), Value::from("text"));
        out.insert("text".into(), text);
    } else if let Some(data) = p.remove("data") {
        out.insert("kind".into(), Value::from("data"));
        // v0.3 data is an object; anything else travels wrapped.
        let data = if data.is_object() {
            data
        } else {
            let mut wrapped = Object::new();
            wrapped.insert("value".into(), data);
            Value::Object(wrapped)
        };
        out.insert("data".into(), data);
    } else {
        out.insert("kind".into(), Value::from("file"));
        let mut file = Object::new();
        if let Some(raw) = p.remove("raw") {
            file.insert("bytes".into(), raw);
        }
        if let Some(url) = p.remove("url") {
            file.insert("uri".into(), url);
        }
        if let Some(media) = p.remove("mediaType") {
            file.insert("mimeType".into(), media);
        }
        if let Some(name) = p.remove("filename") {
            file.insert("name".into(), name);
        }
        out.insert("file".into(), Value::Object(file));
    }
    p.remove("mediaType");
    p.remove("filename");
    if let Some(m) = p.remove("metadata") {
        out.insert("metadata".into(), m);
    }
    Value::Object(out)
}

fn parts_out(m: &mut Object) {
    let parts = match m.remove("parts") {
        Some(Value::Array(parts)) => parts.into_iter().map(part_out).collect(),
        _ => Vec::new(),
    };
    m.insert("parts".into(), Value::Array(parts));
}

/// A v1.0 `Message` as v0.3's.
pub(crate) fn message_out(value: Value) -> Value {
    let Value::Object(mut m) = value else {
        return value;
    };
    m.insert("kind".into(), Value::from("message"));
    if let Some(role) = m.get("role") {
        let role = role_out(role);
        m.insert("role".into(), role);
    }
    parts_out(&mut m);
    Value::Object(m)
}

#[cfg(any(feature = "server", test))]
fn artifact_out(value: Value) -> Value {
    let Value::Object(mut a) = value else {
        return value;
    };
    parts_out(&mut a);
    Value::Object(a)
}

/// v0.3's JSON-RPC bodies: `kind` on tasks and updates, lowercase state names.
#[cfg(any(feature = "server", test))]
struct JsonRpc;

#[cfg(any(feature = "server", test))]
impl Shape for JsonRpc {
    const KINDS: bool = true;

    fn message(value: Value) -> Value {
        message_out(value)
    }

    fn artifact(value: Value) -> Value {
        artifact_out(value)
    }

    fn state(s: &mut Object) {
        let state = s.get("state").and_then(Value::as_str).map(state_out);
        s.insert("state".into(), Value::from(state.unwrap_or("unknown")));
    }
}

/// A v1.0 `StreamResponse` (or `SendMessageResponse`) as the v0.3 event or result: the
/// object its one member holds.
#[cfg(any(feature = "server", test))]
pub(crate) fn event_out(value: Value) -> Value {
    let Value::Object(m) = value else {
        return value;
    };
    let Some((key, inner)) = m.into_iter().next() else {
        return Value::Null;
    };
    shape::event_out::<JsonRpc>(&key, inner)
}

/// A v1.0 `TaskPushNotificationConfig` as v0.3's (`{taskId, pushNotificationConfig}`).
fn push_config_out(value: Value) -> Value {
    let Value::Object(c) = value else {
        return value;
    };
    let (task_id, c) = shape::push_config_out(c);
    let mut out = Object::new();
    out.insert("taskId".into(), task_id);
    out.insert("pushNotificationConfig".into(), Value::Object(c));
    Value::Object(out)
}

/// The v1.0 result of `op` as the v0.3 result.
#[cfg(any(feature = "server", test))]
pub(crate) fn result_out(op: Operation, result: Value) -> Value {
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            event_out(result)
        }
        Operation::GetTask | Operation::CancelTask => shape::task_out::<JsonRpc>(result),
        Operation::CreateTaskPushNotificationConfig | Operation::GetTaskPushNotificationConfig => {
            push_config_out(result)
        }
        Operation::ListTaskPushNotificationConfigs => {
            let configs = match result {
                Value::Object(mut m) => m.remove("configs"),
                _ => None,
            };
            let configs = match configs {
                Some(Value::Array(c)) => c.into_iter().map(push_config_out).collect(),
                _ => Vec::new(),
            };
            Value::Array(configs)
        }
        Operation::DeleteTaskPushNotificationConfig => Value::Null,
        Operation::GetExtendedAgentCard => {
            let extra = serde_json::from_value::<AgentCard>(result.clone())
                .map(|card| card_fields(&card))
                .unwrap_or_default();
            match result {
                Value::Object(mut m) => {
                    add_missing(&mut m, extra);
                    Value::Object(m)
                }
                other => other,
            }
        }
        _ => result,
    }
}

/// The v0.3 error object of `error` (`{code, message, data?}`): the v1.0 object, whose codes
/// v0.3 shares.
#[cfg(any(feature = "server", test))]
pub(crate) fn error_out(error: &A2aError) -> Value {
    serde_json::to_value(error.to_jsonrpc_error()).unwrap_or(Value::Null)
}

// ---- the agent card -------------------------------------------------------------------------

/// Adds the members of `extra` that `object` lacks, also inside the objects both have (a
/// security scheme gets v0.3's members beside v1.0's).
#[cfg(any(feature = "server", test))]
pub(crate) fn add_missing(object: &mut Object, extra: Object) {
    for (k, v) in extra {
        match (object.get_mut(&k), v) {
            (Some(Value::Object(have)), Value::Object(more)) => add_missing(have, more),
            (Some(_), _) => {}
            (None, v) => {
                object.insert(k, v);
            }
        }
    }
}

/// v0.3's security scheme (OpenAPI's shape: `type` says which) of a v1.0 one (a one-member
/// object naming its kind).
#[cfg(any(feature = "server", test))]
fn scheme_out(v1: &Value) -> Option<Value> {
    let (kind, inner) = v1.as_object()?.iter().next()?;
    let mut s = inner.as_object().cloned().unwrap_or_default();
    let kind = match kind.as_str() {
        "apiKeySecurityScheme" => {
            if let Some(location) = s.remove("location") {
                s.insert("in".into(), location);
            }
            "apiKey"
        }
        "httpAuthSecurityScheme" => "http",
        "oauth2SecurityScheme" => {
            let mut flows = match s.remove("flows") {
                Some(Value::Object(f)) => f,
                _ => Object::new(),
            };
            // v0.3 knows no device-code flow, and its flows always carry `scopes`.
            flows.remove("deviceCode");
            for flow in flows.values_mut() {
                if let Value::Object(f) = flow {
                    f.entry("scopes")
                        .or_insert_with(|| Value::Object(Object::new()));
                }
            }
            s.insert("flows".into(), Value::Object(flows));
            "oauth2"
        }
        "openIdConnectSecurityScheme" => "openIdConnect",
        "mtlsSecurityScheme" => "mutualTLS",
        _ => return None,
    };
    s.insert("type".into(), Value::from(kind));
    Some(Value::Object(s))
}

/// v0.3's `security` (`[{scheme: [scopes]}]`) of v1.0's `securityRequirements`
/// (`[{schemes: {scheme: {list: [scopes]}}}]`).
#[cfg(any(feature = "server", test))]
fn security_out(v1: &Value) -> Value {
    let requirements = v1.as_array().map(Vec::as_slice).unwrap_or_default();
    let out = requirements
        .iter()
        .map(|r| {
            let schemes = r.get("schemes").and_then(Value::as_object);
            let entries = schemes.into_iter().flatten().map(|(name, scopes)| {
                let list = scopes
                    .get("list")
                    .cloned()
                    .unwrap_or(Value::Array(Vec::new()));
                (name.clone(), list)
            });
            Value::Object(entries.collect())
        })
        .collect();
    Value::Array(out)
}

/// The members a v0.3 client reads from a card, for a card that serves v0.3 at the same URLs:
/// `protocolVersion`, `url` and `preferredTransport` (the first JSON-RPC or HTTP+JSON
/// interface), `additionalInterfaces` (every one of them), the members v0.3 requires (`skills`,
/// `supportsAuthenticatedExtendedCard`), and the security schemes and requirements in v0.3's
/// shapes (`type`-discriminated schemes; `security`).
#[cfg(any(feature = "server", test))]
pub(crate) fn card_fields(card: &AgentCard) -> Object {
    use crate::types::ProtocolBinding;
    let mut out = Object::new();
    // v0.3 is served on JSON-RPC and on HTTP+JSON (its `/v1/...` routes below the REST base,
    // which v0.3 clients append to the interface URL); gRPC serves v1.0 only.
    let transport = |b: &ProtocolBinding| match b {
        ProtocolBinding::JsonRpc => Some("JSONRPC"),
        ProtocolBinding::HttpJson => Some("HTTP+JSON"),
        _ => None,
    };
    let served: Vec<(&str, &str)> = card
        .supported_interfaces
        .iter()
        .filter(|i| i.protocol_version.starts_with("1.") || i.protocol_version == "0.3")
        .filter_map(|i| transport(&i.protocol_binding).map(|t| (i.url.as_str(), t)))
        .collect();
    let Some((url, preferred)) = served.first().copied() else {
        return out;
    };
    out.insert("protocolVersion".into(), Value::from(super::CARD_VERSION));
    out.insert("url".into(), Value::from(url));
    out.insert("preferredTransport".into(), Value::from(preferred));
    let mut additional: Vec<Value> = Vec::new();
    for (url, transport) in &served {
        let entry = serde_json::json!({"url": url, "transport": transport});
        if !additional.contains(&entry) {
            additional.push(entry);
        }
    }
    out.insert("additionalInterfaces".into(), Value::Array(additional));
    out.insert("skills".into(), Value::Array(Vec::new()));
    if !card.security_schemes.is_empty() {
        let v1 = serde_json::to_value(&card.security_schemes).unwrap_or_default();
        let schemes: Object = v1
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(name, s)| scheme_out(s).map(|s| (name.clone(), s)))
            .collect();
        out.insert("securitySchemes".into(), Value::Object(schemes));
    }
    if !card.security_requirements.is_empty() {
        let v1 = serde_json::to_value(&card.security_requirements).unwrap_or_default();
        out.insert("security".into(), security_out(&v1));
    }
    out.insert(
        "supportsAuthenticatedExtendedCard".into(),
        Value::Bool(card.capabilities.extended_agent_card == Some(true)),
    );
    out
}

// ---- client side: v1.0 → v0.3 requests, v0.3 → v1.0 results --------------------------------

/// The v1.0 params of `op` as a v0.3 peer expects them.
#[cfg(any(feature = "client", test))]
pub(crate) fn params_out(op: Operation, params: Value) -> Value {
    let Value::Object(mut p) = params else {
        return params;
    };
    p.remove("tenant");
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            if let Some(m) = p.remove("message") {
                p.insert("message".into(), message_out(m));
            }
            if let Some(Value::Object(mut c)) = p.remove("configuration") {
                let immediate = c.remove("returnImmediately") == Some(Value::Bool(true));
                c.insert("blocking".into(), Value::Bool(!immediate));
                if let Some(push) = c.remove("taskPushNotificationConfig") {
                    let nested = push_config_out(push);
                    if let Some(cfg) = nested.get("pushNotificationConfig") {
                        c.insert("pushNotificationConfig".into(), cfg.clone());
                    }
                }
                p.insert("configuration".into(), Value::Object(c));
            }
        }
        Operation::CreateTaskPushNotificationConfig => {
            return push_config_out(Value::Object(p));
        }
        Operation::GetTaskPushNotificationConfig | Operation::DeleteTaskPushNotificationConfig => {
            let config_id = p.remove("id").unwrap_or(Value::Null);
            rename(&mut p, "taskId", "id");
            p.insert("pushNotificationConfigId".into(), config_id);
        }
        Operation::ListTaskPushNotificationConfigs => {
            p.remove("pageSize");
            p.remove("pageToken");
            rename(&mut p, "taskId", "id");
        }
        _ => {}
    }
    Value::Object(p)
}

/// A v0.3 event or `message/send` result as the v1.0 `StreamResponse` / `SendMessageResponse`.
#[cfg(any(feature = "client", test))]
pub(crate) fn event_in(value: Value) -> Result<Value, A2aError> {
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_default();
    let wrap = |key: &str, v: Value| {
        let mut m = Object::new();
        m.insert(key.to_owned(), v);
        Value::Object(m)
    };
    Ok(match kind.as_str() {
        "task" => wrap("task", task_in(value)?),
        "message" => wrap("message", message_in(value, "message")?),
        "status-update" => {
            let mut e = object(value, "statusUpdate")?;
            e.remove("kind");
            e.remove("final");
            if let Some(s) = e.remove("status") {
                e.insert("status".into(), status_in(s, "status")?);
            }
            wrap("statusUpdate", Value::Object(e))
        }
        "artifact-update" => {
            let mut e = object(value, "artifactUpdate")?;
            e.remove("kind");
            if let Some(a) = e.remove("artifact") {
                e.insert("artifact".into(), artifact_in(a, "artifact")?);
            }
            wrap("artifactUpdate", Value::Object(e))
        }
        _ => {
            return Err(A2aError::InvalidAgentResponse(format!(
                "a v0.3 result without a known kind: {kind:?}"
            )));
        }
    })
}

/// A v0.3 push config (`{taskId, pushNotificationConfig}`) as v1.0's.
#[cfg(any(feature = "client", test))]
fn push_result_in(value: Value) -> Result<Value, A2aError> {
    let mut m = object(value, "result")?;
    let task_id = m.remove("taskId");
    let config = m.remove("pushNotificationConfig").unwrap_or(Value::Null);
    push_config_in(config, task_id, "pushNotificationConfig")
}

/// The v0.3 result of `op` as the v1.0 result.
#[cfg(any(feature = "client", test))]
pub(crate) fn result_in(op: Operation, result: Value) -> Result<Value, A2aError> {
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            event_in(result)
        }
        Operation::GetTask | Operation::CancelTask => task_in(result),
        Operation::CreateTaskPushNotificationConfig | Operation::GetTaskPushNotificationConfig => {
            push_result_in(result)
        }
        Operation::ListTaskPushNotificationConfigs => {
            let items = match result {
                Value::Array(items) => items,
                Value::Null => Vec::new(),
                _ => {
                    return Err(A2aError::InvalidAgentResponse(
                        "a v0.3 push config list is an array".into(),
                    ));
                }
            };
            let configs = items
                .into_iter()
                .map(push_result_in)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(serde_json::json!({"configs": configs}))
        }
        Operation::DeleteTaskPushNotificationConfig => Ok(Value::Object(Object::new())),
        Operation::GetExtendedAgentCard => Ok(card_in(result)),
        _ => Ok(result),
    }
}

/// A v0.3 card as v1.0's: `url` + `preferredTransport` and `additionalInterfaces` become
/// `supportedInterfaces` (protocol version 0.3) when the card has none.
#[cfg(any(feature = "client", test))]
pub(crate) fn card_in(value: Value) -> Value {
    let Value::Object(mut c) = value else {
        return value;
    };
    let has_v1 = c
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !has_v1 {
        let mut interfaces: Vec<Value> = Vec::new();
        let mut add = |url: Option<&Value>, transport: Option<&Value>| {
            let (Some(url), transport) = (url.and_then(Value::as_str), transport) else {
                return;
            };
            let transport = transport.and_then(Value::as_str).unwrap_or("JSONRPC");
            let entry = serde_json::json!({
                "url": url, "protocolBinding": transport, "protocolVersion": "0.3"
            });
            if !interfaces.contains(&entry) {
                interfaces.push(entry);
            }
        };
        add(c.get("url"), c.get("preferredTransport"));
        if let Some(Value::Array(more)) = c.get("additionalInterfaces") {
            for i in more {
                add(i.get("url"), i.get("transport"));
            }
        }
        c.insert("supportedInterfaces".into(), Value::Array(interfaces));
        // v0.3 security schemes are not v1.0's shape; the client does not need them to talk.
        c.remove("securitySchemes");
        c.remove("security");
        c.remove("signatures");
    }
    if c.get("supportsAuthenticatedExtendedCard") == Some(&Value::Bool(true))
        && let Some(Value::Object(caps)) = c.get_mut("capabilities")
    {
        caps.entry("extendedAgentCard").or_insert(Value::Bool(true));
    }
    Value::Object(c)
}

#[cfg(test)]
mod tests;
