//! Extensions end to end, in one process: an agent with the built-in Timestamp extension, the
//! Locale profile extension, and a required Contract extension; then a client (plain HTTP) that
//! shows a refused request (-32008), a successful one, the echoed `A2A-Extensions` header and
//! the typed metadata. Exits 0 when everything behaved as shown.
//!
//! `cargo run -p a2a-examples --bin extensions`

use a2a_examples::Locale;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{
    Extension, ExtensionHooks, MetadataExt, RequestContext, TimestampExtension,
};
use a2a_runtime::protocol::A2aRequest;
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::{AgentCard, Artifact, Message, Part, Task};
use a2a_runtime::{A2aError, a2a_extension};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Clients must accept the agent's terms: every message names, in its metadata, the version of
/// the terms it accepts.
#[a2a_extension(
    uri = "https://example.com/ext/contract/v1",
    required = true,
    metadata = String
)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Contract {
    /// The version of the terms in force.
    terms_version: String,
    /// Where to read them.
    terms_url: String,
}

impl ExtensionHooks for Contract {
    type Activation = ();

    fn handle_request(
        &self,
        request: &mut A2aRequest,
        _: &mut (),
        _: &RequestContext,
    ) -> Result<(), A2aError> {
        let Some(message) = request.message() else {
            return Ok(());
        };
        let field = format!("message.metadata[{}]", Self::METADATA_KEY);
        match message.metadata_of::<Self>() {
            Ok(Some(v)) if v == self.terms_version => Ok(()),
            Ok(Some(v)) => Err(A2aError::invalid_field(
                field,
                format!(
                    "terms {v:?} are not in force; accept {:?} ({})",
                    self.terms_version, self.terms_url
                ),
            )),
            Ok(None) => Err(A2aError::invalid_field(
                field,
                format!(
                    "accept the terms {:?} ({})",
                    self.terms_version, self.terms_url
                ),
            )),
            Err(e) => Err(A2aError::invalid_field(field, e.to_string())),
        }
    }
}

/// Greets in the locale the client asked for (read from the Locale extension's activation).
struct Greeter;

impl AgentExecutor for Greeter {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let locale = ctx.extension::<Locale>().flatten();
        let greeting = match locale.as_deref() {
            Some("fr") => "bonjour",
            Some("nb") => "hei",
            _ => "hello",
        };
        events
            .artifact(
                Artifact::new([Part::text(format!("{greeting}, {}", ctx.text()))])
                    .with_name("greeting"),
            )
            .await?;
        events.complete_with("done").await
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "extensions example".into(),
        description: "Greets in your language, with timestamps, once you accept the terms.".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..AgentCard::default()
    }
}

fn fail(what: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(what.to_string())
}

fn check(ok: bool, what: &str) -> std::io::Result<()> {
    if ok { Ok(()) } else { Err(fail(what)) }
}

/// What `--help` prints.
const USAGE: &str = "\
usage: extensions

Extensions end to end in one process (Timestamp, Locale, a required Contract): starts an agent
on 127.0.0.1, calls it, prints what happened; exits 0 when everything behaved as shown.

  -h, --help       print this and exit
  -V, --version    print the version and exit
";

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    a2a_examples::answer_help_or_version("extensions", USAGE);
    let contract = Contract {
        terms_version: "2026-01".into(),
        terms_url: "https://example.com/terms/2026-01".into(),
    };
    let server = A2aServer::builder()
        .card(card())
        .executor(Greeter)
        .extension(TimestampExtension::default())
        .extension(Locale::default())
        .extension(contract)
        .build()
        .map_err(fail)?;
    let running = server.start("127.0.0.1:0").await?;
    let url = running.url();
    println!("server: {url}");
    let result = client(&url).await;
    running.stop().await;
    result?;
    println!("ok");
    Ok(())
}

async fn client(url: &str) -> std::io::Result<()> {
    let http = reqwest::Client::new();

    // The card declares the three extensions.
    let card: AgentCard = http
        .get(format!("{url}/.well-known/agent-card.json"))
        .send()
        .await
        .map_err(fail)?
        .json()
        .await
        .map_err(fail)?;
    for e in &card.capabilities.extensions {
        println!("declared: {} (required: {})", e.uri, e.required);
    }
    let declared = card
        .capabilities
        .extensions
        .iter()
        .find(|e| e.uri == Contract::URI)
        .ok_or_else(|| fail("the card does not declare the contract"))?;
    // The client reads the contract's params typed.
    let terms: Contract =
        serde_json::from_value(serde_json::to_value(&declared.params).map_err(fail)?)
            .map_err(fail)?;
    println!(
        "contract params: terms {} at {}",
        terms.terms_version, terms.terms_url
    );

    let send = |extensions: Option<String>, message: Message| {
        let mut req = http
            .post(format!("{url}/"))
            .header("A2A-Version", "1.0")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}));
        if let Some(e) = extensions {
            req = req.header("A2A-Extensions", e);
        }
        req.send()
    };

    // 1. Without the required extension: refused with ExtensionSupportRequired.
    let resp = send(None, Message::user_text("world"))
        .await
        .map_err(fail)?;
    let body: Value = resp.json().await.map_err(fail)?;
    let code = body["error"]["code"].as_i64().unwrap_or_default();
    let reason = body["error"]["data"][0]["reason"]
        .as_str()
        .unwrap_or_default();
    println!(
        "refused: {code} {reason}: {}",
        body["error"]["message"].as_str().unwrap_or_default()
    );
    check(
        code == -32008 && reason == "EXTENSION_SUPPORT_REQUIRED",
        "expected -32008",
    )?;

    // 2. With all three, the terms accepted and the locale asked for.
    let mut message = Message::user_text("world");
    message.set_metadata_of::<Contract>(&terms.terms_version);
    message.set_metadata_of::<Locale>(&"fr".to_owned());
    let requested = [TimestampExtension::URI, Locale::URI, Contract::URI].join(", ");
    let resp = send(Some(requested), message).await.map_err(fail)?;
    let echoed = resp
        .headers()
        .get("a2a-extensions")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    println!("echoed A2A-Extensions: {echoed}");
    let body: Value = resp.json().await.map_err(fail)?;
    let task: Task = serde_json::from_value(body["result"]["task"].clone())
        .map_err(|e| fail(format!("{e}: {body}")))?;
    let artifact = task.artifacts.first().ok_or_else(|| fail("no artifact"))?;
    let text = artifact
        .parts
        .first()
        .and_then(Part::as_text)
        .unwrap_or_default();
    println!("artifact: {text}");
    // Typed metadata: the timestamp the Timestamp extension added, the locale Locale echoed.
    let stamped = artifact.metadata_of::<TimestampExtension>().map_err(fail)?;
    println!(
        "artifact timestamp ({}): {}",
        TimestampExtension::METADATA_KEY,
        stamped.as_deref().unwrap_or("none")
    );
    let locale = task.metadata_of::<Locale>().map_err(fail)?;
    println!("task locale: {}", locale.as_deref().unwrap_or("none"));
    // The task's own times, under the Timestamp URI: when the request was received, when the
    // task completed.
    let times = task
        .metadata
        .get(TimestampExtension::URI)
        .cloned()
        .unwrap_or_default();
    let time = |k: &str| {
        times
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("none")
            .to_owned()
    };
    println!(
        "task received_at: {}, completed_at: {}",
        time("received_at"),
        time("completed_at")
    );
    check(
        time("received_at").ends_with('Z') && time("completed_at").ends_with('Z'),
        "task times recorded",
    )?;
    check(
        echoed.contains(TimestampExtension::URI)
            && echoed.contains(Locale::URI)
            && echoed.contains(Contract::URI),
        "every extension echoed",
    )?;
    check(text == "bonjour, world", "greeted in French")?;
    check(
        stamped.is_some_and(|t| t.ends_with('Z')),
        "artifact stamped",
    )?;
    check(locale.as_deref() == Some("fr"), "locale on the task")?;

    // 3. The profile extension validates its data: an unsupported locale is InvalidParams.
    let mut message = Message::user_text("world");
    message.set_metadata_of::<Contract>(&terms.terms_version);
    message.set_metadata_of::<Locale>(&"xx".to_owned());
    let requested = [Locale::URI, Contract::URI].join(", ");
    let body: Value = send(Some(requested), message)
        .await
        .map_err(fail)?
        .json()
        .await
        .map_err(fail)?;
    println!(
        "invalid locale: {} {}",
        body["error"]["code"],
        body["error"]["message"].as_str().unwrap_or_default()
    );
    check(body["error"]["code"] == -32602, "expected -32602")?;
    Ok(())
}
