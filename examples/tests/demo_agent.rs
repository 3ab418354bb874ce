#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Starts the real `demo-agent` binary on `127.0.0.1:0`, reads the URL it prints, and runs the
//! `curl` commands it prints — and the README's — exactly as a user would paste them.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// The safety net around waiting for the binary's output (never used to order things).
const TIMEOUT: Duration = Duration::from_secs(60);

/// The demo agent process, killed when the test ends.
struct Demo {
    child: Child,
    url: String,
    curls: Vec<String>,
    /// What it says about authentication.
    notes: Vec<String>,
    /// Where it said it keeps its tasks.
    store: String,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory of its own for one test's data, removed when the test ends.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("a2a-demo-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The demo agent with its default store, run from a directory of its own.
fn start() -> (Demo, TempDir) {
    let dir = TempDir::new(
        &format!("{:?}", std::thread::current().id())
            .replace(|c: char| !c.is_ascii_alphanumeric(), ""),
    );
    (start_in(&dir.0, None, &[]), dir)
}

/// [`start`] with more command-line arguments.
fn start_with(extra: &[&str]) -> (Demo, TempDir) {
    let dir = TempDir::new(
        &format!("{:?}", std::thread::current().id())
            .replace(|c: char| !c.is_ascii_alphanumeric(), ""),
    );
    (start_in(&dir.0, None, extra), dir)
}

/// The demo agent run from `dir`, with `A2A_STORE` set to `store` when given, and `extra`
/// arguments.
fn start_in(dir: &std::path::Path, store: Option<&str>, extra: &[&str]) -> Demo {
    start_env(dir, store, extra, &[])
}

/// [`start_in`] with more environment variables.
fn start_env(
    dir: &std::path::Path,
    store: Option<&str>,
    extra: &[&str],
    vars: &[(&str, &str)],
) -> Demo {
    let mut command = Command::new(env!("CARGO_BIN_EXE_demo-agent"));
    command.envs(vars.iter().copied());
    command.current_dir(dir);
    command.env_remove("A2A_STORE");
    command.env_remove("A2A_AUTH_TOKENS");
    if let Some(store) = store {
        command.env("A2A_STORE", store);
    }
    let mut child = command
        .args(["--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start demo-agent");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut demo = Demo {
        child,
        url: String::new(),
        curls: Vec::new(),
        notes: Vec::new(),
        store: String::new(),
    };
    loop {
        let line = rx
            .recv_timeout(TIMEOUT)
            .expect("demo-agent prints its URL, its curl commands, then 'Press Ctrl-C'");
        if let Some(rest) = line.split("serving on ").nth(1) {
            demo.url = rest.split_whitespace().next().unwrap().to_owned();
        }
        if let Some(rest) = line.strip_prefix("Tasks are kept in ") {
            demo.store = rest.trim().to_owned();
        }
        let trimmed = line.trim();
        if trimmed.starts_with("curl ") {
            demo.curls.push(trimmed.to_owned());
        } else if trimmed.starts_with("Authentication:") || trimmed.starts_with("WARNING:") {
            demo.notes.push(trimmed.to_owned());
        }
        if line.contains("Press Ctrl-C") {
            break;
        }
    }
    assert!(
        demo.url.starts_with("http://127.0.0.1:") && !demo.url.ends_with(":0"),
        "the bound URL is printed: {:?}",
        demo.url
    );
    demo
}

/// Runs a shell command (a pasted curl line, with a time cap appended) and returns its stdout.
fn sh(command: &str) -> String {
    sh_env(command, None)
}

/// [`sh`] with `A2A_TOKEN` set to `token`.
fn sh_env(command: &str, token: Option<&str>) -> String {
    let mut cmd = Command::new("sh");
    if let Some(t) = token {
        cmd.env("A2A_TOKEN", t);
    }
    let out = cmd
        .arg("-c")
        .arg(format!("{command} --max-time 30"))
        .stdin(Stdio::null())
        .output()
        .expect("run sh");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert!(
        out.status.success(),
        "{command}\nexit {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `data:` payloads of an SSE body (JSON), in order.
fn sse_data(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).expect("JSON data"))
        .collect()
}

fn text(v: &Value) -> String {
    v["parts"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}

/// Checks what one curl command printed, by what it asks for.
fn check(command: &str, out: &str) {
    if command.contains("message:stream") {
        let events = sse_data(out);
        assert!(events.len() >= 3, "{out}");
        assert!(
            events[0].get("task").is_some(),
            "the task comes first: {out}"
        );
        let last = events.last().unwrap();
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{out}"
        );
        let chunks: String = events
            .iter()
            .filter_map(|e| e.get("artifactUpdate"))
            .map(|a| text(&a["artifact"]))
            .collect();
        assert_eq!(
            chunks, "stream one two three ",
            "the words streamed back: {out}"
        );
        return;
    }
    let (headers, body) = if command.contains(" -si ") || command.contains(" -i ") {
        let (h, b) = out
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("headers and body: {out}"));
        (h.to_ascii_lowercase(), b)
    } else {
        (String::new(), out)
    };
    let json: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let result = if json.get("jsonrpc").is_some() {
        assert_eq!(json["id"], 1, "{json}");
        json["result"].clone()
    } else {
        json
    };
    let task = &result["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{result}");
    assert_eq!(
        text(&task["artifacts"][0]).trim_end(),
        "echo: hello",
        "{result}"
    );
    if command.contains("A2A-Extensions:") {
        let echoed = headers
            .lines()
            .find_map(|l| l.strip_prefix("a2a-extensions:"))
            .unwrap_or_else(|| panic!("the activated extensions are echoed: {headers}"));
        for uri in command
            .split("A2A-Extensions: ")
            .nth(1)
            .unwrap()
            .split('\'')
            .next()
            .unwrap()
            .split(',')
        {
            assert!(echoed.contains(uri.trim()), "{uri} in {echoed}");
        }
    }
}

#[test]
fn demo_agent_with_auth_tokens_refuses_anonymous_callers() {
    let (demo, _dir) = start_with(&[
        "--auth-token",
        "alice=s3cret-alice",
        "--auth-token",
        "bob=s3cret-bob",
    ]);
    assert!(
        demo.notes
            .iter()
            .any(|n| n.contains("bearer tokens required") && n.contains("alice, bob")),
        "{:?}",
        demo.notes
    );
    assert!(demo.curls.len() >= 2, "{:?}", demo.curls);
    for command in &demo.curls {
        assert!(command.contains("$A2A_TOKEN"), "{command}");
        check(command, &sh_env(command, Some("s3cret-bob")));
        // Without the right token: 401 (curl's -w prints the status after the body).
        for token in ["", "s3cret-carol"] {
            let out = sh_env(
                &format!("{command} -o /dev/null -w '%{{http_code}}'"),
                Some(token),
            );
            assert!(out.ends_with("401"), "{command} with {token:?}: {out}");
        }
    }
    let card: Value = serde_json::from_str(&sh(&format!(
        "curl -s {}/.well-known/agent-card.json",
        demo.url
    )))
    .unwrap();
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
}

#[test]
fn demo_agent_binary_prints_working_curl_commands() {
    let (demo, _dir) = start();
    assert!(
        demo.notes
            .iter()
            .any(|n| n.starts_with("Authentication: none")),
        "it says it is open: {:?}",
        demo.notes
    );
    assert!(demo.curls.len() >= 2, "{:?}", demo.curls);
    for command in &demo.curls {
        assert!(command.contains(&demo.url), "{command}");
        let out = sh(command);
        check(command, &out);
    }
    let card: Value = serde_json::from_str(&sh(&format!(
        "curl -s {}/.well-known/agent-card.json",
        demo.url
    )))
    .unwrap();
    assert_eq!(card["name"], "a2a-runtime demo agent");
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    let (grpc, http): (Vec<&Value>, Vec<&Value>) = interfaces
        .iter()
        .partition(|i| i["protocolBinding"] == "GRPC");
    let urls: Vec<&str> = http.iter().map(|i| i["url"].as_str().unwrap()).collect();
    assert!(urls.iter().all(|u| u.starts_with(&demo.url)), "{urls:?}");
    // The gRPC interface is the bound host:port, without a scheme.
    let host = demo
        .url
        .trim_start_matches("http://")
        .split(':')
        .next()
        .unwrap();
    assert_eq!(grpc.len(), 1, "{interfaces:?}");
    let grpc_url = grpc[0]["url"].as_str().unwrap();
    assert!(
        grpc_url.starts_with(&format!("{host}:")) && !grpc_url.ends_with(":0"),
        "{grpc_url}"
    );
}

/// The README's curl commands (its address replaced by the bound one) work too.
#[test]
fn readme_curl_commands_work_against_the_demo_agent() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let joined = readme.replace("\\\n", " ");
    let commands: Vec<&str> = joined
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("curl "))
        // The push walkthrough's, to a local receiver: its own test, below.
        .filter(|l| !l.contains(LOCAL_HOOK))
        .collect();
    assert!(commands.len() >= 2, "{commands:?}");
    let (demo, _dir) = start();
    for command in commands {
        let command = command.replace("http://127.0.0.1:8080", &demo.url);
        assert!(command.contains(&demo.url), "{command}");
        let out = sh(&command);
        check(&command, &out);
    }
}

/// Where the README's push walkthrough has the local webhook receiver listen.
const LOCAL_HOOK: &str = "http://127.0.0.1:9000";

/// The webhook receiver example, killed when the test ends.
struct Receiver {
    child: Child,
    url: String,
    lines: mpsc::Receiver<String>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the `webhook-receiver` binary on a free port.
fn receiver() -> Receiver {
    let mut child = Command::new(env!("CARGO_BIN_EXE_webhook-receiver"))
        .args(["--addr", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start webhook-receiver");
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = lines
        .recv_timeout(TIMEOUT)
        .expect("the receiver prints where it listens");
    let url = first
        .split("listening on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("a URL")
        .trim_end_matches('/')
        .to_owned();
    Receiver { child, url, lines }
}

/// The README's push walkthrough, as pasted: the receiver, the agent with
/// `--allow-local-webhooks` (which warns), the curl; the receiver prints the deliveries of the
/// task up to its completion, with the token. Without the flag the webhook is refused.
#[test]
fn readme_push_walkthrough_delivers_to_the_local_receiver() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let joined = readme.replace("\\\n", " ");
    let walkthrough = joined
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("curl ") && l.contains(LOCAL_HOOK))
        .expect("the README's push walkthrough curl")
        .to_owned();
    assert!(
        joined.contains("--bin webhook-receiver") && joined.contains("-- --allow-local-webhooks"),
        "the walkthrough starts the receiver and the agent with the flag"
    );

    let hook = receiver();
    let (demo, _dir) = start_with(&["--allow-local-webhooks"]);
    assert!(
        demo.notes
            .iter()
            .any(|n| n.starts_with("WARNING:") && n.contains("local")),
        "{:?}",
        demo.notes
    );
    let command = walkthrough
        .replace("http://127.0.0.1:8080", &demo.url)
        .replace(LOCAL_HOOK, &hook.url);
    let answer: Value = serde_json::from_str(&sh(&command)).expect("JSON");
    let id = answer["task"]["id"].as_str().expect("a task").to_owned();
    assert_eq!(
        answer["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
    let mut seen = Vec::new();
    loop {
        let line = hook
            .lines
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|_| panic!("no completed delivery; got {seen:#?}"));
        assert!(
            line.starts_with("delivery ") && line.contains(" /hook token=my-token "),
            "{line}"
        );
        let done = line.contains(&id) && line.contains("TASK_STATE_COMPLETED");
        seen.push(line);
        if done {
            break;
        }
    }

    let (strict, _dir2) = start();
    let refused = sh(&walkthrough
        .replace("http://127.0.0.1:8080", &strict.url)
        .replace(LOCAL_HOOK, &hook.url));
    let refused: Value = serde_json::from_str(&refused).expect("JSON");
    assert!(
        refused.get("task").is_none() && refused.get("error").is_some(),
        "{refused}"
    );
}

/// Sends a blocking message over HTTP+JSON and returns the task.
fn send(url: &str, text: &str) -> Value {
    let body = serde_json::json!({
        "message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]}
    });
    let out = sh(&format!(
        "curl -s {url}/message:send -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -d '{body}'"
    ));
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    v["task"].clone()
}

fn get_task(url: &str, id: &str) -> Value {
    let out = sh(&format!("curl -s {url}/tasks/{id} -H 'A2A-Version: 1.0'"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Acknowledged, killed with SIGKILL, restarted: the task is there, with its history and
/// artifacts, from the store the agent names.
fn survives_sigkill(dir: &std::path::Path, store: Option<&str>) -> String {
    let mut demo = start_in(dir, store, &[]);
    let task = send(&demo.url, "hello");
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let location = demo.store.clone();
    demo.child.kill().unwrap(); // SIGKILL: no shutdown, no flush
    demo.child.wait().unwrap();
    drop(demo);
    let demo = start_in(dir, store, &[]);
    assert_eq!(demo.store, location);
    let again = get_task(&demo.url, &id);
    assert_eq!(again, task, "the task as acknowledged");
    assert_eq!(again["history"][0]["parts"][0]["text"], "hello");
    assert!(
        !again["artifacts"].as_array().unwrap().is_empty(),
        "{again}"
    );
    location
}

#[test]
fn the_demo_agents_tasks_survive_sigkill_in_its_default_sqlite_file() {
    let dir = TempDir::new("restart-sqlite");
    let location = survives_sigkill(&dir.0, None);
    assert_eq!(
        location, "data/demo-agent.db",
        "the README's default, printed at startup"
    );
    assert!(dir.0.join("data/demo-agent.db").exists());
}

/// Runs `sql` on the machine's PostgreSQL.
fn psql(sql: &str) {
    {
        let out = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-c",
                sql,
            ])
            .output()
            .expect("psql (PostgreSQL must be installed and reachable)");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_demo_agents_tasks_survive_sigkill_in_postgres() {
    let dir = TempDir::new("restart-postgres");
    let name = format!("a2a_demo_restart_{}", std::process::id());
    psql(&format!("DROP DATABASE IF EXISTS {name}"));
    psql(&format!("CREATE DATABASE {name}"));
    let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
    let result = std::panic::catch_unwind(|| survives_sigkill(&dir.0, Some(&url)));
    psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    assert!(result.unwrap().contains(&name));
}

/// Two demo agents on one PostgreSQL database: a task running on the first ('wait' works until
/// canceled) is ended FAILED by the second after the first is killed with SIGKILL (its lease,
/// 1 s here, expires), and a stream opened on the second sees it end.
#[test]
fn a_task_of_a_killed_instance_is_ended_by_another() {
    let dir = TempDir::new("orphan-postgres");
    let name = format!("a2a_demo_orphan_{}", std::process::id());
    psql(&format!("DROP DATABASE IF EXISTS {name}"));
    psql(&format!("CREATE DATABASE {name}"));
    let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
    let result = std::panic::catch_unwind(|| {
        let ttl = [("A2A_LEASE_TTL_MS", "1000")];
        let mut a = start_env(&dir.0, Some(&url), &[], &ttl);
        let b = start_env(&dir.0, Some(&url), &[], &ttl);
        let out = sh(&format!(
            r#"curl -s {}/message:send -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -d '{{"message":{{"messageId":"w1","role":"ROLE_USER","parts":[{{"text":"wait"}}]}},"configuration":{{"returnImmediately":true}}}}'"#,
            a.url
        ));
        let reply: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let id = reply["task"]["id"].as_str().unwrap().to_owned();
        assert_ne!(
            get_task(&b.url, &id)["status"]["state"],
            "TASK_STATE_FAILED"
        );
        a.child.kill().unwrap(); // SIGKILL: the lease is never released
        a.child.wait().unwrap();
        let killed = std::time::Instant::now();
        // The stream on B ends with the task's end.
        let events = sse_data(&sh(&format!(
            "curl -sN {}/tasks/{id}:subscribe -H 'A2A-Version: 1.0'",
            b.url
        )));
        let last = events.last().expect("events").clone();
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_FAILED",
            "{events:?}"
        );
        let why = text(&last["statusUpdate"]["status"]["message"]);
        assert!(why.contains("stopped"), "{why}");
        eprintln!("ended {:?} after the kill", killed.elapsed());
        let t = get_task(&b.url, &id);
        assert_eq!(t["status"]["state"], "TASK_STATE_FAILED");
    });
    psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    result.unwrap();
}

/// `--two-agents`: echo and greeter below `/agents/`, each with its card, listed in the AI
/// Catalog; the printed curl command reaches echo.
#[test]
fn demo_agent_serves_two_agents_and_their_catalog() {
    let (demo, _dir) = start_with(&["--two-agents"]);
    assert_eq!(demo.curls.len(), 1, "{:?}", demo.curls);
    let out = sh(&demo.curls[0]);
    let reply: Value = serde_json::from_str(&out).expect("JSON-RPC answer");
    let artifact = &reply["result"]["task"]["artifacts"][0];
    assert_eq!(text(artifact), "echo: hello", "{out}");
    let catalog: Value = serde_json::from_str(&sh(&format!(
        "curl -s {}/.well-known/ai-catalog.json",
        demo.url
    )))
    .unwrap();
    assert_eq!(catalog["specVersion"], "1.0");
    let entries = catalog["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{catalog}");
    for (entry, name) in entries.iter().zip(["Echo", "Greeter"]) {
        let url = entry["url"].as_str().unwrap();
        let card: Value = serde_json::from_str(&sh(&format!("curl -s {url}"))).unwrap();
        assert_eq!(card["name"], name, "{card}");
    }
}
