//! The write queue of the SQL stores: task writes (and, on PostgreSQL, execution leases) go
//! through one queue to a few writer tasks, each of which commits whatever is waiting as one
//! transaction.
//!
//! A write is durable before its caller hears back (the reply follows the commit), so
//! grouping changes nothing a caller can see but the cost: a transaction's fixed price (its
//! WAL pages and flush, on PostgreSQL a notification and the commit lock that comes with it)
//! is paid once for all the writes that waited while the previous one committed.
//!
//! Each write is still checked on its own (the versioned UPDATE, the INSERT of a new id): a
//! write that is refused changes nothing and the others commit. A driver error in one write
//! aborts the transaction, so the batch is redone without it (see `Batch::run` in
//! `store/sql/writes.rs`).

// Measured with `a2a-bench store send` (BENCHMARKS.md, "Stores"): one transaction per write,
// four pooled SQLite writers took turns on SQLite's write lock (sleeping in its busy handler)
// and each transaction wrote its pages to the WAL; on PostgreSQL every notifying commit was
// serialized on the server's notification lock held through the WAL flush.

use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use super::layout::Split;
use super::{Lease, Scope, StoreError};
use crate::types::TaskId;

/// Writes waiting for a writer, at most (callers wait for room beyond it).
pub(super) const QUEUE: usize = 1024;

/// Writes committed in one transaction, at most.
pub(super) const MAX_BATCH: usize = 128;

/// Scheduler rounds a writer lets pass between its first waiting write and taking the batch.
// `a2a-bench store send`, one host, one round each, SendMessage/s at 16 connections, by rounds
// 1 / 2 / 4 / 8: SQLite 5.12k, 4.87k / 5.55k, 5.30k / 6.33k, 6.39k, 6.92k / 7.06k, 5.39k;
// PostgreSQL x3 1.53k at 1 against 1.90k at 4 and 1.91k at 8 and 16. A round costs nothing
// when no other task is ready.
const GATHER_ROUNDS: usize = 4;

/// A task's row as a create or update writes it (encoded by the caller, off the writer).
#[derive(Debug)]
pub(super) struct Row {
    pub(super) scope: Scope,
    pub(super) id: TaskId,
    pub(super) context_id: String,
    pub(super) state: &'static str,
    pub(super) status_ms: i64,
    /// The task's ProtoJSON, or the head of its split form.
    pub(super) body: String,
    /// The split form of a large task (see [`layout`](super::layout)).
    pub(super) split: Option<Split>,
    /// The logged event's ProtoJSON.
    pub(super) event: Option<String>,
}

/// A task row's primary key: tenant, owner, id.
pub(super) type RowKey = (String, String, String);

impl Row {
    /// The primary key of the task's row.
    pub(super) fn key(&self) -> RowKey {
        (
            self.scope.tenant.clone(),
            self.scope.owner.to_string(),
            self.id.as_str().to_owned(),
        )
    }
}

/// One write.
#[derive(Debug)]
pub(super) enum Op {
    /// A new task (version 1).
    Create(Row),
    /// A task whose stored version is `expected`.
    Update { row: Row, expected: i64 },
    /// Records a lease until `expires_ms`.
    Acquire { lease: Lease, expires_ms: i64 },
    /// Removes a lease.
    Release(Lease),
}

impl Op {
    /// The order writes are applied in within a transaction: creates, updates, then leases,
    /// each by key, so that concurrent transactions (several writers, several instances)
    /// lock rows in one order. Writes of one key keep the order they were queued in.
    pub(super) fn key(&self) -> (u8, &str, &str, &str) {
        match self {
            Op::Create(row) => (
                0,
                row.scope.tenant.as_str(),
                row.scope.owner(),
                row.id.as_str(),
            ),
            Op::Update { row, .. } => (
                1,
                row.scope.tenant.as_str(),
                row.scope.owner(),
                row.id.as_str(),
            ),
            Op::Acquire { lease, .. } | Op::Release(lease) => {
                (2, lease.instance.as_str(), "", lease.task_id.as_str())
            }
        }
    }
}

/// What a write did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Done {
    /// The task's new version.
    Version(u64),
    /// The stored task is split and the write was not: redo it split (nothing was written).
    NeedsSplit,
    /// A lease write.
    Lease,
}

/// Why a write did not happen.
#[derive(Debug)]
pub(super) enum Failure {
    /// Refused (an existing id, a stale version): nothing was written, the transaction
    /// goes on.
    Refused(StoreError),
    /// The driver failed: the transaction is aborted.
    Driver(StoreError),
}

/// Why a batch's transaction stopped before its commit.
#[derive(Debug)]
pub(super) enum Stop {
    /// The driver failed on job `k`'s own statement: the batch is redone without it.
    Job(usize, StoreError),
    /// The driver failed on a statement serving several jobs: the batch is redone with one
    /// statement per job, which names the job at fault.
    Shared(StoreError),
    /// The transaction could not begin or commit: every job of the batch fails.
    Whole(StoreError),
}

/// A write and where its outcome goes.
pub(super) struct Job {
    pub(super) op: Op,
    reply: oneshot::Sender<Result<Done, StoreError>>,
}

impl Job {
    /// Tells the caller (who may have gone: then nobody hears).
    pub(super) fn answer(self, outcome: Result<Done, StoreError>) {
        let _ = self.reply.send(outcome);
    }
}

/// Commits a batch of jobs and answers each.
pub(super) type RunBatch = Arc<dyn Fn(Vec<Job>) -> BoxFuture<'static, ()> + Send + Sync>;

/// The queue in front of a store's writer tasks.
pub(super) struct Writer {
    /// The queue; `None` until the first write, and replaced when its writers are gone (they
    /// run on the runtime of the first write after a restart of the runtime).
    queue: Mutex<Option<mpsc::Sender<Job>>>,
    run: RunBatch,
    /// Writer tasks (transactions in flight at once).
    writers: usize,
    capacity: usize,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("writers", &self.writers)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Writer {
    /// A queue of `capacity` writes served by `writers` tasks running `run`.
    pub(super) fn new(run: RunBatch, writers: usize, capacity: usize) -> Self {
        Self {
            queue: Mutex::new(None),
            run,
            writers: writers.max(1),
            capacity: capacity.max(1),
        }
    }

    /// Queues `op` (waiting for room while the queue is full) and waits until it is committed
    /// or refused.
    pub(super) async fn submit(&self, op: Op) -> Result<Done, StoreError> {
        let (reply, answer) = oneshot::channel();
        let mut job = Job { op, reply };
        // Twice at most: a queue whose writers stopped (their runtime ended) is replaced once.
        for _ in 0..2 {
            let queue = self.queue();
            match queue.send(job).await {
                Ok(()) => {
                    return answer.await.unwrap_or_else(|_| {
                        Err(StoreError::Backend(
                            "the store's writer stopped before answering".into(),
                        ))
                    });
                }
                Err(mpsc::error::SendError(back)) => {
                    job = back;
                    let mut slot = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                    if slot.as_ref().is_some_and(|q| q.same_channel(&queue)) {
                        *slot = None;
                    }
                }
            }
        }
        Err(StoreError::Backend(
            "the store's writer is not running".into(),
        ))
    }

    /// The queue, with its writers started on this runtime when there is none.
    fn queue(&self) -> mpsc::Sender<Job> {
        let mut slot = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = slot.as_ref().filter(|q| !q.is_closed()) {
            return queue.clone();
        }
        let (queue, jobs) = mpsc::channel(self.capacity);
        let jobs = Arc::new(tokio::sync::Mutex::new(jobs));
        for _ in 0..self.writers {
            tokio::spawn(serve(Arc::clone(&jobs), Arc::clone(&self.run)));
        }
        *slot = Some(queue.clone());
        queue
    }
}

/// One writer task: takes every job waiting (up to [`MAX_BATCH`]) and commits them together,
/// until the queue is dropped.
async fn serve(jobs: Arc<tokio::sync::Mutex<mpsc::Receiver<Job>>>, run: RunBatch) {
    loop {
        let batch = {
            let mut jobs = jobs.lock().await;
            let Some(first) = jobs.recv().await else {
                return;
            };
            // A few rounds of the runtime first: the requests it has ready queue their
            // writes (some need more than one round to get there), which then share this
            // transaction instead of each waiting for the next.
            for _ in 0..GATHER_ROUNDS {
                tokio::task::yield_now().await;
            }
            let mut batch = Vec::with_capacity(jobs.len().min(MAX_BATCH) + 1);
            batch.push(first);
            while batch.len() < MAX_BATCH {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            batch
        };
        run(batch).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn lease(n: u64) -> Lease {
        Lease {
            instance: "i".into(),
            execution: n,
            scope: Scope::default(),
            task_id: TaskId::from(format!("t{n}")),
        }
    }

    #[tokio::test]
    async fn waiting_writes_commit_together_and_the_queue_is_bounded() {
        // The batch runner blocks until released, so that writes pile up behind it.
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let run: RunBatch = {
            let (gate, sizes) = (gate.clone(), sizes.clone());
            Arc::new(move |batch: Vec<Job>| {
                let (gate, sizes) = (gate.clone(), sizes.clone());
                futures::FutureExt::boxed(async move {
                    if let Ok(p) = gate.acquire().await {
                        p.forget();
                    }
                    sizes.lock().unwrap().push(batch.len());
                    for job in batch {
                        job.answer(Ok(Done::Lease));
                    }
                })
            })
        };
        let writer = Arc::new(Writer::new(run, 1, 4));
        let sent = Arc::new(AtomicUsize::new(0));
        let mut calls = Vec::new();
        for n in 0..10 {
            let (writer, sent) = (writer.clone(), sent.clone());
            calls.push(tokio::spawn(async move {
                let done = writer.submit(Op::Release(lease(n))).await;
                sent.fetch_add(1, Ordering::SeqCst);
                done
            }));
            tokio::task::yield_now().await;
        }
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        // One job taken by the blocked writer, four queued; the rest wait for room.
        assert_eq!(sent.load(Ordering::SeqCst), 0);
        assert_eq!(
            writer.queue().capacity(),
            0,
            "the queue is full at its bound"
        );
        gate.add_permits(100);
        for call in calls {
            assert_eq!(call.await.unwrap().unwrap(), Done::Lease);
        }
        let sizes = sizes.lock().unwrap().clone();
        assert_eq!(sizes.iter().sum::<usize>(), 10);
        assert!(
            sizes.iter().any(|&n| n > 1),
            "writes that waited commit together: {sizes:?}"
        );
    }

    #[tokio::test]
    async fn a_writer_whose_runtime_ended_is_replaced() {
        let run: RunBatch = Arc::new(|batch: Vec<Job>| {
            futures::FutureExt::boxed(async move {
                for job in batch {
                    job.answer(Ok(Done::Lease));
                }
            })
        });
        let writer = Arc::new(Writer::new(run, 2, 8));
        let first = writer.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async { first.submit(Op::Release(lease(1))).await.unwrap() });
        })
        .join()
        .unwrap();
        // That runtime is gone, and its writers with it.
        assert_eq!(
            writer.submit(Op::Release(lease(2))).await.unwrap(),
            Done::Lease
        );
    }
}
