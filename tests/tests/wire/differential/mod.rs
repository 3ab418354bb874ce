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
//!
//! The oracles, the normalisations and the rich values are here; agreement and divergences are
//! a module each.

use std::collections::BTreeMap;

use a2a_pb::protojson as pb;
use a2a_pb::protojson_conv::{self, ProtoJsonPayload};
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, Artifact, AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow,
    Message, Metadata, MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows,
    OpenIdConnectSecurityScheme, Part, PasswordOAuthFlow, ProtocolBinding, Role,
    SecurityRequirement, SecurityScheme, StreamResponse, StringList, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp, Validate,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

mod agreement;
mod divergences;

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
