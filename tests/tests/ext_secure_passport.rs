#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The built-in Secure Passport extension, against its published specification
//! (a2aproject/a2a-samples `extensions/secure-passport/v1/spec.md`): the spec's JSON examples
//! round-trip through the typed structs byte for byte (after canonical key ordering), and an
//! agent running the extension answers clients that activate it — raw JSON-RPC and REST with
//! the spec's payload verbatim, and the crate's client attaching the passport itself.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientOptions, SendOptions, SendResult};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Extension, MetadataExt};
use a2a_runtime::samples::secure_passport::{
    CallerContext, Passport, SecurePassport, Verification,
};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::{AgentCard, AgentExtension, Message, Part, PartContent};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

const URI: &str =
    "https://github.com/a2aproject/a2a-samples/tree/main/samples/python/extensions/secure-passport";
const TIMEOUT: Duration = Duration::from_secs(30);

fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/extensions/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// JSON text with every object's keys sorted, compact.
fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sort(v)).unwrap()
}

/// `json` → `T` → JSON, byte-identical after canonical key ordering.
fn round_trip<T: serde::Serialize + DeserializeOwned>(json: &Value) -> T {
    let typed: T = serde_json::from_value(json.clone()).unwrap();
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(canonical(&back), canonical(json));
    typed
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

#[test]
fn the_uri_and_metadata_key_are_the_specs() {
    assert_eq!(SecurePassport::URI, URI);
    assert_eq!(SecurePassport::METADATA_KEY, URI);
    assert!(!SecurePassport::default().declaration().required);
}

#[test]
fn the_caller_context_example_round_trips() {
    let json = fixture("secure_passport.caller_context.json");
    let ctx: CallerContext = round_trip(&json);
    assert_eq!(ctx.client_id, "a2a://orchestrator-agent.com");
    assert_eq!(ctx.session_id.as_deref(), Some("travel-session-xyz"));
    assert_eq!(ctx.signature.as_deref(), Some("MOCK-SIG-123456..."));
    assert_eq!(ctx.state_str("user_preferred_currency"), Some("GBP"));
    assert_eq!(ctx.state_str("loyalty_tier"), Some("Gold"));
    // The member order of the spec's example is kept too.
    assert_eq!(
        serde_json::to_string(&ctx).unwrap(),
        serde_json::to_string(&json).unwrap()
    );
}

#[test]
fn the_message_request_example_carries_the_passport_under_the_uri() {
    let request = fixture("secure_passport.message_request.json");
    let metadata = request["params"]["message"]["metadata"]
        .as_object()
        .unwrap();
    assert_eq!(
        metadata.keys().collect::<Vec<_>>(),
        [SecurePassport::METADATA_KEY]
    );
    let payload = &metadata[SecurePassport::METADATA_KEY];
    let ctx: CallerContext = round_trip(payload);
    assert_eq!(
        ctx,
        serde_json::from_value(fixture("secure_passport.caller_context.json")).unwrap()
    );

    // Written back into a v1.0 message, the metadata is the spec's, byte for byte.
    let mut message = Message::user_text("Book a flight for me.");
    SecurePassport::attach(&mut message, &ctx);
    let wire = serde_json::to_value(&message).unwrap();
    assert_eq!(
        canonical(&wire["metadata"]),
        canonical(&request["params"]["message"]["metadata"])
    );
    assert_eq!(wire["extensions"], json!([URI]));
    assert_eq!(SecurePassport::extract(&message).unwrap(), Some(ctx));
}

#[test]
fn the_agent_card_declaration_example_round_trips() {
    let json = fixture("secure_passport.agent_extension.json");
    let declared: AgentExtension = round_trip(&json);
    assert_eq!(declared.uri, URI);
    let params: SecurePassport = round_trip(&json["params"]);
    assert_eq!(
        params.supported_state_keys,
        ["user_preferred_currency", "loyalty_tier"]
    );

    // What our extension declares: the spec's uri and params (plus how this agent uses it).
    let ours = serde_json::to_value(
        SecurePassport::new(["user_preferred_currency", "loyalty_tier"]).declaration(),
    )
    .unwrap();
    assert_eq!(ours["uri"], json["uri"]);
    assert_eq!(canonical(&ours["params"]), canonical(&json["params"]));
    assert!(ours.get("required").is_none_or(|r| r == false));

    // No keys: empty params, as the reference implementation declares it.
    let bare = serde_json::to_value(SecurePassport::default().declaration()).unwrap();
    assert!(bare.get("params").is_none_or(|p| p == &json!({})), "{bare}");
}

#[test]
fn optional_fields_are_omitted_and_snake_case_names_are_accepted() {
    let ctx = CallerContext::new("a2a://ecommerce-front.com")
        .with_state("product_sku", "Nikon-Z-50mm-f1.8");
    assert_eq!(
        serde_json::to_value(&ctx).unwrap(),
        json!({"clientId": "a2a://ecommerce-front.com", "state": {"product_sku": "Nikon-Z-50mm-f1.8"}})
    );
    let parsed: CallerContext = serde_json::from_value(json!({
        "client_id": "a2a://travel-portal.com",
        "session_id": "s-1",
        "signature": null,
        "state": {}
    }))
    .unwrap();
    assert_eq!(parsed.client_id, "a2a://travel-portal.com");
    assert_eq!(parsed.session_id.as_deref(), Some("s-1"));
    assert!(!parsed.is_signed());
}

#[test]
fn malformed_passports_are_refused_with_invalid_params() {
    let good = fixture("secure_passport.caller_context.json");
    let mut missing_client = good.clone();
    missing_client.as_object_mut().unwrap().remove("clientId");
    let mut extra_field = good.clone();
    extra_field["extra_field"] = json!("unsupported");
    let mut state_not_object = good.clone();
    state_not_object["state"] = json!(["GBP"]);
    let mut missing_state = good.clone();
    missing_state.as_object_mut().unwrap().remove("state");
    let mut empty_client = good.clone();
    empty_client["clientId"] = json!("  ");
    for (what, bad) in [
        ("missing clientId", missing_client),
        ("unknown field", extra_field),
        ("state not an object", state_not_object),
        ("missing state", missing_state),
        ("empty clientId", empty_client),
        ("not an object", json!("a2a://x")),
    ] {
        let mut message = Message::user_text("hi");
        message.metadata.0.insert(URI.into(), bad);
        let err = SecurePassport::extract(&message).expect_err(what);
        assert_eq!(err.code(), -32602, "{what}: {err}");
        assert!(err.to_string().contains("Secure Passport"), "{what}: {err}");
    }
    // Absent is fine: the passport is optional.
    assert_eq!(
        SecurePassport::extract(&Message::user_text("hi")).unwrap(),
        None
    );
}

#[test]
fn verification_follows_the_signature_and_the_verifier() {
    let signed = CallerContext::new("a2a://a").with_signature("good");
    let unsigned = CallerContext::new("a2a://a");
    let msg = |ctx: &CallerContext| {
        let mut m = Message::user_text("hi");
        SecurePassport::attach(&mut m, ctx);
        m
    };
    let plain = SecurePassport::default();
    assert_eq!(
        plain.read(&msg(&unsigned)).unwrap().verification,
        Verification::Unsigned
    );
    assert_eq!(
        plain.read(&msg(&signed)).unwrap().verification,
        Verification::Unchecked
    );
    assert_eq!(
        plain.read(&Message::user_text("hi")).unwrap(),
        Passport::default()
    );

    let checking = SecurePassport::default().verify_with(|c: &CallerContext| {
        (c.signature.as_deref() == Some("good"))
            .then_some(())
            .ok_or_else(|| "bad signature".to_owned())
    });
    let read = checking.read(&msg(&signed)).unwrap();
    assert!(read.is_verified());
    assert_eq!(read.caller, Some(signed));
    assert_eq!(
        checking.read(&msg(&unsigned)).unwrap().verification,
        Verification::Unsigned
    );
    let forged = CallerContext::new("a2a://a").with_signature("forged");
    let err = checking.read(&msg(&forged)).unwrap_err();
    assert_eq!(err.code(), -32602);
    assert!(err.to_string().contains("bad signature"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// An agent using it
// ---------------------------------------------------------------------------------------------

/// Records the passport it saw, and replies with it as a data part.
#[derive(Clone, Default)]
struct Travel {
    seen: Arc<Mutex<Vec<Option<Passport>>>>,
}

impl AgentExecutor for Travel {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let passport = ctx.extension::<SecurePassport>();
        self.seen.lock().unwrap().push(passport.clone());
        let passport = passport.unwrap_or_default();
        let data = json!({
            "active": ctx.is_active::<SecurePassport>(),
            "caller": passport.caller,
            "verification": format!("{:?}", passport.verification),
        });
        events
            .reply(Message::new(
                a2a_runtime::types::Role::Agent,
                [Part::data(data)],
            ))
            .await
    }
}

struct Srv {
    url: String,
    http: reqwest::Client,
    agent: Travel,
    handle: actix_web::dev::ServerHandle,
}

impl Drop for Srv {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

async fn start() -> Srv {
    let agent = Travel::default();
    let card = AgentCard {
        name: "Travel".into(),
        description: "Books trips with the caller's Secure Passport".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    };
    let passport = SecurePassport::new(["user_preferred_currency", "loyalty_tier"]).verify_with(
        |c: &CallerContext| match c.signature.as_deref() {
            Some("MOCK-SIG-123456...") => Ok(()),
            _ => Err("unknown signer".to_owned()),
        },
    );
    let server = A2aServer::builder()
        .card(card)
        .executor(agent.clone())
        .extension(passport)
        .linked_extensions(false)
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    Srv {
        url: running.url(),
        http: reqwest::Client::new(),
        agent,
        handle: running.handle(),
    }
}

struct Answer {
    status: u16,
    extensions: Option<String>,
    body: Value,
}

async fn post(srv: &Srv, path: &str, body: Value, activate: bool) -> Answer {
    let mut rb = srv
        .http
        .post(format!("{}{path}", srv.url))
        .header("A2A-Version", "1.0")
        .json(&body);
    if activate {
        rb = rb.header("A2A-Extensions", URI);
    }
    let resp = tokio::time::timeout(TIMEOUT, rb.send())
        .await
        .expect("timely answer")
        .unwrap();
    let status = resp.status().as_u16();
    let extensions = resp
        .headers()
        .get("A2A-Extensions")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = resp.json().await.unwrap();
    Answer {
        status,
        extensions,
        body,
    }
}

/// A v1.0 SendMessage with the spec's passport payload verbatim in the message metadata.
fn send_params(payload: Value) -> Value {
    json!({"message": {
        "messageId": "msg-456",
        "role": "ROLE_USER",
        "parts": [{"text": "Book a flight for me."}],
        "metadata": {URI: payload}
    }})
}

fn rpc(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": "req-123", "method": "SendMessage", "params": params})
}

fn reply_data(message: &Value) -> Value {
    message["parts"][0]["data"].clone()
}

#[tokio::test]
async fn the_card_declares_the_extension_with_the_specs_params() {
    let srv = start().await;
    let card: Value = srv
        .http
        .get(format!("{}/.well-known/agent-card.json", srv.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let declared = card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"] == URI)
        .expect("declared");
    let spec = fixture("secure_passport.agent_extension.json");
    assert_eq!(canonical(&declared["params"]), canonical(&spec["params"]));
}

#[tokio::test]
async fn json_rpc_the_agent_sees_the_specs_passport_typed_and_verified() {
    let srv = start().await;
    let payload = fixture("secure_passport.caller_context.json");
    let answer = post(&srv, "/", rpc(send_params(payload.clone())), true).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.extensions.as_deref(), Some(URI));
    let message = &answer.body["result"]["message"];
    let data = reply_data(message);
    assert_eq!(data["active"], true);
    assert_eq!(data["verification"], "Verified");
    assert_eq!(canonical(&data["caller"]), canonical(&payload));
    // The extension adds nothing to the response: the spec defines no response data.
    assert!(message.get("metadata").is_none(), "{message}");

    let seen = srv.agent.seen.lock().unwrap().clone();
    let expected: CallerContext = serde_json::from_value(payload).unwrap();
    assert_eq!(
        seen,
        [Some(Passport {
            caller: Some(expected),
            verification: Verification::Verified,
        })]
    );
}

#[tokio::test]
async fn rest_the_agent_sees_the_passport_and_an_unsigned_one_is_unsigned() {
    let srv = start().await;
    let payload = json!({"clientId": "a2a://ecommerce-front.com", "state": {"product_sku": "Nikon-Z-50mm-f1.8"}});
    let answer = post(&srv, "/message:send", send_params(payload.clone()), true).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.extensions.as_deref(), Some(URI));
    let data = reply_data(&answer.body["message"]);
    assert_eq!(data["verification"], "Unsigned");
    assert_eq!(canonical(&data["caller"]), canonical(&payload));
}

#[tokio::test]
async fn without_activation_the_passport_is_not_read() {
    let srv = start().await;
    let payload = fixture("secure_passport.caller_context.json");
    let answer = post(&srv, "/", rpc(send_params(payload)), false).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.extensions, None);
    let data = reply_data(&answer.body["result"]["message"]);
    assert_eq!(data["active"], false);
    assert_eq!(data["caller"], Value::Null);
    assert_eq!(srv.agent.seen.lock().unwrap().clone(), [None]);
}

#[tokio::test]
async fn a_malformed_or_forged_passport_is_refused_before_the_agent_runs() {
    let srv = start().await;
    let mut extra = fixture("secure_passport.caller_context.json");
    extra["extra_field"] = json!("unsupported");
    let mut forged = fixture("secure_passport.caller_context.json");
    forged["signature"] = json!("FORGED");

    for (what, payload, needle) in [
        ("unknown field", extra, "extra_field"),
        ("no clientId", json!({"state": {}}), "clientId"),
        ("forged signature", forged, "unknown signer"),
    ] {
        let answer = post(&srv, "/", rpc(send_params(payload.clone())), true).await;
        let error = &answer.body["error"];
        assert_eq!(error["code"], -32602, "{what}: {}", answer.body);
        assert!(error.to_string().contains(needle), "{what}: {error}");

        let answer = post(&srv, "/message:send", send_params(payload), true).await;
        assert_eq!(answer.status, 400, "{what}: {}", answer.body);
    }
    assert!(srv.agent.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_client_attaches_its_passport_and_the_agent_reads_it() {
    let srv = start().await;
    let ctx = CallerContext::new("a2a://travel-orchestrator.com")
        .with_signature("MOCK-SIG-123456...")
        .with_state("user_preferred_currency", "GBP")
        .with_state("loyalty_tier", "Silver");
    let client = A2aClient::builder()
        .options(ClientOptions::default())
        .extension(SecurePassport::caller(ctx.clone()))
        .connect(srv.url.as_str())
        .await
        .unwrap();
    // The client reads the extension's params back typed from the card.
    let declared = client
        .card()
        .capabilities
        .extensions
        .into_iter()
        .find(|e| e.uri == URI)
        .unwrap();
    let params: SecurePassport =
        serde_json::from_value(serde_json::to_value(&declared.params).unwrap()).unwrap();
    assert_eq!(
        params.supported_state_keys,
        ["user_preferred_currency", "loyalty_tier"]
    );

    let sent = client
        .send_message("Convert 100 USD", SendOptions::default())
        .await
        .unwrap();
    assert_eq!(sent.activated_extensions(), [URI]);
    let SendResult::Message(reply) = sent.get_ref() else {
        panic!("expected a direct reply: {:?}", sent.get_ref())
    };
    let PartContent::Data(data) = &reply.parts[0].content else {
        panic!("expected a data part")
    };
    assert_eq!(data["verification"], "Verified");
    assert_eq!(data["caller"], serde_json::to_value(&ctx).unwrap());

    // A message that already carries a passport keeps it.
    let own = CallerContext::new("a2a://someone-else.com");
    let mut message = Message::user_text("mine");
    message.set_metadata_of::<SecurePassport>(&own);
    let sent = client
        .send_message(message, SendOptions::default())
        .await
        .unwrap();
    let SendResult::Message(reply) = sent.get_ref() else {
        panic!("expected a direct reply")
    };
    let PartContent::Data(data) = &reply.parts[0].content else {
        panic!("expected a data part")
    };
    assert_eq!(data["caller"]["clientId"], "a2a://someone-else.com");
    assert_eq!(data["verification"], "Unsigned");
}
