//! `a2a-bench push <memory|sqlite> [tasks] [conns]`: push notification throughput and latency.
//!
//! One process: a webhook receiver on 127.0.0.1 (actix, answers 200 at once), our server with
//! the examples' echo agent and push on (its outbox in memory, or in a SQLite file in a fresh
//! temporary directory), and `conns` clients sending `tasks` SendMessage requests, each with an
//! inline push config of its own URL. Each task yields three events (the task, WORKING,
//! COMPLETED), so `3 × tasks` deliveries. It prints:
//! - deliveries/s: deliveries over the time from the first request to the last delivery;
//! - the added latency from event to webhook, p50/p99: the receiver's wall clock at arrival
//!   minus the event's status timestamp (milliseconds: the figures round up by up to 1 ms).
//!
//! Bounded: at most `tasks` requests (default 2,000), and a 120 s deadline for the deliveries.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_examples::EchoAgent;
use a2a_runtime::push::PushConfig;
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::AgentCard;
use actix_web::{App, HttpResponse, HttpServer, web};

/// How long the deliveries may take in all.
const DEADLINE: Duration = Duration::from_secs(120);

/// What the receiver saw: per delivery, the arrival time (µs since the epoch) minus the
/// event's status timestamp (ms since the epoch), in µs; `None` for an event without one.
#[derive(Default)]
struct Seen {
    latencies_us: Mutex<Vec<Option<i64>>>,
}

fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

async fn receive(body: web::Bytes, seen: web::Data<Seen>) -> HttpResponse {
    let at = now_us();
    let event: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let status = event
        .get("statusUpdate")
        .or_else(|| event.get("task"))
        .and_then(|e| e.get("status"))
        .and_then(|s| s.get("timestamp"))
        .and_then(serde_json::Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
    let latency = status.map(|t| at - t.timestamp_micros());
    seen.latencies_us.lock().unwrap().push(latency);
    HttpResponse::Ok().finish()
}

fn pct(sorted: &[i64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i] as f64 / 1000.0
}

/// Runs the push benchmark with `args` = `<memory|sqlite> [tasks] [conns]`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let store = args.first().map_or("memory", String::as_str).to_owned();
    let tasks: usize = match args.get(1) {
        Some(n) => n.parse().map_err(|_| format!("bad task count {n:?}"))?,
        None => 2_000,
    };
    let conns: usize = match args.get(2) {
        Some(n) => n
            .parse()
            .map_err(|_| format!("bad connection count {n:?}"))?,
        None => 8,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(bench(&store, tasks.clamp(1, 100_000), conns.clamp(1, 64)))
}

async fn bench(store: &str, tasks: usize, conns: usize) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("a2a-bench-push-{}", std::process::id()));
    let store_url = match store {
        "memory" => "memory:".to_owned(),
        "sqlite" => {
            let _ = std::fs::remove_dir_all(&dir);
            format!("sqlite://{}/push.db", dir.display())
        }
        other => return Err(format!("unknown store {other:?}: memory or sqlite")),
    };

    let seen = web::Data::new(Seen::default());
    let data = seen.clone();
    let receiver = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .default_service(web::to(receive))
    })
    .workers(1)
    .disable_signals()
    .bind("127.0.0.1:0")
    .map_err(|e| e.to_string())?;
    let hook = format!("http://{}", receiver.addrs()[0]);
    let receiver = receiver.run();
    let receiver_handle = receiver.handle();
    tokio::spawn(receiver);

    let stores = a2a_runtime::store::connect(&store_url)
        .await
        .map_err(|e| e.to_string())?;
    let card = AgentCard {
        name: "push-bench".into(),
        description: "push benchmark".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    };
    let server = A2aServer::builder()
        .card(card)
        .stores(stores)
        .executor(EchoAgent)
        .push(PushConfig::new().allow_private_networks(true))
        .workers(1)
        .build()
        .map_err(|e| e.to_string())?;
    let sender = server.push().cloned().ok_or("push is off")?;
    let running = server
        .start("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let url = running.url();

    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..conns {
        let (client, url, hook, next) = (client.clone(), url.clone(), hook.clone(), next.clone());
        clients.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= tasks {
                    return Ok::<(), String>(());
                }
                let body = serde_json::json!({
                    "jsonrpc": "2.0", "id": i, "method": "SendMessage",
                    "params": {
                        "message": {"role": "ROLE_USER", "messageId": format!("m-{i}"),
                                    "parts": [{"text": "hello"}]},
                        "configuration": {"taskPushNotificationConfig":
                                          {"url": format!("{hook}/t/{i}")}}
                    }
                });
                let reply = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("A2A-Version", "1.0")
                    .body(body.to_string())
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if !reply.status().is_success() {
                    return Err(format!("SendMessage answered {}", reply.status()));
                }
                let text = reply.text().await.map_err(|e| e.to_string())?;
                if !text.contains("TASK_STATE_COMPLETED") {
                    return Err(format!("SendMessage did not complete: {text}"));
                }
            }
        }));
    }
    for c in clients {
        c.await.map_err(|e| e.to_string())??;
    }
    let sent = start.elapsed();
    // Each task's logged events: its artifact and its completion.
    let expected = tasks * 2;
    loop {
        let got = seen.latencies_us.lock().unwrap().len();
        if got >= expected {
            break;
        }
        if start.elapsed() > DEADLINE {
            return Err(format!(
                "only {got} of {expected} deliveries in {DEADLINE:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let elapsed = start.elapsed();
    let metrics = sender.metrics();
    running.stop().await;
    receiver_handle.stop(false).await;
    let mut lat: Vec<i64> = seen
        .latencies_us
        .lock()
        .unwrap()
        .iter()
        .flatten()
        .copied()
        .collect();
    lat.sort_unstable();
    println!(
        "push {store}: {tasks} tasks ({conns} clients), {expected} deliveries in {:.0} ms: {:.0} deliveries/s \
         (requests done in {:.0} ms); event->webhook p50 {:.2} ms, p99 {:.2} ms ({} samples); \
         attempted {}, delivered {}, dead {}",
        elapsed.as_secs_f64() * 1000.0,
        expected as f64 / elapsed.as_secs_f64(),
        sent.as_secs_f64() * 1000.0,
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        lat.len(),
        metrics.attempted,
        metrics.delivered,
        metrics.dead,
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
