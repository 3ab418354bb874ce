//! Delivery: enabling push declares the capability; every event reaches the webhook once per
//! config, in order, with the spec's payload and headers on both bindings; retries with backoff,
//! a receiver that is down or hangs, bursts, the in-memory outbox's bound, redirects, deleted
//! configs; and the opt-in figures.

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_runtime::push::PushConfig;
use a2a_runtime::server::{A2aServer, BuildError};
use a2a_runtime::store::{
    InMemoryPushConfigStore, InMemoryPushOutbox, InMemoryTaskStore, PushConfigStore, PushOutbox,
    Scope, StoreError, TaskStore,
};
use a2a_runtime::test::*;
use a2a_runtime::types::TaskPushNotificationConfig;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::{Value, json};

use super::*;

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
