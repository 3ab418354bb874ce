//! Property tests: every Task, Message, StreamResponse and AgentCard survives emit → parse
//! unchanged, the emitted JSON is a fixed point, and the same value written with proto
//! snake_case names or enum numbers parses to the same value; and `a2a_runtime::json::to_vec` writes
//! exactly the bytes `serde_json::to_vec` writes for all of them and for any JSON value or string
//! (strings with any Unicode, control characters, quotes and backslashes, long enough to span
//! several 8-byte words).
//!
//! The generators cover every Part kind (raw bytes, nested JSON data with integers up to 64 bits
//! that must stay exact), millisecond timestamps over the whole proto range, every enum value,
//! all five security schemes and all five OAuth flows.

use std::collections::BTreeMap;

use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
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
use serde::de::DeserializeOwned;
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

/// Members whose object keys are user data, left untouched by the rewrites below.
const OPAQUE: &[&str] = &["metadata", "data", "params", "header", "scopes"];
/// Map members whose keys are user data but whose values are typed messages.
const MAPS: &[&str] = &["securitySchemes", "schemes"];

fn camel_to_snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Rewrites every field name (not user data) with `rename`, and every field value with `revalue`.
fn rewrite(
    v: &Value,
    rename: &dyn Fn(&str) -> String,
    revalue: &dyn Fn(&str, &Value) -> Value,
) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, child)| {
                    let child = if OPAQUE.contains(&k.as_str()) {
                        child.clone()
                    } else if MAPS.contains(&k.as_str()) {
                        Value::Object(
                            child
                                .as_object()
                                .unwrap()
                                .iter()
                                .map(|(name, e)| (name.clone(), rewrite(e, rename, revalue)))
                                .collect(),
                        )
                    } else {
                        revalue(k, &rewrite(child, rename, revalue))
                    };
                    (rename(k), child)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| rewrite(x, rename, revalue)).collect()),
        other => other.clone(),
    }
}

fn enum_as_number(key: &str, v: &Value) -> Value {
    match (key, v.as_str()) {
        ("role", Some(name)) => Value::from(Role::from_name(name).unwrap().number()),
        ("state", Some(name)) => Value::from(TaskState::from_name(name).unwrap().number()),
        _ => v.clone(),
    }
}

fn roundtrip<T>(value: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let emitted = serde_json::to_vec(value).unwrap();
    // emit → parse (production decoder) → equal.
    let parsed: T = json::decode(&emitted, DEFAULT_MAX_DEPTH)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{}", String::from_utf8_lossy(&emitted))))?;
    prop_assert_eq!(&parsed, value);
    // The emitted form is a fixed point.
    prop_assert_eq!(serde_json::to_vec(&parsed).unwrap(), emitted.clone());
    // The same through a parsed `Value` (the JSON-RPC `params` path).
    let tree: Value = serde_json::from_slice(&emitted).unwrap();
    let from_tree: T = json::from_value(tree.clone()).unwrap();
    prop_assert_eq!(&from_tree, value);
    // Proto field names (snake_case) and enum numbers are the same value.
    let snake = rewrite(&tree, &camel_to_snake, &|_, v| v.clone());
    let from_snake: T = json::from_value(snake.clone())
        .map_err(|e| TestCaseError::fail(format!("snake_case: {e}\n{snake}")))?;
    prop_assert_eq!(&from_snake, value);
    let numbers = rewrite(&tree, &str::to_owned, &enum_as_number);
    let from_numbers: T = json::from_value(numbers).unwrap();
    prop_assert_eq!(&from_numbers, value);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn message_roundtrips(m in message()) {
        roundtrip(&m)?;
    }

    #[test]
    fn task_roundtrips(t in task()) {
        roundtrip(&t)?;
    }

    /// `clone_from` copies only what differs; the result must equal the source whatever the
    /// two tasks were, including a task that grew by appended parts.
    #[test]
    fn task_clone_from_equals_the_source(a in task(), b in task(), extra in proptest::collection::vec(part(), 0..4)) {
        let mut dst = a.clone();
        dst.clone_from(&b);
        prop_assert_eq!(&dst, &b);
        let mut grown = b.clone();
        if let Some(first) = grown.artifacts.first_mut() {
            first.parts.extend(extra);
        }
        dst.clone_from(&grown);
        prop_assert_eq!(&dst, &grown);
        dst.clone_from(&a);
        prop_assert_eq!(&dst, &a);
    }

    #[test]
    fn stream_response_roundtrips(e in stream_response()) {
        roundtrip(&e)?;
    }

    #[test]
    fn agent_card_roundtrips(c in agent_card()) {
        roundtrip(&c)?;
    }

    #[test]
    fn timestamps_roundtrip_at_millisecond_precision(t in timestamp()) {
        let text = serde_json::to_string(&t).unwrap();
        prop_assert!(text.ends_with("Z\""), "{}", text);
        prop_assert_eq!(text.len(), "\"2026-03-20T09:12:44.120Z\"".len(), "{}", text);
        let back: Timestamp = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, t);
        prop_assert_eq!(back.millis(), t.millis());
    }

    #[test]
    fn part_data_keeps_every_json_value_exactly(v in json_value()) {
        let part = Part::data(v.clone());
        let text = serde_json::to_string(&part).unwrap();
        let back: Part = json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        prop_assert_eq!(back.content, PartContent::Data(v));
    }
}

/// The integers named in the brief, pinned outside the random generators.
#[test]
fn large_integers_stay_exact_in_data_and_metadata() {
    let big = [
        Value::from(1u64 << 60),
        Value::from((1u64 << 60) + 1),
        Value::from(u64::MAX),
        Value::from(i64::MIN),
    ];
    let msg = Message {
        message_id: "m".into(),
        role: Role::User,
        parts: vec![Part::data(Value::Array(big.to_vec()))],
        metadata: [("big".to_owned(), Value::Array(big.to_vec()))]
            .into_iter()
            .collect(),
        ..Message::default()
    };
    let text = serde_json::to_string(&msg).unwrap();
    assert!(
        text.contains(
            "[1152921504606846976,1152921504606846977,18446744073709551615,-9223372036854775808]"
        ),
        "{text}"
    );
    let back: Message = json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(back, msg);
    assert_eq!(back.metadata["big"][1].as_u64(), Some((1 << 60) + 1));
}

/// Doubles parse back bit-exact (serde_json's `float_roundtrip`): these lost their last bit with
/// the default float parser.
#[test]
fn doubles_parse_back_bit_exact() {
    let doubles: [f64; 3] = [
        -2.970_358_156_854_204_3e-196,
        4.787_426_196_898_438e-23,
        8.615_992_596_010_494e-125,
    ];
    for f in doubles {
        let part = Part::data(Value::from(f));
        let text = serde_json::to_string(&part).unwrap();
        let back: Part = json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        let PartContent::Data(v) = back.content else {
            panic!("data part")
        };
        assert_eq!(v.as_f64().map(f64::to_bits), Some(f.to_bits()), "{text}");
    }
}

/// `json::to_vec` (and `json::to_writer`) write exactly the bytes `serde_json::to_vec` writes.
fn same<T: Serialize>(value: &T) -> Result<(), TestCaseError> {
    let theirs = serde_json::to_vec(value).unwrap();
    let ours = json::to_vec(value).unwrap();
    prop_assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    prop_assert_eq!(&ours, &theirs);
    // Appending after other bytes changes nothing either.
    let mut appended = b"data: ".to_vec();
    json::to_writer(&mut appended, value).unwrap();
    prop_assert_eq!(&appended[6..], &theirs[..]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

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
