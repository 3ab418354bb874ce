//! Server-Sent Events framing for both streaming operations on both bindings.
//!
//! Each event is `id: <sequence number>` and one `data:` line of single-line JSON, then a blank
//! line. A comment line (`: keep-alive`) goes out whenever nothing was sent for the keep-alive
//! interval (15 s by default), so proxies keep the connection open. An error after the stream
//! started is sent as `event: error` with the binding's error body, and the stream ends.
//!
//! **Write coalescing.** Every write to the socket costs a system call and a wake-up of the
//! reader, which dominates when an agent emits small events quickly (tokens, chunks). So the body
//! gathers the events that are ready into one write: after an event it lets the scheduler run
//! one more round (the agent usually publishes its next event in it) and takes what arrived, for
//! as long as each round brings something new, up to [`MAX_BATCH_EVENTS`] events or
//! [`MAX_BATCH_BYTES`] bytes. The first event of a stream is written at once, and an event
//! followed by a quiet round is written after that round: an agent that pauses between events
//! sees each of them on the wire a scheduler round (microseconds) after it published it.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::web::Bytes;
use futures::Stream;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::WaitForCancellationFutureOwned;

use super::http::content_type;
use crate::core::{EventStream, SeqEvent};
use crate::error::A2aError;

/// At most this many events go out in one write.
pub(crate) const MAX_BATCH_EVENTS: usize = 32;
/// A write is started once this many bytes are gathered.
pub(crate) const MAX_BATCH_BYTES: usize = 32 * 1024;

/// How one binding frames an event and an error as JSON.
pub(crate) trait Framing: Send + Unpin + 'static {
    /// Appends the JSON of `event` to `out`.
    fn event(&self, event: &SeqEvent, out: &mut Vec<u8>);
    /// Appends the JSON of `error` to `out`.
    fn error(&self, error: &A2aError, out: &mut Vec<u8>);
}

/// The body of an SSE response.
struct SseBody<F> {
    events: EventStream,
    framing: F,
    keep_alive: Duration,
    /// Fires when nothing was written for `keep_alive`.
    idle: Pin<Box<Sleep>>,
    /// When the last write went out.
    last_write: Instant,
    /// Framed events not written yet.
    buf: Vec<u8>,
    /// Events in `buf`.
    batched: usize,
    /// Events written so far.
    written: usize,
    /// The event stream ended (or failed): write what is left, then end.
    finished: bool,
    /// Fires when the server's shutdown grace is over: the stream ends with an error event.
    over: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    /// Fires when the client closed its side of the connection: the stream ends at once.
    peer: Option<super::peer::PeerClosed>,
}

impl<F: Framing> SseBody<F> {
    fn frame(&mut self, item: Option<Result<Arc<SeqEvent>, A2aError>>) {
        match item {
            Some(Ok(ev)) => {
                self.buf.extend_from_slice(b"id: ");
                self.buf
                    .extend_from_slice(itoa::Buffer::new().format(ev.seq).as_bytes());
                self.buf.extend_from_slice(b"\ndata: ");
                self.framing.event(&ev, &mut self.buf);
                self.buf.extend_from_slice(b"\n\n");
                self.batched += 1;
            }
            Some(Err(e)) => {
                self.buf.extend_from_slice(b"event: error\ndata: ");
                self.framing.error(&e, &mut self.buf);
                self.buf.extend_from_slice(b"\n\n");
                self.batched += 1;
                self.finished = true;
            }
            None => self.finished = true,
        }
    }

    fn take(&mut self) -> Poll<Option<Result<Bytes, std::convert::Infallible>>> {
        self.written += self.batched;
        self.batched = 0;
        self.last_write = Instant::now();
        let out = std::mem::replace(&mut self.buf, Vec::with_capacity(512));
        Poll::Ready(Some(Ok(Bytes::from(out))))
    }
}

impl<F: Framing> Stream for SseBody<F> {
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(peer) = &this.peer
            && let Poll::Ready(seen) = peer.poll(cx)
        {
            this.peer = None;
            if seen == super::peer::Peer::Closed {
                // Nobody reads what would follow: the stream (and its subscription) ends now.
                this.finished = true;
                this.buf.clear();
                return Poll::Ready(None);
            }
        }
        if let Some(over) = &mut this.over
            && over.as_mut().poll(cx).is_ready()
        {
            this.over = None;
            if !this.finished {
                this.frame(Some(Err(super::shutdown::shutting_down())));
            }
        }
        // Take whatever is ready now.
        let before = this.batched;
        while !this.finished && this.batched < MAX_BATCH_EVENTS && this.buf.len() < MAX_BATCH_BYTES
        {
            match this.events.as_mut().poll_next(cx) {
                Poll::Ready(item) => this.frame(item),
                Poll::Pending => break,
            }
        }
        if this.batched > 0 {
            let full = this.batched >= MAX_BATCH_EVENTS || this.buf.len() >= MAX_BATCH_BYTES;
            let first = this.written == 0;
            let quiet_round = this.batched == before;
            if this.finished || full || first || quiet_round {
                return this.take();
            }
            // Something new arrived since the last look: give the producer one more scheduler
            // round (woken after the other ready tasks ran) before writing.
            let mut round = std::pin::pin!(tokio::task::yield_now());
            let _ = round.as_mut().poll(cx);
            return Poll::Pending;
        }
        if this.finished {
            return Poll::Ready(None);
        }
        // Nothing to write: keep the connection alive while the task is quiet.
        loop {
            match this.idle.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(()) => {
                    let due = this.last_write + this.keep_alive;
                    if Instant::now() >= due {
                        this.buf.extend_from_slice(b": keep-alive\n\n");
                        let out = this.take();
                        this.idle.as_mut().reset(Instant::now() + this.keep_alive);
                        return out;
                    }
                    this.idle.as_mut().reset(due);
                }
            }
        }
    }
}

/// An HTTP 200 `text/event-stream` response carrying `events` to the client of `req`; it ends
/// when the client closes its side of the connection.
pub(crate) fn response<F: Framing>(
    events: EventStream,
    framing: F,
    inner: &super::Inner,
    mut builder: actix_web::HttpResponseBuilder,
    req: &actix_web::HttpRequest,
) -> HttpResponse {
    let keep_alive = inner.keep_alive;
    let now = Instant::now();
    let body = SseBody {
        events,
        framing,
        keep_alive,
        idle: Box::pin(tokio::time::sleep_until(now + keep_alive)),
        last_write: now,
        buf: Vec::with_capacity(512),
        batched: 0,
        written: 0,
        finished: false,
        over: Some(Box::pin(inner.over.clone().cancelled_owned())),
        peer: super::peer::PeerClosed::of(req),
    };
    builder
        .insert_header(content_type("text/event-stream"))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .insert_header((
            HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        ))
        .streaming(body)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::StreamResponse;
    use futures::StreamExt as _;

    struct Plain;

    impl Framing for Plain {
        fn event(&self, event: &SeqEvent, out: &mut Vec<u8>) {
            out.extend_from_slice(format!("{}", event.seq).as_bytes());
        }
        fn error(&self, error: &A2aError, out: &mut Vec<u8>) {
            out.extend_from_slice(error.to_string().as_bytes());
        }
    }

    fn body(events: EventStream) -> SseBody<Plain> {
        let now = Instant::now();
        SseBody {
            events,
            framing: Plain,
            keep_alive: Duration::from_secs(15),
            idle: Box::pin(tokio::time::sleep_until(now + Duration::from_secs(15))),
            last_write: now,
            buf: Vec::new(),
            batched: 0,
            written: 0,
            finished: false,
            over: None,
            peer: None,
        }
    }

    /// A producer that yields to the scheduler after every event, like an agent awaiting
    /// something between events; the body on another task.
    async fn run(events: u64, pause: bool) -> Vec<Vec<u64>> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Arc<SeqEvent>, A2aError>>();
        let stream: EventStream = Box::pin(tokio_stream_from(rx));
        let (written_tx, mut written) = tokio::sync::mpsc::unbounded_channel::<()>();
        let consumer = tokio::spawn(async move {
            let mut chunks = Vec::new();
            let mut b = body(stream);
            while let Some(Ok(chunk)) = b.next().await {
                let text = String::from_utf8(chunk.to_vec()).unwrap();
                let ids: Vec<u64> = text
                    .split("\n\n")
                    .filter(|s| !s.is_empty())
                    .map(|e| e.lines().next().unwrap()["id: ".len()..].parse().unwrap())
                    .collect();
                chunks.push(ids);
                let _ = written_tx.send(());
            }
            chunks
        });
        for seq in 1..=events {
            let event = StreamResponse::StatusUpdate(Default::default());
            tx.send(Ok(Arc::new(SeqEvent { seq, event }))).unwrap();
            if pause {
                // The producer waits for something else (here: until its event was written).
                written.recv().await.unwrap();
            } else {
                tokio::task::yield_now().await;
            }
        }
        drop(tx);
        consumer.await.unwrap()
    }

    fn tokio_stream_from(
        mut rx: tokio::sync::mpsc::UnboundedReceiver<Result<Arc<SeqEvent>, A2aError>>,
    ) -> impl futures::Stream<Item = Result<Arc<SeqEvent>, A2aError>> + Send {
        futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
    }

    #[tokio::test(flavor = "current_thread")]
    async fn events_ready_together_go_out_in_one_write_and_the_first_at_once() {
        let chunks = run(200, false).await;
        let all: Vec<u64> = chunks.iter().flatten().copied().collect();
        assert_eq!(all, (1..=200).collect::<Vec<_>>(), "every event, in order");
        assert_eq!(chunks[0], vec![1], "the first event is not held back");
        assert!(
            chunks.len() <= 200 / 4,
            "a producer yielding per event gets batched writes: {} writes",
            chunks.len()
        );
        assert!(chunks.iter().all(|c| c.len() <= MAX_BATCH_EVENTS));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_event_followed_by_a_pause_is_written_without_waiting_for_more() {
        let chunks = run(5, true).await;
        assert_eq!(chunks, vec![vec![1], vec![2], vec![3], vec![4], vec![5]]);
    }
}
