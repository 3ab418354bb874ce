//! What the store benchmark runs on: its servers (`a2a-bench store serve` child processes), a
//! fresh SQLite file, a PostgreSQL database of its own; each removed when dropped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sqlx::Connection as _;

use super::target_dir;
use crate::load::{self, Req};
use crate::wire;

/// A server of the store benchmark: `a2a-bench store serve` as a child process (pinned to
/// core 0 when pinning is on), killed on drop.
#[derive(Debug)]
pub(crate) struct StoreServer {
    pub(crate) addr: SocketAddr,
    pub(crate) pid: u32,
    child: Child,
}

impl StoreServer {
    /// Starts a server on `store` with `extra` options and waits (60 s at most) until it
    /// serves its card.
    pub(crate) async fn start(
        label: &str,
        store: &str,
        extra: &[&str],
        pin: bool,
    ) -> Result<StoreServer, String> {
        let port = crate::servers::free_port()?;
        let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
        let mut argv: Vec<String> = Vec::new();
        if pin {
            argv.extend(["taskset".into(), "-c".into(), "0".into()]);
        }
        argv.push(exe.display().to_string());
        argv.extend(["store".into(), "serve".into(), port.to_string()]);
        argv.extend(["--store".into(), store.to_owned()]);
        argv.extend(extra.iter().map(|s| (*s).to_owned()));
        let logs = target_dir().join("bench/logs");
        std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        let log_path = logs.join(format!("store-{label}.log"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", argv.join(" ")))?;
        let mut server = StoreServer {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            pid: child.id(),
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let card = Req::get(wire::CARD_PATH);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!(
                    "server {label} exited ({status}) before serving; see {}",
                    log_path.display()
                ));
            }
            if let Ok((s, _, _)) = load::one_shot(server.addr, &card).await
                && s.is_success()
            {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "server {label} did not serve its card within 60 s; see {}",
                    log_path.display()
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// CPU time used so far.
    pub(crate) fn cpu(&self) -> Duration {
        crate::procfs::cpu_time(self.pid).unwrap_or_default()
    }

    /// VmRSS now, bytes.
    pub(crate) fn rss(&self) -> u64 {
        crate::procfs::rss(self.pid).unwrap_or(0)
    }
}

impl Drop for StoreServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Checks a server before it is timed: SendMessage of `hello` answers a COMPLETED task with
/// its echo, and `stream100` streams at least 100 events ending COMPLETED.
pub(crate) async fn check(addr: SocketAddr) -> Result<(), String> {
    let (status, _, body) = load::one_shot(addr, &Req::rpc(wire::send_body())).await?;
    if !status.is_success() {
        return Err(format!(
            "SendMessage answered {status}: {}",
            wire::preview(&body)
        ));
    }
    wire::check_send_reply(&body).map_err(|e| format!("SendMessage: {e}"))?;
    let (status, _, body) = load::one_shot(addr, &Req::rpc(wire::stream_body())).await?;
    if !status.is_success() {
        return Err(format!("SendStreamingMessage answered {status}"));
    }
    wire::check_stream(&body).map_err(|e| format!("stream: {e}"))
}

/// A SQLite file in a fresh directory of its own, removed on drop.
#[derive(Debug)]
pub(crate) struct SqliteFile {
    dir: PathBuf,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl SqliteFile {
    pub(crate) fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "a2a-bench-store-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        SqliteFile { dir }
    }

    pub(crate) fn url(&self) -> String {
        format!("sqlite://{}", self.path().display())
    }

    /// The database file.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join("tasks.db")
    }
}

impl Drop for SqliteFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A PostgreSQL database of this run (`a2a_bench_<pid>_<n>`), dropped on drop.
#[derive(Debug)]
pub(crate) struct PgDb {
    admin: String,
    pub(crate) name: String,
    pub(crate) url: String,
}

impl PgDb {
    pub(crate) async fn create(admin: &str) -> Result<PgDb, String> {
        let name = format!(
            "a2a_bench_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut conn =
            tokio::time::timeout(Duration::from_secs(10), sqlx::PgConnection::connect(admin))
                .await
                .map_err(|_| format!("PostgreSQL at {admin} did not answer within 10 s"))?
                .map_err(|e| format!("PostgreSQL at {admin}: {e}"))?;
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
        let _ = conn.close().await;
        let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
        Ok(PgDb {
            admin: admin.to_owned(),
            url: format!("{base}/{name}"),
            name,
        })
    }

    /// Runs `statement` on the admin connection (e.g. `ALTER DATABASE` of this database).
    pub(crate) async fn exec(&self, statement: &str) -> Result<(), String> {
        Self::run(&self.admin, statement).await
    }

    /// Runs `statement` in this database (e.g. `ANALYZE`).
    pub(crate) async fn exec_in(&self, statement: &str) -> Result<(), String> {
        Self::run(&self.url, statement).await
    }

    async fn run(url: &str, statement: &str) -> Result<(), String> {
        let mut conn = sqlx::PgConnection::connect(url)
            .await
            .map_err(|e| format!("PostgreSQL: {e}"))?;
        sqlx::query(statement)
            .execute(&mut conn)
            .await
            .map_err(|e| format!("{statement}: {e}"))?;
        let _ = conn.close().await;
        Ok(())
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // From a thread of its own: this may run inside the benchmark's runtime.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let connect = sqlx::PgConnection::connect(&admin);
                if let Ok(Ok(mut conn)) =
                    tokio::time::timeout(Duration::from_secs(10), connect).await
                {
                    let stmt = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                    let _ = sqlx::query(&stmt).execute(&mut conn).await;
                    let _ = conn.close().await;
                }
            });
        })
        .join();
    }
}
