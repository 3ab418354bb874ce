//! A2A v0.3 beside v1.0 (#28), over real HTTP on loopback:
//!
//! - the card: interface URLs without a trailing slash that reach every REST route by plain
//!   concatenation; the user's interfaces kept; a server mounted without `.url()` pointing at
//!   the request's host and the mount path (and our client talking to it); v0.3's members;
//! - a repeated `messageId` refused on both bindings and in v0.3;
//! - v0.3 JSON-RPC on the wire: method names, `kind`, `final`, lowercase states, version
//!   selection, `.protocol_versions(..)`, one task read across versions;
//! - the official v0.3 clients (Python `a2a-sdk` 0.3, `@a2a-js/sdk` 0.3), installed by the test
//!   and pinned (tests/interop/python_v03, tests/interop/js_v03), against our server, and a
//!   task created by either version read, streamed and canceled by the other.
//!
//! One concern per module (one test binary: the link time of a binary per file dominates a test
//! run).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use a2a_runtime::test::{SseReader, within};
use serde_json::{Value, json};

mod card;
mod jsonrpc;
mod rest;
mod sdks;

const CARD: &str = "/.well-known/agent-card.json";

/// A client that sends the test servers' bearer token on every request.
fn http() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        reqwest::header::HeaderValue::from_str(&format!("Bearer {}", a2a_tests::client::TOKEN))
            .unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

fn user(text: &str, id: &str) -> Value {
    json!({"kind": "message", "role": "user", "messageId": id, "parts": [{"kind": "text", "text": text}]})
}

fn user_v1(text: &str, id: &str) -> Value {
    json!({"role": "ROLE_USER", "messageId": id, "parts": [{"text": text}]})
}

/// A JSON-RPC call; `version` is the `A2A-Version` header (none for v0.3 clients).
async fn rpc(
    url: &str,
    version: Option<&str>,
    method: &str,
    params: Value,
) -> (Value, reqwest::header::HeaderMap) {
    let mut req = http()
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}));
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = within(method, req.send()).await.unwrap();
    let headers = resp.headers().clone();
    (resp.json().await.unwrap(), headers)
}

/// The `data:` payloads of an SSE response, to its end.
async fn sse_events(resp: reqwest::Response) -> Vec<Value> {
    let mut frames = SseReader::from_response(resp);
    let mut out = Vec::new();
    while let Some(frame) = within("sse", frames.next_frame()).await {
        out.push(frame.unwrap().json());
    }
    out
}

async fn rpc_stream(url: &str, version: Option<&str>, method: &str, params: Value) -> Vec<Value> {
    let mut req = http()
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params}));
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = within(method, req.send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    sse_events(resp).await
}
