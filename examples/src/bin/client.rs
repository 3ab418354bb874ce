//! Talks to an A2A agent (by default the demo agent on http://127.0.0.1:8080): send, stream with
//! output as it arrives, get, cancel, list. `--url URL` or `A2A_URL` to point it elsewhere;
//! `--binding rest` to prefer HTTP+JSON.

use a2a_runtime::client::{A2aClient, ClientError, ClientOptions, SendOptions, SendResult};
use a2a_runtime::types::{
    ListTasksRequest, ProtocolBinding, SendMessageConfiguration, StreamResponse,
};
use futures::StreamExt as _;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// What `--help` prints.
const USAGE: &str = "\
usage: client [--url URL] [--binding rest]

Talks to an A2A agent: send, stream, get, cancel, list, printing what it gets.

  --url URL        the agent (A2A_URL; default http://127.0.0.1:8080)
  --binding rest   prefer HTTP+JSON (default JSON-RPC)
  -h, --help       print this and exit
  -V, --version    print the version and exit
";

#[tokio::main]
async fn main() -> Result<(), ClientError> {
    a2a_examples::answer_help_or_version("client", USAGE);
    let url = arg("--url")
        .or_else(|| std::env::var("A2A_URL").ok())
        .unwrap_or_else(|| "http://127.0.0.1:8080".into());
    let preferred_binding = match arg("--binding").as_deref() {
        Some("rest") => Some(ProtocolBinding::HttpJson),
        _ => Some(ProtocolBinding::JsonRpc),
    };
    let client = A2aClient::discover(
        &url,
        ClientOptions {
            preferred_binding,
            ..ClientOptions::default()
        },
    )
    .await?;
    let card = client.card();
    println!(
        "agent: {} ({}) via {} at {}",
        card.name,
        card.version,
        client.interface().protocol_binding,
        client.interface().url
    );

    let sent = client.send_message("hello", SendOptions::default()).await?;
    match sent.get_ref() {
        SendResult::Task(task) => {
            let text: Vec<String> = task
                .artifacts
                .iter()
                .flat_map(|a| {
                    a.parts
                        .iter()
                        .filter_map(|p| p.as_text().map(str::to_owned))
                })
                .collect();
            println!(
                "send: task {} {} -> {}",
                task.id,
                task.status.state,
                text.join("")
            );
        }
        SendResult::Message(m) => println!("send: message -> {}", m.text()),
    }
    println!(
        "server protocol version: {}",
        sent.protocol_version().unwrap_or("?")
    );

    print!("stream:");
    let mut events = client
        .stream_message("stream one two three", SendOptions::default())
        .await?
        .into_inner();
    while let Some(event) = events.next().await {
        match event? {
            StreamResponse::Task(t) => print!(" [task {}]", t.status.state),
            StreamResponse::StatusUpdate(u) => print!(" [{}]", u.status.state),
            StreamResponse::ArtifactUpdate(a) => {
                let text: String = a
                    .artifact
                    .parts
                    .iter()
                    .filter_map(|p| p.as_text())
                    .collect();
                print!(" {}", text.trim());
            }
            StreamResponse::Message(m) => print!(" message: {}", m.text()),
        }
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
    }
    println!();

    if let SendResult::Task(task) = sent.get_ref() {
        let got = client
            .get_task(task.id.as_str(), Some(1))
            .await?
            .into_inner();
        println!(
            "get: task {} is {} ({} history message(s))",
            got.id,
            got.status.state,
            got.history.len()
        );
    }

    let config = SendMessageConfiguration {
        return_immediately: true,
        ..SendMessageConfiguration::default()
    };
    let waiting = client
        .send_message(
            "wait",
            SendOptions {
                configuration: Some(config),
                ..SendOptions::default()
            },
        )
        .await?;
    if let SendResult::Task(task) = waiting.get_ref() {
        println!("started: task {} is {}", task.id, task.status.state);
        let canceled = client.cancel_task(task.id.as_str()).await?.into_inner();
        println!("cancel: task {} is {}", canceled.id, canceled.status.state);
    }

    let page = client
        .list_tasks(ListTasksRequest {
            page_size: Some(10),
            ..ListTasksRequest::default()
        })
        .await?
        .into_inner();
    println!("list: {} task(s) in total, newest first:", page.total_size);
    for t in &page.tasks {
        println!("  {} {}", t.id, t.status.state);
    }
    Ok(())
}
