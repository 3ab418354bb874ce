//! Principals are namespaced by the authenticator that made them: a valid JWT whose `sub` is
//! `alice` is not the static-token principal `alice` (it cannot read her tasks, over real HTTP on
//! both bindings), unless the operator maps one onto the other.

use a2a_runtime::test::{Binding, TestServer};
use serde_json::json;

use super::*;

/// Bearer tokens for alice and a JWT issuer, over real HTTP; with `alias`, the JWT's alice is
/// mapped onto the bearer token's.
async fn two_sources(jwks: Jwks, alias: bool) -> RunningServer {
    let jwt = JwtAuthenticator::new(Algorithm::Es256, jwks)
        .issuer(ISSUER)
        .audience(AUDIENCE);
    let mut builder = A2aServer::builder()
        .card(AgentCard {
            capabilities: AgentCapabilities::default(),
            ..card()
        })
        .executor(Agent)
        .authenticator(StaticTokens::bearer().token("alice", ALICE))
        .authenticator(jwt)
        .workers(1);
    if alias {
        builder = builder.principal_alias(format!("jwt:{ISSUER}:alice"), "bearer:alice");
    }
    builder.build().unwrap().start("127.0.0.1:0").await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwt_alice_cannot_read_the_static_token_alice_unless_mapped() {
    let k1 = IssuerKey::new("k1");
    let jwks = JwksServer::start(vec![k1.jwk.clone()]).await;
    let token = format!("Bearer {}", k1.token("alice", 600, json!({})));
    let static_alice = format!("Bearer {ALICE}");
    for alias in [false, true] {
        let srv = two_sources(jwks.jwks(), alias).await;
        let server = TestServer::remote(srv.url());
        for binding in [Binding::JsonRpc, Binding::Rest] {
            let r = call(
                &server,
                binding,
                "SendMessage",
                msg("wait", None),
                None,
                Some(&static_alice),
            )
            .await;
            let task = result(binding, &r)["task"]["id"]
                .as_str()
                .unwrap()
                .to_owned();
            // Her own credential reads it.
            let own = call(
                &server,
                binding,
                "GetTask",
                json!({"id": task}),
                None,
                Some(&static_alice),
            )
            .await;
            assert_eq!(result(binding, &own)["id"], task.as_str());
            let by_jwt = call(
                &server,
                binding,
                "GetTask",
                json!({"id": task}),
                None,
                Some(&token),
            )
            .await;
            let listed = call(&server, binding, "ListTasks", json!({}), None, Some(&token)).await;
            let listed = result(binding, &listed)["tasks"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let seen = listed.iter().any(|t| t["id"] == task.as_str());
            if alias {
                // Mapped explicitly: one principal.
                assert_eq!(result(binding, &by_jwt)["id"], task.as_str(), "{binding:?}");
                assert!(seen, "{binding:?}: {listed:?}");
            } else {
                // Another namespace: her task does not exist for the JWT's alice.
                assert_eq!(
                    by_jwt.reason(),
                    Some("TASK_NOT_FOUND"),
                    "{binding:?}: {by_jwt:?}"
                );
                assert!(!seen, "{binding:?}: {listed:?}");
            }
        }
        srv.stop().await;
    }
}
