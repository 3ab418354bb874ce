//! An operation and its params on their HTTP+JSON route: path fields move into the path, the
//! fields of a GET or DELETE into the query, those of a POST into the body. The params are sent
//! as given (a test may send invalid ones on purpose).

use reqwest::Method;
use serde_json::{Map, Value};

/// How a REST request is sent.
pub(super) struct Route {
    pub(super) method: Method,
    pub(super) path: String,
    pub(super) body: Option<Value>,
}

/// The route of `op` with `params`, `None` for an operation with no REST route.
pub(super) fn route(op: &str, params: &Value) -> Option<Route> {
    let mut p = params.as_object().cloned().unwrap_or_default();
    let mut take = |k: &str| -> String {
        match p.remove(k) {
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => String::new(),
        }
    };
    let (method, path, has_body) = match op {
        "SendMessage" => (Method::POST, "/message:send".to_owned(), true),
        "SendStreamingMessage" => (Method::POST, "/message:stream".to_owned(), true),
        "GetTask" => (Method::GET, format!("/tasks/{}", take("id")), false),
        "ListTasks" => (Method::GET, "/tasks".to_owned(), false),
        "CancelTask" => (Method::POST, format!("/tasks/{}:cancel", take("id")), true),
        "SubscribeToTask" => (
            Method::POST,
            format!("/tasks/{}:subscribe", take("id")),
            true,
        ),
        "CreateTaskPushNotificationConfig" => (
            Method::POST,
            format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
            true,
        ),
        "GetTaskPushNotificationConfig" => {
            let task = take("taskId");
            (
                Method::GET,
                format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                false,
            )
        }
        "ListTaskPushNotificationConfigs" => (
            Method::GET,
            format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
            false,
        ),
        "DeleteTaskPushNotificationConfig" => {
            let task = take("taskId");
            (
                Method::DELETE,
                format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                false,
            )
        }
        "GetExtendedAgentCard" => (Method::GET, "/extendedAgentCard".to_owned(), false),
        _ => return None,
    };
    Some(if has_body {
        Route {
            method,
            path,
            body: Some(Value::Object(p)),
        }
    } else {
        Route {
            method,
            path: format!("{path}{}", query(&p)),
            body: None,
        }
    })
}

/// Percent-encodes a query value.
fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A query string (`?a=1&b=x`) from the members of an object (non-strings as JSON text).
fn query(params: &Map<String, Value>) -> String {
    let pairs: Vec<String> = params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{}={}", enc(k), enc(&v))
        })
        .collect();
    if pairs.is_empty() {
        String::new()
    } else {
        format!("?{}", pairs.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn path_fields_move_into_the_path_and_the_rest_into_the_query() {
        let r = route(
            "ListTaskPushNotificationConfigs",
            &json!({"taskId": "t 1", "pageSize": 2}),
        );
        let r = r.map(|r| (r.method, r.path, r.body));
        assert_eq!(
            r,
            Some((
                Method::GET,
                "/tasks/t 1/pushNotificationConfigs?pageSize=2".to_owned(),
                None
            ))
        );
        let r = route("CancelTask", &json!({"id": "t", "metadata": {"a": 1}}));
        let r = r.map(|r| (r.method, r.path, r.body));
        assert_eq!(
            r,
            Some((
                Method::POST,
                "/tasks/t:cancel".to_owned(),
                Some(json!({"metadata": {"a": 1}}))
            ))
        );
        assert_eq!(enc("a b/ü"), "a%20b%2F%C3%BC");
        assert!(route("Unknown", &json!({})).is_none());
    }
}
