//! The events of a streaming call over SSE: read chunk by chunk, decoded from each binding's
//! event shape (v0.3's translated), and ended on an error, an early close or a silence.

use std::time::Duration;

use futures::StreamExt as _;
use serde_json::Value;

use super::answer::{
    Binding, invalid_response, rest_error_value, snippet, transport_error, v0_3_rest_error,
    wire_error,
};
use super::error::ClientError;
use super::options::ClientLimits;
use super::sse::{SseDecoder, SseEvent, SseLimitError};
use super::stream::{Item, Received, Source, is_final};
use crate::compat::v0_3;
use crate::types::StreamResponse;

/// The byte stream of an answer.
pub(super) type Bytes =
    std::pin::Pin<Box<dyn futures::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send>>;

/// The events of an SSE answer, decoded as they come, each with its `id:`: an error ends the
/// stream, and so does a close before an event after which the server may close it
/// ([`is_final`]), or a silence of `idle` (those two and a broken connection as
/// [`Item::Dropped`]: the stream may resume). At most `limits.max_buffered_events` events are
/// decoded ahead of the reader; a line or event over its limit ends the stream with
/// [`ClientError::TooLarge`].
pub(super) fn sse_events(
    bytes: Bytes,
    binding: Binding,
    v03: bool,
    url: String,
    idle: Duration,
    limits: ClientLimits,
) -> Source {
    let state = StreamState {
        bytes,
        decoder: SseDecoder::with_limits(limits.max_sse_line_bytes, limits.max_sse_event_bytes),
        pending: Default::default(),
        rest: bytes::Bytes::new(),
        max_buffered: limits.max_buffered_events.max(1),
        done: false,
        finished: false,
        url,
        idle,
    };
    let stream = futures::stream::unfold(state, move |mut s| async move {
        loop {
            if s.done {
                return None;
            }
            if let Some(ev) = s.pending.pop_front() {
                let item = match decode_event(binding, v03, &ev) {
                    Ok(event) => {
                        s.finished = is_final(&event);
                        Item::Event(Received { id: ev.id, event })
                    }
                    Err(e) => {
                        s.done = true;
                        Item::Failed(e)
                    }
                };
                return Some((item, s));
            }
            if !s.rest.is_empty() {
                // What the last chunk holds beyond the buffered events.
                let mut out = Vec::new();
                match s.decoder.decode(&s.rest, s.max_buffered, &mut out) {
                    Ok(used) => {
                        let _ = s.rest.split_to(used);
                        s.pending.extend(out);
                        // The bound the burst test (tests/client/bounds.rs) runs against.
                        debug_assert!(s.pending.len() <= s.max_buffered);
                    }
                    Err(e) => {
                        s.done = true;
                        let what = match e {
                            SseLimitError::Line(_) => "an event-stream line",
                            SseLimitError::Event(_) => "an event-stream event",
                        };
                        let limit = match e {
                            SseLimitError::Line(n) | SseLimitError::Event(n) => n,
                        };
                        return Some((
                            Item::Failed(ClientError::too_large(&s.url, what, limit)),
                            s,
                        ));
                    }
                }
                continue;
            }
            match tokio::time::timeout(s.idle, s.bytes.next()).await {
                Err(_) => {
                    s.done = true;
                    let err = ClientError::Timeout {
                        url: s.url.clone(),
                        timeout: s.idle,
                    };
                    return Some((Item::Dropped(err), s));
                }
                Ok(Some(Ok(chunk))) => s.rest = chunk,
                Ok(Some(Err(e))) => {
                    s.done = true;
                    let err = transport_error(&s.url, e, s.idle);
                    return Some((Item::Dropped(err), s));
                }
                Ok(None) => {
                    s.done = true;
                    if s.decoder.has_partial() {
                        let msg =
                            format!("the stream from {} ended in the middle of an event", s.url);
                        return Some((Item::Dropped(ClientError::InvalidResponse(msg)), s));
                    }
                    if !s.finished {
                        let msg = format!(
                            "the stream from {} ended before the task reached a final or interrupted state",
                            s.url
                        );
                        return Some((Item::Dropped(ClientError::InvalidResponse(msg)), s));
                    }
                    return None;
                }
            }
        }
    });
    Box::pin(stream)
}

struct StreamState {
    bytes: Bytes,
    decoder: SseDecoder,
    /// Decoded events the reader has not taken (at most `max_buffered`).
    pending: std::collections::VecDeque<SseEvent>,
    /// The part of the last chunk not decoded yet.
    rest: bytes::Bytes,
    max_buffered: usize,
    done: bool,
    finished: bool,
    url: String,
    idle: Duration,
}

fn decode_event(binding: Binding, v03: bool, ev: &SseEvent) -> Result<StreamResponse, ClientError> {
    let value: Value = serde_json::from_str(&ev.data).map_err(|e| {
        ClientError::InvalidResponse(format!(
            "a stream event is not JSON ({e}): {}",
            snippet(ev.data.as_bytes())
        ))
    })?;
    let payload = match binding {
        Binding::JsonRpc => {
            if let Some(err) = value.get("error") {
                return Err(wire_error(err));
            }
            value.get("result").cloned().ok_or_else(|| {
                ClientError::InvalidResponse("a stream event without result or error".into())
            })?
        }
        Binding::Rest if v03 => {
            if ev.event == "error" {
                return Err(v0_3_rest_error(500, &value));
            }
            let event = v0_3::rest::event_in(value).map_err(invalid_response)?;
            return crate::json::from_value(event).map_err(|e| {
                ClientError::InvalidResponse(format!(
                    "a stream event does not fit StreamResponse: {e}"
                ))
            });
        }
        Binding::Rest => {
            if ev.event == "error" || value.get("error").is_some() {
                let err = value.get("error").cloned().unwrap_or(Value::Null);
                let code = err
                    .get("code")
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok())
                    .unwrap_or(500);
                return Err(rest_error_value(&err, code));
            }
            value
        }
    };
    let payload = if v03 {
        v0_3::convert::event_in(payload).map_err(invalid_response)?
    } else {
        payload
    };
    crate::json::from_value(payload).map_err(|e| {
        ClientError::InvalidResponse(format!("a stream event does not fit StreamResponse: {e}"))
    })
}
