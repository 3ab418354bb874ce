//! The exit codes of each kind of failure, and the help and completions.

use a2a_examples::{DemoAgent, demo_card};
use a2a_runtime::extension::Extension as _;
use a2a_runtime::server::A2aServer;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::*;

async fn raw_server(response: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    url
}

#[tokio::test]
async fn exit_codes_tell_failures_apart() {
    let agent = agent().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let out = a2a(&closed, &["discover"]).await;
    assert_eq!(out.code, 3, "connection refused: {out:?}");

    let out = a2a(&agent.url, &["--timeout", "300ms", "send", "wait"]).await;
    assert_eq!(out.code, 4, "timeout: {out:?}");
    assert!(out.stderr.contains("within 300ms"), "{out:?}");

    let out = a2a(&format!("{}/nowhere", agent.url), &["discover"]).await;
    assert_eq!(out.code, 5, "HTTP 404 without an A2A error: {out:?}");

    let junk = raw_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 8\r\nconnection: close\r\n\r\n{\"name\":",
    )
    .await;
    let out = a2a(&junk, &["discover"]).await;
    assert_eq!(out.code, 6, "invalid response: {out:?}");

    for binding in BINDINGS {
        let out = a2a(&agent.url, &["--binding", binding, "get", "no-such-task"]).await;
        assert_eq!(out.code, 7, "the agent's error: {out:?}");
        assert!(out.stderr.contains("-32001 TASK_NOT_FOUND"), "{out:?}");
        assert!(
            out.stderr.contains(r#""taskId":"no-such-task""#),
            "metadata: {out:?}"
        );
    }

    let signed = A2aServer::builder()
        .card(demo_card())
        .executor(DemoAgent)
        .extension(Signed {})
        .linked_extensions(false)
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let out = a2a(&signed.url(), &["discover"]).await.ok();
    assert!(
        out.stdout
            .contains("https://example.com/ext/signed/v1 (required)"),
        "{out:?}"
    );
    let out = a2a(&signed.url(), &["send", "hi"]).await;
    assert_eq!(out.code, 8, "refused locally: {out:?}");
    assert!(out.stderr.contains("local check"), "{out:?}");
    a2a(&signed.url(), &["--extension", Signed::URI, "send", "hi"])
        .await
        .ok();

    let out = a2a(&agent.url, &["--timeout", "soon", "discover"]).await;
    assert_eq!(out.code, 2, "usage: {out:?}");
    let out = a2a(&agent.url, &["--header", "no colon", "discover"]).await;
    assert_eq!(out.code, 2, "usage: {out:?}");
}

#[tokio::test]
async fn help_documents_exit_codes_and_examples_and_completions_generate() {
    let out = a2a("http://127.0.0.1:9", &["--help"]).await.ok();
    assert!(
        out.stdout.contains("Exit codes:") && out.stdout.contains("Examples:"),
        "{out:?}"
    );
    for command in [
        "discover",
        "send",
        "stream",
        "get",
        "list",
        "cancel",
        "subscribe",
        "push",
        "call",
    ] {
        assert!(
            out.stdout.contains(&format!("  {command} ")),
            "{command}: {}",
            out.stdout
        );
    }
    let out = a2a("http://127.0.0.1:9", &["completions", "bash"])
        .await
        .ok();
    assert!(
        out.stdout.contains("_a2a()"),
        "{}",
        &out.stdout[..out.stdout.len().min(200)]
    );
    let out = a2a("http://127.0.0.1:9", &["completions", "zsh"])
        .await
        .ok();
    assert!(
        out.stdout.starts_with("#compdef a2a"),
        "{}",
        &out.stdout[..out.stdout.len().min(200)]
    );
}
