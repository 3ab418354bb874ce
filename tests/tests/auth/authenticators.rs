//! The authenticators' configuration: JWKS rotation, unknown keys and an endpoint that is down;
//! declared schemes need an authenticator and the extended card a caller; API keys and
//! principals with tenants from the token configuration.

use std::sync::atomic::Ordering;

use a2a_runtime::auth::StaticTokens;
use a2a_runtime::auth::jwt::{Algorithm, Jwks, JwtAuthenticator};
use a2a_runtime::protocol::Principal;
use a2a_runtime::server::{A2aServer, BuildError};
use a2a_runtime::test::{Binding, TestServer};
use a2a_runtime::types::{HttpAuthSecurityScheme, SecurityScheme};
use serde_json::json;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwks_rotation_unknown_keys_and_an_endpoint_that_is_down() {
    let k1 = IssuerKey::new("k1");
    let k2 = IssuerKey::new("k2");
    let k3 = IssuerKey::new("k3");
    let server = JwksServer::start(vec![k1.jwk.clone()]).await;
    let jwt = JwtAuthenticator::new(Algorithm::Es256, server.jwks())
        .issuer(ISSUER)
        .audience(AUDIENCE);
    // Fetched on first use, then cached.
    assert_eq!(
        jwt.verify(&k1.token("jane", 600, json!({})))
            .await
            .unwrap()
            .id(),
        "jane"
    );
    assert_eq!(
        jwt.verify(&k1.token("jim", 600, json!({})))
            .await
            .unwrap()
            .id(),
        "jim"
    );
    assert_eq!(server.fetches(), 1);
    // Rotation: the issuer publishes k2; a token naming it makes the set be fetched again.
    server.keys.lock().unwrap().push(k2.jwk.clone());
    assert_eq!(
        jwt.verify(&k2.token("jane", 600, json!({})))
            .await
            .unwrap()
            .id(),
        "jane"
    );
    assert_eq!(server.fetches(), 2);
    assert!(jwt.verify(&k1.token("jane", 600, json!({}))).await.is_ok());
    assert_eq!(server.fetches(), 2, "known keys are served from the cache");
    // An unknown kid is refused (after one more look).
    let err = jwt
        .verify(&k3.token("jane", 600, json!({})))
        .await
        .unwrap_err();
    assert!(err.reason.contains("unknown key"), "{err}");
    assert_eq!(server.fetches(), 3);
    // The endpoint goes down: nothing new gets in; known keys keep working for a while.
    server.down.store(true, Ordering::SeqCst);
    assert!(jwt.verify(&k3.token("jane", 600, json!({}))).await.is_err());
    assert_eq!(server.fetches(), 4);
    assert!(jwt.verify(&k2.token("jane", 600, json!({}))).await.is_ok());

    // A cold cache with the endpoint down (503) lets nothing in.
    let cold = JwtAuthenticator::new(Algorithm::Es256, server.jwks());
    assert!(
        cold.verify(&k1.token("jane", 600, json!({})))
            .await
            .is_err()
    );
    // Nor does one whose endpoint refuses connections.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let gone = JwtAuthenticator::new(
        Algorithm::Es256,
        Jwks::with_roots(
            format!("https://localhost:{port}/jwks.json"),
            server.ca_pem.as_bytes(),
        )
        .unwrap(),
    );
    assert!(
        gone.verify(&k1.token("jane", 600, json!({})))
            .await
            .is_err()
    );
    // Nor one that does not trust the endpoint's CA.
    server.down.store(false, Ordering::SeqCst);
    let untrusted = JwtAuthenticator::new(Algorithm::Es256, Jwks::new(&server.url).unwrap());
    assert!(
        untrusted
            .verify(&k1.token("jane", 600, json!({})))
            .await
            .is_err()
    );
    // The algorithm is the configured one: an ES256 token for an EdDSA authenticator fails.
    let eddsa = JwtAuthenticator::new(Algorithm::EdDsa, server.jwks());
    assert!(
        eddsa
            .verify(&k1.token("jane", 600, json!({})))
            .await
            .is_err()
    );
    // Plain HTTP is refused at configuration.
    assert!(Jwks::new("http://127.0.0.1:1/jwks.json").is_err());
}

#[tokio::test]
async fn declared_schemes_need_an_authenticator_and_the_extended_card_needs_a_caller() {
    let mut declared = card();
    declared.security_schemes.insert(
        "bearer".into(),
        SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            scheme: "Bearer".into(),
            ..Default::default()
        }),
    );
    let err = A2aServer::builder()
        .card(declared.clone())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .build()
        .unwrap_err();
    assert!(matches!(err, BuildError::Security(_)), "{err}");
    let err = A2aServer::builder()
        .card(card())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .extended_card(card())
        .build()
        .unwrap_err();
    assert!(matches!(err, BuildError::Security(_)), "{err}");
    // With one, the declared scheme stays and the authenticator's is added.
    let server = A2aServer::builder()
        .card(declared)
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .authenticator(StaticTokens::api_key("X-API-Key").token("svc", "k"))
        .build()
        .unwrap();
    let served = server.card();
    assert!(served.security_schemes.contains_key("bearer"));
    assert!(served.security_schemes.contains_key("apiKey"));

    // An open server (no authenticator) says nothing of security and serves everything
    // anonymously; it has no extended card.
    let open = A2aServer::builder()
        .card(card())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .workers(1)
        .build()
        .unwrap();
    assert!(open.guard().is_none());
    let running = open.start("127.0.0.1:0").await.unwrap();
    let server = TestServer::remote(running.url());
    for binding in [Binding::JsonRpc, Binding::Rest] {
        let r = call(&server, binding, "SendMessage", msg("hi", None), None, None).await;
        assert_eq!(r.status, 200, "{r:?}");
        let r = call(
            &server,
            binding,
            "GetExtendedAgentCard",
            json!({}),
            None,
            None,
        )
        .await;
        assert_eq!(r.reason(), Some("UNSUPPORTED_OPERATION"), "{r:?}");
    }
    running.stop().await;
}

#[tokio::test]
async fn api_keys_and_principals_with_tenants_from_the_token_configuration() {
    let tokens = StaticTokens::api_key("X-API-Key").principal(
        Principal::authenticated("svc").with_tenants(["acme"]),
        "key-svc",
    );
    let server = A2aServer::builder()
        .card(card())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .authenticator(tokens)
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = running.url();
    let send = |tenant: &'static str, key: Option<&'static str>| {
        let mut req = http
            .post(format!("{url}/{tenant}/message:send"))
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(msg("hi", None).to_string());
        if let Some(k) = key {
            req = req.header("x-api-key", k);
        }
        req.send()
    };
    assert_eq!(send("acme", Some("key-svc")).await.unwrap().status(), 200);
    assert_eq!(send("globex", Some("key-svc")).await.unwrap().status(), 403);
    let refused = send("acme", Some("key-other")).await.unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"],
        "ApiKey realm=\"a2a\", header=\"x-api-key\""
    );
    assert_eq!(send("acme", None).await.unwrap().status(), 401);
    running.stop().await;
}
