//! An SSE stream read with the `eventsource-stream` client crate, checking ids and envelopes.

use std::pin::Pin;

use eventsource_stream::{Event, EventStreamError};
use futures::{Stream, StreamExt as _};
use serde_json::Value;

use super::{one_member, within};

type EventResult = Result<Event, EventStreamError<reqwest::Error>>;

/// An open SSE stream, parsed by `eventsource-stream`.
pub struct Sse {
    pub(super) events: Pin<Box<dyn Stream<Item = EventResult> + Send>>,
    pub(super) rpc_id: Option<Value>,
    pub(super) last_id: Option<u64>,
}

/// One SSE event.
#[derive(Clone, Debug, PartialEq)]
pub struct Ev {
    /// The `id:` field.
    pub id: u64,
    /// The event type: `message` (the SSE default, no `event:` line) or `error` (a mid-stream
    /// error).
    pub kind: String,
    /// The StreamResponse (unwrapped from the JSON-RPC envelope), or the error body.
    pub data: Value,
}

impl Ev {
    /// The StreamResponse member name: `task`, `message`, `statusUpdate` or `artifactUpdate`.
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

impl Sse {
    /// The next event, `None` when the server closed the stream. Checks that `id:` values
    /// strictly increase and (JSON-RPC) that every event is a response echoing the request id.
    pub async fn next(&mut self) -> Option<Ev> {
        let item = within("the next SSE event", self.events.next()).await?;
        let event = item.unwrap_or_else(|e| panic!("invalid SSE: {e}"));
        let raw: Value = serde_json::from_str(&event.data)
            .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {:?}", event.data));
        assert!(!event.data.contains('\n'), "single-line JSON per event");
        let data = if event.event == "error" {
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
        let id: u64 = event
            .id
            .parse()
            .unwrap_or_else(|_| panic!("every event has a numeric id: {event:?}"));
        if let Some(last) = self.last_id {
            assert!(id > last, "event ids strictly increase: {last} then {id}");
        }
        self.last_id = Some(id);
        Some(Ev {
            id,
            kind: event.event,
            data,
        })
    }

    /// Every remaining event, until the server closes the stream.
    pub async fn collect(mut self) -> Vec<Ev> {
        let mut out = Vec::new();
        while let Some(ev) = self.next().await {
            out.push(ev);
            assert!(out.len() < 10_000, "runaway stream");
        }
        out
    }
}
