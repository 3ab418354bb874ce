//! Per-call options on every operation: each call's own headers and extensions go out with
//! that call only (read back from a raw server's request log, on both HTTP bindings), its own
//! timeout bounds it, and a per-call credential authenticates the extended card on all three
//! bindings against our server.

use std::time::{Duration, Instant};

use a2a_runtime::client::{
    A2aClient, CallOptions, ClientError, ClientOptions, SendOptions, Target,
};
use a2a_runtime::test::within;
use a2a_runtime::types::{
    AgentInterface, ListTasksRequest, ProtocolBinding, TaskPushNotificationConfig,
};
use a2a_tests::client::*;

const EXT: &str = "https://example.com/ext/per-call/v1";

fn opts(extra: CallOptions) -> CallOptions {
    extra
        .header("x-per-call", "yes")
        .extension(EXT)
        .timeout(Duration::from_secs(5))
}

async fn raw_client(url: &str, binding: &ProtocolBinding) -> A2aClient {
    let mut card = card("raw");
    card.supported_interfaces = vec![AgentInterface::new(format!("{url}/"), binding.clone())];
    let options = ClientOptions {
        timeout: Duration::from_secs(30),
        ..ClientOptions::default()
    };
    A2aClient::new(Target::from(card), options).await.unwrap()
}

#[tokio::test]
async fn every_operation_sends_its_own_headers_and_extensions() {
    // Any answer will do: what is checked is what each request carried.
    let answer = http("200 OK", "application/json", "{}");
    for binding in BOTH {
        let srv = RawServer::start(vec![Answer::Bytes(answer.clone())]).await;
        let c = raw_client(&srv.url, &binding).await;
        let o = || opts(CallOptions::default());
        let config = TaskPushNotificationConfig {
            task_id: "t-1".into(),
            url: "http://127.0.0.1:9/hook".into(),
            ..Default::default()
        };
        let send = SendOptions {
            headers: vec![("x-per-call".into(), "yes".into())],
            extensions: vec![EXT.into()],
            ..SendOptions::default()
        };
        let _ = within("send", c.send_message("hi", send.clone())).await;
        let _ = within("stream", c.stream_message("hi", send)).await;
        let _ = within("get", c.get_task_with("t-1", Some(2), o())).await;
        let _ = within("list", c.list_tasks_with(ListTasksRequest::default(), o())).await;
        let _ = within("cancel", c.cancel_task_with("t-1", o())).await;
        let _ = within("subscribe", c.resubscribe_with("t-1", o())).await;
        let _ = within("set push", c.set_push_config_with(config, o())).await;
        let _ = within("get push", c.get_push_config_with("t-1", "p-1", o())).await;
        let _ = within("list push", c.list_push_configs_with("t-1", o())).await;
        let _ = within("delete push", c.delete_push_config_with("t-1", "p-1", o())).await;
        let _ = within("extended card", c.extended_card_with(o())).await;
        let requests = srv.requests();
        assert_eq!(requests.len(), 11, "{binding}: one request per call");
        for r in &requests {
            let lower = r.to_ascii_lowercase();
            assert!(lower.contains("x-per-call: yes"), "{binding}: {r}");
            let ext = lower
                .lines()
                .find(|l| l.starts_with("a2a-extensions:"))
                .unwrap_or_else(|| panic!("{binding}: no A2A-Extensions: {r}"));
            assert!(ext.contains(EXT), "{binding}: {ext}");
        }
        // Without options: neither.
        let _ = within("get", c.get_task("t-1", None)).await;
        let last = srv.requests().pop().unwrap().to_ascii_lowercase();
        assert!(!last.contains("x-per-call"), "{binding}: {last}");
        assert!(!last.contains(EXT), "{binding}: {last}");
    }
}

#[tokio::test]
async fn a_per_call_timeout_bounds_that_call() {
    for binding in BOTH {
        let srv = RawServer::start(vec![Answer::Silence]).await;
        let c = raw_client(&srv.url, &binding).await;
        let limit = Duration::from_millis(300);
        let start = Instant::now();
        let calls: Vec<(&str, Result<(), ClientError>)> = vec![
            (
                "get",
                c.get_task_with("t-1", None, CallOptions::default().timeout(limit))
                    .await
                    .map(drop),
            ),
            (
                "cancel",
                c.cancel_task_with("t-1", CallOptions::default().timeout(limit))
                    .await
                    .map(drop),
            ),
            (
                "list push",
                c.list_push_configs_with("t-1", CallOptions::default().timeout(limit))
                    .await
                    .map(drop),
            ),
            (
                "extended card",
                c.extended_card_with(CallOptions::default().timeout(limit))
                    .await
                    .map(drop),
            ),
        ];
        for (what, result) in calls {
            match result {
                Err(ClientError::Timeout { timeout, .. }) => {
                    assert_eq!(timeout, limit, "{binding} {what}");
                }
                other => panic!("{binding} {what}: expected a timeout, got {other:?}"),
            }
        }
        // Four calls of 300 ms, not of the client's 30 s.
        assert!(start.elapsed() < Duration::from_secs(10), "{binding}");
    }
}

#[tokio::test]
async fn a_per_call_credential_authenticates_the_extended_card_on_every_binding() {
    let running = builder("per-call")
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    for binding in [
        ProtocolBinding::JsonRpc,
        ProtocolBinding::HttpJson,
        ProtocolBinding::Grpc,
    ] {
        let options = ClientOptions {
            preferred_binding: Some(binding.clone()),
            ..ClientOptions::default()
        };
        let c = within("discover", A2aClient::discover(&running.url(), options))
            .await
            .unwrap();
        assert_eq!(c.interface().protocol_binding, binding);
        assert!(
            c.extended_card().await.is_err(),
            "{binding}: the extended card needs the caller's credential"
        );
        let with = CallOptions::default().header("authorization", format!("Bearer {TOKEN}"));
        let card = within("extended card", c.extended_card_with(with))
            .await
            .unwrap_or_else(|e| panic!("{binding}: {e:?}"));
        assert_eq!(
            card.get_ref().name,
            "client test agent (extended)",
            "{binding}"
        );
        let task = within(
            "get with credential",
            c.get_task_with(
                "missing",
                None,
                CallOptions::default().header("authorization", format!("Bearer {TOKEN}")),
            ),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(agent_err(task), a2a_runtime::A2aError::TaskNotFound { .. }),
            "{binding}"
        );
    }
}

#[tokio::test]
async fn a_per_call_extension_is_activated_for_that_call_only_and_typed_on_the_response() {
    use a2a_runtime::extension::{Extension as _, TimestampExtension};
    let running = interop_builder()
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    for binding in [
        ProtocolBinding::JsonRpc,
        ProtocolBinding::HttpJson,
        ProtocolBinding::Grpc,
    ] {
        let options = ClientOptions {
            preferred_binding: Some(binding.clone()),
            ..ClientOptions::default()
        };
        let c = A2aClient::new(running.url(), options).await.unwrap();
        assert_eq!(c.interface().protocol_binding, binding);
        let task = c
            .send_message("hello", SendOptions::default())
            .await
            .unwrap();
        assert!(!task.is_activated::<TimestampExtension>(), "{binding}");
        assert!(
            task.activated::<TimestampExtension>().is_none(),
            "{binding}"
        );
        let a2a_runtime::client::SendResult::Task(task) = task.into_inner() else {
            panic!("{binding}: a task");
        };
        let with = CallOptions::default().extension(TimestampExtension::URI);
        let got = c.get_task_with(task.id.as_str(), None, with).await.unwrap();
        assert!(got.is_activated::<TimestampExtension>(), "{binding}");
        assert!(got.activated::<TimestampExtension>().is_some(), "{binding}");
        let again = c.get_task(task.id.as_str(), None).await.unwrap();
        assert!(
            !again.is_activated::<TimestampExtension>(),
            "{binding}: that call only"
        );
    }
}
