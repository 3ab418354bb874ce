//! Agreement: our output parses in every oracle and re-serializes equal, and the oracle's output
//! parses, validates and re-emits to our canonical form.

use a2a_pb::protojson_conv;
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    PartContent, Role, SendMessageResponse, Task, TaskState, TaskStatus, Validate,
};
use serde_json::json;

use super::*;

#[test]
fn task_agrees_with_every_oracle() {
    differential(&rich_task(), &task_oracles());
    // A minimal task too (only REQUIRED members, plus the contextId a2a-lf insists on).
    let minimal = Task {
        id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus {
            state: TaskState::Submitted,
            ..Default::default()
        },
        ..Default::default()
    };
    differential(&minimal, &task_oracles());
}

#[test]
fn every_task_state_agrees_with_every_oracle() {
    for state in &TaskState::ALL[1..] {
        let mut task = rich_task();
        task.status.state = *state;
        differential(&task, &task_oracles());
    }
}

#[test]
fn message_agrees_with_every_oracle() {
    differential(&rich_message(Role::User), &message_oracles());
    differential(&rich_message(Role::Agent), &message_oracles());
}

#[test]
fn message_in_a_send_message_response_agrees_with_every_oracle() {
    differential(
        &SendMessageResponse::Message(rich_message(Role::Agent)),
        &send_response_oracles(),
    );
    differential(
        &SendMessageResponse::Task(rich_task()),
        &send_response_oracles(),
    );
}

#[test]
fn stream_responses_agree_with_every_oracle() {
    for event in rich_events() {
        differential(&event, &stream_oracles());
    }
}

#[test]
fn agent_cards_agree_with_every_oracle() {
    for card in rich_cards() {
        differential(&card, &card_oracles());
    }
}

/// The §9.1 card has `{"partnerKey": {}}` (a scheme with no scopes): the lf profile normalises
/// its `{"list": []}` form.
#[test]
fn the_spec_card_agrees_with_every_oracle() {
    differential(&fixture_card(), &card_oracles());
}

/// Values built natively with a2a-lf's API, emitted by a2a-lf and by a2a-pb's conv, parse in ours.
#[test]
fn values_built_by_the_oracle_parse_and_validate_in_ours() {
    let theirs = a2a::Task {
        id: "t-1".into(),
        context_id: "c-1".into(),
        status: a2a::TaskStatus {
            state: a2a::TaskState::Completed,
            message: Some(a2a::Message::new(
                a2a::Role::Agent,
                vec![a2a::Part::text("done")],
            )),
            timestamp: Some("2026-03-20T09:12:44.123456789Z".parse().unwrap()),
        },
        artifacts: Some(vec![a2a::Artifact {
            artifact_id: "a-1".into(),
            name: Some("out".into()),
            description: None,
            parts: vec![
                a2a::Part::raw(vec![1, 2, 3]).with_media_type("application/octet-stream"),
                a2a::Part::data(json!({"k": [1, 2]})),
            ],
            metadata: None,
            extensions: None,
        }]),
        history: Some(vec![a2a::Message::new(
            a2a::Role::User,
            vec![a2a::Part::url("https://u")],
        )]),
        metadata: None,
    };
    let from_lf = serde_json::to_string(&theirs).unwrap();
    let from_conv = protojson_conv::to_value(&theirs).unwrap().to_string();
    for text in [from_lf, from_conv] {
        let ours: Task = json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        ours.validate().unwrap();
        assert_eq!(ours.id, "t-1");
        assert_eq!(ours.status.state, TaskState::Completed);
        assert_eq!(ours.status.message.as_ref().unwrap().text(), "done");
        // Nanoseconds are kept in memory; the wire form is milliseconds with `Z`.
        assert_eq!(
            serde_json::to_value(ours.status.timestamp.unwrap()).unwrap(),
            "2026-03-20T09:12:44.123Z"
        );
        assert_eq!(
            ours.artifacts[0].parts[0].content,
            PartContent::Raw(vec![1, 2, 3].into())
        );
        assert_eq!(ours.history[0].role, Role::User);
    }
}
