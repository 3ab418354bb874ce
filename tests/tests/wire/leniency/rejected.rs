//! Rejected input: each rejection carries its JSON-RPC code and names the offending field path.

use a2a_runtime::error::A2aError;
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCapabilities, GetTaskRequest, ListTasksRequest, Message, OAuthFlows, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task, TaskStatus,
};

use super::*;

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
