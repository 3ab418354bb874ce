//! The client's side: the agents and servers the `client_*` and `interop_*` tests talk to (the
//! demo agent, push on, an extended card), a client for them on either binding, and a tiny raw
//! HTTP server that answers canned bytes (for the bad-server tests). Nothing here sleeps: every
//! wait is on an answer, bounded by a timeout that only turns a hang into a failure.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_examples::DemoAgent;
use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientError, ClientOptions, ClientStream};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::test::within;
use a2a_runtime::types::{
    AgentCard, Artifact, Message, Part, ProtocolBinding, StreamResponse, TaskState,
};
use futures::StreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Both bindings the client speaks.
pub const BOTH: [ProtocolBinding; 2] = [ProtocolBinding::JsonRpc, ProtocolBinding::HttpJson];

/// The demo agent, plus a direct-message reply for texts starting with `direct` (the demo
/// agent always works on a task).
#[derive(Clone, Copy, Debug, Default)]
pub struct TestAgent;

impl AgentExecutor for TestAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = ctx.text();
        if ctx.task.is_none() && text.starts_with("direct") {
            return events
                .reply(Message::agent_text(format!("reply: {text}")))
                .await;
        }
        DemoAgent.execute(ctx, events).await
    }
}

/// The agent the official SDK client scripts expect (tests/interop: `stream` gives three
/// appended chunks, a follow-up on an INPUT_REQUIRED task is echoed): the demo agent, except
/// for those two conventions, where the demo agent streams the words of the text and greets.
#[derive(Clone, Copy, Debug, Default)]
pub struct InteropAgent;

impl AgentExecutor for InteropAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let follow_up = ctx
            .task
            .as_ref()
            .is_some_and(|t| t.status.state == TaskState::InputRequired);
        if follow_up {
            events
                .artifact(
                    Artifact::new([Part::text(format!("echo: {}", ctx.text()))]).with_name("echo"),
                )
                .await?;
            return events.complete().await;
        }
        if ctx.text().trim() == "stream" {
            events.working().await?;
            for i in 1..=3 {
                events
                    .artifact_chunk("stream", [Part::text(format!("chunk {i}"))], i > 1, i == 3)
                    .await?;
            }
            return events.complete().await;
        }
        DemoAgent.execute(ctx, events).await
    }
}

/// A minimal valid card with push notifications on.
pub fn card(name: &str) -> AgentCard {
    let mut card = AgentCard {
        name: name.into(),
        description: format!("{name} (client test agent)"),
        version: "1.0.0".into(),
        ..AgentCard::default()
    };
    card.capabilities.push_notifications = Some(true);
    card
}

/// The extended card our test servers serve.
pub fn extended_card() -> AgentCard {
    AgentCard {
        name: "client test agent (extended)".into(),
        description: "The card for authenticated callers".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    }
}

/// The bearer token of the client tests' caller ([`options`] sends it).
pub const TOKEN: &str = "client-tests-token";

/// A server builder: the test agent, push on, an extended card (for the caller with
/// [`TOKEN`]), no linked extensions (every extension is added explicitly), one worker.
pub fn builder(name: &str) -> A2aServerBuilder {
    A2aServer::builder()
        .card(card(name))
        .executor(TestAgent)
        .authenticator(a2a_runtime::auth::StaticTokens::bearer().principal(
            a2a_runtime::protocol::Principal::authenticated("client-tests").with_tenants(["acme"]),
            TOKEN,
        ))
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .extended_card(extended_card())
        .linked_extensions(false)
        .workers(1)
}

/// The server the official SDK clients talk to: [`InteropAgent`], push on, Timestamp enabled, no
/// extended card (the JS SDK replaces the public card with the extended one when the card
/// declares it, and ours would lack the interfaces, which are only known once bound).
pub fn interop_builder() -> A2aServerBuilder {
    A2aServer::builder()
        .card(card("a2a-runtime interop agent"))
        .executor(InteropAgent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .extension(a2a_runtime::extension::TimestampExtension::default())
        .linked_extensions(false)
        .workers(1)
}

/// Client options preferring `binding`.
pub fn options(binding: &ProtocolBinding) -> ClientOptions {
    ClientOptions {
        preferred_binding: Some(binding.clone()),
        timeout: Duration::from_secs(20),
        auth: Some(a2a_runtime::client::Auth::Bearer(TOKEN.into())),
        ..ClientOptions::default()
    }
}

/// A client discovered from `url`, on `binding` (asserting the card offered it).
pub async fn client(url: &str, binding: &ProtocolBinding) -> A2aClient {
    let c = within("discover", A2aClient::discover(url, options(binding)))
        .await
        .expect("discover the agent");
    assert_eq!(&c.interface().protocol_binding, binding, "binding in use");
    c
}

/// Collects a stream to its end (bounded).
pub async fn collect(stream: ClientStream) -> Vec<Result<StreamResponse, ClientError>> {
    within("the stream to end", stream.collect::<Vec<_>>()).await
}

/// The agent's error behind a client error (fails the test on any other kind: a local
/// refusal, a transport error, an invalid answer).
pub fn agent_err(e: ClientError) -> A2aError {
    match e {
        ClientError::Agent(a) => a.error().clone(),
        other => panic!("expected the agent's error, got {other:?}"),
    }
}

/// The state an event carries (task snapshot or status update).
pub fn event_state(e: &StreamResponse) -> Option<TaskState> {
    match e {
        StreamResponse::Task(t) => Some(t.status.state),
        StreamResponse::StatusUpdate(u) => Some(u.status.state),
        _ => None,
    }
}

/// A short name of an event, for messages.
pub fn describe(events: &[StreamResponse]) -> String {
    events
        .iter()
        .map(|e| match e {
            StreamResponse::Task(t) => format!("task({})", t.status.state),
            StreamResponse::StatusUpdate(u) => format!("status({})", u.status.state),
            StreamResponse::ArtifactUpdate(a) => format!(
                "artifact({}{})",
                a.artifact
                    .parts
                    .iter()
                    .filter_map(|p| p.as_text())
                    .collect::<String>(),
                if a.append { ", append" } else { "" }
            ),
            StreamResponse::Message(m) => format!("message({})", m.text()),
        })
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// The concatenated text parts of the artifacts of a task.
pub fn artifact_text(artifacts: &[Artifact]) -> Vec<String> {
    artifacts
        .iter()
        .map(|a| a.parts.iter().filter_map(|p| p.as_text()).collect())
        .collect()
}

// ----------------------------------------------------------------------------------------------
// Raw servers
// ----------------------------------------------------------------------------------------------

/// What a raw server does with each connection.
#[derive(Clone, Debug)]
pub enum Answer {
    /// Writes these bytes, then closes the connection.
    Bytes(Vec<u8>),
    /// Writes these bytes, then keeps the connection open without a word (until the test ends).
    BytesThenSilence(Vec<u8>),
    /// Reads the request and never answers.
    Silence,
}

/// A raw HTTP/1.1 server on `127.0.0.1:0` that answers every connection with the next canned
/// [`Answer`] (the last one repeats), and records the request heads it read.
#[derive(Debug)]
pub struct RawServer {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// The request heads (request line and headers) and bodies, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RawServer {
    /// Starts a raw server answering with `answers` in turn.
    pub async fn start(answers: Vec<Answer>) -> Self {
        assert!(!answers.is_empty());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = requests.clone();
        let task = tokio::spawn(async move {
            let mut n = 0usize;
            let mut held = Vec::new();
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let answer = answers[n.min(answers.len() - 1)].clone();
                n += 1;
                let log = log.clone();
                held.push(tokio::spawn(async move {
                    let request = read_request(&mut sock).await;
                    log.lock().unwrap().push(request);
                    match answer {
                        Answer::Bytes(b) => {
                            let _ = sock.write_all(&b).await;
                            let _ = sock.flush().await;
                            let _ = sock.shutdown().await;
                        }
                        Answer::BytesThenSilence(b) => {
                            let _ = sock.write_all(&b).await;
                            let _ = sock.flush().await;
                            std::future::pending::<()>().await;
                        }
                        Answer::Silence => std::future::pending::<()>().await,
                    }
                }));
            }
        });
        Self {
            url,
            requests,
            task,
        }
    }

    /// The requests read so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// Reads one request (head and `Content-Length` body) and returns it as text.
async fn read_request(sock: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let len = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.trim()
                        .eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                match sock.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            return String::from_utf8_lossy(&buf).to_string();
        }
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&buf).to_string(),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// An HTTP/1.1 response with `Content-Length`, closing the connection.
pub fn http(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The head of an HTTP/1.1 response whose body runs until the connection closes.
pub fn http_head_until_close(status: &str, content_type: &str) -> String {
    format!("HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\nconnection: close\r\n\r\n")
}
