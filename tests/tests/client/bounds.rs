//! What a hostile server can make the client hold: raw TCP servers on `127.0.0.1:0` that send
//! an endless event-stream line, an endless event, an endless body, a body announced as huge,
//! an endless card, a burst of events. Each ends in [`ClientError::TooLarge`] naming what and
//! the configured limit (or, for the burst, every event delivered), never a hang or unbounded
//! memory: the server keeps writing until the client hangs up.

use std::time::Duration;

use a2a_runtime::client::{
    A2aClient, ClientError, ClientLimits, ClientOptions, Reconnect, SendOptions, Target,
};
use a2a_runtime::test::within;
use a2a_runtime::types::{AgentInterface, ProtocolBinding, StreamResponse};
use a2a_tests::client::*;
use futures::StreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// The limits of every client here (small, so a test sends little).
const LIMIT: usize = 64 * 1024;

fn limits() -> ClientLimits {
    ClientLimits {
        max_response_bytes: LIMIT,
        max_sse_line_bytes: LIMIT,
        max_sse_event_bytes: LIMIT,
        max_buffered_events: 4,
    }
}

fn opts() -> ClientOptions {
    ClientOptions {
        timeout: Duration::from_secs(5),
        stream_idle_timeout: Duration::from_secs(5),
        limits: limits(),
        reconnect: Reconnect::never(),
        ..ClientOptions::default()
    }
}

/// A server answering every connection with `head`, then `piece` over and over until the
/// client hangs up (or `pieces` times, when given).
async fn hostile(head: String, piece: Vec<u8>, pieces: Option<usize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let head = head.clone();
            let piece = piece.clone();
            tokio::spawn(async move {
                // The request head (enough for an answer; the body is not read).
                let mut buf = vec![0u8; 16 * 1024];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                if sock.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let mut sent = 0;
                while pieces.is_none_or(|n| sent < n) {
                    if sock.write_all(&piece).await.is_err() {
                        return;
                    }
                    sent += 1;
                }
                let _ = sock.shutdown().await;
            });
        }
    });
    url
}

async fn raw(url: &str, binding: &ProtocolBinding) -> A2aClient {
    let mut card = card("hostile");
    card.supported_interfaces = vec![AgentInterface::new(format!("{url}/"), binding.clone())];
    A2aClient::new(Target::from(card), opts()).await.unwrap()
}

fn too_large(err: &ClientError, what: &str, context: &str) {
    match err {
        ClientError::TooLarge { what: w, limit, .. } => {
            assert!(w.contains(what), "{context}: {err}");
            assert_eq!(*limit, LIMIT, "{context}");
            assert!(err.to_string().contains("limit"), "{context}: {err}");
        }
        other => panic!("{context}: expected TooLarge, got {other:?}"),
    }
}

/// The first item of a stream call: the call's error or the stream's first error.
async fn stream_error(c: &A2aClient) -> ClientError {
    match within("stream", c.stream_message("hi", SendOptions::default())).await {
        Err(e) => e,
        Ok(stream) => {
            let items = within("items", stream.into_inner().collect::<Vec<_>>()).await;
            items
                .into_iter()
                .find_map(Result::err)
                .expect("an error item")
        }
    }
}

#[tokio::test]
async fn an_endless_event_stream_line_is_too_large() {
    let head = http_head_until_close("200 OK", "text/event-stream") + "data: ";
    let url = hostile(head, vec![b'x'; 8192], None).await;
    for binding in BOTH {
        let c = raw(&url, &binding).await;
        too_large(&stream_error(&c).await, "line", &format!("{binding}"));
    }
}

#[tokio::test]
async fn an_endless_event_is_too_large() {
    let head = http_head_until_close("200 OK", "text/event-stream");
    let mut line = b"data: ".to_vec();
    line.extend(std::iter::repeat_n(b'x', 1000));
    line.push(b'\n');
    let url = hostile(head, line, None).await;
    for binding in BOTH {
        let c = raw(&url, &binding).await;
        too_large(&stream_error(&c).await, "event", &format!("{binding}"));
    }
}

#[tokio::test]
async fn an_endless_body_is_too_large() {
    let head = http_head_until_close("200 OK", "application/json") + "[";
    let url = hostile(head, vec![b' '; 8192], None).await;
    for binding in BOTH {
        let c = raw(&url, &binding).await;
        let err = within("get", c.get_task("t-1", None)).await.unwrap_err();
        too_large(&err, "body", &format!("{binding} unary"));
    }
    // The card too.
    let err = within("discover", A2aClient::discover(&url, opts()))
        .await
        .unwrap_err();
    too_large(&err, "body", "card");
}

#[tokio::test]
async fn a_body_announced_larger_than_the_limit_is_refused_before_reading_it() {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        1u64 << 40
    );
    let url = hostile(head, b"{}".to_vec(), Some(1)).await;
    for binding in BOTH {
        let c = raw(&url, &binding).await;
        let err = within("get", c.get_task("t-1", None)).await.unwrap_err();
        too_large(&err, "body", &format!("{binding}"));
        let err = within(
            "stream error body",
            c.stream_message("x", SendOptions::default()),
        )
        .await
        .unwrap_err();
        too_large(
            &err,
            "body",
            &format!("{binding} stream answered with JSON"),
        );
    }
}

#[tokio::test]
async fn a_burst_of_events_is_delivered_whole_through_a_small_buffer() {
    // 2,000 events in one write (the client decodes at most 4 ahead of its reader).
    const N: usize = 2000;
    for binding in BOTH {
        let mut body = http_head_until_close("200 OK", "text/event-stream");
        for i in 0..N {
            let state = if i + 1 == N {
                "TASK_STATE_COMPLETED"
            } else {
                "TASK_STATE_WORKING"
            };
            let event = format!(
                r#"{{"statusUpdate":{{"taskId":"t-1","contextId":"c-1","status":{{"state":"{state}"}},"metadata":{{"n":{i}}}}}}}"#
            );
            let event = match binding {
                ProtocolBinding::JsonRpc => {
                    format!(r#"{{"jsonrpc":"2.0","id":1,"result":{event}}}"#)
                }
                _ => event,
            };
            body.push_str(&format!("id: {}\ndata: {event}\n\n", i + 1));
        }
        let url = hostile(body, Vec::new(), Some(0)).await;
        let c = raw(&url, &binding).await;
        let stream = within("stream", c.resubscribe("t-1"))
            .await
            .unwrap()
            .into_inner();
        let items = within("items", stream.collect::<Vec<_>>()).await;
        assert_eq!(items.len(), N, "{binding}");
        for (i, item) in items.iter().enumerate() {
            let Ok(StreamResponse::StatusUpdate(u)) = item else {
                panic!("{binding}: item {i}: {item:?}");
            };
            assert_eq!(u.metadata["n"], i, "{binding}: in order");
        }
    }
}

#[tokio::test]
async fn an_answer_of_our_server_over_the_limit_is_too_large_on_every_binding() {
    let running = builder("big answers")
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let card = within(
        "discover",
        A2aClient::discover(&running.url(), options(&ProtocolBinding::JsonRpc)),
    )
    .await
    .unwrap()
    .card();
    // The demo agent echoes the text: an answer of more than 20 KiB.
    let text = "word ".repeat(4 * 1024);
    for binding in [
        ProtocolBinding::JsonRpc,
        ProtocolBinding::HttpJson,
        ProtocolBinding::Grpc,
    ] {
        let options = ClientOptions {
            limits: ClientLimits {
                max_response_bytes: 16 * 1024,
                ..ClientLimits::default()
            },
            ..options(&binding)
        };
        let c = A2aClient::new(Target::from(card.clone()), options)
            .await
            .unwrap();
        assert_eq!(c.interface().protocol_binding, binding);
        let small = within("small", c.send_message("hello", SendOptions::default())).await;
        assert!(small.is_ok(), "{binding}: {small:?}");
        let err = within("big", c.send_message(text.as_str(), SendOptions::default()))
            .await
            .unwrap_err();
        match &err {
            ClientError::TooLarge { limit, .. } => assert_eq!(*limit, 16 * 1024, "{binding}"),
            other => panic!("{binding}: expected TooLarge, got {other:?}"),
        }
    }
}
