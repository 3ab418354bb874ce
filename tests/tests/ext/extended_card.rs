//! Extensions declared on the authenticated extended card only: absent from the public card,
//! served on the extended card, activated for the authenticated callers who can read it, on
//! every binding; a server with no extended card to declare them on does not build.

use a2a_runtime::a2a_extension;
use a2a_runtime::client::{A2aClient, Auth, ClientOptions, SendOptions};
use a2a_runtime::server::BuildError;
use a2a_runtime::test::*;
use a2a_runtime::types::ProtocolBinding;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::*;

/// Only for callers who can read the extended card.
#[a2a_extension(uri = "https://test.example/ext/partner/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Partner {
    /// The partner programme's level.
    level: u8,
}

/// On the public card.
#[a2a_extension(uri = "https://test.example/ext/public/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Open {}

const PARTNER: &str = "https://test.example/ext/partner/v1";
const OPEN: &str = "https://test.example/ext/public/v1";

fn partner_builder() -> a2a_runtime::server::A2aServerBuilder {
    authenticated(builder())
        .extended_card(agent_card("ext (extended)"))
        .extension(Open {})
        .extension_on_extended_card(Partner { level: 3 })
        .grpc_addr("127.0.0.1:0")
}

fn uris(card: &serde_json::Value) -> Vec<String> {
    card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["uri"].as_str().unwrap().to_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[tokio::test]
async fn declared_and_negotiated_on_the_extended_card_only() {
    let srv = start(partner_builder()).await;
    let public = srv.card().await;
    let listed: Vec<&str> = public
        .capabilities
        .extensions
        .iter()
        .map(|e| e.uri.as_str())
        .collect();
    assert_eq!(listed, [OPEN]);
    for binding in Binding::BOTH {
        let extended = srv.ok(binding, "GetExtendedAgentCard", json!({})).await;
        assert_eq!(uris(&extended), [PARTNER, OPEN], "{binding:?}");
        let partner = extended["capabilities"]["extensions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["uri"] == PARTNER)
            .unwrap();
        assert_eq!(partner["params"]["level"], 3, "{binding:?}");
        // The authenticated caller activates it.
        let answer = srv
            .request(binding, "SendMessage", send_params("hi"))
            .header("A2A-Extensions", &format!("{OPEN}, {PARTNER}"))
            .send()
            .await;
        assert_eq!(
            answer.header_list("a2a-extensions").as_deref(),
            Some(format!("{OPEN}, {PARTNER}").as_str()),
            "{binding:?}"
        );
    }
    let running = srv.running().unwrap();
    let options = ClientOptions {
        preferred_binding: Some(ProtocolBinding::Grpc),
        auth: Some(Auth::Bearer(TOKEN.into())),
        ..ClientOptions::default()
    };
    let c = A2aClient::builder()
        .options(options)
        .activate_uri(PARTNER)
        .connect(running.url().as_str())
        .await
        .unwrap();
    let sent = c.send_message("hi", SendOptions::default()).await.unwrap();
    assert_eq!(sent.activated_extensions(), [PARTNER]);
    srv.stop().await;
}

#[test]
fn a_server_without_an_extended_card_does_not_build() {
    let err = authenticated(builder())
        .extension_on_extended_card(Partner::default())
        .build()
        .expect_err("no extended card");
    assert!(matches!(err, BuildError::InvalidCard(_)), "{err}");
    assert!(err.to_string().contains(PARTNER), "{err}");
}
