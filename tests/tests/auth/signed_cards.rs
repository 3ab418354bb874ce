//! Signed cards: the served card is signed and verifies against pinned keys or a chosen JWKS, and
//! signatures interoperate with the official Python SDK both ways.

use std::sync::Arc;

use a2a_runtime::auth::jwt::Algorithm;
use a2a_runtime::auth::signing::{CardSigner, CardVerifier};
use a2a_runtime::server::A2aServer;
use a2a_runtime::test::within;
use a2a_runtime::types::AgentCard;
use a2a_tests::interop;
use serde_json::Value;

use super::*;

#[tokio::test]
async fn the_served_card_is_signed_and_verifies_against_pinned_keys_or_a_chosen_jwks() {
    let key = IssuerKey::new("card-key");
    let signer =
        CardSigner::from_pem(Algorithm::Es256, key.private_pem.as_bytes(), "card-key").unwrap();
    let server = A2aServer::builder()
        .card(card())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .sign_card(signer)
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let served: Value = http
        .get(format!("{}/.well-known/agent-card.json", running.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Signed after the interfaces were set to the bound address.
    assert!(
        served["supportedInterfaces"][0]["url"]
            .as_str()
            .unwrap()
            .starts_with(&running.url())
    );
    assert_eq!(served["signatures"].as_array().unwrap().len(), 1);
    let pinned = CardVerifier::pinned().key(
        "card-key",
        Algorithm::Es256
            .public_key_pem(key.public_pem().as_bytes())
            .unwrap(),
    );
    assert_eq!(pinned.verify(&served).await.unwrap(), "card-key");
    let jwks = JwksServer::start(vec![key.jwk.clone()]).await;
    let by_jwks = CardVerifier::jwks(Arc::new(jwks.jwks()), [Algorithm::Es256]);
    assert_eq!(by_jwks.verify(&served).await.unwrap(), "card-key");
    // Tampered, or checked with a key that is not the signer's: refused.
    let mut tampered = served.clone();
    tampered["name"] = "Evil".into();
    assert!(pinned.verify(&tampered).await.is_err());
    let other = IssuerKey::new("card-key");
    let wrong = CardVerifier::pinned().key(
        "card-key",
        Algorithm::Es256
            .public_key_pem(other.public_pem().as_bytes())
            .unwrap(),
    );
    assert!(wrong.verify(&served).await.is_err());
    // Only algorithms the verifier accepts.
    let eddsa_only = CardVerifier::jwks(Arc::new(jwks.jwks()), [Algorithm::EdDsa]);
    assert!(eddsa_only.verify(&served).await.is_err());
    running.stop().await;
}

/// Signs `card` with the Python SDK (`sign`), or verifies it (`verify`); the script's stdout.
async fn python_signing(
    python: &std::path::Path,
    mode: &str,
    card: &Value,
    pem: &str,
) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("a2a-auth-sign-{}-{mode}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let card_path = dir.join("card.json");
    let pem_path = dir.join("key.pem");
    std::fs::write(&card_path, card.to_string()).unwrap();
    std::fs::write(&pem_path, pem).unwrap();
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(
        interop::interop_dir()
            .join("python")
            .join("card_signing.py"),
    )
    .arg(mode)
    .arg(&card_path)
    .arg(&pem_path)
    .arg("py-key");
    let out = within("card_signing.py", cmd.output()).await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    (out.status.success(), stdout)
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn card_signatures_interoperate_with_the_python_sdk() {
    let python = interop::setup(interop::python).await;
    let key = IssuerKey::new("py-key");
    let server = A2aServer::builder()
        .card(AgentCard {
            skills: vec![a2a_runtime::types::AgentSkill {
                id: "echo".into(),
                name: "Echo".into(),
                description: "Echoes".into(),
                tags: vec!["echo".into()],
                ..Default::default()
            }],
            ..card()
        })
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .url("https://agent.example.com")
        .build()
        .unwrap();
    let card_json = serde_json::to_value(server.card()).unwrap();

    // Theirs signs, ours verifies.
    let (ok, stdout) = python_signing(&python, "sign", &card_json, &key.private_pem).await;
    assert!(ok, "the Python SDK signs the card: {stdout}");
    let signed: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        signed["signatures"].as_array().unwrap().len(),
        1,
        "{signed}"
    );
    let pinned = CardVerifier::pinned().key(
        "py-key",
        Algorithm::Es256
            .public_key_pem(key.public_pem().as_bytes())
            .unwrap(),
    );
    assert_eq!(pinned.verify(&signed).await.unwrap(), "py-key");
    let mut tampered = signed.clone();
    tampered["description"] = "changed".into();
    assert!(pinned.verify(&tampered).await.is_err());

    // Ours signs, theirs verifies (and refuses a tampered card).
    let signer =
        CardSigner::from_pem(Algorithm::Es256, key.private_pem.as_bytes(), "py-key").unwrap();
    let ours = signer.sign(server.card()).unwrap();
    let ours = serde_json::to_value(ours).unwrap();
    let (ok, stdout) = python_signing(&python, "verify", &ours, &key.public_pem()).await;
    assert!(ok, "the Python SDK verifies our signature: {stdout}");
    assert!(stdout.contains("verified"), "{stdout}");
    let mut tampered = ours.clone();
    tampered["name"] = "Evil".into();
    let (ok, stdout) = python_signing(&python, "verify", &tampered, &key.public_pem()).await;
    assert!(!ok, "the Python SDK refuses a tampered card: {stdout}");
}
