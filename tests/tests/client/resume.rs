//! Streams that survive: our server behind a proxy that cuts every connection after a few
//! events (SSE: after N events, in the middle of the next one; gRPC: after N messages, read
//! from the HTTP/2 DATA frames, in the middle of the next one). The client's stream reconnects with `Last-Event-ID` and delivers every event once,
//! in order, on JSON-RPC, HTTP+JSON and gRPC, for SendStreamingMessage and SubscribeToTask;
//! `subscribe_from` resumes after a given event; a stream that cannot resume says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::client::{
    A2aClient, ClientError, ClientOptions, ClientStream, Reconnect, SendOptions, Target,
};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::test::within;
use a2a_runtime::types::{AgentInterface, Part, ProtocolBinding, StreamResponse, TaskState};
use a2a_tests::client::*;
use futures::StreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Chunks the agent streams.
const CHUNKS: usize = 40;

/// Streams `CHUNKS` appended artifact chunks, each once the gate lets it (the test opens the
/// gate one event at a time as it reads them: the events are live, not replayed in a burst).
#[derive(Clone)]
struct Chunks {
    gate: Arc<tokio::sync::Semaphore>,
}

impl AgentExecutor for Chunks {
    async fn execute(&self, _ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.working().await?;
        for i in 1..=CHUNKS {
            if let Ok(permit) = self.gate.acquire().await {
                permit.forget();
            }
            events
                .artifact_chunk(
                    "chunks",
                    [Part::text(format!("chunk {i}"))],
                    i > 1,
                    i == CHUNKS,
                )
                .await?;
        }
        events.complete().await
    }
}

/// How the proxy counts events on the way from the server.
#[derive(Clone, Copy, Debug)]
enum Cut {
    /// HTTP/1.1 with SSE: after this many events (`\n\n`), plus a few bytes of the next.
    SseEvents(usize),
    /// HTTP/2 (gRPC): after the DATA frame that completes this many gRPC messages, plus a few
    /// bytes of the next frame.
    H2Messages(usize),
}

/// A TCP proxy on 127.0.0.1:0 in front of `upstream` that cuts every connection as `cut`
/// says; counts the connections it cut.
struct CuttingProxy {
    addr: std::net::SocketAddr,
    cuts: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CuttingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CuttingProxy {
    async fn start(upstream: std::net::SocketAddr, cut: Cut) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cuts = Arc::new(AtomicUsize::new(0));
        let counter = cuts.clone();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                held.push(tokio::spawn(relay(client, server, cut, counter.clone())));
            }
        });
        Self { addr, cuts, task }
    }

    fn cuts(&self) -> usize {
        self.cuts.load(Ordering::SeqCst)
    }
}

/// Relays one connection, cutting it (both ways) where `cut` says.
async fn relay(client: TcpStream, server: TcpStream, cut: Cut, cuts: Arc<AtomicUsize>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let upward = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
    });
    let mut counter = Counter::new(cut);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match server_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        match counter.scan(&buf[..n]) {
            None => {
                if client_write.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
            Some(end) => {
                // The events before the cut, and a few bytes of the next one.
                let _ = client_write.write_all(&buf[..end.min(n)]).await;
                let _ = client_write.flush().await;
                cuts.fetch_add(1, Ordering::SeqCst);
                break;
            }
        }
    }
    upward.abort();
    let _ = client_write.shutdown().await;
}

/// Counts events in the bytes from the server; says where to cut.
struct Counter {
    cut: Cut,
    seen: usize,
    /// SSE: whether the last byte scanned was `\n`.
    newline: bool,
    /// HTTP/2: bytes of the frame being read still to skip, and the header being read.
    skip: usize,
    header: Vec<u8>,
    /// HTTP/2: the frame being read is a DATA frame.
    data: bool,
    /// gRPC: the message prefix being read (flag and length), and the bytes of the message
    /// still to come.
    prefix: Vec<u8>,
    remaining: usize,
}

impl Counter {
    fn new(cut: Cut) -> Self {
        Self {
            cut,
            seen: 0,
            newline: false,
            skip: 0,
            header: Vec::new(),
            data: false,
            prefix: Vec::new(),
            remaining: 0,
        }
    }

    /// Reads one byte of DATA payload; true when it ends a gRPC message.
    fn message(&mut self, b: u8) -> bool {
        if self.remaining > 0 {
            self.remaining -= 1;
            return self.remaining == 0;
        }
        self.prefix.push(b);
        if self.prefix.len() < 5 {
            return false;
        }
        let len = u32::from_be_bytes([
            self.prefix[1],
            self.prefix[2],
            self.prefix[3],
            self.prefix[4],
        ]);
        self.prefix.clear();
        self.remaining = len as usize;
        self.remaining == 0
    }

    /// Where to cut `chunk` (an offset a few bytes into the event after the last one
    /// allowed), or `None` to pass it all on.
    fn scan(&mut self, chunk: &[u8]) -> Option<usize> {
        match self.cut {
            Cut::SseEvents(n) => {
                for (i, &b) in chunk.iter().enumerate() {
                    if b == b'\n' && self.newline {
                        self.seen += 1;
                        if self.seen == n {
                            return Some(i + 1 + 5);
                        }
                    }
                    self.newline = b == b'\n';
                }
                None
            }
            Cut::H2Messages(n) => {
                let mut i = 0;
                while i < chunk.len() {
                    if self.skip > 0 {
                        // Inside a frame: a DATA frame's payload is read for gRPC messages.
                        let take = self.skip.min(chunk.len() - i);
                        if self.data {
                            for &b in &chunk[i..i + take] {
                                if self.message(b) {
                                    self.seen += 1;
                                }
                            }
                        }
                        self.skip -= take;
                        i += take;
                        if self.skip == 0 && self.data && self.seen >= n {
                            // HTTP/2 delivers whole frames only: the cut goes after the frame
                            // that completes the n-th message, a few bytes into the next one.
                            return Some(i + 3);
                        }
                        continue;
                    }
                    self.header.push(chunk[i]);
                    i += 1;
                    if self.header.len() == 9 {
                        let len = usize::from(self.header[0]) << 16
                            | usize::from(self.header[1]) << 8
                            | usize::from(self.header[2]);
                        self.data = self.header[3] == 0;
                        self.header.clear();
                        self.skip = len;
                    }
                }
                None
            }
        }
    }
}

/// Our server (HTTP and gRPC listeners) streaming [`Chunks`] behind `gate`.
async fn server(gate: Arc<tokio::sync::Semaphore>) -> a2a_runtime::server::RunningServer {
    builder("resume")
        .executor(Chunks { gate })
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

pub(crate) fn addr_of(url: &str) -> std::net::SocketAddr {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A client of `running` on `binding`, through a proxy cutting as `cut` says.
async fn proxied(
    running: &a2a_runtime::server::RunningServer,
    binding: &ProtocolBinding,
    cut: Cut,
) -> (A2aClient, CuttingProxy) {
    let direct = client(&running.url(), binding).await;
    let mut card = direct.card();
    let upstream = match binding {
        ProtocolBinding::Grpc => running.grpc_addr().unwrap(),
        _ => addr_of(&running.url()),
    };
    let proxy = CuttingProxy::start(upstream, cut).await;
    for i in &mut card.supported_interfaces {
        i.url = i
            .url
            .replace(&upstream.to_string(), &proxy.addr.to_string());
    }
    let options = ClientOptions {
        reconnect: Reconnect {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(50),
        },
        ..options(binding)
    };
    let c = A2aClient::new(Target::from(card), options).await.unwrap();
    assert_eq!(&c.interface().protocol_binding, binding);
    (c, proxy)
}

/// Every event of a stream with the id after it, until it ends (an error fails the test),
/// opening `gate` for one more event of the agent after each one read.
async fn drain(
    mut stream: ClientStream,
    gate: &tokio::sync::Semaphore,
    what: &str,
) -> Vec<(StreamResponse, Option<String>)> {
    within(what, async move {
        let mut out = Vec::new();
        while let Some(item) = stream.next().await {
            let event = item.unwrap_or_else(|e| panic!("{what}: {e:?}"));
            out.push((event, stream.last_event_id().map(str::to_owned)));
            gate.add_permits(1);
        }
        out
    })
    .await
}

/// The artifact chunks in the events, in order.
fn chunks(events: &[(StreamResponse, Option<String>)]) -> Vec<String> {
    events
        .iter()
        .filter_map(|(e, _)| match e {
            StreamResponse::ArtifactUpdate(a) => a.artifact.parts[0].as_text().map(str::to_owned),
            _ => None,
        })
        .collect()
}

/// The ids are numbers, strictly increasing by one.
fn assert_gapless(events: &[(StreamResponse, Option<String>)], what: &str) {
    let ids: Vec<u64> = events
        .iter()
        .map(|(_, id)| {
            id.as_deref()
                .unwrap_or_else(|| panic!("{what}: an event without id"))
                .parse()
                .unwrap()
        })
        .collect();
    for w in ids.windows(2) {
        assert_eq!(w[1], w[0] + 1, "{what}: ids {ids:?}");
    }
}

const ALL: [ProtocolBinding; 3] = [
    ProtocolBinding::JsonRpc,
    ProtocolBinding::HttpJson,
    ProtocolBinding::Grpc,
];

fn cut_for(binding: &ProtocolBinding) -> Cut {
    match binding {
        ProtocolBinding::Grpc => Cut::H2Messages(4),
        _ => Cut::SseEvents(4),
    }
}

#[tokio::test]
async fn a_stream_cut_every_few_events_delivers_every_event_once_in_order() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let running = server(gate.clone()).await;
    let expected: Vec<String> = (1..=CHUNKS).map(|i| format!("chunk {i}")).collect();
    for binding in &ALL {
        let (c, proxy) = proxied(&running, binding, cut_for(binding)).await;
        gate.forget_permits(gate.available_permits());
        let stream = within("stream", c.stream_message("go", SendOptions::default()))
            .await
            .unwrap_or_else(|e| panic!("{binding}: {e:?}"))
            .into_inner();
        let events = drain(stream, &gate, &format!("{binding} stream")).await;
        let what = format!("{binding}: {}", describe_ids(&events));
        assert!(matches!(events[0].0, StreamResponse::Task(_)), "{what}");
        assert_eq!(chunks(&events), expected, "{what}");
        assert_eq!(
            event_state(&events.last().unwrap().0),
            Some(TaskState::Completed),
            "{what}"
        );
        // The task, working, the chunks, completed: each once.
        assert_eq!(events.len(), CHUNKS + 3, "{what}");
        assert_gapless(&events, &what);
        assert!(
            proxy.cuts() >= 3,
            "{binding}: the proxy cut {} connections",
            proxy.cuts()
        );

        // SubscribeToTask on the finished task, resumed from its start, through the same cuts.
        let task = events[0].0.clone();
        let StreamResponse::Task(task) = task else {
            unreachable!()
        };
        let first_id = events[0].1.clone().unwrap();
        let before = proxy.cuts();
        let stream = within("subscribe", c.subscribe_from(task.id.as_str(), &first_id))
            .await
            .unwrap_or_else(|e| panic!("{binding}: {e:?}"))
            .into_inner();
        let resumed = drain(stream, &gate, &format!("{binding} subscribe_from")).await;
        assert_eq!(
            resumed.len(),
            events.len() - 1,
            "{binding}: every event after the first, once: {}",
            describe_ids(&resumed)
        );
        for ((a, a_id), (b, b_id)) in resumed.iter().zip(&events[1..]) {
            assert_eq!(a, b, "{binding}");
            assert_eq!(a_id, b_id, "{binding}");
        }
        assert!(proxy.cuts() > before, "{binding}: the replay was cut too");
    }
}

fn describe_ids(events: &[(StreamResponse, Option<String>)]) -> String {
    let names = describe(&events.iter().map(|(e, _)| e.clone()).collect::<Vec<_>>());
    let ids: Vec<&str> = events
        .iter()
        .map(|(_, id)| id.as_deref().unwrap_or("-"))
        .collect();
    format!("{names} (ids {})", ids.join(","))
}

#[tokio::test]
async fn subscribe_from_an_id_gives_the_events_after_it() {
    // The gate always open: the agent runs free.
    let gate = Arc::new(tokio::sync::Semaphore::new(
        tokio::sync::Semaphore::MAX_PERMITS / 2,
    ));
    let running = server(gate.clone()).await;
    for binding in &ALL {
        let c = client(&running.url(), binding).await;
        let stream = c
            .stream_message("go", SendOptions::default())
            .await
            .unwrap()
            .into_inner();
        let events = drain(stream, &gate, "direct stream").await;
        assert_gapless(&events, &format!("{binding}"));
        let StreamResponse::Task(task) = &events[0].0 else {
            panic!("{binding}: the task first");
        };
        let k = 10;
        let after = events[k].1.clone().unwrap();
        let resumed = drain(
            c.subscribe_from(task.id.as_str(), &after)
                .await
                .unwrap()
                .into_inner(),
            &gate,
            "subscribe_from",
        )
        .await;
        let tail: Vec<_> = events[k + 1..].to_vec();
        assert_eq!(resumed, tail, "{binding}");
        // An id beyond the task's last event is the agent's error, not a silent gap.
        let err = c
            .subscribe_from(task.id.as_str(), "100000")
            .await
            .expect_err("an error");
        let e = agent_err(err);
        assert!(
            matches!(e, A2aError::InvalidParams { .. }),
            "{binding}: {e:?}"
        );
    }
}

#[tokio::test]
async fn a_stream_dropped_before_its_task_is_known_is_the_calls_error() {
    // SSE headers, then the connection closes: nothing says which task to resume, so the send
    // goes again as it was (same messageId, see the retry module), 3 times, then fails.
    for binding in BOTH {
        let bytes = http_head_until_close("200 OK", "text/event-stream");
        let srv = RawServer::start(vec![Answer::Bytes(bytes.into_bytes())]).await;
        let c = raw(&srv.url, &binding, 3).await;
        let err = within("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .expect_err("an error");
        assert!(
            matches!(&err, ClientError::InvalidResponse(m) if m.contains("ended")),
            "{binding}: {err:?}"
        );
        let requests = srv.requests();
        assert_eq!(requests.len(), 4, "{binding}: the send and 3 more");
        for r in &requests {
            assert!(
                !r.to_ascii_lowercase().contains("last-event-id"),
                "{binding}: {r}"
            );
        }
    }
}

/// A client of a raw server on `binding`, reconnecting at most `attempts` times, at once.
async fn raw(url: &str, binding: &ProtocolBinding, attempts: u32) -> A2aClient {
    let mut card = card("raw");
    card.supported_interfaces = vec![AgentInterface::new(format!("{url}/"), binding.clone())];
    let options = ClientOptions {
        timeout: Duration::from_secs(2),
        stream_idle_timeout: Duration::from_secs(2),
        reconnect: Reconnect {
            max_attempts: attempts,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(4),
        },
        ..ClientOptions::default()
    };
    A2aClient::new(Target::from(card), options).await.unwrap()
}

#[tokio::test]
async fn reconnecting_gives_up_after_the_configured_attempts() {
    // Every connection: event 1 of task t-1, then a cut in the middle of the next event.
    for binding in BOTH {
        let task = r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}"#;
        let body = match binding {
            ProtocolBinding::JsonRpc => {
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{task}}}}}"#)
            }
            _ => format!(r#"{{"task":{task}}}"#),
        };
        let bytes = format!(
            "{}id: 1\ndata: {body}\n\nid: 2\ndata: {{\"trunc",
            http_head_until_close("200 OK", "text/event-stream")
        );
        let srv = RawServer::start(vec![Answer::Bytes(bytes.into_bytes())]).await;
        let c = raw(&srv.url, &binding, 3).await;
        let stream = within("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .unwrap()
            .into_inner();
        let items = within("items", stream.collect::<Vec<_>>()).await;
        assert_eq!(
            items.len(),
            2,
            "{binding}: the task once, then the error: {items:?}"
        );
        assert!(matches!(items[0], Ok(StreamResponse::Task(_))), "{binding}");
        assert!(
            matches!(&items[1], Err(ClientError::InvalidResponse(m)) if m.contains("middle of an event")),
            "{binding}: {items:?}"
        );
        let requests = srv.requests();
        assert_eq!(requests.len(), 4, "{binding}: the call and 3 attempts");
        for r in &requests[1..] {
            let lower = r.to_ascii_lowercase();
            assert!(lower.contains("last-event-id: 1"), "{binding}: {r}");
            assert!(
                lower.contains("subscribe") || lower.contains("t-1"),
                "{binding}: {r}"
            );
        }
    }
}
