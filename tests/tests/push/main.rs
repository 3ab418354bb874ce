//! Push notifications, delivered: a real webhook receiver on 127.0.0.1 (an actix server; the
//! URL guard is opted out for it), payloads and headers per spec on both bindings, order,
//! exactly-once per event and config, retries with backoff, a receiver that is down or hangs,
//! config validation naming the field, and the URL guard's corpus at registration and at
//! connect time with a loopback canary that must see nothing.
//!
//! One behaviour per module (one test binary: the link time of a binary per file dominates a
//! test run); the receiver and the servers the tests start are here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_runtime::push::{HostResolver, PushConfig, PushMetrics, PushSender, RetryPolicy};
use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

mod delivery;
mod durable;
mod guard;

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

/// A fresh directory `{name}-{pid}` for a test's SQLite file, and the file's store URL.
fn sqlite_file(name: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!("sqlite://{}/tasks.db", dir.display());
    (dir, url)
}
