#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Extension declarations in the served card: `capabilities.extensions` entries shaped as the
//! spec's `AgentExtension` (`uri`, `description`, `required` only when true, `params`), with the
//! params a client reads back typed.

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::AgentCard;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Plans trips with the traveler's preferences.
///
/// Preferences travel in message metadata.
#[a2a_extension(
    uri = "https://travel.example.com/ext/traveler-profile/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TravelerProfile {
    supported_fields: Vec<String>,
    max_companions: u8,
    loyalty: Option<Loyalty>,
    units: Units,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Loyalty {
    programs: Vec<String>,
    tier_names: std::collections::BTreeMap<String, u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Units {
    Metric,
    Imperial,
}

/// Data only, no params.
#[a2a_extension(
    uri = "https://example.com/ext/gdpr/v1",
    description = "Processes personal data in the EU only."
)]
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Gdpr {}

struct Agent;

impl AgentExecutor for Agent {
    async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.complete().await
    }
}

fn profile() -> TravelerProfile {
    TravelerProfile {
        supported_fields: vec!["seat".into(), "meal".into()],
        max_companions: 4,
        loyalty: Some(Loyalty {
            programs: vec!["sky".into()],
            tier_names: [("gold".to_owned(), 3)].into(),
        }),
        units: Units::Imperial,
    }
}

#[tokio::test]
async fn declarations_are_shaped_as_the_spec_and_read_back_typed() {
    let mut c = AgentCard {
        name: "travel".into(),
        description: "Plans trips".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    };
    // A declaration written by hand in the card stays, one with the same URI is replaced.
    c.capabilities.extensions.push(
        serde_json::from_value(
            json!({"uri": "https://example.com/ext/gdpr/v1", "description": "stale"}),
        )
        .unwrap(),
    );
    c.capabilities.extensions.push(
        serde_json::from_value(
            json!({"uri": "https://example.com/ext/by-hand/v1", "params": {"x": 1}}),
        )
        .unwrap(),
    );
    let server = A2aServer::builder()
        .card(c)
        .executor(Agent)
        .linked_extensions(false)
        .extension(profile())
        .extension(Gdpr {})
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", running.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let extensions = card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        extensions,
        [
            json!({"uri": "https://example.com/ext/by-hand/v1", "params": {"x": 1}}),
            json!({
                "uri": "https://travel.example.com/ext/traveler-profile/v1",
                "description": "Plans trips with the traveler's preferences.\n\nPreferences travel in message metadata.",
                "required": true,
                "params": {
                    "supportedFields": ["seat", "meal"],
                    "maxCompanions": 4,
                    "loyalty": {"programs": ["sky"], "tierNames": {"gold": 3}},
                    "units": "imperial",
                },
            }),
            json!({
                "uri": "https://example.com/ext/gdpr/v1",
                "description": "Processes personal data in the EU only.",
            }),
        ]
    );
    // A client reads the params back typed.
    let params = extensions[1]["params"].clone();
    assert_eq!(
        serde_json::from_value::<TravelerProfile>(params).unwrap(),
        profile()
    );
    // Through the typed card too.
    let typed: AgentCard = serde_json::from_value(card).unwrap();
    let decl = typed
        .capabilities
        .extensions
        .iter()
        .find(|e| e.uri == "https://travel.example.com/ext/traveler-profile/v1")
        .unwrap();
    assert!(decl.required);
    let params = serde_json::to_value(&decl.params).unwrap();
    assert_eq!(
        serde_json::from_value::<TravelerProfile>(params).unwrap(),
        profile()
    );
    running.stop().await;
}
