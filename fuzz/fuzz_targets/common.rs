//! An in-process server (the bindings' whole request path, no socket) shared by the HTTP targets.

use std::sync::OnceLock;

use a2a_runtime::A2aError;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::{AgentCard, Artifact, Part};

pub struct Echo;

impl AgentExecutor for Echo {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.artifact(Artifact::new([Part::text(ctx.text())])).await?;
        events.complete().await
    }
}

pub fn server() -> &'static A2aServer {
    static SERVER: OnceLock<A2aServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let card = AgentCard {
            name: "fuzz".into(),
            description: "fuzz target".into(),
            version: "1.0.0".into(),
            ..AgentCard::default()
        };
        A2aServer::builder()
            .card(card)
            .executor(Echo)
            .linked_extensions(false)
            .extension(a2a_runtime::extension::TimestampExtension::default())
            .build()
            .expect("the fuzz server builds")
    })
}

/// Runs `req` through the server's routes; returns the status and the body. A 500 is a bug
/// (bad input must get a 4xx or a JSON-RPC error): it panics.
pub fn call(req: actix_web::test::TestRequest) -> (u16, Vec<u8>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let app = actix_web::test::init_service(
            actix_web::App::new().configure(server().config()),
        )
        .await;
        let resp = actix_web::test::call_service(&app, req.to_request()).await;
        let status = resp.status().as_u16();
        let body = actix_web::test::read_body(resp).await.to_vec();
        assert_ne!(status, 500, "500 for bad input: {}", String::from_utf8_lossy(&body));
        (status, body)
    })
}
