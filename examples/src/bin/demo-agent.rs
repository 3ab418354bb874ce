//! The README's run command: the demo agent (echo + streaming + multi-turn) on
//! http://127.0.0.1:8080 (`--addr HOST:PORT` or `A2A_ADDR` to change it), over JSON-RPC and
//! HTTP+JSON, keeping its tasks in the SQLite file `data/demo-agent.db` (`--store URL` or
//! `A2A_STORE` to change it: `memory:`, `sqlite://path`, and with feature `postgres`,
//! `postgres://…`).
//!
//! With feature `full` (or each alone): push notifications (`push`; the URL guard on: webhooks
//! must be public http(s) URLs unless `--allow-local-webhooks`), the gRPC binding on
//! 127.0.0.1:8081 (`grpc`; `--grpc-addr HOST:PORT` or `A2A_GRPC_ADDR`), PostgreSQL
//! (`postgres`) and the OpenAPI document at `/openapi.json` (`openapi`). On PostgreSQL, many
//! demo agents share the database: any of them serves any task, and the tasks of one that died
//! end FAILED after its leases expire (`A2A_LEASE_TTL_MS`, default 20,000).
//!
//! Recovery is on ([`Recovery::default`](a2a_runtime::core::Recovery)): after a crash, the
//! tasks the dead process was running end FAILED, saying the agent stopped before finishing
//! (on SQLite at once at startup), and a task whose agent publishes nothing for 15 minutes
//! ends FAILED too (`A2A_IDLE_WORKING_S` to change it, 0 for no bound).
//!
//! Open to anyone by default. `--auth-token NAME=TOKEN` (repeatable) or
//! `A2A_AUTH_TOKENS=NAME=TOKEN,NAME=TOKEN` requires `Authorization: Bearer TOKEN` on every call;
//! each name is a principal with its own tasks.
//!
//! Each caller (each principal; each address without authentication) and each tenant is held
//! to a fair share ([`demo_quotas`]): a flooding caller is answered 429 with `Retry-After`,
//! and the others keep being served. `A2A_QUOTAS=off` lifts the limits (for load tests).

use a2a_examples::{DemoAgent, Locale, demo_card, demo_quotas};
use a2a_runtime::auth::StaticTokens;
use a2a_runtime::extension::TimestampExtension;
#[cfg(feature = "push")]
use a2a_runtime::push::PushConfig;
use a2a_runtime::server::A2aServer;

/// The `NAME=TOKEN` pairs of `--auth-token` and `A2A_AUTH_TOKENS`.
fn auth_tokens(args: &[String]) -> std::io::Result<Vec<(String, String)>> {
    let mut specs: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(_, a)| *a == "--auth-token")
        .map(|(i, _)| args.get(i + 1).cloned().unwrap_or_default())
        .collect();
    if let Ok(env) = std::env::var("A2A_AUTH_TOKENS") {
        specs.extend(
            env.split(',')
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned),
        );
    }
    specs
        .iter()
        .map(|spec| match spec.trim().split_once('=') {
            Some((name, token)) if !name.is_empty() && !token.is_empty() => {
                Ok((name.to_owned(), token.to_owned()))
            }
            _ => Err(std::io::Error::other(format!(
                "--auth-token / A2A_AUTH_TOKENS: expected NAME=TOKEN, got {spec:?}"
            ))),
        })
        .collect()
}

/// What `--help` prints.
const USAGE: &str = "\
usage: demo-agent [--addr HOST:PORT] [--grpc-addr HOST:PORT] [--store URL]
                  [--auth-token NAME=TOKEN]... [--allow-local-webhooks] [--v0-3-card]

The demo agent (echo; `stream`, `wait` and `ask` by the message's text) over JSON-RPC and
HTTP+JSON (and with feature `full`: gRPC, push notifications, PostgreSQL, OpenAPI), keeping its
tasks in a store.

  --addr HOST:PORT       HTTP listener (A2A_ADDR; default 127.0.0.1:8080)
  --grpc-addr HOST:PORT  gRPC listener (A2A_GRPC_ADDR; default 127.0.0.1:8081; feature grpc)
  --store URL            memory:, sqlite://PATH or postgres://... (A2A_STORE;
                         default sqlite://data/demo-agent.db; postgres: feature postgres)
  --auth-token NAME=TOKEN
                         require `Authorization: Bearer TOKEN`; NAME is the principal
                         (repeatable; A2A_AUTH_TOKENS=NAME=TOKEN,NAME=TOKEN)
  --allow-local-webhooks push to local and private addresses too, for development
                         (A2A_ALLOW_LOCAL_WEBHOOKS=1; feature push)
  --v0-3-card            add v0.3's members to the agent card, for v0.3 clients that
                         discover the agent from it (A2A_V0_3_CARD=1; v0.3 requests are
                         served either way)
  --two-agents           serve two agents, echo and greeter, below /agents/ and
                         list them at /.well-known/ai-catalog.json
  -h, --help             print this and exit
  -V, --version          print the version and exit

Environment: A2A_LEASE_TTL_MS (PostgreSQL: lease of a running task, default 20000),
A2A_IDLE_WORKING_S, A2A_QUOTAS=off, OTEL_EXPORTER_OTLP_ENDPOINT (with the otel feature),
RUST_LOG (default info).
";

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    a2a_examples::answer_help_or_version("demo-agent", USAGE);
    #[cfg(feature = "otel")]
    let otel = otlp()?;
    #[cfg(not(feature = "otel"))]
    a2a_runtime::log::init();
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str, env: &str, default: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
            .or_else(|| std::env::var(env).ok())
            .unwrap_or_else(|| default.into())
    };
    let addr = flag("--addr", "A2A_ADDR", "127.0.0.1:8080");
    let grpc_addr = flag("--grpc-addr", "A2A_GRPC_ADDR", "127.0.0.1:8081");
    let store_url = flag("--store", "A2A_STORE", "sqlite://data/demo-agent.db");
    let tokens = auth_tokens(&args)?;
    let local_webhooks = args.iter().any(|a| a == "--allow-local-webhooks")
        || matches!(
            std::env::var("A2A_ALLOW_LOCAL_WEBHOOKS").as_deref(),
            Ok("1" | "true" | "yes")
        );
    #[cfg(not(feature = "grpc"))]
    let _ = grpc_addr;
    let stores = a2a_runtime::store::connect(&store_url)
        .await
        .map_err(std::io::Error::other)?;
    println!("Tasks are kept in {}", stores.location);
    if args.iter().any(|a| a == "--two-agents") {
        return a2a_examples::agents::start(&addr, &grpc_addr, stores)
            .await?
            .wait()
            .await;
    }
    let mut cluster = a2a_runtime::core::ClusterOptions::default();
    if let Ok(ms) = std::env::var("A2A_LEASE_TTL_MS") {
        let ms: u64 = ms.parse().map_err(|_| {
            std::io::Error::other(format!("A2A_LEASE_TTL_MS: {ms:?} is not a number"))
        })?;
        cluster.lease_ttl = std::time::Duration::from_millis(ms.max(30));
        cluster.check_every = cluster.lease_ttl / 2;
    }
    let mut recovery = a2a_runtime::core::Recovery::default();
    if let Ok(s) = std::env::var("A2A_IDLE_WORKING_S") {
        let s: u64 = s.parse().map_err(|_| {
            std::io::Error::other(format!("A2A_IDLE_WORKING_S: {s:?} is not a number"))
        })?;
        recovery.idle_working = (s > 0).then(|| std::time::Duration::from_secs(s));
    }
    let mut builder = A2aServer::builder()
        .stores(stores)
        .cluster_options(cluster)
        .recovery(recovery)
        .card(demo_card())
        .executor(DemoAgent)
        .extension(TimestampExtension::default())
        .extension(Locale::default())
        .v0_3_card(
            args.iter().any(|a| a == "--v0-3-card")
                || matches!(
                    std::env::var("A2A_V0_3_CARD").as_deref(),
                    Ok("1" | "true" | "yes")
                ),
        );
    #[cfg(feature = "push")]
    {
        builder = builder.push(PushConfig::new().allow_private_networks(local_webhooks));
    }
    #[cfg(feature = "grpc")]
    {
        builder = builder.grpc_addr(grpc_addr);
    }
    #[cfg(feature = "openapi")]
    {
        builder = builder.openapi("/openapi.json");
    }
    if std::env::var("A2A_QUOTAS").as_deref() != Ok("off") {
        builder = builder.quotas(demo_quotas());
    }
    if !tokens.is_empty() {
        let mut bearer = StaticTokens::bearer();
        for (name, token) in &tokens {
            bearer = bearer.token(name.as_str(), token.as_str());
        }
        builder = builder.authenticator(bearer);
    }
    let server = builder.build().map_err(std::io::Error::other)?;
    let running = server.start(addr.as_str()).await?;
    let url = running.url();
    println!("A2A demo agent serving on {url}  (agent card: {url}/.well-known/agent-card.json)");
    #[cfg(feature = "openapi")]
    println!("The HTTP+JSON binding's OpenAPI document: {url}/openapi.json");
    #[cfg(feature = "push")]
    if local_webhooks {
        println!(
            "WARNING: webhooks to local and private addresses are allowed \
             (--allow-local-webhooks): for development only, never on a shared network."
        );
    }
    #[cfg(not(feature = "push"))]
    if local_webhooks {
        println!(
            "--allow-local-webhooks: push notifications are not built in (feature push or full)."
        );
    }
    // In the curl commands below: the header, when tokens are required.
    let auth = if tokens.is_empty() {
        println!(
            "Authentication: none. Anyone who can reach this address can use the agent \
             (require bearer tokens with --auth-token NAME=TOKEN or A2A_AUTH_TOKENS)."
        );
        ""
    } else {
        let names: Vec<&str> = tokens.iter().map(|(n, _)| n.as_str()).collect();
        println!(
            "Authentication: bearer tokens required, for {} (the commands below read the token \
             from $A2A_TOKEN).",
            names.join(", ")
        );
        r#" -H "Authorization: Bearer $A2A_TOKEN""#
    };
    println!();
    println!("Send a message (JSON-RPC):");
    println!(
        r#"  curl -s {url}/{auth} -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d '{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m1","role":"ROLE_USER","parts":[{{"text":"hello"}}]}}}}}}'"#
    );
    println!("Stream a reply (HTTP+JSON, server-sent events):");
    println!(
        r#"  curl -sN {url}/message:stream{auth} -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -d '{{"message":{{"messageId":"m2","role":"ROLE_USER","parts":[{{"text":"stream one two three"}}]}}}}'"#
    );
    println!(
        "Activate the Timestamp and Locale extensions (see the A2A-Extensions response header):"
    );
    println!(
        r#"  curl -si {url}/message:send{auth} -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -H 'A2A-Extensions: https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1, https://example.com/ext/locale/v1' -d '{{"message":{{"messageId":"m3","role":"ROLE_USER","parts":[{{"text":"hello"}}],"metadata":{{"https://example.com/ext/locale/v1":"fr"}}}}}}'"#
    );
    #[cfg(feature = "push")]
    if local_webhooks {
        println!(
            "Get every event POSTed to a local webhook (start one first: cargo run -p a2a-examples --bin webhook-receiver):"
        );
        println!(
            r#"  curl -s {url}/message:send{auth} -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -d '{{"message":{{"messageId":"m5","role":"ROLE_USER","parts":[{{"text":"hello"}}]}},"configuration":{{"taskPushNotificationConfig":{{"url":"http://127.0.0.1:9000/hook","token":"my-token"}}}}}}'"#
        );
    } else {
        println!(
            "Get every event POSTed to your webhook (a public http(s) URL; the URL guard refuses local and private addresses, see --allow-local-webhooks):"
        );
        println!(
            r#"  curl -s {url}/message:send{auth} -H 'Content-Type: application/a2a+json' -H 'A2A-Version: 1.0' -d '{{"message":{{"messageId":"m4","role":"ROLE_USER","parts":[{{"text":"hello"}}]}},"configuration":{{"taskPushNotificationConfig":{{"url":"https://receiver.example.com/hook","token":"my-token"}}}}}}'"#
        );
    }
    #[cfg(feature = "grpc")]
    if let Some(grpc) = running.grpc_addr() {
        println!("The same over gRPC (lf.a2a.v1.A2AService on {grpc}, plain HTTP/2):");
        println!(
            r#"  grpcurl -plaintext -import-path a2a-runtime/proto -proto a2a.proto -H 'a2a-version: 1.0'{auth} -d '{{"message":{{"messageId":"m4","role":"ROLE_USER","parts":[{{"text":"hello"}}]}}}}' {grpc} lf.a2a.v1.A2AService/SendMessage"#
        );
    }
    println!("Press Ctrl-C to stop.");
    let served = running.wait().await;
    #[cfg(feature = "otel")]
    if let Some(otel) = otel {
        // The spans still buffered.
        otel.shutdown().map_err(std::io::Error::other)?;
    }
    served
}

/// With `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set: the log
/// and the spans exported over OTLP, configured by the `OTEL_*` variables. Else the log alone.
#[cfg(feature = "otel")]
fn otlp() -> std::io::Result<Option<a2a_runtime::otel::Otel>> {
    let set = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
    if !set {
        a2a_runtime::log::init();
        return Ok(None);
    }
    let otel = a2a_runtime::otel::init().map_err(std::io::Error::other)?;
    println!("Spans are exported over OTLP (see OTEL_EXPORTER_OTLP_ENDPOINT)");
    Ok(Some(otel))
}
