//! Waiting for a task (SPEC.md §7.3): every wait races `--timeout` and Ctrl-C, polling backs off
//! from `--poll-interval` to four times it, and a wait that stops early names the task and the
//! command that resumes it.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use a2a_runtime::client::A2aClient;
use a2a_runtime::types::{Task, TaskState};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::agent;
use crate::args::Global;
use crate::failure::{EXIT_INTERRUPTED, EXIT_TIMEOUT, Failure, INTERNAL, TIMEOUT};

/// Why a wait stopped before its end.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stop {
    Timeout,
    Interrupted,
}

/// What is known of the task being waited on.
#[derive(Clone, Debug)]
pub(crate) struct Known {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    pub(crate) state: TaskState,
}

impl Known {
    pub(crate) fn of(task: &Task) -> Self {
        Self {
            task_id: task.id.to_string(),
            context_id: task.context_id.to_string(),
            state: task.status.state,
        }
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INTERRUPT: Notify = Notify::const_new();

/// Listens for Ctrl-C for the whole run, so that one arriving between two waits is not lost.
pub(crate) fn listen_for_ctrl_c() {
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            INTERRUPTED.store(true, Ordering::SeqCst);
            INTERRUPT.notify_waiters();
        }
    });
}

/// Resolves once Ctrl-C was pressed (at any time since the run started).
pub(crate) async fn interrupted() {
    loop {
        let notified = INTERRUPT.notified();
        if INTERRUPTED.load(Ordering::SeqCst) {
            return;
        }
        notified.await;
    }
}

/// Races futures against the deadline and Ctrl-C.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiter {
    deadline: Option<Instant>,
}

impl Waiter {
    pub(crate) fn new(timeout: Option<Duration>) -> Self {
        Self {
            deadline: timeout.map(|t| Instant::now() + t),
        }
    }

    pub(crate) async fn run<F: Future>(&self, f: F) -> Result<F::Output, Stop> {
        let deadline = async {
            match self.deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            out = f => Ok(out),
            () = deadline => Err(Stop::Timeout),
            () = interrupted() => Err(Stop::Interrupted),
        }
    }
}

/// The failure of a wait that stopped, naming the task when it is known.
pub(crate) fn stopped(stop: Stop, known: Option<&Known>) -> Failure {
    let what = match known {
        Some(k) => format!(
            "task {} (context {}) is still {}",
            k.task_id,
            k.context_id,
            k.state.as_str()
        ),
        None => "no task id was received yet".into(),
    };
    let mut f = match stop {
        Stop::Timeout => Failure::new(
            TIMEOUT,
            EXIT_TIMEOUT,
            format!("--timeout expired before a terminal state: {what}"),
        ),
        Stop::Interrupted => Failure::new(
            INTERNAL,
            EXIT_INTERRUPTED,
            format!("interrupted while waiting: {what}"),
        ),
    };
    if let Some(k) = known {
        f = f.hint(format!("a2a task get --wait {}", k.task_id));
    }
    f
}

/// Tells the caller (stderr) which task is being waited on and how to come back to it.
pub(crate) fn announce(k: &Known) {
    eprintln!(
        "a2a: waiting on task {} (context {}), {}; Ctrl-C stops waiting, then: a2a task get --wait {}",
        k.task_id,
        k.context_id,
        k.state.as_str(),
        k.task_id
    );
}

/// Names an outcome that is not a success on stderr (the exit status stays 0: the CLI did its
/// job; the outcome is the task's state).
pub(crate) fn warn_outcome(state: TaskState) {
    match state {
        TaskState::Failed | TaskState::Rejected | TaskState::Canceled => {
            eprintln!("a2a: warning: the task ended {}", state.as_str());
        }
        TaskState::InputRequired | TaskState::AuthRequired => {
            eprintln!(
                "a2a: warning: the task waits for the caller: {}",
                state.as_str()
            );
        }
        _ => {}
    }
}

fn settled(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

/// Polls a task until it is terminal or interrupted (an unspecified state keeps polling).
pub(crate) async fn poll(
    g: &Global,
    client: &A2aClient,
    waiter: &Waiter,
    task_id: &str,
    history: Option<i32>,
    mut known: Option<Known>,
) -> Result<Task, Failure> {
    let mut interval = g.poll_interval;
    let longest = g.poll_interval * 4;
    let mut announced = known.is_some();
    loop {
        let task = waiter
            .run(client.get_task(task_id, history))
            .await
            .map_err(|s| stopped(s, known.as_ref()))?
            .map_err(agent::fail(g))?
            .into_inner();
        agent::debug(
            g,
            &format!("poll: task {task_id} is {}", task.status.state.as_str()),
        );
        if settled(task.status.state) {
            return Ok(task);
        }
        let k = Known::of(&task);
        if !announced {
            announce(&k);
            announced = true;
        }
        known = Some(k);
        waiter
            .run(tokio::time::sleep(interval))
            .await
            .map_err(|s| stopped(s, known.as_ref()))?;
        interval = (interval * 3 / 2).min(longest);
    }
}

/// Whether a task in `state` is done being waited on.
pub(crate) fn is_settled(state: TaskState) -> bool {
    settled(state)
}
