//! TLS over real loopback sockets, with certificates made at test time: HTTPS for JSON-RPC,
//! REST and SSE; gRPC over TLS; mutual TLS as the identity of the caller (accepted, refused,
//! wrong CA, required at the TLS level) and its principals kept apart on both bindings; our
//! client against all of it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::auth::{CertIdentity, MtlsAuthenticator};
use a2a_runtime::client::{
    A2aClient, ClientError, ClientOptions, ClientTls, SendOptions, SendResult,
};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::protocol::Principal;
use a2a_runtime::server::{A2aServer, A2aServerBuilder, BuildError, ClientAuth, TlsConfig};
use a2a_runtime::types::{AgentCard, Artifact, Part, ProtocolBinding, SecurityScheme};
use futures::StreamExt as _;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(TIMEOUT, f)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

struct Echo;

impl AgentExecutor for Echo {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events
            .artifact(Artifact::new([Part::text(format!("echo: {}", ctx.text()))]))
            .await?;
        events.complete().await
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "tls".into(),
        description: "TLS tests".into(),
        version: "1.0.0".into(),
        ..Default::default()
    }
}

/// A certificate (PEM) and its private key (PEM).
struct Issued {
    cert: String,
    key: String,
}

/// A CA made for one test, issuing server and client certificates.
struct Pki {
    ca: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
}

impl Pki {
    fn new(name: &str) -> Self {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        Self {
            ca: rcgen::CertifiedIssuer::self_signed(params, key).unwrap(),
        }
    }

    fn ca_pem(&self) -> String {
        self.ca.pem()
    }

    fn issue(&self, sans: &[&str], cn: &str, purpose: rcgen::ExtendedKeyUsagePurpose) -> Issued {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        // Names with a scheme are URIs; the others DNS names or IP addresses.
        let (uris, names): (Vec<&str>, Vec<&str>) = sans.iter().partition(|s| s.contains("://"));
        let mut params = rcgen::CertificateParams::new(
            names.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
        )
        .unwrap();
        for uri in uris {
            params
                .subject_alt_names
                .push(rcgen::SanType::URI(uri.try_into().unwrap()));
        }
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params.extended_key_usages = vec![purpose];
        let cert = params.signed_by(&key, &self.ca).unwrap();
        Issued {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }

    fn server(&self) -> Issued {
        self.issue(
            &["localhost", "127.0.0.1"],
            "a2a test server",
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    fn client(&self, cn: &str) -> Issued {
        self.issue(&[], cn, rcgen::ExtendedKeyUsagePurpose::ClientAuth)
    }
}

fn builder() -> A2aServerBuilder {
    A2aServer::builder()
        .card(card())
        .executor(Echo)
        .workers(1)
        .linked_extensions(false)
}

/// A raw HTTPS client trusting `pki`'s CA, presenting `identity` when given.
fn https(pki: &Pki, identity: Option<&Issued>) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pki.ca_pem().as_bytes()).unwrap()])
        .timeout(TIMEOUT);
    if let Some(id) = identity {
        let pem = format!("{}\n{}", id.cert, id.key);
        b = b.identity(reqwest::Identity::from_pem(pem.as_bytes()).unwrap());
    }
    b.build().unwrap()
}

/// Our client's options: trusting `pki`, on `binding`, presenting `identity` when given.
fn options(pki: &Pki, binding: ProtocolBinding, identity: Option<&Issued>) -> ClientOptions {
    let mut tls = ClientTls::new().root_ca(pki.ca_pem());
    if let Some(id) = identity {
        tls = tls.identity(id.cert.clone(), id.key.clone());
    }
    ClientOptions {
        preferred_binding: Some(binding),
        timeout: TIMEOUT,
        tls: Some(tls),
        ..ClientOptions::default()
    }
}

fn message(text: &str) -> Value {
    json!({
        "messageId": format!("m-{}", uuid_like()),
        "role": "ROLE_USER",
        "parts": [{ "text": text }],
    })
}

fn uuid_like() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    u128::from(N.fetch_add(1, Ordering::SeqCst)) << 32 | u128::from(std::process::id())
}

/// The number of events of a streamed message, all of them successful.
async fn streamed(client: &A2aClient, text: &str) -> usize {
    let mut events = within(
        "stream",
        client.stream_message(text, SendOptions::default()),
    )
    .await
    .unwrap()
    .into_inner();
    let mut n = 0;
    while let Some(e) = within("event", events.next()).await {
        e.unwrap();
        n += 1;
    }
    n
}

fn task_id(r: &Result<a2a_runtime::client::Response<SendResult>, ClientError>) -> String {
    match r.as_ref().map(|r| r.get_ref()) {
        Ok(SendResult::Task(t)) => t.id.to_string(),
        other => panic!("expected a task: {other:?}"),
    }
}

#[tokio::test]
async fn https_serves_jsonrpc_rest_sse_and_a_card_of_https_urls() {
    let pki = Pki::new("a2a tls test CA");
    let server = pki.server();
    let running = builder()
        .tls(TlsConfig::new(server.cert.clone(), server.key.clone()))
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let base = running.url();
    assert!(base.starts_with("https://127.0.0.1:"), "{base}");
    let http = https(&pki, None);

    // The card: every HTTP interface is https.
    let card: Value = within(
        "card",
        http.get(format!("{base}/.well-known/agent-card.json"))
            .send(),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    assert!(interfaces.len() >= 2, "{card}");
    for i in interfaces {
        assert!(
            i["url"].as_str().unwrap().starts_with("https://127.0.0.1:"),
            "{i}"
        );
    }

    // JSON-RPC.
    let rpc: Value = within(
        "jsonrpc",
        http.post(&base)
            .header("A2A-Version", "1.0")
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": { "message": message("over https") },
            }))
            .send(),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let task = &rpc["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{rpc}");
    let id = task["id"].as_str().unwrap().to_owned();

    // REST: the same task, and a new one.
    let got = within(
        "rest get",
        http.get(format!("{base}/tasks/{id}"))
            .header("A2A-Version", "1.0")
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(got.status(), 200);
    let got: Value = got.json().await.unwrap();
    assert_eq!(got["id"], id.as_str());
    let sent: Value = within(
        "rest send",
        http.post(format!("{base}/message:send"))
            .header("A2A-Version", "1.0")
            .json(&json!({ "message": message("rest") }))
            .send(),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    // SSE over REST: the events, ending with the completed status.
    let stream = within(
        "rest stream",
        http.post(format!("{base}/message:stream"))
            .header("A2A-Version", "1.0")
            .json(&json!({ "message": message("stream me") }))
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(stream.status(), 200);
    assert!(
        stream.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let body = within("rest stream body", stream.text()).await.unwrap();
    assert!(body.contains("data:"), "{body}");
    assert!(body.contains("echo: stream me"), "{body}");
    assert!(body.contains("TASK_STATE_COMPLETED"), "{body}");

    // Our client, JSON-RPC streaming over HTTPS.
    let client = within(
        "discover",
        A2aClient::discover(&base, options(&pki, ProtocolBinding::JsonRpc, None)),
    )
    .await
    .unwrap();
    assert!(client.interface().url.starts_with("https://"));
    assert!(streamed(&client, "client stream").await >= 2);

    // Plain HTTP to the TLS port is not served; a client without the CA refuses the server.
    let plain = reqwest::Client::builder().timeout(TIMEOUT).build().unwrap();
    let addr = running.addr;
    assert!(
        within(
            "plain",
            plain
                .get(format!("http://{addr}/.well-known/agent-card.json"))
                .send()
        )
        .await
        .map(|r| r.status() != 200)
        .unwrap_or(true)
    );
    let other = Pki::new("another CA");
    let untrusting = https(&other, None);
    assert!(
        within(
            "untrusted",
            untrusting
                .get(format!("{base}/.well-known/agent-card.json"))
                .send()
        )
        .await
        .is_err()
    );
    running.stop().await;
}

#[tokio::test]
async fn unusable_certificates_and_keys_are_build_errors() {
    let pki = Pki::new("a2a tls test CA");
    let server = pki.server();
    let other = pki.server();
    let cases = [
        (
            "garbage cert",
            TlsConfig::new("not a pem", server.key.clone()),
        ),
        ("no cert", TlsConfig::new("", server.key.clone())),
        (
            "garbage key",
            TlsConfig::new(
                server.cert.clone(),
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            ),
        ),
        (
            "key of another cert",
            TlsConfig::new(server.cert.clone(), other.key.clone()),
        ),
        (
            "empty client CA",
            TlsConfig::new(server.cert.clone(), server.key.clone())
                .client_ca("", ClientAuth::Required),
        ),
    ];
    for (what, tls) in cases {
        match builder().tls(tls).build() {
            Err(BuildError::Tls(reason)) => assert!(!reason.is_empty(), "{what}"),
            other => panic!("{what}: expected a TLS build error, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn grpc_over_tls_with_our_client() {
    let pki = Pki::new("a2a tls test CA");
    let server = pki.server();
    let running = builder()
        .tls(TlsConfig::new(server.cert.clone(), server.key.clone()))
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let grpc = running.grpc_addr().unwrap();
    let client = within(
        "discover",
        A2aClient::discover(&running.url(), options(&pki, ProtocolBinding::Grpc, None)),
    )
    .await
    .unwrap();
    assert_eq!(client.interface().protocol_binding, ProtocolBinding::Grpc);
    assert_eq!(client.interface().url, grpc.to_string());
    let sent = within(
        "send",
        client.send_message("grpc tls", SendOptions::default()),
    )
    .await;
    let id = task_id(&sent);
    let task = within("get", client.get_task(&id, None)).await.unwrap();
    assert_eq!(task.get_ref().id, id.as_str());
    assert!(streamed(&client, "grpc stream").await >= 2);

    // The same card read by a client without TLS settings dials h2c: refused by the TLS port.
    let card = client.card();
    let plain = ClientOptions {
        preferred_binding: Some(ProtocolBinding::Grpc),
        timeout: Duration::from_secs(5),
        ..ClientOptions::default()
    };
    let h2c = A2aClient::new(card.clone(), plain).await.unwrap();
    assert!(
        within("h2c", h2c.send_message("x", SendOptions::default()))
            .await
            .is_err()
    );
    // A client trusting another CA refuses the server.
    let other = Pki::new("another CA");
    let untrusting = A2aClient::new(card, options(&other, ProtocolBinding::Grpc, None))
        .await
        .unwrap();
    assert!(
        within(
            "untrusted",
            untrusting.send_message("x", SendOptions::default())
        )
        .await
        .is_err()
    );
    running.stop().await;
}

/// A server asking for client certificates of `pki` (`auth`), identifying callers by them.
async fn mtls_server(pki: &Pki, auth: ClientAuth) -> a2a_runtime::server::RunningServer {
    let server = pki.server();
    builder()
        .tls(TlsConfig::new(server.cert.clone(), server.key.clone()).client_ca(pki.ca_pem(), auth))
        .authenticator(MtlsAuthenticator::new())
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

fn is_unauthenticated(e: &ClientError) -> bool {
    matches!(e.to_a2a_error(), A2aError::Unauthenticated { .. })
}

/// Asserts that a gRPC call to `card`'s agent presenting `identity` fails at the TLS level
/// (not as a refused credential).
async fn grpc_refused_by_tls(card: AgentCard, pki: &Pki, identity: Option<&Issued>) {
    let client = A2aClient::new(card, options(pki, ProtocolBinding::Grpc, identity))
        .await
        .unwrap();
    let err = within("grpc", client.send_message("x", SendOptions::default()))
        .await
        .unwrap_err();
    assert!(
        !is_unauthenticated(&err),
        "refused at the TLS level: {err:?}"
    );
}

#[tokio::test]
async fn mtls_identifies_callers_and_keeps_their_tasks_apart_on_both_bindings() {
    let pki = Pki::new("a2a clients CA");
    let running = mtls_server(&pki, ClientAuth::Optional).await;
    let base = running.url();
    let (alice, bob) = (pki.client("alice"), pki.client("bob"));

    // The card declares the scheme and requires it.
    let public = https(&pki, None);
    let card: Value = within(
        "card",
        public
            .get(format!("{base}/.well-known/agent-card.json"))
            .send(),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert!(
        card["securitySchemes"]["mtls"]["mtlsSecurityScheme"].is_object(),
        "{card}"
    );
    assert!(
        card["securityRequirements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["schemes"].get("mtls").is_some()),
        "{card}"
    );

    for binding in [
        ProtocolBinding::JsonRpc,
        ProtocolBinding::HttpJson,
        ProtocolBinding::Grpc,
    ] {
        let connect =
            |id: Option<&Issued>| A2aClient::discover(&base, options(&pki, binding.clone(), id));
        let a = within("alice", connect(Some(&alice))).await.unwrap();
        let b = within("bob", connect(Some(&bob))).await.unwrap();
        let anonymous = within("anonymous", connect(None)).await.unwrap();
        assert_eq!(a.interface().protocol_binding, binding);

        let sent = within("alice send", a.send_message("mine", SendOptions::default())).await;
        let id = task_id(&sent);
        let own = within("alice get", a.get_task(&id, None)).await.unwrap();
        assert_eq!(own.get_ref().id, id.as_str(), "{binding:?}");
        let theirs = within("bob get", b.get_task(&id, None)).await.unwrap_err();
        assert!(
            matches!(theirs.to_a2a_error(), A2aError::TaskNotFound { .. }),
            "{binding:?}: {theirs:?}"
        );
        let listed = within("bob list", b.list_tasks(Default::default()))
            .await
            .unwrap();
        assert!(
            listed.get_ref().tasks.iter().all(|t| t.id != id.as_str()),
            "{binding:?}: bob lists alice's task"
        );
        let none = within(
            "no cert",
            anonymous.send_message("x", SendOptions::default()),
        )
        .await
        .unwrap_err();
        assert!(is_unauthenticated(&none), "{binding:?}: {none:?}");
        let none = within("no cert get", anonymous.get_task(&id, None))
            .await
            .unwrap_err();
        assert!(is_unauthenticated(&none), "{binding:?}: {none:?}");
    }

    // Without a certificate, REST answers 401 with a challenge, as for a missing token.
    let r = within(
        "rest 401",
        public
            .get(format!("{base}/tasks/any"))
            .header("A2A-Version", "1.0")
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 401);
    assert!(r.headers().contains_key("www-authenticate"));

    // A certificate of another CA fails the handshake: nothing is served, on either listener.
    let rogue_ca = Pki::new("a2a clients CA");
    let mallory = rogue_ca.client("alice");
    let rogue = https(&pki, Some(&mallory));
    assert!(
        within(
            "rogue https",
            rogue
                .get(format!("{base}/tasks/any"))
                .header("A2A-Version", "1.0")
                .send()
        )
        .await
        .is_err()
    );
    let card: AgentCard = serde_json::from_value(card).unwrap();
    grpc_refused_by_tls(card, &pki, Some(&mallory)).await;
    running.stop().await;
}

#[tokio::test]
async fn required_client_auth_refuses_at_the_tls_level() {
    let pki = Pki::new("a2a clients CA");
    let running = mtls_server(&pki, ClientAuth::Required).await;
    let base = running.url();
    let carol = pki.client("carol");
    let without = https(&pki, None);
    assert!(
        within(
            "no cert",
            without
                .get(format!("{base}/.well-known/agent-card.json"))
                .send()
        )
        .await
        .is_err()
    );
    let client = within(
        "carol",
        A2aClient::discover(&base, options(&pki, ProtocolBinding::Grpc, Some(&carol))),
    )
    .await
    .unwrap();
    let sent = within(
        "carol send",
        client.send_message("hi", SendOptions::default()),
    )
    .await;
    task_id(&sent);
    grpc_refused_by_tls(client.card(), &pki, None).await;
    running.stop().await;
}

#[tokio::test]
async fn the_certificate_name_and_mapping_are_configurable() {
    let pki = Pki::new("a2a clients CA");
    let server = pki.server();
    let running = builder()
        .tls(
            TlsConfig::new(server.cert.clone(), server.key.clone())
                .client_ca(pki.ca_pem(), ClientAuth::Optional),
        )
        .authenticator(
            MtlsAuthenticator::new()
                .identity(CertIdentity::Uri)
                .scheme_name("clientCert")
                .map(|uri| {
                    uri.strip_prefix("spiffe://acme/")
                        .map(|id| Principal::authenticated(id).with_tenants(["acme"]))
                }),
        )
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    assert!(matches!(
        running_card_scheme(&running, &pki, "clientCert").await,
        Some(SecurityScheme::MtlsSecurityScheme(_))
    ));
    let svc = pki.issue(
        &["spiffe://acme/svc-1"],
        "ignored",
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    );
    let foreign = pki.issue(
        &["spiffe://globex/svc-1"],
        "ignored",
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    );
    let cn_only = pki.client("svc-1");
    let base = running.url();
    let ok = within(
        "svc",
        A2aClient::discover(&base, options(&pki, ProtocolBinding::JsonRpc, Some(&svc))),
    )
    .await
    .unwrap();
    task_id(&within("svc send", ok.send_message("hi", SendOptions::default())).await);
    for refused in [&foreign, &cn_only] {
        let c = within(
            "refused",
            A2aClient::discover(
                &base,
                options(&pki, ProtocolBinding::JsonRpc, Some(refused)),
            ),
        )
        .await
        .unwrap();
        let err = within("refused send", c.send_message("hi", SendOptions::default()))
            .await
            .unwrap_err();
        assert!(is_unauthenticated(&err), "{err:?}");
    }
    running.stop().await;
}

async fn running_card_scheme(
    running: &a2a_runtime::server::RunningServer,
    pki: &Pki,
    name: &str,
) -> Option<SecurityScheme> {
    let card: AgentCard = within(
        "card",
        https(pki, None)
            .get(format!("{}/.well-known/agent-card.json", running.url()))
            .send(),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    card.security_schemes.get(name).cloned()
}
