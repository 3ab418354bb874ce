//! `push receive`: a local webhook receiver (SPEC.md §7.2, Tier 3). It accepts `POST`s whose
//! body is a `StreamResponse` (A2A §4.3.3), answers `200`, and prints each one as an event;
//! with `--token`, a notification without that `A2A-Notification-Token` gets `401`. Requests
//! are bounded (16 KiB of headers, 4 MiB of body, 30 s to arrive) and handled one at a time.

use std::time::Duration;

use a2a_runtime::types::StreamResponse;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::failure::{EXIT_USAGE, Failure, USAGE};
use crate::render::Renderer;

const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = 4 * 1024 * 1024;
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A request as far as the receiver needs it.
struct Request {
    method: String,
    token: Option<String>,
    body: Vec<u8>,
}

/// Runs the receiver until `count` notifications were accepted (or Ctrl-C).
pub(crate) async fn run(
    listen: &str,
    count: Option<u64>,
    token: Option<&str>,
    out: &Renderer,
) -> Result<(), Failure> {
    let listener = TcpListener::bind(listen).await.map_err(|e| {
        Failure::new(
            USAGE,
            EXIT_USAGE,
            format!("could not listen on {listen}: {e}"),
        )
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| Failure::internal(format!("no local address: {e}")))?;
    eprintln!("a2a: listening for push notifications on http://{addr}/");
    let mut accepted = 0u64;
    while count.is_none_or(|c| accepted < c) {
        let (mut socket, _) = tokio::select! {
            conn = listener.accept() => conn.map_err(|e| Failure::internal(format!("accept failed: {e}")))?,
            () = crate::wait::interrupted() => break,
        };
        let request = match tokio::time::timeout(READ_TIMEOUT, read_request(&mut socket)).await {
            Ok(Ok(r)) => r,
            Ok(Err(status)) => {
                respond(&mut socket, status).await;
                continue;
            }
            Err(_) => {
                respond(&mut socket, "408 Request Timeout").await;
                continue;
            }
        };
        if request.method != "POST" {
            respond(&mut socket, "405 Method Not Allowed").await;
            continue;
        }
        if let Some(expected) = token
            && request.token.as_deref() != Some(expected)
        {
            eprintln!("a2a: warning: refused a notification without the expected token");
            respond(&mut socket, "401 Unauthorized").await;
            continue;
        }
        let event: StreamResponse = match serde_json::from_slice(&request.body) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("a2a: warning: refused a notification that is not a StreamResponse: {e}");
                respond(&mut socket, "400 Bad Request").await;
                continue;
            }
        };
        respond(&mut socket, "200 OK").await;
        accepted += 1;
        let mut renderer = Renderer::new(out.is_json(), false);
        renderer.event(&event)?;
    }
    Ok(())
}

async fn respond(socket: &mut TcpStream, status: &str) {
    let reply = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let _ = socket.write_all(reply.as_bytes()).await;
    let _ = socket.shutdown().await;
}

/// Reads one HTTP/1.1 request with a `Content-Length` body; an error is the status to answer.
async fn read_request(socket: &mut TcpStream) -> Result<Request, &'static str> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err("431 Request Header Fields Too Large");
        }
        let mut chunk = [0u8; 4096];
        let n = socket
            .read(&mut chunk)
            .await
            .map_err(|_| "400 Bad Request")?;
        if n == 0 {
            return Err("400 Bad Request");
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| "400 Bad Request")?;
    let mut lines = head.split("\r\n");
    let method = lines
        .next()
        .and_then(|l| l.split_whitespace().next())
        .ok_or("400 Bad Request")?
        .to_owned();
    let mut length = 0usize;
    let mut token = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        match name.as_str() {
            "content-length" => length = value.parse().map_err(|_| "400 Bad Request")?,
            "a2a-notification-token" | "x-a2a-notification-token" => {
                token = Some(value.to_owned());
            }
            "transfer-encoding" => return Err("411 Length Required"),
            _ => {}
        }
    }
    if length > MAX_BODY {
        return Err("413 Payload Too Large");
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = socket
            .read(&mut chunk)
            .await
            .map_err(|_| "400 Bad Request")?;
        if n == 0 {
            return Err("400 Bad Request");
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Ok(Request {
        method,
        token,
        body,
    })
}
