//! A PostgreSQL database of its own for one test, on the machine's server (trust auth), dropped
//! when the test ends. A missing PostgreSQL fails the test, it never skips it.

use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::Connection as _;

/// The PostgreSQL server every engineer's tests share (trust auth).
pub fn pg_admin_url() -> String {
    std::env::var("A2A_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A database of its own for one test, dropped when the test ends.
#[derive(Debug)]
pub struct PgDatabase {
    /// The database's name.
    pub name: String,
    /// Its connection URL.
    pub url: String,
}

static NEXT_DB: AtomicU64 = AtomicU64::new(0);

impl PgDatabase {
    /// A new database named `{prefix}_{pid}_{n}_{µs}`.
    pub async fn create_named(prefix: &str) -> Self {
        let name = format!(
            "{prefix}_{}_{}_{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::SeqCst),
            chrono::Utc::now().timestamp_micros()
        );
        let mut admin = sqlx::PgConnection::connect(&pg_admin_url())
            .await
            .expect("PostgreSQL must be reachable at 127.0.0.1:5432 (set A2A_TEST_POSTGRES)");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .unwrap();
        let root = pg_admin_url().rsplit_once('/').unwrap().0.to_owned();
        Self {
            url: format!("{root}/{name}"),
            name,
        }
    }

    /// A new database for a test of the store suite.
    pub async fn create() -> Self {
        Self::create_named("a2a_store").await
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Dropped from a thread of its own: the test's runtime may be shutting down.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                if let Ok(mut admin) = sqlx::PgConnection::connect(&pg_admin_url()).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut admin)
                        .await;
                }
            });
        })
        .join();
    }
}

/// A PostgreSQL server of its own (initdb in a temporary directory, on a free loopback port),
/// for tests that stop and start the server; stopped and removed when dropped. Run as the
/// `postgres` user when the test runs as root (the server refuses root).
#[derive(Debug)]
pub struct PrivateCluster {
    dir: std::path::PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
}

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

impl PrivateCluster {
    fn command(program: &str) -> std::process::Command {
        let path = format!("{PG_BIN}/{program}");
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        if root {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--", &path]);
            c
        } else {
            std::process::Command::new(path)
        }
    }

    fn run(mut c: std::process::Command, what: &str) {
        let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            out.status.success(),
            "{what}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A new server, started and accepting connections.
    pub fn start() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "a2a-pg-{}-{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let _ = std::process::Command::new("chown")
            .args(["postgres:postgres", dir.to_str().unwrap()])
            .status();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut init = Self::command("initdb");
        init.args(["-D", &format!("{}/data", dir.display())]).args([
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
        ]);
        Self::run(init, "initdb");
        let cluster = Self { dir, port };
        cluster.start_again();
        cluster
    }

    /// Starts the server again (after [`PrivateCluster::stop_immediate`]); returns once it
    /// accepts connections (`pg_ctl start -w`).
    pub fn start_again(&self) {
        let mut c = Self::command("pg_ctl");
        c.args(["-D", &format!("{}/data", self.dir.display())])
            .args(["-l", &format!("{}/log", self.dir.display())])
            .args(["-w", "-t", "60", "-o"])
            .arg(format!(
                "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off",
                self.port,
                self.dir.display()
            ))
            .arg("start");
        Self::run(c, "pg_ctl start");
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`).
    pub fn stop_immediate(&self) {
        let mut c = Self::command("pg_ctl");
        c.args(["-D", &format!("{}/data", self.dir.display())])
            .args(["-w", "-m", "immediate", "stop"]);
        Self::run(c, "pg_ctl stop");
    }

    /// The URL of `database` on this server.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let mut c = Self::command("pg_ctl");
        c.args(["-D", &format!("{}/data", self.dir.display())])
            .args(["-w", "-m", "immediate", "stop"]);
        let _ = c.output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
