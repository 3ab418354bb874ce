//! Divergences: the oracle is wrong per the spec; each test asserts our behaviour and pins
//! theirs, with the reason.

use a2a_pb::protojson as pb;
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCard, AgentInterface, Message, OAuth2SecurityScheme, ProtocolBinding, SecurityScheme,
    StreamResponse, Task, TaskState, TaskStatus, Validate,
};
use serde_json::json;

use super::*;

fn status_event_json(timestamp: &str) -> String {
    format!(
        r#"{{"statusUpdate":{{"taskId":"t","contextId":"c","status":{{"state":"TASK_STATE_WORKING","timestamp":"{timestamp}"}}}}}}"#
    )
}

/// Spec §5.6.1 / digest §1.5: timestamps are UTC with a `Z` suffix; offsets MUST NOT be emitted.
/// a2a-pb's pbjson types emit `+00:00` (its conv layer patches this afterwards by field name).
#[test]
fn divergence_pbjson_emits_plus_00_00_timestamps() {
    let text = status_event_json("2026-03-20T10:00:01.250Z");
    let theirs = pbjson::<pb::StreamResponse>(&text).unwrap();
    assert_eq!(
        theirs["statusUpdate"]["status"]["timestamp"],
        "2026-03-20T10:00:01.250+00:00"
    );
    // Ours: always Z and milliseconds, and we accept their form.
    let ours: StreamResponse =
        json::decode(theirs.to_string().as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    let out = serde_json::to_value(&ours).unwrap();
    assert_eq!(
        out["statusUpdate"]["status"]["timestamp"],
        "2026-03-20T10:00:01.250Z"
    );
    // conv fixes pbjson's offset to Z.
    let conv_out = conv::<a2a::StreamResponse>(&text).unwrap();
    assert_eq!(
        conv_out["statusUpdate"]["status"]["timestamp"],
        "2026-03-20T10:00:01.250Z"
    );
}

/// Spec §5.6.1: millisecond precision SHOULD be used. a2a-lf (chrono) emits as few digits as the
/// value needs (none for a whole second, nine for nanoseconds) — valid ProtoJSON, not the
/// recommended form. Ours always emits exactly three.
#[test]
fn divergence_lf_emits_variable_fractional_digits() {
    for (input, lf_form, ours_form) in [
        (
            "2026-03-20T10:00:00.000Z",
            "2026-03-20T10:00:00Z",
            "2026-03-20T10:00:00.000Z",
        ),
        (
            "2026-03-20T10:00:00.123456789Z",
            "2026-03-20T10:00:00.123456789Z",
            "2026-03-20T10:00:00.123Z",
        ),
    ] {
        let theirs = lf::<a2a::StreamResponse>(&status_event_json(input)).unwrap();
        assert_eq!(theirs["statusUpdate"]["status"]["timestamp"], lf_form);
        let ours: StreamResponse =
            json::decode(theirs.to_string().as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        assert_eq!(
            serde_json::to_value(&ours).unwrap()["statusUpdate"]["status"]["timestamp"],
            ours_form
        );
    }
}

/// google.protobuf.Value numbers are doubles, but the canonical ProtoJSON writers (Go, Java,
/// C++) print integral doubles without a fraction: `42`, not `42.0`. pbjson prints `42.0`. The
/// values are equal numbers; ours keeps the integer as written.
#[test]
fn divergence_pbjson_emits_struct_integers_as_doubles() {
    let msg =
        r#"{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"pax":2}}],"metadata":{"n":42}}"#;
    let theirs = pbjson::<pb::Message>(msg).unwrap().to_string();
    assert!(
        theirs.contains(r#""pax":2.0"#) && theirs.contains(r#""n":42.0"#),
        "{theirs}"
    );
    let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    let out = serde_json::to_string(&ours).unwrap();
    assert!(
        out.contains(r#""pax":2"#) && out.contains(r#""n":42"#) && !out.contains("42.0"),
        "{out}"
    );
}

/// A Struct number outside ±2^53 is a double in ProtoJSON; an implementation may round it, but
/// a2a-pb rejects the whole message — even for 2^60, which a double holds exactly. Ours keeps
/// every 64-bit integer exact.
#[test]
fn divergence_pbjson_rejects_struct_integers_from_2_pow_53() {
    for n in [
        "9007199254740992",
        "1152921504606846976",
        "1152921504606846977",
        "-9007199254740992",
    ] {
        let msg = format!(r#"{{"messageId":"m","role":"ROLE_USER","parts":[{{"data":{n}}}]}}"#);
        let err = pbjson::<pb::Message>(&msg).unwrap_err();
        assert!(err.contains("out of range"), "{err}");
        assert!(conv::<a2a::SendMessageResponse>(&format!(r#"{{"message":{msg}}}"#)).is_err());
        let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        assert!(
            serde_json::to_string(&ours)
                .unwrap()
                .contains(&format!(r#""data":{n}"#))
        );
    }
    // a2a-lf keeps them (serde_json::Value), as we do.
    let msg = r#"{"messageId":"m","role":"ROLE_USER","parts":[{"data":1152921504606846977}]}"#;
    assert_eq!(
        lf::<a2a::Message>(msg).unwrap()["parts"][0]["data"],
        json!(1_152_921_504_606_846_977_u64)
    );
}

/// `Part.data` is a google.protobuf.Value: JSON `null` is a real NullValue (digest §1.3), not
/// "unset". pbjson reads it as unset and emits a part with no content (`{}`); conv then turns
/// that into an empty text part. Ours keeps `{"data": null}`, and rejects a part with no content.
#[test]
fn divergence_pb_drops_part_data_null() {
    let msg = r#"{"messageId":"m","role":"ROLE_USER","parts":[{"data":null}]}"#;
    let theirs = pbjson::<pb::Message>(msg).unwrap();
    assert_eq!(theirs["parts"][0], json!({}));
    let conv_out = conv::<a2a::SendMessageResponse>(&format!(r#"{{"message":{msg}}}"#)).unwrap();
    assert_eq!(conv_out["message"]["parts"][0], json!({"text": ""}));
    // Ours.
    let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    ours.validate().unwrap();
    assert_eq!(
        serde_json::to_value(&ours).unwrap()["parts"][0],
        json!({"data": null})
    );
    // Their `{}` part is invalid for us: exactly one content member is required.
    let theirs_msg: Message =
        json::decode(theirs.to_string().as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    let err = theirs_msg.validate().unwrap_err();
    assert!(err.to_string().contains("parts[0]"), "{err}");
    // a2a-lf keeps the null, as we do.
    assert_eq!(
        lf::<a2a::Message>(msg).unwrap()["parts"][0],
        json!({"data": null})
    );
}

/// A part with no content is malformed (digest A13: reject with InvalidParams). pbjson accepts
/// it; conv silently turns it into an empty text part. Ours reports `parts[0]`.
#[test]
fn divergence_pb_accepts_a_part_with_no_content() {
    let msg = r#"{"messageId":"m","role":"ROLE_USER","parts":[{"mediaType":"text/plain"}]}"#;
    assert!(pbjson::<pb::Message>(msg).is_ok());
    let conv_out = conv::<a2a::SendMessageResponse>(&format!(r#"{{"message":{msg}}}"#)).unwrap();
    assert_eq!(
        conv_out["message"]["parts"][0],
        json!({"text": "", "mediaType": "text/plain"})
    );
    let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert!(
        ours.validate()
            .unwrap_err()
            .to_string()
            .contains("parts[0]")
    );
}

/// ProtoJSON: `null` on any field means "unset". pbjson rejects null on singular string fields.
#[test]
fn divergence_pbjson_rejects_null_strings() {
    let msg = r#"{"messageId":"m","contextId":null,"taskId":null,"role":"ROLE_USER","parts":[{"text":"x","filename":null}]}"#;
    assert!(pbjson::<pb::Message>(msg).unwrap_err().contains("null"));
    let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    ours.validate().unwrap();
    assert!(ours.context_id.is_empty() && ours.parts[0].filename.is_empty());
}

/// ProtoJSON parsers accept the proto field names (snake_case); a2a-lf accepts only
/// lowerCamelCase, including for the oneof wrappers. pbjson accepts both, as we do.
#[test]
fn divergence_lf_rejects_snake_case_names() {
    let msg = r#"{"message_id":"m","context_id":"c","role":"ROLE_USER","parts":[{"text":"x","media_type":"a/b"}]}"#;
    assert!(lf::<a2a::Message>(msg).unwrap_err().contains("messageId"));
    assert_eq!(pbjson::<pb::Message>(msg).unwrap()["messageId"], "m");
    let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(
        (ours.message_id.as_str(), ours.parts[0].media_type.as_str()),
        ("m", "a/b")
    );

    let ev = r#"{"status_update":{"task_id":"t","context_id":"c","status":{"state":"TASK_STATE_WORKING"}}}"#;
    assert!(lf::<a2a::StreamResponse>(ev).is_err());
    assert!(pbjson::<pb::StreamResponse>(ev).is_ok());
    let ours: StreamResponse = json::decode(ev.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    ours.validate().unwrap();
}

/// ProtoJSON parsers accept enum numbers; a2a-lf accepts only names (and, beyond ProtoJSON,
/// the empty string as UNSPECIFIED).
#[test]
fn divergence_lf_rejects_enum_numbers() {
    let msg = r#"{"messageId":"m","role":1,"parts":[{"text":"x"}]}"#;
    assert!(lf::<a2a::Message>(msg).is_err());
    assert_eq!(pbjson::<pb::Message>(msg).unwrap()["role"], "ROLE_USER");
    let task = r#"{"id":"t","contextId":"c","status":{"state":3}}"#;
    assert!(lf::<a2a::Task>(task).is_err());
    let ours: Task = json::decode(task.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(ours.status.state, TaskState::Completed);
    // "" is not an enum name.
    let empty = r#"{"messageId":"m","role":"","parts":[{"text":"x"}]}"#;
    assert_eq!(
        lf::<a2a::Message>(empty).unwrap()["role"],
        "ROLE_UNSPECIFIED"
    );
    assert!(json::decode::<Message>(empty.as_bytes(), DEFAULT_MAX_DEPTH).is_err());
}

/// bytes: "accept standard or URL-safe base64, with or without padding" (digest §1.4). a2a-lf
/// accepts only standard padded base64.
#[test]
fn divergence_lf_rejects_url_safe_and_unpadded_base64() {
    for raw in ["-__-AQ==", "+//+AQ", "-__-AQ"] {
        let msg = format!(r#"{{"messageId":"m","role":"ROLE_USER","parts":[{{"raw":"{raw}"}}]}}"#);
        assert!(lf::<a2a::Message>(&msg).is_err(), "{raw}");
        assert_eq!(
            pbjson::<pb::Message>(&msg).unwrap()["parts"][0]["raw"],
            "+//+AQ=="
        );
        let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        assert_eq!(
            serde_json::to_value(&ours).unwrap()["parts"][0]["raw"],
            "+//+AQ=="
        );
    }
}

/// Exactly one member of a oneof may be set. a2a-lf silently keeps one and drops the other
/// (text over url in a Part; message over task in a StreamResponse). pbjson and ours reject.
#[test]
fn divergence_lf_silently_drops_a_second_oneof_member() {
    let msg = r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"https://b"}]}"#;
    assert_eq!(
        lf::<a2a::Message>(msg).unwrap()["parts"][0],
        json!({"text": "a"})
    );
    assert!(pbjson::<pb::Message>(msg).is_err());
    let ours: Message = json::decode(msg.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert!(
        ours.validate()
            .unwrap_err()
            .to_string()
            .contains("text, url")
    );

    let ev = r#"{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}},
                 "message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}"#;
    assert!(
        lf::<a2a::StreamResponse>(ev)
            .unwrap()
            .get("message")
            .is_some()
    );
    assert!(pbjson::<pb::StreamResponse>(ev).is_err());
    assert!(json::decode::<StreamResponse>(ev.as_bytes(), DEFAULT_MAX_DEPTH).is_err());
}

/// `Task.contextId` is a plain proto3 string (not REQUIRED): a task without it is valid
/// ProtoJSON, and a ProtoJSON writer omits it when empty, as ours does. a2a-lf rejects it.
#[test]
fn divergence_lf_requires_task_context_id() {
    let task = Task {
        id: "t".into(),
        status: TaskStatus {
            state: TaskState::Working,
            ..Default::default()
        },
        ..Default::default()
    };
    task.validate().unwrap();
    let text = serde_json::to_string(&task).unwrap();
    assert!(!text.contains("contextId"));
    assert!(lf::<a2a::Task>(&text).unwrap_err().contains("contextId"));
    assert!(pbjson::<pb::Task>(&text).is_ok());
}

/// Defaults of fields without presence are omitted on output (digest §1.3): `append:false`,
/// `lastChunk:false`. a2a-lf re-emits them when they were present in its input.
#[test]
fn divergence_lf_reemits_explicit_false_defaults() {
    let ev = r#"{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":false,"lastChunk":false}}"#;
    let theirs = lf::<a2a::StreamResponse>(ev).unwrap();
    assert_eq!(theirs["artifactUpdate"]["lastChunk"], false);
    assert_eq!(theirs["artifactUpdate"]["append"], false);
    for (name, out) in [
        ("pbjson", pbjson::<pb::StreamResponse>(ev).unwrap()),
        (
            "ours",
            serde_json::to_value(json::decode::<StreamResponse>(ev.as_bytes(), 64).unwrap())
                .unwrap(),
        ),
    ] {
        assert!(out["artifactUpdate"].get("lastChunk").is_none(), "{name}");
        assert!(out["artifactUpdate"].get("append").is_none(), "{name}");
    }
}

/// A `StringList` with no element is emitted as `{}` (digest §2.6: "with no scopes it serializes
/// as `{}`"). a2a-lf emits `{"list": []}`.
#[test]
fn divergence_lf_emits_empty_string_list() {
    let card = fixture_card();
    let theirs = lf::<a2a::AgentCard>(&serde_json::to_string(&card).unwrap()).unwrap();
    assert_eq!(
        theirs["securityRequirements"][1]["schemes"]["partnerKey"],
        json!({"list": []})
    );
    let ours = serde_json::to_value(&card).unwrap();
    assert_eq!(
        ours["securityRequirements"][1]["schemes"]["partnerKey"],
        json!({})
    );
    // Both forms parse to the same value in ours.
    let back: AgentCard = json::decode(theirs.to_string().as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(back, card);
}

/// The agent card carries the interface URL as given. a2a-lf (and conv, built on it) rewrites a
/// GRPC interface's `http://host:port` to `host:port`; pbjson and ours keep it.
#[test]
fn divergence_lf_rewrites_grpc_interface_urls() {
    let mut card = fixture_card();
    card.supported_interfaces[0] =
        AgentInterface::new("http://agents.example.com:50051", ProtocolBinding::Grpc);
    let text = serde_json::to_string(&card).unwrap();
    for out in [
        lf::<a2a::AgentCard>(&text).unwrap(),
        conv::<a2a::AgentCard>(&text).unwrap(),
    ] {
        assert_eq!(
            out["supportedInterfaces"][0]["url"],
            "agents.example.com:50051"
        );
    }
    assert_eq!(
        pbjson::<pb::AgentCard>(&text).unwrap()["supportedInterfaces"][0]["url"],
        "http://agents.example.com:50051"
    );
    let ours: AgentCard = json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(
        ours.supported_interfaces[0].url,
        "http://agents.example.com:50051"
    );
}

/// `OAuth2SecurityScheme.flows` is REQUIRED; when it is missing, conv invents an empty
/// client-credentials flow. Ours keeps it absent (`flows: None`), so validation or the caller
/// can see it is missing.
#[test]
fn divergence_conv_invents_an_oauth_flow() {
    let mut card = fixture_card();
    card.security_schemes.insert(
        "oauth".into(),
        SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme::default()),
    );
    let text = serde_json::to_string(&card).unwrap();
    let out = conv::<a2a::AgentCard>(&text).unwrap();
    assert_eq!(
        out["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"],
        json!({"clientCredentials": {}})
    );
    let ours: AgentCard = json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert!(matches!(
        &ours.security_schemes["oauth"],
        SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme { flows: None, .. })
    ));
}
