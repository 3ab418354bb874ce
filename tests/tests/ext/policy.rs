//! The built-in activation policy on every binding (JSON-RPC, HTTP+JSON, gRPC): who may
//! activate an extension, by tenant, principal, role and claim; a refused optional extension is
//! skipped, a refused required one refuses the request (PermissionDenied); refusals are
//! counted.

use std::sync::Arc;

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::auth::StaticTokens;
use a2a_runtime::client::{A2aClient, Auth, ClientError, ClientOptions, SendOptions};
use a2a_runtime::extension::{ActivationPolicy, Caller};
use a2a_runtime::protocol::Principal;
use a2a_runtime::server::A2aServerBuilder;
use a2a_runtime::test::*;
use a2a_runtime::types::ProtocolBinding;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::*;

/// Optional: tenant t1, or the `geo:read` role; never mallory.
#[a2a_extension(uri = "https://test.example/ext/geo/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Geo {}

/// Required: only callers whose `plan` claim is `gold`.
#[a2a_extension(
    uri = "https://test.example/ext/vault/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Vault {}

const GEO: &str = "https://test.example/ext/geo/v1";
const VAULT: &str = "https://test.example/ext/vault/v1";

const BINDINGS: [ProtocolBinding; 3] = [
    ProtocolBinding::JsonRpc,
    ProtocolBinding::HttpJson,
    ProtocolBinding::Grpc,
];

fn principal(id: &str, roles: &[&str], plan: &str) -> Principal {
    let mut p = Principal::authenticated(id);
    p.roles = roles.iter().map(|r| (*r).to_owned()).collect();
    p.tenants = vec!["t1".into(), "t2".into()];
    let mut claims = serde_json::Map::new();
    claims.insert("plan".into(), json!(plan));
    p.claims = Some(Arc::new(claims));
    p
}

fn policy_builder() -> A2aServerBuilder {
    let tokens = StaticTokens::bearer()
        .principal(principal("alice", &["geo:read"], "gold"), "tok-alice")
        .principal(principal("bob", &[], "gold"), "tok-bob")
        .principal(principal("mallory", &["geo:read"], "gold"), "tok-mallory")
        .principal(principal("carol", &["geo:read"], "silver"), "tok-carol");
    builder()
        .authenticator(tokens)
        .extension(Geo {})
        .extension(Vault {})
        .activation_policy::<Geo>(
            ActivationPolicy::new()
                .allow(Caller::Tenant("t1".into()))
                .allow(Caller::Role("geo:read".into()))
                .deny(Caller::Principal("mallory".into())),
        )
        .activation_policy::<Vault>(ActivationPolicy::new().allow(Caller::Claim {
            name: "plan".into(),
            value: "gold".into(),
        }))
        .grpc_addr("127.0.0.1:0")
}

async fn client(url: &str, binding: &ProtocolBinding, token: &str) -> A2aClient {
    let options = ClientOptions {
        preferred_binding: Some(binding.clone()),
        auth: Some(Auth::Bearer(token.into())),
        ..ClientOptions::default()
    };
    A2aClient::builder()
        .options(options)
        .activate_uri(GEO)
        .activate_uri(VAULT)
        .connect(url)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_policy_decides_before_activation_on_every_binding() {
    let server = policy_builder().workers(1).build().unwrap();
    let running = server.clone().start("127.0.0.1:0").await.unwrap();
    let url = running.url();
    for binding in &BINDINGS {
        // Allowed by role, and the gold plan.
        let alice = client(&url, binding, "tok-alice").await;
        let sent = alice.send_message("hi", SendOptions::default()).await;
        assert_eq!(
            sent.unwrap().activated_extensions(),
            [GEO, VAULT],
            "{binding}"
        );
        // No role, no tenant t1: the optional one is skipped, the request goes on.
        let bob = client(&url, binding, "tok-bob").await;
        let sent = bob.send_message("hi", SendOptions::default()).await;
        assert_eq!(sent.unwrap().activated_extensions(), [VAULT], "{binding}");
        // Denied by name, whatever the allow rules say.
        let mallory = client(&url, binding, "tok-mallory").await;
        let stream = mallory.stream_message("hi", SendOptions::default()).await;
        assert_eq!(stream.unwrap().activated_extensions(), [VAULT], "{binding}");
        // The required one refused: the request is refused.
        let carol = client(&url, binding, "tok-carol").await;
        let err = carol
            .send_message("hi", SendOptions::default())
            .await
            .map(|_| ())
            .unwrap_err();
        let a2a = err.to_a2a_error();
        assert!(
            matches!(&a2a, A2aError::PermissionDenied(m) if m.contains(VAULT)),
            "{binding}: {err:?}"
        );
        assert!(!matches!(err, ClientError::Local(_)), "{binding}: {err:?}");
    }
    let metrics = server.extension_metrics();
    let geo = metrics.iter().find(|m| m.uri == GEO).unwrap();
    let vault = metrics.iter().find(|m| m.uri == VAULT).unwrap();
    assert_eq!((geo.activations, geo.denials, geo.skips), (6, 6, 0));
    assert_eq!((vault.activations, vault.denials), (9, 3));
    running.stop().await;
}

#[tokio::test]
async fn a_tenant_rule_admits_requests_in_that_tenant() {
    let srv = start(policy_builder()).await;
    for binding in Binding::BOTH {
        for (tenant, echoed) in [("t1", format!("{GEO}, {VAULT}")), ("t2", VAULT.to_owned())] {
            let answer = srv
                .request(binding, "SendMessage", send_params("hi"))
                .header("Authorization", "Bearer tok-bob")
                .header("A2A-Extensions", &format!("{GEO}, {VAULT}"))
                .tenant(tenant)
                .send()
                .await;
            assert_eq!(
                answer.header_list("a2a-extensions").as_deref(),
                Some(echoed.as_str()),
                "{binding:?} {tenant}"
            );
        }
        // Refused with 403 before anything runs.
        let refused = srv
            .request(binding, "SendMessage", send_params("hi"))
            .header("Authorization", "Bearer tok-carol")
            .header("A2A-Extensions", VAULT)
            .result()
            .await
            .unwrap_err();
        // JSON-RPC answers its errors with HTTP 200.
        let http = if binding == Binding::Rest { 403 } else { 200 };
        assert_eq!(refused.http, http, "{binding:?}");
        assert!(refused.message.contains(VAULT), "{binding:?}: {refused}");
    }
    srv.stop().await;
}
