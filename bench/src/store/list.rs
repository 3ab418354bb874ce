//! ListTasks among many tasks of one owner: pages of 50 as a client reads them, and the plans
//! of the queries that serve them.
//!
//! Per store, in this process: `tasks` tasks of the anonymous owner are created through
//! `TaskStore::create` (one transaction each, no event logged; 16 concurrent writers, one for
//! SQLite; PostgreSQL with `synchronous_commit = off` on the run's database): as a
//! finished SendMessage leaves them (a user message in the history, an `echo` artifact), with a
//! random-looking UUID, one of 100 contexts, COMPLETED (FAILED or CANCELED one in twenty),
//! status timestamps 1 ms apart. A server on that store (echo agent, one worker) answers
//! JSON-RPC ListTasks over one keep-alive connection. The SQL stores' plans are shown, and their
//! first 200 pages timed, as the new tables are; then they are `ANALYZE`d (PostgreSQL's
//! `VACUUM ANALYZE`d: what autovacuum does in a running deployment after that many inserts;
//! the plans are shown again) and measured:
//! - the whole `nextPageToken` chain from the first page to the last (every depth);
//! - filtered, as a client picks them: 20 random contexts (each chain to its end), the FAILED
//!   tasks (their chain), 50 random `statusTimestampAfter` cuts (three pages each);
//! - and `TaskStore::list` alone, on 400 page tokens of the chain picked at random.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use a2a_runtime::server::A2aServer;
use a2a_runtime::store::{
    InMemoryPushConfigStore, InMemoryTaskStore, PostgresStore, PushConfigStore, Scope, SqliteStore,
    TaskQuery, TaskStore,
};
use a2a_runtime::types::{
    Artifact, ContextId, Message, Part, Task, TaskId, TaskState, TaskStatus, Timestamp,
};
use serde_json::{Value, json};

use super::serve::StoreAgent;
use super::{Options, PgDb, Report, Rng, Row, SqliteFile, Store, quantile};

/// Contexts the tasks are spread over.
const CONTEXTS: usize = 100;
/// Tasks in the listing's page.
const PAGE: usize = 50;

/// The id of task `i`: UUID-shaped and random-looking (splitmix64 of `i`), reproducible, so
/// that the cursor of any task is known without listing.
fn task_id(i: usize) -> TaskId {
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (a, b) = (next(), next());
    TaskId::from(format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 48,
        b & 0xffff_ffff_ffff
    ))
}

/// The task number `i` of `n`, as a finished SendMessage leaves it.
fn task(i: usize, base_ms: i64) -> Task {
    let state = match i % 20 {
        0 => TaskState::Failed,
        1 => TaskState::Canceled,
        _ => TaskState::Completed,
    };
    let context = ContextId::from(format!("ctx-{:03}", i % CONTEXTS));
    let mut message = Message::user_text(format!("hello {i}"));
    message.context_id = context.clone();
    Task {
        id: task_id(i),
        context_id: context,
        status: TaskStatus {
            state,
            message: None,
            timestamp: Timestamp::from_millis(base_ms + i as i64),
        },
        artifacts: vec![Artifact::new([Part::text(format!("echo: hello {i}"))]).with_name("echo")],
        history: vec![message],
        ..Task::default()
    }
}

/// Creates `n` tasks in `scope` with `writers` concurrent writers; returns how long it took.
async fn fill(
    store: &dyn TaskStore,
    scope: &Scope,
    n: usize,
    base_ms: i64,
    writers: usize,
) -> Result<Duration, String> {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(900);
    let writers = (0..writers).map(|_| async {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return Ok::<(), String>(());
            }
            if Instant::now() > deadline {
                return Err(format!("filling took over 900 s ({i} of {n})"));
            }
            store
                .create(scope, &task(i, base_ms), None)
                .await
                .map_err(|e| format!("create: {e}"))?;
        }
    });
    for r in futures::future::join_all(writers).await {
        r?;
    }
    Ok(started.elapsed())
}

/// The SQL database of a store, for the plans.
enum Db {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

/// The plan of `query`, one step a line (costs left out).
async fn plan(db: &Db, query: &str) -> Result<String, String> {
    let lines: Vec<String> = match db {
        Db::Sqlite(pool) => {
            let rows = sqlx::query(&format!("EXPLAIN QUERY PLAN {query}"))
                .fetch_all(pool)
                .await
                .map_err(|e| format!("EXPLAIN QUERY PLAN: {e}"))?;
            rows.iter()
                .map(|r| sqlx::Row::try_get::<String, _>(r, 3).unwrap_or_default())
                .collect()
        }
        Db::Postgres(pool) => sqlx::query_scalar(&format!("EXPLAIN {query}"))
            .fetch_all(pool)
            .await
            .map_err(|e| format!("EXPLAIN: {e}"))?,
    };
    Ok(lines
        .iter()
        .map(|l| match l.find("  (cost=") {
            Some(at) => l[..at].trim().to_owned(),
            None => l.trim().to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" / "))
}

async fn analyze(db: &Db) -> Result<(), String> {
    match db {
        Db::Sqlite(pool) => sqlx::query("ANALYZE").execute(pool).await.map(|_| ()),
        // After 100,000 inserts autovacuum vacuums the table as well (its insert threshold):
        // the visibility map lets a count read the index alone.
        Db::Postgres(pool) => sqlx::query("VACUUM ANALYZE a2a_tasks")
            .execute(pool)
            .await
            .map(|_| ()),
    }
    .map_err(|e| format!("ANALYZE: {e}"))
}

/// The store's statements (`sql.rs`: `push_filters`, the page and its count) with the values a
/// deep page of the chain binds.
fn queries(cursor_ms: i64, cursor_id: &str) -> [(&'static str, String); 4] {
    let owner = "tenant = '' AND owner = 'anonymous'";
    [
        (
            "page",
            format!(
                "SELECT id, status_ms, body, split FROM a2a_tasks WHERE {owner} \
                 AND (status_ms, id) < ({cursor_ms}, '{cursor_id}') \
                 ORDER BY status_ms DESC, id DESC LIMIT 51"
            ),
        ),
        (
            // An unfiltered listing reads its total from `a2a_task_counts`; a filtered one's
            // first page counts (later pages carry that count in their token).
            "count of a statusTimestampAfter cut",
            format!(
                "SELECT COUNT(*) FROM a2a_tasks WHERE {owner} AND status_ms >= {}",
                cursor_ms - 20_000
            ),
        ),
        (
            "page of a state",
            format!(
                "SELECT id, status_ms, body, split FROM a2a_tasks WHERE {owner} \
                 AND state = 'TASK_STATE_FAILED' AND (status_ms, id) < ({cursor_ms}, '{cursor_id}') \
                 ORDER BY status_ms DESC, id DESC LIMIT 51"
            ),
        ),
        (
            "page of a context",
            format!(
                "SELECT id, status_ms, body, split FROM a2a_tasks WHERE {owner} \
                 AND context_id = 'ctx-007' AND (status_ms, id) < ({cursor_ms}, '{cursor_id}') \
                 ORDER BY status_ms DESC, id DESC LIMIT 51"
            ),
        ),
    ]
}

/// Whether a page plan reads the listing index in order (no sort).
fn from_index(db: &Db, plan: &str) -> bool {
    match db {
        Db::Sqlite(_) => plan.contains("USING INDEX a2a_tasks_") && !plan.contains("TEMP B-TREE"),
        Db::Postgres(_) => plan.contains("Index Scan using a2a_tasks_") && !plan.contains("Sort"),
    }
}

/// A JSON-RPC ListTasks client on one keep-alive connection.
struct Client {
    http: reqwest::Client,
    url: String,
    /// Per request: which kind, and its time (ms).
    times: Vec<(&'static str, f64)>,
}

impl Client {
    /// One page: its tasks, total size and next token.
    async fn page(
        &mut self,
        kind: &'static str,
        params: Value,
    ) -> Result<(usize, u64, String), String> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params});
        let started = Instant::now();
        let reply: Value = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| format!("ListTasks: {e}"))?
            .json()
            .await
            .map_err(|e| format!("ListTasks: {e}"))?;
        self.times
            .push((kind, started.elapsed().as_secs_f64() * 1000.0));
        let r = &reply["result"];
        let tasks = r["tasks"]
            .as_array()
            .ok_or_else(|| format!("ListTasks answered no tasks: {reply}"))?
            .len();
        let total = r["totalSize"].as_u64().unwrap_or(0);
        let next = r["nextPageToken"].as_str().unwrap_or_default().to_owned();
        Ok((tasks, total, next))
    }

    /// Follows a chain from its first page (`params` without a token) to its end, at most
    /// `max` pages; returns the tokens seen and the tasks listed.
    async fn chain(
        &mut self,
        kind: &'static str,
        params: &Value,
        max: usize,
        expect_total: Option<u64>,
    ) -> Result<(Vec<String>, usize), String> {
        let mut tokens = Vec::new();
        let mut listed = 0;
        let mut token = String::new();
        for _ in 0..max {
            let mut p = params.clone();
            p["pageSize"] = json!(PAGE);
            if !token.is_empty() {
                p["pageToken"] = json!(token);
            }
            let (n, total, next) = self.page(kind, p).await?;
            if let Some(want) = expect_total
                && total != want
            {
                return Err(format!("ListTasks totalSize {total}, expected {want}"));
            }
            if n != PAGE && !next.is_empty() {
                return Err(format!("a page of {n} tasks before the last"));
            }
            listed += n;
            if next.is_empty() {
                break;
            }
            tokens.push(next.clone());
            token = next;
        }
        Ok((tokens, listed))
    }
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// p50, p99 and max of `times`, ms.
fn stats(times: &[f64]) -> (f64, f64, f64) {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    (
        quantile(&t, 0.5),
        quantile(&t, 0.99),
        t.last().copied().unwrap_or(f64::NAN),
    )
}

async fn one(store: Store, opts: &Options, report: &mut Report) -> Result<(), String> {
    let n = opts.tasks;
    let file = SqliteFile::new();
    let mut pg = None;
    let (tasks, configs, db, label): (
        Arc<dyn TaskStore>,
        Arc<dyn PushConfigStore>,
        Option<Db>,
        &str,
    ) = match store {
        Store::Memory => (
            Arc::new(InMemoryTaskStore::new().with_max_tasks(n + 1_000)),
            Arc::new(InMemoryPushConfigStore::new()),
            None,
            "memory (cap raised to hold them)",
        ),
        Store::Sqlite => {
            let s = Arc::new(
                SqliteStore::open(&file.url())
                    .await
                    .map_err(|e| e.to_string())?,
            );
            let pool = s.pool().clone();
            (s.clone(), s, Some(Db::Sqlite(pool)), "SQLite")
        }
        Store::Postgres => {
            let created = PgDb::create(&opts.pg).await?;
            // The fill is not what is measured: its commits do not wait for the WAL flush
            // (every task write also NOTIFYs, which serializes notifying commits; with
            // the flush inside that lock, 100,000 creates take minutes on a slow disk).
            created
                .exec(&format!(
                    "ALTER DATABASE {} SET synchronous_commit = off",
                    created.name
                ))
                .await?;
            let s = Arc::new(
                PostgresStore::connect(&created.url)
                    .await
                    .map_err(|e| e.to_string())?,
            );
            pg = Some(created);
            let pool = s.pool().clone();
            (s.clone(), s, Some(Db::Postgres(pool)), "PostgreSQL")
        }
    };
    let scope = Scope::new("", "anonymous");
    let base_ms = chrono::Utc::now().timestamp_millis() - n as i64 - 60_000;
    // SQLite has one writer at a time: more only wait for its lock (sleeping in its busy
    // handler).
    let writers = if store == Store::Sqlite { 1 } else { 16 };
    let took = fill(&*tasks, &scope, n, base_ms, writers).await?;
    eprintln!(
        "list {label}: {n} tasks created in {:.1} s ({:.0}/s, TaskStore::create, {writers} writer(s))",
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );

    let server = A2aServer::builder()
        .card(crate::servers::ours::card())
        .task_store(tasks.clone())
        .push_config_store(configs)
        .executor(StoreAgent)
        .workers(1)
        .linked_extensions(false)
        .build()
        .map_err(|e| e.to_string())?;
    let running = server
        .start("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(1)
        .build()
        .map_err(|e| e.to_string())?;
    let mut client = Client {
        http,
        url: format!("{}/", running.url()),
        times: Vec::new(),
    };
    let mut rng = Rng::new(chrono::Utc::now().timestamp_micros().unsigned_abs());

    let pages = n.div_ceil(PAGE);
    if let Some(db) = &db {
        // Plans, with the cursor of the task in the middle of the listing: as the new tables
        // are, then after ANALYZE (what a running deployment has, and what the figures use).
        let (mid_ms, mid_id) = (base_ms + (n / 2) as i64, task_id(n / 2));
        let mut before = Vec::new();
        for (what, q) in queries(mid_ms, mid_id.as_str()) {
            before.push((what, plan(db, &q).await?));
        }
        // The first pages as a new deployment serves them.
        client
            .chain("fresh", &json!({}), pages.min(200), Some(n as u64))
            .await?;
        let fresh: Vec<f64> = client.times.iter().map(|(_, t)| *t).collect();
        let (a, b, _) = stats(&fresh);
        report.note(format!(
            "{label}: the first {} pages before ANALYZE (tables without statistics): p50 {a:.2} ms, \
             p99 {b:.2} ms",
            fresh.len()
        ));
        client.times.clear();
        analyze(db).await?;
        for (k, (what, q)) in queries(mid_ms, mid_id.as_str()).into_iter().enumerate() {
            let after = plan(db, &q).await?;
            let same = before[k].1 == after;
            let ok = what.starts_with("count") || from_index(db, &after);
            report.note(format!(
                "{label} plan of the {what} query at {n} tasks{}: `{after}`{}",
                if same { "" } else { " (after ANALYZE)" },
                if same {
                    String::new()
                } else {
                    format!("; before ANALYZE: `{}`", before[k].1)
                }
            ));
            if what == "page" {
                report.row(Row {
                    figure: format!("ListTasks page query plan, {n} tasks of one owner"),
                    store: label.into(),
                    value: if ok {
                        "the listing index, in order, no sort (plans in the notes)".into()
                    } else {
                        format!("`{after}`")
                    },
                    target: "index scan, no sort".into(),
                    pass: Some(ok),
                });
            }
        }
    }

    // The whole chain, unfiltered: every depth.
    let (tokens, listed) = client
        .chain("chain", &json!({}), pages + 1, Some(n as u64))
        .await?;
    if listed != n {
        report.note(format!(
            "list {label}: the chain listed {listed} of {n} tasks"
        ));
    }

    // Filtered, as a client picks them.
    for _ in 0..20 {
        let ctx = format!("ctx-{:03}", rng.below(CONTEXTS as u64));
        client
            .chain("context", &json!({"contextId": ctx}), pages + 1, None)
            .await?;
    }
    client
        .chain(
            "state",
            &json!({"status": "TASK_STATE_FAILED"}),
            pages + 1,
            None,
        )
        .await?;
    for _ in 0..50 {
        let cut = base_ms + rng.below(n as u64) as i64;
        client
            .chain(
                "time",
                &json!({"statusTimestampAfter": rfc3339(cut)}),
                3,
                None,
            )
            .await?;
    }

    // The store call alone, on random tokens of the chain.
    let mut direct = Vec::new();
    for _ in 0..400.min(tokens.len() * 4) {
        let token = &tokens[rng.below(tokens.len() as u64) as usize];
        let started = Instant::now();
        let page = tasks
            .list(
                &scope,
                &TaskQuery {
                    page_size: PAGE,
                    page_token: Some(token.clone()),
                    ..TaskQuery::default()
                },
            )
            .await
            .map_err(|e| format!("TaskStore::list: {e}"))?;
        direct.push(started.elapsed().as_secs_f64() * 1000.0);
        if page.total_size != n {
            return Err(format!("TaskStore::list total {} of {n}", page.total_size));
        }
    }
    running.stop().await;
    drop(pg);

    let of = |kind: &str| -> Vec<f64> {
        client
            .times
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, t)| *t)
            .collect()
    };
    let all: Vec<f64> = client.times.iter().map(|(_, t)| *t).collect();
    let (p50, p99, max) = stats(&all);
    let parts: Vec<String> = ["chain", "context", "state", "time"]
        .iter()
        .map(|k| {
            let t = of(k);
            let (a, b, _) = stats(&t);
            format!("{k} {} pages: p50 {a:.2}, p99 {b:.2}", t.len())
        })
        .collect();
    let (d50, d99, _) = stats(&direct);
    report.row(Row {
        figure: format!("ListTasks, page of {PAGE} among {n} tasks of one owner (HTTP JSON-RPC)"),
        store: label.into(),
        value: format!(
            "p50 {p50:.2} ms, **p99 {p99:.2} ms**, max {max:.1} ms over {} requests ({}; ms); \
             TaskStore::list alone p50 {d50:.2}, p99 {d99:.2} ms; filled at {:.0} tasks/s \
             ({writers} writer(s))",
            all.len(),
            parts.join("; "),
            n as f64 / took.as_secs_f64()
        ),
        target: "p99 ≤ 20 ms".into(),
        pass: Some(p99 <= 20.0),
    });
    Ok(())
}

pub(super) async fn run(opts: &Options, report: &mut Report) -> Result<(), String> {
    for store in &opts.stores {
        one(*store, opts, report).await?;
    }
    Ok(())
}
