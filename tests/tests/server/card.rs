//! The agent card over real HTTP: caching headers and conditional requests (#108), interfaces
//! that are really served (#96, #105), GetExtendedAgentCard (#67, #68), and mounting the server
//! into a user's actix-web App beside the user's own routes.

use a2a_runtime::server::A2aServer;
use a2a_runtime::test::*;
use a2a_runtime::types::AgentSkill;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use actix_web::{App, HttpServer, web};
use serde_json::{Value, json};

const CARD: &str = "/.well-known/agent-card.json";

/// #108: Cache-Control max-age, a quoted ETag and Last-Modified; If-None-Match and
/// If-Modified-Since revalidate to 304.
#[tokio::test]
async fn agent_card_caching_headers_and_revalidation_108() {
    let (server, _control) = scripted().await;
    let reply = server.get(CARD).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.media_type(), "application/json");
    let cc = reply.header("cache-control").expect("Cache-Control");
    let max_age: u64 = cc
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age="))
        .expect("max-age")
        .parse()
        .unwrap();
    assert!(max_age > 0, "{cc}");
    let etag = reply.header("etag").expect("ETag").to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let last_modified = reply
        .header("last-modified")
        .expect("Last-Modified")
        .to_owned();
    let card = reply.json();
    assert_eq!(card["name"], "scripted");

    let conditional = |name: &'static str, value: String| {
        let req = server
            .http()
            .get(format!("{}{CARD}", server.url()))
            .header(name, value);
        server.send(req)
    };
    let hit = conditional("if-none-match", etag.clone()).await;
    assert_eq!(hit.status, 304);
    assert!(hit.text.is_empty());
    assert_eq!(hit.header("etag"), Some(etag.as_str()));
    assert_eq!(
        conditional("if-none-match", format!("\"x\", W/{etag}"))
            .await
            .status,
        304
    );
    assert_eq!(
        conditional("if-none-match", "\"other\"".into())
            .await
            .status,
        200
    );
    assert_eq!(
        conditional("if-modified-since", last_modified).await.status,
        304
    );
    let old = "Mon, 01 Jan 2001 00:00:00 GMT".to_owned();
    let miss = conditional("if-modified-since", old).await;
    assert_eq!(miss.status, 200);
    assert_eq!(miss.json(), card, "the same card");
}

/// Joins an interface URL and a REST path.
fn join(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

/// #96 #105: every binding is declared with protocolVersion 1.0, and each declared URL really
/// serves its binding (checked by sending a message to it).
async fn assert_interfaces_served(server: &TestServer, card_path: &str) -> Vec<String> {
    let card = server.get(card_path).await.json();
    let interfaces = card["supportedInterfaces"].as_array().unwrap().clone();
    let bindings: Vec<&str> = interfaces
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON"], "{card}");
    let mut urls = Vec::new();
    for i in &interfaces {
        assert_eq!(i["protocolVersion"], "1.0");
        let url = i["url"].as_str().unwrap().to_owned();
        assert!(url.starts_with(server.url()), "{url} is on this server");
        let reply = if i["protocolBinding"] == "JSONRPC" {
            let env =
                json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": msg("hi")});
            server
                .send(
                    server
                        .http()
                        .post(&url)
                        .header("content-type", "application/json")
                        .header("A2A-Version", "1.0")
                        .body(env.to_string()),
                )
                .await
        } else {
            server
                .send(
                    server
                        .http()
                        .post(join(&url, "/message:send"))
                        .header("content-type", "application/a2a+json")
                        .header("A2A-Version", "1.0")
                        .body(msg("hi").to_string()),
                )
                .await
        };
        assert_eq!(reply.status, 200, "{url}: {reply:?}");
        let body = reply.json();
        let result = if i["protocolBinding"] == "JSONRPC" {
            body["result"].clone()
        } else {
            body
        };
        assert_eq!(text(&task_of(&result)["artifacts"][0]), "echo: hi", "{url}");
        urls.push(url);
    }
    urls
}

#[tokio::test]
async fn supported_interfaces_list_the_urls_served_96_105() {
    let (server, _control) = scripted().await;
    assert_interfaces_served(&server, CARD).await;

    let (agent, _control) = script_agent();
    let custom = TestServer::start(
        A2aServer::builder()
            .card(agent_card("paths"))
            .executor(agent)
            .jsonrpc_path("/rpc")
            .rest_path("/api"),
    )
    .await;
    let urls = assert_interfaces_served(&custom, CARD).await;
    assert_eq!(
        urls,
        [
            format!("{}/rpc", custom.url()),
            format!("{}/api", custom.url())
        ]
    );
    // Nothing is served where the card does not point.
    let stray = custom
        .post_raw(
            "/message:send",
            "application/a2a+json",
            msg("hi").to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(stray.status, 404);
}

/// #67: GetExtendedAgentCard without the capability is UnsupportedOperation.
#[tokio::test]
async fn extended_card_not_declared_is_unsupported_67() {
    let (server, _control) = scripted().await;
    let card: Value = server.get(CARD).await.json();
    assert!(card["capabilities"].get("extendedAgentCard").is_none());
    for binding in Binding::BOTH {
        server
            .err(binding, "GetExtendedAgentCard", json!({}))
            .await
            .assert_unsupported();
    }
}

/// #68: declared but not configured is ExtendedAgentCardNotConfigured (-32007 / 400).
#[tokio::test]
async fn extended_card_declared_but_missing_68() {
    let (agent, _control) = script_agent();
    let mut c = agent_card("declares");
    c.capabilities.extended_agent_card = Some(true);
    let server = TestServer::start(A2aServer::builder().card(c).executor(agent)).await;
    for binding in Binding::BOTH {
        server
            .err(binding, "GetExtendedAgentCard", json!({}))
            .await
            .assert_a2a(
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
                -32007,
                400,
                "FAILED_PRECONDITION",
            );
    }
}

/// §3.8: a configured extended card is declared in the public card and returned on both bindings
/// (JSON-RPC also without `params`).
#[tokio::test]
async fn extended_card_configured_is_returned() {
    let (agent, _control) = script_agent();
    let mut extended = agent_card("scripted (extended)");
    extended.skills.push(AgentSkill {
        id: "secret".into(),
        name: "Secret skill".into(),
        description: "Only for known callers".into(),
        tags: vec!["private".into()],
        ..AgentSkill::default()
    });
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("scripted"))
            .extended_card(extended)
            .authenticator(a2a_runtime::auth::StaticTokens::bearer().token("known", "tok-known"))
            .executor(agent),
    )
    .await;
    let public: Value = server.get(CARD).await.json();
    assert_eq!(public["capabilities"]["extendedAgentCard"], true);
    assert!(public.get("skills").is_none() || public["skills"] == json!([]));
    // For authenticated callers only (the other operations are covered by the auth tests).
    for binding in Binding::BOTH {
        let err = server.err(binding, "GetExtendedAgentCard", json!({})).await;
        assert_eq!(err.http, 401, "{:?}", err.body);
        assert_eq!(err.reason(), Some("UNAUTHENTICATED"));
    }
    let rest = server
        .send(
            server
                .http()
                .get(format!("{}/extendedAgentCard", server.url()))
                .header("A2A-Version", "1.0")
                .header("Authorization", "Bearer tok-known"),
        )
        .await;
    assert_eq!(rest.status, 200, "{rest:?}");
    assert_eq!(rest.json()["name"], "scripted (extended)");
    assert_eq!(rest.json()["skills"][0]["id"], "secret");
    let with_token = |envelope: Value| {
        server
            .http()
            .post(format!("{}/", server.url()))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .header("Authorization", "Bearer tok-known")
            .body(envelope.to_string())
    };
    let rpc = server
        .send(with_token(
            json!({"jsonrpc": "2.0", "id": 2, "method": "GetExtendedAgentCard", "params": {}}),
        ))
        .await
        .json();
    assert_eq!(rpc["result"]["name"], "scripted (extended)", "{rpc}");
    let no_params = server
        .send(with_token(
            json!({"jsonrpc": "2.0", "id": 3, "method": "GetExtendedAgentCard"}),
        ))
        .await
        .json();
    assert_eq!(
        no_params["result"]["name"], "scripted (extended)",
        "{no_params}"
    );
}

/// README "mount": a user App with `web::scope("/a2a").configure(server.config())`,
/// `.configure(server.well_known())` and its own `/health` route, on `HttpServer` — everything
/// answers, and the card's interfaces point under `/a2a`.
#[tokio::test]
async fn mounting_into_a_user_app() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (agent, _control) = script_agent();
    let a2a = A2aServer::builder()
        .card(agent_card("mounted"))
        .executor(agent)
        .url(format!("http://{addr}/a2a"))
        .build()
        .unwrap();
    let (config, well_known) = (a2a.config(), a2a.well_known());
    let running = HttpServer::new(move || {
        App::new()
            .configure(well_known.clone())
            .service(web::scope("/a2a").configure(config.clone()))
            .route("/health", web::get().to(|| async { "ok" }))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = running.handle();
    tokio::spawn(running);
    let server = TestServer::attached(format!("http://{addr}"), handle);

    let health = server.get("/health").await;
    assert_eq!((health.status, health.text.as_str()), (200, "ok"));
    let urls = assert_interfaces_served(&server, CARD).await;
    assert!(
        urls.iter()
            .all(|u| u.starts_with(&format!("http://{addr}/a2a"))),
        "{urls:?}"
    );
    assert_interfaces_served(&server, &format!("/a2a{CARD}")).await;

    let reply = server
        .post_raw(
            "/a2a/message:send",
            "application/a2a+json",
            msg("hi").to_string(),
            Some("1.0"),
        )
        .await;
    let task = task_of(&reply.json()).clone();
    let got = server.get(&format!("/a2a/tasks/{}", id(&task))).await;
    assert_eq!(got.status, 200);
    let rpc = server
        .post_raw(
            "/a2a",
            "application/json",
            json!({"jsonrpc": "2.0", "id": "x", "method": "GetTask", "params": {"id": id(&task)}})
                .to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(rpc.json()["result"]["id"], id(&task).as_str());
    // The A2A routes are not at the root.
    let root = server
        .post_raw(
            "/message:send",
            "application/a2a+json",
            msg("hi").to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(root.status, 404);
}
