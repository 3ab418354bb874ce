//! The encoded result of a blocking SendMessage, made once, before the store's write, so that a
//! store with [immediate writes](crate::store::immediate) keeps the same bytes and the reply is
//! not encoded again.

use super::listeners::{Waiter, ends_wait};
use crate::extension::Negotiated;
use crate::types::{StreamResponse, Task};

/// The member of a SendMessage result that holds a task (see [`reply_for`]).
pub(super) const REPLY_MEMBER: &str = "task";

/// The room a reply is encoded in at first (an echo task's takes about 450 bytes).
const REPLY_CAPACITY: usize = 1024;

/// The result of the blocking SendMessage among `waiters` that `event` answers, `{"task":…}`
/// with `task` as the event leaves it, encoded before the store's write so that the store can
/// keep the same bytes (see
/// [`ImmediateWrites::write_now`](crate::store::immediate::ImmediateWrites::write_now)) and the
/// reply is not encoded again; `None` when the event answers no waiter, or when the running
/// request's response hooks may change the result (it is encoded after them, and the store
/// encodes the task itself).
pub(super) fn reply_for(
    waiters: &[Waiter],
    extensions: &Negotiated,
    event: &StreamResponse,
    task: &Task,
) -> Option<Vec<u8>> {
    if waiters.is_empty()
        || matches!(event, StreamResponse::Message(_))
        || extensions.hooks_responses()
    {
        return None;
    }
    let ends = ends_wait(event);
    if !waiters.iter().any(|w| ends || w.until_created) {
        return None;
    }
    let mut reply = Vec::with_capacity(REPLY_CAPACITY);
    crate::json::splice::member(&mut reply, true, REPLY_MEMBER);
    crate::json::writer::to_writer(&mut reply, task).ok()?;
    reply.push(b'}');
    Some(reply)
}

/// The task's JSON in a reply from [`reply_for`].
pub(super) fn task_json(reply: &[u8]) -> Option<&[u8]> {
    crate::json::splice::only_member(reply, REPLY_MEMBER)
}
