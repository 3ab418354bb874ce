//! Graceful shutdown: on SIGTERM / Ctrl-C (or [`RunningServer::stop`](super::RunningServer)),
//! the server stops accepting connections and lets open requests finish for its grace period;
//! then every open stream gets a final `event: error` (Unavailable) and every request still
//! waiting (a blocking SendMessage) an Unavailable error response, and the running tasks are
//! canceled or left, as configured.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use tokio_util::sync::CancellationToken;

use crate::error::A2aError;

/// The error open streams and waiting requests get when the grace period is over.
pub(crate) fn shutting_down() -> A2aError {
    A2aError::Unavailable(
        "the server is shutting down; retry against another instance or after it restarts".into(),
    )
}

/// Runs `work` until it completes or the grace period of a shutdown is over (then: Unavailable).
/// The work is polled first: work that completes at once never looks at the token.
pub(crate) async fn until_over<T>(
    over: &CancellationToken,
    work: impl Future<Output = Result<T, A2aError>>,
) -> Result<T, A2aError> {
    let mut work = pin!(work);
    if let Poll::Ready(done) = futures::poll!(work.as_mut()) {
        return done;
    }
    let mut over = pin!(over.cancelled());
    // Once the grace is over, the error wins over work that completes in the same wake-up (a
    // task canceled by the shutdown).
    std::future::poll_fn(|cx| {
        if over.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(shutting_down()));
        }
        work.as_mut().poll(cx)
    })
    .await
}

/// What to wait for: SIGTERM or Ctrl-C (SIGINT).
pub(crate) async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the server");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
