//! The client's extension handling, tenant and card cache, over real HTTP on both bindings:
//! `A2A-Extensions` on every call (and the server's echo read back with
//! `activated_extensions`), typed params from the card, a local refusal before the first call
//! for a required extension the client lacks (discovery itself never fails on it), activation by
//! value, type or URI, warn-or-fail on a configured extension the agent does not declare, hooks
//! that know their side (a server's validation hook does not run in the client), the tenant
//! copied from the interface into every request, card revalidation with `If-None-Match` (304 →
//! no change), and a client-side `observe_response` hook seeing each result and streamed event
//! the client returns.

use a2a_examples::Locale;
use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::client::{
    A2aClient, ClientError, ClientOptions, ExtensionCheck, SendOptions, SendResult, Target,
};
use a2a_runtime::extension::{
    AgentCardExt as _, Extension as _, MetadataExt as _, RequestContext, TimestampExtension,
};
use a2a_runtime::protocol::Side;
use a2a_runtime::test::{TestServer, within};
use a2a_runtime::types::{
    AgentCard, ListTasksRequest, ProtocolBinding, SendMessageConfiguration, StreamResponse,
    TaskPushNotificationConfig, TaskState,
};
use a2a_tests::client::*;
use futures::StreamExt as _;
use serde::{Deserialize, Serialize};

/// Requests must be signed (a required extension, for the fail-fast tests).
#[a2a_extension(
    uri = "https://example.com/ext/signed/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Signed {}

const TS: &str = TimestampExtension::URI;

async fn ts_client(url: &str, binding: &ProtocolBinding) -> A2aClient {
    within(
        "connect",
        A2aClient::builder()
            .options(options(binding))
            .extension(TimestampExtension::default())
            .connect(url),
    )
    .await
    .expect("connect with Timestamp")
}

fn immediately() -> SendOptions {
    SendOptions {
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..SendMessageConfiguration::default()
        }),
        ..SendOptions::default()
    }
}

/// Asserts the server activated exactly Timestamp for this call.
macro_rules! assert_ts {
    ($client:expr, $resp:expr, $what:expr) => {{
        let resp = &$resp;
        assert_eq!(
            resp.activated_extensions(),
            [TS],
            "{}: echoed A2A-Extensions",
            $what
        );
    }};
}

#[tokio::test]
async fn extensions_are_sent_on_every_call_and_the_echo_is_read_back() {
    let srv =
        TestServer::start(builder("ext-every-call").extension(TimestampExtension::default())).await;
    for binding in BOTH {
        let c = ts_client(srv.url(), &binding).await;
        let b = binding.to_string();

        let sent = c
            .send_message("hello", SendOptions::default())
            .await
            .unwrap();
        assert_ts!(c, sent, format!("{b} send"));
        let SendResult::Task(task) = sent.get_ref() else {
            panic!("expected a task")
        };
        let stamp = task.artifacts[0]
            .metadata_of::<TimestampExtension>()
            .unwrap()
            .expect("the activated extension stamped the artifact");
        assert!(stamp.ends_with('Z'), "{b}: {stamp}");
        let id = task.id.to_string();

        let streamed = c
            .stream_message("stream a b", SendOptions::default())
            .await
            .unwrap();
        assert_ts!(c, streamed, format!("{b} stream"));
        let events: Vec<_> = collect(streamed.into_inner()).await;
        assert!(events.iter().all(Result::is_ok), "{b}: {events:?}");

        assert_ts!(c, c.get_task(&id, None).await.unwrap(), format!("{b} get"));
        assert_ts!(
            c,
            c.list_tasks(ListTasksRequest::default()).await.unwrap(),
            format!("{b} list")
        );
        assert_ts!(
            c,
            c.extended_card().await.unwrap(),
            format!("{b} extended card")
        );

        let SendResult::Task(waiting) = c
            .send_message("wait", immediately())
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        let wid = waiting.id.to_string();
        let set = c
            .set_push_config(TaskPushNotificationConfig {
                task_id: waiting.id.clone(),
                url: "https://webhook.invalid/a2a".into(),
                ..TaskPushNotificationConfig::default()
            })
            .await
            .unwrap();
        assert_ts!(c, set, format!("{b} push set"));
        assert_ts!(
            c,
            c.get_push_config(&wid, set.get_ref().id.as_str())
                .await
                .unwrap(),
            format!("{b} push get")
        );
        assert_ts!(
            c,
            c.list_push_configs(&wid).await.unwrap(),
            format!("{b} push list")
        );
        assert_ts!(
            c,
            c.delete_push_config(&wid, set.get_ref().id.as_str())
                .await
                .unwrap(),
            format!("{b} push delete")
        );
        let sub = within("resubscribe", c.resubscribe(&wid)).await.unwrap();
        assert_ts!(c, sub, format!("{b} resubscribe"));
        let mut sub = sub.into_inner();
        assert!(matches!(
            within("snapshot", sub.next()).await,
            Some(Ok(StreamResponse::Task(_)))
        ));
        assert_ts!(c, c.cancel_task(&wid).await.unwrap(), format!("{b} cancel"));
        let rest = collect(sub).await;
        assert!(
            matches!(rest.last(), Some(Ok(e)) if event_state(e) == Some(TaskState::Canceled)),
            "{b}: {rest:?}"
        );

        // Without extensions configured nothing is requested, so nothing is activated.
        let plain = client(srv.url(), &binding).await;
        let resp = plain
            .send_message("hello", SendOptions::default())
            .await
            .unwrap();
        assert!(
            resp.activated_extensions().is_empty(),
            "{b}: {:?}",
            resp.activated_extensions()
        );
        let SendResult::Task(task) = resp.get_ref() else {
            panic!("expected a task")
        };
        assert!(
            !task.artifacts[0].has_metadata_of::<TimestampExtension>(),
            "{b}"
        );
    }
}

#[tokio::test]
async fn typed_extension_params_are_read_from_the_card() {
    let locale = Locale {
        supported: vec!["en".into(), "de".into()],
    };
    let srv = TestServer::start(builder("ext-params").extension(locale.clone())).await;
    let c = client(srv.url(), &ProtocolBinding::JsonRpc).await;
    let card = c.card();
    let decl = card
        .capabilities
        .extensions
        .iter()
        .find(|e| e.uri == Locale::URI)
        .expect("the card declares Locale");
    assert!(!decl.required);
    let params: Locale =
        serde_json::from_value(serde_json::Value::Object(decl.params.0.clone())).unwrap();
    assert_eq!(params.supported, locale.supported);
    // The same through the card helper, which also tells an undeclared extension apart.
    let typed = card
        .extension_params::<Locale>()
        .unwrap()
        .expect("declared");
    assert_eq!(typed.supported, locale.supported);
    assert!(
        card.extension_params::<TimestampExtension>()
            .unwrap()
            .is_none()
    );
    assert!(card.declares::<Locale>() && !card.declares::<TimestampExtension>());
}

#[tokio::test]
async fn a_required_extension_the_client_lacks_is_refused_locally_before_the_first_call() {
    let srv = TestServer::start(builder("ext-required").extension(Signed {})).await;
    for binding in BOTH {
        // Discovery never fails on the card's contents: its params stay readable.
        let c = within(
            "discover",
            A2aClient::discover(srv.url(), options(&binding)),
        )
        .await
        .expect("discover an agent whose card requires an extension");
        assert!(c.card().declares::<Signed>());
        let local = |err: &ClientError| {
            assert!(
                matches!(err, ClientError::Local(A2aError::ExtensionSupportRequired { uris }) if uris == &[Signed::URI]),
                "{binding}: {err:?}"
            );
            assert!(err.to_string().contains("local check"), "{err}");
            assert_eq!(err.to_a2a_error().code(), -32008);
        };
        // The explicit check, and the first call (nothing is sent).
        local(&c.check_extensions().unwrap_err());
        local(
            &c.send_message("hello", SendOptions::default())
                .await
                .unwrap_err(),
        );
        local(&c.get_task("t-1", None).await.unwrap_err());

        // With the check off the call goes out, and the server refuses with the same error.
        let off = A2aClient::discover(
            srv.url(),
            ClientOptions {
                extension_check: ExtensionCheck::Off,
                ..options(&binding)
            },
        )
        .await
        .unwrap();
        let err = agent_err(
            off.send_message("hello", SendOptions::default())
                .await
                .unwrap_err(),
        );
        assert!(
            matches!(&err, A2aError::ExtensionSupportRequired { uris } if uris == &[Signed::URI]),
            "{binding}: the server's error: {err:?}"
        );

        // Activated by value, by type or by URI, every call works.
        for signed in [
            A2aClient::builder().extension(Signed {}),
            A2aClient::builder().activate::<Signed>(),
            A2aClient::builder().activate_uri(Signed::URI),
        ] {
            let signed = signed
                .options(options(&binding))
                .connect(srv.url())
                .await
                .unwrap();
            assert_eq!(signed.extensions(), [Signed::URI]);
            signed.check_extensions().unwrap();
            let resp = signed
                .send_message("hello", SendOptions::default())
                .await
                .unwrap();
            assert_eq!(resp.activated_extensions(), [Signed::URI], "{binding}");
        }
    }
}

#[tokio::test]
async fn an_undeclared_configured_extension_warns_or_fails() {
    let srv = TestServer::start(builder("ext-undeclared")).await;
    for binding in BOTH {
        let connect = |check| {
            A2aClient::builder()
                .options(ClientOptions {
                    extension_check: check,
                    ..options(&binding)
                })
                .extension(TimestampExtension::default())
                .connect(srv.url())
        };
        let c = within("fail", connect(ExtensionCheck::Fail))
            .await
            .expect("the card never fails the connection");
        for err in [
            c.check_extensions().unwrap_err(),
            c.send_message("hello", SendOptions::default())
                .await
                .unwrap_err(),
        ] {
            assert!(
                matches!(&err, ClientError::Local(A2aError::UnsupportedOperation(m)) if m.contains(TS)),
                "{binding}: {err:?}"
            );
        }

        for check in [ExtensionCheck::Warn, ExtensionCheck::Off] {
            let c = within("warn", connect(check)).await.unwrap();
            let resp = c
                .send_message("hello", SendOptions::default())
                .await
                .unwrap();
            assert!(
                resp.activated_extensions().is_empty(),
                "{binding} {check:?}: not activated"
            );
            assert!(matches!(resp.get_ref(), SendResult::Task(_)));
        }
    }
}

/// Where each `handle_request` ran, for both extensions below (one shared log).
type Sides = std::sync::Arc<std::sync::Mutex<Vec<(&'static str, Side)>>>;

/// Asks to run in clients too.
#[a2a_extension(uri = "https://example.com/ext/both-sides/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct BothSides {
    #[serde(skip)]
    log: Sides,
}

impl a2a_runtime::extension::ExtensionHooks for BothSides {
    type Activation = ();
    const RUNS_IN_CLIENT: bool = true;
    fn handle_request(
        &self,
        _: &mut a2a_runtime::protocol::A2aRequest,
        _: &mut (),
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        self.log.lock().unwrap().push(("both", ctx.side));
        Ok(())
    }
}

/// Validates on the server only (the default): refuses every request it sees.
#[a2a_extension(uri = "https://example.com/ext/server-check/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct ServerCheck {
    #[serde(skip)]
    log: Sides,
}

impl a2a_runtime::extension::ExtensionHooks for ServerCheck {
    type Activation = ();
    fn handle_request(
        &self,
        _: &mut a2a_runtime::protocol::A2aRequest,
        _: &mut (),
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        self.log.lock().unwrap().push(("check", ctx.side));
        Err(A2aError::invalid_field(
            "message.metadata",
            "refused by the server's check",
        ))
    }
}

#[tokio::test]
async fn hooks_know_their_side_and_server_checks_do_not_run_in_the_client() {
    let log = Sides::default();
    let both = BothSides { log: log.clone() };
    let check = ServerCheck { log: log.clone() };
    let srv = TestServer::start(
        builder("sides")
            .extension(both.clone())
            .extension(check.clone()),
    )
    .await;
    for binding in BOTH {
        let c = A2aClient::builder()
            .options(options(&binding))
            .extension(both.clone())
            .connect(srv.url())
            .await
            .unwrap();
        c.send_message("hello", SendOptions::default())
            .await
            .unwrap();
        assert_eq!(
            std::mem::take(&mut *log.lock().unwrap()),
            [("both", Side::Client), ("both", Side::Server)],
            "{binding}"
        );

        // The server's check refuses; the client with the same extension sends the request
        // and gets the server's answer.
        let c = A2aClient::builder()
            .options(options(&binding))
            .extension(check.clone())
            .connect(srv.url())
            .await
            .unwrap();
        let err = c
            .send_message("hello", SendOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(err.agent_error().map(|a| a.code()), Some(-32602)),
            "{binding}: the agent's answer, not a local refusal: {err:?}"
        );
        assert_eq!(
            std::mem::take(&mut *log.lock().unwrap()),
            [("check", Side::Server)],
            "{binding}"
        );
    }
}

/// The server's card with every interface carrying `tenant`.
fn with_tenant(mut card: AgentCard, tenant: &str) -> AgentCard {
    for i in &mut card.supported_interfaces {
        i.tenant = tenant.into();
    }
    card
}

#[tokio::test]
async fn the_tenant_of_the_interface_scopes_every_request() {
    let srv = TestServer::start(builder("tenant")).await;
    let card = client(srv.url(), &ProtocolBinding::JsonRpc).await.card();
    let tenanted = |binding| {
        A2aClient::new(
            Target::from(with_tenant(card.clone(), "acme")),
            options(&binding),
        )
    };
    let rpc = tenanted(ProtocolBinding::JsonRpc).await.unwrap();
    let rest = tenanted(ProtocolBinding::HttpJson).await.unwrap();
    assert_eq!(rest.interface().tenant, "acme");
    let none = client(srv.url(), &ProtocolBinding::HttpJson).await;

    let SendResult::Task(t) = rpc
        .send_message("hello", SendOptions::default())
        .await
        .unwrap()
        .into_inner()
    else {
        panic!("expected a task")
    };
    let id = t.id.to_string();
    assert_eq!(rest.get_task(&id, None).await.unwrap().get_ref().id, t.id);
    let listed = rest
        .list_tasks(ListTasksRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.tasks.len(), 1);
    let err = agent_err(none.get_task(&id, None).await.unwrap_err());
    assert!(
        matches!(err, A2aError::TaskNotFound { .. }),
        "another tenant's task is invisible: {err:?}"
    );
    assert_eq!(
        none.list_tasks(ListTasksRequest::default())
            .await
            .unwrap()
            .get_ref()
            .total_size,
        0
    );

    let SendResult::Task(t2) = rest
        .send_message("hi", SendOptions::default())
        .await
        .unwrap()
        .into_inner()
    else {
        panic!("expected a task")
    };
    assert_eq!(
        rpc.get_task(t2.id.as_str(), None)
            .await
            .unwrap()
            .get_ref()
            .id,
        t2.id
    );
}

#[tokio::test]
async fn the_tenant_goes_in_the_rest_path_and_the_json_rpc_params() {
    let reply = r#"{"message":{"messageId":"m-1","role":"ROLE_AGENT","parts":[{"text":"ok"}]}}"#;
    let rest_srv = RawServer::start(vec![Answer::Bytes(http(
        "200 OK",
        "application/a2a+json",
        reply,
    ))])
    .await;
    let rpc_body = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{reply}}}"#);
    let rpc_srv = RawServer::start(vec![Answer::Bytes(http(
        "200 OK",
        "application/json",
        &rpc_body,
    ))])
    .await;
    let mut card = card("raw");
    card.supported_interfaces = vec![
        a2a_runtime::types::AgentInterface::new(
            format!("{}/a2a", rest_srv.url),
            ProtocolBinding::HttpJson,
        ),
        a2a_runtime::types::AgentInterface::new(
            format!("{}/rpc", rpc_srv.url),
            ProtocolBinding::JsonRpc,
        ),
    ];
    let card = with_tenant(card, "acme");
    for (binding, srv) in [
        (ProtocolBinding::HttpJson, &rest_srv),
        (ProtocolBinding::JsonRpc, &rpc_srv),
    ] {
        let c = A2aClient::builder()
            .options(ClientOptions {
                extension_check: ExtensionCheck::Off,
                ..options(&binding)
            })
            .extension(TimestampExtension::default())
            .connect(card.clone())
            .await
            .unwrap();
        let resp = within("send", c.send_message("hello", SendOptions::default()))
            .await
            .unwrap();
        assert!(matches!(resp.get_ref(), SendResult::Message(_)));
        let requests = srv.requests();
        let req = requests[0].to_ascii_lowercase();
        assert!(req.contains("\r\na2a-version: 1.0\r\n"), "{req}");
        assert!(
            req.contains(&format!("\r\na2a-extensions: {TS}\r\n")),
            "{req}"
        );
        let body: serde_json::Value =
            serde_json::from_str(requests[0].split("\r\n\r\n").nth(1).unwrap()).unwrap();
        match binding {
            ProtocolBinding::HttpJson => {
                assert!(
                    requests[0].starts_with("POST /a2a/acme/message:send HTTP/1.1\r\n"),
                    "{}",
                    requests[0]
                );
            }
            _ => {
                assert!(requests[0].starts_with("POST /rpc HTTP/1.1\r\n"));
                assert_eq!(body["method"], "SendMessage");
                assert_eq!(body["params"]["tenant"], "acme", "{body}");
            }
        }
    }
}

#[tokio::test]
async fn refresh_card_revalidates_with_the_etag() {
    let srv = TestServer::start(builder("refresh")).await;
    let c = client(srv.url(), &ProtocolBinding::JsonRpc).await;
    assert!(
        !within("refresh", c.refresh_card()).await.unwrap(),
        "our server answers 304 to the same ETag"
    );

    let card_json = |name: &str| {
        serde_json::to_string(&AgentCard {
            supported_interfaces: vec![a2a_runtime::types::AgentInterface::new(
                "http://127.0.0.1:9/",
                ProtocolBinding::JsonRpc,
            )],
            ..a2a_tests::client::card(name)
        })
        .unwrap()
    };
    let with_etag = |etag: &str, body: &str| {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\netag: {etag}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    let raw = RawServer::start(vec![
        Answer::Bytes(with_etag("\"v1\"", &card_json("first"))),
        Answer::Bytes(
            b"HTTP/1.1 304 Not Modified\r\netag: \"v1\"\r\nconnection: close\r\n\r\n".to_vec(),
        ),
        Answer::Bytes(with_etag("\"v2\"", &card_json("second"))),
        Answer::Bytes(
            b"HTTP/1.1 304 Not Modified\r\netag: \"v2\"\r\nconnection: close\r\n\r\n".to_vec(),
        ),
    ])
    .await;
    let c = A2aClient::discover(&raw.url, ClientOptions::default())
        .await
        .unwrap();
    assert_eq!(c.card().name, "first");
    assert!(!c.refresh_card().await.unwrap(), "304: unchanged");
    assert_eq!(c.card().name, "first");
    assert!(c.refresh_card().await.unwrap(), "200 with a new card");
    assert_eq!(c.card().name, "second");
    assert!(!c.refresh_card().await.unwrap());
    let heads: Vec<String> = raw
        .requests()
        .iter()
        .map(|r| r.to_ascii_lowercase())
        .collect();
    assert!(heads[0].starts_with("get /.well-known/agent-card.json "));
    assert!(!heads[0].contains("if-none-match"));
    assert!(
        heads[1].contains("\r\nif-none-match: \"v1\"\r\n"),
        "{}",
        heads[1]
    );
    assert!(heads[2].contains("\r\nif-none-match: \"v1\"\r\n"));
    assert!(
        heads[3].contains("\r\nif-none-match: \"v2\"\r\n"),
        "{}",
        heads[3]
    );
}

/// Counts the results and events it observes (client side: what the client's caller gets).
#[a2a_extension(uri = "https://example.com/ext/watcher/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Watcher {
    #[serde(skip)]
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl a2a_runtime::extension::ExtensionHooks for Watcher {
    type Activation = ();
    const RUNS_IN_CLIENT: bool = true;

    fn observe_response(
        &self,
        reply: &a2a_runtime::extension::Reply<'_>,
        _: &mut (),
        _: &a2a_runtime::protocol::A2aRequest,
        _: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), A2aError> {
        use a2a_runtime::extension::Reply;
        use a2a_runtime::types::SendMessageResponse;
        let what = match reply {
            Reply::SendMessage(SendMessageResponse::Task(t)) => {
                format!("send:{}", t.status.state)
            }
            Reply::Event(StreamResponse::Task(_)) => "event:task".into(),
            Reply::Event(StreamResponse::StatusUpdate(e)) => format!("event:{}", e.status.state),
            Reply::Event(StreamResponse::ArtifactUpdate(_)) => "event:artifact".into(),
            Reply::Task(t) => format!("task:{}", t.status.state),
            _ => "other".into(),
        };
        self.seen.lock().unwrap().push(what);
        Ok(())
    }
}

#[tokio::test]
async fn a_client_observer_sees_every_result_and_streamed_event_it_returns() {
    let srv = TestServer::start(builder("client-observer").extension(Watcher::default())).await;
    for binding in BOTH {
        let watcher = Watcher::default();
        let seen = watcher.seen.clone();
        let c = within(
            "connect",
            A2aClient::builder()
                .options(options(&binding))
                .extension(watcher)
                .connect(srv.url()),
        )
        .await
        .expect("connect with Watcher");
        let sent = c
            .send_message("hello", SendOptions::default())
            .await
            .unwrap();
        let SendResult::Task(task) = sent.get_ref() else {
            panic!("expected a task")
        };
        assert_eq!(
            std::mem::take(&mut *seen.lock().unwrap()),
            [format!("send:{}", task.status.state)],
            "{binding}"
        );
        let id = task.id.to_string();
        c.get_task(&id, None).await.unwrap();
        assert_eq!(
            std::mem::take(&mut *seen.lock().unwrap()),
            [format!("task:{}", TaskState::Completed)],
            "{binding}"
        );
        let streamed = c
            .stream_message("stream a b", SendOptions::default())
            .await
            .unwrap();
        let events: Vec<_> = collect(streamed.into_inner()).await;
        let expected: Vec<String> = events
            .iter()
            .map(|e| match e.as_ref().unwrap() {
                StreamResponse::Task(_) => "event:task".to_owned(),
                StreamResponse::StatusUpdate(e) => format!("event:{}", e.status.state),
                StreamResponse::ArtifactUpdate(_) => "event:artifact".to_owned(),
                StreamResponse::Message(_) => "other".to_owned(),
            })
            .collect();
        assert!(expected.len() >= 3, "{binding}: {expected:?}");
        assert_eq!(*seen.lock().unwrap(), expected, "{binding}");
        seen.lock().unwrap().clear();
    }
}
