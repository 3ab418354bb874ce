//! Protocol plumbing over real HTTP: `A2A-Version` negotiation (#87-#90), content types, the
//! JSON-RPC 2.0 envelope (#80-#84, #98), and the REST error shape (#84).

use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::{Value, json};

fn envelope(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A JSON-RPC ListTasks POSTed with `content_type` gets a result.
async fn assert_jsonrpc_served(server: &TestServer, content_type: &str) {
    let reply = server
        .post_raw(
            "/",
            content_type,
            envelope(json!(1), "ListTasks", json!({})),
            Some("1.0"),
        )
        .await;
    assert!(reply.json().get("result").is_some(), "{}", reply.text);
}

/// #87 #90: a request without `A2A-Version` (or with an empty one) is read as 0.3 and refused
/// with VersionNotSupported — JSON-RPC -32009, REST 400 FAILED_PRECONDITION — before anything
/// runs; the message tells the client to send `A2A-Version: 1.0`.
#[tokio::test]
async fn missing_version_is_version_not_supported_87_90() {
    let (server, _control) = scripted().await;
    for version in [None, Some(""), Some("  ")] {
        let reply = server
            .post_raw(
                "/",
                "application/json",
                envelope(json!(1), "SendMessage", msg("hi")),
                version,
            )
            .await;
        assert_eq!(reply.header("a2a-version"), Some("1.0"));
        let err = ErrorAnswer::parse(Binding::JsonRpc, reply.status, reply.json());
        err.assert_a2a("VERSION_NOT_SUPPORTED", -32009, 400, "FAILED_PRECONDITION");
        assert_eq!(err.meta("requestedVersion"), Some("0.3"));
        assert_eq!(err.meta("supportedVersions"), Some("1.0"));
        assert!(
            err.message.contains("send A2A-Version: 1.0"),
            "the message names the header to send: {}",
            err.message
        );
        assert_eq!(err.body["id"], 1);

        let reply = server
            .post_raw(
                "/message:send",
                "application/a2a+json",
                msg("hi").to_string(),
                version,
            )
            .await;
        let err = ErrorAnswer::parse(Binding::Rest, reply.status, reply.json());
        err.assert_a2a("VERSION_NOT_SUPPORTED", -32009, 400, "FAILED_PRECONDITION");
        assert_eq!(err.meta("requestedVersion"), Some("0.3"));
        assert_eq!(err.meta("supportedVersions"), Some("1.0"));
    }
    let reply = server
        .send(server.http().get(format!("{}/tasks", server.url())))
        .await;
    ErrorAnswer::parse(Binding::Rest, reply.status, reply.json()).assert_a2a(
        "VERSION_NOT_SUPPORTED",
        -32009,
        400,
        "FAILED_PRECONDITION",
    );
    let list = server.ok(Binding::Rest, "ListTasks", json!({})).await;
    assert_eq!(list["totalSize"], 0, "nothing ran");
}

/// #89: a version the interface does not serve (99.0, 0.3) is VersionNotSupported naming the
/// requested version and listing `supportedVersions` "1.0".
#[tokio::test]
async fn unsupported_version_is_refused_with_supported_versions_89() {
    let (server, _control) = scripted().await;
    for v in ["99.0", "0.3", "2.0"] {
        let reply = server
            .post_raw(
                "/",
                "application/json",
                envelope(json!("v"), "ListTasks", json!({})),
                Some(v),
            )
            .await;
        let err = ErrorAnswer::parse(Binding::JsonRpc, reply.status, reply.json());
        err.assert_a2a("VERSION_NOT_SUPPORTED", -32009, 400, "FAILED_PRECONDITION");
        assert_eq!(err.meta("requestedVersion"), Some(v));
        assert_eq!(err.meta("supportedVersions"), Some("1.0"));

        let reply = server
            .send(
                server
                    .http()
                    .get(format!("{}/tasks", server.url()))
                    .header("A2A-Version", v),
            )
            .await;
        assert!(matches!(
            reply.media_type().as_str(),
            "application/json" | "application/a2a+json"
        ));
        let err = ErrorAnswer::parse(Binding::Rest, reply.status, reply.json());
        err.assert_a2a("VERSION_NOT_SUPPORTED", -32009, 400, "FAILED_PRECONDITION");
        assert_eq!(err.meta("requestedVersion"), Some(v));
        assert_eq!(err.meta("supportedVersions"), Some("1.0"));
    }
}

/// #87 #88 (A23): the `A2A-Version` query parameter is accepted on both bindings; a patch number
/// is ignored; every response carries `A2A-Version: 1.0`.
#[tokio::test]
async fn version_query_parameter_and_patch_numbers_87_88() {
    let (server, _control) = scripted().await;
    let reply = server
        .post_raw(
            "/?A2A-Version=1.0",
            "application/json",
            envelope(json!(1), "SendMessage", msg("hi")),
            None,
        )
        .await;
    assert_eq!(reply.header("a2a-version"), Some("1.0"));
    assert_eq!(
        text(&task_of(&reply.json()["result"])["artifacts"][0]),
        "echo: hi"
    );

    let reply = server
        .post_raw(
            "/message:send?A2A-Version=1.0",
            "application/a2a+json",
            msg("hi").to_string(),
            None,
        )
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("a2a-version"), Some("1.0"));
    let reply = server
        .send(
            server
                .http()
                .get(format!("{}/tasks?A2A-Version=1.0&pageSize=1", server.url())),
        )
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        reply.json()["pageSize"],
        1,
        "other query parameters still apply"
    );

    for patch in ["1.0.3", "1.0.0"] {
        let reply = server
            .post_raw(
                "/",
                "application/json",
                envelope(json!(2), "ListTasks", json!({})),
                Some(patch),
            )
            .await;
        assert!(
            reply.json().get("result").is_some(),
            "{patch}: {}",
            reply.text
        );
        assert_eq!(
            reply.header("a2a-version"),
            Some("1.0"),
            "no patch in responses"
        );
    }
}

/// Content type (§6.3): JSON-RPC with `text/plain` (or none) is ContentTypeNotSupported (-32005)
/// — checked before the body is parsed, since the invalid body does not give -32700.
#[tokio::test]
async fn jsonrpc_content_type_checked_before_parsing() {
    let (server, _control) = scripted().await;
    for ct in [Some("text/plain"), Some("application/xml"), None] {
        let mut req = server
            .http()
            .post(format!("{}/", server.url()))
            .header("A2A-Version", "1.0")
            .body("this is { not JSON");
        if let Some(ct) = ct {
            req = req.header("content-type", ct);
        }
        let reply = server.send(req).await;
        let err = ErrorAnswer::parse(Binding::JsonRpc, reply.status, reply.json());
        err.assert_a2a(
            "CONTENT_TYPE_NOT_SUPPORTED",
            -32005,
            400,
            "INVALID_ARGUMENT",
        );
        assert_eq!(err.body["id"], Value::Null);
    }
    assert_jsonrpc_served(&server, "application/json; charset=utf-8").await;
}

/// The JSON-RPC endpoint takes POST only: any other method is 405 with `Allow: POST`, with or
/// without the trailing slash, and runs nothing.
#[tokio::test]
async fn jsonrpc_endpoint_answers_other_methods_with_405() {
    let (server, _control) = scripted().await;
    for path in ["", "/"] {
        for method in [
            reqwest::Method::GET,
            reqwest::Method::PUT,
            reqwest::Method::DELETE,
        ] {
            let reply = server
                .send(
                    server
                        .http()
                        .request(method.clone(), format!("{}{path}", server.url()))
                        .header("A2A-Version", "1.0"),
                )
                .await;
            assert_eq!(reply.status, 405, "{method} {path:?}: {}", reply.text);
            assert_eq!(reply.header("allow"), Some("POST"), "{method} {path:?}");
        }
    }
    // POST is served.
    assert_jsonrpc_served(&server, "application/json").await;
}

/// Content type (§5.3, §6.3): REST with `text/plain` is ContentTypeNotSupported (400
/// INVALID_ARGUMENT), before parsing; `application/json` is accepted beside `application/a2a+json`.
#[tokio::test]
async fn rest_content_type_checked_before_parsing() {
    let (server, _control) = scripted().await;
    let reply = server
        .post_raw(
            "/message:send",
            "text/plain",
            "this is { not JSON",
            Some("1.0"),
        )
        .await;
    let err = ErrorAnswer::parse(Binding::Rest, reply.status, reply.json());
    err.assert_a2a(
        "CONTENT_TYPE_NOT_SUPPORTED",
        -32005,
        400,
        "INVALID_ARGUMENT",
    );
    let reply = server
        .post_raw(
            "/message:send",
            "application/json",
            msg("hi").to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.media_type(), "application/a2a+json");
}

/// JSON-RPC 2.0: the id is echoed exactly — strings, numbers (beyond 64 bits too), null —
/// on results and on errors.
#[tokio::test]
async fn jsonrpc_ids_echoed_exactly_98() {
    let (server, _control) = scripted().await;
    let ids = [
        r#""abc""#,
        r#""""#,
        r#""ünï\u00e7ode""#,
        "42",
        "0",
        "-7",
        "1.5",
        "123456789012345678901234567890",
        "1e3",
        "null",
    ];
    for raw in ids {
        for method in ["ListTasks", "NoSuchMethod"] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"{method}","params":{{}}}}"#);
            let reply = server
                .post_raw("/", "application/json", body, Some("1.0"))
                .await;
            assert_eq!(reply.status, 200);
            assert!(
                reply.text.contains(&format!(r#""id":{raw},"#)),
                "id {raw} echoed byte for byte: {}",
                reply.text
            );
        }
    }
    for bad in ["true", "{}", "[1]"] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{bad},"method":"ListTasks"}}"#);
        let reply = server
            .post_raw("/", "application/json", body, Some("1.0"))
            .await;
        let err = ErrorAnswer::parse(Binding::JsonRpc, reply.status, reply.json());
        assert_eq!(err.code, -32600, "{}", err.body);
        assert_eq!(err.body["id"], Value::Null);
    }
}

/// JSON-RPC 2.0 envelope errors (#80 #83): -32700 not JSON, -32600 batch / no `jsonrpc` / wrong
/// version / no method, -32601 unknown method (also a v0.3 name), -32602 params not an object or
/// invalid — each with HTTP 200 and a `data` array of `@type` objects.
#[tokio::test]
async fn jsonrpc_envelope_errors_80_83() {
    let (server, _control) = scripted().await;
    let cases: Vec<(String, i64, Value)> = vec![
        ("{oops".into(), -32700, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ListTasks""#.into(),
            -32700,
            Value::Null,
        ),
        (
            format!("[{}]", envelope(json!(1), "ListTasks", json!({}))),
            -32600,
            Value::Null,
        ),
        ("[]".into(), -32600, Value::Null),
        ("42".into(), -32600, Value::Null),
        (
            r#"{"id":3,"method":"ListTasks","params":{}}"#.into(),
            -32600,
            json!(3),
        ),
        (
            r#"{"jsonrpc":"1.0","id":4,"method":"ListTasks"}"#.into(),
            -32600,
            json!(4),
        ),
        (r#"{"jsonrpc":"2.0","id":5}"#.into(), -32600, json!(5)),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":7}"#.into(),
            -32600,
            json!(6),
        ),
        (envelope(json!(7), "Unknown", json!({})), -32601, json!(7)),
        (
            envelope(json!(8), "message/send", msg("hi")),
            -32601,
            json!(8),
        ),
        (
            envelope(json!(9), "ListTasks", json!([1, 2])),
            -32602,
            json!(9),
        ),
        (
            envelope(json!(10), "ListTasks", json!("x")),
            -32602,
            json!(10),
        ),
        (
            envelope(json!(11), "ListTasks", json!({"pageSize": "many"})),
            -32602,
            json!(11),
        ),
    ];
    for (body, code, id) in cases {
        let reply = server
            .post_raw("/", "application/json", body.clone(), Some("1.0"))
            .await;
        assert_eq!(reply.status, 200, "{body}");
        assert_eq!(reply.media_type(), "application/json");
        let err = ErrorAnswer::parse(Binding::JsonRpc, reply.status, reply.json());
        assert_eq!(err.code, code, "{body} -> {}", err.body);
        assert_eq!(err.body["id"], id, "{body} -> {}", err.body);
    }
    // A body that is not UTF-8 is -32700 too, naming where the bad byte is.
    let mut body =
        br#"{"jsonrpc":"2.0","id":12,"method":"ListTasks","params":{"contextId":""#.to_vec();
    body.extend_from_slice(b"\xff\xfe\"}}");
    let reply = server
        .send(
            server
                .http()
                .post(format!("{}/", server.url()))
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .body(body),
        )
        .await;
    let err = ErrorAnswer::parse(Binding::JsonRpc, reply.status, reply.json());
    assert_eq!(err.code, -32700, "{}", err.body);
    assert_eq!(err.body["id"], Value::Null);
    let message = err.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("not UTF-8") && message.contains("index 69"),
        "{message}"
    );
    // A missing REQUIRED field names its path (#77).
    let err = server
        .err(
            Binding::JsonRpc,
            "SendMessage",
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
        )
        .await;
    err.assert_invalid("message.parts");
    // A2A errors match §9.4 exactly, modulo the message.
    let mut body = server
        .err(Binding::JsonRpc, "GetTask", json!({"id": "t-404"}))
        .await
        .body;
    body["error"]["message"] = json!("…");
    body["id"] = json!(2);
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32001, "message": "…",
            "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                      "domain": "a2a-protocol.org", "metadata": {"taskId": "t-404"}}]}})
    );
}

/// JSON-RPC 2.0: a notification (no `id`) gets HTTP 204 and no body — and is executed; the
/// server never answers a notification, not even with an error.
#[tokio::test]
async fn jsonrpc_notification_gets_204_and_no_body() {
    let (server, _control) = scripted().await;
    let body = json!({"jsonrpc": "2.0", "method": "SendMessage", "params": msg("hi")}).to_string();
    let reply = server
        .post_raw("/", "application/json", body, Some("1.0"))
        .await;
    assert_eq!(reply.status, 204);
    assert!(reply.text.is_empty());
    let list = server.ok(Binding::JsonRpc, "ListTasks", json!({})).await;
    assert_eq!(list["totalSize"], 1, "the notification was executed");

    for (method, params) in [
        ("NoSuchMethod", json!({})),
        ("GetTask", json!({"id": "no-such-task"})),
        ("ListTasks", json!({"pageSize": 1000})),
        ("ListTasks", json!([1])),
        ("SendStreamingMessage", msg("hi")),
    ] {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        let reply = server
            .post_raw("/", "application/json", body, Some("1.0"))
            .await;
        assert_eq!(reply.status, 204, "{method}: {}", reply.text);
        assert!(reply.text.is_empty(), "{method}: {}", reply.text);
    }
}

/// #84 (§9.4): REST errors are `google.rpc.Status` — `error.code` (the HTTP status),
/// `error.status`, `error.message`, `error.details` — with ErrorInfo for A2A errors and
/// BadRequest field violations for validation errors; JSON content type.
#[tokio::test]
async fn rest_errors_are_google_rpc_status_84() {
    let (server, _control) = scripted().await;
    let reply = server.get("/tasks/t-404").await;
    assert_eq!(reply.status, 404);
    assert!(matches!(
        reply.media_type().as_str(),
        "application/json" | "application/a2a+json"
    ));
    let mut body = reply.json();
    body["error"]["message"] = json!("…");
    assert_eq!(
        body,
        json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "…",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                         "domain": "a2a-protocol.org", "metadata": {"taskId": "t-404"}}]}})
    );

    let reply = server.get("/tasks?pageSize=150").await;
    let mut body = reply.json();
    assert_eq!(reply.status, 400);
    body["error"]["message"] = json!("…");
    assert_eq!(
        body,
        json!({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "…",
            "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                         "fieldViolations": [{"field": "pageSize",
                                              "description": "must be between 1 and 100, got 150"}]}]}})
    );

    for (body, field) in [
        ("{oops", None),
        ("[1, 2]", None),
        ("{}", Some("message.parts")),
        (
            r#"{"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}"#,
            Some("message.messageId"),
        ),
    ] {
        let reply = server
            .post_raw("/message:send", "application/a2a+json", body, Some("1.0"))
            .await;
        let err = ErrorAnswer::parse(Binding::Rest, reply.status, reply.json());
        assert_eq!(err.http, 400, "{body}: {}", err.body);
        assert_eq!(err.status.as_deref(), Some("INVALID_ARGUMENT"), "{body}");
        if let Some(f) = field {
            err.assert_invalid(f);
        }
    }
}
