//! Push notifications, delivered: a real webhook receiver on 127.0.0.1 (an actix server; the
//! URL guard is opted out for it), payloads and headers per spec on both bindings, order,
//! exactly-once per event and config, retries with backoff, a receiver that is down or hangs,
//! config validation naming the field, and the URL guard's corpus at registration and at
//! connect time with a loopback canary that must see nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_runtime::protocol::Principal;
use a2a_runtime::push::{HostResolver, PushConfig, PushMetrics, PushSender, RetryPolicy};
use a2a_runtime::server::{A2aServer, A2aServerBuilder, BuildError};
use a2a_runtime::store::{
    InMemoryPushConfigStore, InMemoryPushOutbox, InMemoryTaskStore, PushConfigStore, PushOutbox,
    Scope, StoreError, TaskStore,
};
use a2a_runtime::test::*;
use a2a_runtime::types::TaskPushNotificationConfig;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// The receiver
// ---------------------------------------------------------------------------------------------

/// One request the receiver got.
#[derive(Clone, Debug)]
struct Hit {
    path: String,
    headers: HashMap<String, String>,
    body: Value,
    at: Instant,
    /// Whether it was answered 2xx (delivered).
    ok: bool,
}

#[derive(Default)]
struct ReceiverState {
    hits: Mutex<Vec<Hit>>,
    per_path: Mutex<HashMap<String, usize>>,
    redirect_to: Mutex<String>,
    /// `/switch/…` answers 500 while this is set.
    failing: std::sync::atomic::AtomicBool,
}

/// A webhook receiver on 127.0.0.1. Behaviour by path prefix:
/// `/ok/…` 200; `/slow/…` 200 after 10 ms; `/flaky/…` 500 three times, then 200; `/hang/…` never answers the first
/// request, then 200; `/redirect/…` 302 to the canary; anything else 200.
struct Receiver {
    url: String,
    state: Arc<ReceiverState>,
    handle: actix_web::dev::ServerHandle,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

async fn handle(req: HttpRequest, body: web::Bytes, st: web::Data<ReceiverState>) -> HttpResponse {
    let path = req.path().to_owned();
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                v.to_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let n = {
        let mut per = st.per_path.lock().unwrap();
        let n = per.entry(path.clone()).or_default();
        *n += 1;
        *n
    };
    let fail = (path.starts_with("/flaky/") && n <= 3)
        || (path.starts_with("/switch/") && st.failing.load(Ordering::SeqCst));
    let hangs = path.starts_with("/hang/") && n == 1;
    let ok = !(fail || hangs || path.starts_with("/redirect/"));
    st.hits.lock().unwrap().push(Hit {
        path: path.clone(),
        headers,
        body,
        at: Instant::now(),
        ok,
    });
    if fail {
        return HttpResponse::InternalServerError().finish();
    }
    if path.starts_with("/hang/") && n == 1 {
        std::future::pending::<()>().await;
    }
    if path.starts_with("/slow/") {
        // A slow receiver (its work, not a synchronization).
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if path.starts_with("/redirect/") {
        let to = st.redirect_to.lock().unwrap().clone();
        return HttpResponse::Found()
            .insert_header(("location", to))
            .finish();
    }
    HttpResponse::Ok().finish()
}

impl Receiver {
    async fn start() -> Self {
        Self::start_on("127.0.0.1:0").await
    }

    async fn start_on(addr: &str) -> Self {
        let state = Arc::new(ReceiverState::default());
        let data = web::Data::from(state.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(handle))
        })
        .workers(1)
        .bind(addr)
        .expect("bind the receiver");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            url: format!("http://127.0.0.1:{port}"),
            state,
            handle,
        }
    }

    fn port(&self) -> u16 {
        self.url.rsplit(':').next().unwrap().parse().unwrap()
    }

    fn hits(&self, prefix: &str) -> Vec<Hit> {
        self.state
            .hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.path.starts_with(prefix))
            .cloned()
            .collect()
    }

    fn total(&self) -> usize {
        self.state.hits.lock().unwrap().len()
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Waits (polling every 5 ms, at most [`TIMEOUT`]) until `done` holds.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    within(what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

fn quick() -> RetryPolicy {
    RetryPolicy {
        base: Duration::from_millis(20),
        cap: Duration::from_millis(80),
        ..RetryPolicy::default()
    }
}

/// Push for tests against the loopback receiver: guard off, short retries.
fn dev_push() -> PushConfig {
    PushConfig::new()
        .allow_private_networks(true)
        .retry(quick())
        .poll_interval(Duration::from_millis(50))
        .timeout(Duration::from_secs(5))
}

async fn start(builder: A2aServerBuilder) -> (TestServer, Arc<PushSender>) {
    let server = builder.workers(1).build().expect("build the server");
    let sender = server.push().expect("push is on").clone();
    let running = server.start("127.0.0.1:0").await.expect("start the server");
    (
        TestServer::attached(running.url(), running.handle()),
        sender,
    )
}

async fn push_server(push: PushConfig) -> (TestServer, Arc<PushSender>, Control) {
    let (agent, control) = script_agent();
    let (server, sender) = start(
        A2aServer::builder()
            .card(agent_card("push"))
            .executor(agent)
            .push(push),
    )
    .await;
    (server, sender, control)
}

fn inline(params: Value, config: Value) -> Value {
    with_config(params, json!({ "taskPushNotificationConfig": config }))
}

fn m(sender: &PushSender) -> PushMetrics {
    sender.metrics()
}

/// A resolver the test controls: names to addresses; `rebind.example.com` answers a public
/// address the first time and loopback afterwards.
#[derive(Debug, Default)]
struct TestDns {
    rebinds: AtomicUsize,
}

#[a2a_runtime::async_trait]
impl HostResolver for TestDns {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let ips: &[&str] = match host {
            "example.com" | "hooks.example.com" => &["93.184.216.34"],
            "loopback.example.com" | "127.0.0.1.nip.io" => &["127.0.0.1"],
            "mixed.example.com" => &["93.184.216.34", "10.0.0.1"],
            "v6loop.example.com" => &["::1"],
            "mapped.example.com" => &["::ffff:127.0.0.1"],
            "private.example.com" => &["192.168.1.1"],
            "meta.example.com" => &["169.254.169.254"],
            "cgnat.example.com" => &["100.64.0.1"],
            "ula.example.com" => &["fd00::1"],
            "rebind.example.com" => {
                if self.rebinds.fetch_add(1, Ordering::SeqCst) == 0 {
                    &["93.184.216.34"]
                } else {
                    &["127.0.0.1"]
                }
            }
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such host",
                ));
            }
        };
        Ok(ips.iter().map(|s| s.parse().unwrap()).collect())
    }
}

/// Push with the guard on, resolving through [`TestDns`].
fn guarded(dns: Arc<TestDns>) -> PushConfig {
    PushConfig::new()
        .resolver(dns)
        .retry(quick())
        .poll_interval(Duration::from_millis(50))
}

// ---------------------------------------------------------------------------------------------
// Capability
// ---------------------------------------------------------------------------------------------

/// Enabling push declares the capability; declaring it without a sender is a startup error.
#[tokio::test]
async fn push_capability_follows_the_sender() {
    let (agent, _control) = script_agent();
    let server = A2aServer::builder()
        .card(agent_card("on"))
        .executor(agent)
        .push(PushConfig::new())
        .build()
        .unwrap();
    assert_eq!(server.card().capabilities.push_notifications, Some(true));
    let (agent, _control) = script_agent();
    let mut declared = agent_card("declared");
    declared.capabilities.push_notifications = Some(true);
    let err = A2aServer::builder()
        .card(declared)
        .executor(agent)
        .build()
        .unwrap_err();
    assert!(matches!(err, BuildError::PushWithoutSender), "{err}");
    assert!(err.to_string().contains(".push("), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Delivery
// ---------------------------------------------------------------------------------------------

/// Every event of a streamed task reaches the webhook once, in the stream's order, with the
/// stream's JSON (the REST form, whatever the binding), `Content-Type: application/a2a+json`,
/// the token and the Authorization header; two configs each get every event.
#[tokio::test]
async fn each_event_is_posted_once_per_config_in_order_with_headers_on_both_bindings() {
    let rx = Receiver::start().await;
    let (server, sender, _control) = push_server(dev_push()).await;
    let mut expected_total = 0;
    for binding in Binding::BOTH {
        let tag = format!("{binding:?}");
        let params = inline(
            msg("ask"),
            json!({"url": format!("{}/ok/{tag}/a", rx.url), "token": "tok-a",
                   "authentication": {"scheme": "Bearer", "credentials": "s3cr3t"}}),
        );
        let first = server
            .stream(binding, "SendStreamingMessage", params)
            .await
            .unwrap();
        let mut events: Vec<Value> = first.collect().await.into_iter().map(|e| e.data).collect();
        let task_id = events[0]["task"]["id"].as_str().unwrap().to_owned();
        // The opening snapshot of a new task's stream is the stream's own (no logged event).
        events.remove(0);
        let a_path = format!("/ok/{tag}/a");
        let n = events.len();
        // The first turn is delivered before config b exists.
        eventually("the first turn", || rx.hits(&a_path).len() >= n).await;
        // A second config, registered while the task waits for input.
        server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "b", "url": format!("{}/ok/{tag}/b", rx.url),
                       "authentication": {"scheme": "Basic", "credentials": "dXNlcjpwdw=="}}),
            )
            .await;
        let second = server
            .stream(binding, "SendStreamingMessage", msg_to(&task_id, "Ada"))
            .await
            .unwrap();
        let later: Vec<Value> = second
            .collect()
            .await
            .into_iter()
            .map(|e| e.data) // Its opening snapshot is the turn's logged start.
            .collect();
        assert!(later.len() >= 2, "{later:?}");
        events.extend(later.iter().cloned());
        expected_total += events.len() + later.len();
        let total = expected_total as u64;
        eventually("every delivery", || m(&sender).delivered >= total).await;

        let a = rx.hits(&format!("/ok/{tag}/a"));
        let bodies: Vec<&Value> = a.iter().map(|h| &h.body).collect();
        assert_eq!(
            bodies,
            events.iter().collect::<Vec<_>>(),
            "{tag}: config a, in order, once each"
        );
        for h in &a {
            assert_eq!(h.headers["content-type"], "application/a2a+json");
            assert_eq!(h.headers["authorization"], "Bearer s3cr3t");
            assert_eq!(h.headers["a2a-notification-token"], "tok-a");
            assert_eq!(h.headers["x-a2a-notification-token"], "tok-a");
            assert_eq!(
                h.body.as_object().unwrap().len(),
                1,
                "one StreamResponse member"
            );
        }
        let b = rx.hits(&format!("/ok/{tag}/b"));
        let bodies: Vec<&Value> = b.iter().map(|h| &h.body).collect();
        assert_eq!(
            bodies,
            later.iter().collect::<Vec<_>>(),
            "{tag}: config b gets what follows its creation"
        );
        assert!(
            b.iter()
                .all(|h| h.headers["authorization"] == "Basic dXNlcjpwdw==")
        );
        assert!(
            b.iter()
                .all(|h| !h.headers.contains_key("a2a-notification-token"))
        );
        assert_eq!(
            a.last().unwrap().body["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    let metrics = m(&sender);
    assert_eq!(metrics.delivered, expected_total as u64, "{metrics:?}");
    assert_eq!(
        metrics.attempted, expected_total as u64,
        "exactly once: {metrics:?}"
    );
    assert_eq!(rx.total(), expected_total, "no extra request");
    assert_eq!(sender.pending().await.unwrap(), 0);
}

/// A receiver answering 500 three times gets the first event four times, after backoff, then
/// the rest in order; the counters say so.
#[tokio::test]
async fn three_500s_then_200_is_delivered_after_backoff_and_keeps_the_order() {
    let rx = Receiver::start().await;
    let (server, sender, _control) = push_server(dev_push()).await;
    let params = inline(msg("chatty"), json!({"url": format!("{}/flaky/1", rx.url)}));
    let stream = server
        .stream(Binding::JsonRpc, "SendStreamingMessage", params)
        .await
        .unwrap();
    let mut events: Vec<Value> = stream.collect().await.into_iter().map(|e| e.data).collect();
    events.remove(0); // The stream's own opening snapshot.
    let n = events.len();
    eventually("delivered after retries", || {
        m(&sender).delivered == n as u64
    })
    .await;
    let hits = rx.hits("/flaky/1");
    assert_eq!(
        hits.len(),
        n + 3,
        "three failed attempts, then each event once"
    );
    for h in &hits[..4] {
        assert_eq!(
            h.body, events[0],
            "the first event is retried before anything else"
        );
    }
    let after: Vec<&Value> = hits[3..].iter().map(|h| &h.body).collect();
    assert_eq!(after, events.iter().collect::<Vec<_>>());
    // Backoff: each retry waited (full jitter may pick a short wait, never a negative one).
    assert!(hits[3].at >= hits[0].at);
    let metrics = m(&sender);
    assert_eq!((metrics.retried, metrics.dead), (3, 0), "{metrics:?}");
    assert_eq!(metrics.attempted, n as u64 + 3);
}

/// A receiver that is down gets the notification once it is up.
#[tokio::test]
async fn a_receiver_down_then_up_gets_the_notification() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (server, sender, _control) = push_server(dev_push()).await;
    let params = inline(
        msg("hello"),
        json!({"url": format!("http://127.0.0.1:{port}/ok/late")}),
    );
    let task = server.send_task(Binding::Rest, params).await;
    assert_eq!(
        state(&task),
        "TASK_STATE_COMPLETED",
        "the agent never waits for push"
    );
    eventually("a failed attempt", || m(&sender).retried >= 1).await;
    let rx = Receiver::start_on(&format!("127.0.0.1:{port}")).await;
    eventually("delivered once up", || m(&sender).delivered >= 1).await;
    let hits = rx.hits("/ok/late");
    // The first logged event: the echo agent's artifact.
    assert_eq!(hits[0].body["artifactUpdate"]["taskId"], task["id"]);
    assert_eq!(m(&sender).dead, 0);
}

/// A receiver that never answers times out and is retried, while another task's webhook is
/// served meanwhile.
#[tokio::test]
async fn a_hanging_receiver_times_out_and_retries_while_other_tasks_are_delivered() {
    let rx = Receiver::start().await;
    let push = dev_push().timeout(Duration::from_secs(3));
    let (server, sender, _control) = push_server(push).await;
    let slow = inline(msg("hello"), json!({"url": format!("{}/hang/a", rx.url)}));
    server.send_task(Binding::JsonRpc, slow).await;
    eventually("the hanging request", || rx.hits("/hang/a").len() == 1).await;
    let fast = inline(msg("chatty"), json!({"url": format!("{}/ok/b", rx.url)}));
    let task = server.send_task(Binding::JsonRpc, fast).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    // Its three logged events (two steps, the completion).
    eventually("the other task's webhook", || rx.hits("/ok/b").len() >= 3).await;
    assert_eq!(rx.hits("/hang/a").len(), 1, "still hanging meanwhile");
    // The receiver records a hit before it answers: the sender counts it once the answer is in.
    eventually("the deliveries counted", || m(&sender).delivered >= 3).await;
    assert_eq!(m(&sender).delivered, 3, "only the other task's, so far");
    eventually("the hanging one retried", || rx.hits("/hang/a").len() >= 2).await;
    let first = rx.hits("/hang/a");
    assert_eq!(
        first[0].body, first[1].body,
        "the timed-out event is sent again first"
    );
    eventually("delivered", || {
        let h = rx.hits("/hang/a");
        h.last()
            .is_some_and(|h| h.body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
    })
    .await;
    assert!(m(&sender).retried >= 1);
}

/// A burst of events much faster than the receiver (which takes 10 ms a request, one at a
/// time per task): nothing waits in a queue that could drop, so every event of every task is
/// delivered, once, in order per task, and the outbox drains.
#[tokio::test]
async fn a_burst_faster_than_the_receiver_is_delivered_whole_and_in_order() {
    burst("memory:").await;
}

#[tokio::test]
async fn a_burst_on_sqlite_is_delivered_whole_and_in_order() {
    let (dir, url) = sqlite_file("a2a-push-burst");
    burst(&url).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`a_burst_faster_than_the_receiver_is_delivered_whole_and_in_order`] on `store_url`.
async fn burst(store_url: &str) {
    let rx = Receiver::start().await;
    let (server, sender, _control) = server_on(store_url, "burst", dev_push().concurrency(4)).await;
    let tasks = 40;
    let mut expected = Vec::new();
    for i in 0..tasks {
        let path = format!("/slow/burst/{i}/");
        let params = inline(msg("chatty"), json!({"url": format!("{}{path}", rx.url)}));
        let task = server.send_task(Binding::JsonRpc, params).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED");
        expected.push((path, id(&task)));
    }
    // Every task's log: its two steps and its completion.
    let total = 3 * tasks as u64;
    eventually("every delivery", || m(&sender).delivered >= total).await;
    for (path, id) in &expected {
        let got: Vec<String> = delivered(&rx, path)
            .iter()
            .map(|b| {
                assert_eq!(b["statusUpdate"]["taskId"], id.as_str());
                b["statusUpdate"]["status"]["message"]["parts"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            got,
            ["step 1", "step 2", "finished"],
            "{path}: in order, once each"
        );
    }
    let metrics = m(&sender);
    assert_eq!(
        (metrics.attempted, metrics.delivered),
        (total, total),
        "{metrics:?}"
    );
    assert_eq!(sender.pending().await.unwrap(), 0);
}

/// The in-memory outbox's bound is its own, documented limit: a write that would pass it is
/// refused whole (the event is not stored, the publish fails to be retried), never dropped
/// after the event was stored.
#[tokio::test]
async fn the_in_memory_outbox_bound_refuses_the_write_it_cannot_hold() {
    let configs = Arc::new(InMemoryPushConfigStore::new());
    let outbox = Arc::new(InMemoryPushOutbox::new().with_max_pending(2));
    let tasks = InMemoryTaskStore::new()
        .with_push_configs(configs.clone())
        .with_push_outbox(outbox.clone());
    let scope = Scope::new("", "me");
    let mut task = a2a_runtime::types::Task {
        id: "t".into(),
        context_id: "c".into(),
        ..Default::default()
    };
    let config = TaskPushNotificationConfig {
        id: "a".into(),
        task_id: "t".into(),
        url: "http://127.0.0.1:1/hook".into(),
        ..TaskPushNotificationConfig::default()
    };
    configs.put(&scope, &config).await.unwrap();
    let event = |t: &a2a_runtime::types::Task| a2a_runtime::types::StreamResponse::Task(t.clone());
    assert_eq!(
        tasks
            .create(&scope, &task, Some(&event(&task)))
            .await
            .unwrap(),
        1
    );
    task.status.state = a2a_runtime::types::TaskState::Working;
    assert_eq!(
        tasks
            .update(&scope, &task, 1, Some(&event(&task)))
            .await
            .unwrap(),
        2
    );
    task.status.state = a2a_runtime::types::TaskState::InputRequired;
    let full = tasks.update(&scope, &task, 2, Some(&event(&task))).await;
    assert!(matches!(full, Err(StoreError::OutboxFull(2))), "{full:?}");
    assert_eq!(outbox.refused(), 1);
    assert_eq!(outbox.pending().await.unwrap(), 2);
    let stored = tasks.get(&scope, &"t".into()).await.unwrap().unwrap();
    assert_eq!(stored.version, 2, "the refused event was not stored either");
    // Once a delivery is settled there is room again.
    let claimed = outbox.claim("me", i64::MAX - 1, i64::MAX, 1).await.unwrap();
    outbox.complete(claimed[0].id).await.unwrap();
    assert_eq!(
        tasks
            .update(&scope, &task, 2, Some(&event(&task)))
            .await
            .unwrap(),
        3
    );
    assert_eq!(outbox.pending().await.unwrap(), 2);
}

/// A 3xx is not followed (the canary behind it sees nothing) and the delivery is dead, listed
/// with why.
#[tokio::test]
async fn redirects_are_not_followed_and_the_delivery_is_dead() {
    let canary = Receiver::start().await;
    let rx = Receiver::start().await;
    *rx.state.redirect_to.lock().unwrap() = format!("{}/canary", canary.url);
    let (server, sender, _control) = push_server(dev_push()).await;
    let params = inline(
        msg("hello"),
        json!({"url": format!("{}/redirect/x", rx.url)}),
    );
    server.send_task(Binding::Rest, params).await;
    eventually("dead", || m(&sender).dead >= 1).await;
    let dead = sender.dead_deliveries(10).await.unwrap();
    assert!(
        dead[0].last_error.contains("redirects are not followed"),
        "{dead:?}"
    );
    assert_eq!(canary.total(), 0);
}

/// Nothing is sent for a config once it is deleted.
#[tokio::test]
async fn nothing_is_sent_after_a_config_is_deleted() {
    let rx = Receiver::start().await;
    let (server, sender, _control) = push_server(dev_push()).await;
    for binding in Binding::BOTH {
        let task_id = id(&server.send_task(binding, msg("ask")).await);
        let url = format!("{}/ok/deleted", rx.url);
        server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "gone", "url": url}),
            )
            .await;
        server
            .ok(
                binding,
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "gone"}),
            )
            .await;
        let kept = format!("{}/ok/kept", rx.url);
        server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "kept", "url": kept}),
            )
            .await;
        let before = rx.hits("/ok/kept").len();
        server.send_task(binding, msg_to(&task_id, "Ada")).await;
        eventually("the kept config's deliveries", || {
            rx.hits("/ok/kept").len() >= before + 2
        })
        .await;
    }
    assert!(rx.hits("/ok/deleted").is_empty());
    assert_eq!(m(&sender).dead, 0);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Every malformed field is InvalidParams naming it, on both bindings, for
/// CreateTaskPushNotificationConfig and inline in SendMessage; an upper-case scheme is fine.
#[tokio::test]
async fn every_malformed_field_is_invalid_params_naming_it_on_both_bindings() {
    let (server, _sender, _control) = push_server(guarded(Arc::new(TestDns::default()))).await;
    let good = "https://example.com/hook";
    let huge = format!("https://example.com/{}", "a".repeat(1 << 20));
    let cases: Vec<(Value, &str)> = vec![
        (json!({"url": ""}), "url"),
        (json!({"url": "http://exa mple.com/"}), "url"),
        (json!({"url": huge}), "url"),
        (json!({"url": "ftp://example.com/"}), "url"),
        (json!({"url": "example.com/hook"}), "url"),
        (json!({"url": "http://user:pw@example.com/"}), "url"),
        (json!({"url": "https://example.com/\r\nX-Evil: 1"}), "url"),
        (json!({"url": good, "token": "a\r\nb"}), "token"),
        (json!({"url": good, "token": "t".repeat(5000)}), "token"),
        (
            json!({"url": good, "authentication": {"scheme": "Bearer\r\nX: y"}}),
            "authentication.scheme",
        ),
        (
            json!({"url": good, "authentication": {"scheme": ""}}),
            "authentication.scheme",
        ),
        (
            json!({"url": good, "authentication": {"scheme": "Bearer", "credentials": "a\nb"}}),
            "authentication.credentials",
        ),
        (
            json!({"url": good, "authentication": {"scheme": "Bearer", "credentials": "x".repeat(5000)}}),
            "authentication.credentials",
        ),
    ];
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("ask")).await;
        let task_id = id(&task);
        for (config, field) in &cases {
            let mut c = config.clone();
            c["taskId"] = json!(task_id);
            server
                .err(binding, "CreateTaskPushNotificationConfig", c)
                .await
                .assert_invalid(field);
            let prefixed = format!("configuration.taskPushNotificationConfig.{field}");
            server
                .err(binding, "SendMessage", inline(msg("hello"), config.clone()))
                .await
                .assert_invalid(&prefixed);
        }
        let ok = server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "url": "HTTPS://example.com/hook"}),
            )
            .await;
        assert!(!ok["id"].as_str().unwrap().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// The URL guard
// ---------------------------------------------------------------------------------------------

/// Webhook URLs the guard must refuse (`{p}` is the canary's port).
fn corpus(p: u16) -> Vec<String> {
    let hosts = [
        // Loopback in every spelling the URL standard reads.
        "127.0.0.1",
        "127.1",
        "127.0.1",
        "2130706433",
        "0x7f000001",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "0177.1",
        "017700000001",
        "127.000.000.001",
        "127.255.255.254",
        "0x7F.0x00.0x00.0x01",
        // This network / unspecified.
        "0.0.0.0",
        "0",
        "0x0",
        "0.1.2.3",
        // Private.
        "10.0.0.1",
        "10.255.255.255",
        "012.0.0.1",
        "167772161",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.0.1",
        "192.168.1.1",
        "3232235777",
        "0xc0a80101",
        // Link-local and cloud metadata.
        "169.254.169.254",
        "169.254.0.1",
        "0xa9fea9fe",
        "2852039166",
        // CGNAT, documentation, benchmarking, IETF, AS112/AMT/6to4 relay, multicast, reserved.
        "100.64.0.1",
        "100.127.255.254",
        "192.0.2.1",
        "198.51.100.1",
        "203.0.113.1",
        "198.18.0.1",
        "198.19.255.254",
        "192.0.0.1",
        "192.0.0.170",
        "192.31.196.1",
        "192.52.193.1",
        "192.88.99.1",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        // IPv6.
        "[::1]",
        "[::]",
        "[0:0:0:0:0:0:0:1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::ffff:10.0.0.1]",
        "[::ffff:169.254.169.254]",
        "[::127.0.0.1]",
        "[64:ff9b::127.0.0.1]",
        "[64:ff9b::a9fe:a9fe]",
        "[64:ff9b:1::1]",
        "[fe80::1]",
        "[fc00::1]",
        "[fd00::1]",
        "[fec0::1]",
        "[ff02::1]",
        "[2001:db8::1]",
        "[2001::1]",
        "[2002:7f00:1::]",
        "[100::1]",
        "[3fff::1]",
        "[5f00::1]",
        // Local names.
        "localhost",
        "LOCALHOST",
        "localhost.",
        "a.localhost",
        "foo.bar.localhost",
        "metadata.google.internal",
        "metadata",
        "something.internal",
        "printer.local",
        "router.home.arpa",
        "1.0.0.127.in-addr.arpa",
        // Names that resolve to refused addresses (through the test's resolver).
        "loopback.example.com",
        "127.0.0.1.nip.io",
        "mixed.example.com",
        "v6loop.example.com",
        "mapped.example.com",
        "private.example.com",
        "meta.example.com",
        "cgnat.example.com",
        "ula.example.com",
    ];
    let mut urls: Vec<String> = hosts
        .iter()
        .map(|h| format!("http://{h}:{p}/hook"))
        .collect();
    urls.extend([
        // Userinfo tricks.
        format!("http://example.com@127.0.0.1:{p}/"),
        format!("http://user:pass@example.com:{p}/"),
        format!("http://a@b@127.0.0.1:{p}/"),
        format!("http://127.0.0.1:{p}#@example.com/"),
        format!("http://127.0.0.1:{p}\\@example.com/"),
        // Well-known non-web ports on a public host.
        "http://example.com:22/".into(),
        "http://example.com:25/".into(),
        "http://example.com:53/".into(),
        "https://example.com:445/".into(),
        "http://example.com:0/".into(),
        // Other schemes.
        format!("ftp://127.0.0.1:{p}/"),
        "file:///etc/passwd".into(),
        format!("gopher://127.0.0.1:{p}/"),
        format!("dict://127.0.0.1:{p}/"),
        "javascript:alert(1)".into(),
    ]);
    urls
}

/// The corpus is refused at registration on both bindings, as a config and inline.
#[tokio::test]
async fn the_guard_refuses_the_whole_corpus_at_registration() {
    let canary = Receiver::start().await;
    let urls = corpus(canary.port());
    assert!(urls.len() >= 80, "{}", urls.len());
    let (server, sender, _control) = push_server(guarded(Arc::new(TestDns::default()))).await;
    for binding in Binding::BOTH {
        let task_id = id(&server.send_task(binding, msg("ask")).await);
        for url in &urls {
            let e = server
                .err(
                    binding,
                    "CreateTaskPushNotificationConfig",
                    json!({"taskId": task_id, "url": url}),
                )
                .await;
            e.assert_invalid("url");
            let e = server
                .err(
                    binding,
                    "SendMessage",
                    inline(msg("hello"), json!({"url": url})),
                )
                .await;
            e.assert_invalid("configuration.taskPushNotificationConfig.url");
        }
    }
    assert!(m(&sender).refused_configs > 0);
    assert_eq!(canary.total(), 0, "the canary saw nothing");
}

/// The same corpus, stored behind the guard's back (as if registered before a DNS change, or
/// by an older version), is refused when the sender connects; so is a name that resolved to a
/// public address at registration and to loopback later (DNS rebinding). The canary sees
/// nothing, and every delivery is dead.
#[tokio::test]
async fn the_guard_refuses_the_whole_corpus_at_connect_time() {
    let canary = Receiver::start().await;
    let dns = Arc::new(TestDns::default());
    let store = Arc::new(InMemoryPushConfigStore::new());
    let tasks = InMemoryTaskStore::new()
        .with_push_configs(store.clone())
        .with_push_outbox(Arc::new(InMemoryPushOutbox::new()));
    let (agent, _control) = script_agent();
    let (server, sender) = start(
        A2aServer::builder()
            .card(agent_card("guarded"))
            .executor(agent)
            .task_store(Arc::new(tasks))
            .push_config_store(store.clone())
            .push(guarded(dns.clone())),
    )
    .await;
    let task_id = id(&server.send_task(Binding::JsonRpc, msg("ask")).await);
    // Rebinding: accepted at registration (a public address then).
    let rebind = format!("http://rebind.example.com:{}/hook", canary.port());
    server
        .ok(
            Binding::JsonRpc,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "rebind", "url": rebind}),
        )
        .await;
    let scope = Scope::new("", Principal::ANONYMOUS_ID);
    let urls = corpus(canary.port());
    for (i, url) in urls.iter().enumerate() {
        let config = TaskPushNotificationConfig {
            id: format!("c{i}").into(),
            task_id: task_id.clone().into(),
            url: url.clone(),
            ..TaskPushNotificationConfig::default()
        };
        store.put(&scope, &config).await.unwrap();
    }
    let configs = urls.len() as u64 + 1;
    let task = server
        .send_task(Binding::JsonRpc, msg_to(&task_id, "Ada"))
        .await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    // The continued turn's events (an artifact and the completion), to every config.
    eventually("every delivery settled", || m(&sender).dead >= 2 * configs).await;
    let metrics = m(&sender);
    assert_eq!(metrics.delivered, 0, "{metrics:?}");
    // All but the 9 URLs that do not even parse as webhooks (userinfo, backslash, schemes).
    assert!(metrics.blocked >= 2 * (configs - 9), "{metrics:?}");
    let dead = sender.dead_deliveries(10_000).await.unwrap();
    let rebound: Vec<_> = dead
        .iter()
        .filter(|d| d.new.config_id.as_str() == "rebind")
        .collect();
    assert!(!rebound.is_empty());
    assert!(
        rebound
            .iter()
            .all(|d| d.last_error.contains("blocked by the URL guard")),
        "{rebound:?}"
    );
    assert_eq!(canary.total(), 0, "the canary saw nothing");
}

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------

/// Deliveries per second to a local receiver (in-memory outbox) and the added latency from the
/// event (its status timestamp) to the webhook, p50/p99. Printed for the closing note.
#[tokio::test]
async fn figures_deliveries_per_second_and_latency() {
    let rx = Receiver::start().await;
    let (server, sender, _control) = push_server(dev_push()).await;
    let tasks = 200;
    let t = Instant::now();
    let started = chrono::Utc::now();
    for i in 0..tasks {
        let params = inline(msg("hello"), json!({"url": format!("{}/ok/f{i}", rx.url)}));
        server.send_task(Binding::JsonRpc, params).await;
    }
    let sent = t.elapsed();
    eventually("all delivered", || {
        let done = rx.hits("/ok/f").len();
        // Each task's logged events: its artifact and its completion.
        done >= tasks * 2
    })
    .await;
    let elapsed = t.elapsed();
    let hits = rx.hits("/ok/f");
    let mut lat: Vec<i64> = hits
        .iter()
        .filter_map(|h| {
            let ts = h.body["statusUpdate"]["status"]["timestamp"].as_str()?;
            let ts = chrono::DateTime::parse_from_rfc3339(ts).ok()?;
            let arrived = started + chrono::Duration::from_std(h.at - t).ok()?;
            (arrived - ts.with_timezone(&chrono::Utc)).num_microseconds()
        })
        .collect();
    lat.sort_unstable();
    let pct = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize] as f64 / 1000.0;
    println!(
        "push figures: {} deliveries in {:.0} ms ({:.0}/s; agents done in {:.0} ms); event->webhook p50 {:.2} ms, p99 {:.2} ms ({} samples)",
        hits.len(),
        elapsed.as_secs_f64() * 1000.0,
        hits.len() as f64 / elapsed.as_secs_f64(),
        sent.as_secs_f64() * 1000.0,
        pct(0.5),
        pct(0.99),
        lat.len()
    );
    assert_eq!(m(&sender).dead, 0);
}

// ---------------------------------------------------------------------------------------------
// The durable outbox: restarts and instances sharing a database
// ---------------------------------------------------------------------------------------------

/// Push for the durable-outbox tests: short retries, and a short lease, so that a delivery an
/// instance held when it stopped is taken over within the test's time.
fn durable_push() -> PushConfig {
    dev_push()
        .retry(RetryPolicy {
            base: Duration::from_millis(100),
            cap: Duration::from_millis(300),
            ..RetryPolicy::default()
        })
        .timeout(Duration::from_secs(2))
        .lease(Duration::from_secs(3))
}

/// A server on the stores of `store_url`, in a runtime (and thread) of its own: stopping it
/// ends every task it started — the push sender's included, mid-attempt or waiting for a retry
/// — as the end of its process would.
struct Process {
    url: String,
    handle: actix_web::dev::ServerHandle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Process {
    async fn start(store_url: &str) -> Self {
        let store_url = store_url.to_owned();
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let stores = a2a_runtime::store::connect(&store_url).await.unwrap();
                let (agent, _control) = script_agent();
                let server = A2aServer::builder()
                    .card(agent_card("durable"))
                    .stores(stores)
                    .executor(agent)
                    .push(durable_push())
                    .shutdown_grace(Duration::from_millis(100))
                    .workers(1)
                    .build()
                    .unwrap();
                let running = server.start("127.0.0.1:0").await.unwrap();
                let _ = url_tx.send((running.url(), running.handle()));
                let _ = stopped.await;
                running.stop().await;
            });
            // The runtime goes here, and every task of the sender with it.
            rt.shutdown_background();
        });
        let (url, handle) = within("the instance starts", url_rx).await.unwrap();
        Self {
            url,
            handle,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn client(&self) -> TestServer {
        TestServer::attached(self.url.clone(), self.handle.clone())
    }

    /// Stops the server and ends its runtime; returns once it is gone.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let thread = self.thread.take().unwrap();
        within(
            "the instance stops",
            tokio::task::spawn_blocking(move || thread.join()),
        )
        .await
        .unwrap()
        .unwrap();
    }
}

/// A server with push on the stores of `store_url`, in this runtime.
async fn server_on(
    store_url: &str,
    name: &str,
    push: PushConfig,
) -> (TestServer, Arc<PushSender>, Control) {
    let stores = a2a_runtime::store::connect(store_url).await.unwrap();
    let (agent, control) = script_agent();
    let (server, sender) = start(
        A2aServer::builder()
            .card(agent_card(name))
            .stores(stores)
            .executor(agent)
            .push(push),
    )
    .await;
    (server, sender, control)
}

/// The deliveries the receiver acknowledged under `prefix`, in arrival order.
fn delivered(rx: &Receiver, prefix: &str) -> Vec<Value> {
    rx.hits(prefix)
        .into_iter()
        .filter(|h| h.ok)
        .map(|h| h.body)
        .collect()
}

/// The receiver fails; the server is stopped while a delivery waits for its retry (or is in
/// flight); a new server on the same store delivers every event of the task once, in order.
async fn restart_mid_retry(store_url: &str, outbox: Arc<dyn PushOutbox>) {
    let pending = || {
        let outbox = outbox.clone();
        async move { outbox.pending().await.unwrap() }
    };
    let rx = Receiver::start().await;
    rx.state.failing.store(true, Ordering::SeqCst);
    let first = Process::start(store_url).await;
    let params = inline(msg("hello"), json!({"url": format!("{}/switch/r", rx.url)}));
    // (A client's drop stops the server: it lives until the stop.)
    let client = first.client();
    let stream = client
        .stream(Binding::JsonRpc, "SendStreamingMessage", params)
        .await
        .unwrap();
    let mut events: Vec<Value> = stream.collect().await.into_iter().map(|e| e.data).collect();
    events.remove(0); // The stream's own opening snapshot.
    assert!(events.len() >= 2, "{events:?}");
    // Every event is in the outbox, and the first has failed at least once.
    let n = events.len();
    within("the deliveries are in the outbox", async {
        while pending().await < n {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    eventually("a failed attempt", || rx.hits("/switch/r").len() >= 2).await;
    drop(client);
    first.stop().await;
    let failed = rx.hits("/switch/r").len();
    assert!(delivered(&rx, "/switch/r").is_empty());
    assert_eq!(pending().await, n, "the deliveries survived the stop");

    // The receiver is back; a new server on the same store resumes the deliveries.
    rx.state.failing.store(false, Ordering::SeqCst);
    let second = Process::start(store_url).await;
    eventually("delivered after the restart", || {
        delivered(&rx, "/switch/r").len() >= n
    })
    .await;
    within("the outbox drains", async {
        while pending().await > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    second.stop().await;
    assert_eq!(
        delivered(&rx, "/switch/r"),
        events,
        "every event delivered exactly once, in order ({failed} failed attempts before the stop)"
    );
}

/// A fresh directory `{name}-{pid}` for a test's SQLite file, and the file's store URL.
fn sqlite_file(name: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!("sqlite://{}/tasks.db", dir.display());
    (dir, url)
}

#[tokio::test]
async fn sqlite_restart_mid_retry_resumes_from_the_outbox_and_delivers_once() {
    let (dir, url) = sqlite_file("a2a-push-restart");
    let probe = Arc::new(a2a_runtime::store::SqliteStore::open(&url).await.unwrap());
    restart_mid_retry(&url, probe.clone()).await;
    probe.pool().close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn postgres_restart_mid_retry_resumes_from_the_outbox_and_delivers_once() {
    let db = a2a_tests::pg::PgDatabase::create_named("a2a_push").await;
    let probe = Arc::new(
        a2a_runtime::store::PostgresStore::connect(&db.url)
            .await
            .unwrap(),
    );
    restart_mid_retry(&db.url, probe.clone()).await;
    probe.pool().close().await;
}

/// Two instances on one PostgreSQL database, each running a workload of tasks with push: every
/// event reaches its webhook exactly once (never once per instance), in order per
/// (task, config), whichever instance sent it.
#[tokio::test]
async fn two_instances_on_postgres_deliver_each_event_once_in_order() {
    let db = a2a_tests::pg::PgDatabase::create_named("a2a_push").await;
    let rx = Receiver::start().await;
    let mut instances = Vec::new();
    for _ in 0..2 {
        instances.push(server_on(&db.url, "cluster-push", durable_push()).await);
    }
    let per_instance = 15;
    let mut expected: Vec<(String, Vec<Value>)> = Vec::new();
    for i in 0..per_instance {
        for (k, (server, _, _)) in instances.iter().enumerate() {
            let path = format!("/ok/two/{k}/{i}/");
            let params = inline(msg("hello"), json!({"url": format!("{}{path}", rx.url)}));
            let stream = server
                .stream(Binding::JsonRpc, "SendStreamingMessage", params)
                .await
                .unwrap();
            let mut events: Vec<Value> =
                stream.collect().await.into_iter().map(|e| e.data).collect();
            events.remove(0); // The stream's own opening snapshot.
            expected.push((path, events));
        }
    }
    let total: usize = expected.iter().map(|(_, e)| e.len()).sum();
    eventually("every delivery", || rx.hits("/ok/two/").len() >= total).await;
    within("the senders count what the receiver saw", async {
        loop {
            let n: u64 = instances.iter().map(|(_, s, _)| m(s).delivered).sum();
            if n >= total as u64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    for (path, events) in &expected {
        let got: Vec<Value> = rx.hits(path).into_iter().map(|h| h.body).collect();
        assert_eq!(&got, events, "{path}: each event once, in order");
    }
    assert_eq!(rx.hits("/ok/two/").len(), total, "no event delivered twice");
    let attempted: u64 = instances.iter().map(|(_, s, _)| m(s).attempted).sum();
    assert_eq!(
        attempted, total as u64,
        "one attempt per delivery over both instances"
    );
    // Counted as delivered before it is removed: the outbox empties just after.
    within("the outbox drains", async {
        while instances[0].1.pending().await.unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

/// The crash window is closed: what the handler writes for a task with a webhook — the
/// config, then the task's events — written through the stores while no sender exists (as
/// by a process killed right after its writes, before any delivery was attempted), is
/// delivered by the next server on the same database: each event once, in order.
async fn events_written_without_a_sender_are_delivered_by_the_next_server(store_url: &str) {
    use a2a_runtime::types::{StreamResponse, Task, TaskState, TaskStatus};
    let rx = Receiver::start().await;
    let path = "/ok/crash/t";
    {
        let stores = a2a_runtime::store::connect(store_url).await.unwrap();
        let scope = Scope::new("", Principal::ANONYMOUS_ID);
        let config = TaskPushNotificationConfig {
            id: "hook".into(),
            task_id: "t".into(),
            url: format!("{}{path}", rx.url),
            ..TaskPushNotificationConfig::default()
        };
        stores.push_configs.put(&scope, &config).await.unwrap();
        let mut task = Task {
            id: "t".into(),
            context_id: "c".into(),
            ..Task::default()
        };
        let mut version = 0;
        for state in [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed,
        ] {
            task.status = TaskStatus {
                state,
                ..TaskStatus::default()
            };
            let event = StreamResponse::Task(task.clone());
            version = if version == 0 {
                stores
                    .tasks
                    .create(&scope, &task, Some(&event))
                    .await
                    .unwrap()
            } else {
                stores
                    .tasks
                    .update(&scope, &task, version, Some(&event))
                    .await
                    .unwrap()
            };
        }
        assert_eq!(
            stores.outbox.pending().await.unwrap(),
            3,
            "written with the events"
        );
    }
    let (_server, sender, _control) = server_on(store_url, "crash", dev_push()).await;
    eventually("the deliveries", || m(&sender).delivered >= 3).await;
    within("the outbox drains", async {
        while sender.pending().await.unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let states: Vec<Value> = rx
        .hits(path)
        .iter()
        .map(|h| h.body["task"]["status"]["state"].clone())
        .collect();
    assert_eq!(
        states,
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ],
        "each event once, in order"
    );
    let metrics = m(&sender);
    assert_eq!(
        (metrics.attempted, metrics.delivered),
        (3, 3),
        "{metrics:?}"
    );
}

#[tokio::test]
async fn sqlite_events_written_before_a_crash_are_delivered_once_after_it() {
    let (dir, url) = sqlite_file("a2a-push-crash");
    events_written_without_a_sender_are_delivered_by_the_next_server(&url).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn postgres_events_written_before_a_crash_are_delivered_once_after_it() {
    let db = a2a_tests::pg::PgDatabase::create_named("a2a_push").await;
    events_written_without_a_sender_are_delivered_by_the_next_server(&db.url).await;
}
