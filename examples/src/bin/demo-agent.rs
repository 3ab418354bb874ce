//! The README's run command: the demo agent (echo + streaming + multi-turn) with an in-memory
//! store on http://127.0.0.1:8080 (`--addr HOST:PORT` or `A2A_ADDR` to change it).

use a2a_examples::{DemoAgent, Locale, demo_card};
use a2a_runtime::extension::Timestamp;
use a2a_runtime::server::A2aServer;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args: Vec<String> = std::env::args().collect();
    let addr = args
        .iter()
        .position(|a| a == "--addr")
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| std::env::var("A2A_ADDR").ok())
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let server = A2aServer::builder()
        .card(demo_card())
        .executor(DemoAgent)
        .extension(Timestamp::default())
        .extension(Locale::default())
        .build()
        .map_err(std::io::Error::other)?;
    let running = server.start(addr.as_str()).await?;
    let url = running.url();
    println!("A2A demo agent serving on {url}  (agent card: {url}/.well-known/agent-card.json)");
    println!();
    println!("Send a message (JSON-RPC):");
    println!(
        r#"  curl -s {url}/ -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d '{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m1","role":"ROLE_USER","parts":[{{"text":"hello"}}]}}}}}}'"#
    );
    println!("Stream a reply (HTTP+JSON, server-sent events):");
    println!(
        r#"  curl -sN {url}/message:stream -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -d '{{"message":{{"messageId":"m2","role":"ROLE_USER","parts":[{{"text":"stream one two three"}}]}}}}'"#
    );
    println!(
        "Activate the Timestamp and Locale extensions (see the A2A-Extensions response header):"
    );
    println!(
        r#"  curl -si {url}/message:send -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -H 'A2A-Extensions: https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1, https://example.com/ext/locale/v1' -d '{{"message":{{"messageId":"m3","role":"ROLE_USER","parts":[{{"text":"hello"}}],"metadata":{{"https://example.com/ext/locale/v1":"fr"}}}}}}'"#
    );
    println!("Press Ctrl-C to stop.");
    running.wait().await
}
