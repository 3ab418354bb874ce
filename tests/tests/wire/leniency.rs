//! ProtoJSON input leniency and output strictness, one test per rule (spec digest §1).
//!
//! Input: every form a ProtoJSON parser accepts is accepted (snake_case names, enum numbers,
//! int32 strings, URL-safe/unpadded base64, `null` as unset, any timestamp offset and 0/3/6/9
//! fractional digits, unknown fields at every level). Each rejection carries its JSON-RPC code and
//! names the offending field path. Output: lowerCamelCase, full enum names, defaults omitted,
//! presence fields emitted when set, `Z` timestamps with milliseconds, standard padded base64.

use std::collections::BTreeMap;

use a2a_runtime::error::{A2aError, FieldViolation};
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, Artifact, AuthorizationCodeOAuthFlow,
    GetTaskRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse,
    Message, Metadata, OAuth2SecurityScheme, OAuthFlows, Part, PartContent, ProtocolBinding, Role,
    SecurityRequirement, SecurityScheme, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, StringList, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, Timestamp, Validate,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Decodes with the production decoder; panics with the error on failure.
fn decode<T: DeserializeOwned>(text: &str) -> T {
    json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH)
        .unwrap_or_else(|e| panic!("decode failed: {e}\n{text}"))
}

/// Decodes and validates; panics on either failure.
fn accept<T: DeserializeOwned + Validate>(text: &str) -> T {
    let value: T = decode(text);
    value
        .validate()
        .unwrap_or_else(|e| panic!("validation failed: {e}\n{text}"));
    value
}

fn violations(err: &A2aError) -> &[FieldViolation] {
    match err {
        A2aError::InvalidParams { violations } => violations,
        other => panic!("expected InvalidParams, got {other:?}"),
    }
}

/// Asserts `err` is -32602 and names `path`, both in a violation and in its message.
fn assert_names_path(err: &A2aError, path: &str) {
    assert_eq!(err.code(), -32602, "{err}");
    assert!(
        violations(err).iter().any(|v| v.field == path),
        "no violation of {path:?} in {:?}",
        violations(err)
    );
    assert!(err.to_string().contains(path), "{err}");
    // The REST body and the JSON-RPC error carry it too, as a google.rpc.BadRequest.
    let body = err.to_jsonrpc_error();
    let fields: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["@type"] == "type.googleapis.com/google.rpc.BadRequest")
        .flat_map(|d| d["fieldViolations"].as_array().unwrap())
        .map(|v| v["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&path), "{body}");
}

/// Asserts decoding fails with -32602 naming `path`.
fn reject_decode<T: DeserializeOwned + std::fmt::Debug>(text: &str, path: &str) -> A2aError {
    let err = json::decode::<T>(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap_err();
    assert_names_path(&err, path);
    err
}

/// Asserts decoding succeeds and validation fails with -32602 naming `path`.
fn reject_validate<T: DeserializeOwned + Validate>(text: &str, path: &str) -> A2aError {
    let value: T = decode(text);
    let err = value.validate().unwrap_err();
    assert_names_path(&err, path);
    err
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

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

// ---------------------------------------------------------------------------------------------
// Rejected, with code and path
// ---------------------------------------------------------------------------------------------

#[test]
fn non_json_is_a_parse_error() {
    for body in [
        &b"not json"[..],
        b"{",
        b"{\"message\": }",
        b"[1, 2",
        b"{'a': 1}",
    ] {
        let err = json::decode::<SendMessageRequest>(body, DEFAULT_MAX_DEPTH).unwrap_err();
        assert!(matches!(err, A2aError::Parse(_)), "{err:?}");
        assert_eq!(err.code(), -32700);
    }
}

#[test]
fn trailing_garbage_is_a_parse_error() {
    let err = json::decode::<GetTaskRequest>(br#"{"id": "t"} {"id": "u"}"#, DEFAULT_MAX_DEPTH)
        .unwrap_err();
    assert_eq!(err.code(), -32700);
}

#[test]
fn missing_message_id_names_message_message_id() {
    reject_validate::<SendMessageRequest>(
        r#"{"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}"#,
        "message.messageId",
    );
}

#[test]
fn missing_message_names_every_required_member() {
    let err = reject_validate::<SendMessageRequest>(r#"{}"#, "message.messageId");
    assert_names_path(&err, "message.role");
    assert_names_path(&err, "message.parts");
}

#[test]
fn empty_parts_names_message_parts() {
    reject_validate::<SendMessageRequest>(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}"#,
        "message.parts",
    );
}

#[test]
fn part_with_no_content_names_the_part() {
    let err = reject_validate::<SendMessageRequest>(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER",
            "parts": [{"mediaType": "text/plain", "filename": "a.txt"}]}}"#,
        "message.parts[0]",
    );
    assert!(err.to_string().contains("exactly one"), "{err}");
}

#[test]
fn part_with_two_contents_names_the_part_and_the_members() {
    let err = reject_validate::<SendMessageRequest>(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER",
            "parts": [{"text": "ok"}, {"text": "a", "url": "https://b"}]}}"#,
        "message.parts[1]",
    );
    assert!(err.to_string().contains("text, url"), "{err}");
    // Artifacts use the same path rules.
    reject_validate::<Task>(
        r#"{"id": "t", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"raw": "AA==", "data": 1}]}]}"#,
        "artifacts[0].parts[0]",
    );
}

#[test]
fn unknown_enum_name_names_the_field() {
    let err = reject_decode::<SendMessageRequest>(
        r#"{"message": {"messageId": "m", "role": "user", "parts": [{"text": "x"}]}}"#,
        "message.role",
    );
    assert!(
        err.to_string().contains("ROLE_USER"),
        "lists the accepted names: {err}"
    );
    reject_decode::<Task>(
        r#"{"id": "t", "status": {"state": "input-required"}}"#,
        "status.state",
    );
    reject_decode::<ListTasksRequest>(r#"{"status": "TASK_STATE_PAUSED"}"#, "status");
}

#[test]
fn unknown_enum_number_names_the_field() {
    reject_decode::<Message>(r#"{"role": 7}"#, "role");
    reject_decode::<TaskStatus>(r#"{"state": 9}"#, "state");
    reject_decode::<TaskStatus>(r#"{"state": -1}"#, "state");
}

#[test]
fn int32_out_of_range_names_the_field() {
    let base = r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}, "configuration": {"historyLength": HL}}"#;
    for hl in [
        "2147483648",
        "-2147483649",
        "\"2147483648\"",
        "1e10",
        "5.5",
        "\"five\"",
        "true",
    ] {
        reject_decode::<SendMessageRequest>(&base.replace("HL", hl), "configuration.historyLength");
    }
    // The bounds themselves are accepted by the parser.
    let req: SendMessageRequest = decode(&base.replace("HL", "2147483647"));
    assert_eq!(req.configuration.unwrap().history_length, Some(i32::MAX));
    reject_decode::<ListTasksRequest>(r#"{"pageSize": 4294967296}"#, "pageSize");
}

#[test]
fn negative_history_length_names_the_field() {
    reject_validate::<SendMessageRequest>(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
            "configuration": {"historyLength": -1}}"#,
        "configuration.historyLength",
    );
    reject_validate::<GetTaskRequest>(r#"{"id": "t", "historyLength": "-3"}"#, "historyLength");
    reject_validate::<ListTasksRequest>(r#"{"historyLength": -1}"#, "historyLength");
}

#[test]
fn page_size_out_of_range_names_the_field() {
    let err = reject_validate::<ListTasksRequest>(r#"{"pageSize": 150}"#, "pageSize");
    assert_eq!(
        violations(&err)[0].description,
        "must be between 1 and 100, got 150"
    );
    reject_validate::<ListTasksRequest>(r#"{"pageSize": 0}"#, "pageSize");
    reject_validate::<ListTasksRequest>(r#"{"pageSize": -5}"#, "pageSize");
    accept::<ListTasksRequest>(r#"{"pageSize": 1}"#);
    accept::<ListTasksRequest>(r#"{"pageSize": 100}"#);
}

#[test]
fn invalid_base64_names_the_part_member() {
    reject_decode::<SendMessageRequest>(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}, {"raw": "not base64!"}]}}"#,
        "message.parts[1].raw",
    );
}

#[test]
fn wrong_json_types_name_the_field() {
    reject_decode::<SendMessageRequest>(r#"{"message": "hi"}"#, "message");
    reject_decode::<SendMessageRequest>(
        r#"{"message": {"messageId": 17, "role": "ROLE_USER", "parts": []}}"#,
        "message.messageId",
    );
    reject_decode::<SendMessageRequest>(
        r#"{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": 5}]}}"#,
        "message.parts[0].text",
    );
    reject_decode::<Task>(r#"{"id": "t", "metadata": [1]}"#, "metadata");
    reject_decode::<AgentCapabilities>(r#"{"streaming": "yes"}"#, "streaming");
}

/// serde's derived structs also accept a JSON array (fields by position), which ProtoJSON does
/// not. A known excess of leniency: such a value never gets past validation, which names the
/// REQUIRED members it lacks.
#[test]
fn array_in_place_of_an_object_never_validates() {
    let err = reject_validate::<SendMessageRequest>(r#"{"message": []}"#, "message.messageId");
    assert_names_path(&err, "message.parts");
    reject_validate::<Task>(r#"[]"#, "id");
}

#[test]
fn oneof_wrapper_with_two_members_or_none_is_rejected() {
    let both = r#"{"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}},
                   "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}"#;
    let err = json::decode::<StreamResponse>(both.as_bytes(), DEFAULT_MAX_DEPTH).unwrap_err();
    assert_eq!(err.code(), -32602);
    assert!(err.to_string().contains("exactly one"), "{err}");
    let err =
        json::decode::<SendMessageResponse>(br#"{"other": {}}"#, DEFAULT_MAX_DEPTH).unwrap_err();
    assert_eq!(err.code(), -32602);
    let err = json::decode::<OAuthFlows>(br#"{}"#, DEFAULT_MAX_DEPTH).unwrap_err();
    assert_eq!(err.code(), -32602);
}

#[test]
fn task_and_event_required_fields_are_reported_with_paths() {
    let err = reject_validate::<Task>(r#"{"status": {}}"#, "id");
    assert_names_path(&err, "status.state");
    let err = reject_validate::<StreamResponse>(
        r#"{"artifactUpdate": {"artifact": {"parts": []}}}"#,
        "artifactUpdate.taskId",
    );
    assert_names_path(&err, "artifactUpdate.contextId");
    assert_names_path(&err, "artifactUpdate.artifact.artifactId");
    assert_names_path(&err, "artifactUpdate.artifact.parts");
    reject_validate::<Task>(
        r#"{"id": "t", "status": {"state": "TASK_STATE_WORKING"},
            "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
                        {"messageId": "", "role": "ROLE_AGENT", "parts": [{"text": "y"}]}]}"#,
        "history[1].messageId",
    );
    reject_validate::<Task>(
        r#"{"id": "t", "status": {"state": "TASK_STATE_WORKING",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []}}}"#,
        "status.message.parts",
    );
}

// ---------------------------------------------------------------------------------------------
// Output rules
// ---------------------------------------------------------------------------------------------

/// Members whose object keys are user data (Struct / map fields), not field names.
const OPAQUE_KEYS: &[&str] = &["metadata", "data", "params", "header", "scopes"];
/// Map fields whose keys are user data but whose values are typed messages.
const MAP_FIELDS: &[&str] = &["securitySchemes", "schemes"];

fn assert_lower_camel_case(v: &Value, path: &str) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let child_path = format!("{path}.{k}");
                assert!(
                    k.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                        && k.chars().all(|c| c.is_ascii_alphanumeric()),
                    "{child_path} is not lowerCamelCase"
                );
                if OPAQUE_KEYS.contains(&k.as_str()) {
                    continue;
                }
                if MAP_FIELDS.contains(&k.as_str()) {
                    for (name, entry) in child.as_object().unwrap() {
                        assert_lower_camel_case(entry, &format!("{child_path}[{name}]"));
                    }
                    continue;
                }
                assert_lower_camel_case(child, &child_path);
            }
        }
        Value::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                assert_lower_camel_case(item, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}

fn opaque() -> Metadata {
    [("snake_case_key".to_owned(), json!({"inner_key": 1}))]
        .into_iter()
        .collect()
}

fn full_message() -> Message {
    Message {
        message_id: "m".into(),
        context_id: "c".into(),
        task_id: "t".into(),
        role: Role::Agent,
        parts: vec![
            Part::text("x")
                .with_media_type("text/plain")
                .with_filename("x.txt"),
            Part::raw(vec![1, 2]),
            Part::url("https://u"),
            Part {
                metadata: opaque(),
                ..Part::data(json!({"some_key": [1]}))
            },
        ],
        metadata: opaque(),
        extensions: vec!["https://e".into()],
        reference_task_ids: vec!["t0".into()],
    }
}

fn full_card() -> AgentCard {
    let flow = AuthorizationCodeOAuthFlow {
        authorization_url: "https://a".into(),
        token_url: "https://t".into(),
        refresh_url: "https://r".into(),
        scopes: BTreeMap::from([("read_all".into(), "d".into())]),
        pkce_required: true,
    };
    AgentCard {
        name: "n".into(),
        description: "d".into(),
        supported_interfaces: vec![AgentInterface {
            tenant: "t".into(),
            ..AgentInterface::new("https://a", ProtocolBinding::Grpc)
        }],
        provider: Some(AgentProvider {
            url: "https://p".into(),
            organization: "o".into(),
        }),
        version: "1".into(),
        documentation_url: Some("https://d".into()),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            extensions: vec![AgentExtension {
                uri: "https://e".into(),
                description: "d".into(),
                required: true,
                params: opaque(),
            }],
            extended_agent_card: Some(true),
        },
        security_schemes: BTreeMap::from([
            (
                "my_oauth".into(),
                SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                    description: "d".into(),
                    flows: Some(OAuthFlows::AuthorizationCode(flow)),
                    oauth2_metadata_url: "https://m".into(),
                }),
            ),
            (
                "api_key".into(),
                SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                    description: "d".into(),
                    location: "header".into(),
                    name: "X-Key".into(),
                }),
            ),
        ]),
        security_requirements: vec![SecurityRequirement {
            schemes: BTreeMap::from([(
                "my_oauth".into(),
                StringList {
                    list: vec!["read_all".into()],
                },
            )]),
        }],
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: vec![AgentSkill {
            id: "s".into(),
            name: "s".into(),
            description: "s".into(),
            tags: vec!["t".into()],
            examples: vec!["e".into()],
            input_modes: vec!["a/b".into()],
            output_modes: vec!["a/b".into()],
            security_requirements: vec![SecurityRequirement::default()],
        }],
        signatures: vec![AgentCardSignature {
            protected: "p".into(),
            signature: "s".into(),
            header: opaque(),
        }],
        icon_url: Some("https://i".into()),
    }
}

#[test]
fn output_names_are_lower_camel_case() {
    let task = Task {
        id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: Some(full_message()),
            timestamp: Some(ts("2026-03-20T09:12:44.120Z")),
        },
        artifacts: vec![Artifact {
            name: "n".into(),
            description: "d".into(),
            metadata: opaque(),
            extensions: vec!["https://e".into()],
            ..Artifact::new([Part::text("x")])
        }],
        history: vec![full_message()],
        metadata: opaque(),
    };
    assert_lower_camel_case(&to_value(&task), "task");
    assert_lower_camel_case(&to_value(&full_card()), "card");
    let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        artifact: Artifact::new([Part::text("x")]),
        append: true,
        last_chunk: true,
        metadata: opaque(),
    });
    let out = to_value(&ev);
    assert_lower_camel_case(&out, "event");
    assert_eq!(out["artifactUpdate"]["lastChunk"], true);
    let req = SendMessageRequest {
        tenant: "x".into(),
        configuration: Some(SendMessageConfiguration {
            accepted_output_modes: vec!["a/b".into()],
            task_push_notification_config: Some(Default::default()),
            history_length: Some(2),
            return_immediately: true,
        }),
        ..SendMessageRequest::new(full_message())
    };
    let out = to_value(&req);
    assert_lower_camel_case(&out, "request");
    assert_eq!(out["configuration"]["returnImmediately"], true);
    assert!(
        out["configuration"]
            .get("taskPushNotificationConfig")
            .is_some()
    );
    // The snake_case keys inside opaque members are kept as they are.
    assert!(out["message"]["metadata"].get("snake_case_key").is_some());
    // Every member of the full card is emitted.
    let card = to_value(&full_card());
    for key in [
        "name",
        "description",
        "supportedInterfaces",
        "provider",
        "version",
        "documentationUrl",
        "capabilities",
        "securitySchemes",
        "securityRequirements",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "signatures",
        "iconUrl",
    ] {
        assert!(card.get(key).is_some(), "{key} missing");
    }
    assert_eq!(
        card["securitySchemes"]["my_oauth"]["oauth2SecurityScheme"]["flows"]["authorizationCode"]["pkceRequired"],
        true
    );
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "GRPC");
}

#[test]
fn enums_are_emitted_with_their_full_names() {
    let names: Vec<Value> = TaskState::ALL
        .iter()
        .map(|s| {
            to_value(&TaskStatus {
                state: *s,
                ..TaskStatus::default()
            })["state"]
                .clone()
        })
        .collect();
    assert_eq!(
        names,
        [
            "TASK_STATE_UNSPECIFIED",
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_REJECTED",
            "TASK_STATE_AUTH_REQUIRED",
        ]
    );
    assert_eq!(to_value(&Role::User), "ROLE_USER");
    assert_eq!(to_value(&Role::Agent), "ROLE_AGENT");
    assert_eq!(to_value(&Role::Unspecified), "ROLE_UNSPECIFIED");
    let list = ListTasksRequest {
        status: TaskState::InputRequired,
        ..Default::default()
    };
    assert_eq!(
        to_value(&list),
        json!({"status": "TASK_STATE_INPUT_REQUIRED"})
    );
}

#[test]
fn defaults_without_presence_are_omitted() {
    let msg = Message {
        message_id: "m".into(),
        role: Role::User,
        parts: vec![Part::text("x")],
        ..Message::default()
    };
    assert_eq!(
        to_value(&msg),
        json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]})
    );
    let ev = TaskArtifactUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        artifact: Artifact::new([Part::text("x")]).with_id("a"),
        append: false,
        last_chunk: false,
        metadata: Metadata::new(),
    };
    assert_eq!(
        to_value(&ev),
        json!({"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}})
    );
    assert_eq!(
        to_value(&SendMessageConfiguration::default()),
        json!({}),
        "returnImmediately:false and empty lists are omitted"
    );
    assert_eq!(to_value(&ListTasksRequest::default()), json!({}));
    assert_eq!(
        to_value(&AgentExtension {
            uri: "u".into(),
            ..Default::default()
        }),
        json!({"uri": "u"}),
        "required:false is omitted"
    );
    assert_eq!(to_value(&AgentCapabilities::default()), json!({}));
    assert_eq!(
        to_value(&SecurityRequirement {
            schemes: BTreeMap::from([("k".into(), StringList::default())])
        }),
        json!({"schemes": {"k": {}}}),
        "an empty StringList is {{}}"
    );
    assert_eq!(
        to_value(&ListTaskPushNotificationConfigsResponse::default()),
        json!({"configs": []})
    );
}

#[test]
fn fields_with_presence_are_emitted_when_set_to_a_default() {
    let config = SendMessageConfiguration {
        history_length: Some(0),
        ..Default::default()
    };
    assert_eq!(to_value(&config), json!({"historyLength": 0}));
    let get = GetTaskRequest {
        id: "t".into(),
        history_length: Some(0),
        ..Default::default()
    };
    assert_eq!(to_value(&get), json!({"id": "t", "historyLength": 0}));
    let list = ListTasksRequest {
        page_size: Some(1),
        history_length: Some(0),
        include_artifacts: Some(false),
        ..Default::default()
    };
    assert_eq!(
        to_value(&list),
        json!({"pageSize": 1, "historyLength": 0, "includeArtifacts": false})
    );
    let caps = AgentCapabilities {
        streaming: Some(false),
        push_notifications: Some(false),
        extended_agent_card: Some(false),
        extensions: vec![],
    };
    assert_eq!(
        to_value(&caps),
        json!({"streaming": false, "pushNotifications": false, "extendedAgentCard": false})
    );
    let card = AgentCard {
        documentation_url: Some(String::new()),
        icon_url: Some(String::new()),
        ..Default::default()
    };
    let out = to_value(&card);
    assert_eq!(out["documentationUrl"], "");
    assert_eq!(out["iconUrl"], "");
    // Oneof members have presence: an empty text part is emitted.
    assert_eq!(to_value(&Part::text("")), json!({"text": ""}));
}

#[test]
fn required_members_of_the_card_are_always_emitted() {
    let out = to_value(&AgentCard::default());
    assert_eq!(
        out,
        json!({"name": "", "description": "", "supportedInterfaces": [], "version": "",
               "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []})
    );
}

#[test]
fn list_tasks_response_always_has_tasks_and_next_page_token() {
    let out = serde_json::to_string(&ListTasksResponse::default()).unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tasks"], json!([]));
    assert_eq!(v["nextPageToken"], "");
    assert_eq!(v["pageSize"], 0);
    assert_eq!(v["totalSize"], 0);
    let page = ListTasksResponse {
        tasks: vec![Task {
            id: "t".into(),
            status: TaskStatus {
                state: TaskState::Completed,
                ..Default::default()
            },
            ..Default::default()
        }],
        next_page_token: "next".into(),
        page_size: 1,
        total_size: 2,
    };
    assert_eq!(
        to_value(&page),
        json!({"tasks": [{"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}],
               "nextPageToken": "next", "pageSize": 1, "totalSize": 2})
    );
}

#[test]
fn timestamps_are_emitted_in_utc_with_z_and_milliseconds() {
    for (input, out) in [
        ("2026-03-20T10:00:00Z", "2026-03-20T10:00:00.000Z"),
        ("2026-03-20T10:00:00.5Z", "2026-03-20T10:00:00.500Z"),
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"),
        ("2026-12-31T23:59:59.999+05:30", "2026-12-31T18:29:59.999Z"),
    ] {
        let t = ts(input);
        assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{out}\""));
        assert_eq!(t.to_rfc3339(), out);
        assert_eq!(t.to_string(), out);
    }
    assert_eq!(
        to_value(&Timestamp::from_millis(1_774_001_564_120).unwrap()),
        "2026-03-20T10:12:44.120Z"
    );
}

/// Leap seconds and years past 9999 take the slow formatting path, still UTC with `Z` and millis.
#[test]
fn timestamps_outside_the_fast_path_keep_the_wire_form() {
    let leap = ts("2016-12-31T23:59:60.500Z");
    assert_eq!(to_value(&leap), "2016-12-31T23:59:60.500Z");
    let far = Timestamp::from_millis(253_402_300_800_000).unwrap();
    assert_eq!(to_value(&far), "+10000-01-01T00:00:00.000Z");
    assert_eq!(far.to_rfc3339(), far.to_string());
    let first = Timestamp::from_millis(-62_135_596_800_000).unwrap();
    assert_eq!(to_value(&first), "0001-01-01T00:00:00.000Z");
    assert_eq!(format!("{first:?}"), "0001-01-01T00:00:00.000Z");
}

#[test]
fn bytes_are_emitted_as_standard_padded_base64() {
    for (bytes, b64) in [
        (&b""[..], ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (&[0xfb, 0xff][..], "+/8="),
        (&[0xff, 0xfe, 0xfd, 0xfc][..], "//79/A=="),
    ] {
        assert_eq!(to_value(&Part::raw(bytes.to_vec())), json!({"raw": b64}));
    }
}
