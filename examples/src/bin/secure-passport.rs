//! The Secure Passport extension (a2a-samples `extensions/secure-passport/v1`), in one process:
//! a travel agent that declares the `state` keys it understands and verifies signatures, and
//! clients that attach their passport — a signed one, an unsigned one, a forged one (refused)
//! and none. Prints what the agent saw each time; exits 0 when everything behaved as shown.
//!
//! `cargo run -p a2a-examples --bin secure-passport`

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientError, SendOptions, SendResult};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::Extension;
use a2a_runtime::samples::secure_passport::{CallerContext, SecurePassport, Verification};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::{AgentCard, Message};

/// Quotes prices in the caller's currency when its passport is verified.
struct Travel;

impl AgentExecutor for Travel {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let passport = ctx.extension::<SecurePassport>().unwrap_or_default();
        let reply = match &passport.caller {
            None => "no passport: prices in USD, standard fares".to_owned(),
            Some(caller) if passport.verification == Verification::Verified => format!(
                "verified {}: prices in {}, {} fares (session {})",
                caller.client_id,
                caller.state_str("user_preferred_currency").unwrap_or("USD"),
                caller.state_str("loyalty_tier").unwrap_or("standard"),
                caller.session_id.as_deref().unwrap_or("-"),
            ),
            Some(caller) => format!(
                "{:?} passport from {}: prices in USD, standard fares",
                passport.verification, caller.client_id
            ),
        };
        events.reply(Message::agent_text(reply)).await
    }
}

/// Stands in for a real signature check (e.g. against the caller's published key).
fn verify(ctx: &CallerContext) -> Result<(), String> {
    match ctx.signature.as_deref() {
        Some("MOCK-SIG-123456...") => Ok(()),
        _ => Err(format!(
            "no trusted key signed the passport of {}",
            ctx.client_id
        )),
    }
}

async fn ask(url: &str, passport: Option<CallerContext>) -> Result<String, ClientError> {
    let mut builder = A2aClient::builder();
    if let Some(p) = passport {
        builder = builder.extension(SecurePassport::caller(p));
    }
    let client = builder.connect(url).await?;
    let sent = client
        .send_message("Book a flight for me.", SendOptions::default())
        .await?;
    let activated = sent.activated_extensions().join(", ");
    match sent.into_inner() {
        SendResult::Message(m) => Ok(format!(
            "{} [A2A-Extensions: {}]",
            m.text(),
            if activated.is_empty() {
                "-"
            } else {
                &activated
            }
        )),
        SendResult::Task(t) => Ok(format!("unexpected task {}", t.id)),
    }
}

/// What `--help` prints.
const USAGE: &str = "\
usage: secure-passport

The Secure Passport extension in one process: a travel agent on 127.0.0.1 and clients with a
signed, an unsigned, a forged and no passport; exits 0 when everything behaved as shown.

  -h, --help       print this and exit
  -V, --version    print the version and exit
";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    a2a_examples::answer_help_or_version("secure-passport", USAGE);
    let card = AgentCard {
        name: "Travel Agent".into(),
        description: "Books flights; personalizes with the caller's Secure Passport".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    };
    let extension =
        SecurePassport::new(["user_preferred_currency", "loyalty_tier"]).verify_with(verify);
    let server = A2aServer::builder()
        .card(card)
        .executor(Travel)
        .extension(extension)
        .build()?
        .start("127.0.0.1:0")
        .await?;
    let url = server.url();

    let client = A2aClient::new(url.as_str(), Default::default()).await?;
    for declared in client.card().capabilities.extensions {
        println!(
            "declared: {} params {}",
            declared.uri,
            serde_json::to_string(&declared.params)?
        );
    }

    let signed = CallerContext::new("a2a://orchestrator-agent.com")
        .with_session_id("travel-session-xyz")
        .with_signature("MOCK-SIG-123456...")
        .with_state("user_preferred_currency", "GBP")
        .with_state("loyalty_tier", "Gold");
    println!("passport on the wire: {}", serde_json::to_string(&signed)?);
    println!("signed: {}", ask(&url, Some(signed)).await?);

    let unsigned = CallerContext::new("a2a://ecommerce-front.com")
        .with_state("product_sku", "Nikon-Z-50mm-f1.8");
    println!("unsigned: {}", ask(&url, Some(unsigned)).await?);

    let forged = CallerContext::new("a2a://mallory.example")
        .with_signature("FORGED")
        .with_state("loyalty_tier", "Platinum");
    match ask(&url, Some(forged)).await {
        Err(e) => println!("forged: refused {} {e}", e.to_a2a_error().code()),
        Ok(answer) => return Err(format!("a forged passport was accepted: {answer}").into()),
    }

    println!("none: {}", ask(&url, None).await?);
    assert_eq!(SecurePassport::URI, SecurePassport::METADATA_KEY);
    server.stop().await;
    println!("ok");
    Ok(())
}
