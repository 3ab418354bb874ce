//! The official SDK peers of the interop tests, installed by the tests themselves:
//!
//! - Python: a venv at `target/interop-venv` (`python3 -m venv`, then `pip install -r
//!   tests/interop/python/requirements.txt`), reused while the requirements file and the Python
//!   version are unchanged (a stamp file holds their hash);
//! - JS: `npm install` of `tests/interop/js` into `target/interop-js`, reused likewise.
//!
//! An interop test runs when `CI` is set (`.ci/run` sets it) or when asked for with
//! `--ignored`; otherwise it is compiled as ignored (`cfg(interop)`, see `tests/build.rs`), so a
//! run without the peers reports it as ignored, never as passed. Once it runs, a peer that
//! cannot be installed (no `python3` / `npm`, no registry) fails it. Installs are serialized
//! across test binaries with a lock file. Child processes are killed when their guard drops.
//!
//! `examples/tests/openapi.rs` includes this file too (for [`openapi_tools`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};

/// How long an install may take.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a peer server may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a peer client script may run.
pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(180);

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

/// The cargo target directory.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.is_absolute() { d } else { root().join(d) }
        }
        None => root().join("target"),
    }
}

/// The peer scripts.
pub fn interop_dir() -> PathBuf {
    root().join("tests").join("interop")
}

/// A peer that cannot be used fails the test that needs it.
fn unavailable(what: &str, reason: &str) -> ! {
    panic!("the {what} interop peer is unavailable: {reason}")
}

/// FNV-1a, 64 bits: a stable hash for the stamp files.
fn fnv(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Runs `cmd` to completion (bounded); `Err` with its output when it fails.
fn run(mut cmd: Command, what: &str) -> Result<String, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {what} ({cmd:?}): {e}"))?;
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(INSTALL_TIMEOUT) {
        Ok(r) => r.map_err(|e| format!("{what} failed: {e}"))?,
        Err(_) => {
            // Kill the one process we started, by its PID.
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            return Err(format!("{what} did not finish within {INSTALL_TIMEOUT:?}"));
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        let tail: String = text
            .lines()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        Err(format!("{what} exited with {}:\n{tail}", out.status))
    }
}

/// Holds an exclusive lock on `target/<name>.lock` while alive (serializes installs between
/// test binaries that run at the same time).
#[derive(Debug)]
struct InstallLock(std::fs::File);

impl InstallLock {
    fn take(name: &str) -> Result<Self, String> {
        let dir = target_dir();
        std::fs::create_dir_all(&dir).map_err(|e| format!("create {dir:?}: {e}"))?;
        let path = dir.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("open {path:?}: {e}"))?;
        file.lock().map_err(|e| format!("lock {path:?}: {e}"))?;
        Ok(Self(file))
    }
}

impl Drop for InstallLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

fn install_python() -> Result<PathBuf, String> {
    install_python_from("python", "interop-venv")
}

/// A venv at `target/<venv_name>` with `tests/interop/<subdir>/requirements.txt`.
fn install_python_from(subdir: &str, venv_name: &str) -> Result<PathBuf, String> {
    let requirements = interop_dir().join(subdir).join("requirements.txt");
    let req = std::fs::read(&requirements).map_err(|e| format!("read {requirements:?}: {e}"))?;
    let version = run(
        {
            let mut c = Command::new("python3");
            c.arg("-c")
                .arg("import sys; print('%d.%d.%d' % sys.version_info[:3])");
            c
        },
        "python3 --version",
    )?;
    let version = version.trim().to_owned();
    let minor: Vec<u32> = version.split('.').filter_map(|p| p.parse().ok()).collect();
    if minor.len() < 2 || (minor[0], minor[1]) < (3, 10) {
        return Err(format!(
            "python3 is {version}; the a2a-sdk needs Python >= 3.10"
        ));
    }
    let venv = target_dir().join(venv_name);
    let python = venv.join("bin").join("python");
    let stamp = venv.join(".a2a-interop-stamp");
    let want = fnv(&[&req, version.as_bytes()]);
    let _lock = InstallLock::take(venv_name)?;
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        return Ok(python);
    }
    if venv.exists() {
        std::fs::remove_dir_all(&venv).map_err(|e| format!("remove the old {venv:?}: {e}"))?;
    }
    let mut c = Command::new("python3");
    c.arg("-m").arg("venv").arg(&venv);
    run(c, "python3 -m venv")?;
    let mut c = Command::new(&python);
    c.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        "-r",
    ])
    .arg(&requirements);
    run(
        c,
        &format!("pip install -r tests/interop/{subdir}/requirements.txt"),
    )?;
    std::fs::write(&stamp, &want).map_err(|e| format!("write {stamp:?}: {e}"))?;
    Ok(python)
}

fn install_js() -> Result<PathBuf, String> {
    install_js_from("js", "interop-js")
}

/// `npm install` of `tests/interop/<subdir>` into `target/<dir_name>`, with its
/// `client_check.mjs` beside `node_modules`.
fn install_js_from(subdir: &str, dir_name: &str) -> Result<PathBuf, String> {
    let src = interop_dir().join(subdir);
    let package = std::fs::read(src.join("package.json"))
        .map_err(|e| format!("read tests/interop/{subdir}/package.json: {e}"))?;
    let node = run(
        {
            let mut c = Command::new("node");
            c.arg("--version");
            c
        },
        "node --version",
    )?;
    let node = node.trim().to_owned();
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 20 {
        return Err(format!(
            "node is {node}; the JS SDK checks need Node.js >= 20"
        ));
    }
    let dir = target_dir().join(dir_name);
    let stamp = dir.join(".a2a-interop-stamp");
    let want = fnv(&[&package, node.as_bytes()]);
    let _lock = InstallLock::take(dir_name)?;
    let installed = dir.join("node_modules").join("@a2a-js").join("sdk");
    if !(installed.exists()
        && std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()))
    {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| format!("remove the old {dir:?}: {e}"))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("create {dir:?}: {e}"))?;
        std::fs::write(dir.join("package.json"), &package)
            .map_err(|e| format!("write package.json: {e}"))?;
        let mut c = Command::new("npm");
        c.current_dir(&dir).args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-package-lock",
            "--loglevel=error",
        ]);
        run(c, &format!("npm install (tests/interop/{subdir})"))?;
        std::fs::write(&stamp, &want).map_err(|e| format!("write {stamp:?}: {e}"))?;
    }
    // The script runs beside node_modules (ES modules resolve packages from the script's
    // directory); copy the current version every time.
    let script = "client_check.mjs";
    std::fs::copy(src.join(script), dir.join(script)).map_err(|e| format!("copy {script}: {e}"))?;
    Ok(dir)
}

/// The venv's `python`, installing it on first use.
///
/// # Panics
/// When it cannot be installed.
pub fn python() -> PathBuf {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PY.get_or_init(install_python) {
        Ok(p) => p.clone(),
        Err(e) => unavailable("Python (a2a-sdk)", e),
    }
}

/// The directory with `node_modules` and `client_check.mjs`, installing it on first use.
///
/// # Panics
/// When it cannot be installed.
pub fn js_dir() -> PathBuf {
    static JS: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match JS.get_or_init(install_js) {
        Ok(p) => p.clone(),
        Err(e) => unavailable("JS (@a2a-js/sdk)", e),
    }
}

/// The v0.3 SDK line's venv `python` (`tests/interop/python_v03`).
///
/// # Panics
/// When it cannot be installed.
pub fn python_v03() -> PathBuf {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PY.get_or_init(|| install_python_from("python_v03", "interop-venv-v03")) {
        Ok(p) => p.clone(),
        Err(e) => unavailable("Python v0.3 (a2a-sdk 0.3)", e),
    }
}

/// The v0.3 JS SDK line's folder (`tests/interop/js_v03`).
///
/// # Panics
/// When it cannot be installed.
pub fn js_v03_dir() -> PathBuf {
    static JS: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match JS.get_or_init(|| install_js_from("js_v03", "interop-js-v03")) {
        Ok(p) => p.clone(),
        Err(e) => unavailable("JS v0.3 (@a2a-js/sdk 0.3)", e),
    }
}

/// The OpenAPI tools' venv `python` (`tests/interop/openapi`: openapi-spec-validator and
/// schemathesis).
///
/// # Panics
/// When it cannot be installed.
pub fn openapi_tools() -> PathBuf {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PY.get_or_init(|| install_python_from("openapi", "openapi-venv")) {
        Ok(p) => p.clone(),
        Err(e) => unavailable("Python (openapi-spec-validator, schemathesis)", e),
    }
}

/// Runs blocking setup (an install) off the async runtime.
pub async fn setup<T: Send + 'static>(f: fn() -> T) -> T {
    tokio::task::spawn_blocking(f).await.expect("setup thread")
}

/// A child process, killed (by its PID, through its handle) when dropped.
#[derive(Debug)]
pub struct PeerProcess {
    /// What it is, for messages.
    pub what: String,
    child: tokio::process::Child,
    /// Where its stderr goes.
    pub log: PathBuf,
}

impl PeerProcess {
    /// The last lines of its stderr log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        // `start_kill` signals exactly this child; `kill_on_drop` also reaps it.
        let _ = self.child.start_kill();
    }
}

/// The official Python SDK echo server (tests/interop/python/echo_server.py) under uvicorn on
/// 127.0.0.1 at a free port; returns it with its base URL once it printed `READY <port>`.
pub async fn start_python_server(python: &Path) -> (PeerProcess, String) {
    start_python_server_from(python, "python").await
}

/// `tests/interop/<subdir>/echo_server.py`, as [`start_python_server`] starts the v1.0 one.
pub async fn start_python_server_from(python: &Path, subdir: &str) -> (PeerProcess, String) {
    start_python_server_with(python, subdir, &[]).await
}

/// [`start_python_server_from`] with more arguments for the script (e.g. `--rest`).
pub async fn start_python_server_with(
    python: &Path,
    subdir: &str,
    args: &[&str],
) -> (PeerProcess, String) {
    let logs = target_dir().join("interop-logs");
    std::fs::create_dir_all(&logs).unwrap();
    let log = logs.join(format!("echo_server-{}.log", std::process::id()));
    let stderr = std::fs::File::create(&log).unwrap();
    let mut child = tokio::process::Command::new(python)
        .arg(interop_dir().join(subdir).join("echo_server.py"))
        .args(["--host", "127.0.0.1"])
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .env("ECHO_LOG_LEVEL", "warning")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true)
        .spawn()
        .expect("start echo_server.py");
    let stdout = child.stdout.take().unwrap();
    let proc = PeerProcess {
        what: "echo_server.py".into(),
        child,
        log,
    };
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(START_TIMEOUT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(port) = line.strip_prefix("READY ") {
                return Some(port.trim().to_owned());
            }
        }
        None
    })
    .await;
    let port = match ready {
        Ok(Some(p)) => p,
        Ok(None) => panic!(
            "echo_server.py exited before it was ready:\n{}",
            proc.log_tail()
        ),
        Err(_) => panic!(
            "echo_server.py was not ready within {START_TIMEOUT:?}:\n{}",
            proc.log_tail()
        ),
    };
    // Keep draining stdout so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (proc, format!("http://127.0.0.1:{port}"))
}

/// The result of a peer client script.
#[derive(Debug)]
pub struct ScriptRun {
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// Its exit code.
    pub code: Option<i32>,
}

impl ScriptRun {
    /// The names of the checks reported as `PASS`.
    pub fn passed(&self) -> Vec<&str> {
        self.named("PASS ")
    }

    /// The `FAIL` lines.
    pub fn failures(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with("FAIL "))
            .collect()
    }

    fn named(&self, prefix: &str) -> Vec<&str> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(|rest| rest.split([' ', ':']).next().unwrap_or_default())
            .collect()
    }

    /// The `N passed, M failed` summary.
    pub fn summary(&self) -> Option<(u32, u32)> {
        self.stdout.lines().rev().find_map(|l| {
            let (p, f) = l.split_once(" passed, ")?;
            let f = f.strip_suffix(" failed")?;
            Some((p.trim().parse().ok()?, f.trim().parse().ok()?))
        })
    }

    /// Asserts `N passed, 0 failed` with every check of `required` among the passed ones.
    pub fn assert_all_passed(&self, who: &str, required: &[&str]) {
        let report = format!(
            "{who}: exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        let Some((passed, failed)) = self.summary() else {
            panic!("no `N passed, M failed` line from {report}");
        };
        assert!(
            failed == 0 && self.failures().is_empty(),
            "{failed} check(s) failed: {:?}\n{report}",
            self.failures()
        );
        let got = self.passed();
        let missing: Vec<&&str> = required.iter().filter(|r| !got.contains(r)).collect();
        assert!(
            missing.is_empty(),
            "checks that did not pass (skipped or absent): {missing:?}\n{report}"
        );
        assert!(passed as usize >= required.len(), "{report}");
        assert_eq!(self.code, Some(0), "{report}");
    }
}

/// Runs a peer client script to completion (bounded; killed on timeout).
pub async fn run_script(mut cmd: tokio::process::Command, what: &str) -> ScriptRun {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    match tokio::time::timeout(SCRIPT_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) => ScriptRun {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
        },
        Ok(Err(e)) => panic!("{what} failed to run: {e}"),
        Err(_) => panic!("{what} did not finish within {SCRIPT_TIMEOUT:?} (killed)"),
    }
}
