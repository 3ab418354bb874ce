//! Output rules: lowerCamelCase, full enum names, defaults omitted, presence fields emitted when
//! set, `Z` timestamps with milliseconds, standard padded base64.

use std::collections::BTreeMap;

use a2a_runtime::types::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, Artifact, AuthorizationCodeOAuthFlow,
    GetTaskRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse,
    Message, Metadata, OAuth2SecurityScheme, OAuthFlows, Part, ProtocolBinding, Role,
    SecurityRequirement, SecurityScheme, SendMessageConfiguration, SendMessageRequest,
    StreamResponse, StringList, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, Timestamp,
};
use serde_json::{Value, json};

use super::*;

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
