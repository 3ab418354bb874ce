//! Authentication, authorization and tenancy over real HTTP, on both bindings and every
//! operation; JWT keys from a JWKS served over real HTTPS (a CA made by the test, trusted
//! explicitly); signed agent cards, also against the official Python SDK's signing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::auth::jwt::{Algorithm, Jwks, JwtAuthenticator};
use a2a_runtime::auth::signing::{CardSigner, CardVerifier};
use a2a_runtime::auth::{DefaultAuthorizer, StaticTokens};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{ExtensionHooks, ExtensionMethod, MethodEntry};
use a2a_runtime::protocol::Principal;
use a2a_runtime::server::{A2aServer, BuildError, RunningServer};
use a2a_runtime::test::{Binding, TestServer, within};
use a2a_runtime::types::{
    AgentCapabilities, AgentCard, Artifact, HttpAuthSecurityScheme, ListTasksRequest, Part,
    SecurityScheme,
};
use a2a_tests::interop;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

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
        .authorizer(DefaultAuthorizer::new().member("acme", "alice"))
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_on_both_bindings_refuses_every_wrong_credential() {
    let k1 = IssuerKey::new("k1");
    let stranger = IssuerKey::new("k1");
    let unknown = IssuerKey::new("k-unknown");
    let jwks = JwksServer::start(vec![k1.jwk.clone()]).await;
    let srv = guarded_server(jwks.jwks()).await;
    let base = srv.url();
    let server = TestServer::remote(&base);
    let http = server.http().clone();
    let jane = format!(
        "Bearer {}",
        k1.token("jane", 600, json!({"tenants": ["acme"]}))
    );

    // The card declares what is enforced.
    let public: Value = http
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        public["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        public["securitySchemes"]["jwt"]["httpAuthSecurityScheme"]["bearerFormat"],
        "JWT"
    );
    assert_eq!(
        public["securityRequirements"],
        json!([{"schemes": {"bearer": {}}}, {"schemes": {"jwt": {}}}])
    );

    let refused_credentials: Vec<(&str, Option<String>)> = vec![
        ("no credential", None),
        ("a wrong token", Some("Bearer tok-nobody".into())),
        ("garbage", Some("Basic !!!garbage!!!".into())),
        (
            "an expired JWT",
            Some(format!(
                "Bearer {}",
                k1.token("jane", -60, json!({"tenants": ["acme"]}))
            )),
        ),
        (
            "a JWT signed by an unknown key",
            Some(format!(
                "Bearer {}",
                unknown.token("jane", 600, json!({"tenants": ["acme"]}))
            )),
        ),
        (
            "a JWT with a known kid signed by another key",
            Some(format!(
                "Bearer {}",
                stranger.token("jane", 600, json!({"tenants": ["acme"]}))
            )),
        ),
        (
            "a JWT with alg none",
            Some(format!("Bearer {}", alg_none_token("jane"))),
        ),
        (
            "a JWT for another audience",
            Some(format!(
                "Bearer {}",
                k1.token("jane", 600, json!({"aud": "elsewhere"}))
            )),
        ),
    ];

    let mut cases = 0;
    for binding in [Binding::JsonRpc, Binding::Rest] {
        // Alice's task in acme; jane's (JWT) task in acme; bob's own task, no tenant.
        let (task, cfg) = waiting_task(&server, binding, "acme", &format!("Bearer {ALICE}")).await;
        let (jane_task, _) = waiting_task(&server, binding, "acme", &jane).await;
        let missing = "task-that-does-not-exist";

        // 1. Every refused credential: 401 with a challenge, one body for all of them.
        let mut first_body: BTreeMap<&str, String> = BTreeMap::new();
        for (what, auth) in &refused_credentials {
            for (op, params) in operations(&task, &cfg) {
                let r = call(&server, binding, op, params, Some("acme"), auth.as_deref()).await;
                assert_eq!(r.status, 401, "{binding:?} {op} with {what}: {r:?}");
                assert!(
                    !r.sse,
                    "{binding:?} {op} with {what}: refused before any stream"
                );
                assert_eq!(
                    r.www_authenticate.as_deref(),
                    Some("Bearer realm=\"a2a\""),
                    "{binding:?} {op} with {what}"
                );
                assert_eq!(
                    r.reason(),
                    Some("UNAUTHENTICATED"),
                    "{binding:?} {op} with {what}: {r:?}"
                );
                if binding == Binding::JsonRpc {
                    assert_eq!(r.code(), -31401);
                    assert_eq!(r.body["id"], Value::Null);
                } else {
                    assert_eq!(r.error().unwrap()["status"], "UNAUTHENTICATED");
                }
                let body = first_body.entry(op).or_insert_with(|| r.text.clone());
                assert_eq!(
                    body, &r.text,
                    "{binding:?} {op}: the same answer for {what}"
                );
                cases += 1;
            }
        }

        // 2. Another principal (bob: a bearer token; and jane's JWT for alice's task): what is
        //    not theirs is not found, exactly as a task that does not exist.
        for (who, auth, tenant) in [
            ("bob", format!("Bearer {BOB}"), None),
            ("bob in acme", format!("Bearer {BOB}"), Some("acme")),
            ("jane", jane.clone(), Some("acme")),
        ] {
            for (op, params) in operations(&task, &cfg) {
                let r = call(&server, binding, op, params, tenant, Some(&auth)).await;
                if addresses_task(op) {
                    let (_, missing_params) = operations(missing, &cfg)
                        .into_iter()
                        .find(|(o, _)| *o == op)
                        .unwrap();
                    let absent =
                        call(&server, binding, op, missing_params, tenant, Some(&auth)).await;
                    assert_eq!(
                        r.reason(),
                        Some("TASK_NOT_FOUND"),
                        "{binding:?} {op} as {who}: {r:?}"
                    );
                    assert_eq!(r.status, absent.status, "{binding:?} {op} as {who}");
                    assert_eq!(
                        r.text,
                        absent.text.replace(missing, &task),
                        "{binding:?} {op} as {who}: identical to a missing task"
                    );
                } else if tenant == Some("acme") && who.starts_with("bob") {
                    assert_eq!(
                        r.status,
                        if binding == Binding::Rest { 403 } else { 200 },
                        "{r:?}"
                    );
                    assert_eq!(
                        r.reason(),
                        Some("PERMISSION_DENIED"),
                        "{binding:?} {op} as {who}: {r:?}"
                    );
                } else {
                    // Their own view: none of alice's tasks in it.
                    let v = result(binding, &r);
                    assert!(
                        !v.to_string().contains(&task),
                        "{binding:?} {op} as {who}: {v}"
                    );
                }
                cases += 1;
            }
        }

        // 3. Alice in a tenant she does not belong to, and alice's id under another tenant.
        for tenant in ["globex", "ACME"] {
            for (op, params) in operations(&task, &cfg) {
                let r = call(
                    &server,
                    binding,
                    op,
                    params,
                    Some(tenant),
                    Some(&format!("Bearer {ALICE}")),
                )
                .await;
                if addresses_task(op) {
                    assert_eq!(
                        r.reason(),
                        Some("TASK_NOT_FOUND"),
                        "{binding:?} {op} in {tenant}: {r:?}"
                    );
                    assert_eq!(r.status, if binding == Binding::Rest { 404 } else { 200 });
                } else {
                    assert_eq!(
                        r.reason(),
                        Some("PERMISSION_DENIED"),
                        "{binding:?} {op} in {tenant}: {r:?}"
                    );
                }
                cases += 1;
            }
            // A new task in a tenant she does not belong to is refused too.
            let r = call(
                &server,
                binding,
                "SendMessage",
                msg("hi", None),
                Some(tenant),
                Some(&format!("Bearer {ALICE}")),
            )
            .await;
            assert_eq!(r.reason(), Some("PERMISSION_DENIED"), "{r:?}");
            cases += 1;
        }
        // Alice's task is not found outside its tenant either.
        let r = call(
            &server,
            binding,
            "GetTask",
            json!({"id": task}),
            None,
            Some(&format!("Bearer {ALICE}")),
        )
        .await;
        assert_eq!(r.reason(), Some("TASK_NOT_FOUND"), "{r:?}");
        cases += 1;

        // 4. The rightful principals succeed at everything.
        for (who, auth, own) in [
            ("alice", format!("Bearer {ALICE}"), task.clone()),
            ("jane", jane.clone(), jane_task.clone()),
        ] {
            let (t, c) = if who == "alice" {
                (own.clone(), cfg.clone())
            } else {
                let r = call(
                    &server,
                    binding,
                    "CreateTaskPushNotificationConfig",
                    json!({"taskId": own, "url": "https://hooks.example.com/a2a"}),
                    Some("acme"),
                    Some(&auth),
                )
                .await;
                (
                    own.clone(),
                    result(binding, &r)["id"].as_str().unwrap().to_owned(),
                )
            };
            // Cancel last: the task must stay open for the others.
            let mut ops = operations(&t, &c);
            let cancel = ops.remove(4);
            ops.push(cancel);
            for (op, params) in ops {
                let r = call(&server, binding, op, params, Some("acme"), Some(&auth)).await;
                assert_eq!(r.status, 200, "{binding:?} {op} as {who}: {r:?}");
                assert!(r.error().is_none(), "{binding:?} {op} as {who}: {r:?}");
                if op == "SubscribeToTask" || op == "SendStreamingMessage" {
                    assert!(r.sse, "{binding:?} {op} as {who}: {r:?}");
                    assert!(r.text.contains(&t), "{binding:?} {op} as {who}: {}", r.text);
                }
                if op == "GetTask" || op == "tasks/mine" || op == "ListTasks" {
                    assert!(r.text.contains(&t), "{binding:?} {op} as {who}: {}", r.text);
                }
                if op == "GetExtendedAgentCard" {
                    let card = result(binding, &r);
                    assert_eq!(card["name"], "guarded (extended)");
                    assert_eq!(card["capabilities"]["extensions"][0]["uri"], EXT, "{card}");
                    assert!(card["securitySchemes"]["bearer"].is_object(), "{card}");
                    assert!(
                        !card["supportedInterfaces"].as_array().unwrap().is_empty(),
                        "{card}"
                    );
                }
                cases += 1;
            }
        }
    }
    println!("{cases} cases refused, not found or served as they must be");
    assert_eq!(cases, 366, "every case of the matrix ran");
    drop(jwks);
}

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

// ---------------------------------------------------------------------------------------------
// Signed cards.

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

// ---------------------------------------------------------------------------------------------
// The other front ends: v0.3 over JSON-RPC and gRPC go through the same guard.

/// A server requiring `Bearer tok-alice`, with the gRPC binding on a port of its own.
async fn guarded_with_grpc() -> RunningServer {
    A2aServer::builder()
        .card(card())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .authenticator(StaticTokens::bearer().token("alice", "tok-alice"))
        .grpc_addr("127.0.0.1:0")
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

#[tokio::test]
async fn a_v0_3_send_without_a_token_gets_the_same_refusal_as_v1_0() {
    let running = guarded_with_grpc().await;
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("{}/", running.url());
    let v03 = json!({"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "v03-1", "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]}}});
    let v10 =
        json!({"jsonrpc": "2.0", "id": 8, "method": "SendMessage", "params": msg("hi", None)});
    let post = |body: &Value, version: Option<&str>, token: Option<&str>| {
        let mut req = http
            .post(&url)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        req.send()
    };
    let mut refusals = Vec::new();
    for (body, version) in [(&v03, None), (&v10, Some("1.0"))] {
        for token in [None, Some("tok-mallory")] {
            let r = post(body, version, token).await.unwrap();
            let status = r.status().as_u16();
            let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
            let body: Value = r.json().await.unwrap();
            refusals.push((status, challenge, body["error"].clone(), body["id"].clone()));
        }
    }
    assert_eq!(refusals[0].0, 401, "{refusals:?}");
    assert_eq!(refusals[0].2["code"], -31401, "{refusals:?}");
    assert!(refusals.iter().all(|r| *r == refusals[0]), "{refusals:?}");
    // With the token, the v0.3 call is served (a v0.3 result: `kind` members).
    let ok: Value = post(&v03, None, Some("tok-alice"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ok["id"], 7, "{ok}");
    assert_eq!(ok["result"]["kind"], "task", "{ok}");
    running.stop().await;
}

#[tokio::test]
async fn a_grpc_call_without_a_token_is_unauthenticated() {
    use a2a_runtime::grpc::pb;
    use a2a_runtime::grpc::pb::a2a_service_client::A2aServiceClient;
    let running = guarded_with_grpc().await;
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://{}", running.grpc_addr().unwrap()))
            .unwrap()
            .connect_lazy();
    let mut client = A2aServiceClient::new(channel);
    let send = |token: Option<&str>| {
        let mut req = tonic::Request::new(pb::SendMessageRequest::from(
            a2a_runtime::types::SendMessageRequest {
                message: a2a_runtime::types::Message::user_text("hi"),
                ..Default::default()
            },
        ));
        req.metadata_mut().insert(
            "a2a-version",
            tonic::metadata::MetadataValue::from_static("1.0"),
        );
        if let Some(t) = token {
            req.metadata_mut()
                .insert("authorization", format!("Bearer {t}").parse().unwrap());
        }
        req
    };
    for token in [None, Some("tok-mallory")] {
        let status = client.send_message(send(token)).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    }
    // Streams and reads are guarded too, before anything runs.
    let status = client
        .get_task(tonic::Request::new(pb::GetTaskRequest {
            id: "t-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    // With the token: served.
    let sent = client
        .send_message(send(Some("tok-alice")))
        .await
        .unwrap()
        .into_inner();
    assert!(
        matches!(
            sent.payload,
            Some(pb::send_message_response::Payload::Task(_))
        ),
        "{sent:?}"
    );
    running.stop().await;
}
