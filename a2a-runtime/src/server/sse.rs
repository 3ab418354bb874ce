//! Server-Sent Events framing for both streaming operations on both bindings.
//!
//! Each event is `id: <sequence number>` and one `data:` line of single-line JSON, then a blank
//! line. A comment line (`: keep-alive`) goes out whenever no event was sent for the keep-alive
//! interval (15 s by default), so proxies keep the connection open. An error after the stream
//! started is sent as `event: error` with the binding's error body, and the stream ends.

use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::header;
use actix_web::web::Bytes;
use futures::StreamExt as _;

use crate::core::{EventStream, SeqEvent};
use crate::error::A2aError;

/// How one binding frames an event and an error as JSON.
pub(crate) trait Framing: Send + 'static {
    /// Appends the JSON of `event` to `out`.
    fn event(&self, event: &SeqEvent, out: &mut Vec<u8>);
    /// Appends the JSON of `error` to `out`.
    fn error(&self, error: &A2aError, out: &mut Vec<u8>);
}

struct State<F> {
    events: EventStream,
    framing: F,
    keep_alive: Duration,
    done: bool,
}

/// An HTTP 200 `text/event-stream` response carrying `events`.
pub(crate) fn response<F: Framing>(
    events: EventStream,
    framing: F,
    keep_alive: Duration,
    mut builder: actix_web::HttpResponseBuilder,
) -> HttpResponse {
    let state = State {
        events,
        framing,
        keep_alive,
        done: false,
    };
    let body = futures::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        let next = tokio::time::timeout(s.keep_alive, s.events.next()).await;
        let mut out = Vec::with_capacity(512);
        match next {
            Err(_) => out.extend_from_slice(b": keep-alive\n\n"),
            Ok(None) => return None,
            Ok(Some(Ok(ev))) => {
                out.extend_from_slice(b"id: ");
                out.extend_from_slice(ev.seq.to_string().as_bytes());
                out.extend_from_slice(b"\ndata: ");
                s.framing.event(&ev, &mut out);
                out.extend_from_slice(b"\n\n");
            }
            Ok(Some(Err(e))) => {
                out.extend_from_slice(b"event: error\ndata: ");
                s.framing.error(&e, &mut out);
                out.extend_from_slice(b"\n\n");
                s.done = true;
            }
        }
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(out)), s))
    });
    builder
        .insert_header((header::CONTENT_TYPE, "text/event-stream"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body)
}
