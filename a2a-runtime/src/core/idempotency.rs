//! [`Idempotency`]: exactly-once SendMessage under client retries.

use std::time::Duration;

/// How repeated SendMessage requests are recognised: exactly-once SendMessage under client
/// retries.
///
/// A client that loses the answer to a SendMessage (a dropped connection, a timeout) sends the
/// same message again. The runtime recognises it by the message's `messageId`, per principal:
/// a repeated SendMessage or SendStreamingMessage from the same tenant and owner with the same
/// `messageId`
/// - for a new task (no `taskId`), within [`Idempotency::window`] of the first: answers with
///   the task the first one started, and the agent does not run again;
/// - for a continued task (`taskId` set): whenever the task's history holds that message id
///   with the same parts, the same; with other parts, the id was reused for a new message: an
///   invalid-params error naming `message.messageId`.
///
/// The answer is the one the first request would have had: a blocking SendMessage waits for
/// the task to reach a state that answers it (terminal, INPUT_REQUIRED, AUTH_REQUIRED; at once
/// with `returnImmediately`) and returns it; a streaming one gets the task's stream as
/// SubscribeToTask gives it (its snapshot, then its events; a finished task's snapshot alone, as
/// is the snapshot of a task waiting for the client's input, where the first stream ended),
/// resumable with `Last-Event-ID`. A repeat may change nothing: its own message, configuration
/// and metadata are not used. A repeat whose first request started no task (its agent answered
/// with a message alone, or has not published within [`Idempotency::wait_for_task`]) is refused
/// with InvalidParams naming the task id.
///
/// Which request is first is decided by the store ([`TaskStore::claim_message`]): the
/// in-memory store under its lock, SQLite and PostgreSQL by the primary key of
/// `a2a_message_claims (tenant, owner, message_id)` in one `INSERT … ON CONFLICT` statement, so
/// that two instances sharing a PostgreSQL database that receive the same message at once run
/// the agent once. Claims outlive a restart on the durable stores. They are kept for the window
/// and at most [`Idempotency::max_claims`] of them (the oldest go first, at each retention pass;
/// the in-memory store also bounds them itself,
/// [`InMemoryTaskStore::with_max_claims`](crate::store::InMemoryTaskStore::with_max_claims)).
///
/// Why `messageId`: the A2A v1.1 work on idempotency (a2aproject/A2A#1987, the epic over #928,
/// the hole left by server-generated task ids, and #1893, an `Idempotency-Key` header) has not
/// settled on a mechanism; the open proposal a2aproject/A2A#939 keys it on `messageId`. The
/// message id is already required, client-generated and unique per message in v1.0, is carried
/// the same way by every binding (a header would need a gRPC and a v0.3 twin), and a task's
/// history already holds one entry per id. Scoping it by principal answers the epic's security
/// criterion: one client's id never reaches another client's task.
///
/// [`TaskStore::claim_message`]: crate::store::TaskStore::claim_message
///
/// ```
/// use std::time::Duration;
/// use a2a_runtime::core::Idempotency;
/// let i = Idempotency { window: Duration::from_secs(3_600), ..Idempotency::default() };
/// assert_eq!(i.max_claims, 100_000);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idempotency {
    /// How long the `messageId` of a message that started a new task keeps answering with that
    /// task (default 10 minutes); a repeat after it starts a new task.
    pub window: Duration,
    /// The most claims a store keeps (default 100,000): past it, the oldest go at each
    /// retention pass.
    pub max_claims: usize,
    /// How long a repeat waits for the first request's task to exist (it may still be
    /// starting, here or on another instance) before it is refused (default 5 s).
    pub wait_for_task: Duration,
}

impl Default for Idempotency {
    fn default() -> Self {
        Self {
            window: Duration::from_secs(600),
            max_claims: 100_000,
            wait_for_task: Duration::from_secs(5),
        }
    }
}
