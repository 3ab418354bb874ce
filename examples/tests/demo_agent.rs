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
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Demo {
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-agent"))
        .args(["--addr", "127.0.0.1:0"])
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
    };
    loop {
        let line = rx
            .recv_timeout(TIMEOUT)
            .expect("demo-agent prints its URL, its curl commands, then 'Press Ctrl-C'");
        if let Some(rest) = line.split("serving on ").nth(1) {
            demo.url = rest.split_whitespace().next().unwrap().to_owned();
        }
        let trimmed = line.trim();
        if trimmed.starts_with("curl ") {
            demo.curls.push(trimmed.to_owned());
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
    let out = Command::new("sh")
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
fn demo_agent_binary_prints_working_curl_commands() {
    let demo = start();
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
    let urls: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["url"].as_str().unwrap())
        .collect();
    assert!(urls.iter().all(|u| u.starts_with(&demo.url)), "{urls:?}");
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
        .collect();
    assert!(commands.len() >= 2, "{commands:?}");
    let demo = start();
    for command in commands {
        let command = command.replace("http://127.0.0.1:8080", &demo.url);
        assert!(command.contains(&demo.url), "{command}");
        let out = sh(&command);
        check(&command, &out);
    }
}
