//! Servers that break the protocol, written as raw TCP servers on `127.0.0.1:0` sending canned
//! HTTP bytes: malformed JSON, truncated SSE (mid-event, and cleanly closed before a final
//! state), wrong content types, an HTML error page, and a server that never answers. Each gives
//! a clear `ClientError` of the right kind (invalid response, HTTP status, timeout, transport)
//! within the configured timeout (1 s here) — never a panic or a hang.

use std::time::{Duration, Instant};

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientError, ClientOptions, Reconnect, SendOptions, Target};
use a2a_runtime::types::{AgentInterface, ProtocolBinding, StreamResponse};
use a2a_tests::client::*;
use futures::StreamExt as _;

/// The configured timeout of every client here.
const CONFIGURED: Duration = Duration::from_secs(1);
/// The bound the tests hold a call to (the configured timeout plus slack for a loaded machine).
const BOUND: Duration = Duration::from_secs(5);

const TASK: &str = r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}"#;

fn opts() -> ClientOptions {
    ClientOptions {
        timeout: CONFIGURED,
        stream_idle_timeout: CONFIGURED,
        // One answer, one error: a send is not sent again here (see the retry module).
        reconnect: Reconnect::never(),
        ..ClientOptions::default()
    }
}

/// A client for the raw server at `url`, speaking `binding` (no card request).
async fn raw_client(url: &str, binding: &ProtocolBinding) -> A2aClient {
    let mut card = card("bad server");
    card.supported_interfaces = vec![AgentInterface::new(format!("{url}/"), binding.clone())];
    A2aClient::new(Target::from(card), opts()).await.unwrap()
}

/// Runs `f`, failing if it takes longer than [`BOUND`]; returns its output.
async fn bounded<F: std::future::Future>(what: &str, f: F) -> F::Output {
    let start = Instant::now();
    let out = tokio::time::timeout(BOUND, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no result within {BOUND:?} (a hang)"));
    assert!(start.elapsed() < BOUND, "{what}");
    out
}

/// The kinds of failure a bad server causes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Invalid,
    Http,
    Timeout,
    Transport,
}

/// Asserts `err` is of `kind`, says `needle`, and converts to InvalidAgentResponse.
fn failed(err: &ClientError, kind: Kind, what: &str, needle: &str) {
    let actual = match err {
        ClientError::InvalidResponse(_) => Kind::Invalid,
        ClientError::Http { .. } => Kind::Http,
        ClientError::Timeout { .. } => Kind::Timeout,
        ClientError::Transport { .. } => Kind::Transport,
        other => panic!("{what}: not a bad-server error: {other:?}"),
    };
    assert_eq!(actual, kind, "{what}: {err:?}");
    let m = err.to_string();
    assert!(
        m.to_lowercase().contains(&needle.to_lowercase()),
        "{what}: the message should say {needle:?}: {m}"
    );
    assert_eq!(A2aError::from(err.clone()).code(), -32006, "{what}");
}

fn invalid_response(err: &ClientError, what: &str, needle: &str) {
    failed(err, Kind::Invalid, what, needle);
}

/// The JSON-RPC result wrapper, or the bare REST body.
fn result(binding: &ProtocolBinding, body: &str) -> String {
    match binding {
        ProtocolBinding::JsonRpc => format!(r#"{{"jsonrpc":"2.0","id":1,"result":{body}}}"#),
        _ => body.to_owned(),
    }
}

fn sse_event(binding: &ProtocolBinding, body: &str) -> String {
    format!("data: {}\n\n", result(binding, body))
}

#[tokio::test]
async fn malformed_json_is_an_invalid_agent_response() {
    for binding in BOTH {
        let srv = RawServer::start(vec![Answer::Bytes(http(
            "200 OK",
            "application/json",
            r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"#,
        ))])
        .await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("malformed", c.get_task("t-1", None))
            .await
            .unwrap_err();
        invalid_response(&err, &format!("{binding} malformed JSON"), "malformed JSON");
    }
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_an_invalid_agent_response() {
    for binding in BOTH {
        let srv = RawServer::start(vec![Answer::Bytes(http(
            "200 OK",
            "application/json",
            &result(&binding, r#"{"id":42,"status":"done"}"#),
        ))])
        .await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("shape", c.get_task("t-1", None)).await.unwrap_err();
        invalid_response(&err, &format!("{binding} wrong shape"), "does not fit");
    }
}

#[tokio::test]
async fn a_stream_cut_in_the_middle_of_an_event_ends_with_an_error() {
    for binding in BOTH {
        let bytes = format!(
            "{}{}data: {}",
            http_head_until_close("200 OK", "text/event-stream"),
            sse_event(&binding, &format!(r#"{{"task":{TASK}}}"#)),
            &result(&binding, r#"{"statusUpdate":{"taskId":"t-1","#),
        );
        let srv = RawServer::start(vec![Answer::Bytes(bytes.into_bytes())]).await;
        let c = raw_client(&srv.url, &binding).await;
        let stream = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .unwrap()
            .into_inner();
        let items = bounded("items", stream.collect::<Vec<_>>()).await;
        assert_eq!(
            items.len(),
            2,
            "{binding}: the task, then the error: {items:?}"
        );
        assert!(matches!(items[0], Ok(StreamResponse::Task(_))), "{binding}");
        invalid_response(
            items[1].as_ref().unwrap_err(),
            &format!("{binding} cut mid-event"),
            "middle of an event",
        );
    }
}

#[tokio::test]
async fn a_stream_closed_before_a_final_state_ends_with_an_error() {
    for binding in BOTH {
        let bytes = format!(
            "{}: keep-alive\n\n{}{}",
            http_head_until_close("200 OK", "text/event-stream"),
            sse_event(&binding, &format!(r#"{{"task":{TASK}}}"#)),
            sse_event(
                &binding,
                r#"{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}"#
            ),
        );
        let srv = RawServer::start(vec![Answer::Bytes(bytes.into_bytes())]).await;
        let c = raw_client(&srv.url, &binding).await;
        let stream = bounded("stream", c.resubscribe("t-1"))
            .await
            .unwrap()
            .into_inner();
        let items = bounded("items", stream.collect::<Vec<_>>()).await;
        assert_eq!(items.len(), 3, "{binding}: {items:?}");
        assert!(matches!(items[0], Ok(StreamResponse::Task(_))));
        assert!(matches!(items[1], Ok(StreamResponse::StatusUpdate(_))));
        invalid_response(
            items[2].as_ref().unwrap_err(),
            &format!("{binding} closed early"),
            "before the task reached a final",
        );
    }
}

#[tokio::test]
async fn a_stream_closed_without_any_event_is_the_calls_error() {
    for binding in BOTH {
        let bytes = format!(
            "{}: nothing to say\n\n",
            http_head_until_close("200 OK", "text/event-stream")
        );
        let srv = RawServer::start(vec![Answer::Bytes(bytes.into_bytes())]).await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .expect_err("an error, not an empty stream");
        invalid_response(&err, &format!("{binding} empty stream"), "ended");
    }
}

#[tokio::test]
async fn a_malformed_stream_event_is_an_error_item() {
    for binding in BOTH {
        let bytes = format!(
            "{}{}data: {{not json\n\n",
            http_head_until_close("200 OK", "text/event-stream"),
            sse_event(&binding, &format!(r#"{{"task":{TASK}}}"#)),
        );
        let srv = RawServer::start(vec![Answer::Bytes(bytes.into_bytes())]).await;
        let c = raw_client(&srv.url, &binding).await;
        let stream = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .unwrap()
            .into_inner();
        let items = bounded("items", stream.collect::<Vec<_>>()).await;
        assert_eq!(items.len(), 2, "{binding}: {items:?}");
        invalid_response(
            items[1].as_ref().unwrap_err(),
            &format!("{binding} bad event"),
            "not JSON",
        );
    }
}

#[tokio::test]
async fn a_wrong_content_type_is_an_invalid_agent_response() {
    for binding in BOTH {
        let body = result(&binding, TASK);
        // A unary call answered with text/plain.
        let srv = RawServer::start(vec![Answer::Bytes(http("200 OK", "text/plain", &body))]).await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("unary", c.get_task("t-1", None)).await.unwrap_err();
        invalid_response(&err, &format!("{binding} text/plain"), "text/plain");

        // A stream answered with a JSON body instead of an event stream.
        let srv = RawServer::start(vec![Answer::Bytes(http(
            "200 OK",
            "application/json",
            &result(&binding, &format!(r#"{{"task":{TASK}}}"#)),
        ))])
        .await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .expect_err("not an event stream");
        invalid_response(
            &err,
            &format!("{binding} JSON instead of SSE"),
            "instead of an event stream",
        );
    }
}

#[tokio::test]
async fn an_html_error_page_is_an_invalid_agent_response() {
    let page = "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head>\
                <body><h1>Internal Server Error</h1><p>upstream exploded</p></body></html>";
    for binding in BOTH {
        let srv = RawServer::start(vec![Answer::Bytes(http(
            "500 Internal Server Error",
            "text/html; charset=utf-8",
            page,
        ))])
        .await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("unary", c.send_message("hi", SendOptions::default()))
            .await
            .unwrap_err();
        failed(&err, Kind::Http, &format!("{binding} HTML 500"), "HTTP 500");
        failed(
            &err,
            Kind::Http,
            &format!("{binding} HTML 500"),
            "upstream exploded",
        );
        assert!(
            matches!(&err, ClientError::Http { status: 500, .. }),
            "{err:?}"
        );
        let err = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .expect_err("an HTML page is no stream");
        failed(
            &err,
            Kind::Http,
            &format!("{binding} HTML 500 stream"),
            "500",
        );
    }
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    for binding in BOTH {
        let srv = RawServer::start(vec![Answer::Silence]).await;
        let c = raw_client(&srv.url, &binding).await;
        let start = Instant::now();
        let err = bounded("unary", c.get_task("t-1", None)).await.unwrap_err();
        assert!(
            start.elapsed() >= CONFIGURED,
            "{binding}: waited the timeout"
        );
        failed(&err, Kind::Timeout, &format!("{binding} silent"), "within");

        let err = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .expect_err("a silent server gives no stream");
        failed(
            &err,
            Kind::Timeout,
            &format!("{binding} silent stream"),
            "within",
        );

        let err = bounded("resubscribe", c.resubscribe("t-1"))
            .await
            .expect_err("a silent server gives no stream");
        failed(
            &err,
            Kind::Timeout,
            &format!("{binding} silent resubscribe"),
            "within",
        );
    }
}

#[tokio::test]
async fn a_stream_that_goes_silent_ends_with_an_error() {
    for binding in BOTH {
        let bytes = format!(
            "{}{}",
            http_head_until_close("200 OK", "text/event-stream"),
            sse_event(&binding, &format!(r#"{{"task":{TASK}}}"#)),
        );
        let srv = RawServer::start(vec![Answer::BytesThenSilence(bytes.into_bytes())]).await;
        let c = raw_client(&srv.url, &binding).await;
        let stream = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .unwrap()
            .into_inner();
        let items = bounded("items", stream.collect::<Vec<_>>()).await;
        assert_eq!(items.len(), 2, "{binding}: {items:?}");
        failed(
            items[1].as_ref().unwrap_err(),
            Kind::Timeout,
            &format!("{binding} silent stream"),
            "within",
        );
    }
}

#[tokio::test]
async fn a_body_that_never_completes_times_out() {
    for binding in BOTH {
        // The head promises 1000 bytes; a few arrive, then nothing.
        let bytes = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"jsonrpc\"".to_vec();
        let srv = RawServer::start(vec![Answer::BytesThenSilence(bytes)]).await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("unary", c.get_task("t-1", None)).await.unwrap_err();
        failed(&err, Kind::Timeout, &format!("{binding} stalled body"), "");

        // The same for a stream call answered with (stalled) JSON instead of an event stream.
        let bytes = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"error\"".to_vec();
        let srv = RawServer::start(vec![Answer::BytesThenSilence(bytes)]).await;
        let c = raw_client(&srv.url, &binding).await;
        let err = bounded("stream", c.stream_message("hi", SendOptions::default()))
            .await
            .expect_err("a stalled error body gives no stream");
        failed(
            &err,
            Kind::Timeout,
            &format!("{binding} stalled stream error body"),
            "",
        );
    }
}

#[tokio::test]
async fn bad_cards_are_clear_errors() {
    let cases = [
        (
            "malformed",
            Answer::Bytes(http("200 OK", "application/json", "{\"name\":")),
            Kind::Invalid,
            "not valid",
        ),
        (
            "html",
            Answer::Bytes(http(
                "500 Internal Server Error",
                "text/html",
                "<html>oops</html>",
            )),
            Kind::Http,
            "500",
        ),
        ("silent", Answer::Silence, Kind::Timeout, "within"),
    ];
    for (what, answer, kind, needle) in cases {
        let srv = RawServer::start(vec![answer]).await;
        let err = bounded(what, A2aClient::discover(&srv.url, opts()))
            .await
            .unwrap_err();
        failed(&err, kind, &format!("card: {what}"), needle);
    }
}

#[tokio::test]
async fn a_refused_connection_is_a_clear_error() {
    // Bind, learn the port, close: nothing listens there any more.
    let addr = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let c = raw_client(&format!("http://{addr}"), &ProtocolBinding::JsonRpc).await;
    let err = bounded("refused", c.get_task("t-1", None))
        .await
        .unwrap_err();
    failed(&err, Kind::Transport, "refused", "failed");
}
