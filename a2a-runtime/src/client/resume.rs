//! Streams that survive a dropped connection: when a connection of a streaming call breaks,
//! SubscribeToTask with `Last-Event-ID` (gRPC: `last-event-id` metadata) picks the stream up
//! after the last event delivered, with bounded backoff (see
//! [`Reconnect`](super::Reconnect)).

use std::sync::Arc;

use futures::{Stream, StreamExt as _};

use super::error::ClientError;
use super::options::CallOptions;
use super::stream::{Item, Received, Source, is_final, task_of};
use super::transport::Transport;
use crate::extension::{Negotiated, Reply, RequestContext};
use crate::protocol::A2aRequest;
use crate::types::SubscribeToTaskRequest;

/// The header naming the event a resumed stream starts after.
pub(super) const LAST_EVENT_ID: &str = "last-event-id";

/// Where a stream stands, and how to pick it up.
struct Resume {
    transport: Arc<Transport>,
    source: Source,
    call: CallOptions,
    negotiated: Arc<Negotiated>,
    /// The request and its context, which the response hooks see: only when an extension is
    /// activated (a stream without extensions clones nothing).
    hooked: Option<Box<(A2aRequest, RequestContext)>>,
    /// The task of the events (from the request, or the first event naming it).
    task_id: Option<String>,
    /// The id of the last event delivered.
    last_id: Option<String>,
    /// Reconnections in a row without an event.
    attempts: u32,
    /// The last event delivered is one after which the server may end the stream.
    finished: bool,
    done: bool,
}

/// The events of `source` (the first connection of a call made with `call`), run through the
/// client's extension hooks; a dropped connection is picked up after the last event
/// delivered, as [`ClientOptions::reconnect`](super::ClientOptions::reconnect) says.
pub(super) fn resuming(
    transport: Arc<Transport>,
    req: &A2aRequest,
    source: Source,
    call: CallOptions,
    negotiated: Arc<Negotiated>,
    ctx: RequestContext,
) -> impl Stream<Item = Result<Received, ClientError>> + Send + 'static {
    let (task_id, last_id) = match req {
        A2aRequest::SubscribeToTask(r) => (
            Some(r.id.as_str().to_owned()),
            last_event_id(&call).map(str::to_owned),
        ),
        _ => (None, None),
    };
    let hooked = (!negotiated.activated.is_empty()).then(|| Box::new((req.clone(), ctx)));
    let state = Resume {
        transport,
        source,
        call,
        negotiated,
        hooked,
        task_id,
        last_id,
        attempts: 0,
        finished: false,
        done: false,
    };
    futures::stream::unfold(state, |mut s| async move {
        loop {
            if s.done {
                return None;
            }
            match s.source.next().await {
                None => return None,
                Some(Item::Event(mut received)) => {
                    if s.seen(received.id.as_deref()) {
                        // Delivered before the connection dropped.
                        continue;
                    }
                    s.attempts = 0;
                    s.finished = is_final(&received.event);
                    if received.id.is_some() {
                        s.last_id.clone_from(&received.id);
                    }
                    if let Some(task) = task_of(&received.event) {
                        s.task_id = Some(task.to_owned());
                    }
                    let hooks = s.hooked.as_deref().map(|(req, ctx)| {
                        s.negotiated.handle_response(
                            &mut Reply::Event(&mut received.event),
                            req,
                            ctx,
                        )
                    });
                    if let Some(Err(e)) = hooks {
                        s.done = true;
                        return Some((Err(ClientError::Local(e)), s));
                    }
                    return Some((Ok(received), s));
                }
                Some(Item::Failed(e)) => {
                    s.done = true;
                    return Some((Err(e), s));
                }
                Some(Item::Dropped(_)) if s.finished => {
                    // Broken after a final event: nothing was lost.
                    return None;
                }
                Some(Item::Dropped(e)) => {
                    if let Err(e) = s.reconnect(e).await {
                        s.done = true;
                        return Some((Err(e), s));
                    }
                }
            }
        }
    })
}

impl Resume {
    /// Was the event with this id delivered already? (Ids are a task's sequence numbers on
    /// our servers; ids that are not numbers are never skipped.)
    fn seen(&self, id: Option<&str>) -> bool {
        let number = |v: Option<&str>| v.and_then(|v| v.trim().parse::<u64>().ok());
        matches!((number(id), number(self.last_id.as_deref())), (Some(id), Some(last)) if id <= last)
    }

    /// Opens a new connection resuming after the last event delivered, retrying as the options
    /// allow; `dropped` is why the last connection ended, the error when it cannot resume.
    async fn reconnect(&mut self, dropped: ClientError) -> Result<(), ClientError> {
        let (Some(task_id), Some(last_id)) = (self.task_id.clone(), self.last_id.clone()) else {
            // Nothing says where to pick the stream up: no task yet, or a server without ids.
            return Err(dropped);
        };
        let policy = self.transport.options.reconnect;
        let mut call = self.call.clone();
        call.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case(LAST_EVENT_ID));
        call.headers
            .push((LAST_EVENT_ID.to_owned(), last_id.clone()));
        let mut req = A2aRequest::SubscribeToTask(SubscribeToTaskRequest {
            tenant: self.transport.interface.tenant.clone(),
            id: task_id.as_str().into(),
        });
        let ctx = crate::extension::RequestContext::client();
        self.negotiated
            .handle_request(&mut req, &ctx)
            .map_err(ClientError::Local)?;
        let mut last_error = dropped;
        while self.attempts < policy.max_attempts {
            self.attempts += 1;
            tokio::time::sleep(policy.backoff(self.attempts)).await;
            tracing::debug!(
                task = %task_id,
                after = %last_id,
                attempt = self.attempts,
                error = %last_error,
                "resuming a dropped stream"
            );
            match self.transport.stream(&req, &call).await {
                Ok((source, _)) => {
                    self.source = source;
                    return Ok(());
                }
                Err(e @ (ClientError::Transport { .. } | ClientError::Timeout { .. })) => {
                    last_error = e;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_error)
    }
}

/// The `Last-Event-ID` a call sends, if any.
pub(super) fn last_event_id(call: &CallOptions) -> Option<&str> {
    call.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(LAST_EVENT_ID))
        .map(|(_, v)| v.as_str())
}
