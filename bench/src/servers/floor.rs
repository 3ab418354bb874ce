//! The floor: a bare actix-web handler (one worker) that parses the same JSON-RPC body into a
//! `serde_json::Value` and answers with a canned reply of the same shape and size as ours —
//! what any actix-web JSON-RPC server costs before it does any A2A work.

use actix_web::{App, HttpResponse, HttpServer, web};
use bytes::Bytes;
use serde_json::Value;

use crate::wire::STREAM_CHUNKS;

const TASK_ID: &str = "019a0000-0000-7000-8000-000000000001";
const CONTEXT_ID: &str = "019a0000-0000-7000-8000-000000000002";
const ARTIFACT_ID: &str = "019a0000-0000-7000-8000-000000000003";
const TIMESTAMP: &str = "2026-01-01T00:00:00.000000Z";

struct Floor {
    card: Bytes,
}

/// The SendMessage result: a COMPLETED task with the echo artifact and the user message in its
/// history, as ours answers.
fn send_reply(id: &str, text: &str) -> Vec<u8> {
    let echo = Value::String(format!("echo: {text}"));
    let said = Value::String(text.to_owned());
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"task":{{"id":"{t}","contextId":"{c}","#,
            r#""status":{{"state":"TASK_STATE_COMPLETED","timestamp":"{ts}"}},"#,
            r#""artifacts":[{{"artifactId":"{a}","name":"echo","parts":[{{"text":{echo}}}]}}],"#,
            r#""history":[{{"messageId":"bench-message","contextId":"{c}","taskId":"{t}","role":"ROLE_USER","parts":[{{"text":{said}}}]}}]}}}}}}"#
        ),
        id = id,
        t = TASK_ID,
        c = CONTEXT_ID,
        a = ARTIFACT_ID,
        ts = TIMESTAMP,
        echo = echo,
        said = said,
    )
    .into_bytes()
}

/// The SSE events of a streamed reply: the task, the artifact chunks, COMPLETED.
fn stream_events(id: &str) -> Vec<Result<Bytes, std::convert::Infallible>> {
    let mut events = Vec::with_capacity(STREAM_CHUNKS + 2);
    let mut push = |n: usize, result: String| {
        events.push(Ok(Bytes::from(format!(
            "id: {n}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}\n\n"
        ))));
    };
    push(
        0,
        format!(
            r#"{{"task":{{"id":"{TASK_ID}","contextId":"{CONTEXT_ID}","status":{{"state":"TASK_STATE_SUBMITTED","timestamp":"{TIMESTAMP}"}}}}}}"#
        ),
    );
    for i in 0..STREAM_CHUNKS {
        push(
            i + 1,
            format!(
                r#"{{"artifactUpdate":{{"taskId":"{TASK_ID}","contextId":"{CONTEXT_ID}","artifact":{{"artifactId":"stream","parts":[{{"text":"chunk {i}"}}]}},"append":{},"lastChunk":{}}}}}"#,
                i > 0,
                i + 1 == STREAM_CHUNKS
            ),
        );
    }
    push(
        STREAM_CHUNKS + 1,
        format!(
            r#"{{"statusUpdate":{{"taskId":"{TASK_ID}","contextId":"{CONTEXT_ID}","status":{{"state":"TASK_STATE_COMPLETED","timestamp":"{TIMESTAMP}"}}}}}}"#
        ),
    );
    events
}

async fn rpc(body: web::Bytes) -> HttpResponse {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    let id = v
        .get("id")
        .map_or_else(|| "null".to_owned(), Value::to_string);
    let text = v["params"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    if v["method"] == "SendStreamingMessage" {
        return HttpResponse::Ok()
            .content_type("text/event-stream")
            .insert_header(("cache-control", "no-cache"))
            .streaming(futures::stream::iter(stream_events(&id)));
    }
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(("a2a-version", "1.0"))
        .body(send_reply(&id, text))
}

async fn serve_card(state: web::Data<Floor>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(state.card.clone())
}

/// Serves on 127.0.0.1:`port` until killed.
pub(crate) fn serve(port: u16) -> Result<(), String> {
    // The same card JSON ours serves.
    let ours = super::ours::server(super::ours::Extensions::None, None, None)?.card();
    let card = Bytes::from(serde_json::to_vec(&ours).map_err(|e| e.to_string())?);
    let state = web::Data::new(Floor { card });
    actix_web::rt::System::new()
        .block_on(async move {
            HttpServer::new(move || {
                App::new()
                    .app_data(state.clone())
                    .route("/", web::post().to(rpc))
                    .route(crate::wire::CARD_PATH, web::get().to(serve_card))
            })
            .workers(1)
            .on_connect(|conn, _| {
                if let Some(tcp) = conn.downcast_ref::<actix_web::rt::net::TcpStream>() {
                    let _ = tcp.set_nodelay(true);
                }
            })
            .bind(("127.0.0.1", port))?
            .run()
            .await
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canned_replies_pass_the_checks() {
        assert_eq!(
            crate::wire::check_send_reply(&send_reply("1", "hello")),
            Ok(())
        );
        let body: Vec<u8> = stream_events("1")
            .into_iter()
            .flat_map(|e| e.map(|b| b.to_vec()).unwrap_or_default())
            .collect();
        assert_eq!(crate::wire::check_stream(&body), Ok(()));
    }
}
