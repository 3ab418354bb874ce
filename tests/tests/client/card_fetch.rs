//! The card on the client side: `fetch_card` from a base URL (with a custom card path) or from
//! the card's own URL, and the signature of a fetched card verified against the caller's keys:
//! verified, tampered, signed with another key, unsigned, not checked.

use a2a_runtime::auth::jwt::Algorithm;
use a2a_runtime::auth::signing::{CardSigner, CardVerifier};
use a2a_runtime::client::{A2aClient, CardSignature, ClientOptions};
use a2a_runtime::test::within;
use serde_json::Value;

use a2a_tests::client::*;

const ED25519: &str = include_str!("../../../a2a-runtime/tests/data/ed25519.pem");
const ED25519_PUB: &str = include_str!("../../../a2a-runtime/tests/data/ed25519.pub.pem");
const P256: &str = include_str!("../../../a2a-runtime/tests/data/p256.pem");

/// Options trusting the Ed25519 key as `key-1`.
fn trusting_ed25519() -> ClientOptions {
    let key = Algorithm::EdDsa
        .public_key_pem(ED25519_PUB.as_bytes())
        .unwrap();
    ClientOptions {
        card_verifier: Some(CardVerifier::pinned().key("key-1", key)),
        ..ClientOptions::default()
    }
}

/// A server whose card `signer` signs.
async fn signed_server(signer: CardSigner) -> a2a_runtime::server::RunningServer {
    builder("signed")
        .sign_card(signer)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

#[tokio::test]
async fn a_card_signed_with_a_trusted_key_is_verified_on_fetch_and_discovery() {
    let signer = CardSigner::from_pem(Algorithm::EdDsa, ED25519.as_bytes(), "key-1").unwrap();
    let running = signed_server(signer).await;
    let fetched = within(
        "fetch",
        A2aClient::fetch_card(&running.url(), &trusting_ed25519()),
    )
    .await
    .unwrap();
    assert_eq!(
        fetched.signature(),
        &CardSignature::Verified {
            kid: "key-1".into()
        }
    );
    assert_eq!(fetched.card().name, "signed");
    assert!(fetched.url().ends_with("/.well-known/agent-card.json"));
    let c = within(
        "discover",
        A2aClient::discover(&running.url(), trusting_ed25519()),
    )
    .await
    .unwrap();
    assert!(c.card_signature().is_verified());
    // Without keys nothing is checked, and nothing claims to be verified.
    let plain = within(
        "fetch",
        A2aClient::fetch_card(&running.url(), &ClientOptions::default()),
    )
    .await
    .unwrap();
    assert_eq!(plain.signature(), &CardSignature::NotChecked);
    assert!(!plain.signature().is_verified());
}

#[tokio::test]
async fn a_card_signed_with_another_key_is_unverifiable() {
    // Signed with a P-256 key under the same kid the caller pins an Ed25519 key for.
    let signer = CardSigner::from_pem(Algorithm::Es256, P256.as_bytes(), "key-1").unwrap();
    let running = signed_server(signer).await;
    let fetched = A2aClient::fetch_card(&running.url(), &trusting_ed25519())
        .await
        .unwrap();
    assert!(
        matches!(fetched.signature(), CardSignature::Unverifiable(why) if why.contains("key-1")),
        "{:?}",
        fetched.signature()
    );
    let c = A2aClient::discover(&running.url(), trusting_ed25519())
        .await
        .unwrap();
    assert!(!c.card_signature().is_verified());
}

#[tokio::test]
async fn a_tampered_card_is_unverifiable_and_an_unsigned_one_absent() {
    let signer = CardSigner::from_pem(Algorithm::EdDsa, ED25519.as_bytes(), "key-1").unwrap();
    let running = signed_server(signer).await;
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut served: Value = http
        .get(format!("{}/.well-known/agent-card.json", running.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    served["description"] = "changed after signing".into();
    let tampered = RawServer::start(vec![Answer::Bytes(http_ok_json(&served))]).await;
    let fetched = A2aClient::fetch_card(&tampered.url, &trusting_ed25519())
        .await
        .unwrap();
    assert!(
        matches!(fetched.signature(), CardSignature::Unverifiable(why) if why.contains("does not verify")),
        "{:?}",
        fetched.signature()
    );
    served
        .as_object_mut()
        .unwrap()
        .remove("signatures")
        .unwrap();
    let unsigned = RawServer::start(vec![Answer::Bytes(http_ok_json(&served))]).await;
    let fetched = A2aClient::fetch_card(&unsigned.url, &trusting_ed25519())
        .await
        .unwrap();
    assert_eq!(fetched.signature(), &CardSignature::Absent);
}

fn http_ok_json(v: &Value) -> Vec<u8> {
    http("200 OK", "application/json", &v.to_string())
}

#[tokio::test]
async fn the_card_comes_from_the_custom_card_path_or_the_cards_own_url() {
    let mut served = card("custom path");
    served.supported_interfaces = vec![a2a_runtime::types::AgentInterface::new(
        "http://127.0.0.1:9/a2a",
        a2a_runtime::types::ProtocolBinding::JsonRpc,
    )];
    let json = serde_json::to_value(&served).unwrap();
    let srv = RawServer::start(vec![Answer::Bytes(http_ok_json(&json))]).await;
    let options = ClientOptions {
        card_path: "/agents/x/card.json".into(),
        ..ClientOptions::default()
    };
    let fetched = A2aClient::fetch_card(&srv.url, &options).await.unwrap();
    assert_eq!(fetched.card().name, "custom path");
    assert_eq!(fetched.url(), format!("{}/agents/x/card.json", srv.url));
    let c = A2aClient::discover(&format!("{}/", srv.url), options)
        .await
        .unwrap();
    assert_eq!(c.card().name, "custom path");
    // The card's own URL is fetched as it is.
    let own = format!("{}/cards/mine.json", srv.url);
    let fetched = A2aClient::fetch_card(&own, &ClientOptions::default())
        .await
        .unwrap();
    assert_eq!(fetched.url(), own);
    let lines: Vec<String> = srv
        .requests()
        .iter()
        .map(|r| r.lines().next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        lines,
        [
            "GET /agents/x/card.json HTTP/1.1",
            "GET /agents/x/card.json HTTP/1.1",
            "GET /cards/mine.json HTTP/1.1",
        ]
    );
}
