//! A2A v0.3 on the wire: its JSON-RPC method names and REST routes, and the conversions between
//! its JSON shapes and v1.0's (in [`convert`]).
//!
//! v0.3 differs from v1.0 in names, not in meaning: `kind` discriminators on parts, events and
//! results (v1.0 wraps them in a one-member object); lowercase enum spellings (`input-required`,
//! `user`); `final` on status updates; file parts as `{file: {bytes | uri, mimeType, name}}`;
//! push configs nested in `pushNotificationConfig`; the card's `url`, `preferredTransport`,
//! `additionalInterfaces` and `protocolVersion`.

pub(crate) mod convert;
pub(crate) mod rest;
mod shape;

use crate::protocol::Operation;

/// Whether a v1.0 task status ends a v0.3 stream (its `final`): a terminal or interrupted
/// state.
#[cfg(any(feature = "server", test))]
pub(crate) fn ends_stream(status: &serde_json::Value) -> bool {
    status
        .get("state")
        .and_then(|s| <crate::types::TaskState as serde::Deserialize>::deserialize(s).ok())
        .is_some_and(|s| s.is_terminal() || s.is_interrupted())
}

/// The protocol version v0.3 cards announce.
#[cfg(any(feature = "server", test))]
pub(crate) const CARD_VERSION: &str = "0.3.0";

/// The operation of a v0.3 JSON-RPC method.
#[cfg(any(feature = "server", test))]
pub(crate) fn operation(method: &str) -> Option<Operation> {
    Some(match method {
        "message/send" => Operation::SendMessage,
        "message/stream" => Operation::SendStreamingMessage,
        "tasks/get" => Operation::GetTask,
        "tasks/cancel" => Operation::CancelTask,
        "tasks/resubscribe" => Operation::SubscribeToTask,
        "tasks/pushNotificationConfig/set" => Operation::CreateTaskPushNotificationConfig,
        "tasks/pushNotificationConfig/get" => Operation::GetTaskPushNotificationConfig,
        "tasks/pushNotificationConfig/list" => Operation::ListTaskPushNotificationConfigs,
        "tasks/pushNotificationConfig/delete" => Operation::DeleteTaskPushNotificationConfig,
        "agent/getAuthenticatedExtendedCard" => Operation::GetExtendedAgentCard,
        _ => return None,
    })
}

/// The v0.3 JSON-RPC method of an operation (`None`: v0.3 has no such method).
#[cfg(any(feature = "client", test))]
pub(crate) fn method(op: Operation) -> Option<&'static str> {
    Some(match op {
        Operation::SendMessage => "message/send",
        Operation::SendStreamingMessage => "message/stream",
        Operation::GetTask => "tasks/get",
        Operation::CancelTask => "tasks/cancel",
        Operation::SubscribeToTask => "tasks/resubscribe",
        Operation::CreateTaskPushNotificationConfig => "tasks/pushNotificationConfig/set",
        Operation::GetTaskPushNotificationConfig => "tasks/pushNotificationConfig/get",
        Operation::ListTaskPushNotificationConfigs => "tasks/pushNotificationConfig/list",
        Operation::DeleteTaskPushNotificationConfig => "tasks/pushNotificationConfig/delete",
        Operation::GetExtendedAgentCard => "agent/getAuthenticatedExtendedCard",
        _ => return None,
    })
}

/// Whether an `A2A-Version` value asks for v0.3: absent, empty, `0.3` or `0.3.x`.
#[cfg(any(feature = "server", test))]
pub(crate) fn is_requested(header: Option<&str>) -> bool {
    match header.map(str::trim) {
        None | Some("") => true,
        Some(v) => {
            v == "0.3"
                || v.strip_prefix("0.3.")
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_maps_both_ways() {
        for (method_name, op) in [
            ("message/send", Operation::SendMessage),
            ("message/stream", Operation::SendStreamingMessage),
            ("tasks/get", Operation::GetTask),
            ("tasks/cancel", Operation::CancelTask),
            ("tasks/resubscribe", Operation::SubscribeToTask),
            (
                "tasks/pushNotificationConfig/set",
                Operation::CreateTaskPushNotificationConfig,
            ),
            (
                "tasks/pushNotificationConfig/get",
                Operation::GetTaskPushNotificationConfig,
            ),
            (
                "tasks/pushNotificationConfig/list",
                Operation::ListTaskPushNotificationConfigs,
            ),
            (
                "tasks/pushNotificationConfig/delete",
                Operation::DeleteTaskPushNotificationConfig,
            ),
            (
                "agent/getAuthenticatedExtendedCard",
                Operation::GetExtendedAgentCard,
            ),
        ] {
            assert_eq!(operation(method_name), Some(op));
            assert_eq!(method(op), Some(method_name));
        }
        assert_eq!(operation("SendMessage"), None);
        assert_eq!(method(Operation::ListTasks), None);
    }

    #[test]
    fn versions_that_mean_v0_3() {
        for v in [
            None,
            Some(""),
            Some(" "),
            Some("0.3"),
            Some("0.3.0"),
            Some(" 0.3.9 "),
        ] {
            assert!(is_requested(v), "{v:?}");
        }
        for v in ["1.0", "0.2", "0.3.", "0.3.x", "0.30"] {
            assert!(!is_requested(Some(v)), "{v}");
        }
    }
}
