//! Accepted input: every form a ProtoJSON parser accepts (snake_case names, enum numbers, int32
//! strings, URL-safe and unpadded base64, `null` as unset, any timestamp offset and 0/3/6/9
//! fractional digits, unknown fields at every level).

use a2a_runtime::types::{
    AgentCapabilities, AgentCard, GetTaskRequest, ListTasksRequest, ListTasksResponse, Message,
    OAuth2SecurityScheme, OAuthFlows, Part, PartContent, ProtocolBinding, Role, SecurityScheme,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, Validate,
};
use serde_json::{Value, json};

use super::*;

// ---------------------------------------------------------------------------------------------
// Accepted: proto snake_case names
// ---------------------------------------------------------------------------------------------

#[test]
fn accepts_snake_case_message_fields() {
    let msg: Message = accept(
        r#"{"message_id": "m-1", "context_id": "c-1", "task_id": "t-1", "role": "ROLE_USER",
            "parts": [{"text": "hi", "media_type": "text/plain"}],
            "reference_task_ids": ["t-0"]}"#,
    );
    assert_eq!(msg.message_id, "m-1");
    assert_eq!(msg.context_id, "c-1");
    assert_eq!(msg.task_id, "t-1");
    assert_eq!(msg.reference_task_ids[0], "t-0");
    assert_eq!(msg.parts[0].media_type, "text/plain");
    // Emitted back in lowerCamelCase.
    let out = to_value(&msg);
    assert_eq!(out["messageId"], "m-1");
    assert_eq!(out["parts"][0]["mediaType"], "text/plain");
    assert!(out.get("message_id").is_none());
}

#[test]
fn accepts_snake_case_artifact_update_and_last_chunk() {
    let ev: TaskArtifactUpdateEvent = accept(
        r#"{"task_id": "t", "context_id": "c", "artifact": {"artifact_id": "a", "parts": [{"text": "x"}]},
            "append": true, "last_chunk": true}"#,
    );
    assert!(ev.append && ev.last_chunk);
    assert_eq!(ev.artifact.artifact_id, "a");
}

#[test]
fn accepts_snake_case_history_length_and_configuration() {
    let req: SendMessageRequest = accept(
        r#"{"message": {"message_id": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
            "configuration": {"history_length": 3, "accepted_output_modes": ["text/plain"],
                              "return_immediately": true,
                              "task_push_notification_config": {"url": "https://h", "task_id": ""}}}"#,
    );
    let c = req.configuration.unwrap();
    assert_eq!(c.history_length, Some(3));
    assert_eq!(c.accepted_output_modes, ["text/plain"]);
    assert!(c.return_immediately);
    assert_eq!(c.task_push_notification_config.unwrap().url, "https://h");
    let get: GetTaskRequest = accept(r#"{"id": "t", "history_length": 0}"#);
    assert_eq!(get.history_length, Some(0));
}

#[test]
fn accepts_snake_case_oneof_wrappers() {
    let ev: StreamResponse = accept(
        r#"{"status_update": {"task_id": "t", "context_id": "c", "status": {"state": "TASK_STATE_WORKING"}}}"#,
    );
    assert!(matches!(ev, StreamResponse::StatusUpdate(ref e) if e.task_id == "t"));
    let ev: StreamResponse = accept(
        r#"{"artifact_update": {"task_id": "t", "context_id": "c", "artifact": {"artifact_id": "a", "parts": [{"url": "u"}]}}}"#,
    );
    assert!(matches!(ev, StreamResponse::ArtifactUpdate(_)));
    let scheme: SecurityScheme = decode(
        r#"{"oauth2_security_scheme": {"flows": {"client_credentials": {"token_url": "https://t", "scopes": {}}},
            "oauth2_metadata_url": "https://m"}}"#,
    );
    let SecurityScheme::Oauth2SecurityScheme(o) = scheme else {
        panic!("{scheme:?}")
    };
    assert_eq!(o.oauth2_metadata_url, "https://m");
    assert!(
        matches!(o.flows, Some(OAuthFlows::ClientCredentials(ref f)) if f.token_url == "https://t")
    );
    let scheme: SecurityScheme =
        decode(r#"{"api_key_security_scheme": {"location": "header", "name": "X-Key"}}"#);
    assert!(matches!(scheme, SecurityScheme::ApiKeySecurityScheme(_)));
}

#[test]
fn accepts_snake_case_agent_card_and_list_tasks() {
    let card: AgentCard = accept(
        r#"{"name": "n", "description": "d", "version": "1",
            "supported_interfaces": [{"url": "https://a", "protocol_binding": "HTTP+JSON", "protocol_version": "1.0"}],
            "capabilities": {"push_notifications": true, "extended_agent_card": false},
            "default_input_modes": ["text/plain"], "default_output_modes": ["text/plain"],
            "documentation_url": "https://d", "icon_url": "https://i",
            "skills": [{"id": "s", "name": "s", "description": "s", "tags": [], "input_modes": ["a/b"]}]}"#,
    );
    assert_eq!(
        card.supported_interfaces[0].protocol_binding,
        ProtocolBinding::HttpJson
    );
    assert_eq!(card.capabilities.push_notifications, Some(true));
    assert_eq!(card.capabilities.extended_agent_card, Some(false));
    assert_eq!(card.default_input_modes, ["text/plain"]);
    assert_eq!(card.documentation_url.as_deref(), Some("https://d"));
    assert_eq!(card.skills[0].input_modes, ["a/b"]);
    let list: ListTasksRequest = accept(
        r#"{"context_id": "c", "page_size": 10, "page_token": "p", "include_artifacts": true,
            "status_timestamp_after": "2026-01-01T00:00:00Z"}"#,
    );
    assert_eq!(list.page_size, Some(10));
    assert_eq!(list.include_artifacts, Some(true));
    assert_eq!(list.page_token, "p");
    assert!(list.status_timestamp_after.is_some());
    let resp: ListTasksResponse =
        decode(r#"{"tasks": [], "next_page_token": "n", "page_size": 5, "total_size": 9}"#);
    assert_eq!(
        (
            resp.next_page_token.as_str(),
            resp.page_size,
            resp.total_size
        ),
        ("n", 5, 9)
    );
}

// ---------------------------------------------------------------------------------------------
// Accepted: enum numbers, int32 strings
// ---------------------------------------------------------------------------------------------

#[test]
fn accepts_enum_numbers() {
    let msg: Message = accept(r#"{"messageId": "m", "role": 1, "parts": [{"text": "x"}]}"#);
    assert_eq!(msg.role, Role::User);
    let msg: Message = accept(r#"{"messageId": "m", "role": 2, "parts": [{"text": "x"}]}"#);
    assert_eq!(msg.role, Role::Agent);
    let status: TaskStatus = accept(r#"{"state": 2}"#);
    assert_eq!(status.state, TaskState::Working);
    for state in TaskState::ALL {
        let parsed: TaskStatus = decode(&format!(r#"{{"state": {}}}"#, state.number()));
        assert_eq!(parsed.state, *state);
    }
    let list: ListTasksRequest = accept(r#"{"status": 3}"#);
    assert_eq!(list.status, TaskState::Completed);
    // Emitted as the name, never the number.
    assert_eq!(to_value(&status)["state"], "TASK_STATE_WORKING");
}

#[test]
fn accepts_int32_as_numeric_strings() {
    let req: SendMessageRequest = accept(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
            "configuration": {"historyLength": "5"}}"#,
    );
    assert_eq!(req.configuration.unwrap().history_length, Some(5));
    let list: ListTasksRequest = accept(r#"{"pageSize": "20", "historyLength": "-0"}"#);
    assert_eq!(list.page_size, Some(20));
    assert_eq!(list.history_length, Some(0));
    let resp: ListTasksResponse =
        decode(r#"{"tasks": [], "nextPageToken": "", "pageSize": "7", "totalSize": "70"}"#);
    assert_eq!((resp.page_size, resp.total_size), (7, 70));
    // ProtoJSON also accepts integral numbers written with an exponent or a zero fraction.
    let list: ListTasksRequest = accept(r#"{"pageSize": 1e1, "historyLength": 4.0}"#);
    assert_eq!((list.page_size, list.history_length), (Some(10), Some(4)));
}

// ---------------------------------------------------------------------------------------------
// Accepted: base64 forms
// ---------------------------------------------------------------------------------------------

#[test]
fn accepts_standard_url_safe_padded_and_unpadded_base64_for_raw() {
    // 0xfb 0xff 0xfe 0x01: uses both `+`/`/` (standard) and `-`/`_` (URL-safe) and needs padding.
    for raw in ["+//+AQ==", "+//+AQ", "-__-AQ==", "-__-AQ"] {
        let part: Part = decode(&format!(r#"{{"raw": "{raw}"}}"#));
        assert_eq!(
            part.content,
            PartContent::Raw(vec![0xfb, 0xff, 0xfe, 0x01].into()),
            "{raw}"
        );
        // Always emitted standard and padded.
        assert_eq!(to_value(&part)["raw"], "+//+AQ==", "{raw}");
    }
    let empty: Part = decode(r#"{"raw": ""}"#);
    assert_eq!(empty.content, PartContent::Raw(Vec::new().into()));
    assert_eq!(to_value(&empty), json!({"raw": ""}));
}

// ---------------------------------------------------------------------------------------------
// Accepted: null means unset
// ---------------------------------------------------------------------------------------------

#[test]
fn null_on_strings_is_unset() {
    let msg: Message = accept(
        r#"{"messageId": "m", "contextId": null, "taskId": null, "role": "ROLE_USER",
            "parts": [{"text": "x", "filename": null, "mediaType": null}]}"#,
    );
    assert!(msg.context_id.is_empty() && msg.task_id.is_empty());
    assert!(msg.parts[0].filename.is_empty() && msg.parts[0].media_type.is_empty());
    let req: SendMessageRequest = accept(
        r#"{"tenant": null, "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}"#,
    );
    assert!(req.tenant.is_empty());
    let card: AgentCard = decode(r#"{"name": "n", "documentationUrl": null, "iconUrl": null}"#);
    assert_eq!((card.documentation_url, card.icon_url), (None, None));
}

#[test]
fn null_on_arrays_is_unset() {
    let msg: Message = accept(
        r#"{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}],
            "extensions": null, "referenceTaskIds": null}"#,
    );
    assert!(msg.extensions.is_empty() && msg.reference_task_ids.is_empty());
    let task: Task = accept(
        r#"{"id": "t", "status": {"state": "TASK_STATE_WORKING"}, "history": null, "artifacts": null}"#,
    );
    assert!(task.history.is_empty() && task.artifacts.is_empty());
    // A REQUIRED array given as null is unset, and then reported by validation.
    reject_validate::<Message>(
        r#"{"messageId": "m", "role": "ROLE_USER", "parts": null}"#,
        "parts",
    );
}

#[test]
fn null_on_objects_is_unset() {
    let req: SendMessageRequest = accept(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x", "metadata": null}],
                        "metadata": null},
            "configuration": null, "metadata": null}"#,
    );
    assert!(req.configuration.is_none() && req.metadata.is_empty());
    assert!(req.message.metadata.is_empty() && req.message.parts[0].metadata.is_empty());
    let status: TaskStatus =
        accept(r#"{"state": "TASK_STATE_WORKING", "message": null, "timestamp": null}"#);
    assert!(status.message.is_none() && status.timestamp.is_none());
    let card: AgentCard =
        decode(r#"{"provider": null, "securitySchemes": null, "capabilities": null}"#);
    assert!(card.provider.is_none() && card.security_schemes.is_empty());
    assert_eq!(card.capabilities, AgentCapabilities::default());
}

#[test]
fn null_on_enums_is_the_zero_value() {
    let list: ListTasksRequest = accept(r#"{"status": null}"#);
    assert_eq!(list.status, TaskState::Unspecified);
    let msg: Message = decode(r#"{"messageId": "m", "role": null, "parts": [{"text": "x"}]}"#);
    assert_eq!(msg.role, Role::Unspecified);
    // ROLE_UNSPECIFIED is then a validation error: the role is REQUIRED.
    assert_names_path(&msg.validate().unwrap_err(), "role");
}

#[test]
fn null_on_optional_ints_and_bools_is_absent() {
    let list: ListTasksRequest = accept(
        r#"{"pageSize": null, "historyLength": null, "includeArtifacts": null, "statusTimestampAfter": null}"#,
    );
    assert_eq!(list, ListTasksRequest::default());
    let get: GetTaskRequest = accept(r#"{"id": "t", "historyLength": null}"#);
    assert_eq!(get.history_length, None);
    let caps: AgentCapabilities =
        decode(r#"{"streaming": null, "pushNotifications": null, "extendedAgentCard": null}"#);
    assert_eq!(caps, AgentCapabilities::default());
    let ev: TaskArtifactUpdateEvent = decode(r#"{"append": null, "lastChunk": null}"#);
    assert!(!ev.append && !ev.last_chunk);
}

#[test]
fn null_oneof_member_is_unset_but_part_data_null_is_a_value() {
    // A null oneof member does not count as set.
    let part: Part = decode(r#"{"text": null, "url": "https://f"}"#);
    assert_eq!(part.content, PartContent::Url("https://f".into()));
    let ev: StreamResponse = accept(
        r#"{"task": null, "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}"#,
    );
    assert!(matches!(ev, StreamResponse::Message(_)));
    // `data` is a google.protobuf.Value: null is a real JSON null value, and it is emitted.
    let part: Part = decode(r#"{"data": null}"#);
    assert_eq!(part.content, PartContent::Data(Value::Null));
    part.validate().unwrap();
    assert_eq!(serde_json::to_string(&part).unwrap(), r#"{"data":null}"#);
    // ... so `data: null` beside `text` is two contents.
    let part: Part = decode(r#"{"data": null, "text": "x"}"#);
    assert!(part.validate().is_err());
}

// ---------------------------------------------------------------------------------------------
// Accepted: timestamps
// ---------------------------------------------------------------------------------------------

#[test]
fn timestamp_offsets_are_normalised_to_utc() {
    let status: TaskStatus =
        accept(r#"{"state": "TASK_STATE_WORKING", "timestamp": "2026-03-20T11:12:44.120+02:00"}"#);
    assert_eq!(to_value(&status)["timestamp"], "2026-03-20T09:12:44.120Z");
    let status: TaskStatus =
        accept(r#"{"state": "TASK_STATE_WORKING", "timestamp": "2026-03-19T23:30:00-01:30"}"#);
    assert_eq!(to_value(&status)["timestamp"], "2026-03-20T01:00:00.000Z");
    assert_eq!(
        ts("2026-03-20T09:12:44.120+00:00"),
        ts("2026-03-20T09:12:44.120Z")
    );
}

#[test]
fn timestamps_with_0_3_6_9_fractional_digits_parse() {
    let cases = [
        ("2026-03-20T09:12:44Z", "2026-03-20T09:12:44.000Z"),
        ("2026-03-20T09:12:44.120Z", "2026-03-20T09:12:44.120Z"),
        ("2026-03-20T09:12:44.120500Z", "2026-03-20T09:12:44.120Z"),
        ("2026-03-20T09:12:44.999999999Z", "2026-03-20T09:12:44.999Z"),
    ];
    for (input, emitted) in cases {
        let status: TaskStatus = accept(&format!(
            r#"{{"state": "TASK_STATE_WORKING", "timestamp": "{input}"}}"#
        ));
        assert_eq!(to_value(&status)["timestamp"], emitted, "{input}");
    }
    // Sub-millisecond precision is kept in memory (ordering), only the wire form is milliseconds.
    assert!(ts("2026-03-20T09:12:44.120500Z") > ts("2026-03-20T09:12:44.120Z"));
}

#[test]
fn malformed_timestamp_is_rejected_with_its_path() {
    reject_decode::<Task>(
        r#"{"id": "t", "status": {"state": "TASK_STATE_WORKING", "timestamp": "20 March 2026"}}"#,
        "status.timestamp",
    );
    reject_decode::<ListTasksRequest>(
        r#"{"statusTimestampAfter": 1700000000}"#,
        "statusTimestampAfter",
    );
}

// ---------------------------------------------------------------------------------------------
// Accepted: unknown fields at every level
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_fields_are_ignored_at_every_level() {
    let req: SendMessageRequest = accept(
        r#"{"x0": 1, "message": {"x1": [1, {"deep": null}], "messageId": "m", "role": "ROLE_USER",
              "parts": [{"x2": {"text": "not content"}, "text": "hi", "kind": "text"}]},
            "configuration": {"x3": true, "blocking": true, "pushNotificationConfig": {"url": "u"},
              "taskPushNotificationConfig": {"x4": 0, "url": "https://h",
                "authentication": {"x5": "", "scheme": "Bearer"}}}}"#,
    );
    assert_eq!(req.message.text(), "hi");
    let c = req.configuration.unwrap();
    // v0.3's `blocking` is not `returnImmediately`: it is ignored, not translated.
    assert!(!c.return_immediately);
    assert_eq!(c.task_push_notification_config.unwrap().url, "https://h");
}

#[test]
fn unknown_fields_are_ignored_inside_and_beside_oneof_wrappers() {
    let ev: StreamResponse = accept(
        r#"{"kind": "status-update", "final": true,
            "statusUpdate": {"x": 1, "final": true, "taskId": "t", "contextId": "c",
                             "status": {"x": 2, "state": "TASK_STATE_COMPLETED"}}}"#,
    );
    assert!(
        matches!(ev, StreamResponse::StatusUpdate(ref e) if e.status.state == TaskState::Completed)
    );
    let resp: SendMessageResponse = accept(
        r#"{"y": {}, "task": {"id": "t", "kind": "task", "status": {"state": "TASK_STATE_SUBMITTED"}}}"#,
    );
    assert!(matches!(resp, SendMessageResponse::Task(_)));
    let scheme: SecurityScheme = decode(
        r#"{"type": "oauth2", "oauth2SecurityScheme": {"x": 1,
              "flows": {"x": 2, "authorizationCode": {"x": 3, "authorizationUrl": "https://a",
                         "tokenUrl": "https://t", "scopes": {"s": "d"}, "pkceRequired": true}}}}"#,
    );
    let SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
        flows: Some(OAuthFlows::AuthorizationCode(flow)),
        ..
    }) = scheme
    else {
        panic!("{scheme:?}")
    };
    assert!(flow.pkce_required);
    assert_eq!(flow.scopes["s"], "d");
}

#[test]
fn unknown_fields_are_ignored_in_the_agent_card() {
    let card: AgentCard = accept(
        r#"{"name": "n", "description": "d", "version": "1", "url": "https://v03", "preferredTransport": "JSONRPC",
            "supportedInterfaces": [{"url": "https://a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "x": 1}],
            "capabilities": {"x": 1, "streaming": true}, "provider": {"x": 1, "url": "u", "organization": "o"},
            "defaultInputModes": [], "defaultOutputModes": [],
            "skills": [{"x": 1, "id": "s", "name": "s", "description": "s", "tags": ["t"]}],
            "securityRequirements": [{"x": 1, "schemes": {"k": {"x": 1, "list": ["a"]}}}],
            "signatures": [{"x": 1, "protected": "p", "signature": "s"}]}"#,
    );
    assert_eq!(card.capabilities.streaming, Some(true));
    assert_eq!(card.security_requirements[0].schemes["k"].list, ["a"]);
}
