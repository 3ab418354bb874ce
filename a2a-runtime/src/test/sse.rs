//! Reading Server-Sent Events: [`SseReader`] turns any byte stream into frames (the client's
//! decoder, with a bound on the size of a frame); [`EventStream`] reads an A2A stream on top of
//! it and checks what every A2A stream must hold.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt as _};
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::{Binding, one_member, within};
use crate::client::SseDecoder;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>;

/// One Server-Sent Events frame: the `event:`, `id:` and `data:` fields of one event.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseFrame {
    /// The last event ID: this frame's `id:` or, without one, the one before (as `EventSource`
    /// reports it).
    pub id: Option<String>,
    /// The `event:` type: `message` when the frame has none.
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

impl SseFrame {
    /// The data as JSON.
    ///
    /// # Panics
    /// When the data is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {:?}", self.data))
    }
}

/// Why an SSE stream could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// The body could not be read (the connection broke).
    #[error("the SSE body could not be read: {0}")]
    Body(String),
    /// A frame grew past the reader's bound.
    #[error("an SSE frame is larger than {limit} bytes")]
    FrameTooLarge {
        /// The bound ([`SseReader::max_frame`]).
        limit: usize,
    },
    /// The stream ended inside a frame (data without the blank line that ends the event).
    #[error("the SSE stream ended inside a frame")]
    Truncated,
}

/// Reads Server-Sent Events frames from a byte stream: a reqwest body
/// ([`bytes_stream`](reqwest::Response::bytes_stream)), an actix body, anything that yields
/// `Result<Bytes, E>`. It follows the event-stream format (several `data:` lines joined, comments
/// and keep-alives skipped, LF, CRLF or CR line ends, fields split across chunks) and refuses a
/// frame larger than [`max_frame`](SseReader::max_frame) bytes, so a broken server cannot make
/// a test buffer without end.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use a2a_runtime::test::{SseError, SseReader};
/// use bytes::Bytes;
///
/// let chunks = ["id: 1\nda", "ta: {\"a\":1}\n\n: keep-alive\n\nevent: error\ndata: x\n\n"];
/// let body = futures::stream::iter(chunks.map(|c| Ok::<_, std::io::Error>(Bytes::from(c))));
/// let mut reader = SseReader::new(body);
/// let first = reader.next_frame().await.unwrap().unwrap();
/// assert_eq!((first.id.as_deref(), first.event.as_str()), (Some("1"), "message"));
/// assert_eq!(first.json()["a"], 1);
/// let second = reader.next_frame().await.unwrap().unwrap();
/// assert_eq!((second.event.as_str(), second.data.as_str()), ("error", "x"));
/// assert!(reader.next_frame().await.is_none());
///
/// let huge = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(format!("data: {}\n", "x".repeat(100))))]);
/// let mut reader = SseReader::new(huge).max_frame(64);
/// assert!(matches!(reader.next_frame().await, Some(Err(SseError::FrameTooLarge { limit: 64 }))));
/// # }
/// ```
pub struct SseReader {
    body: ByteStream,
    decoder: SseDecoder,
    ready: VecDeque<SseFrame>,
    max_frame: usize,
    /// Bytes of the frame being read (since the last blank line).
    pending: usize,
    line_empty: bool,
    after_cr: bool,
    done: bool,
}

impl std::fmt::Debug for SseReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseReader")
            .field("max_frame", &self.max_frame)
            .field("ready", &self.ready.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl SseReader {
    /// The default bound on a frame: 16 MiB.
    pub const DEFAULT_MAX_FRAME: usize = 16 << 20;

    /// A reader of `body`.
    pub fn new<S, E>(body: S) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        Self {
            body: Box::pin(body.map(|chunk| chunk.map_err(Into::into))),
            decoder: SseDecoder::new(),
            ready: VecDeque::new(),
            max_frame: Self::DEFAULT_MAX_FRAME,
            pending: 0,
            line_empty: true,
            after_cr: false,
            done: false,
        }
    }

    /// A reader of a reqwest response's body.
    pub fn from_response(response: reqwest::Response) -> Self {
        Self::new(response.bytes_stream())
    }

    /// Refuses frames larger than `bytes` (the field lines of one event, comments included).
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// The next frame; `None` once the stream ended. After an error, the reader ends.
    pub async fn next_frame(&mut self) -> Option<Result<SseFrame, SseError>> {
        self.next().await
    }

    /// Counts the bytes of the frame being read; false when it grew past the bound.
    fn within_bound(&mut self, chunk: &[u8]) -> bool {
        for &b in chunk {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\n' | b'\r' => {
                    if self.line_empty {
                        self.pending = 0;
                    }
                    self.line_empty = true;
                    self.after_cr = b == b'\r';
                }
                _ => {
                    self.line_empty = false;
                    self.pending += 1;
                    if self.pending > self.max_frame {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn fail(&mut self, error: SseError) -> Poll<Option<Result<SseFrame, SseError>>> {
        self.done = true;
        Poll::Ready(Some(Err(error)))
    }
}

impl Stream for SseReader {
    type Item = Result<SseFrame, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(frame) = self.ready.pop_front() {
                return Poll::Ready(Some(Ok(frame)));
            }
            if self.done {
                return Poll::Ready(None);
            }
            match self.body.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return self.fail(SseError::Body(e.to_string())),
                Poll::Ready(Some(Ok(chunk))) => {
                    if !self.within_bound(&chunk) {
                        let limit = self.max_frame;
                        return self.fail(SseError::FrameTooLarge { limit });
                    }
                    let frames = self.decoder.feed(&chunk);
                    self.ready.extend(frames.into_iter().map(|e| SseFrame {
                        id: e.id,
                        event: e.event,
                        data: e.data,
                    }));
                }
                Poll::Ready(None) => {
                    if self.decoder.has_partial() {
                        return self.fail(SseError::Truncated);
                    }
                    self.done = true;
                }
            }
        }
    }
}

/// One event of an A2A stream.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Event {
    /// The `id:` of the event.
    pub id: u64,
    /// The event type: `message` (the SSE default) or `error` (an error that ended the stream).
    pub kind: String,
    /// The StreamResponse (taken out of its JSON-RPC envelope), or the error body.
    pub data: Value,
}

impl Event {
    /// The StreamResponse member name: `task`, `message`, `statusUpdate` or `artifactUpdate`.
    ///
    /// # Panics
    /// When the data is not a StreamResponse (an object with one member).
    pub fn member(&self) -> &str {
        one_member(&self.data)
    }

    /// The state of a `task` or `statusUpdate` event.
    pub fn state(&self) -> Option<&str> {
        match self.member() {
            "task" | "statusUpdate" => self.data[self.member()]["status"]["state"].as_str(),
            _ => None,
        }
    }
}

/// An open A2A stream (SendStreamingMessage, SubscribeToTask) of either binding. Reading it
/// checks what every A2A stream holds: each event is one line of JSON with a numeric `id:`
/// larger than the one before, and on JSON-RPC a response envelope echoing the request's id.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use a2a_runtime::test::{Binding, TestServer};
/// # struct Agent;
/// # impl a2a_runtime::core::AgentExecutor for Agent {
/// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
/// # }
/// let server = TestServer::for_agent(Agent).await;
/// let params = serde_json::json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
/// let mut events = server.stream(Binding::JsonRpc, "SendStreamingMessage", params).await.unwrap();
/// assert_eq!(events.header("content-type"), Some("text/event-stream"));
/// let first = events.next().await.unwrap();
/// assert_eq!(first.member(), "task");
/// let rest = events.collect().await;
/// assert_eq!(rest.last().and_then(|e| e.state()), Some("TASK_STATE_COMPLETED"));
/// # }
/// ```
#[derive(Debug)]
pub struct EventStream {
    status: u16,
    headers: HeaderMap,
    frames: SseReader,
    rpc_id: Option<Value>,
    last_id: Option<u64>,
}

impl EventStream {
    /// The stream of `response` (an open `text/event-stream` answer) on `binding`; on JSON-RPC
    /// `rpc_id` is the request's id, which every event must echo.
    pub fn new(response: reqwest::Response, binding: Binding, rpc_id: Option<Value>) -> Self {
        Self {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            frames: SseReader::from_response(response),
            rpc_id: match binding {
                Binding::JsonRpc => Some(rpc_id.unwrap_or(Value::Null)),
                Binding::Rest => None,
            },
            last_id: None,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// A header value as text (the first one; `None` when absent or not visible ASCII).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Every value of a header, joined with `", "` as one list (`None` when absent).
    ///
    /// # Panics
    /// When a value is not visible ASCII.
    pub fn header_list(&self, name: &str) -> Option<String> {
        super::answer::header_list(&self.headers, name)
    }

    /// The next event, `None` once the server ended the stream.
    ///
    /// # Panics
    /// When no event comes within [`TIMEOUT`](super::TIMEOUT), the SSE is malformed, or an event
    /// breaks the checks above.
    pub async fn next(&mut self) -> Option<Event> {
        let frame = within("the next SSE event", self.frames.next_frame()).await?;
        let frame = frame.unwrap_or_else(|e| panic!("invalid SSE: {e}"));
        assert!(!frame.data.contains('\n'), "single-line JSON per event");
        let raw = frame.json();
        let data = if frame.event == "error" {
            raw
        } else {
            match &self.rpc_id {
                Some(id) => {
                    assert_eq!(raw["jsonrpc"], "2.0", "{raw}");
                    assert_eq!(&raw["id"], id, "each event echoes the request id: {raw}");
                    raw["result"].clone()
                }
                None => raw,
            }
        };
        let id: u64 = frame
            .id
            .as_deref()
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("every event has a numeric id: {frame:?}"));
        if let Some(last) = self.last_id {
            assert!(id > last, "event ids strictly increase: {last} then {id}");
        }
        self.last_id = Some(id);
        Some(Event {
            id,
            kind: frame.event,
            data,
        })
    }

    /// Every remaining event, until the server ends the stream.
    ///
    /// # Panics
    /// As [`next`](EventStream::next), and after 10,000 events (a runaway stream).
    pub async fn collect(mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(ev) = self.next().await {
            out.push(ev);
            assert!(out.len() < 10_000, "runaway stream");
        }
        out
    }
}
