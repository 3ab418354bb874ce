#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The reproduction of issue 48 on the real `demo-agent` binary: started on a fresh SQLite
//! file, a `POST /message:stream` with a long text, the server killed with SIGKILL once the
//! stream is open, restarted on the same file: the task ends FAILED at startup (a resubscriber
//! gets the final event and its stream ends) and `GET /tasks?status=TASK_STATE_WORKING` is
//! empty.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The safety net around reads from the server (never used to order things).
const TIMEOUT: Duration = Duration::from_secs(60);

/// The demo agent on `store`, and the `host:port` it serves on.
fn start(store: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-agent"))
        .args(["--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
        .env("A2A_STORE", store)
        .env_remove("A2A_AUTH_TOKENS")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start demo-agent");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("demo-agent prints its URL").unwrap();
        if let Some(rest) = line.split("serving on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    // Its later output is drained so that it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

/// A request on a new connection (`Connection: close`), the connection to read it from.
fn request(addr: &str, method: &str, path: &str, body: Option<&str>) -> BufReader<TcpStream> {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(TIMEOUT)).unwrap();
    let body = body.unwrap_or("");
    write!(
        tcp,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nA2A-Version: 1.0\r\n\
         Content-Type: application/a2a+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    BufReader::new(tcp)
}

/// The `data:` payloads of an SSE response read to its end.
fn sse_events(mut conn: BufReader<TcpStream>) -> Vec<Value> {
    let mut all = String::new();
    conn.read_to_string(&mut all).unwrap();
    all.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect()
}

/// The JSON body of a whole response.
fn json_body(mut conn: BufReader<TcpStream>) -> Value {
    let mut all = String::new();
    conn.read_to_string(&mut all).unwrap();
    assert!(all.starts_with("HTTP/1.1 200"), "{all}");
    let body = all.split_once("\r\n\r\n").unwrap().1;
    serde_json::from_str(body).unwrap()
}

#[test]
fn a_task_cut_by_a_kill_ends_failed_when_the_demo_agent_restarts_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("a2a-demo-recovery-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = format!("sqlite://{}", dir.join("demo.db").display());
    let (mut child, addr) = start(&store);
    let words: Vec<String> = (0..2_000).map(|i| format!("w{i}")).collect();
    let body = serde_json::json!({"message": {"messageId": "m-cut", "role": "ROLE_USER",
        "parts": [{"text": format!("stream {}", words.join(" "))}]}})
    .to_string();
    let mut stream = request(&addr, "POST", "/message:stream", Some(&body));
    // Read until the first event: the task exists and is being streamed.
    let mut task_id = String::new();
    let mut line = String::new();
    while task_id.is_empty() {
        line.clear();
        assert!(stream.read_line(&mut line).unwrap() > 0, "the stream opens");
        if let Some(data) = line.strip_prefix("data:") {
            let event: Value = serde_json::from_str(data.trim()).unwrap();
            task_id = event["task"]["id"].as_str().unwrap().to_owned();
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(stream);
    let restarted = Instant::now();
    let (mut child, addr) = start(&store);
    let events = sse_events(request(
        &addr,
        "GET",
        &format!("/tasks/{task_id}:subscribe"),
        None,
    ));
    let took = restarted.elapsed();
    // The resubscriber's final event; when the startup pass ended the task before the
    // resubscription, SubscribeToTask refuses the terminal task, and GetTask shows it.
    let status = match events.last() {
        Some(last) => {
            let status = last
                .get("statusUpdate")
                .or_else(|| last.get("task"))
                .map(|v| v["status"].clone())
                .unwrap();
            assert_eq!(status["state"], "TASK_STATE_FAILED", "{events:?}");
            status
        }
        None => {
            json_body(request(&addr, "GET", &format!("/tasks/{task_id}"), None))["status"].clone()
        }
    };
    assert_eq!(status["state"], "TASK_STATE_FAILED", "{status}");
    let why = status["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(
        why.starts_with("The agent stopped before finishing"),
        "{why}"
    );
    let working = json_body(request(
        &addr,
        "GET",
        "/tasks?status=TASK_STATE_WORKING",
        None,
    ));
    assert_eq!(
        working["tasks"].as_array().map_or(0, Vec::len),
        0,
        "{working}"
    );
    eprintln!("the cut task ended FAILED {took:?} after the restart");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
