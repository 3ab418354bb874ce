//! Extension negotiation over real HTTP, on JSON-RPC, REST, and SSE (SendStreamingMessage and
//! SubscribeToTask on both bindings): which extensions a request activates, the echoed
//! `A2A-Extensions` header, required extensions, `activate` outcomes, and hook order.

use a2a_runtime::test::*;
use reqwest::Method;

use super::support::*;
use serde_json::{Value, json};

/// The ways a message reaches the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    RpcSend,
    RestSend,
    RpcStream,
    RestStream,
    RpcSubscribe,
    RestSubscribe,
}

const WAYS: [Way; 6] = [
    Way::RpcSend,
    Way::RestSend,
    Way::RpcStream,
    Way::RestStream,
    Way::RpcSubscribe,
    Way::RestSubscribe,
];

/// An error answer, in the binding's shape.
#[derive(Debug)]
struct Failure {
    http: u16,
    /// JSON-RPC `error.code`, or REST `error.code` (the HTTP status).
    code: i64,
    /// REST `error.status`.
    status: Option<String>,
    /// `ErrorInfo.reason`.
    reason: Option<String>,
    /// `ErrorInfo.metadata`.
    metadata: Value,
}

fn failure(http: u16, body: &Value) -> Failure {
    let (err, details) = if let Some(e) = body.get("error").filter(|e| e.get("data").is_some()) {
        assert_eq!(http, 200, "JSON-RPC errors travel with HTTP 200");
        (e, &e["data"])
    } else {
        let e = &body["error"];
        (e, &e["details"])
    };
    let info = details
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo");
    Failure {
        http,
        code: err["code"].as_i64().expect("error code"),
        status: err["status"].as_str().map(str::to_owned),
        reason: info.and_then(|i| i["reason"].as_str()).map(str::to_owned),
        metadata: info.map(|i| i["metadata"].clone()).unwrap_or(Value::Null),
    }
}

/// What one exchange showed.
#[derive(Debug)]
struct Seen {
    echoed: Option<String>,
    result: Result<Vec<Value>, Failure>,
}

impl Seen {
    #[track_caller]
    fn ok(&self) -> &[Value] {
        match &self.result {
            Ok(v) => v,
            Err(f) => panic!("expected success, got {f:?}"),
        }
    }

    #[track_caller]
    fn err(&self) -> &Failure {
        match &self.result {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(f) => f,
        }
    }
}

fn seen_unary(resp: &Answer) -> Seen {
    let body = resp.body();
    let result = if resp.status == 200 && body.get("error").is_none() {
        Ok(vec![body.get("result").unwrap_or(body).clone()])
    } else {
        Err(failure(resp.status, body))
    };
    Seen {
        echoed: resp.header_list("a2a-extensions"),
        result,
    }
}

/// What a refused stream showed.
fn seen_refused(error: &ErrorAnswer) -> Seen {
    Seen {
        echoed: error.header_list("a2a-extensions"),
        result: Err(failure(error.http, &error.body)),
    }
}

async fn seen_stream(opened: Result<EventStream, ErrorAnswer>) -> Seen {
    match opened {
        Ok(sse) => {
            assert_eq!(sse.status(), 200);
            let echoed = sse.header_list("a2a-extensions");
            Seen {
                echoed,
                result: Ok(events(sse).await),
            }
        }
        Err(error) => seen_refused(&error),
    }
}

/// A task waiting until canceled, created without extensions (`setup` headers for servers
/// with a required extension).
async fn waiting_task(srv: &TestServer, setup: &[(&str, &str)]) -> String {
    let params =
        json!({"message": user_message("wait"), "configuration": {"returnImmediately": true}});
    let resp = srv
        .request(Binding::JsonRpc, "SendMessage", params)
        .headers(setup)
        .send()
        .await;
    resp.result()["task"]["id"]
        .as_str()
        .expect("task id")
        .to_owned()
}

/// Runs one exchange `way` with `headers`. Subscriptions subscribe to a waiting task (created
/// with `setup` headers, its log entries dropped), read its snapshot, cancel it (with `setup`
/// headers) and read to the end.
async fn exchange(
    srv: &TestServer,
    way: Way,
    headers: &[(&str, &str)],
    setup: &[(&str, &str)],
    log: &Log,
) -> Seen {
    let params = || send_params("hello");
    match way {
        Way::RpcSend => seen_unary(
            &srv.request(Binding::JsonRpc, "SendMessage", params())
                .headers(headers)
                .send()
                .await,
        ),
        Way::RestSend => seen_unary(
            &srv.rest(Method::POST, "/message:send", Some(params()))
                .headers(headers)
                .send()
                .await,
        ),
        Way::RpcStream => {
            seen_stream(
                srv.request(Binding::JsonRpc, "SendStreamingMessage", params())
                    .headers(headers)
                    .stream()
                    .await,
            )
            .await
        }
        Way::RestStream => {
            seen_stream(
                srv.rest(Method::POST, "/message:stream", Some(params()))
                    .headers(headers)
                    .stream()
                    .await,
            )
            .await
        }
        Way::RpcSubscribe | Way::RestSubscribe => {
            let id = waiting_task(srv, setup).await;
            log.take();
            let opened = if way == Way::RpcSubscribe {
                srv.request(Binding::JsonRpc, "SubscribeToTask", json!({"id": id}))
                    .headers(headers)
                    .stream()
                    .await
            } else {
                srv.rest(Method::GET, &format!("/tasks/{id}:subscribe"), None)
                    .headers(headers)
                    .stream()
                    .await
            };
            match opened {
                Err(error) => seen_refused(&error),
                Ok(mut sse) => {
                    assert_eq!(sse.status(), 200);
                    let echoed = sse.header_list("a2a-extensions");
                    let first = next_event(&mut sse).await.expect("the task snapshot");
                    assert_eq!(kind(&first), "task", "{first}");
                    srv.request(Binding::JsonRpc, "CancelTask", json!({"id": id}))
                        .headers(setup)
                        .send()
                        .await
                        .result();
                    let mut seen = vec![first];
                    seen.extend(events(sse).await);
                    Seen {
                        echoed,
                        result: Ok(seen),
                    }
                }
            }
        }
    }
}

/// The labels whose `activate` ran, in order.
fn activated(entries: &[String]) -> Vec<String> {
    hook(entries, "activate")
}

/// The labels of the entries of one hook (`activate`, `request`, `response`, `event`).
fn hook(entries: &[String], name: &str) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| {
            let (label, rest) = e.split_once('.')?;
            let h = rest.split(':').next()?;
            (h == name).then(|| label.to_owned())
        })
        .collect()
}

fn recorders(log: &Log) -> a2a_runtime::server::A2aServerBuilder {
    builder()
        .extension(RecA::new(log, Mode::Activate))
        .extension(RecB::new(log, Mode::Activate))
        .extension(RecC::new(log, Mode::Activate))
}

#[tokio::test]
async fn nothing_requested_activates_nothing_and_echoes_nothing() {
    let log = Log::default();
    let srv = start(recorders(&log)).await;
    for way in WAYS {
        let seen = exchange(&srv, way, &[], &[], &log).await;
        assert!(!seen.ok().is_empty(), "{way:?}");
        assert_eq!(seen.echoed, None, "{way:?}");
        assert_eq!(log.take(), Vec::<String>::new(), "{way:?}");
    }
}

/// What, the request headers, the expected echo, the labels activated.
type Case<'a> = (
    &'a str,
    Vec<(&'a str, String)>,
    Option<&'a str>,
    Vec<&'a str>,
);

#[tokio::test]
async fn requested_uris_are_matched_exactly_and_echoed() {
    let unknown = "https://unknown.example/ext/x/v1";
    let other_version = "https://test.example/ext/b/v2";
    let spaced = format!("  {C} ,\t{A}  ,, ");
    let cases: Vec<Case<'_>> = vec![
        (
            "one",
            vec![("A2A-Extensions", A.to_owned())],
            Some(A),
            vec!["A"],
        ),
        (
            "several, in declaration order whatever the request order",
            vec![("A2A-Extensions", format!("{C}, {A}"))],
            Some("https://test.example/ext/a/v1, https://test.example/ext/c/v1"),
            vec!["A", "C"],
        ),
        (
            "unknown URI and another version ignored",
            vec![("A2A-Extensions", format!("{unknown}, {other_version}, {B}"))],
            Some(B),
            vec!["B"],
        ),
        (
            "repeated headers merged",
            vec![
                ("A2A-Extensions", C.to_owned()),
                ("A2A-Extensions", format!("{B}, {C}")),
            ],
            Some("https://test.example/ext/b/v1, https://test.example/ext/c/v1"),
            vec!["B", "C"],
        ),
        (
            "whitespace and empty items",
            vec![("A2A-Extensions", spaced.clone())],
            Some("https://test.example/ext/a/v1, https://test.example/ext/c/v1"),
            vec!["A", "C"],
        ),
        (
            "the legacy X-A2A-Extensions",
            vec![("X-A2A-Extensions", B.to_owned())],
            Some(B),
            vec!["B"],
        ),
        (
            "both headers",
            vec![
                ("X-A2A-Extensions", A.to_owned()),
                ("A2A-Extensions", C.to_owned()),
            ],
            Some("https://test.example/ext/a/v1, https://test.example/ext/c/v1"),
            vec!["A", "C"],
        ),
        (
            "only unknown",
            vec![("A2A-Extensions", unknown.to_owned())],
            None,
            vec![],
        ),
    ];
    let log = Log::default();
    let srv = start(recorders(&log)).await;
    for way in WAYS {
        for (what, headers, echo, labels) in &cases {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let seen = exchange(&srv, way, &headers, &[], &log).await;
            assert!(!seen.ok().is_empty());
            assert_eq!(seen.echoed.as_deref(), *echo, "{way:?}: {what}");
            let entries = log.take();
            assert_eq!(activated(&entries), *labels, "{way:?}: {what}: {entries:?}");
            assert_eq!(
                hook(&entries, "request"),
                *labels,
                "{way:?}: {what}: {entries:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_missing_required_extension_is_32008_in_each_binding_before_any_activation() {
    let log = Log::default();
    let srv = start(
        builder()
            .extension(Contract {
                terms: "2026".into(),
            })
            .extension(RecA::new(&log, Mode::Activate)),
    )
    .await;
    let setup = [("A2A-Extensions", REQUIRED)];
    let other_version = "https://test.example/ext/required/v2".to_owned();
    for way in WAYS {
        for headers in [
            vec![],
            vec![("A2A-Extensions", A)],
            vec![("A2A-Extensions", other_version.as_str())],
            vec![("X-A2A-Extensions", A)],
        ] {
            let seen = exchange(&srv, way, &headers, &setup, &log).await;
            let f = seen.err();
            assert_eq!(
                f.reason.as_deref(),
                Some("EXTENSION_SUPPORT_REQUIRED"),
                "{way:?} {f:?}"
            );
            assert_eq!(f.metadata["extensions"], REQUIRED, "{way:?}");
            match way {
                Way::RpcSend | Way::RpcStream | Way::RpcSubscribe => {
                    assert_eq!((f.http, f.code), (200, -32008), "{way:?}");
                }
                Way::RestSend | Way::RestStream | Way::RestSubscribe => {
                    assert_eq!((f.http, f.code), (400, 400), "{way:?}");
                    assert_eq!(f.status.as_deref(), Some("FAILED_PRECONDITION"), "{way:?}");
                }
            }
            assert_eq!(seen.echoed, None);
            assert_eq!(
                log.take(),
                Vec::<String>::new(),
                "{way:?}: nothing activated"
            );
        }
        let ok = exchange(
            &srv,
            way,
            &[("A2A-Extensions", &format!("{A},{REQUIRED}"))],
            &setup,
            &log,
        )
        .await;
        assert!(!ok.ok().is_empty());
        assert_eq!(
            ok.echoed.as_deref(),
            Some("https://test.example/ext/required/v1, https://test.example/ext/a/v1"),
            "{way:?}"
        );
        assert_eq!(activated(&log.take()), ["A"]);
    }
    // Every operation, not only messages.
    let r = srv
        .request(Binding::JsonRpc, "GetTask", json!({"id": "nope"}))
        .send()
        .await;
    let f = failure(r.status, r.body());
    assert_eq!(
        (f.code, f.reason.as_deref()),
        (-32008, Some("EXTENSION_SUPPORT_REQUIRED"))
    );
    let r = srv.rest(Method::GET, "/tasks", None).send().await;
    let f = failure(r.status, r.body());
    assert_eq!(
        (f.http, f.reason.as_deref()),
        (400, Some("EXTENSION_SUPPORT_REQUIRED"))
    );
}

#[tokio::test]
async fn skip_is_not_echoed_and_refuse_aborts_the_request() {
    let log = Log::default();
    let skip = start(
        builder()
            .extension(RecA::new(&log, Mode::Activate))
            .extension(RecB::new(&log, Mode::Skip))
            .extension(RecC::new(&log, Mode::Activate)),
    )
    .await;
    let all = format!("{A}, {B}, {C}");
    for way in WAYS {
        let seen = exchange(&skip, way, &[("A2A-Extensions", &all)], &[], &log).await;
        assert!(!seen.ok().is_empty());
        assert_eq!(
            seen.echoed.as_deref(),
            Some("https://test.example/ext/a/v1, https://test.example/ext/c/v1"),
            "{way:?}"
        );
        let entries = log.take();
        assert_eq!(activated(&entries), ["A", "B", "C"], "{way:?}");
        assert_eq!(hook(&entries, "request"), ["A", "C"], "{way:?}");
        assert!(
            !hook(&entries, "response").contains(&"B".to_owned()),
            "{way:?}: {entries:?}"
        );
    }

    let refuse = start(
        builder()
            .extension(RecA::new(&log, Mode::Activate))
            .extension(RecB::new(&log, Mode::Refuse))
            .extension(RecC::new(&log, Mode::Activate)),
    )
    .await;
    for way in WAYS {
        let seen = exchange(&refuse, way, &[("A2A-Extensions", &all)], &[], &log).await;
        let f = seen.err();
        match way {
            Way::RpcSend | Way::RpcStream | Way::RpcSubscribe => {
                assert_eq!((f.http, f.code), (200, -32602), "{way:?} {f:?}")
            }
            _ => assert_eq!(
                (f.http, f.status.as_deref()),
                (400, Some("INVALID_ARGUMENT")),
                "{way:?} {f:?}"
            ),
        }
        // Activation stopped at B; no hook ran and the agent never saw the request.
        assert_eq!(log.take(), ["A.activate", "B.activate"], "{way:?}");
        // Without B the request goes through.
        let ok = exchange(
            &refuse,
            way,
            &[("A2A-Extensions", &format!("{A}, {C}"))],
            &[],
            &log,
        )
        .await;
        assert!(!ok.ok().is_empty());
        assert_eq!(activated(&log.take()), ["A", "C"]);
    }
}

#[tokio::test]
async fn hooks_run_in_declaration_order_on_requests_responses_and_events() {
    let log = Log::default();
    let srv = start(
        builder()
            .extension(RecC::new(&log, Mode::Activate))
            .extension(RecA::new(&log, Mode::Activate))
            .extension(RecB::new(&log, Mode::Activate)),
    )
    .await;
    let order = ["C", "A", "B"];
    for way in WAYS {
        let seen = exchange(
            &srv,
            way,
            &[("A2A-Extensions", &format!("{A}, {B}, {C}"))],
            &[],
            &log,
        )
        .await;
        let results = seen.ok().to_vec();
        assert_eq!(
            seen.echoed.as_deref(),
            Some(
                "https://test.example/ext/c/v1, https://test.example/ext/a/v1, https://test.example/ext/b/v1"
            ),
            "{way:?}"
        );
        let entries = log.take();
        assert_eq!(activated(&entries), order, "{way:?}");
        assert_eq!(hook(&entries, "request"), order, "{way:?}");
        // handle_response: once per result / streamed event, each time C, A, B.
        let responses = hook(&entries, "response");
        assert_eq!(responses.len(), 3 * results.len(), "{way:?}: {entries:?}");
        for chunk in responses.chunks(3) {
            assert_eq!(chunk, order, "{way:?}: {entries:?}");
        }
        // handle_event: once per agent event (messages run the agent), each time C, A, B.
        let events = hook(&entries, "event");
        if matches!(way, Way::RpcSubscribe | Way::RestSubscribe) {
            assert!(
                events.is_empty(),
                "a subscription activates nothing for the agent"
            );
        } else {
            assert!(!events.is_empty(), "{way:?}: {entries:?}");
            for chunk in events.chunks(3) {
                assert_eq!(chunk, order, "{way:?}: {entries:?}");
            }
        }
        // The response entries name what the client received, in order.
        if !matches!(way, Way::RpcSend | Way::RestSend) {
            let got: Vec<String> = results
                .iter()
                .map(|e| format!("event:{}", kind_name(e)))
                .collect();
            let logged: Vec<String> = entries
                .iter()
                .filter_map(|e| e.strip_prefix("C.response:").map(str::to_owned))
                .collect();
            assert_eq!(logged, got, "{way:?}");
        }
    }
}

fn kind_name(event: &Value) -> &'static str {
    match kind(event) {
        "task" => "task",
        "statusUpdate" => "status",
        "artifactUpdate" => "artifact",
        _ => "message",
    }
}

#[tokio::test]
async fn echo_can_be_switched_off() {
    let log = Log::default();
    let srv = start(recorders(&log).echo_extensions(false)).await;
    for way in WAYS {
        let seen = exchange(
            &srv,
            way,
            &[("A2A-Extensions", &format!("{A}, {B}"))],
            &[],
            &log,
        )
        .await;
        assert!(!seen.ok().is_empty());
        assert_eq!(seen.echoed, None, "{way:?}");
        assert_eq!(
            activated(&log.take()),
            ["A", "B"],
            "{way:?}: still activated"
        );
    }
}
