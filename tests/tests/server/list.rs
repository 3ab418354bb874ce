//! ListTasks over real HTTP on both bindings (#39, #41-#46): page size and tokens, order,
//! `includeArtifacts`, filters, `totalSize`, and paging across 250 tasks while tasks are inserted.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use futures::future::join_all;
use serde_json::{Value, json};

/// Creates `n` tasks with `text` (a few requests at a time); returns them in creation order.
async fn create(server: &TestServer, n: usize, text: &str) -> Vec<Value> {
    let mut out = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let k = left.min(10);
        let batch = (0..k).map(|i| server.send_task(Binding::BOTH[i % 2], msg(text)));
        out.extend(join_all(batch).await);
        left -= k;
    }
    out
}

fn ids(list: &Value) -> Vec<String> {
    list["tasks"].as_array().unwrap().iter().map(id).collect()
}

fn timestamps(list: &Value) -> Vec<String> {
    list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"]["timestamp"].as_str().unwrap().to_owned())
        .collect()
}

/// Millisecond timestamps of the `…Z` form compare as text only at equal precision: parse them.
fn millis(ts: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(ts)
        .unwrap()
        .timestamp_millis()
}

/// #44 #46 (A12): an empty listing still has `tasks: []`, `nextPageToken: ""`, `totalSize: 0`.
#[tokio::test]
async fn empty_listing_has_every_required_member_44() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let list = server.ok(binding, "ListTasks", json!({})).await;
        assert_eq!(list["tasks"], json!([]), "{list}");
        assert_eq!(list["nextPageToken"], "", "{list}");
        assert_eq!(list["totalSize"], 0, "{list}");
        assert_eq!(list["pageSize"], 50, "{list}");
    }
}

/// #42 #44 #46: pageSize defaults to 50, must lie in 1..=100 (150 → -32602 / 400 naming
/// `pageSize`); nextPageToken is always present and `""` on the last page; totalSize counts all.
#[tokio::test]
async fn page_size_default_max_and_tokens_42_44_46() {
    let (server, _control) = scripted().await;
    create(&server, 60, "hi").await;
    for binding in Binding::BOTH {
        let first = server.ok(binding, "ListTasks", json!({})).await;
        assert_eq!(ids(&first).len(), 50);
        assert_eq!(first["pageSize"], 50);
        assert_eq!(first["totalSize"], 60);
        let token = first["nextPageToken"].as_str().unwrap();
        assert!(!token.is_empty());
        let second = server
            .ok(binding, "ListTasks", json!({"pageToken": token}))
            .await;
        assert_eq!(ids(&second).len(), 10);
        assert_eq!(
            second["nextPageToken"], "",
            "present and empty on the last page"
        );
        assert_eq!(second["totalSize"], 60);
        let all: HashSet<String> = ids(&first).into_iter().chain(ids(&second)).collect();
        assert_eq!(all.len(), 60);

        let max = server
            .ok(binding, "ListTasks", json!({"pageSize": 100}))
            .await;
        assert_eq!(ids(&max).len(), 60);
        assert_eq!(max["nextPageToken"], "");
        let one = server
            .ok(binding, "ListTasks", json!({"pageSize": 1}))
            .await;
        assert_eq!(ids(&one).len(), 1);
        assert_eq!(one["pageSize"], 1);
        assert_eq!(ids(&one)[0], ids(&first)[0]);

        for bad in [150, 101, 0, -1] {
            let err = server
                .err(binding, "ListTasks", json!({"pageSize": bad}))
                .await;
            err.assert_invalid("pageSize");
        }
        server
            .err(binding, "ListTasks", json!({"pageToken": "not-a-token"}))
            .await
            .assert_invalid("pageToken");
    }
}

/// #43: newest status timestamp first; a task that changes moves to the front.
#[tokio::test]
async fn newest_first_43() {
    let (server, _control) = scripted().await;
    let asked = server.send_task(Binding::JsonRpc, msg("ask")).await;
    let mut created = create(&server, 12, "hi").await.len();
    // Until a later millisecond exists, so the first task's move to the front is observable.
    let first_ts = millis(asked["status"]["timestamp"].as_str().unwrap());
    loop {
        let t = server.send_task(Binding::JsonRpc, msg("hi")).await;
        created += 1;
        if millis(t["status"]["timestamp"].as_str().unwrap()) > first_ts {
            break;
        }
    }
    server
        .send_task(Binding::Rest, msg_to(&id(&asked), "Ada"))
        .await;
    for binding in Binding::BOTH {
        let list = server
            .ok(binding, "ListTasks", json!({"pageSize": 100}))
            .await;
        let ts: Vec<i64> = timestamps(&list).iter().map(|t| millis(t)).collect();
        assert!(ts.windows(2).all(|w| w[0] >= w[1]), "newest first: {ts:?}");
        // The task completed last is in the newest group (ties within one millisecond are
        // ordered by id).
        let pos = ids(&list).iter().position(|t| *t == id(&asked)).unwrap();
        assert_eq!(ts[pos], ts[0], "the task completed last is first: {ts:?}");
        assert_eq!(ids(&list).len(), created + 1);
    }
}

/// #45: without `includeArtifacts: true` the `artifacts` member is absent (not `[]`, not null);
/// with it, artifacts are included.
#[tokio::test]
async fn include_artifacts_45() {
    let (server, _control) = scripted().await;
    let tasks = create(&server, 4, "hi").await;
    assert!(tasks.iter().all(|t| t["artifacts"].as_array().is_some()));
    for binding in Binding::BOTH {
        for params in [json!({}), json!({"includeArtifacts": false})] {
            let list = server.ok(binding, "ListTasks", params).await;
            for t in list["tasks"].as_array().unwrap() {
                assert!(t.get("artifacts").is_none(), "{t}");
            }
        }
        let list = server
            .ok(binding, "ListTasks", json!({"includeArtifacts": true}))
            .await;
        for t in list["tasks"].as_array().unwrap() {
            assert_eq!(text(&t["artifacts"][0]), "echo: hi", "{t}");
        }
    }
}

/// #46: the `status`, `contextId` and `statusTimestampAfter` (≥) filters, with `totalSize`
/// counting the matches; an invalid status is a validation error.
#[tokio::test]
async fn filters_status_context_and_timestamp_46() {
    let (server, _control) = scripted().await;
    let done = create(&server, 3, "hi").await;
    let failed = create(&server, 2, "fail").await;
    let asked = create(&server, 2, "ask").await;
    let mut in_ctx = Vec::new();
    for _ in 0..2 {
        let mut p = msg("hi");
        p["message"]["contextId"] = json!("ctx-filter");
        in_ctx.push(id(&server.send_task(Binding::Rest, p).await));
    }
    // Keep creating until a later millisecond exists: that task is the pivot, so the timestamp
    // filter provably splits the set (done[0] is older, the pivot itself is included).
    let first_ts = done[0]["status"]["timestamp"].as_str().unwrap().to_owned();
    let mut more = 0;
    let (pivot, pivot_id) = loop {
        let t = server.send_task(Binding::JsonRpc, msg("hi")).await;
        more += 1;
        let ts = t["status"]["timestamp"].as_str().unwrap().to_owned();
        if millis(&ts) > millis(&first_ts) {
            break (ts, id(&t));
        }
        assert!(more < 10_000, "the clock does not advance");
    };
    let total = 9 + more;

    for binding in Binding::BOTH {
        let by_state = |s: &'static str| server.ok(binding, "ListTasks", json!({"status": s}));
        let f = by_state("TASK_STATE_FAILED").await;
        let want: HashSet<String> = failed.iter().map(id).collect();
        assert_eq!(ids(&f).into_iter().collect::<HashSet<_>>(), want);
        assert_eq!(f["totalSize"], 2);
        let ir = by_state("TASK_STATE_INPUT_REQUIRED").await;
        let want: HashSet<String> = asked.iter().map(id).collect();
        assert_eq!(ids(&ir).into_iter().collect::<HashSet<_>>(), want);
        let c = by_state("TASK_STATE_COMPLETED").await;
        assert_eq!(c["totalSize"], total - 4);

        let ctx = server
            .ok(binding, "ListTasks", json!({"contextId": "ctx-filter"}))
            .await;
        let got: HashSet<String> = ids(&ctx).into_iter().collect();
        assert_eq!(got, in_ctx.iter().cloned().collect::<HashSet<_>>());
        assert_eq!(ctx["totalSize"], 2);

        let all = server
            .ok(binding, "ListTasks", json!({"pageSize": 100}))
            .await;
        assert_eq!(all["totalSize"], total);
        let expected: HashSet<String> = all["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| millis(t["status"]["timestamp"].as_str().unwrap()) >= millis(&pivot))
            .map(id)
            .collect();
        assert!(expected.contains(&pivot_id), "≥ includes the pivot itself");
        assert!(
            !expected.contains(&id(&done[0])),
            "older tasks are excluded"
        );
        let after = server
            .ok(
                binding,
                "ListTasks",
                json!({"statusTimestampAfter": pivot, "pageSize": 100}),
            )
            .await;
        assert_eq!(ids(&after).into_iter().collect::<HashSet<_>>(), expected);
        assert_eq!(after["totalSize"], expected.len());

        let combined = server
            .ok(
                binding,
                "ListTasks",
                json!({"contextId": "ctx-filter", "status": "TASK_STATE_FAILED"}),
            )
            .await;
        assert_eq!(combined["totalSize"], 0);

        server
            .err(binding, "ListTasks", json!({"status": "TASK_STATE_BOGUS"}))
            .await
            .assert_invalid("status");
    }
}

/// #39: `historyLength` applies to every listed task: 0 omits `history`, 1 keeps the last message.
#[tokio::test]
async fn history_length_on_list_39() {
    let (server, _control) = scripted().await;
    create(&server, 3, "chatty").await;
    for binding in Binding::BOTH {
        let none = server
            .ok(binding, "ListTasks", json!({"historyLength": 0}))
            .await;
        for t in none["tasks"].as_array().unwrap() {
            assert!(t.get("history").is_none(), "{t}");
        }
        let one = server
            .ok(binding, "ListTasks", json!({"historyLength": 1}))
            .await;
        for t in one["tasks"].as_array().unwrap() {
            let h = t["history"].as_array().unwrap();
            assert_eq!(h.len(), 1, "{t}");
            assert_eq!(text(&h[0]), "finished");
        }
        let all = server.ok(binding, "ListTasks", json!({})).await;
        for t in all["tasks"].as_array().unwrap() {
            assert_eq!(t["history"].as_array().unwrap().len(), 4, "{t}");
        }
        server
            .err(binding, "ListTasks", json!({"historyLength": -2}))
            .await
            .assert_invalid("historyLength");
    }
}

/// A small deterministic PRNG (xorshift64*), so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// #42 #43: paging through 250 tasks with random page sizes (alternating bindings, so tokens
/// cross bindings) while new tasks are inserted — between pages and from a concurrent writer —
/// never skips or repeats a task that existed when paging started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_250_tasks_while_inserting_never_skips_or_repeats_42() {
    let (server, _control) = scripted().await;
    let server = Arc::new(server);
    let before: HashSet<String> = create(&server, 250, "hi").await.iter().map(id).collect();
    assert_eq!(before.len(), 250);

    for seed in [0x9e37_79b9_7f4a_7c15_u64, 42, 7_777_777] {
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (server, stop) = (server.clone(), stop.clone());
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) && n < 300 {
                    server.send_task(Binding::JsonRpc, msg("late")).await;
                    n += 1;
                }
                n
            })
        };
        let mut rng = Rng(seed);
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut token = String::new();
        let mut page = 0usize;
        loop {
            let size = 1 + rng.below(100);
            let mut params = json!({"pageSize": size});
            if !token.is_empty() {
                params["pageToken"] = json!(token);
            }
            let list = server
                .ok(Binding::BOTH[page % 2], "ListTasks", params)
                .await;
            assert_eq!(list["pageSize"], size);
            let got = ids(&list);
            assert!(got.len() as u64 <= size);
            assert!(list["totalSize"].as_u64().unwrap() >= 250);
            for t in got {
                *seen.entry(t).or_default() += 1;
            }
            token = list["nextPageToken"]
                .as_str()
                .expect("always present")
                .to_owned();
            if token.is_empty() {
                break;
            }
            // Insert between pages too (newer than every cursor, so never listed after page 1).
            for _ in 0..rng.below(3) {
                server.send_task(Binding::Rest, msg("between")).await;
            }
            page += 1;
            assert!(page < 1_000, "paging does not end");
        }
        stop.store(true, Ordering::Relaxed);
        let inserted = within("writer", writer).await.unwrap();
        let repeated: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(repeated.is_empty(), "seed {seed}: repeated {repeated:?}");
        let missing: Vec<_> = before.iter().filter(|t| !seen.contains_key(*t)).collect();
        assert!(missing.is_empty(), "seed {seed}: skipped {missing:?}");
        assert!(page > 1, "seed {seed}: several pages");
        let _ = inserted;
    }
}
