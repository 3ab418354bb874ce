//! Our server: the example echo agent (plus the streaming workload's agent), in-memory store,
//! one actix worker; optionally with three extensions doing real work, or ten no-op extensions,
//! activated on every request.

use a2a_examples::EchoAgent;
use a2a_runtime::A2aError;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{ExtensionHooks, MetadataExt, Reply, TimestampExtension};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::{AgentCard, AgentSkill, Part, SendMessageResponse};
use serde::{Deserialize, Serialize};

use crate::wire::{STREAM_CHUNKS, STREAM_TEXT};

/// The echo agent of the examples; `stream100` streams [`STREAM_CHUNKS`] artifact chunks instead,
/// yielding to the scheduler after each one.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BenchAgent;

impl AgentExecutor for BenchAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if ctx.text() != STREAM_TEXT {
            return EchoAgent.execute(ctx, events).await;
        }
        for i in 0..STREAM_CHUNKS {
            events
                .artifact_chunk(
                    "stream",
                    [Part::text(format!("chunk {i}"))],
                    i > 0,
                    i + 1 == STREAM_CHUNKS,
                )
                .await?;
            // Like the official server's agent (which must, see official.rs): an agent that
            // awaits anything between events lets the SSE writer run; `publish` on the in-memory
            // store never suspends, so without this the first event leaves after the last.
            tokio::task::yield_now().await;
        }
        events.complete().await
    }
}

/// A data-only extension (params in the card, nothing per request).
///
/// Tells the client which region the agent runs in.
#[a2a_runtime::a2a_extension(uri = "https://example.com/bench/ext/region/v1")]
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Region {
    region: String,
}

impl Default for Region {
    fn default() -> Self {
        Region {
            region: "loopback-1".into(),
        }
    }
}

/// An extension with request and response hooks: reads an optional trace id from the message
/// metadata and stamps the resulting task with it (or with `untraced`).
#[a2a_runtime::a2a_extension(uri = "https://example.com/bench/ext/trace/v1", metadata = String)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Trace {}

impl ExtensionHooks for Trace {
    type Activation = Option<String>;

    fn handle_request(
        &self,
        request: &mut a2a_runtime::protocol::A2aRequest,
        trace: &mut Option<String>,
        _ctx: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), A2aError> {
        if let Some(message) = request.message() {
            *trace = message
                .metadata_of::<Self>()
                .map_err(|e| A2aError::invalid_field("message.metadata", e.to_string()))?;
        }
        Ok(())
    }

    fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        trace: &mut Option<String>,
        _: &a2a_runtime::protocol::A2aRequest,
        _: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), A2aError> {
        if let Reply::SendMessage(SendMessageResponse::Task(t)) = reply {
            t.set_metadata_of::<Self>(&trace.clone().unwrap_or_else(|| "untraced".into()));
        }
        Ok(())
    }
}

/// Declares the no-op extensions of the `ours+10ext` server: each one's request, event and
/// (read-only) response hooks run on every request and change nothing, so the difference to
/// `ours` is what negotiating, activating and calling ten extensions costs. (They only count, so
/// they observe results rather than handle them: `handle_response` may change a result, which
/// then cannot share the encoding the store made.)
macro_rules! noop_extensions {
    ($($name:ident $uri:tt),* $(,)?) => {
        $(
            /// A no-op extension of the ten-extension load.
            #[a2a_runtime::a2a_extension(uri = $uri)]
            #[derive(Clone, Debug, Default, Serialize, Deserialize)]
            struct $name {}

            impl ExtensionHooks for $name {
                type Activation = u32;

                fn handle_request(
                    &self,
                    request: &mut a2a_runtime::protocol::A2aRequest,
                    seen: &mut u32,
                    _ctx: &a2a_runtime::extension::RequestContext,
                ) -> Result<(), A2aError> {
                    *seen += u32::from(request.message().is_some());
                    Ok(())
                }

                fn observe_response(&self, _reply: &Reply<'_>, seen: &mut u32, _: &a2a_runtime::protocol::A2aRequest, _: &a2a_runtime::extension::RequestContext) -> Result<(), A2aError> {
                    *seen += 1;
                    Ok(())
                }

                fn handle_event(
                    &self,
                    _event: &mut a2a_runtime::types::StreamResponse,
                    seen: &mut u32,
                ) -> Result<(), A2aError> {
                    *seen += 1;
                    Ok(())
                }
            }
        )*

        /// The URIs the `ours+10ext` load sends in `A2A-Extensions`.
        pub(crate) const NOOP_EXTENSIONS: [&str; 10] = [$($uri),*];

        fn with_noop_extensions(builder: a2a_runtime::server::A2aServerBuilder) -> a2a_runtime::server::A2aServerBuilder {
            builder $(.extension($name::default()))*
        }
    };
}

noop_extensions!(
    Noop0 "https://example.com/bench/ext/noop0/v1",
    Noop1 "https://example.com/bench/ext/noop1/v1",
    Noop2 "https://example.com/bench/ext/noop2/v1",
    Noop3 "https://example.com/bench/ext/noop3/v1",
    Noop4 "https://example.com/bench/ext/noop4/v1",
    Noop5 "https://example.com/bench/ext/noop5/v1",
    Noop6 "https://example.com/bench/ext/noop6/v1",
    Noop7 "https://example.com/bench/ext/noop7/v1",
    Noop8 "https://example.com/bench/ext/noop8/v1",
    Noop9 "https://example.com/bench/ext/noop9/v1",
);

/// Which extensions a server of ours has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Extensions {
    /// None.
    None,
    /// Timestamp, Region, Trace ([`EXTENSIONS`]).
    Three,
    /// Ten no-op extensions ([`NOOP_EXTENSIONS`]).
    TenNoop,
    /// No extension; the bearer-token authenticator, accepting [`BEARER`].
    Bearer,
    /// No extension; the JWT authenticator, accepting [`JWT`] (ES256, key pinned).
    Jwt,
}

/// The token of `ours+bearer`.
pub(crate) const BEARER: &str = "bench-token-0123456789abcdef";

/// The token of `ours+jwt`: `sub` bench, expires in 2100, signed with the test key
/// `a2a-runtime/tests/data/p256.pem` (kid `bench-1`).
pub(crate) const JWT: &str = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImJlbmNoLTEiLCJ0eXAiOiJKV1QifQ.eyJzdWIiOiJiZW5jaCIsImlzcyI6Imh0dHBzOi8vaXNzdWVyLmJlbmNoIiwiYXVkIjoiYTJhLWJlbmNoIiwiZXhwIjo0MTAyNDQ0ODAwLCJpYXQiOjE3NjcyMjU2MDB9.Ypzasv9oM5-xDPglbyv24CMa1BIyUPyK6CdUP2LohXS73Ca6xio-YP9OhTQY58VmQ0OjEjY2pykLGfCsHfqaww";

/// The URIs the `ours+3ext` load sends in `A2A-Extensions`.
pub(crate) const EXTENSIONS: [&str; 3] = [
    "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1",
    "https://example.com/bench/ext/region/v1",
    "https://example.com/bench/ext/trace/v1",
];

/// The card (the official server's and the floor's say the same).
pub(crate) fn card() -> AgentCard {
    AgentCard {
        name: "bench echo agent".into(),
        description:
            "Echoes the text of each message as an artifact; 'stream100' streams 100 chunks.".into(),
        version: "1.0.0".into(),
        skills: vec![AgentSkill {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Repeats the message back as an artifact".into(),
            tags: vec!["echo".into(), "bench".into()],
            examples: vec!["hello".into()],
            ..AgentSkill::default()
        }],
        ..AgentCard::default()
    }
}

/// Builds the server (with `extensions`; keeping `retain` finished tasks when given, else the
/// runtime's default; with the gRPC binding on 127.0.0.1:`grpc` when given).
pub(crate) fn server(
    extensions: Extensions,
    retain: Option<usize>,
    grpc: Option<u16>,
) -> Result<A2aServer, String> {
    let mut builder = A2aServer::builder()
        .card(card())
        .executor(BenchAgent)
        .workers(1)
        .linked_extensions(false);
    if let Some(n) = retain {
        builder = builder.retain_finished_tasks(n);
    }
    if let Some(port) = grpc {
        builder = builder.grpc_addr(format!("127.0.0.1:{port}"));
    }
    match extensions {
        Extensions::None => {}
        Extensions::Three => {
            builder = builder
                .extension(TimestampExtension::default())
                .extension(Region::default())
                .extension(Trace::default());
        }
        Extensions::TenNoop => builder = with_noop_extensions(builder),
        Extensions::Bearer => {
            builder = builder
                .authenticator(a2a_runtime::auth::StaticTokens::bearer().token("bench", BEARER));
        }
        Extensions::Jwt => {
            use a2a_runtime::auth::jwt::{Algorithm, JwtAuthenticator};
            let key = Algorithm::Es256
                .public_key_pem(include_bytes!(
                    "../../../a2a-runtime/tests/data/p256.pub.pem"
                ))
                .map_err(|e| e.to_string())?;
            builder = builder.authenticator(
                JwtAuthenticator::pinned(key, Some("bench-1".into()))
                    .issuer("https://issuer.bench")
                    .audience("a2a-bench"),
            );
        }
    }
    builder.build().map_err(|e| e.to_string())
}

/// Serves on 127.0.0.1:`port` until killed; with `grpc`, the gRPC binding on 127.0.0.1:`grpc` too
/// (on the same single-threaded runtime as the actix worker's accept loop).
pub(crate) fn serve(
    port: u16,
    extensions: Extensions,
    retain: Option<usize>,
    grpc: Option<u16>,
) -> Result<(), String> {
    let server = server(extensions, retain, grpc)?;
    actix_web::rt::System::new()
        .block_on(async move { server.start(("127.0.0.1", port)).await?.wait().await })
        .map_err(|e| e.to_string())
}
