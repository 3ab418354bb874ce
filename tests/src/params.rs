//! Request params and answers as JSON: the messages the tests send, and what they read back.

use serde_json::{Value, json};

/// A `messageId` unique within the test run.
pub fn mid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "msg-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// SendMessage params for a user message with one text part.
pub fn msg(text: &str) -> Value {
    json!({"message": {"messageId": mid(), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// SendMessage params continuing `task_id` (no contextId: the server infers it).
pub fn msg_to(task_id: &str, text: &str) -> Value {
    json!({"message": {"messageId": mid(), "role": "ROLE_USER", "taskId": task_id,
                       "parts": [{"text": text}]}})
}

/// Adds `configuration` members to SendMessage params.
pub fn with_config(mut params: Value, config: Value) -> Value {
    params["configuration"] = config;
    params
}

/// The `task` of a SendMessage result (panics when it is a message).
pub fn task_of(result: &Value) -> &Value {
    assert_eq!(
        one_member(result),
        "task",
        "expected a task result: {result}"
    );
    &result["task"]
}

/// The name of the only member of a oneof wrapper (`task`, `message`, `statusUpdate`, ...).
pub fn one_member(v: &Value) -> &str {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(obj.len(), 1, "a oneof wrapper has exactly one member: {v}");
    obj.keys().next().map(String::as_str).unwrap_or_default()
}

/// The state string of a task.
pub fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

/// The id string of a task.
pub fn id(task: &Value) -> String {
    task["id"].as_str().expect("task id").to_owned()
}

/// The concatenated text parts of a message (or artifact).
pub fn text(m: &Value) -> String {
    m["parts"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}
