//! The crash loop: a server killed with SIGKILL at random points, restarted on the same store,
//! loses, duplicates and reorders no acknowledged event.

use std::time::Duration;

use a2a_runtime::store;
use a2a_runtime::test::agent_card;
use a2a_tests::pg::PgDatabase;
use serde_json::{Value, json};

use super::*;

/// The server of [`crash_loop`], in a child process (this binary, running only this test):
/// the streaming agent (1 ms between chunks) on the store at `A2A_CRASH_STORE`; prints its URL
/// and serves until it is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the crash loop in a child process"]
async fn crash_child() {
    let Ok(url) = std::env::var("A2A_CRASH_STORE") else {
        return;
    };
    let stores = store::connect(&url).await.unwrap();
    let server = a2a_runtime::server::A2aServer::builder()
        .card(agent_card("crash"))
        .stores(stores)
        .executor(a2a_examples::StreamingAgent {
            delay: Duration::from_millis(1),
        })
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    eprintln!("A2A_CRASH_URL {}", running.url());
    running.wait().await.unwrap();
}

/// A child server on `store`, and its URL once it serves.
async fn crash_child_on(store: &str) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash::crash_child", "--ignored", "--nocapture"])
        .env("A2A_CRASH_STORE", store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = a2a_runtime::test::within("the child server to start", async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the child's URL");
            if let Some(url) = line.strip_prefix("A2A_CRASH_URL ") {
                break url.to_owned();
            }
        }
    })
    .await;
    // The child's later output is drained so that it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// What a client was sent of a task's stream before the server died: the events, by id.
type Acked = (String, Vec<a2a_runtime::test::Event>);

/// Checks on `server` that every acknowledged event of every task is in its log: replayed from
/// `Last-Event-ID: 0`, the log's ids run 1, 2, … without gaps, duplicates or reordering, and
/// the event with each acknowledged id is the one the client was sent (ids strictly increase
/// on the client's stream too: the reader checks it).
async fn check_logged(server: &a2a_runtime::test::TestServer, acked: &[Acked]) {
    for (task_id, events) in acked {
        // Id 0 is a stream's opening snapshot, not a logged event.
        let last = events.last().map_or(0, |e| e.id);
        if last == 0 {
            continue;
        }
        let req = server
            .http()
            .get(format!("{}/tasks/{task_id}:subscribe", server.url()))
            .header("A2A-Version", "1.0")
            .header("Last-Event-ID", "0");
        let mut replay = server
            .open_sse(a2a_runtime::test::Binding::Rest, req, None)
            .await
            .unwrap_or_else(|e| panic!("replay of {task_id}: {e:?}"));
        let mut logged = Vec::new();
        while logged
            .last()
            .is_none_or(|e: &a2a_runtime::test::Event| e.id < last)
        {
            let ev = replay
                .next()
                .await
                .unwrap_or_else(|| panic!("{task_id}: the log ends at {logged:?}, acked {last}"));
            assert_eq!(ev.id, logged.len() as u64 + 1, "{task_id}: gapless ids");
            logged.push(ev);
        }
        for ev in events.iter().filter(|e| e.id > 0) {
            let at = &logged[(ev.id - 1) as usize];
            assert_eq!(
                at.data, ev.data,
                "{task_id}: event {} as acknowledged",
                ev.id
            );
        }
        // The stored task holds at least every acknowledged chunk, in order.
        let chunks: Vec<&Value> = events
            .iter()
            .filter_map(|e| e.data["artifactUpdate"]["artifact"]["parts"].get(0))
            .collect();
        let task = server
            .ok(
                a2a_runtime::test::Binding::Rest,
                "GetTask",
                json!({"id": task_id}),
            )
            .await;
        let parts = task["artifacts"][0]["parts"].as_array();
        let stored: Vec<&Value> = parts.map(|p| p.iter().collect()).unwrap_or_default();
        assert!(
            stored.len() >= chunks.len() && stored[..chunks.len()] == chunks[..],
            "{task_id}: stored parts {} < acknowledged {}",
            stored.len(),
            chunks.len()
        );
    }
}

/// The crash loop: a child server streaming a task is killed with SIGKILL at random points
/// (after a random number of events read by the client, while the agent runs ahead), restarted
/// on the same store, and a checker proves that no acknowledged event was lost, duplicated or
/// reordered, for the task of that round and every earlier one. 50 points by default;
/// `A2A_CRASH_POINTS` sets another count (e.g. 500 for the long mode). The seed is printed.
async fn crash_loop(store: &str) {
    let points: usize = std::env::var("A2A_CRASH_POINTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let mut seed = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap_or(1) | 1;
    eprintln!("crash loop on {store}: {points} points, seed {seed}");
    let mut random = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    // 120 chunks of about 200 bytes: the task outgrows a row (see the SQL stores' layout).
    let words: Vec<String> = (0..120)
        .map(|i| format!("w{i}-{}", "x".repeat(200)))
        .collect();
    let text = format!("stream {}", words.join(" "));
    let mut acked: Vec<Acked> = Vec::new();
    let (mut child, mut url) = crash_child_on(store).await;
    for _ in 0..points {
        let server = a2a_runtime::test::TestServer::remote(url.clone());
        let read = random(60);
        let mut sse = server
            .stream(
                a2a_runtime::test::Binding::Rest,
                "SendStreamingMessage",
                a2a_tests::params::msg(&text),
            )
            .await
            .unwrap();
        let mut events = Vec::new();
        while (events.len() as u64) <= read {
            match sse.next().await {
                Some(ev) => events.push(ev),
                None => break,
            }
        }
        // SIGKILL while the agent goes on writing.
        child.start_kill().unwrap();
        child.wait().await.unwrap();
        drop(sse);
        let task_id = events[0].data["task"]["id"].as_str().unwrap().to_owned();
        acked.push((task_id, events));
        (child, url) = crash_child_on(store).await;
        let server = a2a_runtime::test::TestServer::remote(url.clone());
        check_logged(&server, &acked[acked.len() - 1..]).await;
    }
    // After the last restart, every task of every round once more.
    check_logged(&a2a_runtime::test::TestServer::remote(url), &acked).await;
    let events: usize = acked.iter().map(|(_, e)| e.len()).sum();
    eprintln!("crash loop on {store}: {points} kills, {events} acknowledged events, all logged");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test]
async fn sqlite_crash_loop_loses_no_acknowledged_event() {
    let file = SqliteFile::new();
    crash_loop(&file.url()).await;
}

#[tokio::test]
async fn postgres_crash_loop_loses_no_acknowledged_event() {
    let db = PgDatabase::create().await;
    crash_loop(&db.url).await;
}
