//! Golden wire tests: every JSON example of the spec digest §9 (stored verbatim under
//! `tests/fixtures/`) parses into our types, validates, and re-emits byte-for-byte equal after
//! canonical key ordering. The error examples of §9.4 are rebuilt from [`A2aError`] and compared
//! with `to_jsonrpc_error()` / `to_rest_body()` output, modulo the human-readable message.

use a2a_runtime::error::A2aError;
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCard, ListTasksRequest, OAuthFlows, PartContent, ProtocolBinding, Role, SecurityScheme,
    SendMessageRequest, SendMessageResponse, StreamResponse, TaskPushNotificationConfig, TaskState,
    Validate,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Reads `tests/fixtures/<name>`.
fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// Serializes a JSON value with every object's keys sorted, recursively, without depending on
/// serde_json's `Map` ordering feature.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", serde_json::to_string(k).unwrap(), canonical(&m[k])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        scalar => serde_json::to_string(scalar).unwrap(),
    }
}

fn canonical_text(text: &str) -> String {
    canonical(&serde_json::from_str::<Value>(text).unwrap())
}

/// Parses `input` with the production decoder, validates it, re-emits it, and asserts the output
/// equals the input after canonical key ordering. Returns the parsed value.
fn golden<T: DeserializeOwned + Serialize + Validate>(input: &str) -> T {
    let value: T = json::decode(input.as_bytes(), DEFAULT_MAX_DEPTH)
        .unwrap_or_else(|e| panic!("decode failed: {e}\n{input}"));
    value
        .validate()
        .unwrap_or_else(|e| panic!("validation failed: {e}\n{input}"));
    let emitted = serde_json::to_string(&value).unwrap();
    assert_eq!(
        canonical_text(&emitted),
        canonical_text(input),
        "re-emitted JSON differs from the fixture"
    );
    // Plain serde_json (no depth check, no path tracking) agrees with the production decoder.
    let plain: T = serde_json::from_str(input).unwrap();
    assert_eq!(serde_json::to_string(&plain).unwrap(), emitted);
    value
}

/// The member `key` of the JSON-RPC envelope fixture `name`, as JSON text.
fn envelope_member(name: &str, key: &str) -> String {
    let envelope: Value = serde_json::from_str(&fixture(name)).unwrap();
    assert_eq!(envelope["jsonrpc"], "2.0", "{name} is a JSON-RPC envelope");
    serde_json::to_string(&envelope[key]).unwrap()
}

#[test]
fn full_agent_card_9_1() {
    let card: AgentCard = golden(&fixture("agent_card.json"));
    assert_eq!(card.name, "Itinerary Agent");
    assert_eq!(card.supported_interfaces.len(), 3);
    assert_eq!(
        card.supported_interfaces[1].protocol_binding,
        ProtocolBinding::HttpJson
    );
    assert_eq!(card.supported_interfaces[1].tenant, "acme");
    assert_eq!(card.supported_interfaces[2].protocol_version, "0.3");
    assert_eq!(card.capabilities.streaming, Some(true));
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
    assert!(card.capabilities.extensions[0].required);
    assert!(!card.capabilities.extensions[1].required);
    assert_eq!(card.security_schemes.len(), 5);
    let Some(SecurityScheme::Oauth2SecurityScheme(oauth)) = card.security_schemes.get("oauth")
    else {
        panic!("oauth scheme is OAuth2");
    };
    let Some(OAuthFlows::ClientCredentials(flow)) = &oauth.flows else {
        panic!("client credentials flow");
    };
    assert_eq!(flow.scopes.len(), 2);
    assert!(matches!(
        card.security_schemes.get("mtls"),
        Some(SecurityScheme::MtlsSecurityScheme(_))
    ));
    // `{"partnerKey": {}}` is a scheme with no scopes.
    assert!(
        card.security_requirements[1].schemes["partnerKey"]
            .list
            .is_empty()
    );
    assert_eq!(
        card.skills[1].security_requirements[0].schemes["oauth"].list,
        ["trips:book"]
    );
    assert_eq!(card.signatures.len(), 1);
}

#[test]
fn send_message_request_params_9_2() {
    let params = envelope_member("send_message.request.jsonrpc.json", "params");
    let req: SendMessageRequest = golden(&params);
    assert_eq!(req.message.role, Role::User);
    assert_eq!(req.message.parts.len(), 2);
    assert!(matches!(req.message.parts[0].content, PartContent::Text(_)));
    assert_eq!(
        req.message.parts[1].content,
        PartContent::Data(json!({"date": "2026-03-27", "class": "first"}))
    );
    let config = req.configuration.as_ref().unwrap();
    assert_eq!(config.history_length, Some(1));
    assert!(!config.return_immediately);
    assert_eq!(
        req.message.metadata["https://travel.example.com/ext/traveler-profile/v1"]["seatPreference"],
        "window"
    );
}

#[test]
fn send_message_blocking_result_9_2() {
    let result = envelope_member("send_message.response.jsonrpc.json", "result");
    let resp: SendMessageResponse = golden(&result);
    let SendMessageResponse::Task(task) = resp else {
        panic!("the blocking result is a task");
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(
        task.status.timestamp.unwrap().to_rfc3339(),
        "2026-03-20T09:12:44.120Z"
    );
    assert_eq!(task.artifacts[0].parts[0].filename, "ticket.pdf");
    assert_eq!(task.history[0].role, Role::Agent);
}

#[test]
fn send_message_direct_message_result_9_2() {
    let resp: SendMessageResponse = golden(&fixture("send_message.response_message.json"));
    let SendMessageResponse::Message(msg) = resp else {
        panic!("a direct reply is a message");
    };
    assert_eq!(msg.text(), "Hi!");
}

#[test]
fn stream_events_9_3() {
    let expected = [
        ("stream_1_task.json", "task"),
        ("stream_2_status_update_working.json", "statusUpdate"),
        (
            "stream_3_artifact_update_first_chunk.json",
            "artifactUpdate",
        ),
        ("stream_4_artifact_update_last_chunk.json", "artifactUpdate"),
        ("stream_5_status_update_completed.json", "statusUpdate"),
    ];
    let mut events = Vec::new();
    for (name, member) in expected {
        let text = fixture(name);
        let event: StreamResponse = golden(&text);
        let kind = match &event {
            StreamResponse::Task(_) => "task",
            StreamResponse::Message(_) => "message",
            StreamResponse::StatusUpdate(_) => "statusUpdate",
            StreamResponse::ArtifactUpdate(_) => "artifactUpdate",
        };
        assert_eq!(kind, member, "{name}");
        assert_eq!(event.task_id().map(|t| t.as_str()), Some("t-9"), "{name}");
        events.push(event);
    }
    let StreamResponse::ArtifactUpdate(first) = &events[2] else {
        unreachable!()
    };
    assert!(!first.append && !first.last_chunk);
    let StreamResponse::ArtifactUpdate(last) = &events[3] else {
        unreachable!()
    };
    assert!(last.append && last.last_chunk);
    let StreamResponse::StatusUpdate(working) = &events[1] else {
        unreachable!()
    };
    assert_eq!(
        working.status.message.as_ref().unwrap().text(),
        "Searching trains…"
    );
}

/// The digest shows the first artifact chunk with `"lastChunk":false` "only to make the example
/// clear": we accept that input, and emit the ProtoJSON form (the default omitted).
#[test]
fn stream_event_with_explicit_last_chunk_false_parses_and_is_emitted_without_it() {
    let as_shown = r##"{"artifactUpdate":{"taskId":"t-9","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"# Options\n"}]},"lastChunk":false}}"##;
    let event: StreamResponse = json::decode(as_shown.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    event.validate().unwrap();
    let emitted = serde_json::to_string(&event).unwrap();
    assert!(!emitted.contains("lastChunk"), "{emitted}");
    assert_eq!(
        canonical_text(&emitted),
        canonical_text(&fixture("stream_3_artifact_update_first_chunk.json"))
    );
}

/// Replaces `message` (at the given JSON pointer) with a placeholder in both values, after
/// checking ours is a non-empty string satisfying `check`.
fn compare_modulo_message(
    mut ours: Value,
    mut expected: Value,
    pointer: &str,
    check: impl Fn(&str, &str),
) {
    let our_msg = ours
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    let expected_msg = expected
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    assert!(!our_msg.is_empty());
    check(&our_msg, &expected_msg);
    *ours.pointer_mut(pointer).unwrap() = json!("<message>");
    *expected.pointer_mut(pointer).unwrap() = json!("<message>");
    assert_eq!(canonical(&ours), canonical(&expected));
}

#[test]
fn jsonrpc_task_not_found_9_4() {
    let expected: Value =
        serde_json::from_str(&fixture("error_task_not_found.jsonrpc.json")).unwrap();
    let err = A2aError::TaskNotFound {
        task_id: "t-404".into(),
    };
    let ours = json!({"jsonrpc": "2.0", "id": 2, "error": err.to_jsonrpc_error()});
    compare_modulo_message(ours, expected, "/error/message", |ours, theirs| {
        assert!(ours.starts_with(theirs), "{ours:?} vs {theirs:?}");
        assert!(ours.contains("t-404"));
    });
}

#[test]
fn jsonrpc_extension_support_required_9_4() {
    let expected: Value =
        serde_json::from_str(&fixture("error_extension_support_required.jsonrpc.json")).unwrap();
    let uri = "https://travel.example.com/ext/traveler-profile/v1";
    let err = A2aError::ExtensionSupportRequired {
        uris: vec![uri.into()],
    };
    let ours = json!({"jsonrpc": "2.0", "id": "req-18", "error": err.to_jsonrpc_error()});
    compare_modulo_message(ours, expected, "/error/message", |ours, _| {
        assert!(ours.contains(uri), "{ours:?}");
    });
}

#[test]
fn rest_version_not_supported_9_4() {
    let expected: Value =
        serde_json::from_str(&fixture("error_version_not_supported.rest.json")).unwrap();
    let err = A2aError::VersionNotSupported {
        requested: "0.3".into(),
        supported: vec!["1.0".into()],
    };
    assert_eq!(err.http_status(), 400);
    compare_modulo_message(
        err.to_rest_body(),
        expected,
        "/error/message",
        |ours, theirs| {
            assert!(ours.starts_with(theirs), "{ours:?} vs {theirs:?}");
        },
    );
}

/// The validation error is produced by the real path: decode, then validate.
#[test]
fn rest_invalid_params_page_size_9_4() {
    let expected: Value =
        serde_json::from_str(&fixture("error_invalid_params_page_size.rest.json")).unwrap();
    let req: ListTasksRequest = json::decode(br#"{"pageSize": 150}"#, DEFAULT_MAX_DEPTH).unwrap();
    let err = req.validate().unwrap_err();
    assert_eq!(err.code(), -32602);
    assert_eq!(err.http_status(), 400);
    compare_modulo_message(
        err.to_rest_body(),
        expected,
        "/error/message",
        |ours, theirs| {
            assert!(ours.starts_with(theirs), "{ours:?} vs {theirs:?}");
        },
    );
}

#[test]
fn push_config_create_params_9_5() {
    let params = envelope_member("push_config_create.request.jsonrpc.json", "params");
    let config: TaskPushNotificationConfig = golden(&params);
    assert_eq!(config.task_id, "t-9");
    assert!(config.id.is_empty(), "the server assigns the id");
    let auth = config.authentication.as_ref().unwrap();
    assert_eq!(
        (auth.scheme.as_str(), auth.credentials.as_str()),
        ("Bearer", "s3cr3t")
    );
    // "The result is the same object with "id" filled in."
    let mut created = config.clone();
    created.id = "cfg-1".into();
    let emitted: Value = serde_json::to_value(&created).unwrap();
    let mut expected: Value = serde_json::from_str(&params).unwrap();
    expected["id"] = json!("cfg-1");
    assert_eq!(canonical(&emitted), canonical(&expected));
}

#[test]
fn push_webhook_body_9_5() {
    let event: StreamResponse = golden(&fixture("push_webhook_status_update.json"));
    let StreamResponse::StatusUpdate(update) = event else {
        panic!("the webhook body is a status update");
    };
    assert_eq!(update.status.state, TaskState::Completed);
    assert_eq!(update.status.timestamp.unwrap().millis() % 1000, 2);
}

/// Every fixture is used by a test above (a new fixture without a test fails here).
#[test]
fn every_fixture_is_covered() {
    let dir = format!("{}/fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    let covered = [
        "agent_card.json",
        "error_extension_support_required.jsonrpc.json",
        "error_invalid_params_page_size.rest.json",
        "error_task_not_found.jsonrpc.json",
        "error_version_not_supported.rest.json",
        "push_config_create.request.jsonrpc.json",
        "push_webhook_status_update.json",
        "send_message.request.jsonrpc.json",
        "send_message.response.jsonrpc.json",
        "send_message.response_message.json",
        "stream_1_task.json",
        "stream_2_status_update_working.json",
        "stream_3_artifact_update_first_chunk.json",
        "stream_4_artifact_update_last_chunk.json",
        "stream_5_status_update_completed.json",
    ];
    assert_eq!(names, covered);
}
