//! [`Ticket`]: what one admitted request holds of its caller's quotas, given back as the
//! request's outcome shows (a result, a stream's events, the stream's end, an error).

use std::sync::Arc;

use futures::StreamExt as _;

use super::ledger::{Ask, CallerKey, Ledger, Verdict};
use crate::core::{EventStream, OperationResponse};
use crate::error::A2aError;
use crate::types::{SendMessageResponse, StreamResponse, TaskId, TaskState};

/// What a request asks of the quotas, and for whom.
#[derive(Clone, Debug)]
pub(crate) struct Admission {
    pub(crate) key: CallerKey,
    pub(crate) ask: Ask,
}

impl Admission {
    /// Asks the ledger; `Ok(None)` admitted, `Ok(Some(ids))` these tasks are to be looked
    /// up first (see [`Verdict::Recheck`]).
    pub(crate) fn ask(
        &self,
        ledger: &Ledger,
        may_recheck: bool,
    ) -> Result<Option<Vec<TaskId>>, A2aError> {
        match ledger.admit(&self.key, self.ask, may_recheck)? {
            Verdict::Admitted => Ok(None),
            Verdict::Recheck(ids) => Ok(Some(ids)),
        }
    }
}

/// The new task of a request, as far as its outcome shows.
#[derive(Debug, PartialEq, Eq)]
enum NewTask {
    /// Not a new task, or its slot was settled.
    Settled,
    /// Its outcome is not known yet.
    Pending,
}

/// What one admitted request holds: its stream slot, and its new task's slot until the
/// outcome settles it. Dropped unsettled (the request went away), the stream slot is given
/// back and the new task is held for [`Quotas::unsettled_hold`](super::Quotas::unsettled_hold).
#[derive(Debug)]
pub(crate) struct Ticket {
    ledger: Arc<Ledger>,
    key: CallerKey,
    stream: bool,
    tenant: bool,
    new_task: NewTask,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.stream {
            self.ledger.close_stream(&self.key, self.tenant);
        }
        if self.new_task == NewTask::Pending {
            self.ledger.unsettle(&self.key);
        }
    }
}

impl Ticket {
    /// The ticket of a request admitted as `admission`.
    pub(crate) fn new(ledger: Arc<Ledger>, admission: Admission) -> Self {
        Self {
            ledger,
            stream: admission.ask.stream,
            tenant: admission.ask.tenant,
            new_task: if admission.ask.new_task {
                NewTask::Pending
            } else {
                NewTask::Settled
            },
            key: admission.key,
        }
    }

    /// Settles the ticket with the request's outcome: a failure gives everything back; a
    /// unary result tells whether its task lives on; a stream carries the ticket until it
    /// ends or its client goes away.
    pub(crate) fn settle(
        mut self,
        outcome: Result<OperationResponse, A2aError>,
    ) -> Result<OperationResponse, A2aError> {
        let served = match outcome {
            Ok(served) => served,
            Err(e) => {
                self.settle_new(None);
                return Err(e);
            }
        };
        match served.into_stream() {
            Ok((events, activated)) => {
                let watched: EventStream = Box::pin(events.map(move |item| {
                    if let Ok(ev) = &item {
                        self.observe(&ev.event);
                    }
                    item
                }));
                Ok(OperationResponse::of_stream(watched, activated))
            }
            Err(unary) => {
                match unary.response() {
                    crate::core::A2aResponse::SendMessage(SendMessageResponse::Task(t)) => {
                        self.seen(&t.id, t.status.state);
                    }
                    crate::core::A2aResponse::Task(t) => self.seen(&t.id, t.status.state),
                    _ => self.settle_new(None),
                }
                Ok(unary)
            }
        }
    }

    /// A stream's event.
    fn observe(&mut self, event: &StreamResponse) {
        match event {
            StreamResponse::Task(t) => self.seen(&t.id, t.status.state),
            StreamResponse::StatusUpdate(e) => self.seen(&e.task_id, e.status.state),
            StreamResponse::ArtifactUpdate(e) => {
                if self.new_task == NewTask::Pending {
                    self.seen(&e.task_id, TaskState::Working);
                }
            }
            // A direct reply: no task.
            StreamResponse::Message(_) => self.settle_new(None),
        }
    }

    /// Task `id` was seen in `state`.
    fn seen(&mut self, id: &TaskId, state: TaskState) {
        let ended = state.is_terminal();
        if self.new_task == NewTask::Pending {
            self.new_task = NewTask::Settled;
            self.ledger.settle(&self.key, (!ended).then(|| id.clone()));
        } else if ended {
            self.ledger.ended(&self.key, std::slice::from_ref(id));
        }
    }

    /// The new task, if any, is known: live as `id`, or not.
    fn settle_new(&mut self, id: Option<TaskId>) {
        if self.new_task == NewTask::Pending {
            self.new_task = NewTask::Settled;
            self.ledger.settle(&self.key, id);
        }
    }
}
