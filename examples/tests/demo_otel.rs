#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The real `demo-agent` binary with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a fake OTLP
//! collector (HTTP/protobuf on 127.0.0.1:0, decoded with the protocol's prost types): a request
//! with a `traceparent` shows up there as a span of the caller's trace, under the service name
//! `OTEL_SERVICE_NAME` gives. The waits end when the collector receives the span.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message as _;

const TIMEOUT: Duration = Duration::from_secs(60);

/// (span name, trace id, parent span id, service name), ids in hex.
type Span = (String, String, String, String);

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A collector on its own thread: every span it receives goes down the channel.
fn collector() -> (String, mpsc::Receiver<Span>) {
    let (spans_tx, spans_rx) = mpsc::channel::<Span>();
    let (addr_tx, addr_rx) = mpsc::channel();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let spans = web::Data::new(spans_tx);
            let server = HttpServer::new(move || {
                App::new()
                    .app_data(spans.clone())
                    .app_data(web::PayloadConfig::new(64 << 20))
                    .route(
                        "/v1/traces",
                        web::post().to(
                            |body: web::Bytes, spans: web::Data<mpsc::Sender<Span>>| async move {
                                let req = ExportTraceServiceRequest::decode(body).unwrap();
                                for rs in req.resource_spans {
                                    let service = rs
                                        .resource
                                        .iter()
                                        .flat_map(|r| &r.attributes)
                                        .find(|kv| kv.key == "service.name")
                                        .and_then(|kv| kv.value.as_ref()?.value.clone())
                                        .map(|v| match v {
                                            AnyValue::StringValue(s) => s,
                                            other => format!("{other:?}"),
                                        })
                                        .unwrap_or_default();
                                    for s in rs.scope_spans.into_iter().flat_map(|ss| ss.spans) {
                                        let _ = spans.send((
                                            s.name,
                                            hex(&s.trace_id),
                                            hex(&s.parent_span_id),
                                            service.clone(),
                                        ));
                                    }
                                }
                                HttpResponse::Ok()
                                    .content_type("application/x-protobuf")
                                    .body(ExportTraceServiceResponse::default().encode_to_vec())
                            },
                        ),
                    )
            })
            .workers(1)
            .bind("127.0.0.1:0")
            .unwrap();
            addr_tx.send(server.addrs()[0]).unwrap();
            server.run().await.unwrap();
        });
    });
    let addr = addr_rx.recv_timeout(TIMEOUT).unwrap();
    (format!("http://{addr}"), spans_rx)
}

#[test]
fn the_demo_agent_exports_its_spans_when_an_otlp_endpoint_is_set() {
    let (endpoint, spans) = collector();
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-agent"))
        .args(["--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
        .env("A2A_STORE", "memory:")
        .env_remove("A2A_AUTH_TOKENS")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_SERVICE_NAME", "demo-otel-test")
        // Batches leave every 50 ms rather than 5 s: the test waits for the span to arrive.
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start demo-agent");
    let stdout = child.stdout.take().unwrap();
    let _child = Killed(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut url = String::new();
    let mut exporting = false;
    loop {
        let line = rx.recv_timeout(TIMEOUT).expect("demo-agent prints its URL");
        exporting |= line.contains("exported over OTLP");
        if let Some(rest) = line.split("serving on ").nth(1) {
            url = rest.split_whitespace().next().unwrap().to_owned();
        }
        if line.contains("Press Ctrl-C") {
            break;
        }
    }
    assert!(exporting, "the demo says it exports its spans");

    let trace = "5bf92f3577b34da6a3ce929d0e0e4736";
    let out = Command::new("curl")
        .args(["-s", "--max-time", "30", &format!("{url}/")])
        .args(["-H", "Content-Type: application/json", "-H", "A2A-Version: 1.0"])
        .args(["-H", &format!("traceparent: 00-{trace}-00f067aa0ba902b7-01")])
        .args(["-d", r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}"#])
        .output()
        .expect("run curl");
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(body.contains("TASK_STATE_COMPLETED"), "{body}");

    let deadline = Instant::now() + TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let (name, trace_id, parent, service) = spans
            .recv_timeout(left)
            .expect("the request's span reaches the collector");
        if name == "a2a.request" && trace_id == trace {
            assert_eq!(
                parent, "00f067aa0ba902b7",
                "the caller is the remote parent"
            );
            assert_eq!(service, "demo-otel-test");
            break;
        }
    }
}
