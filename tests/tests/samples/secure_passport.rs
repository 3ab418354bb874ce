//! Secure Passport (a2aproject/a2a-samples `extensions/secure-passport/v1/spec.md`): the spec's
//! examples, and an agent running the extension answering raw JSON-RPC and REST with the spec's
//! payload verbatim, and the crate's client attaching the passport itself.

use std::sync::{Arc, Mutex};

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientOptions, SendOptions, SendResult};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Extension as _, MetadataExt};
use a2a_runtime::samples::secure_passport::{
    CallerContext, Passport, SecurePassport, Verification,
};
use a2a_runtime::test::{Answer, Binding, TestServer};
use a2a_runtime::types::{AgentExtension, Message, Part, PartContent};
use serde_json::{Value, json};

use super::{call, canonical, fixture, serve};

const URI: &str =
    "https://github.com/a2aproject/a2a-samples/tree/main/samples/python/extensions/secure-passport";

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

#[test]
fn the_caller_context_example_round_trips() {
    let json = fixture("secure_passport.caller_context.json");
    let ctx: CallerContext = serde_json::from_value(json.clone()).unwrap();
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
    let ctx: CallerContext = serde_json::from_value(payload.clone()).unwrap();
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
    let declared: AgentExtension = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(declared.uri, URI);
    let params: SecurePassport = serde_json::from_value(json["params"].clone()).unwrap();
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

/// The agent with the extension (verifying the spec's mock signature), and the agent itself.
async fn start() -> (TestServer, Travel) {
    let agent = Travel::default();
    let passport = SecurePassport::new(["user_preferred_currency", "loyalty_tier"]).verify_with(
        |c: &CallerContext| match c.signature.as_deref() {
            Some("MOCK-SIG-123456...") => Ok(()),
            _ => Err("unknown signer".to_owned()),
        },
    );
    let description = "Books trips with the caller's Secure Passport";
    let server = serve("Travel", description, agent.clone(), passport).await;
    (server, agent)
}

/// SendMessage with `params` on `binding`, activating the extension or not.
async fn send(server: &TestServer, binding: Binding, params: Value, activate: bool) -> Answer {
    call(
        server,
        binding,
        "SendMessage",
        params,
        activate.then_some(URI),
    )
    .await
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

fn reply_data(message: &Value) -> Value {
    message["parts"][0]["data"].clone()
}

#[tokio::test]
async fn the_card_declares_the_extension_with_the_specs_params() {
    let (server, _) = start().await;
    let card = server.card().await;
    let declared = card
        .capabilities
        .extensions
        .iter()
        .find(|e| e.uri == URI)
        .expect("declared");
    let declared = serde_json::to_value(declared).unwrap();
    let spec = fixture("secure_passport.agent_extension.json");
    assert_eq!(canonical(&declared["params"]), canonical(&spec["params"]));
}

#[tokio::test]
async fn the_agent_sees_the_passport_typed_and_verified_on_both_bindings() {
    let signed = fixture("secure_passport.caller_context.json");
    let unsigned = json!({"clientId": "a2a://ecommerce-front.com", "state": {"product_sku": "Nikon-Z-50mm-f1.8"}});
    // (binding, the spec's payload or an unsigned one, what the agent's verifier makes of it)
    let cases = [
        (Binding::JsonRpc, signed.clone(), Verification::Verified),
        (Binding::Rest, signed, Verification::Verified),
        (Binding::JsonRpc, unsigned.clone(), Verification::Unsigned),
        (Binding::Rest, unsigned, Verification::Unsigned),
    ];
    for (binding, payload, verification) in cases {
        let (server, agent) = start().await;
        let answer = send(&server, binding, send_params(payload.clone()), true).await;
        assert_eq!(answer.status, 200, "{binding:?}: {}", answer.text);
        assert_eq!(answer.header("a2a-extensions"), Some(URI), "{binding:?}");
        let message = &answer.result()["message"];
        let data = reply_data(message);
        assert_eq!(data["active"], true, "{binding:?}");
        assert_eq!(
            data["verification"],
            format!("{verification:?}"),
            "{binding:?}"
        );
        assert_eq!(
            canonical(&data["caller"]),
            canonical(&payload),
            "{binding:?}"
        );
        // The extension adds nothing to the response: the spec defines no response data.
        assert!(message.get("metadata").is_none(), "{binding:?}: {message}");

        let seen = agent.seen.lock().unwrap().clone();
        let expected: CallerContext = serde_json::from_value(payload).unwrap();
        assert_eq!(
            seen,
            [Some(Passport {
                caller: Some(expected),
                verification,
            })],
            "{binding:?}"
        );
    }
}

#[tokio::test]
async fn without_activation_the_passport_is_not_read() {
    let (server, agent) = start().await;
    let payload = fixture("secure_passport.caller_context.json");
    let answer = send(&server, Binding::JsonRpc, send_params(payload), false).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.header("a2a-extensions"), None);
    let data = reply_data(&answer.result()["message"]);
    assert_eq!(data["active"], false);
    assert_eq!(data["caller"], Value::Null);
    assert_eq!(agent.seen.lock().unwrap().clone(), [None]);
}

#[tokio::test]
async fn a_malformed_or_forged_passport_is_refused_before_the_agent_runs() {
    let (server, agent) = start().await;
    let mut extra = fixture("secure_passport.caller_context.json");
    extra["extra_field"] = json!("unsupported");
    let mut forged = fixture("secure_passport.caller_context.json");
    forged["signature"] = json!("FORGED");

    for (what, payload, needle) in [
        ("unknown field", extra, "extra_field"),
        ("no clientId", json!({"state": {}}), "clientId"),
        ("forged signature", forged, "unknown signer"),
    ] {
        let answer = send(
            &server,
            Binding::JsonRpc,
            send_params(payload.clone()),
            true,
        )
        .await;
        let error = &answer.body()["error"];
        assert_eq!(error["code"], -32602, "{what}: {}", answer.text);
        assert!(error.to_string().contains(needle), "{what}: {error}");

        let answer = send(&server, Binding::Rest, send_params(payload), true).await;
        assert_eq!(answer.status, 400, "{what}: {}", answer.text);
    }
    assert!(agent.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_client_attaches_its_passport_and_the_agent_reads_it() {
    let (server, _) = start().await;
    let ctx = CallerContext::new("a2a://travel-orchestrator.com")
        .with_signature("MOCK-SIG-123456...")
        .with_state("user_preferred_currency", "GBP")
        .with_state("loyalty_tier", "Silver");
    let client = A2aClient::builder()
        .options(ClientOptions::default())
        .extension(SecurePassport::caller(ctx.clone()))
        .connect(server.url())
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
