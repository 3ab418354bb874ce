//! An event's latency across instances of one PostgreSQL database: the agent of a task on
//! instance A publishes timed chunks (`latency N MS`, see [`StoreAgent`](super::serve::StoreAgent)),
//! and two clients follow the task with SubscribeToTask, one on A (same instance: in-process
//! fan-out) and one on B (another instance: woken by LISTEN/NOTIFY, then reading the event log).
//! Latency = the wall clock when the SSE bytes of an event arrived at the client − the wall
//! clock just before the agent published it (one host, one clock). Both instances are child
//! processes (pinned to core 0 with pinning on); the clients run in this process.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::serve::now_us;
use super::{Options, PgDb, Report, Row, Store, StoreServer, quantile};

/// What one subscriber saw.
#[derive(Debug, Default)]
struct Followed {
    /// Per chunk: its index in the agent's sequence and its latency (µs).
    chunks: Vec<(u64, i64)>,
    /// The SSE ids of every event, in order.
    ids: Vec<u64>,
    /// The state of the last status event.
    last_state: String,
}

/// Reads the SSE stream of SubscribeToTask `task` on `addr` until the task ends (or `deadline`).
async fn follow(
    client: &reqwest::Client,
    addr: SocketAddr,
    task: &str,
    deadline: Instant,
) -> Result<Followed, String> {
    let body = json!({"jsonrpc": "2.0", "id": "s", "method": "SubscribeToTask",
                      "params": {"id": task}});
    let mut resp = client
        .post(format!("http://{addr}/"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| format!("SubscribeToTask on {addr}: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("SubscribeToTask on {addr}: {}", resp.status()));
    }
    let mut seen = Followed::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut id = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(left, resp.chunk())
            .await
            .map_err(|_| format!("the stream on {addr} did not end in time"))?
            .map_err(|e| format!("stream on {addr}: {e}"))?;
        let Some(chunk) = chunk else {
            return Ok(seen);
        };
        let at = now_us();
        buf.extend_from_slice(&chunk);
        while let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end();
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().parse::<u64>().ok();
            } else if let Some(data) = line.strip_prefix("data:") {
                let v: Value = serde_json::from_str(data.trim())
                    .map_err(|e| format!("an event on {addr} is not JSON: {e}"))?;
                let result = &v["result"];
                if result.is_null() {
                    return Err(format!("an error event on {addr}: {v}"));
                }
                seen.ids.push(id.take().unwrap_or(0));
                if let Some(text) =
                    result["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str()
                {
                    let mut words = text.split(' ');
                    let i = words.next().and_then(|w| w.parse::<u64>().ok());
                    let t = words.next().and_then(|w| w.parse::<i64>().ok());
                    if let (Some(i), Some(t)) = (i, t) {
                        seen.chunks.push((i, at - t));
                    }
                }
                let state = result["statusUpdate"]["status"]["state"]
                    .as_str()
                    .or_else(|| result["task"]["status"]["state"].as_str());
                if let Some(state) = state {
                    state.clone_into(&mut seen.last_state);
                }
            }
        }
        if matches!(
            seen.last_state.as_str(),
            "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_CANCELED"
        ) {
            return Ok(seen);
        }
    }
}

/// p50, p99 and max of the latencies, ms; and whether the chunks came in order, gapless, once.
fn summary(f: &Followed, n: usize) -> (f64, f64, f64, bool) {
    let mut l: Vec<f64> = f.chunks.iter().map(|(_, us)| *us as f64 / 1000.0).collect();
    l.sort_by(f64::total_cmp);
    let in_order = f.chunks.len() == n
        && f.chunks
            .iter()
            .enumerate()
            .all(|(k, (i, _))| *i == k as u64);
    let gapless = f.ids.windows(2).all(|w| w[1] == w[0] + 1);
    (
        quantile(&l, 0.5),
        quantile(&l, 0.99),
        l.last().copied().unwrap_or(f64::NAN),
        in_order && gapless,
    )
}

pub(super) async fn run(opts: &Options, pin: bool, report: &mut Report) -> Result<(), String> {
    if !opts.stores.contains(&Store::Postgres) {
        return Ok(());
    }
    let db = PgDb::create(&opts.pg).await?;
    let a = StoreServer::start("latency-a", &db.url, &[], pin).await?;
    let b = StoreServer::start("latency-b", &db.url, &[], pin).await?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let n = opts.events;
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "latency", "role": "ROLE_USER",
                    "parts": [{"text": format!("latency {n} {}", opts.pause_ms)}]},
        "configuration": {"returnImmediately": true}}});
    let reply: Value = client
        .post(format!("http://{}/", a.addr))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(send.to_string())
        .send()
        .await
        .map_err(|e| format!("SendMessage to A: {e}"))?
        .json()
        .await
        .map_err(|e| format!("SendMessage to A: {e}"))?;
    let task = reply["result"]["task"]["id"]
        .as_str()
        .ok_or_else(|| format!("SendMessage to A answered no task: {reply}"))?
        .to_owned();
    // The agent waits a second before its first chunk: both subscribers are open by then.
    let budget = Duration::from_millis(opts.pause_ms + 20) * n as u32 + Duration::from_secs(60);
    let deadline = Instant::now() + budget;
    let (on_a, on_b) = tokio::join!(
        follow(&client, a.addr, &task, deadline),
        follow(&client, b.addr, &task, deadline)
    );
    let (on_a, on_b) = (on_a?, on_b?);
    drop((a, b));
    drop(db);
    let (a50, a99, amax, a_ok) = summary(&on_a, n);
    let (b50, b99, bmax, b_ok) = summary(&on_b, n);
    for (name, ok, f) in [("A", a_ok, &on_a), ("B", b_ok, &on_b)] {
        if !ok {
            report.note(format!(
                "latency: the subscriber on {name} saw {} of {n} chunks (in order, gapless ids: false; \
                 last state {})",
                f.chunks.len(),
                f.last_state
            ));
        }
    }
    let what = format!(
        "{n} events, one every {} ms (+ the write), agent on instance A",
        opts.pause_ms
    );
    report.row(Row {
        figure: "event latency, agent on A → subscriber on B (LISTEN/NOTIFY)".into(),
        store: "PostgreSQL, 2 instances".into(),
        value: format!(
            "p50 {b50:.2} ms, **p99 {b99:.2} ms**, max {bmax:.1} ms ({what}; in order, no gap: {b_ok})"
        ),
        target: "p99 ≤ 50 ms".into(),
        pass: Some(b99 <= 50.0 && b_ok),
    });
    report.row(Row {
        figure: "event latency, agent on A → subscriber on A (same instance)".into(),
        store: "PostgreSQL, 2 instances".into(),
        value: format!(
            "p50 {a50:.2} ms, p99 {a99:.2} ms, max {amax:.1} ms (the same events; in order, no gap: {a_ok})"
        ),
        target: String::new(),
        pass: None,
    });
    Ok(())
}
