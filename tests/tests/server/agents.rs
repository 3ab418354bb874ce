//! Several agents in one server (#50): each at its own path on JSON-RPC and HTTP+JSON and by
//! tenant on gRPC, over one store (tasks partitioned by agent), one listener and one shutdown;
//! per-agent cards, extensions and authentication; the AI Catalog and a client resolving an
//! agent through it.

use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::auth::StaticTokens;
use a2a_runtime::client::{A2aClient, ClientOptions, SendOptions, SendResult};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{ExtensionHooks, ExtensionMethod, MethodEntry};
use a2a_runtime::server::{
    A2aServer, CatalogEntries, Listing, MultiAgentServer, MultiAgentServerBuilder, RunningServer,
};
use a2a_runtime::test::*;
use a2a_runtime::types::{AiCatalog, Artifact, CatalogHost, Part, ProtocolBinding};
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const TOKEN: &str = "ops-s3cret";
const SHOUT: &str = "https://test.example/agents/shout/v1";

/// An extension with a method, served by one agent only.
#[a2a_extension(uri = "https://test.example/agents/shout/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Shout {}

#[derive(Debug, Serialize, Deserialize)]
struct ShoutParams {
    say: String,
}

struct ShoutMethod;

impl ExtensionMethod for ShoutMethod {
    type Extension = Shout;
    const METHOD: &'static str = "shout/say";
    const REST_PATH: &'static str = "/extensions/shout/v1/say";
    type Params = ShoutParams;
    type Result = String;
}

impl ExtensionHooks for Shout {
    type Activation = ();

    fn methods(&self) -> Vec<MethodEntry> {
        vec![MethodEntry::new::<ShoutMethod, _, _>(
            |_ctx, p: ShoutParams| async move { Ok(p.say.to_uppercase()) },
        )]
    }
}

/// Answers with its own name, the agent the request addressed and the text.
struct Named(&'static str);

impl AgentExecutor for Named {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let agent = ctx.request.agent.as_deref().unwrap_or("-").to_owned();
        let text = format!("{} ({agent}): {}", self.0, ctx.text());
        events.artifact(Artifact::new([Part::text(text)])).await?;
        events.complete().await
    }
}

/// Three agents: `alpha` (the shout extension), `beta`, and `ops` (bearer tokens, listed to
/// authenticated callers only); gRPC on.
fn three() -> MultiAgentServerBuilder {
    MultiAgentServer::builder()
        .agent(
            "alpha",
            A2aServer::builder()
                .card(agent_card("Alpha"))
                .executor(Named("alpha"))
                .linked_extensions(false)
                .extension(Shout::default()),
        )
        .agent(
            "beta",
            A2aServer::builder()
                .card(agent_card("Beta"))
                .executor(Named("beta")),
        )
        .agent_listed(
            "ops",
            A2aServer::builder()
                .card(agent_card("Ops"))
                .executor(Named("ops"))
                .authenticator(StaticTokens::bearer().token("carol", TOKEN)),
            Listing::Authenticated,
        )
        .workers(1)
        .grpc_addr("127.0.0.1:0")
}

async fn start(builder: MultiAgentServerBuilder) -> RunningServer {
    let server = builder.build().unwrap();
    within("start", server.start("127.0.0.1:0")).await.unwrap()
}

/// The agent `name` of `running`, over both HTTP bindings (dropping it leaves the server up).
fn agent(running: &RunningServer, name: &str) -> TestServer {
    TestServer::remote(format!("{}/agents/{name}", running.url()))
}

/// A client of the agent `name` from its card, on `binding`.
async fn client(running: &RunningServer, name: &str, binding: ProtocolBinding) -> A2aClient {
    let options = ClientOptions {
        preferred_binding: Some(binding.clone()),
        headers: vec![("authorization".into(), format!("Bearer {TOKEN}"))],
        ..ClientOptions::default()
    };
    let url = format!("{}/agents/{name}", running.url());
    let c = within("connect", A2aClient::new(url.as_str(), options))
        .await
        .unwrap();
    assert_eq!(c.interface().protocol_binding, binding);
    c
}

fn task_id(sent: &SendResult) -> String {
    match sent {
        SendResult::Task(t) => t.id.to_string(),
        other => panic!("expected a task: {other:?}"),
    }
}

/// Each agent's card is its own, served below its path, its interfaces pointing at its own
/// addresses (gRPC: the listener, with the agent's name as the tenant).
#[tokio::test]
async fn each_agent_has_its_own_card_pointing_at_its_own_path() {
    let running = start(three()).await;
    let grpc = running.grpc_addr().unwrap().to_string();
    for (name, title) in [("alpha", "Alpha"), ("beta", "Beta"), ("ops", "Ops")] {
        let card = agent(&running, name)
            .get("/.well-known/agent-card.json")
            .await
            .json();
        assert_eq!(card["name"], title);
        let base = format!("{}/agents/{name}", running.url());
        let interfaces = card["supportedInterfaces"].as_array().unwrap();
        let find = |binding: &str| {
            interfaces
                .iter()
                .find(|i| i["protocolBinding"] == binding)
                .unwrap_or_else(|| panic!("{name}: no {binding} in {card}"))
        };
        assert_eq!(find("JSONRPC")["url"], base.as_str());
        assert_eq!(find("HTTP+JSON")["url"], base.as_str());
        assert_eq!(find("GRPC")["url"], grpc.as_str());
        assert_eq!(find("GRPC")["tenant"], name);
        let extensions = card["capabilities"]["extensions"].to_string();
        assert_eq!(extensions.contains(SHOUT), name == "alpha", "{name}");
        let secured = card["securityRequirements"]
            .as_array()
            .is_some_and(|r| !r.is_empty());
        assert_eq!(secured, name == "ops", "{name}: {card}");
    }
    // No one-agent card at the root: the catalog lists the agents.
    let root = TestServer::remote(running.url());
    assert_eq!(root.get("/.well-known/agent-card.json").await.status, 404);
    running.stop().await;
}

/// A task of one agent is that agent's on every binding, and not found through another: over
/// JSON-RPC, HTTP+JSON and gRPC, by id and in lists; two and three agents.
#[tokio::test]
async fn tasks_are_partitioned_by_agent_on_every_binding() {
    for count in [2, 3] {
        let mut builder = three();
        if count == 2 {
            builder = MultiAgentServer::builder()
                .agent(
                    "alpha",
                    A2aServer::builder()
                        .card(agent_card("Alpha"))
                        .executor(Named("alpha")),
                )
                .agent(
                    "beta",
                    A2aServer::builder()
                        .card(agent_card("Beta"))
                        .executor(Named("beta")),
                )
                .grpc_addr("127.0.0.1:0");
        }
        let running = start(builder).await;
        let alpha = agent(&running, "alpha");
        let beta = agent(&running, "beta");
        let task = alpha.send_task(Binding::JsonRpc, msg("one")).await;
        let id = id(&task);
        let text = task["artifacts"][0]["parts"][0]["text"].as_str().unwrap();
        assert_eq!(text, "alpha (alpha): one");
        for binding in Binding::BOTH {
            let got = alpha.ok(binding, "GetTask", json!({"id": id})).await;
            assert_eq!(got["id"], id.as_str());
            beta.err(binding, "GetTask", json!({"id": id}))
                .await
                .assert_task_not_found();
            let listed = beta.ok(binding, "ListTasks", json!({})).await;
            assert!(!listed.to_string().contains(&id), "{count}: {listed}");
            let listed = alpha.ok(binding, "ListTasks", json!({})).await;
            assert!(listed.to_string().contains(&id), "{count}: {listed}");
        }
        // gRPC: the same task through its agent, not found through the other.
        let alpha_grpc = client(&running, "alpha", ProtocolBinding::Grpc).await;
        let beta_grpc = client(&running, "beta", ProtocolBinding::Grpc).await;
        let got = alpha_grpc.get_task(&id, None).await.unwrap().into_inner();
        assert_eq!(got.id.to_string(), id);
        let err = beta_grpc.get_task(&id, None).await.unwrap_err();
        assert!(
            matches!(err.to_a2a_error(), A2aError::TaskNotFound { .. }),
            "{err}"
        );
        // A task made over gRPC is reachable over the agent's HTTP path.
        let sent = beta_grpc
            .send_message("two", SendOptions::default())
            .await
            .unwrap()
            .into_inner();
        let made = task_id(&sent);
        let got = beta.ok(Binding::Rest, "GetTask", json!({"id": made})).await;
        assert_eq!(text_of(&got), "beta (beta): two");
        alpha
            .err(Binding::Rest, "GetTask", json!({"id": made}))
            .await
            .assert_task_not_found();
        running.stop().await;
    }
}

fn text_of(task: &Value) -> String {
    text(&task["artifacts"][0])
}

/// An extension of one agent is unknown to the others: its method is not found there, and a
/// request asking for it activates nothing.
#[tokio::test]
async fn an_extension_of_one_agent_is_unknown_to_another() {
    let running = start(three()).await;
    let alpha = agent(&running, "alpha");
    let beta = agent(&running, "beta");
    let said = alpha
        .request(Binding::JsonRpc, "shout/say", json!({"say": "hi"}))
        .header("A2A-Extensions", SHOUT)
        .send()
        .await;
    assert_eq!(said.json()["result"], "HI", "{}", said.text);
    fn rest_say(server: &TestServer) -> Request<'_> {
        server
            .rest(
                reqwest::Method::POST,
                "/extensions/shout/v1/say",
                Some(json!({"say": "hi"})),
            )
            .header("A2A-Extensions", SHOUT)
    }
    let said = rest_say(&alpha).send().await;
    assert_eq!(said.status, 200, "{}", said.text);
    assert!(said.text.contains("HI"), "{}", said.text);
    let unknown = rest_say(&beta).send().await;
    assert_eq!(unknown.status, 404, "{}", unknown.text);
    let unknown = beta
        .request(Binding::JsonRpc, "shout/say", json!({"say": "hi"}))
        .header("A2A-Extensions", SHOUT)
        .send()
        .await;
    assert_eq!(unknown.json()["error"]["code"], -32601, "{}", unknown.text);
    async fn asked(server: &TestServer) -> Answer {
        server
            .request(Binding::Rest, "SendMessage", msg("x"))
            .header("A2A-Extensions", SHOUT)
            .send()
            .await
    }
    let on_alpha = asked(&alpha).await;
    assert_eq!(
        on_alpha.header_list("a2a-extensions").as_deref(),
        Some(SHOUT)
    );
    let on_beta = asked(&beta).await;
    assert_eq!(on_beta.status, 200, "{}", on_beta.text);
    assert_eq!(on_beta.header_list("a2a-extensions"), None);
    // Over gRPC too: asked for, the extension is activated by alpha only.
    let asking = SendOptions {
        headers: vec![("a2a-extensions".into(), SHOUT.into())],
        ..SendOptions::default()
    };
    for (name, active) in [("alpha", true), ("beta", false)] {
        let grpc = client(&running, name, ProtocolBinding::Grpc).await;
        let sent = grpc.send_message("x", asking.clone()).await.unwrap();
        let activated = sent.activated_extensions().iter().any(|u| u == SHOUT);
        assert_eq!(activated, active, "{name}");
    }
    running.stop().await;
}

/// Authentication is per agent: `ops` refuses a caller without its token on every binding,
/// the others serve anyone.
#[tokio::test]
async fn authentication_is_per_agent() {
    let running = start(three()).await;
    let ops = agent(&running, "ops");
    let beta = agent(&running, "beta");
    for binding in Binding::BOTH {
        let refused = ops.request(binding, "ListTasks", json!({})).send().await;
        assert_eq!(refused.status, 401, "{binding:?}: {}", refused.text);
        assert!(refused.header("www-authenticate").is_some(), "{binding:?}");
        let allowed = ops
            .request(binding, "ListTasks", json!({}))
            .header("Authorization", &format!("Bearer {TOKEN}"))
            .send()
            .await;
        assert!(
            allowed.text.contains("tasks"),
            "{binding:?}: {}",
            allowed.text
        );
        let open = beta.request(binding, "ListTasks", json!({})).send().await;
        assert!(open.text.contains("tasks"), "{binding:?}: {}", open.text);
    }
    // gRPC: the token reaches ops through the client's headers; without it, refused.
    let ops_grpc = client(&running, "ops", ProtocolBinding::Grpc).await;
    ops_grpc.list_tasks(Default::default()).await.unwrap();
    let anonymous = A2aClient::new(
        ops_grpc.card(),
        ClientOptions {
            preferred_binding: Some(ProtocolBinding::Grpc),
            ..ClientOptions::default()
        },
    )
    .await
    .unwrap();
    let err = anonymous.list_tasks(Default::default()).await.unwrap_err();
    assert!(
        matches!(err.to_a2a_error(), A2aError::Unauthenticated { .. }),
        "{err}"
    );
    running.stop().await;
}

/// The catalog: the format's required members, an entry per listed agent pointing at its card,
/// the authenticated agent listed only to a caller its authenticator accepts, the unlisted one
/// never; inline entries hold the cards.
#[tokio::test]
async fn the_ai_catalog_lists_what_the_caller_may_see() {
    let running = start(
        three().agent_listed(
            "hidden",
            A2aServer::builder()
                .card(agent_card("Hidden"))
                .executor(Named("hidden")),
            Listing::Unlisted,
        ),
    )
    .await;
    let root = TestServer::remote(running.url());
    let reply = root.get("/.well-known/ai-catalog.json").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.media_type(), "application/ai-catalog+json");
    let json = reply.json();
    assert_valid_catalog(&json);
    let ids: Vec<&str> = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["identifier"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["urn:air:127.0.0.1:a2a:alpha", "urn:air:127.0.0.1:a2a:beta"]
    );
    for entry in json["entries"].as_array().unwrap() {
        assert_eq!(entry["type"], "application/a2a-agent-card+json");
        let url = entry["url"].as_str().unwrap();
        let card: Value = root
            .http()
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let name = ids[0].rsplit(':').next().unwrap();
        assert!(card["name"].is_string(), "{url}: {card}");
        let _ = name;
    }
    // With ops's token: ops is listed too.
    let authed = root
        .send(
            root.http()
                .get(format!("{}/.well-known/ai-catalog.json", running.url()))
                .header("Authorization", format!("Bearer {TOKEN}")),
        )
        .await
        .json();
    assert_valid_catalog(&authed);
    assert_eq!(authed["entries"].as_array().unwrap().len(), 3, "{authed}");
    assert!(authed.to_string().contains("a2a:ops"));
    // A wrong token lists no more than no token.
    let wrong = root
        .send(
            root.http()
                .get(format!("{}/.well-known/ai-catalog.json", running.url()))
                .header("Authorization", "Bearer nope"),
        )
        .await
        .json();
    assert_eq!(wrong["entries"].as_array().unwrap().len(), 2, "{wrong}");
    running.stop().await;

    // Inline entries hold each agent's card as served, with a host.
    let running = start(
        three()
            .catalog_entries(CatalogEntries::Inline)
            .catalog_host(CatalogHost {
                display_name: "Test host".into(),
                identifier: Some("test.example".into()),
            }),
    )
    .await;
    let root = TestServer::remote(running.url());
    let json = root.get("/.well-known/ai-catalog.json").await.json();
    assert_valid_catalog(&json);
    assert_eq!(json["host"]["displayName"], "Test host");
    let first = &json["entries"][0];
    assert!(first.get("url").is_none());
    assert_eq!(first["data"]["name"], "Alpha");
    assert_eq!(
        first["data"]["supportedInterfaces"][0]["url"],
        format!("{}/agents/alpha", running.url())
    );
    running.stop().await;
}

/// The members the AI Catalog format requires (Level 1; Level 2's host when present).
fn assert_valid_catalog(json: &Value) {
    assert_eq!(json["specVersion"], "1.0", "{json}");
    let entries = json["entries"].as_array().expect("entries is an array");
    for e in entries {
        assert!(
            e["identifier"].as_str().is_some_and(|s| !s.is_empty()),
            "{e}"
        );
        assert!(e["type"].as_str().is_some_and(|s| !s.is_empty()), "{e}");
        assert!(
            e.get("url").is_some() != e.get("data").is_some(),
            "exactly one: {e}"
        );
    }
    if let Some(host) = json.get("host") {
        assert!(host["displayName"].is_string(), "{host}");
    }
    let typed: AiCatalog = serde_json::from_value(json.clone()).unwrap();
    typed.check().unwrap();
}

/// The format's own examples (specification/ai-catalog.md) parse and pass the checks; a
/// document missing a required member, or of another major version, does not.
#[test]
fn the_catalog_format_takes_the_specifications_examples() {
    let minimal = r#"{
      "specVersion": "1.0",
      "entries": [
        {"identifier": "urn:air:example.com:skill:code-review", "displayName": "Code Review Assistant",
         "type": "application/agent-skills+zip", "url": "https://skills.example.com/code-review/skill.zip"},
        {"identifier": "urn:air:example.com:mcp:weather", "type": "application/mcp-server-card+json",
         "url": "https://api.example.com/mcp/server-card"},
        {"identifier": "urn:air:example.com:a2a:research", "type": "application/a2a-agent-card+json",
         "url": "https://agents.example.com/researchAssistant"},
        {"identifier": "urn:air:example.com:agent:productivity-plugin", "displayName": "Productivity Plugin",
         "type": "application/agent-plugins+zip", "description": "Tools for common productivity workflows.",
         "tags": ["productivity", "workflows"], "url": "https://plugins.example.com/productivity.zip"}
      ]
    }"#;
    let catalog: AiCatalog = serde_json::from_str(minimal).unwrap();
    catalog.check().unwrap();
    assert_eq!(catalog.entries.len(), 4);
    let research = catalog.agent("research").unwrap();
    assert_eq!(
        research.url.as_deref(),
        Some("https://agents.example.com/researchAssistant")
    );
    // Not an agent card: not an agent.
    assert!(catalog.agent("weather").is_none());
    for (bad, why) in [
        (json!({"specVersion": "2.0", "entries": []}), "specVersion"),
        (
            json!({"specVersion": "1.0", "entries": [{"type": "t", "url": "u"}]}),
            "identifier",
        ),
        (
            json!({"specVersion": "1.0", "entries": [{"identifier": "i", "url": "u"}]}),
            "type",
        ),
        (
            json!({"specVersion": "1.0", "entries": [{"identifier": "i", "type": "t"}]}),
            "exactly one",
        ),
        (
            json!({"specVersion": "1.0", "entries": [{"identifier": "i", "type": "t", "url": "u", "data": {}}]}),
            "exactly one",
        ),
        (
            json!({"specVersion": "1.0", "entries": [], "host": {}}),
            "displayName",
        ),
    ] {
        let catalog: AiCatalog = serde_json::from_value(bad.clone()).unwrap();
        let err = catalog.check().unwrap_err();
        assert!(err.contains(why), "{bad}: {err}");
    }
}

/// The client resolves an agent by name through the catalog (the origin or the catalog's URL),
/// and a name not listed is a clear error.
#[tokio::test]
async fn the_client_resolves_an_agent_through_the_catalog() {
    for entries in [CatalogEntries::ByReference, CatalogEntries::Inline] {
        let running = start(three().catalog_entries(entries)).await;
        let beta = within(
            "from_catalog",
            A2aClient::from_catalog(&running.url(), "beta", ClientOptions::default()),
        )
        .await
        .unwrap();
        assert_eq!(beta.card().name, "Beta");
        let sent = beta
            .send_message("via catalog", SendOptions::default())
            .await
            .unwrap()
            .into_inner();
        let id = task_id(&sent);
        let got = agent(&running, "beta")
            .ok(Binding::JsonRpc, "GetTask", json!({"id": id}))
            .await;
        assert_eq!(text_of(&got), "beta (beta): via catalog");
        let url = format!("{}/.well-known/ai-catalog.json", running.url());
        // By the identifier's last segment; inline, by the card's name too.
        let name = match entries {
            CatalogEntries::Inline => "Alpha",
            _ => "alpha",
        };
        let alpha = A2aClient::from_catalog(&url, name, ClientOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{entries:?}: {e}"));
        assert_eq!(alpha.card().name, "Alpha");
        let missing = A2aClient::from_catalog(&url, "ops", ClientOptions::default())
            .await
            .unwrap_err();
        assert!(
            missing.to_string().contains("no agent \"ops\""),
            "{missing}"
        );
        running.stop().await;
    }
}

/// One stop stops every agent: each one's running task is canceled once the grace is over,
/// and the listener is closed.
#[tokio::test]
async fn one_shutdown_stops_every_agent() {
    let (first, mut first_control) = script_agent();
    let (second, mut second_control) = script_agent();
    let grace = Duration::from_millis(200);
    let server = MultiAgentServer::builder()
        .agent(
            "first",
            A2aServer::builder()
                .card(agent_card("First"))
                .executor(first)
                .shutdown_grace(grace),
        )
        .agent(
            "second",
            A2aServer::builder()
                .card(agent_card("Second"))
                .executor(second)
                .shutdown_grace(grace),
        )
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    let url = running.url();
    let a = agent(&running, "first");
    let b = agent(&running, "second");
    // Open streams hold the server for its grace; then their tasks are canceled.
    let _first_stream = a
        .stream(Binding::Rest, "SendStreamingMessage", msg("gate 1"))
        .await
        .unwrap();
    let _second_stream = b
        .stream(Binding::JsonRpc, "SendStreamingMessage", msg("gate 1"))
        .await
        .unwrap();
    let started = (
        within("first started", first_control.started()).await,
        within("second started", second_control.started()).await,
    );
    within("stop", running.stop()).await;
    assert_eq!(
        within("first canceled", first_control.cancelled()).await,
        started.0
    );
    assert_eq!(
        within("second canceled", second_control.cancelled()).await,
        started.1
    );
    let closed = reqwest::Client::new()
        .get(format!("{url}/.well-known/ai-catalog.json"))
        .send()
        .await;
    assert!(closed.is_err(), "the listener is closed");
}

/// Names that are no path segment, and two agents of one name, are refused when built.
#[test]
fn agent_names_are_checked() {
    let one = |name: &str| {
        MultiAgentServer::builder()
            .agent(
                name,
                A2aServer::builder()
                    .card(agent_card("x"))
                    .executor(Named("x")),
            )
            .build()
    };
    for bad in ["", "a/b", "..", "a b", &"x".repeat(65)] {
        let err = one(bad).unwrap_err().to_string();
        assert!(err.contains("not an agent name"), "{bad:?}: {err}");
    }
    assert!(one("echo-1.v2_x").is_ok());
    let twice = MultiAgentServer::builder()
        .agent(
            "a",
            A2aServer::builder()
                .card(agent_card("x"))
                .executor(Named("x")),
        )
        .agent(
            "a",
            A2aServer::builder()
                .card(agent_card("y"))
                .executor(Named("y")),
        )
        .build()
        .unwrap_err()
        .to_string();
    assert!(twice.contains("two agents are named"), "{twice}");
    let none = MultiAgentServer::builder().build().unwrap_err().to_string();
    assert!(none.contains("no agent"), "{none}");
}

/// Agents per tenant: on the same routes, tenant `acme` gets one agent and `globex` another,
/// on every binding; each tenant's catalog lists its agent alone.
#[tokio::test]
async fn tenants_on_the_same_routes_get_their_own_agents() {
    let running = start(three().tenant("acme", "alpha").tenant("globex", "beta")).await;
    let url = running.url();
    for (tenant, agent_name) in [("acme", "alpha"), ("globex", "beta")] {
        let tenant_server = TestServer::remote(format!("{url}/{tenant}"));
        for binding in Binding::BOTH {
            let task = tenant_server.send_task(binding, msg("hi")).await;
            assert_eq!(
                text_of(&task),
                format!("{agent_name} ({agent_name}): hi"),
                "{tenant} {binding:?}"
            );
            // The agent's task, through its own path too; not another's.
            let id = id(&task);
            agent(&running, agent_name)
                .ok(Binding::Rest, "GetTask", json!({"id": id}))
                .await;
            let other = if agent_name == "alpha" {
                "beta"
            } else {
                "alpha"
            };
            agent(&running, other)
                .err(Binding::Rest, "GetTask", json!({"id": id}))
                .await
                .assert_task_not_found();
        }
        // gRPC: the tenant field names the tenant.
        let mut card = agent(&running, agent_name).card().await;
        for i in &mut card.supported_interfaces {
            if i.protocol_binding == ProtocolBinding::Grpc {
                i.tenant = tenant.into();
            }
        }
        let options = ClientOptions {
            preferred_binding: Some(ProtocolBinding::Grpc),
            ..ClientOptions::default()
        };
        let grpc = A2aClient::new(card, options).await.unwrap();
        let sent = grpc
            .send_message("over grpc", SendOptions::default())
            .await
            .unwrap()
            .into_inner();
        let got = agent(&running, agent_name)
            .ok(Binding::JsonRpc, "GetTask", json!({"id": task_id(&sent)}))
            .await;
        assert_eq!(
            text_of(&got),
            format!("{agent_name} ({agent_name}): over grpc")
        );
        // The tenant's catalog: its agent alone, its card below the tenant.
        let catalog = tenant_server
            .get("/.well-known/ai-catalog.json")
            .await
            .json();
        assert_valid_catalog(&catalog);
        let entries = catalog["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{catalog}");
        let card_url = entries[0]["url"].as_str().unwrap();
        assert_eq!(
            card_url,
            format!("{url}/{tenant}/.well-known/agent-card.json")
        );
        let card: Value = tenant_server
            .http()
            .get(card_url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            card["name"],
            if agent_name == "alpha" {
                "Alpha"
            } else {
                "Beta"
            }
        );
    }
    // A tenant no agent serves: nothing there; over gRPC, an error naming the tenant field.
    let mut card = agent(&running, "beta").card().await;
    for i in &mut card.supported_interfaces {
        i.tenant = "initech".into();
    }
    let options = ClientOptions {
        preferred_binding: Some(ProtocolBinding::Grpc),
        ..ClientOptions::default()
    };
    let stray = A2aClient::new(card, options).await.unwrap();
    let err = stray.get_task("t-1", None).await.unwrap_err();
    let a2a = err.to_a2a_error();
    assert!(matches!(a2a, A2aError::InvalidParams { .. }), "{err}");
    assert!(a2a.to_string().contains("no agent"), "{a2a}");
    let nobody = TestServer::remote(format!("{url}/initech"));
    assert_eq!(
        nobody
            .request(Binding::Rest, "ListTasks", json!({}))
            .send()
            .await
            .status,
        404
    );
    running.stop().await;
}

/// A tenant must name an agent added, and not take a name already taken.
#[test]
fn tenants_are_checked() {
    let two = || {
        MultiAgentServer::builder()
            .agent(
                "a",
                A2aServer::builder()
                    .card(agent_card("a"))
                    .executor(Named("a")),
            )
            .agent(
                "b",
                A2aServer::builder()
                    .card(agent_card("b"))
                    .executor(Named("b")),
            )
    };
    for (tenant, agent, why) in [
        ("t", "missing", "was not added"),
        ("agents", "a", "is taken"),
        (".well-known", "a", "is taken"),
        ("b", "a", "is taken"),
        ("a/b", "a", "not an agent name"),
    ] {
        let err = two().tenant(tenant, agent).build().unwrap_err().to_string();
        assert!(err.contains(why), "{tenant} -> {agent}: {err}");
    }
    let twice = two()
        .tenant("t", "a")
        .tenant("t", "b")
        .build()
        .unwrap_err()
        .to_string();
    assert!(twice.contains("is taken"), "{twice}");
    assert!(two().tenant("a", "a").tenant("t", "b").build().is_ok());
}
