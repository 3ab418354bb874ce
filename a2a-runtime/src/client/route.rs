//! Where a request goes on the HTTP bindings: its REST method, path and body (v1.0's routes or
//! v0.3's), and the method and params it carries on JSON-RPC.

use serde_json::Value;

use crate::compat::v0_3;
use crate::protocol::{A2aRequest, Operation};

/// The REST method, path and body of a request.
pub(super) fn rest_route(
    req: &A2aRequest,
    params: &Value,
) -> (reqwest::Method, String, Option<Value>) {
    use reqwest::Method;
    let s = |k: &str| {
        params
            .get(k)
            .and_then(Value::as_str)
            .map(crate::protocol::uri::encode_component)
            .unwrap_or_default()
    };
    let query_from = |skip: &[&str]| -> String {
        let mut q = Vec::new();
        if let Some(obj) = params.as_object() {
            for (k, v) in obj {
                if skip.contains(&k.as_str()) || k == "tenant" {
                    continue;
                }
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => continue,
                };
                q.push(format!(
                    "{}={}",
                    crate::protocol::uri::encode_component(k),
                    crate::protocol::uri::encode_component(&text)
                ));
            }
        }
        if q.is_empty() {
            String::new()
        } else {
            format!("?{}", q.join("&"))
        }
    };
    match req.operation() {
        Operation::SendMessage => (Method::POST, "/message:send".into(), Some(params.clone())),
        Operation::SendStreamingMessage => {
            (Method::POST, "/message:stream".into(), Some(params.clone()))
        }
        Operation::GetTask => (
            Method::GET,
            format!("/tasks/{}{}", s("id"), query_from(&["id"])),
            None,
        ),
        Operation::ListTasks => (Method::GET, format!("/tasks{}", query_from(&[])), None),
        Operation::CancelTask => {
            let body = params.get("metadata").map_or_else(
                || serde_json::json!({}),
                |m| serde_json::json!({"metadata": m}),
            );
            (
                Method::POST,
                format!("/tasks/{}:cancel", s("id")),
                Some(body),
            )
        }
        Operation::SubscribeToTask => (
            Method::POST,
            format!("/tasks/{}:subscribe", s("id")),
            Some(serde_json::json!({})),
        ),
        Operation::CreateTaskPushNotificationConfig => (
            Method::POST,
            format!("/tasks/{}/pushNotificationConfigs", s("taskId")),
            Some(params.clone()),
        ),
        Operation::GetTaskPushNotificationConfig => (
            Method::GET,
            format!("/tasks/{}/pushNotificationConfigs/{}", s("taskId"), s("id")),
            None,
        ),
        Operation::ListTaskPushNotificationConfigs => (
            Method::GET,
            format!(
                "/tasks/{}/pushNotificationConfigs{}",
                s("taskId"),
                query_from(&["taskId"])
            ),
            None,
        ),
        Operation::DeleteTaskPushNotificationConfig => (
            Method::DELETE,
            format!("/tasks/{}/pushNotificationConfigs/{}", s("taskId"), s("id")),
            None,
        ),
        Operation::GetExtendedAgentCard => (Method::GET, "/extendedAgentCard".into(), None),
    }
}

/// The route of `op` on v0.3's REST binding, when `v0_3_rest` (a v0.3 HTTP+JSON interface).
pub(super) fn v0_3_rest_route(
    v0_3_rest: bool,
    op: Operation,
    params: &Value,
) -> Option<(reqwest::Method, String, Option<Value>)> {
    if !v0_3_rest {
        return None;
    }
    let r = v0_3::rest::request_out(op, params.clone())?;
    let method = match r.method {
        "GET" => reqwest::Method::GET,
        "DELETE" => reqwest::Method::DELETE,
        _ => reqwest::Method::POST,
    };
    Some((method, r.path, r.body))
}

/// What to call: a method name with its params, and its REST route.
pub(super) struct Target {
    pub(super) method: &'static str,
    pub(super) params: Value,
    pub(super) rest: (reqwest::Method, String, Option<Value>),
    /// An extension to activate for this call on top of the configured ones.
    pub(super) extra_extension: Option<&'static str>,
}
