//! Property tests: `a2a_runtime::json_out` writes exactly the bytes `serde_json::to_vec`
//! writes, for every Task, StreamResponse, AgentCard and JSON value (strings with any Unicode,
//! control characters, quotes and backslashes, long enough to span several 8-byte words).
//!
//! The generators are those of `wire_roundtrip.rs`, with longer strings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use a2a_runtime::json_out;
use a2a_runtime::types::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, Artifact, AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow,
    Message, Metadata, MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows,
    OpenIdConnectSecurityScheme, Part, PartContent, PasswordOAuthFlow, ProtocolBinding, Role,
    SecurityRequirement, SecurityScheme, StreamResponse, StringList, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use proptest::prelude::*;
use serde::Serialize;
use serde_json::{Map, Number, Value};

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Strings: ASCII, any Unicode (incl. control characters, quotes, backslashes), escapes packed
/// together, or empty; up to 40 characters.
fn text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 ._:/-]{0,24}",
        2 => any::<String>().prop_map(|s| s.chars().take(40).collect()),
        2 => "[\\x00-\\x7f]{0,40}",
        1 => "[a\"\\\\\\x00-\\x1f\\x7fé😀]{0,40}",
        1 => Just(String::new()),
        1 => Just("\"\\\u{0}\u{1f}\u{2028}\u{1F600}é".to_owned()),
    ]
    .boxed()
}
fn non_empty() -> BoxedStrategy<String> {
    "[a-zA-Z0-9._:/-]{1,12}".boxed()
}

fn strings() -> BoxedStrategy<Vec<String>> {
    prop::collection::vec(text(), 0..3).boxed()
}

/// JSON numbers: every 64-bit integer (2^60 and neighbours included) and finite doubles.
fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::sample::select(vec![
            1u64 << 60,
            (1 << 60) + 1,
            (1 << 53) + 1,
            u64::MAX,
            i64::MAX as u64 + 1,
        ])
        .prop_map(Value::from),
        prop::sample::select(vec![i64::MIN, -(1 << 60) - 1]).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        prop::sample::select(vec![0.5, -0.0, 1.0, 1e300, 5e-324, 0.1, 123.456])
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
    ]
    .boxed()
}

/// Any JSON value, nested a few levels.
fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
    .boxed()
}

fn metadata() -> BoxedStrategy<Metadata> {
    prop_oneof![
        1 => Just(Metadata::new()),
        2 => prop::collection::btree_map(text(), json_value(), 0..4)
            .prop_map(|m| m.into_iter().collect()),
    ]
    .boxed()
}

/// Milliseconds over the whole `google.protobuf.Timestamp` range (years 0001 to 9999).
fn timestamp() -> BoxedStrategy<Timestamp> {
    prop_oneof![
        (-62_135_596_800_000i64..=253_402_300_799_999)
            .prop_map(|ms| Timestamp::from_millis(ms).unwrap()),
        (1_700_000_000_000i64..1_900_000_000_000)
            .prop_map(|ms| Timestamp::from_millis(ms).unwrap()),
    ]
    .boxed()
}

fn part() -> BoxedStrategy<Part> {
    let content = prop_oneof![
        text().prop_map(PartContent::Text),
        prop::collection::vec(any::<u8>(), 0..48).prop_map(|b| PartContent::Raw(b.into())),
        text().prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ];
    (content, metadata(), text(), text())
        .prop_map(|(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename,
            media_type,
        })
        .boxed()
}

fn role() -> BoxedStrategy<Role> {
    prop::sample::select(Role::ALL).boxed()
}

fn task_state() -> BoxedStrategy<TaskState> {
    prop::sample::select(TaskState::ALL).boxed()
}

fn message() -> BoxedStrategy<Message> {
    (
        (text(), text(), text(), role()),
        prop::collection::vec(part(), 0..4),
        metadata(),
        strings(),
        strings(),
    )
        .prop_map(
            |((id, ctx, task, role), parts, metadata, extensions, refs)| Message {
                message_id: id.into(),
                context_id: ctx.into(),
                task_id: task.into(),
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids: refs.into_iter().map(Into::into).collect(),
            },
        )
        .boxed()
}

fn artifact() -> BoxedStrategy<Artifact> {
    (
        (text(), text(), text()),
        prop::collection::vec(part(), 0..3),
        metadata(),
        strings(),
    )
        .prop_map(
            |((id, name, description), parts, metadata, extensions)| Artifact {
                artifact_id: id.into(),
                name,
                description,
                parts,
                metadata,
                extensions,
            },
        )
        .boxed()
}

fn task_status() -> BoxedStrategy<TaskStatus> {
    (
        task_state(),
        prop::option::of(message()),
        prop::option::of(timestamp()),
    )
        .prop_map(|(state, message, timestamp)| TaskStatus {
            state,
            message,
            timestamp,
        })
        .boxed()
}

fn task() -> BoxedStrategy<Task> {
    (
        (text(), text()),
        task_status(),
        prop::collection::vec(artifact(), 0..3),
        prop::collection::vec(message(), 0..3),
        metadata(),
    )
        .prop_map(|((id, ctx), status, artifacts, history, metadata)| Task {
            id: id.into(),
            context_id: ctx.into(),
            status,
            artifacts,
            history,
            metadata,
        })
        .boxed()
}

fn stream_response() -> BoxedStrategy<StreamResponse> {
    prop_oneof![
        task().prop_map(StreamResponse::Task),
        message().prop_map(StreamResponse::Message),
        (text(), text(), task_status(), metadata()).prop_map(|(t, c, status, metadata)| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: t.into(),
                context_id: c.into(),
                status,
                metadata,
            })
        }),
        (
            (text(), text()),
            artifact(),
            any::<bool>(),
            any::<bool>(),
            metadata()
        )
            .prop_map(|((t, c), artifact, append, last_chunk, metadata)| {
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: t.into(),
                    context_id: c.into(),
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                })
            }),
    ]
    .boxed()
}

fn scopes() -> BoxedStrategy<BTreeMap<String, String>> {
    prop::collection::btree_map(text(), text(), 0..3).boxed()
}

fn oauth_flows() -> BoxedStrategy<OAuthFlows> {
    prop_oneof![
        ((text(), text(), text()), scopes(), any::<bool>()).prop_map(
            |((authorization_url, token_url, refresh_url), scopes, pkce_required)| {
                OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                    authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                    pkce_required,
                })
            }
        ),
        (text(), text(), scopes()).prop_map(|(token_url, refresh_url, scopes)| {
            OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        }),
        (text(), text(), text(), scopes()).prop_map(
            |(device_authorization_url, token_url, refresh_url, scopes)| {
                OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
                    device_authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                })
            }
        ),
        (text(), text(), scopes()).prop_map(|(authorization_url, refresh_url, scopes)| {
            OAuthFlows::Implicit(ImplicitOAuthFlow {
                authorization_url,
                refresh_url,
                scopes,
            })
        }),
        (text(), text(), scopes()).prop_map(|(token_url, refresh_url, scopes)| {
            OAuthFlows::Password(PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        }),
    ]
    .boxed()
}

fn security_scheme() -> BoxedStrategy<SecurityScheme> {
    prop_oneof![
        (text(), text(), text()).prop_map(|(description, location, name)| {
            SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                description,
                location,
                name,
            })
        }),
        (text(), text(), text()).prop_map(|(description, scheme, bearer_format)| {
            SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                description,
                scheme,
                bearer_format,
            })
        }),
        (text(), prop::option::of(oauth_flows()), text()).prop_map(
            |(description, flows, oauth2_metadata_url)| {
                SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                    description,
                    flows,
                    oauth2_metadata_url,
                })
            }
        ),
        (text(), text()).prop_map(|(description, open_id_connect_url)| {
            SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
                description,
                open_id_connect_url,
            })
        }),
        text().prop_map(|description| {
            SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme { description })
        }),
    ]
    .boxed()
}

fn security_requirements() -> BoxedStrategy<Vec<SecurityRequirement>> {
    prop::collection::vec(
        prop::collection::btree_map(text(), strings().prop_map(|list| StringList { list }), 0..3)
            .prop_map(|schemes| SecurityRequirement { schemes }),
        0..3,
    )
    .boxed()
}

fn protocol_binding() -> BoxedStrategy<ProtocolBinding> {
    prop_oneof![
        Just(ProtocolBinding::JsonRpc),
        Just(ProtocolBinding::HttpJson),
        Just(ProtocolBinding::Grpc),
        // A custom binding is a URI, never one of the core names.
        "https://[a-z]{1,8}\\.example/binding".prop_map(ProtocolBinding::Other),
    ]
    .boxed()
}

fn interface() -> BoxedStrategy<AgentInterface> {
    (
        text(),
        protocol_binding(),
        text(),
        prop::sample::select(vec!["1.0", "0.3", "1.1"]),
    )
        .prop_map(|(url, protocol_binding, tenant, v)| AgentInterface {
            url,
            protocol_binding,
            tenant,
            protocol_version: v.to_owned(),
        })
        .boxed()
}

fn skill() -> BoxedStrategy<AgentSkill> {
    (
        (non_empty(), text(), text()),
        (strings(), strings(), strings(), strings()),
        security_requirements(),
    )
        .prop_map(
            |((id, name, description), (tags, examples, input_modes, output_modes), reqs)| {
                AgentSkill {
                    id,
                    name,
                    description,
                    tags,
                    examples,
                    input_modes,
                    output_modes,
                    security_requirements: reqs,
                }
            },
        )
        .boxed()
}

fn capabilities() -> BoxedStrategy<AgentCapabilities> {
    (
        prop::option::of(any::<bool>()),
        prop::option::of(any::<bool>()),
        prop::collection::vec(
            (text(), text(), any::<bool>(), metadata()).prop_map(
                |(uri, description, required, params)| AgentExtension {
                    uri,
                    description,
                    required,
                    params,
                },
            ),
            0..3,
        ),
        prop::option::of(any::<bool>()),
    )
        .prop_map(
            |(streaming, push_notifications, extensions, extended_agent_card)| AgentCapabilities {
                streaming,
                push_notifications,
                extensions,
                extended_agent_card,
            },
        )
        .boxed()
}

fn agent_card() -> BoxedStrategy<AgentCard> {
    (
        (text(), text(), text()),
        prop::collection::vec(interface(), 0..3),
        prop::option::of((text(), text())),
        (prop::option::of(text()), prop::option::of(text())),
        capabilities(),
        prop::collection::btree_map(text(), security_scheme(), 0..6),
        security_requirements(),
        (strings(), strings()),
        prop::collection::vec(skill(), 0..3),
        prop::collection::vec(
            (text(), text(), metadata()).prop_map(|(protected, signature, header)| {
                AgentCardSignature {
                    protected,
                    signature,
                    header,
                }
            }),
            0..2,
        ),
    )
        .prop_map(
            |(
                (name, description, version),
                supported_interfaces,
                provider,
                (documentation_url, icon_url),
                capabilities,
                security_schemes,
                security_requirements,
                (default_input_modes, default_output_modes),
                skills,
                signatures,
            )| AgentCard {
                name,
                description,
                supported_interfaces,
                provider: provider.map(|(url, organization)| AgentProvider { url, organization }),
                version,
                documentation_url,
                capabilities,
                security_schemes,
                security_requirements,
                default_input_modes,
                default_output_modes,
                skills,
                signatures,
                icon_url,
            },
        )
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

fn same<T: Serialize>(value: &T) -> Result<(), TestCaseError> {
    let theirs = serde_json::to_vec(value).unwrap();
    let ours = json_out::to_vec(value).unwrap();
    prop_assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    prop_assert_eq!(&ours, &theirs);
    // Appending after other bytes changes nothing either.
    let mut appended = b"data: ".to_vec();
    json_out::to_writer(&mut appended, value).unwrap();
    prop_assert_eq!(&appended[6..], &theirs[..]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tasks_are_written_as_serde_json_does(t in task()) {
        same(&t)?;
    }

    #[test]
    fn stream_responses_are_written_as_serde_json_does(e in stream_response()) {
        same(&e)?;
    }

    #[test]
    fn agent_cards_are_written_as_serde_json_does(c in agent_card()) {
        same(&c)?;
    }

    #[test]
    fn messages_are_written_as_serde_json_does(m in message()) {
        same(&m)?;
    }

    #[test]
    fn json_values_are_written_as_serde_json_does(v in json_value()) {
        same(&v)?;
    }

    #[test]
    fn any_string_is_written_as_serde_json_does(s in any::<String>()) {
        same(&s)?;
    }

    #[test]
    fn non_finite_floats_are_null(f in prop::sample::select(
        vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1e20, 1.5e-7])) {
        same(&f)?;
        same(&vec![f])?;
    }
}
