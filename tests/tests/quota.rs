//! Fair share under a flood, over real HTTP and gRPC on loopback: one principal floods
//! SendMessage (its tasks left INPUT_REQUIRED), streams and reads; it is answered 429 with
//! `Retry-After` (gRPC RESOURCE_EXHAUSTED) once over its share, the in-memory store's global cap
//! is never reached, and a second principal and a second tenant see no failure. The slots come
//! back when tasks end and streams close; the token bucket refills with the injected clock (no
//! sleep). The README agent's defaults keep an anonymous caller from one address apart from
//! another address.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_runtime::A2aError;
use a2a_runtime::auth::{DefaultAuthorizer, StaticTokens};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::grpc::pb;
use a2a_runtime::grpc::pb::a2a_service_client::A2aServiceClient;
use a2a_runtime::protocol::Principal;
use a2a_runtime::server::{A2aServer, Metrics, RunningServer};
use a2a_runtime::service::{Limit, Quotas, Rate, Share};
use a2a_runtime::test::{agent_card, within};
use serde_json::{Value, json};

/// "wait" asks for input (the task stays live); "done" completes.
struct Asker;

impl AgentExecutor for Asker {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if ctx.text() == "done" {
            events.complete().await
        } else {
            events.input_required("which one?").await
        }
    }
}

const FLOOD: &str = "tok-flood-0123456789";
const ALICE: &str = "tok-alice-0123456789";
const BOB: &str = "tok-bob-0123456789";
/// The in-memory store's cap for this test (the default is 10,000).
const STORE_CAP: usize = 200;

/// The server, and the clock its quotas read.
async fn flooded_server() -> (RunningServer, A2aServer, Arc<Mutex<Instant>>) {
    let now = Arc::new(Mutex::new(Instant::now()));
    let read = now.clone();
    let mut quotas = Quotas::unlimited().clock(move || *read.lock().unwrap());
    quotas.principal = Share {
        live_tasks: Some(20),
        open_streams: Some(4),
        rate: Some(Rate {
            per_second: 10,
            burst: 60,
        }),
    };
    quotas.tenant = Share {
        live_tasks: Some(100),
        open_streams: Some(40),
        rate: Some(Rate {
            per_second: 100,
            burst: 400,
        }),
    };
    let mut card = agent_card("asker");
    card.capabilities.streaming = Some(true);
    let server = A2aServer::builder()
        .card(card)
        .executor(Asker)
        .max_tasks(STORE_CAP)
        .authenticator(
            StaticTokens::bearer()
                .token("flooder", FLOOD)
                .token("alice", ALICE)
                .principal(Principal::authenticated("bob").with_tenants(["acme"]), BOB),
        )
        .authorizer(DefaultAuthorizer::new())
        .quotas(quotas)
        .grpc_addr("127.0.0.1:0")
        // A closed stream is noticed at the next keep-alive.
        .keep_alive(Duration::from_millis(50))
        .workers(2)
        .build()
        .unwrap();
    let running = server.clone().start("127.0.0.1:0").await.unwrap();
    (running, server, now)
}

/// An answer: status, `Retry-After`, JSON body.
#[derive(Debug)]
struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

impl Answer {
    fn quota_exceeded(&self) -> bool {
        let details = self.body["error"]["data"]
            .as_array()
            .or(self.body["error"]["details"].as_array())
            .cloned()
            .unwrap_or_default();
        self.status == 429
            && self
                .retry_after
                .as_deref()
                .is_some_and(|s| s.parse::<u64>().is_ok_and(|s| s >= 1))
            && details.iter().any(|d| d["reason"] == "QUOTA_EXCEEDED")
    }

    fn ok(&self) -> bool {
        self.status == 200 && self.body.get("error").is_none()
    }
}

fn message(text: &str, task_id: Option<&str>) -> Value {
    let mut m = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(t) = task_id {
        m["taskId"] = t.into();
    }
    json!({ "message": m })
}

fn uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("m-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// A JSON-RPC call of `method` as `token`.
async fn rpc(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    method: &str,
    params: Value,
) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let resp = http
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("authorization", format!("Bearer {token}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    answer(resp).await
}

/// An HTTP+JSON call as `token` (`tenant`: a path prefix).
async fn rest(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    tenant: Option<&str>,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Answer {
    let prefix = tenant.map(|t| format!("/{t}")).unwrap_or_default();
    let mut req = http
        .request(method, format!("{url}{prefix}{path}"))
        .header("A2A-Version", "1.0")
        .header("authorization", format!("Bearer {token}"));
    if let Some(b) = body {
        req = req.header("content-type", "application/json").json(&b);
    }
    answer(req.send().await.unwrap()).await
}

async fn answer(resp: reqwest::Response) -> Answer {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = resp.text().await.unwrap();
    Answer {
        status,
        retry_after,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
    }
}

/// Opens a REST subscription to `task` as `token`: the open response (the stream unread), or
/// the refusal.
async fn subscribe(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    task: &str,
) -> Result<reqwest::Response, Answer> {
    let resp = http
        .get(format!("{url}/tasks/{task}:subscribe"))
        .header("A2A-Version", "1.0")
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if resp.status() == 200 && sse {
        Ok(resp)
    } else {
        Err(answer(resp).await)
    }
}

/// What a well-behaved principal does; every call must succeed.
async fn behave(http: &reqwest::Client, url: &str, token: &str, tenant: Option<&str>) -> usize {
    let mut failures = 0;
    for round in 0..5 {
        let sent = rest(
            http,
            url,
            token,
            tenant,
            reqwest::Method::POST,
            "/message:send",
            Some(message("wait", None)),
        )
        .await;
        failures += usize::from(!sent.ok());
        let Some(id) = sent.body["task"]["id"].as_str().map(str::to_owned) else {
            continue;
        };
        let got = rest(
            http,
            url,
            token,
            tenant,
            reqwest::Method::GET,
            &format!("/tasks/{id}"),
            None,
        )
        .await;
        failures += usize::from(!got.ok());
        if round % 2 == 0 {
            let done = rest(
                http,
                url,
                token,
                tenant,
                reqwest::Method::POST,
                "/message:send",
                Some(message("done", Some(&id))),
            )
            .await;
            failures += usize::from(done.body["task"]["status"]["state"] != "TASK_STATE_COMPLETED");
        }
    }
    // A streamed new task, read to its end (INPUT_REQUIRED).
    let prefix = tenant.map(|t| format!("/{t}")).unwrap_or_default();
    let streamed = http
        .post(format!("{url}{prefix}/message:stream"))
        .header("A2A-Version", "1.0")
        .header("authorization", format!("Bearer {token}"))
        .json(&message("wait", None))
        .send()
        .await
        .unwrap();
    failures += usize::from(streamed.status() != 200);
    let events = streamed.text().await.unwrap();
    failures += usize::from(!events.contains("TASK_STATE_INPUT_REQUIRED"));
    if tenant.is_none() {
        let listed = rpc(http, url, token, "ListTasks", json!({})).await;
        failures += usize::from(!listed.ok());
    }
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_principal_flooding_leaves_the_others_served() {
    let (running, server, now) = flooded_server().await;
    let url = running.url();
    let http = reqwest::Client::new();

    // The flood of new tasks, over JSON-RPC: 20 live tasks, then 429 with Retry-After.
    let mut tasks = Vec::new();
    let mut refused = 0;
    for _ in 0..100 {
        let a = rpc(&http, &url, FLOOD, "SendMessage", message("wait", None)).await;
        if a.ok() {
            tasks.push(a.body["result"]["task"]["id"].as_str().unwrap().to_owned());
        } else {
            assert!(a.quota_exceeded(), "{a:?}");
            assert!(
                a.body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("live tasks of the principal"),
                "{a:?}"
            );
            refused += 1;
        }
    }
    assert_eq!((tasks.len(), refused), (20, 80));
    // And over HTTP+JSON.
    let a = rest(
        &http,
        &url,
        FLOOD,
        None,
        reqwest::Method::POST,
        "/message:send",
        Some(message("wait", None)),
    )
    .await;
    assert!(a.quota_exceeded(), "{a:?}");
    assert_eq!(a.body["error"]["status"], "RESOURCE_EXHAUSTED");

    // And in both v0.3 dialects (no A2A-Version): 429 with Retry-After, code -31429.
    let v03 = json!({"message": {"kind": "message", "messageId": uuid(), "role": "user",
        "parts": [{"kind": "text", "text": "wait"}]}});
    let v03_rpc = http
        .post(format!("{url}/"))
        .header("authorization", format!("Bearer {FLOOD}"))
        .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "message/send", "params": v03}))
        .send()
        .await
        .unwrap();
    let v03_rest = http
        .post(format!("{url}/v1/message:send"))
        .header("authorization", format!("Bearer {FLOOD}"))
        .json(&v03)
        .send()
        .await
        .unwrap();
    for a in [answer(v03_rpc).await, answer(v03_rest).await] {
        assert_eq!(a.status, 429, "{a:?}");
        assert!(
            a.retry_after
                .as_deref()
                .is_some_and(|s| s.parse::<u64>().is_ok_and(|s| s >= 1)),
            "{a:?}"
        );
        let code = a.body["error"]["code"].as_i64().or(a.body["code"].as_i64());
        assert_eq!(code, Some(-31429), "{a:?}");
    }

    // The flood of streams: 4 open, the rest refused.
    let mut streams = Vec::new();
    for task in tasks.iter().cycle().take(10) {
        match subscribe(&http, &url, FLOOD, task).await {
            Ok(open) => streams.push(open),
            Err(a) => assert!(a.quota_exceeded(), "{a:?}"),
        }
    }
    assert_eq!(streams.len(), 4);
    let a = rest(
        &http,
        &url,
        FLOOD,
        None,
        reqwest::Method::POST,
        "/message:stream",
        Some(message("wait", None)),
    )
    .await;
    assert!(a.quota_exceeded(), "{a:?}");

    // The flood of reads: the bucket (60, less 24 taken) runs dry.
    let mut reads = (0, 0);
    for task in tasks.iter().cycle().take(100) {
        let a = rpc(&http, &url, FLOOD, "GetTask", json!({"id": task})).await;
        if a.ok() {
            reads.0 += 1;
        } else {
            assert!(a.quota_exceeded(), "{a:?}");
            assert!(
                a.body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("request rate"),
                "{a:?}"
            );
            reads.1 += 1;
        }
    }
    assert_eq!(reads, (36, 64));

    // gRPC: RESOURCE_EXHAUSTED, with the reason.
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://{}", running.grpc_addr().unwrap()))
            .unwrap()
            .connect_lazy();
    let mut grpc = A2aServiceClient::new(channel);
    let mut req = tonic::Request::new(pb::SendMessageRequest::from(
        a2a_runtime::types::SendMessageRequest {
            message: a2a_runtime::types::Message::user_text("wait"),
            ..Default::default()
        },
    ));
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    req.metadata_mut()
        .insert("authorization", format!("Bearer {FLOOD}").parse().unwrap());
    let status = grpc.send_message(req).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(matches!(
        a2a_runtime::grpc::status::from_status(&status),
        A2aError::QuotaExceeded { retry_after_secs, .. } if retry_after_secs >= 1
    ));

    // Meanwhile: a second principal of the same tenant, and a principal of a second tenant.
    assert_eq!(behave(&http, &url, ALICE, None).await, 0, "alice");
    assert_eq!(
        behave(&http, &url, BOB, Some("acme")).await,
        0,
        "bob in acme"
    );
    // One caller never fills the store: its share is 20 of 200 slots.
    let usage = server.pipeline().quota_usage().unwrap();
    assert!(usage.live_tasks < STORE_CAP, "{usage:?}");

    // Every refusal is counted, by limit.
    assert!(usage.refusals(Limit::LiveTasks).0 >= 81, "{usage:?}");
    assert_eq!(usage.refusals(Limit::OpenStreams).0, 7, "{usage:?}");
    assert!(usage.refusals(Limit::Rate).0 >= 64, "{usage:?}");

    // The bucket refills with the clock: the flooder reads again.
    *now.lock().unwrap() += Duration::from_secs(10);
    assert!(
        rpc(&http, &url, FLOOD, "GetTask", json!({"id": tasks[0]}))
            .await
            .ok()
    );

    // Streams whose clients went away free their slots.
    assert!(subscribe(&http, &url, FLOOD, &tasks[4]).await.is_err());
    drop(streams);
    within("the closed streams are released", async {
        while server.pipeline().quota_usage().unwrap().open_streams > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let again = subscribe(&http, &url, FLOOD, &tasks[4]).await;
    assert!(again.is_ok());
    drop(again);

    // A task that ends frees its slot: one more new task, then refused again.
    let done = rpc(
        &http,
        &url,
        FLOOD,
        "SendMessage",
        message("done", Some(&tasks[0])),
    )
    .await;
    assert_eq!(
        done.body["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(
        rpc(&http, &url, FLOOD, "SendMessage", message("wait", None))
            .await
            .ok()
    );
    assert!(
        rpc(&http, &url, FLOOD, "SendMessage", message("wait", None))
            .await
            .quota_exceeded()
    );
    // A canceled one too.
    let canceled = rpc(&http, &url, FLOOD, "CancelTask", json!({"id": tasks[1]})).await;
    assert_eq!(
        canceled.body["result"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    assert!(
        rpc(&http, &url, FLOOD, "SendMessage", message("wait", None))
            .await
            .ok()
    );

    // The refusals, by limit, in the Prometheus metrics.
    let route = server.metrics_route(Metrics::install().unwrap());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let metrics_url = format!("http://{}/metrics", listener.local_addr().unwrap());
    let scraper =
        actix_web::HttpServer::new(move || actix_web::App::new().configure(route.clone()))
            .workers(1)
            .listen(listener)
            .unwrap()
            .run();
    let handle = scraper.handle();
    tokio::spawn(scraper);
    let text = http
        .get(metrics_url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let usage = server.pipeline().quota_usage().unwrap();
    for (limit, count) in [
        ("live_tasks", usage.refusals(Limit::LiveTasks).0),
        ("open_streams", usage.refusals(Limit::OpenStreams).0),
        ("rate", usage.refusals(Limit::Rate).0),
    ] {
        let line =
            format!("a2a_quota_refusals_total{{scope=\"principal\",limit=\"{limit}\"}} {count}");
        assert!(count > 0 && text.contains(&line), "{line} in\n{text}");
    }
    handle.stop(true).await;
    running.stop().await;
}

/// The README agent's quotas, anonymous: a flood from one address leaves another address
/// served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_agent_keeps_anonymous_addresses_apart() {
    let server = A2aServer::builder()
        .card(a2a_examples::demo_card())
        .executor(a2a_examples::DemoAgent)
        .quotas(a2a_examples::demo_quotas())
        .workers(2)
        .build()
        .unwrap();
    let running = server.clone().start("127.0.0.1:0").await.unwrap();
    let url = running.url();
    let from = |ip: [u8; 4]| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(ip))
            .build()
            .unwrap()
    };
    let (flooder, other) = (from([127, 0, 0, 2]), from([127, 0, 0, 3]));
    let send = |http: reqwest::Client| {
        let url = url.clone();
        async move {
            let resp = http
                .post(format!("{url}/message:send"))
                .header("A2A-Version", "1.0")
                .json(&message("ask", None))
                .send()
                .await
                .unwrap();
            answer(resp).await
        }
    };
    // The flood: a burst of 100 (tasks left INPUT_REQUIRED), then 429 with Retry-After.
    let mut outcome = (0, 0);
    let start = Instant::now();
    for _ in 0..300 {
        let a = send(flooder.clone()).await;
        if a.ok() {
            outcome.0 += 1;
        } else {
            assert!(a.quota_exceeded(), "{a:?}");
            outcome.1 += 1;
        }
    }
    eprintln!(
        "flood from 127.0.0.2: {} served, {} refused (429) in {:?}",
        outcome.0,
        outcome.1,
        start.elapsed()
    );
    // The burst, and what the bucket refilled meanwhile (50 a second, on the real clock).
    let refilled = (start.elapsed().as_secs_f64() * 50.0).ceil() as usize;
    assert!(
        outcome.0 >= 100 && outcome.0 <= 100 + refilled + 1,
        "{outcome:?}"
    );
    assert!(outcome.1 > 0 && outcome.0 + outcome.1 == 300, "{outcome:?}");
    // Another address: every request served.
    for _ in 0..50 {
        let a = send(other.clone()).await;
        assert!(a.ok(), "{a:?}");
        assert_eq!(
            a.body["task"]["status"]["state"],
            "TASK_STATE_INPUT_REQUIRED"
        );
    }
    running.stop().await;
}

/// Completes "slow" tasks only once the test lets it (a permit each).
struct Slow(Arc<tokio::sync::Semaphore>);

impl AgentExecutor for Slow {
    async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.progress("working").await?;
        let permit = self.0.acquire().await;
        drop(permit);
        events.complete().await
    }
}

/// Tasks that end where no answer shows it (non-blocking sends, completed in the background)
/// free their slots when the caller at its limit has them looked up again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_that_ended_unseen_are_found_ended_at_the_limit() {
    use a2a_runtime::store::{InMemoryTaskStore, Scope, TaskStore as _};
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let store = Arc::new(InMemoryTaskStore::new());
    let now = Arc::new(Mutex::new(Instant::now()));
    let read = now.clone();
    let mut quotas = Quotas::unlimited().clock(move || *read.lock().unwrap());
    quotas.principal.live_tasks = Some(3);
    let server = A2aServer::builder()
        .card(agent_card("slow"))
        .executor(Slow(gate.clone()))
        .task_store(store.clone())
        .authenticator(StaticTokens::bearer().token("alice", ALICE))
        .quotas(quotas)
        .workers(1)
        .build()
        .unwrap();
    let running = server.clone().start("127.0.0.1:0").await.unwrap();
    let url = running.url();
    let http = reqwest::Client::new();
    let send = || {
        let mut params = message("slow", None);
        params["configuration"] = json!({"returnImmediately": true});
        rpc(&http, &url, ALICE, "SendMessage", params)
    };
    let mut ids = Vec::new();
    for _ in 0..3 {
        let a = send().await;
        assert!(a.ok(), "{a:?}");
        let task = &a.body["result"]["task"];
        assert_ne!(task["status"]["state"], "TASK_STATE_COMPLETED", "{a:?}");
        ids.push(task["id"].as_str().unwrap().to_owned());
    }
    // At the limit while they work.
    assert!(send().await.quota_exceeded());
    // They complete in the background; nobody asks about them through the server.
    gate.add_permits(3);
    let scope = Scope::new("", "alice");
    within("the tasks complete", async {
        for id in &ids {
            loop {
                let stored = store
                    .get(&scope, &id.as_str().into())
                    .await
                    .unwrap()
                    .unwrap();
                if stored.task.status.state.is_terminal() {
                    break;
                }
                tokio::task::yield_now().await;
            }
        }
    })
    .await;
    // Looked up at the refusal above: not again before the recheck interval.
    assert!(send().await.quota_exceeded());
    // Past it, the next request finds them ended: admitted.
    *now.lock().unwrap() += Duration::from_secs(3);
    let a = send().await;
    assert!(a.ok(), "{a:?}");
    assert_eq!(server.pipeline().quota_usage().unwrap().live_tasks, 1);
    gate.add_permits(1);
    running.stop().await;
}
