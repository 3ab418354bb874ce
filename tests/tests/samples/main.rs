//! The published sample extensions (a2aproject/a2a-samples: Secure Passport, Traceability)
//! against their specifications: the specs' JSON examples (tests/fixtures/extensions)
//! round-trip through the typed structs byte for byte (after canonical key ordering), and an
//! agent running each extension answers clients that activate it, over both bindings and with
//! the crate's client. One test binary, one module per extension; what they share is here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod secure_passport;
mod traceability;

use a2a_runtime::core::AgentExecutor;
use a2a_runtime::extension::Extension;
use a2a_runtime::samples::secure_passport::{CallerContext, SecurePassport};
use a2a_runtime::samples::traceability::{ResponseTrace, Traceability};
use a2a_runtime::server::A2aServer;
use a2a_runtime::test::{Answer, Binding, TestServer, agent_card};
use a2a_runtime::types::{AgentExtension, Message};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A fixture of `tests/fixtures/extensions`.
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
fn round_trip<T: Serialize + DeserializeOwned>(json: &Value) -> T {
    let typed: T = serde_json::from_value(json.clone()).unwrap();
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(canonical(&back), canonical(json));
    typed
}

/// `executor` with `extension` (and no linked extension) behind a card named `name`.
async fn serve(
    name: &str,
    description: &str,
    executor: impl AgentExecutor,
    extension: impl Extension,
) -> TestServer {
    let mut card = agent_card(name);
    card.description = description.into();
    TestServer::start(
        A2aServer::builder()
            .card(card)
            .executor(executor)
            .extension(extension)
            .linked_extensions(false),
    )
    .await
}

/// `op` on `binding`, activating the extension `activate` when given.
async fn call(
    server: &TestServer,
    binding: Binding,
    op: &str,
    params: Value,
    activate: Option<&str>,
) -> Answer {
    let request = server.request(binding, op, params);
    match activate {
        Some(uri) => request.header("A2A-Extensions", uri),
        None => request,
    }
    .send()
    .await
}

#[test]
fn the_uris_metadata_keys_and_declarations_are_the_specs() {
    let passport = "https://github.com/a2aproject/a2a-samples/tree/main/samples/python/extensions/secure-passport";
    let trace = "https://github.com/a2aproject/a2a-samples/extensions/traceability/v1";
    // (extension, URI, metadata key, its declaration without configuration)
    let cases = [
        (
            "Secure Passport",
            SecurePassport::URI,
            SecurePassport::METADATA_KEY,
            SecurePassport::default().declaration(),
            (passport, passport),
        ),
        (
            "Traceability",
            Traceability::URI,
            Traceability::METADATA_KEY,
            Traceability::new().declaration(),
            (
                trace,
                "github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability",
            ),
        ),
    ];
    for (name, uri, key, declared, (spec_uri, spec_key)) in cases {
        assert_eq!((uri, key), (spec_uri, spec_key), "{name}");
        assert!(!declared.required, "{name}: optional");
        assert_eq!(declared.uri, spec_uri, "{name}");
        // No params without configuration: empty, as the reference implementations declare.
        let declared = serde_json::to_value(declared).unwrap();
        assert!(
            declared
                .get("params")
                .is_none_or(|p| p == &serde_json::json!({})),
            "{name}: {declared}"
        );
    }
}

#[test]
fn every_spec_example_round_trips_through_its_typed_struct() {
    fn whole(v: &Value) -> &Value {
        v
    }
    fn params(v: &Value) -> &Value {
        &v["params"]
    }
    fn passport_of_request(v: &Value) -> &Value {
        &v["params"]["message"]["metadata"][SecurePassport::METADATA_KEY]
    }
    fn check<T: Serialize + DeserializeOwned>(json: &Value) {
        round_trip::<T>(json);
    }
    // (fixture, the part of it, its type)
    type Case = (&'static str, fn(&Value) -> &Value, fn(&Value));
    let cases: [Case; 6] = [
        (
            "secure_passport.caller_context.json",
            whole,
            check::<CallerContext>,
        ),
        (
            "secure_passport.message_request.json",
            passport_of_request,
            check::<CallerContext>,
        ),
        (
            "secure_passport.agent_extension.json",
            whole,
            check::<AgentExtension>,
        ),
        (
            "secure_passport.agent_extension.json",
            params,
            check::<SecurePassport>,
        ),
        (
            "traceability.response_trace.json",
            whole,
            check::<ResponseTrace>,
        ),
        ("traceability.message.json", whole, check::<Message>),
    ];
    for (name, part, check) in cases {
        let json = fixture(name);
        let part = part(&json);
        assert!(!part.is_null(), "{name}");
        check(part);
    }
}
