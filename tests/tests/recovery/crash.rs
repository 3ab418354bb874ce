//! Crash tests: the test agent's server in a child process (this binary, running only
//! [`recovery_child`]) is killed with SIGKILL while streams and blocking sends are open, then
//! restarted on the same store. Within the configured bound every task is terminal (FAILED
//! with the reason, or COMPLETED by a resumable agent run again), every resubscriber gets the
//! final event and its stream ends, ListTasks finds nothing WORKING, and every event a client
//! was sent is in the log as it was sent.

use std::collections::BTreeSet;
use std::time::Instant;

use a2a_runtime::core::{ClusterOptions, RecoveryPolicy};
use a2a_runtime::store;
use a2a_runtime::test::{Binding, Event};
use a2a_tests::params::{msg, state};
use a2a_tests::pg::PgDatabase;
use serde_json::{Value, json};

use super::*;

/// The child's recovery: passes every 100 ms, leases of 1 s checked every 200 ms.
fn child_recovery(rerun: bool) -> (Recovery, ClusterOptions) {
    let recovery = Recovery {
        policy: if rerun {
            RecoveryPolicy::Rerun { max_attempts: 2 }
        } else {
            RecoveryPolicy::Fail
        },
        every: Duration::from_millis(100),
        ..Recovery::default()
    };
    let cluster = ClusterOptions {
        lease_ttl: Duration::from_secs(1),
        check_every: Duration::from_millis(200),
        ..ClusterOptions::default()
    };
    (recovery, cluster)
}

/// How long after the restart every task must have ended: on SQLite the first pass at
/// startup; on PostgreSQL the old leases' TTL and a check; plus the child's start.
const BOUND: Duration = Duration::from_secs(10);

/// The server of the crash tests, in a child process: the test agent on the store at
/// `A2A_RECOVERY_STORE` (run again by recovery when `A2A_RECOVERY_RERUN` is set); prints its
/// URL, then each execution it starts, and serves until it is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the crash tests in a child process"]
async fn recovery_child() {
    let Ok(url) = std::env::var("A2A_RECOVERY_STORE") else {
        return;
    };
    let (recovery, cluster) = child_recovery(std::env::var_os("A2A_RECOVERY_RERUN").is_some());
    let (seen, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(s) = rx.recv().await {
            if let Seen::Started(id, _) = s {
                eprintln!("A2A_STARTED {id}");
            }
        }
    });
    let mut card = agent_card("crash");
    card.capabilities.streaming = Some(true);
    let server = A2aServer::builder()
        .card(card)
        .stores(store::connect(&url).await.unwrap())
        .cluster_options(cluster)
        .recovery(recovery)
        .executor(Agent { seen })
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    eprintln!("A2A_RECOVERY_URL {}", running.url());
    running.wait().await.unwrap();
}

/// A child server on `store`: the process, its URL, and the task ids of the executions it
/// starts.
async fn child_on(
    store: &str,
    rerun: bool,
) -> (
    tokio::process::Child,
    String,
    mpsc::UnboundedReceiver<String>,
) {
    use tokio::io::AsyncBufReadExt as _;
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "crash::recovery_child",
            "--ignored",
            "--nocapture",
        ])
        .env("A2A_RECOVERY_STORE", store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if rerun {
        command.env("A2A_RECOVERY_RERUN", "1");
    }
    let mut child = command.spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = a2a_runtime::test::within("the child server to start", async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the child's URL");
            if let Some(url) = line.strip_prefix("A2A_RECOVERY_URL ") {
                break url.to_owned();
            }
        }
    })
    .await;
    let (tx, rx) = mpsc::unbounded_channel();
    // The child's later output is read on, so that it never blocks on a full pipe.
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(id) = line.strip_prefix("A2A_STARTED ") {
                let _ = tx.send(id.to_owned());
            }
        }
    });
    (child, url, rx)
}

/// The whole log of `task_id` (replayed from `Last-Event-ID: 0`) on `server`.
async fn logged(server: &TestServer, task_id: &str) -> Vec<Event> {
    let req = server
        .http()
        .get(format!("{}/tasks/{task_id}:subscribe", server.url()))
        .header("A2A-Version", "1.0")
        .header("Last-Event-ID", "0");
    server
        .open_sse(Binding::Rest, req, None)
        .await
        .unwrap_or_else(|e| panic!("replay of {task_id}: {e:?}"))
        .collect()
        .await
}

/// Kill and restart with `STREAMS` streams and `SENDS` blocking sends open, on `store`.
async fn crash_and_recover(store: &str, rerun: bool) {
    const STREAMS: usize = 3;
    const SENDS: usize = 2;
    let (mut child, url, mut starts) = child_on(store, rerun).await;
    let server = TestServer::remote(url.clone());
    let mut sends = Vec::new();
    for _ in 0..SENDS {
        let url = url.clone();
        sends.push(tokio::spawn(async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                              "params": msg("work 100000")});
            // Answered only if the server lived: it is killed first.
            TestServer::remote(url.clone())
                .http()
                .post(format!("{url}/"))
                .header("A2A-Version", "1.0")
                .json(&body)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        }));
    }
    let mut streams = Vec::new();
    for i in 0..STREAMS {
        let binding = if i % 2 == 0 {
            Binding::Rest
        } else {
            Binding::JsonRpc
        };
        let mut sse = server
            .stream(binding, "SendStreamingMessage", msg("work 100000"))
            .await
            .unwrap();
        let mut events = Vec::new();
        // The created task, WORKING, then a few chunks.
        while events.len() < 3 + i {
            events.push(sse.next().await.unwrap());
        }
        let task_id = events[0].data["task"]["id"].as_str().unwrap().to_owned();
        streams.push((task_id, events, sse));
    }
    let mut ids = BTreeSet::new();
    while ids.len() < STREAMS + SENDS {
        let id = a2a_runtime::test::within("the agent to start", starts.recv())
            .await
            .unwrap();
        ids.insert(id);
    }
    // SIGKILL, everything open.
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    for send in sends {
        assert!(!send.await.unwrap(), "no blocking send was answered");
    }
    let acked: Vec<(String, Vec<Event>)> = streams.into_iter().map(|(t, e, _)| (t, e)).collect();
    let restarted = Instant::now();
    let (mut child, url, _starts) = child_on(store, rerun).await;
    let server = TestServer::remote(url);
    let end_state = if rerun {
        "TASK_STATE_COMPLETED"
    } else {
        "TASK_STATE_FAILED"
    };
    // Every task, resubscribed: its final event, then the end of the stream (or, already
    // terminal, the task refused as such and stored so).
    for task_id in &ids {
        let params = json!({"id": task_id});
        match server
            .stream(Binding::Rest, "SubscribeToTask", params)
            .await
        {
            Ok(sse) => {
                let events = sse.collect().await;
                let last = events.last().unwrap();
                assert_eq!(last.state(), Some(end_state), "{task_id}: {events:?}");
            }
            Err(e) => e.assert_unsupported(),
        }
        let task = server
            .ok(Binding::JsonRpc, "GetTask", json!({"id": task_id}))
            .await;
        assert_eq!(state(&task), end_state, "{task}");
        let why = task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        if !rerun {
            assert!(
                why.starts_with("The agent stopped before finishing"),
                "{why}"
            );
        }
    }
    let took = restarted.elapsed();
    eprintln!(
        "{store}: {} tasks ended {end_state} {took:?} after the restart",
        ids.len()
    );
    assert!(took < BOUND, "{took:?}");
    let working = server
        .ok(
            Binding::Rest,
            "ListTasks",
            json!({"status": "TASK_STATE_WORKING"}),
        )
        .await;
    assert_eq!(
        working["tasks"].as_array().map_or(0, Vec::len),
        0,
        "{working}"
    );
    let all = server.ok(Binding::Rest, "ListTasks", json!({})).await;
    assert_eq!(all["tasks"].as_array().unwrap().len(), STREAMS + SENDS);
    // Nothing acknowledged was lost: each stream's events are the start of its log, as sent.
    for (task_id, events) in &acked {
        let log = logged(&server, task_id).await;
        for ev in events.iter().filter(|e| e.id > 0) {
            let at = log
                .iter()
                .find(|l| l.id == ev.id)
                .unwrap_or_else(|| panic!("{task_id}: event {} lost", ev.id));
            assert_eq!(at.data, ev.data, "{task_id}: event {} as sent", ev.id);
        }
        let last = log.last().unwrap();
        assert_eq!(last.state(), Some(end_state));
        if rerun {
            let resumed: Vec<&Value> = log
                .iter()
                .filter_map(|e| e.data["artifactUpdate"]["artifact"]["parts"].get(0))
                .filter(|p| p["text"] == "resumed")
                .collect();
            assert_eq!(resumed.len(), 1, "{task_id}: run again once");
        }
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test]
async fn sqlite_tasks_of_a_killed_server_end_failed_at_restart() {
    let (dir, url) = sqlite_file("crash");
    crash_and_recover(&url, false).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn sqlite_tasks_of_a_killed_server_are_resumed_by_a_resumable_agent() {
    let (dir, url) = sqlite_file("crash-rerun");
    crash_and_recover(&url, true).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn postgres_tasks_of_a_killed_server_end_failed_after_their_leases() {
    let db = PgDatabase::create_named("a2a_recovery").await;
    crash_and_recover(&db.url, false).await;
}

#[tokio::test]
async fn postgres_tasks_of_a_killed_server_are_resumed_by_a_resumable_agent() {
    let db = PgDatabase::create_named("a2a_recovery").await;
    crash_and_recover(&db.url, true).await;
}
