#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The demo agent's OpenAPI document, checked by real tools: the real `demo-agent` binary is
//! started on `127.0.0.1:0` (SQLite store in a directory of its own), its `/openapi.json` is
//! validated with openapi-spec-validator, and schemathesis fuzzes every operation of the
//! HTTP+JSON binding from it (a bounded number of cases, a fixed seed unless
//! `A2A_OPENAPI_SEED` is set): no server error (5xx) and no response that disagrees with the
//! document.
//!
//! The tools are pinned in `tests/interop/openapi/requirements.txt` and installed into a
//! throwaway venv by the test. It runs when `CI` is set (and with `--ignored`), and is ignored
//! otherwise (see `tests/build.rs`); once it runs, missing python3 or registry fail it.

// The installer of the interop peers; this test uses only its OpenAPI tools.
#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/src/interop.rs"]
mod interop_support;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The safety net around waiting for the binary to listen (never used to order things).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// A hang guard on the whole check (1-2 minutes here, depending on the load).
const CHECK_TIMEOUT: Duration = Duration::from_secs(600);
/// Generated cases per operation and phase.
const MAX_EXAMPLES: &str = "25";
/// The seed of the generated cases, for a reproducible run.
const SEED: &str = "20261203";
/// The operations of the HTTP+JSON binding: 12 routes, plain and under `/{tenant}`.
const OPERATIONS: usize = 24;

/// The demo agent process, killed (by its handle) when the test ends.
struct Demo(Child);

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A directory of its own, removed when the test ends.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts the demo agent in `dir`; returns it with its base URL once it listens.
fn start(dir: &std::path::Path) -> (Demo, String) {
    let store = format!("sqlite://{}", dir.join("demo.db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-agent"))
        .current_dir(dir)
        .env_remove("A2A_AUTH_TOKENS")
        // The fuzzer is one client sending thousands of requests: under the fair-share quotas
        // most would be answered 429 and the operations barely exercised.
        .env("A2A_QUOTAS", "off")
        .env("RUST_LOG", "warn")
        .args(["--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
        .args(["--store", &store])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start demo-agent");
    let stdout = child.stdout.take().unwrap();
    let demo = Demo(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("A2A demo agent serving on ") {
                let url = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let _ = tx.send(url);
            }
            // Keeps draining so the agent never blocks on a full pipe.
        }
    });
    let url = rx
        .recv_timeout(START_TIMEOUT)
        .expect("the demo agent did not say where it listens");
    (demo, url)
}

/// Runs `check.py` against `url` (bounded by [`CHECK_TIMEOUT`]); its exit status and output.
fn check(python: &std::path::Path, url: &str, dir: &std::path::Path, seed: &str) -> (bool, String) {
    let child = Command::new(python)
        .arg(
            interop_support::interop_dir()
                .join("openapi")
                .join("check.py"),
        )
        .args([url, dir.to_str().unwrap(), MAX_EXAMPLES, seed])
        .current_dir(dir)
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run check.py");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(CHECK_TIMEOUT) else {
        // Kill the one process we started, by its PID.
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        panic!("check.py did not finish within {CHECK_TIMEOUT:?}");
    };
    let out = out.expect("wait for check.py");
    let text = format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs Python tools; runs with CI=true (.ci/run) or --ignored"
)]
fn the_demo_agents_openapi_document_is_valid_and_fuzzing_finds_no_server_error() {
    let python = interop_support::openapi_tools();
    let dir = interop_support::target_dir().join(format!("openapi-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = TempDir(dir);
    let (_demo, url) = start(&dir.0);
    let seed = std::env::var("A2A_OPENAPI_SEED").unwrap_or_else(|_| SEED.to_owned());
    let started = Instant::now();
    let (ok, output) = check(&python, &url, &dir.0, &seed);
    let elapsed = started.elapsed();
    // Only check.py's fact lines (stderr, schemathesis' own report, comes after them).
    let facts = output.split("\n--- stderr\n").next().unwrap_or_default();
    let line = |prefix: &str| -> Vec<&str> {
        facts
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .collect()
    };
    let context = format!("check.py (seed {seed}, {elapsed:.1?}):\n{output}");
    assert!(
        facts.lines().any(|l| l == "PASS validate"),
        "the document is not valid OpenAPI 3.1: {context}"
    );
    assert_eq!(line("FAILURES "), ["0"], "{context}");
    assert!(ok, "{context}");
    assert_eq!(
        line("OPERATIONS "),
        [format!("{OPERATIONS} {OPERATIONS}")],
        "every operation is tested: {context}"
    );
    let cases: usize = line("CASES ")[0].parse().unwrap();
    assert!(cases > OPERATIONS * 10, "{cases} cases: {context}");
    // Each operation gets valid and invalid requests.
    let modes = line("MODES ");
    assert_eq!(modes.len(), OPERATIONS, "{context}");
    for op in &modes {
        let counts: Vec<usize> = op
            .rsplitn(3, ' ')
            .take(2)
            .map(|n| n.parse().unwrap())
            .collect();
        assert!(counts.iter().all(|n| *n > 0), "{op}: {context}");
    }
    // Generated from the document's schemas, valid messages reach the agent (not only 4xx).
    let accepted = |op: &str| -> usize {
        line("ACCEPTED ")
            .iter()
            .filter_map(|l| l.strip_prefix(op))
            .filter_map(|n| n.trim().parse::<usize>().ok())
            .sum()
    };
    for op in [
        "POST /message:send ",
        "POST /message:stream ",
        "GET /tasks ",
    ] {
        assert!(
            accepted(op) > 0,
            "no valid {op}case was accepted: {context}"
        );
    }
    eprintln!(
        "openapi: {cases} cases over {OPERATIONS} operations (seed {seed}), 0 failures, in \
         {elapsed:.1?}"
    );
}
