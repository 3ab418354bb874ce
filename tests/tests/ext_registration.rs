#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Registration: `#[a2a_extension]` types linked into the binary — from this crate and from the
//! `a2a-ext-fixture` crate — are collected by `ExtensionRegistry::linked()` and served when
//! `.linked_extensions(true)` asks (never a required one); the built-in Timestamp is declared
//! only when enabled; `.only` / `.exclude` narrow the set.

use a2a_ext_fixture::{RATING_URI, Rating};
use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Extension, ExtensionRegistry, TimestampExtension};
use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::types::AgentCard;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Linked and enabled by linking (it has a `Default`).
#[a2a_extension(uri = "https://local.example/ext/linked/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct LocalLinked {
    level: u8,
}

/// Linked with a `Default` but required: never enabled implicitly (every client without it
/// would be refused).
#[a2a_extension(
    uri = "https://local.example/ext/required/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct RequiredLinked {}

/// Linked, but without `Default` it is only used when given explicitly.
#[a2a_extension(uri = "https://local.example/ext/explicit-only/v1")]
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ExplicitOnly {
    key: String,
}

const TIMESTAMP: &str = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1";

struct Agent;

impl AgentExecutor for Agent {
    async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.complete().await
    }
}

fn plain_builder() -> A2aServerBuilder {
    // Keep the fixture crate's code (and its registration) in this binary.
    assert_eq!(a2a_ext_fixture::link(), RATING_URI);
    A2aServer::builder()
        .card(AgentCard {
            name: "registration".into(),
            description: "d".into(),
            version: "1".into(),
            ..AgentCard::default()
        })
        .executor(Agent)
}

/// A builder that opts in to the linked extensions.
fn builder() -> A2aServerBuilder {
    plain_builder().linked_extensions(true)
}

fn declared(b: A2aServerBuilder) -> Vec<String> {
    b.build()
        .unwrap()
        .card()
        .capabilities
        .extensions
        .into_iter()
        .map(|e| e.uri)
        .collect()
}

#[test]
fn linked_collects_this_crate_and_the_fixture_crate_but_not_the_builtins() {
    assert_eq!(a2a_ext_fixture::link(), RATING_URI);
    // Timestamp is linked into this binary too...
    assert_eq!(TimestampExtension::default().declaration().uri, TIMESTAMP);
    let linked: Vec<(&str, &str)> = ExtensionRegistry::linked()
        .iter()
        .map(|r| (r.uri, r.type_name))
        .collect();
    // ...but never collected: sorted by URI, the four user types only.
    assert_eq!(
        linked,
        [
            (RATING_URI, "a2a_ext_fixture::Rating"),
            (
                "https://local.example/ext/explicit-only/v1",
                "ext_registration::ExplicitOnly"
            ),
            (
                "https://local.example/ext/linked/v1",
                "ext_registration::LocalLinked"
            ),
            (
                "https://local.example/ext/required/v1",
                "ext_registration::RequiredLinked"
            ),
        ]
    );
}

#[tokio::test]
async fn a_linked_extension_of_another_crate_is_served_in_the_card() {
    let running = builder()
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", running.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["capabilities"]["extensions"],
        json!([
            {
                "uri": RATING_URI,
                "description": "Lets clients rate the agent's answers on a scale.",
                "params": {"scale": 5, "measures": "helpfulness"},
            },
            {
                "uri": "https://local.example/ext/linked/v1",
                "description": "Linked and enabled by linking (it has a `Default`).",
                "params": {"level": 0},
            },
        ])
    );
    // Negotiated like any other: activated and echoed.
    let resp = reqwest::Client::new()
        .post(format!("{}/", running.url()))
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", format!("{RATING_URI}, {TIMESTAMP}"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()
            .get("a2a-extensions")
            .and_then(|v| v.to_str().ok()),
        Some(RATING_URI)
    );
    running.stop().await;
}

#[test]
fn explicit_values_come_first_and_replace_the_linked_default() {
    let card = builder()
        .extension(ExplicitOnly { key: "k".into() })
        .extension(Rating {
            scale: 10,
            measures: "accuracy".into(),
        })
        .build()
        .unwrap()
        .card();
    let exts = card.capabilities.extensions;
    let uris: Vec<&str> = exts.iter().map(|e| e.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "https://local.example/ext/explicit-only/v1",
            RATING_URI,
            "https://local.example/ext/linked/v1",
        ]
    );
    assert_eq!(exts[1].params.get("scale"), Some(&json!(10)));
}

#[test]
fn the_builtin_timestamp_is_declared_only_when_enabled() {
    assert!(!declared(builder()).contains(&TIMESTAMP.to_owned()));
    assert!(!declared(builder().linked_extensions(false)).contains(&TIMESTAMP.to_owned()));
    let with = declared(builder().extension(TimestampExtension::default()));
    assert_eq!(with[0], TIMESTAMP);
    assert_eq!(
        declared(
            builder()
                .linked_extensions(false)
                .extension(TimestampExtension::default())
        ),
        [TIMESTAMP]
    );
}

#[test]
fn only_and_exclude_narrow_the_set() {
    assert_eq!(declared(builder().only([RATING_URI])), [RATING_URI]);
    assert_eq!(
        declared(builder().exclude([RATING_URI])),
        ["https://local.example/ext/linked/v1"]
    );
    assert_eq!(
        declared(
            builder()
                .extension(TimestampExtension::default())
                .only([TIMESTAMP, "https://local.example/ext/linked/v1"])
        ),
        [TIMESTAMP, "https://local.example/ext/linked/v1"]
    );
    assert_eq!(
        declared(
            builder()
                .extension(TimestampExtension::default())
                .exclude([TIMESTAMP])
                .exclude(["https://local.example/ext/linked/v1"])
        ),
        [RATING_URI]
    );
    assert!(declared(builder().only(Vec::<String>::new())).is_empty());
    assert!(declared(builder().linked_extensions(false)).is_empty());
}

#[test]
fn linked_extensions_are_opt_in() {
    // Nothing linked is enabled unless asked for.
    assert!(declared(plain_builder()).is_empty());
    assert_eq!(
        declared(plain_builder().extension(Rating::default())),
        [RATING_URI]
    );
    assert_eq!(
        declared(plain_builder().linked_extensions(true)),
        [RATING_URI, "https://local.example/ext/linked/v1"]
    );
}

#[tokio::test]
async fn a_required_linked_extension_is_enabled_only_explicitly() {
    const REQUIRED: &str = "https://local.example/ext/required/v1";
    // Linked with a `Default`, but required: opting in to linked ones leaves it out, so a
    // client without it is served.
    assert!(!declared(builder()).contains(&REQUIRED.to_owned()));
    let running = builder()
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let body: Value = reqwest::Client::new()
        .post(format!("{}/", running.url()))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(body.get("result").is_some(), "{body}");
    running.stop().await;
    // Added explicitly it is declared as required, and clients without it are refused.
    let server = plain_builder()
        .extension(RequiredLinked {})
        .build()
        .unwrap();
    let exts = server.card().capabilities.extensions;
    assert_eq!(exts.len(), 1);
    assert_eq!(exts[0].uri, REQUIRED);
    assert!(exts[0].required);
    let running = server.start("127.0.0.1:0").await.unwrap();
    let body: Value = reqwest::Client::new()
        .post(format!("{}/", running.url()))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["error"]["code"], -32008, "{body}");
    running.stop().await;
}
