//! Differential tests against the official Rust crates as oracles (pinned: `a2a-lf =0.4.2`,
//! `a2a-pb =0.3.2`), through three paths:
//!
//! - **pbjson**: a2a-pb's generated ProtoJSON types (`a2a_pb::protojson::*`, serde via pbjson);
//! - **conv**: a2a-pb's `protojson_conv` (native a2a-lf value ⇄ proto ⇄ pbjson, with its fixes);
//! - **lf**: a2a-lf's hand-written serde types (`a2a::*`).
//!
//! For a few rich values of Task, Message, StreamResponse and AgentCard: our output parses in each
//! oracle and re-serializes to an equal JSON value, and the oracle's output parses in ours,
//! validates, and re-emits to our canonical form. Only documented differences are normalised
//! (see [`Profile`]). Where an oracle is wrong per the spec, the test asserts our behaviour and
//! pins theirs, each in its own `divergence_*` test with the reason.

use std::collections::BTreeMap;

use a2a_pb::protojson as pb;
use a2a_pb::protojson_conv::{self, ProtoJsonPayload};
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, Artifact, AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow,
    Message, Metadata, MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows,
    OpenIdConnectSecurityScheme, Part, PartContent, PasswordOAuthFlow, ProtocolBinding, Role,
    SecurityRequirement, SecurityScheme, SendMessageResponse, StreamResponse, StringList, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp, Validate,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Oracles and documented normalisations
// ---------------------------------------------------------------------------------------------

/// Which documented differences to normalise before comparing with an oracle's output.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Profile {
    /// a2a-pb. (1) Timestamps: pbjson emits a `+00:00` offset (divergence, see
    /// `divergence_pbjson_emits_plus_00_00_timestamps`); conv fixes it to `Z`. (2) Struct values
    /// (`metadata`, `data`, `params`, `header`) are `google.protobuf.Value`, whose numbers are
    /// doubles: pbjson re-emits `42` as `42.0` (see `divergence_pbjson_emits_struct_integers_as_
    /// doubles`). Both are compared as the same instant / the same number.
    Pb,
    /// a2a-lf. (1) Timestamps: chrono emits as few fractional digits as needed (0/3/6/9, valid
    /// ProtoJSON) where we always emit milliseconds. (2) An empty `StringList` is emitted as
    /// `{"list": []}` instead of `{}` (see `divergence_lf_emits_empty_string_list`).
    Lf,
}

/// Keys whose string value is a `google.protobuf.Timestamp`.
const TIMESTAMP_KEYS: &[&str] = &["timestamp", "statusTimestampAfter"];
/// Members holding `google.protobuf.Struct` / `Value` content.
const STRUCT_KEYS: &[&str] = &["metadata", "data", "params", "header"];

fn numbers_as_doubles(v: &mut Value) {
    match v {
        Value::Number(n) => *v = json!(n.as_f64().unwrap()),
        Value::Array(a) => a.iter_mut().for_each(numbers_as_doubles),
        Value::Object(m) => m.values_mut().for_each(numbers_as_doubles),
        _ => {}
    }
}

fn normalise(mut v: Value, profile: Profile) -> Value {
    fn walk(v: &mut Value, profile: Profile) {
        match v {
            Value::Object(m) => {
                for (k, child) in m.iter_mut() {
                    if STRUCT_KEYS.contains(&k.as_str()) {
                        if profile == Profile::Pb {
                            numbers_as_doubles(child);
                        }
                        continue;
                    }
                    if TIMESTAMP_KEYS.contains(&k.as_str())
                        && let Some(text) = child.as_str()
                    {
                        *child = json!(Timestamp::parse(text).unwrap().to_rfc3339());
                        continue;
                    }
                    if k == "schemes" && profile == Profile::Lf {
                        for scopes in child.as_object_mut().unwrap().values_mut() {
                            if scopes == &json!({"list": []}) {
                                *scopes = json!({});
                            }
                        }
                    }
                    walk(child, profile);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, profile)),
            _ => {}
        }
    }
    walk(&mut v, profile);
    v
}

/// One way of parsing JSON text in an oracle's types and serializing it back.
struct Oracle {
    name: &'static str,
    profile: Profile,
    reemit: fn(&str) -> Result<Value, String>,
}

fn pbjson<P: DeserializeOwned + Serialize>(text: &str) -> Result<Value, String> {
    let parsed: P = serde_json::from_str(text).map_err(|e| e.to_string())?;
    serde_json::to_value(&parsed).map_err(|e| e.to_string())
}

fn conv<L: ProtoJsonPayload>(text: &str) -> Result<Value, String> {
    let parsed: L = protojson_conv::from_str(text).map_err(|e| e.to_string())?;
    protojson_conv::to_value(&parsed).map_err(|e| e.to_string())
}

fn lf<L: DeserializeOwned + Serialize>(text: &str) -> Result<Value, String> {
    let parsed: L = serde_json::from_str(text).map_err(|e| e.to_string())?;
    serde_json::to_value(&parsed).map_err(|e| e.to_string())
}

fn task_oracles() -> [Oracle; 3] {
    [
        Oracle {
            name: "pbjson",
            profile: Profile::Pb,
            reemit: pbjson::<pb::Task>,
        },
        Oracle {
            name: "conv",
            profile: Profile::Pb,
            reemit: conv::<a2a::Task>,
        },
        Oracle {
            name: "lf",
            profile: Profile::Lf,
            reemit: lf::<a2a::Task>,
        },
    ]
}

/// a2a-pb has no `ProtoJsonPayload` for a bare Message: conv is exercised through
/// [`SendMessageResponse`] in `message_in_a_send_message_response`.
fn message_oracles() -> [Oracle; 2] {
    [
        Oracle {
            name: "pbjson",
            profile: Profile::Pb,
            reemit: pbjson::<pb::Message>,
        },
        Oracle {
            name: "lf",
            profile: Profile::Lf,
            reemit: lf::<a2a::Message>,
        },
    ]
}

fn send_response_oracles() -> [Oracle; 3] {
    [
        Oracle {
            name: "pbjson",
            profile: Profile::Pb,
            reemit: pbjson::<pb::SendMessageResponse>,
        },
        Oracle {
            name: "conv",
            profile: Profile::Pb,
            reemit: conv::<a2a::SendMessageResponse>,
        },
        Oracle {
            name: "lf",
            profile: Profile::Lf,
            reemit: lf::<a2a::SendMessageResponse>,
        },
    ]
}

fn stream_oracles() -> [Oracle; 3] {
    [
        Oracle {
            name: "pbjson",
            profile: Profile::Pb,
            reemit: pbjson::<pb::StreamResponse>,
        },
        Oracle {
            name: "conv",
            profile: Profile::Pb,
            reemit: conv::<a2a::StreamResponse>,
        },
        Oracle {
            name: "lf",
            profile: Profile::Lf,
            reemit: lf::<a2a::StreamResponse>,
        },
    ]
}

fn card_oracles() -> [Oracle; 3] {
    [
        Oracle {
            name: "pbjson",
            profile: Profile::Pb,
            reemit: pbjson::<pb::AgentCard>,
        },
        Oracle {
            name: "conv",
            profile: Profile::Pb,
            reemit: conv::<a2a::AgentCard>,
        },
        Oracle {
            name: "lf",
            profile: Profile::Lf,
            reemit: lf::<a2a::AgentCard>,
        },
    ]
}

/// Ours → theirs → equal, and theirs → ours → validates → equal.
fn differential<T>(value: &T, oracles: &[Oracle])
where
    T: Serialize + DeserializeOwned + Validate + PartialEq + std::fmt::Debug,
{
    value.validate().expect("the rich values are valid");
    let ours_text = serde_json::to_string(value).unwrap();
    let ours = serde_json::to_value(value).unwrap();
    for oracle in oracles {
        let theirs = (oracle.reemit)(&ours_text)
            .unwrap_or_else(|e| panic!("{} rejected our output: {e}\n{ours_text}", oracle.name));
        assert_eq!(
            normalise(theirs.clone(), oracle.profile),
            normalise(ours.clone(), oracle.profile),
            "{}: our output did not survive their parser",
            oracle.name
        );
        // Theirs parses in ours, validates, and comes out in our canonical form.
        let theirs_text = serde_json::to_string(&theirs).unwrap();
        let back: T = json::decode(theirs_text.as_bytes(), DEFAULT_MAX_DEPTH)
            .unwrap_or_else(|e| panic!("we rejected {}'s output: {e}\n{theirs_text}", oracle.name));
        back.validate()
            .unwrap_or_else(|e| panic!("{}'s output does not validate: {e}", oracle.name));
        let back_value = serde_json::to_value(&back).unwrap();
        if oracle.profile == Profile::Lf {
            // Nothing lossy on this path: exactly our value again.
            assert_eq!(&back, value, "{}: theirs → ours", oracle.name);
        } else {
            // Struct numbers came back as doubles; everything else is exact.
            let mut expected = ours.clone();
            let mut got = back_value.clone();
            for v in [&mut expected, &mut got] {
                *v = normalise(v.take(), Profile::Pb);
            }
            assert_eq!(got, expected, "{}: theirs → ours", oracle.name);
        }
        // Whatever they emitted, we re-emit canonical timestamps.
        assert_canonical_timestamps(&back_value);
    }
}

fn assert_canonical_timestamps(v: &Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if TIMESTAMP_KEYS.contains(&k.as_str()) {
                    let s = child.as_str().unwrap();
                    assert!(s.len() == 24 && s.ends_with('Z'), "{k}: {s}");
                } else if !STRUCT_KEYS.contains(&k.as_str()) {
                    assert_canonical_timestamps(child);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(assert_canonical_timestamps),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Rich values
// ---------------------------------------------------------------------------------------------

fn meta(v: Value) -> Metadata {
    match v {
        Value::Object(m) => m.into(),
        _ => unreachable!(),
    }
}

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

/// Integers in Struct values stay below 2^53: a2a-pb rejects larger ones (see
/// `divergence_pbjson_rejects_struct_integers_from_2_pow_53`).
fn rich_message(role: Role) -> Message {
    Message {
        message_id: "7c1e7f0e-1d0b-4a3e-9a53-0c8d2b1f4e11".into(),
        context_id: "c-81f2".into(),
        task_id: "t-9".into(),
        role,
        parts: vec![
            Part::text("Book Lisbon to Porto, Friday morning — «première» 🚆").with_media_type("text/plain"),
            Part::raw(vec![0x89, b'P', b'N', b'G', 0, 0xff, 0xfe])
                .with_filename("scan.png")
                .with_media_type("image/png"),
            Part::url("https://files.example.com/r/42.pdf").with_filename("report.pdf"),
            Part {
                metadata: meta(json!({"source": "form", "confidence": 0.87})),
                ..Part::data(json!({"origin": "OSL", "dest": "BGO", "pax": 2, "ok": true,
                                     "legs": [{"n": 1, "t": null}, [], {}], "big": 9007199254740991i64}))
                    .with_media_type("application/json")
            },
            Part::data(json!("a bare string")),
            Part::data(json!([1, 2.5, "x", false])),
            Part::text(""),
        ],
        metadata: meta(json!({
            "https://travel.example.com/ext/traveler-profile/v1": {"seatPreference": "window", "rank": -3},
            "trace": [1, "two", {"three": 3.25}]
        })),
        extensions: vec!["https://travel.example.com/ext/traveler-profile/v1".into()],
        reference_task_ids: vec!["t-1".into(), "t-2".into()],
    }
}

fn rich_artifact(id: &str) -> Artifact {
    Artifact {
        artifact_id: id.into(),
        name: "ticket".into(),
        description: "The booked ticket".into(),
        parts: vec![
            Part::url("https://files.example.com/t/991.pdf")
                .with_filename("ticket.pdf")
                .with_media_type("application/pdf"),
            Part::text("# Options\n1. 08:39 IC 521\n"),
        ],
        metadata: meta(json!({"pages": 2})),
        extensions: vec!["https://standards.example.org/ext/citations/v1".into()],
    }
}

fn rich_task() -> Task {
    Task {
        id: "0f3c2a8e-5b7d-4f6a-9c1e-2d4b6a8c0e13".into(),
        context_id: "c-81f2".into(),
        status: TaskStatus {
            state: TaskState::InputRequired,
            message: Some(rich_message(Role::Agent)),
            timestamp: Some(ts("2026-03-20T09:12:44.120Z")),
        },
        artifacts: vec![rich_artifact("a-1"), rich_artifact("a-2")],
        history: vec![rich_message(Role::User), rich_message(Role::Agent)],
        metadata: meta(
            json!({"priority": 1, "tags": ["rail", "pt"], "nested": {"deep": {"x": null}}}),
        ),
    }
}

fn rich_events() -> Vec<StreamResponse> {
    vec![
        StreamResponse::Task(rich_task()),
        StreamResponse::Message(rich_message(Role::Agent)),
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t-9".into(),
            context_id: "c-1".into(),
            status: TaskStatus {
                state: TaskState::Working,
                message: Some(rich_message(Role::Agent)),
                timestamp: Some(ts("2026-03-20T10:00:01.250Z")),
            },
            metadata: meta(json!({"progress": 0.5})),
        }),
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t-9".into(),
            context_id: "c-1".into(),
            status: TaskStatus {
                state: TaskState::Completed,
                message: None,
                timestamp: Some(ts("2026-03-20T10:00:04.002Z")),
            },
            metadata: Metadata::new(),
        }),
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t-9".into(),
            context_id: "c-1".into(),
            artifact: rich_artifact("a-1"),
            append: true,
            last_chunk: true,
            metadata: meta(json!({"chunk": 2})),
        }),
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t-9".into(),
            context_id: "c-1".into(),
            artifact: rich_artifact("a-1"),
            append: false,
            last_chunk: false,
            metadata: Metadata::new(),
        }),
    ]
}

fn fixture_card() -> AgentCard {
    let path = format!("{}/fixtures/agent_card.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn scopes(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// One card per OAuth flow (the flow is a oneof), each with all five security schemes.
fn rich_cards() -> Vec<AgentCard> {
    let flows = [
        OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
            authorization_url: "https://auth.example.com/authorize".into(),
            token_url: "https://auth.example.com/token".into(),
            refresh_url: "https://auth.example.com/refresh".into(),
            scopes: scopes(&[("trips:read", "Read trips"), ("trips:book", "Book trips")]),
            pkce_required: true,
        }),
        OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
            token_url: "https://auth.example.com/token".into(),
            refresh_url: String::new(),
            scopes: scopes(&[("trips:read", "Read trips")]),
        }),
        OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
            device_authorization_url: "https://auth.example.com/device".into(),
            token_url: "https://auth.example.com/token".into(),
            refresh_url: "https://auth.example.com/refresh".into(),
            scopes: scopes(&[("trips:read", "Read trips")]),
        }),
        OAuthFlows::Implicit(ImplicitOAuthFlow {
            authorization_url: "https://auth.example.com/authorize".into(),
            refresh_url: String::new(),
            scopes: scopes(&[("a", "b")]),
        }),
        OAuthFlows::Password(PasswordOAuthFlow {
            token_url: "https://auth.example.com/token".into(),
            refresh_url: "https://auth.example.com/refresh".into(),
            scopes: scopes(&[("a", "b")]),
        }),
    ];
    flows
        .into_iter()
        .map(|flow| AgentCard {
            name: "Itinerary Agent".into(),
            description: "Plans trips.".into(),
            supported_interfaces: vec![
                AgentInterface::new("https://agents.example.com/a2a/jsonrpc", ProtocolBinding::JsonRpc),
                AgentInterface {
                    tenant: "acme".into(),
                    ..AgentInterface::new("https://agents.example.com/a2a/rest", ProtocolBinding::HttpJson)
                },
                AgentInterface::new("agents.example.com:443", ProtocolBinding::Grpc),
                AgentInterface::new(
                    "https://agents.example.com/slim",
                    ProtocolBinding::Other("https://bindings.example.org/slim/v1".into()),
                ),
            ],
            provider: Some(AgentProvider {
                url: "https://travel.example.com".into(),
                organization: "Example Travel Ltd".into(),
            }),
            version: "2.3.0".into(),
            documentation_url: Some("https://travel.example.com/docs".into()),
            capabilities: AgentCapabilities {
                streaming: Some(true),
                push_notifications: Some(false),
                extensions: vec![
                    AgentExtension {
                        uri: "https://travel.example.com/ext/traveler-profile/v1".into(),
                        description: "Reads preferences".into(),
                        required: true,
                        params: meta(json!({"fields": ["seatPreference"], "max": 3})),
                    },
                    AgentExtension {
                        uri: "https://standards.example.org/ext/citations/v1".into(),
                        ..Default::default()
                    },
                ],
                extended_agent_card: Some(false),
            },
            security_schemes: BTreeMap::from([
                (
                    "oauth".into(),
                    SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                        description: "OAuth".into(),
                        flows: Some(flow),
                        oauth2_metadata_url: "https://auth.example.com/.well-known/oauth-authorization-server".into(),
                    }),
                ),
                (
                    "partnerKey".into(),
                    SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                        description: "Partner key".into(),
                        location: "header".into(),
                        name: "X-API-Key".into(),
                    }),
                ),
                (
                    "bearer".into(),
                    SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                        description: String::new(),
                        scheme: "Bearer".into(),
                        bearer_format: "JWT".into(),
                    }),
                ),
                (
                    "corp".into(),
                    SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
                        description: "Corporate IdP".into(),
                        open_id_connect_url: "https://idp.example.com/.well-known/openid-configuration".into(),
                    }),
                ),
                (
                    "mtls".into(),
                    SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme {
                        description: "Client certificate".into(),
                    }),
                ),
            ]),
            security_requirements: vec![
                SecurityRequirement {
                    schemes: BTreeMap::from([
                        ("oauth".into(), StringList { list: vec!["trips:read".into()] }),
                        ("mtls".into(), StringList { list: vec!["x".into()] }),
                    ]),
                },
                SecurityRequirement {
                    schemes: BTreeMap::from([("bearer".into(), StringList { list: vec!["y".into()] })]),
                },
            ],
            default_input_modes: vec!["text/plain".into(), "application/json".into()],
            default_output_modes: vec!["application/pdf".into()],
            skills: vec![AgentSkill {
                id: "plan-trip".into(),
                name: "Trip planner".into(),
                description: "Builds an itinerary.".into(),
                tags: vec!["travel".into()],
                examples: vec!["Plan 3 days in Lisbon".into()],
                input_modes: vec!["text/plain".into()],
                output_modes: vec!["application/json".into()],
                security_requirements: vec![SecurityRequirement {
                    schemes: BTreeMap::from([("oauth".into(), StringList { list: vec!["trips:book".into()] })]),
                }],
            }],
            signatures: vec![AgentCardSignature {
                protected: "eyJhbGciOiJFUzI1NiJ9".into(),
                signature: "c2lnbmF0dXJl".into(),
                header: meta(json!({"kid": "k1", "n": 7})),
            }],
            icon_url: Some("https://travel.example.com/icon.png".into()),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Agreement
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Divergences: the oracle is wrong per the spec; we assert our behaviour and pin theirs.
// ---------------------------------------------------------------------------------------------

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
