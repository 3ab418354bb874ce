//! Sends whose answer was lost: a blocking SendMessage (and a SendStreamingMessage before its
//! first event) is sent again, the same request with the same `messageId`, so a server that
//! keeps sends exactly once answers with the task the first one started (see
//! [`Reconnect`](super::Reconnect)).

use std::future::Future;

use super::error::ClientError;
use super::options::Reconnect;
use crate::protocol::A2aRequest;

/// May `req` be sent again after its answer was lost? Only a send whose message carries an
/// id: the id is what makes the repeat the same send to the server.
pub(super) fn repeatable(req: &A2aRequest) -> bool {
    match req {
        A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => {
            !r.message.message_id.as_str().is_empty()
        }
        _ => false,
    }
}

/// Did the answer get lost on the way (rather than the server giving one)? A connection
/// that broke or timed out, or a proxy saying the server is unreachable (HTTP 502, 503, 504
/// without an A2A error; on gRPC a bare UNAVAILABLE, which is a transport error here).
pub(super) fn lost(e: &ClientError) -> bool {
    match e {
        ClientError::Transport { .. } | ClientError::Timeout { .. } => true,
        ClientError::Http { status, .. } => matches!(status, 502..=504),
        _ => false,
    }
}

/// How an attempt of a send failed.
pub(super) enum Failure {
    /// The answer was lost on the way: the send may go again.
    Lost(ClientError),
    /// The server answered (or the client refused): final.
    Answered(ClientError),
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        if lost(&e) {
            Self::Lost(e)
        } else {
            Self::Answered(e)
        }
    }
}

/// Runs `attempt` until it gives an answer, sending `req` again (as `policy` allows, with its
/// backoff) while its answer is lost and `req` may repeat; the error of the last attempt
/// otherwise.
pub(super) async fn repeating<T, F, Fut>(
    policy: Reconnect,
    req: &A2aRequest,
    mut attempt: F,
) -> Result<T, ClientError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failure>>,
{
    let allowed = if repeatable(req) {
        policy.max_attempts
    } else {
        0
    };
    let mut done = 0;
    loop {
        let error = match attempt().await {
            Ok(answer) => return Ok(answer),
            Err(Failure::Answered(e)) => return Err(e),
            Err(Failure::Lost(e)) if done >= allowed => return Err(e),
            Err(Failure::Lost(e)) => e,
        };
        done += 1;
        tracing::debug!(
            operation = %req.operation(),
            attempt = done,
            error = %error,
            "the answer to a send was lost; sending it again with the same message id"
        );
        tokio::time::sleep(policy.backoff(done)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, SendMessageRequest};

    fn send(message: Message) -> A2aRequest {
        A2aRequest::SendMessage(SendMessageRequest {
            message,
            ..SendMessageRequest::default()
        })
    }

    #[test]
    fn only_sends_with_a_message_id_repeat() {
        assert!(repeatable(&send(Message::user_text("hi"))));
        let mut anonymous = Message::user_text("hi");
        anonymous.message_id = Default::default();
        assert!(!repeatable(&send(anonymous)));
    }

    #[test]
    fn answers_are_never_lost_answers() {
        let http = |status| ClientError::Http {
            url: "u".into(),
            status,
            body: String::new(),
        };
        assert!(lost(&http(502)) && lost(&http(503)) && lost(&http(504)));
        assert!(!lost(&http(500)) && !lost(&http(404)) && !lost(&http(429)));
        assert!(!lost(&ClientError::InvalidResponse("x".into())));
        assert!(!lost(&ClientError::Local(crate::A2aError::Internal(
            "x".into()
        ))));
    }

    #[tokio::test]
    async fn attempts_are_bounded_by_the_policy() {
        let policy = Reconnect {
            max_attempts: 3,
            initial_backoff: std::time::Duration::ZERO,
            max_backoff: std::time::Duration::ZERO,
        };
        let req = send(Message::user_text("hi"));
        let mut calls = 0;
        let out: Result<(), _> = repeating(policy, &req, || {
            calls += 1;
            async {
                Err(Failure::from(ClientError::Http {
                    url: "u".into(),
                    status: 503,
                    body: String::new(),
                }))
            }
        })
        .await;
        assert!(out.is_err());
        assert_eq!(calls, 4, "the call and 3 more");
    }
}
