//! The way out, v1.0 → v0.3, of tasks, statuses, stream events and push configs: one walk for
//! both of v0.3's JSON shapes, its JSON-RPC bodies ([`super::convert`]) and its REST bodies, the
//! JSON of its protobuf messages ([`super::rest`]).
//!
//! The two shapes agree on what a task holds and on `final` (a status update that ends the
//! stream); they differ in the leaves (parts, messages, artifacts, state names) and in the
//! `kind` discriminators only JSON-RPC bodies carry, which each shape supplies as a [`Shape`].
// A client only converts what it sends (push configs); the rest serves the server.
#![cfg_attr(not(any(feature = "server", test)), allow(dead_code))]

use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// One of v0.3's JSON shapes: what differs between its JSON-RPC and its REST bodies.
pub(super) trait Shape {
    /// Whether tasks and updates carry v0.3's `kind` (`task`, `status-update`,
    /// `artifact-update`).
    const KINDS: bool;

    /// A v1.0 `Message` in this shape.
    fn message(value: Value) -> Value;

    /// A v1.0 `Artifact` in this shape.
    fn artifact(value: Value) -> Value;

    /// Renames the `state` of a v1.0 `TaskStatus` to this shape's.
    fn state(status: &mut Object);
}

/// A v1.0 `TaskStatus` in shape `S`.
fn status_out<S: Shape>(value: Value) -> Value {
    let Value::Object(mut s) = value else {
        return value;
    };
    S::state(&mut s);
    if let Some(m) = s.remove("message") {
        s.insert("message".into(), S::message(m));
    }
    Value::Object(s)
}

/// A v1.0 `Task` in shape `S`.
pub(super) fn task_out<S: Shape>(value: Value) -> Value {
    let Value::Object(mut t) = value else {
        return value;
    };
    if S::KINDS {
        t.insert("kind".into(), Value::from("task"));
    }
    if let Some(s) = t.remove("status") {
        t.insert("status".into(), status_out::<S>(s));
    }
    for (key, f) in [
        ("artifacts", S::artifact as fn(Value) -> Value),
        ("history", S::message),
    ] {
        if let Some(Value::Array(items)) = t.remove(key) {
            t.insert(key.into(), Value::Array(items.into_iter().map(f).collect()));
        }
    }
    Value::Object(t)
}

/// The member `key` of a v1.0 `StreamResponse` (or `SendMessageResponse`), `task`, `message`,
/// `statusUpdate` or `artifactUpdate`, in shape `S` (any other member as it is).
#[cfg(any(feature = "server", test))]
pub(super) fn event_out<S: Shape>(key: &str, inner: Value) -> Value {
    match key {
        "task" => task_out::<S>(inner),
        "message" => S::message(inner),
        "statusUpdate" => {
            let Value::Object(mut e) = inner else {
                return inner;
            };
            if S::KINDS {
                e.insert("kind".into(), Value::from("status-update"));
            }
            let status = e.remove("status").unwrap_or(Value::Null);
            let last = super::ends_stream(&status);
            let status = status_out::<S>(status);
            e.insert("status".into(), status);
            e.insert("final".into(), Value::Bool(last));
            Value::Object(e)
        }
        "artifactUpdate" => {
            let Value::Object(mut e) = inner else {
                return inner;
            };
            if S::KINDS {
                e.insert("kind".into(), Value::from("artifact-update"));
            }
            if let Some(a) = e.remove("artifact") {
                e.insert("artifact".into(), S::artifact(a));
            }
            Value::Object(e)
        }
        _ => inner,
    }
}

/// A v1.0 `TaskPushNotificationConfig` taken apart as both shapes need it: its `taskId` (`""`
/// when absent), and the rest as v0.3's `PushNotificationConfig` (no `tenant`; its
/// `authentication.scheme` as `schemes: [scheme]`).
pub(super) fn push_config_out(mut c: Object) -> (Value, Object) {
    let task_id = c.remove("taskId").unwrap_or(Value::from(""));
    c.remove("tenant");
    if let Some(Value::Object(mut auth)) = c.remove("authentication") {
        let scheme = auth.remove("scheme").unwrap_or(Value::from(""));
        auth.insert("schemes".into(), Value::Array(vec![scheme]));
        c.insert("authentication".into(), Value::Object(auth));
    }
    (task_id, c)
}
