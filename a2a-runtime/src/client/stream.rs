//! What a streaming call gives: a stream of events that knows where it stands (the id of the
//! last event it yielded), and when it may end.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use super::error::ClientError;
use crate::types::{StreamResponse, TaskState};

/// One event as a binding received it: the event and its id (the SSE `id:` field; on gRPC
/// the position the server announced), when the server gave one.
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) id: Option<String>,
    pub(crate) event: StreamResponse,
}

/// What one connection of a streaming call yields.
// Events are the common item, moved once each as the `Result` before them was: boxing them
// would cost an allocation per event to shrink the rare error items.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Item {
    /// An event.
    Event(Received),
    /// The agent's error, or an answer that breaks the protocol: the stream ends with it.
    Failed(ClientError),
    /// The connection broke (reset, truncated, silent too long) before a final event: the
    /// stream may resume from its last event on a new connection.
    Dropped(ClientError),
}

/// The events of one connection.
pub(crate) type Source = Pin<Box<dyn Stream<Item = Item> + Send>>;

/// A stream of events from SendStreamingMessage or SubscribeToTask: a [`Stream`] of
/// [`StreamResponse`] that also tells the id of the event it yielded last.
///
/// Streams reconnect on their own when the connection drops (see
/// [`ClientOptions::reconnect`](super::ClientOptions::reconnect)); to resume later, from
/// another process, keep [`last_event_id`](Self::last_event_id) and
/// [`task_id`](Self::task_id) and call
/// [`A2aClient::subscribe_from`](super::A2aClient::subscribe_from).
///
/// ```no_run
/// use futures::StreamExt as _;
///
/// # async fn run(client: a2a_runtime::client::A2aClient) -> Result<(), a2a_runtime::client::ClientError> {
/// let mut events = client.stream_message("hello", Default::default()).await?.into_inner();
/// while let Some(event) = events.next().await {
///     println!("{:?} (event id {:?})", event?, events.last_event_id());
/// }
/// # Ok(()) }
/// ```
pub struct ClientStream {
    inner: Pin<Box<dyn Stream<Item = Result<Received, ClientError>> + Send>>,
    last_event_id: Option<String>,
    task_id: Option<String>,
}

impl std::fmt::Debug for ClientStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientStream")
            .field("last_event_id", &self.last_event_id)
            .field("task_id", &self.task_id)
            .finish_non_exhaustive()
    }
}

impl ClientStream {
    pub(crate) fn new(
        inner: impl Stream<Item = Result<Received, ClientError>> + Send + 'static,
    ) -> Self {
        Self {
            inner: Box::pin(inner),
            last_event_id: None,
            task_id: None,
        }
    }

    /// The id of the event this stream yielded last (the server's SSE `id:`; on gRPC the
    /// position the server announced), when the server gives ids: what
    /// [`A2aClient::subscribe_from`](super::A2aClient::subscribe_from) resumes after.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The id of the task the events are about, once an event named it.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }
}

impl Stream for ClientStream {
    type Item = Result<StreamResponse, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(received))) => {
                if received.id.is_some() {
                    self.last_event_id = received.id;
                }
                if let Some(task) = task_of(&received.event) {
                    self.task_id = Some(task.to_owned());
                }
                Poll::Ready(Some(Ok(received.event)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The task an event is about (none for a message outside a task).
pub(crate) fn task_of(e: &StreamResponse) -> Option<&str> {
    let id = match e {
        StreamResponse::Task(t) => t.id.as_str(),
        StreamResponse::StatusUpdate(u) => u.task_id.as_str(),
        StreamResponse::ArtifactUpdate(a) => a.task_id.as_str(),
        StreamResponse::Message(m) => m.task_id.as_str(),
    };
    (!id.is_empty()).then_some(id)
}

/// Is this event one after which a server may close the stream?
pub(crate) fn is_final(e: &StreamResponse) -> bool {
    let final_state = |s: TaskState| s.is_terminal() || s.is_interrupted();
    match e {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => final_state(t.status.state),
        StreamResponse::StatusUpdate(u) => final_state(u.status.state),
        StreamResponse::ArtifactUpdate(_) => false,
    }
}
