//! Sends whose answer was lost: our server behind a proxy that forwards the first connection's
//! request and drops that connection when the answer starts (HTTP/1.1: its first byte; HTTP/2:
//! the first HEADERS or DATA frame of a stream), the first time only. The client sends again
//! with the same `messageId`: the call succeeds with the first task and the agent runs once,
//! on JSON-RPC, HTTP+JSON and gRPC. Answers of the server are never sent again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::client::{
    A2aClient, ClientError, ClientOptions, Reconnect, SendOptions, SendResult, Target,
};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::test::within;
use a2a_runtime::types::{
    AgentInterface, Message, Part, ProtocolBinding, Role, StreamResponse, TaskState,
};
use a2a_tests::client::*;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::resume::addr_of;

/// Counts its runs; works, answers with an artifact, completes.
#[derive(Clone, Default)]
struct Counting {
    runs: Arc<AtomicUsize>,
}

impl AgentExecutor for Counting {
    async fn execute(&self, _ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        events.working().await?;
        events
            .artifact_chunk("answer", [Part::text("done")], false, true)
            .await?;
        events.complete().await
    }
}

/// A TCP proxy on 127.0.0.1:0 in front of `upstream`: the first connection's answer is lost
/// (the connection is dropped when it starts), the others are relayed as they are.
struct LosingProxy {
    addr: std::net::SocketAddr,
    lost: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LosingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl LosingProxy {
    async fn start(upstream: std::net::SocketAddr, h2: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let lost = Arc::new(AtomicUsize::new(0));
        let counter = lost.clone();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            let mut first = true;
            while let Ok((mut client, _)) = listener.accept().await {
                let Ok(mut server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                if std::mem::take(&mut first) {
                    held.push(tokio::spawn(lose(client, server, h2, counter.clone())));
                } else {
                    held.push(tokio::spawn(async move {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }));
                }
            }
        });
        Self { addr, lost, task }
    }

    fn lost(&self) -> usize {
        self.lost.load(Ordering::SeqCst)
    }
}

/// Relays the request of one connection, and the server's bytes up to the start of its
/// answer (HTTP/2: its connection frames); then drops the connection both ways.
async fn lose(client: TcpStream, server: TcpStream, h2: bool, lost: Arc<AtomicUsize>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let upward = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
    });
    let mut pending = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    'relay: loop {
        let n = match server_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if !h2 {
            lost.fetch_add(1, Ordering::SeqCst);
            break;
        }
        pending.extend_from_slice(&buf[..n]);
        // Whole frames: connection frames pass, the first frame of an answer ends it all.
        while pending.len() >= 9 {
            let len = usize::from(pending[0]) << 16
                | usize::from(pending[1]) << 8
                | usize::from(pending[2]);
            let kind = pending[3];
            let stream =
                u32::from_be_bytes([pending[5], pending[6], pending[7], pending[8]]) & 0x7fff_ffff;
            if stream != 0 && (kind == 0 || kind == 1) {
                lost.fetch_add(1, Ordering::SeqCst);
                break 'relay;
            }
            if pending.len() < 9 + len {
                break;
            }
            let frame: Vec<u8> = pending.drain(..9 + len).collect();
            if client_write.write_all(&frame).await.is_err() {
                break 'relay;
            }
        }
    }
    upward.abort();
    drop(client_write);
}

/// Our server (HTTP and gRPC listeners) running `agent`.
async fn server(agent: Counting) -> a2a_runtime::server::RunningServer {
    builder("retry")
        .executor(agent)
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

/// A client of `running` on `binding` through a [`LosingProxy`], retrying at once.
async fn through_losing_proxy(
    running: &a2a_runtime::server::RunningServer,
    binding: &ProtocolBinding,
) -> (A2aClient, LosingProxy) {
    let mut card = client(&running.url(), binding).await.card();
    let upstream = match binding {
        ProtocolBinding::Grpc => running.grpc_addr().unwrap(),
        _ => addr_of(&running.url()),
    };
    let proxy = LosingProxy::start(upstream, binding == &ProtocolBinding::Grpc).await;
    for i in &mut card.supported_interfaces {
        i.url = i
            .url
            .replace(&upstream.to_string(), &proxy.addr.to_string());
    }
    let options = ClientOptions {
        reconnect: quick(3),
        ..options(binding)
    };
    let c = A2aClient::new(Target::from(card), options).await.unwrap();
    assert_eq!(&c.interface().protocol_binding, binding);
    (c, proxy)
}

fn quick(attempts: u32) -> Reconnect {
    Reconnect {
        max_attempts: attempts,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
    }
}

const ALL: [ProtocolBinding; 3] = [
    ProtocolBinding::JsonRpc,
    ProtocolBinding::HttpJson,
    ProtocolBinding::Grpc,
];

#[tokio::test]
async fn a_blocking_send_whose_answer_was_lost_gets_the_first_task_and_runs_once() {
    let agent = Counting::default();
    let running = server(agent.clone()).await;
    for binding in &ALL {
        let (c, proxy) = through_losing_proxy(&running, binding).await;
        let before = agent.runs.load(Ordering::SeqCst);
        let answer = within("send", c.send_message("hello", SendOptions::default()))
            .await
            .unwrap_or_else(|e| panic!("{binding}: {e:?}"))
            .into_inner();
        assert_eq!(proxy.lost(), 1, "{binding}: the first answer was lost");
        let SendResult::Task(task) = answer else {
            panic!("{binding}: a task");
        };
        assert_eq!(task.status.state, TaskState::Completed, "{binding}");
        let got = within("get", c.get_task(task.id.as_str(), None))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.id, task.id, "{binding}");
        assert_eq!(got.status.state, TaskState::Completed, "{binding}");
        assert_eq!(
            agent.runs.load(Ordering::SeqCst) - before,
            1,
            "{binding}: the agent ran once"
        );
    }
}

#[tokio::test]
async fn a_stream_whose_start_was_lost_gets_the_first_tasks_stream_and_runs_once() {
    let agent = Counting::default();
    let running = server(agent.clone()).await;
    for binding in &ALL {
        let (c, proxy) = through_losing_proxy(&running, binding).await;
        let before = agent.runs.load(Ordering::SeqCst);
        let stream = within("stream", c.stream_message("hello", SendOptions::default()))
            .await
            .unwrap_or_else(|e| panic!("{binding}: {e:?}"))
            .into_inner();
        let events: Vec<StreamResponse> = collect(stream)
            .await
            .into_iter()
            .map(|e| e.unwrap_or_else(|e| panic!("{binding}: {e:?}")))
            .collect();
        assert_eq!(proxy.lost(), 1, "{binding}: the first answer was lost");
        let what = format!("{binding}: {}", describe(&events));
        let task_id = match &events[0] {
            StreamResponse::Task(t) => t.id.clone(),
            other => panic!("{what}: the task first, got {other:?}"),
        };
        assert_eq!(
            event_state(events.last().unwrap()),
            Some(TaskState::Completed),
            "{what}"
        );
        let got = within("get", c.get_task(task_id.as_str(), None))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.status.state, TaskState::Completed, "{what}");
        assert_eq!(
            agent.runs.load(Ordering::SeqCst) - before,
            1,
            "{what}: the agent ran once"
        );
    }
}

#[tokio::test]
async fn an_answer_of_our_server_is_not_sent_again() {
    let agent = Counting::default();
    let running = server(agent.clone()).await;
    for binding in &ALL {
        let options = ClientOptions {
            reconnect: quick(3),
            ..options(binding)
        };
        let c = A2aClient::discover(&running.url(), options).await.unwrap();
        let send = SendOptions {
            task_id: Some("no-such-task".into()),
            ..SendOptions::default()
        };
        let err = within("send", c.send_message("hello", send))
            .await
            .expect_err("an unknown task");
        assert!(
            matches!(agent_err(err), A2aError::TaskNotFound { .. }),
            "{binding}"
        );
    }
    assert_eq!(agent.runs.load(Ordering::SeqCst), 0);
}

/// A client of a raw server on `binding`, retrying at most `attempts` times, at once.
async fn raw(url: &str, binding: &ProtocolBinding, attempts: u32) -> A2aClient {
    let mut card = card("raw");
    card.supported_interfaces = vec![AgentInterface::new(format!("{url}/"), binding.clone())];
    let options = ClientOptions {
        timeout: Duration::from_secs(5),
        reconnect: quick(attempts),
        ..ClientOptions::default()
    };
    A2aClient::new(Target::from(card), options).await.unwrap()
}

/// The `messageId` in each request body.
fn message_ids(requests: &[String]) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            let at = r.find("\"messageId\":\"").expect("a messageId") + 13;
            r[at..].split('"').next().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_proxy_saying_unavailable_gets_the_same_message_again_within_the_limit() {
    for binding in BOTH {
        let srv = RawServer::start(vec![Answer::Bytes(http(
            "503 Service Unavailable",
            "text/plain",
            "upstream unavailable",
        ))])
        .await;
        let c = raw(&srv.url, &binding, 2).await;
        let err = within("send", c.send_message("hello", SendOptions::default()))
            .await
            .expect_err("always unavailable");
        assert!(
            matches!(err, ClientError::Http { status: 503, .. }),
            "{binding}: {err:?}"
        );
        let ids = message_ids(&srv.requests());
        assert_eq!(ids.len(), 3, "{binding}: the send and 2 more");
        assert!(ids.iter().all(|id| id == &ids[0]), "{binding}: {ids:?}");

        // The same for a stream that never started.
        let srv = RawServer::start(vec![Answer::Bytes(http(
            "502 Bad Gateway",
            "text/plain",
            "bad gateway",
        ))])
        .await;
        let c = raw(&srv.url, &binding, 2).await;
        let err = within("stream", c.stream_message("hello", SendOptions::default()))
            .await
            .expect_err("always a bad gateway");
        assert!(
            matches!(err, ClientError::Http { status: 502, .. }),
            "{binding}: {err:?}"
        );
        let ids = message_ids(&srv.requests());
        assert_eq!(ids.len(), 3, "{binding}: the stream and 2 more");
        assert!(ids.iter().all(|id| id == &ids[0]), "{binding}: {ids:?}");
    }
}

#[tokio::test]
async fn answers_and_messages_without_an_id_are_sent_once() {
    for binding in BOTH {
        // An A2A error: the server answered.
        let body = match binding {
            ProtocolBinding::JsonRpc => http(
                "200 OK",
                "application/json",
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"task not found"}}"#,
            ),
            _ => http(
                "404 Not Found",
                "application/json",
                r#"{"error":{"code":404,"status":"NOT_FOUND","message":"task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#,
            ),
        };
        let srv = RawServer::start(vec![Answer::Bytes(body)]).await;
        let c = raw(&srv.url, &binding, 3).await;
        let err = within("send", c.send_message("hello", SendOptions::default()))
            .await
            .expect_err("the agent's error");
        assert!(matches!(err, ClientError::Agent(_)), "{binding}: {err:?}");
        assert_eq!(srv.requests().len(), 1, "{binding}: an answer, sent once");

        // A proxy's 503, but the caller's message has no id: nothing makes a repeat safe.
        let srv = RawServer::start(vec![Answer::Bytes(http(
            "503 Service Unavailable",
            "text/plain",
            "upstream unavailable",
        ))])
        .await;
        let c = raw(&srv.url, &binding, 3).await;
        let mut message = Message::new(Role::User, [Part::text("hello")]);
        message.message_id = Default::default();
        let err = within("send", c.send_message(message, SendOptions::default()))
            .await
            .expect_err("unavailable");
        assert!(
            matches!(err, ClientError::Http { status: 503, .. }),
            "{binding}: {err:?}"
        );
        assert_eq!(srv.requests().len(), 1, "{binding}: no id, sent once");
    }
}
