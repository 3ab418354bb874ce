//! The error a response answers with, kept on it for the request's log line and metrics.

use actix_web::HttpResponse;

use crate::error::A2aError;

/// The error a binding answered with, kept on the response for the request's log line.
pub(crate) struct Failure {
    pub(crate) code: i32,
    pub(crate) cause: Option<String>,
}

/// Marks `resp` as answering with `error` (read back by the access log and the metrics).
pub(crate) fn mark_failure(resp: &mut HttpResponse, error: &A2aError) {
    // Only when someone listens: the error's text is built for the log line alone.
    let logged = tracing::enabled!(target: "a2a::access", tracing::Level::WARN);
    if logged || cfg!(feature = "metrics") {
        resp.extensions_mut().insert(Failure {
            code: error.code(),
            cause: logged.then(|| error.to_string()),
        });
    }
}
