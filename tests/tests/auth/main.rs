//! Authentication, authorization and tenancy over real HTTP, on both bindings and every
//! operation; JWT keys from a JWKS served over real HTTPS (a CA made by the test, trusted
//! explicitly); signed agent cards, also against the official Python SDK's signing.
//!
//! One concern per module (one test binary: the link time of a binary per file dominates a test
//! run); the keys, the agent and the calls the tests share are here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::auth::jwt::{Algorithm, Jwks, JwtAuthenticator};
use a2a_runtime::auth::{DefaultAuthorizer, StaticTokens};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{ExtensionHooks, ExtensionMethod, MethodEntry};
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::test::{Binding, TestServer};
use a2a_runtime::types::{AgentCapabilities, AgentCard, Artifact, ListTasksRequest, Part};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

mod authenticators;
mod every_operation;
mod front_ends;
mod namespaces;
mod signed_cards;

// ---------------------------------------------------------------------------------------------
// Keys, tokens and an HTTPS JWKS endpoint.

/// An ES256 key pair as an issuer holds it.
struct IssuerKey {
    kid: String,
    private_pem: String,
    jwk: Value,
}

impl IssuerKey {
    fn new(kid: &str) -> Self {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        // The uncompressed point: 0x04 || x || y.
        let raw = pair.public_key_raw();
        assert_eq!(raw.len(), 65);
        let jwk = json!({"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(&raw[1..33]), "y": URL_SAFE_NO_PAD.encode(&raw[33..])});
        Self {
            kid: kid.into(),
            private_pem: pair.serialize_pem(),
            jwk,
        }
    }

    fn public_pem(&self) -> String {
        let pair = rcgen::KeyPair::from_pem(&self.private_pem).unwrap();
        pair.public_key_pem()
    }

    /// A token for `sub` that expires `exp_in` seconds from now (negative: expired).
    fn token(&self, sub: &str, exp_in: i64, extra: Value) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let mut claims = json!({"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "iat": now,
            "nbf": now - 5, "exp": now + exp_in});
        if let (Value::Object(c), Value::Object(e)) = (&mut claims, extra) {
            c.extend(e);
        }
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        let key = jsonwebtoken::EncodingKey::from_ec_pem(self.private_pem.as_bytes()).unwrap();
        jsonwebtoken::encode(&header, &claims, &key).unwrap()
    }
}

const ISSUER: &str = "https://issuer.test";
const AUDIENCE: &str = "a2a-auth-tests";

/// `{"alg":"none"}` with the claims of a valid token and no signature.
fn alg_none_token(sub: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT","kid":"k1"}"#);
    let claims = URL_SAFE_NO_PAD.encode(
        json!({"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": now + 600, "tenants": ["acme"]})
            .to_string(),
    );
    format!("{header}.{claims}.")
}

/// A JWKS served over HTTPS on 127.0.0.1, with a certificate from a CA the test made.
struct JwksServer {
    url: String,
    ca_pem: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
    down: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for JwksServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl JwksServer {
    async fn start(keys: Vec<Value>) -> Self {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let ca_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "a2a auth tests CA");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let leaf_params =
            rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
                .unwrap();
        let leaf = leaf_params.signed_by(&leaf_key, &ca).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let keys = Arc::new(Mutex::new(keys));
        let fetches = Arc::new(AtomicUsize::new(0));
        let down = Arc::new(AtomicBool::new(false));
        let (k, f, d) = (keys.clone(), fetches.clone(), down.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, k, f, d) = (acceptor.clone(), k.clone(), f.clone(), d.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 1024];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
                        match tls.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    f.fetch_add(1, Ordering::SeqCst);
                    let (status, body) = if d.load(Ordering::SeqCst) {
                        ("503 Service Unavailable", "{}".to_owned())
                    } else {
                        let keys = k.lock().unwrap().clone();
                        ("200 OK", json!({ "keys": keys }).to_string())
                    };
                    let resp = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tls.write_all(resp.as_bytes()).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        Self {
            url: format!("https://localhost:{port}/jwks.json"),
            ca_pem: ca.pem(),
            keys,
            fetches,
            down,
            task,
        }
    }

    fn jwks(&self) -> Jwks {
        Jwks::with_roots(&self.url, self.ca_pem.as_bytes())
            .unwrap()
            .min_refetch_interval(Duration::ZERO)
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------------------------
// The agent: "wait" leaves the task in INPUT_REQUIRED (not terminal), anything else completes.

struct Agent;

impl AgentExecutor for Agent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if ctx.text().contains("wait") {
            return events.input_required("say more").await;
        }
        events
            .artifact(Artifact::new([Part::text(format!("echo: {}", ctx.text()))]))
            .await?;
        events.complete().await
    }
}

/// Lists the caller's task ids.
#[a2a_extension(uri = "https://example.com/ext/my-tasks/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct MyTasks {}

struct ListMine;

#[derive(Debug, Default, Serialize, Deserialize)]
struct NoParams {}

#[derive(Debug, Serialize, Deserialize)]
struct Mine {
    ids: Vec<String>,
}

impl ExtensionMethod for ListMine {
    type Extension = MyTasks;
    const METHOD: &'static str = "tasks/mine";
    const REST_PATH: &'static str = "/extensions/my-tasks/v1/tasks:mine";
    type Params = NoParams;
    type Result = Mine;
}

impl ExtensionHooks for MyTasks {
    type Activation = ();

    fn methods(&self) -> Vec<MethodEntry> {
        vec![MethodEntry::new::<ListMine, _, _>(
            |ctx, _: NoParams| async move {
                let page = ctx
                    .list_tasks(ListTasksRequest {
                        page_size: Some(100),
                        ..ListTasksRequest::default()
                    })
                    .await?;
                Ok(Mine {
                    ids: page.tasks.into_iter().map(|t| t.id.to_string()).collect(),
                })
            },
        )]
    }
}

const ALICE: &str = "tok-alice-0123456789";
const BOB: &str = "tok-bob-0123456789";

fn card() -> AgentCard {
    AgentCard {
        name: "guarded".into(),
        description: "an agent behind authentication".into(),
        version: "1.0.0".into(),
        capabilities: AgentCapabilities {
            push_notifications: Some(true),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Bearer tokens for alice (member of `acme` by the authorizer's map) and bob (no tenant), and
/// JWTs from the JWKS (jane, member of `acme` by her token's claim).
async fn guarded_server(jwks: Jwks) -> RunningServer {
    let jwt = JwtAuthenticator::new(Algorithm::Es256, jwks)
        .issuer(ISSUER)
        .audience(AUDIENCE)
        .tenants_claim("tenants")
        .leeway(Duration::from_secs(5));
    let server = A2aServer::builder()
        .card(card())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .linked_extensions(false)
        .extension(MyTasks::default())
        .extended_card(AgentCard {
            name: "guarded (extended)".into(),
            ..card()
        })
        .authenticator(
            StaticTokens::bearer()
                .token("alice", ALICE)
                .token("bob", BOB),
        )
        .authenticator(jwt)
        // Two authenticators: ids are namespaced (`bearer:alice`, `jwt:<issuer>:jane`).
        .authorizer(DefaultAuthorizer::new().member("acme", "bearer:alice"))
        .workers(1)
        .build()
        .unwrap();
    server.start("127.0.0.1:0").await.unwrap()
}

// ---------------------------------------------------------------------------------------------
// Calls over both bindings, with any credential and tenant.

/// An answer: the whole body, or for a stream that opened, its first event.
#[derive(Debug)]
struct Reply {
    status: u16,
    www_authenticate: Option<String>,
    sse: bool,
    /// The body (for a stream: the first event, out of its JSON-RPC envelope).
    body: Value,
    text: String,
}

impl Reply {
    /// The error object (JSON-RPC `error`, REST `error`), if any.
    fn error(&self) -> Option<&Value> {
        self.body.get("error")
    }

    fn code(&self) -> i64 {
        self.error().and_then(|e| e["code"].as_i64()).unwrap_or(0)
    }

    fn reason(&self) -> Option<&str> {
        let details = self.error()?.get("data").or(self.error()?.get("details"))?;
        details
            .as_array()?
            .iter()
            .find_map(|d| d["reason"].as_str())
    }
}

const EXT: &str = "https://example.com/ext/my-tasks/v1";

/// `op` on `binding`, in `tenant`, with the `Authorization` value `auth`.
async fn call(
    server: &TestServer,
    binding: Binding,
    op: &str,
    params: Value,
    tenant: Option<&str>,
    auth: Option<&str>,
) -> Reply {
    let mut request = match (op, binding) {
        ("tasks/mine", Binding::Rest) => server
            .rest(
                reqwest::Method::POST,
                "/extensions/my-tasks/v1/tasks:mine",
                Some(params),
            )
            .header("A2A-Extensions", EXT),
        ("tasks/mine", Binding::JsonRpc) => server
            .request(binding, op, params)
            .header("A2A-Extensions", EXT),
        _ => server.request(binding, op, params),
    }
    .id(json!(1));
    if let Some(t) = tenant {
        request = request.tenant(t);
    }
    if let Some(a) = auth {
        request = request.header("authorization", a);
    }
    if matches!(op, "SendStreamingMessage" | "SubscribeToTask") {
        // The first event is enough: the stream was opened for this caller.
        return match request.stream().await {
            Ok(mut events) => {
                let first = events.next().await.expect("a first event");
                Reply {
                    status: events.status(),
                    www_authenticate: events.header("www-authenticate").map(str::to_owned),
                    sse: true,
                    text: first.data.to_string(),
                    body: first.data,
                }
            }
            Err(error) => Reply {
                status: error.http,
                www_authenticate: error.header_list("www-authenticate"),
                sse: false,
                body: error.body,
                text: error.text,
            },
        };
    }
    let answer = request.send().await;
    Reply {
        status: answer.status,
        www_authenticate: answer.header("www-authenticate").map(str::to_owned),
        sse: false,
        body: serde_json::from_str(&answer.text).unwrap_or(Value::Null),
        text: answer.text,
    }
}

fn msg(text: &str, task_id: Option<&str>) -> Value {
    static N: AtomicUsize = AtomicUsize::new(0);
    let mut m = json!({"messageId": format!("m-{}", N.fetch_add(1, Ordering::SeqCst)),
        "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(t) = task_id {
        m["taskId"] = t.into();
    }
    json!({ "message": m })
}

/// The result of a successful call (JSON-RPC `result`, REST body, a stream's first event).
fn result(binding: Binding, r: &Reply) -> Value {
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.error().is_none(), "{r:?}");
    match binding {
        Binding::JsonRpc if !r.sse => r.body["result"].clone(),
        _ => r.body.clone(),
    }
}

/// The operations of the matrix with their params, for task `task` and push config `cfg`.
fn operations(task: &str, cfg: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("SendMessage", msg("wait more", Some(task))),
        ("SendStreamingMessage", msg("wait more", Some(task))),
        ("GetTask", json!({"id": task})),
        ("ListTasks", json!({})),
        ("CancelTask", json!({"id": task})),
        ("SubscribeToTask", json!({"id": task})),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://hooks.example.com/a2a"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": cfg}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": task})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": cfg}),
        ),
        ("tasks/mine", json!({})),
        ("GetExtendedAgentCard", json!({})),
    ]
}

/// Operations addressed to a task: refused ones answer TaskNotFound.
fn addresses_task(op: &str) -> bool {
    !matches!(op, "ListTasks" | "tasks/mine" | "GetExtendedAgentCard")
}

/// A task of `auth` in `tenant`, left waiting (INPUT_REQUIRED), and a push config on it.
async fn waiting_task(
    server: &TestServer,
    binding: Binding,
    tenant: &str,
    auth: &str,
) -> (String, String) {
    let r = call(
        server,
        binding,
        "SendMessage",
        msg("wait", None),
        Some(tenant),
        Some(auth),
    )
    .await;
    let task = result(binding, &r)["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = call(
        server,
        binding,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": "https://hooks.example.com/a2a"}),
        Some(tenant),
        Some(auth),
    )
    .await;
    let cfg = result(binding, &r)["id"].as_str().unwrap().to_owned();
    (task, cfg)
}
