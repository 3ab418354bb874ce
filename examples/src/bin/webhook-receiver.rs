//! A local webhook receiver for trying push notifications: listens on http://127.0.0.1:9000
//! (`--addr HOST:PORT` or `A2A_WEBHOOK_ADDR`) and prints every delivery POSTed to it, one line
//! each: the path, the notification token, and the body (a `StreamResponse`: a task, a
//! message, a status or an artifact update). Answers 200 to every POST. Run the demo agent with
//! `--allow-local-webhooks` to deliver to it.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

/// What `--help` prints.
const USAGE: &str = "\
usage: webhook-receiver [--addr HOST:PORT]

Prints every push notification POSTed to it (path, token, body), one line each.

  --addr HOST:PORT  listener (A2A_WEBHOOK_ADDR; default 127.0.0.1:9000)
  -h, --help        print this and exit
  -V, --version     print the version and exit
";

/// The largest delivery printed; a larger body is answered 413.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// Prints one delivery and answers 200.
async fn receive(req: HttpRequest, body: web::Bytes, count: web::Data<AtomicU64>) -> HttpResponse {
    let n = count.fetch_add(1, Ordering::Relaxed) + 1;
    let token = req
        .headers()
        .get("A2A-Notification-Token")
        .or_else(|| req.headers().get("X-A2A-Notification-Token"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    // Compact JSON on one line when it parses; else the text as received.
    let body = match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(json) => json.to_string(),
        Err(_) => String::from_utf8_lossy(&body).into_owned(),
    };
    let mut out = std::io::stdout().lock();
    // A closed stdout only loses the printout; the sender still gets its 200.
    let _ = writeln!(out, "delivery {n} {} token={token} {body}", req.path());
    let _ = out.flush();
    HttpResponse::Ok().finish()
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    a2a_examples::answer_help_or_version("webhook-receiver", USAGE);
    let args: Vec<String> = std::env::args().collect();
    let addr = args
        .iter()
        .position(|a| a == "--addr")
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| std::env::var("A2A_WEBHOOK_ADDR").ok())
        .unwrap_or_else(|| "127.0.0.1:9000".into());
    let count = web::Data::new(AtomicU64::new(0));
    let server = HttpServer::new(move || {
        App::new()
            .app_data(count.clone())
            .app_data(web::PayloadConfig::new(MAX_BODY))
            .default_service(web::post().to(receive))
    })
    .workers(1)
    .bind(addr.as_str())?;
    for local in server.addrs() {
        println!("webhook receiver listening on http://{local}/ (POST any path)");
    }
    std::io::stdout().flush()?;
    server.run().await
}
