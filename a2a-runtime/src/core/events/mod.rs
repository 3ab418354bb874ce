//! Per-task ordered event streams.
//!
//! Each live task has one [`TaskRuntime`]: the task as it stands, its version, and the parties
//! listening to it. Every event an agent publishes is applied to the task in place, written to
//! the store, and delivered with a sequence number (the task's version after the write) while
//! the task is locked, so every subscriber sees the same events in the same order and a snapshot
//! taken with a subscription is exactly the state before the next event. A store that offers
//! [immediate writes](crate::store::immediate) is written at once, under the task's lock, and
//! shares the live task instead of copying it; any other store's write is awaited.
//!
//! Two kinds of listener, each paying only for what it needs:
//! - a **subscriber** (a stream: SendStreamingMessage, SubscribeToTask) gets every event through
//!   its own bounded queue of [`Limits::subscriber_buffer`](crate::core::Limits::subscriber_buffer)
//!   events, allocated when it subscribes. A subscriber that falls further behind is given a new
//!   queue, and what it missed is read back from the store's log first (its stream ends with an
//!   error only when the log no longer holds those events); other subscribers and the agent are
//!   unaffected.
//! - a **waiter** (a blocking SendMessage) gets one answer when its wait ends: the task as it
//!   stands when it reached a terminal or interrupted state, the agent's direct message, or the
//!   agent's error.
//!
//! A task nobody listens to costs no channel at all.
//!
//! The files, each depending only on those listed before it: `listeners` (what listeners
//! receive), `state` (the task under its lock, and delivery), `reply` (a blocking SendMessage's
//! result, encoded once), `runtime` (the live task, its executions and subscriptions), `follow`
//! (catching up with the store), `publish` (an agent's event), `take_over` (recovery's event
//! on a task whose executor is gone or hung), `turn` (a new turn on a task), `registry` (the
//! live tasks).

mod follow;
mod listeners;
mod publish;
mod registry;
mod reply;
mod runtime;
mod state;
mod take_over;
#[cfg(test)]
mod tests;
mod turn;

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;

use crate::error::A2aError;
pub use crate::store::SeqEvent;

pub(crate) use listeners::{BusItem, Listen, WaitOutcome};
pub(crate) use registry::Registry;
pub(crate) use runtime::{Listener, Subscription, TaskRuntime};
pub(crate) use take_over::Running;

/// A stream of task events, as returned by the streaming operations.
///
/// An event is shared with the task's other subscribers and its replay log: read it through
/// the `Arc`, or change a copy of it ([`Arc::make_mut`]).
pub type EventStream = Pin<Box<dyn Stream<Item = Result<Arc<SeqEvent>, A2aError>> + Send>>;
