//! Two agents in one server: what `demo-agent --two-agents` serves.
//!
//! - `echo` ([`EchoAgent`](crate::EchoAgent)) at `/agents/echo`,
//! - `greeter` ([`MultiTurnAgent`](crate::MultiTurnAgent)) at `/agents/greeter`,
//!
//! over one store, one HTTP listener and one gRPC listener (a request names its agent in its
//! `tenant` field), listed in the AI Catalog at `/.well-known/ai-catalog.json`.

use a2a_runtime::server::{A2aServer, MultiAgentServer, RunningServer};
use a2a_runtime::store::Stores;
use a2a_runtime::types::{AgentCard, AgentSkill};

/// The card of an example agent.
fn card(name: &str, description: &str, skill: AgentSkill) -> AgentCard {
    AgentCard {
        name: name.into(),
        description: description.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        skills: vec![skill],
        ..AgentCard::default()
    }
}

/// Starts the two agents on `addr` (and gRPC on `grpc_addr`) over `stores`, and prints where
/// they are.
pub async fn start(addr: &str, grpc_addr: &str, stores: Stores) -> std::io::Result<RunningServer> {
    let echo = card(
        "Echo",
        "Answers every message with an artifact `echo: <text>`.",
        AgentSkill {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Repeats the message.".into(),
            tags: vec!["echo".into()],
            examples: vec!["hello".into()],
            ..AgentSkill::default()
        },
    );
    let greeter = card(
        "Greeter",
        "Asks for your name (input-required), then greets you.",
        AgentSkill {
            id: "greet".into(),
            name: "Greet".into(),
            description: "A two-turn conversation.".into(),
            tags: vec!["multi-turn".into()],
            examples: vec!["hi".into()],
            ..AgentSkill::default()
        },
    );
    let builder = MultiAgentServer::builder()
        .agent(
            "echo",
            A2aServer::builder().card(echo).executor(crate::EchoAgent),
        )
        .agent(
            "greeter",
            A2aServer::builder()
                .card(greeter)
                .executor(crate::MultiTurnAgent),
        )
        .task_store(stores.tasks)
        .push_store(stores.push_configs);
    #[cfg(feature = "grpc")]
    let builder = builder.grpc_addr(grpc_addr);
    #[cfg(not(feature = "grpc"))]
    let _ = grpc_addr;
    let server = builder.build().map_err(std::io::Error::other)?;
    let running = server.start(addr).await?;
    let url = running.url();
    println!("Two A2A agents serving on {url}  (their catalog: {url}/.well-known/ai-catalog.json)");
    for name in ["echo", "greeter"] {
        println!(
            "  {name}: {url}/agents/{name}  (card: {url}/agents/{name}/.well-known/agent-card.json)"
        );
    }
    #[cfg(feature = "grpc")]
    if let Some(grpc) = running.grpc_addr() {
        println!(
            "gRPC on {grpc}: set the request's tenant to the agent's name (\"echo\", \"greeter\")."
        );
    }
    println!("Send a message to echo (JSON-RPC):");
    println!(
        r#"  curl -s {url}/agents/echo -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d '{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m1","role":"ROLE_USER","parts":[{{"text":"hello"}}]}}}}}}'"#
    );
    println!("Press Ctrl-C to stop.");
    Ok(running)
}
