//! The requests every server receives, and the checks on their answers.

use serde_json::Value;

/// The text every SendMessage carries; an echo agent answers `echo: hello`.
pub(crate) const TEXT: &str = "hello";
/// The text that makes every server's agent stream [`STREAM_CHUNKS`] artifact chunks.
pub(crate) const STREAM_TEXT: &str = "stream100";
/// Artifact chunks the streaming agent emits per request (then COMPLETED).
pub(crate) const STREAM_CHUNKS: usize = 100;
/// The JSON-RPC path of every server.
pub(crate) const RPC_PATH: &str = "/";
/// The agent card path of every server.
pub(crate) const CARD_PATH: &str = "/.well-known/agent-card.json";

/// A JSON-RPC request for `method` with a one-text-part user message.
pub(crate) fn rpc_body(method: &str, text: &str) -> bytes::Bytes {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"message": {"messageId": crate::load::MESSAGE_ID, "role": "ROLE_USER", "parts": [{"text": text}]}}
    });
    bytes::Bytes::from(body.to_string())
}

/// The SendMessage body used by the throughput and memory workloads.
pub(crate) fn send_body() -> bytes::Bytes {
    rpc_body("SendMessage", TEXT)
}

/// The SendStreamingMessage body used by the streaming workload.
pub(crate) fn stream_body() -> bytes::Bytes {
    rpc_body("SendStreamingMessage", STREAM_TEXT)
}

/// A cheap check on each reply under load: a completed task.
pub(crate) fn looks_completed(body: &[u8]) -> bool {
    const NEEDLE: &[u8] = b"TASK_STATE_COMPLETED";
    body.windows(NEEDLE.len()).any(|w| w == NEEDLE)
}

/// The full check done before timing: a JSON-RPC success whose result is a COMPLETED task with
/// an artifact whose text is `echo: <TEXT>`.
pub(crate) fn check_send_reply(body: &[u8]) -> Result<(), String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("reply is not JSON ({e}): {}", preview(body)))?;
    if v["jsonrpc"] != "2.0" || v["id"] != 1 {
        return Err(format!("not a JSON-RPC reply to id 1: {}", preview(body)));
    }
    let task = &v["result"]["task"];
    if task.is_null() {
        return Err(format!("result has no task: {}", preview(body)));
    }
    if task["status"]["state"] != "TASK_STATE_COMPLETED" {
        return Err(format!("task is not completed: {}", preview(body)));
    }
    let want = format!("echo: {TEXT}");
    let echoed = task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["parts"].as_array().into_iter().flatten())
        .any(|p| p["text"] == want.as_str());
    if !echoed {
        return Err(format!("no artifact with {want:?}: {}", preview(body)));
    }
    Ok(())
}

/// The check on one SSE stream before timing: at least [`STREAM_CHUNKS`] data events, each a
/// JSON-RPC success, the last one a COMPLETED status.
pub(crate) fn check_stream(body: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("stream is not UTF-8: {e}"))?;
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("an SSE data line is not JSON: {e}"))?;
    if events.len() < STREAM_CHUNKS {
        return Err(format!(
            "{} events, expected at least {STREAM_CHUNKS}: {}",
            events.len(),
            preview(body)
        ));
    }
    if let Some(bad) = events.iter().find(|e| e["result"].is_null()) {
        return Err(format!("an event is not a JSON-RPC success: {bad}"));
    }
    let last = &events[events.len() - 1]["result"];
    let state = last["statusUpdate"]["status"]["state"]
        .as_str()
        .or_else(|| last["task"]["status"]["state"].as_str());
    if state != Some("TASK_STATE_COMPLETED") {
        return Err(format!("the last event is not COMPLETED: {last}"));
    }
    Ok(())
}

/// The check on the agent card: JSON with a name and at least one interface.
pub(crate) fn check_card(body: &[u8]) -> Result<(), String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("card is not JSON ({e}): {}", preview(body)))?;
    if v["name"].as_str().is_none_or(str::is_empty) {
        return Err(format!("card has no name: {}", preview(body)));
    }
    Ok(())
}

/// The first 300 characters of a body, for error messages.
pub(crate) fn preview(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(body);
    s.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_reply_check() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"echo: hello"}]}]}}}"#;
        assert_eq!(check_send_reply(ok), Ok(()));
        assert!(looks_completed(ok));
        let wrong = br#"{"jsonrpc":"2.0","id":1,"result":{"task":{"status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[]}}}"#;
        assert!(check_send_reply(wrong).is_err());
        assert!(check_send_reply(b"nope").is_err());
    }
}
