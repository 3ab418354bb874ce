//! Extension hooks run on every operation of both bindings: `handle_request` and
//! `handle_response` around each unary operation and on each streamed event, `handle_event` on
//! each event the agent publishes while the extension is active; the agent sees the activation.

use a2a_runtime::test::*;
use reqwest::Method;

use super::support::*;
use serde_json::{Value, json};

/// The hook entries of extension A, without the label.
fn a_entries(log: &Log) -> Vec<String> {
    log.take()
        .into_iter()
        .filter_map(|e| e.strip_prefix("A.").map(str::to_owned))
        .collect()
}

fn server_builder(log: &Log) -> a2a_runtime::server::A2aServerBuilder {
    let mut c = agent_card("hooks");
    c.capabilities.push_notifications = Some(true);
    authenticated(builder())
        .card(c)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .extended_card(agent_card("hooks (extended)"))
        .extension(RecA::new(log, Mode::Activate))
}

const ON: [(&str, &str); 1] = [("A2A-Extensions", A)];

/// A completed task, created without the extension.
async fn completed_task(srv: &TestServer) -> String {
    let resp = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("hello"))
        .send()
        .await;
    let task = &resp.result()["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    task["id"].as_str().unwrap().to_owned()
}

/// A task waiting until canceled, created without the extension.
async fn waiting_task(srv: &TestServer) -> String {
    let params =
        json!({"message": user_message("wait"), "configuration": {"returnImmediately": true}});
    let resp = srv
        .request(Binding::JsonRpc, "SendMessage", params)
        .send()
        .await;
    resp.result()["task"]["id"].as_str().unwrap().to_owned()
}

/// An operation: its name, JSON-RPC params, REST method, path and body, and the reply it
/// records.
type Op<'a> = (&'a str, Value, &'a str, String, Option<Value>, &'a str);

#[tokio::test]
async fn every_unary_operation_runs_request_and_response_hooks_on_both_bindings() {
    let log = Log::default();
    let srv = start(server_builder(&log)).await;
    let task = completed_task(&srv).await;
    log.take();
    let hook = "http://127.0.0.1:9/hook";

    // (operation, JSON-RPC params, REST method, REST path, REST body, expected response entry)
    let ops: Vec<Op<'_>> = vec![
        (
            "GetTask",
            json!({"id": task}),
            "GET",
            format!("/tasks/{task}"),
            None,
            "task",
        ),
        ("ListTasks", json!({}), "GET", "/tasks".into(), None, "list"),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg-1", "url": hook}),
            "POST",
            format!("/tasks/{task}/pushNotificationConfigs"),
            Some(json!({"id": "cfg-1", "url": hook})),
            "push-config",
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg-1"}),
            "GET",
            format!("/tasks/{task}/pushNotificationConfigs/cfg-1"),
            None,
            "push-config",
        ),
        (
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task}),
            "GET",
            format!("/tasks/{task}/pushNotificationConfigs"),
            None,
            "push-configs",
        ),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg-1"}),
            "DELETE",
            format!("/tasks/{task}/pushNotificationConfigs/cfg-1"),
            None,
            "empty",
        ),
        (
            "GetExtendedAgentCard",
            json!({}),
            "GET",
            "/extendedAgentCard".into(),
            None,
            "card",
        ),
    ];
    for (op, params, method, path, body, reply) in ops {
        let expected = vec![
            "activate".to_owned(),
            format!("request:{op}"),
            format!("response:{reply}"),
        ];
        let r = srv
            .request(Binding::JsonRpc, op, params)
            .headers(&ON)
            .send()
            .await;
        r.result();
        assert_eq!(
            r.header_list("a2a-extensions").as_deref(),
            Some(A),
            "JSON-RPC {op}"
        );
        assert_eq!(a_entries(&log), expected, "JSON-RPC {op}");
        // Re-create what the JSON-RPC call deleted, so the REST call finds it.
        if op == "DeleteTaskPushNotificationConfig" {
            srv.request(
                Binding::JsonRpc,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task, "id": "cfg-1", "url": hook}),
            )
            .send()
            .await
            .result();
        }
        let r = srv
            .rest(Method::from_bytes(method.as_bytes()).unwrap(), &path, body)
            .headers(&ON)
            .send()
            .await;
        assert_eq!(r.status, 200, "REST {op}: {}", r.body());
        assert_eq!(
            r.header_list("a2a-extensions").as_deref(),
            Some(A),
            "REST {op}"
        );
        assert_eq!(a_entries(&log), expected, "REST {op}");
    }
    // Without the header, no hook runs.
    srv.request(Binding::JsonRpc, "GetTask", json!({"id": task}))
        .send()
        .await
        .result();
    assert_eq!(a_entries(&log), Vec::<String>::new());
}

#[tokio::test]
async fn send_runs_the_event_hook_on_every_agent_event_and_the_response_hook_once() {
    let log = Log::default();
    let srv = start(server_builder(&log)).await;
    for binding in Binding::BOTH {
        let r = srv
            .request(binding, "SendMessage", send_params("hello"))
            .headers(&ON)
            .send()
            .await;
        assert_eq!(r.header_list("a2a-extensions").as_deref(), Some(A));
        assert_eq!(
            a_entries(&log),
            [
                "activate",
                "request:SendMessage",
                // progress, the artifact, COMPLETED with a message
                "event:status",
                "event:artifact",
                "event:status",
                "response:send:task",
            ],
            "{binding:?}"
        );
        // A direct message reply.
        let r = srv
            .request(Binding::JsonRpc, "SendMessage", send_params("reply"))
            .headers(&ON)
            .send()
            .await;
        assert_eq!(r.result()["message"]["parts"][0]["text"], "direct");
        assert_eq!(
            a_entries(&log),
            [
                "activate",
                "request:SendMessage",
                "event:message",
                "response:send:message"
            ]
        );
    }
}

#[tokio::test]
async fn streams_run_the_response_hook_on_each_event() {
    let log = Log::default();
    let srv = start(server_builder(&log)).await;
    for binding in Binding::BOTH {
        let sse = srv
            .request(binding, "SendStreamingMessage", send_params("hello"))
            .headers(&ON)
            .stream()
            .await
            .expect("a stream");
        assert_eq!(sse.header_list("a2a-extensions").as_deref(), Some(A));
        let events = events(sse).await;
        let kinds: Vec<&str> = events.iter().map(kind).collect();
        assert!(kinds.len() >= 4, "{kinds:?}");
        let entries = a_entries(&log);
        assert_eq!(entries[..2], ["activate", "request:SendStreamingMessage"]);
        let responses: Vec<&str> = entries
            .iter()
            .filter_map(|e| e.strip_prefix("response:event:"))
            .collect();
        let expected: Vec<&str> = kinds
            .iter()
            .map(|k| match *k {
                "statusUpdate" => "status",
                "artifactUpdate" => "artifact",
                other => other,
            })
            .collect();
        assert_eq!(responses, expected, "{binding:?}");
        let agent_events: Vec<&str> = entries
            .iter()
            .filter_map(|e| e.strip_prefix("event:"))
            .collect();
        assert_eq!(
            agent_events,
            ["status", "artifact", "status"],
            "{binding:?}"
        );
    }
}

#[tokio::test]
async fn cancel_and_subscribe_run_the_hooks() {
    let log = Log::default();
    let srv = start(server_builder(&log)).await;
    for binding in Binding::BOTH {
        let task = waiting_task(&srv).await;
        log.take();
        let mut sse = if binding == Binding::Rest {
            srv.rest(Method::POST, &format!("/tasks/{task}:subscribe"), None)
                .headers(&ON)
                .stream()
                .await
        } else {
            srv.request(Binding::JsonRpc, "SubscribeToTask", json!({"id": task}))
                .headers(&ON)
                .stream()
                .await
        }
        .expect("a stream");
        assert_eq!(sse.header_list("a2a-extensions").as_deref(), Some(A));
        let first = next_event(&mut sse).await.unwrap();
        assert_eq!(kind(&first), "task");
        assert_eq!(
            a_entries(&log),
            ["activate", "request:SubscribeToTask", "response:event:task"]
        );
        // Cancel with the extension: its hooks run, and the agent-side CANCELED event passes
        // through handle_event of the cancel request's activation.
        let r = if binding == Binding::Rest {
            srv.rest(
                Method::POST,
                &format!("/tasks/{task}:cancel"),
                Some(json!({})),
            )
            .headers(&ON)
            .send()
            .await
        } else {
            srv.request(Binding::JsonRpc, "CancelTask", json!({"id": task}))
                .headers(&ON)
                .send()
                .await
        };
        assert_eq!(r.status, 200, "{}", r.body());
        assert_eq!(r.header_list("a2a-extensions").as_deref(), Some(A));
        let rest_events = events(sse).await;
        assert_eq!(
            rest_events
                .last()
                .map(|e| e["statusUpdate"]["status"]["state"].clone()),
            Some(json!("TASK_STATE_CANCELED"))
        );
        let entries = a_entries(&log);
        let mine = |p: &str| entries.iter().filter(|e| e.starts_with(p)).count();
        assert_eq!(mine("request:CancelTask"), 1, "{entries:?}");
        assert_eq!(mine("response:task"), 1, "{entries:?}");
        assert_eq!(mine("event:status"), 1, "the CANCELED status: {entries:?}");
        assert_eq!(mine("response:event:"), rest_events.len(), "{entries:?}");
    }
}

#[tokio::test]
async fn the_agent_sees_the_activations() {
    let log = Log::default();
    let srv = start(server_builder(&log).extension(RecB::new(&log, Mode::Activate))).await;
    let r = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("hello"))
        .headers(&[("A2A-Extensions", &format!("{A}, {B}"))])
        .send()
        .await;
    let meta = &r.result()["task"]["artifacts"][0]["metadata"];
    assert_eq!(meta["active"], json!([A, B]));
    assert_eq!(meta["aActive"], true);
    // RecA's activation value as its handle_request left it.
    assert_eq!(meta["a"], json!(["A", "SendMessage"]));

    let r = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("hello"))
        .headers(&[("A2A-Extensions", B)])
        .send()
        .await;
    let meta = &r.result()["task"]["artifacts"][0]["metadata"];
    assert_eq!(meta["active"], json!([B]));
    assert_eq!(meta["aActive"], false);
    assert_eq!(meta["a"], Value::Null);
}

/// Tallies its hook calls in its activation value (a `u32`: activated from its plan's template,
/// and the negotiation reused by the worker's next request) and writes the tally into the
/// SendMessage result's metadata: 1 per request hook, 10 per event.
#[a2a_runtime::a2a_extension(uri = "https://test.example/ext/tally/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Tally {}

impl a2a_runtime::extension::ExtensionHooks for Tally {
    type Activation = u32;

    fn handle_request(
        &self,
        _: &mut a2a_runtime::protocol::A2aRequest,
        tally: &mut u32,
        _: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), a2a_runtime::A2aError> {
        *tally += 1;
        Ok(())
    }

    fn handle_event(
        &self,
        _: &mut a2a_runtime::types::StreamResponse,
        tally: &mut u32,
    ) -> Result<(), a2a_runtime::A2aError> {
        *tally += 10;
        Ok(())
    }

    fn handle_response(
        &self,
        reply: &mut a2a_runtime::extension::Reply<'_>,
        tally: &mut u32,
        _: &a2a_runtime::protocol::A2aRequest,
        _: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), a2a_runtime::A2aError> {
        if let a2a_runtime::extension::Reply::SendMessage(
            a2a_runtime::types::SendMessageResponse::Task(task),
        ) = reply
        {
            task.metadata.insert("tally".into(), json!(*tally));
        }
        Ok(())
    }
}

const TALLY: &str = "https://test.example/ext/tally/v1";

#[tokio::test]
async fn every_request_starts_from_fresh_activation_values_however_the_requests_follow_each_other()
{
    let log = Log::default();
    let srv = start(server_builder(&log).extension(Tally::default())).await;
    let both = format!("{A}, {TALLY}");
    // One worker: each request follows the last on the same thread, the same plan again and
    // again (its negotiation reused), then another plan (a boxed value: none to reuse) between.
    for (i, header) in [TALLY, TALLY, TALLY, both.as_str(), TALLY, TALLY]
        .into_iter()
        .enumerate()
    {
        let r = srv
            .request(Binding::JsonRpc, "SendMessage", send_params("hello"))
            .headers(&[("A2A-Extensions", header)])
            .send()
            .await;
        let task = &r.result()["task"];
        // One request hook and three events (progress, artifact, completed).
        assert_eq!(task["metadata"]["tally"], 31, "request {i} ({header})");
        assert_eq!(
            r.header_list("a2a-extensions").as_deref(),
            Some(header),
            "request {i}"
        );
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    }
}

/// Logs every result and event it observes as `O.observe:<what>`, with the `stamp` in a
/// SendMessage task's metadata when there is one.
#[a2a_runtime::a2a_extension(uri = "https://test.example/ext/observer/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Observer {
    #[serde(skip)]
    log: Log,
}

impl a2a_runtime::extension::ExtensionHooks for Observer {
    type Activation = ();

    fn observe_response(
        &self,
        reply: &a2a_runtime::extension::Reply<'_>,
        _: &mut (),
        _: &a2a_runtime::protocol::A2aRequest,
        _: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), a2a_runtime::A2aError> {
        let stamp = match reply {
            a2a_runtime::extension::Reply::SendMessage(
                a2a_runtime::types::SendMessageResponse::Task(task),
            ) => task
                .metadata
                .get("stamp")
                .map(|s| format!(":{s}"))
                .unwrap_or_default(),
            _ => String::new(),
        };
        self.log
            .push(format!("O.observe:{}{stamp}", reply_name(reply)));
        Ok(())
    }
}

/// Stamps a SendMessage task's metadata in its `handle_response` and logs it as `S.stamp`.
#[a2a_runtime::a2a_extension(uri = "https://test.example/ext/stamper/v1")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Stamper {
    #[serde(skip)]
    log: Log,
}

impl a2a_runtime::extension::ExtensionHooks for Stamper {
    type Activation = ();

    fn handle_response(
        &self,
        reply: &mut a2a_runtime::extension::Reply<'_>,
        _: &mut (),
        _: &a2a_runtime::protocol::A2aRequest,
        _: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), a2a_runtime::A2aError> {
        self.log.push(format!("S.stamp:{}", reply_name(reply)));
        if let a2a_runtime::extension::Reply::SendMessage(
            a2a_runtime::types::SendMessageResponse::Task(task),
        ) = reply
        {
            task.metadata.insert("stamp".into(), json!(7));
        }
        Ok(())
    }
}

const OBSERVER: &str = "https://test.example/ext/observer/v1";
const STAMPER: &str = "https://test.example/ext/stamper/v1";

/// `observe_response` runs after every extension's `handle_response` (even one declared after
/// it): it sees the result and each streamed event as the client gets them, on both bindings,
/// alone or with an extension that changes the result.
#[tokio::test]
async fn observers_see_results_and_events_as_the_client_gets_them() {
    let log = Log::default();
    let srv = start(
        builder()
            .card(agent_card("observed"))
            .extension(Observer { log: log.clone() })
            .extension(Stamper { log: log.clone() }),
    )
    .await;
    let both = format!("{OBSERVER}, {STAMPER}");
    for binding in Binding::BOTH {
        for (header, stamped) in [(OBSERVER, false), (&both[..], true), (OBSERVER, false)] {
            let on = [("A2A-Extensions", header)];
            let r = srv
                .request(binding, "SendMessage", send_params("hello"))
                .headers(&on)
                .send()
                .await;
            let task = if binding == Binding::Rest {
                &r.body()["task"]
            } else {
                &r.result()["task"]
            };
            assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r:?}");
            let expected = if stamped {
                assert_eq!(task["metadata"]["stamp"], 7);
                vec!["S.stamp:send:task", "O.observe:send:task:7"]
            } else {
                assert!(task["metadata"].get("stamp").is_none(), "{task}");
                vec!["O.observe:send:task"]
            };
            assert_eq!(log.take(), expected, "{binding:?}, {header}");
        }
        let on = [("A2A-Extensions", OBSERVER)];
        let sse = srv
            .request(binding, "SendStreamingMessage", send_params("hello"))
            .headers(&on)
            .stream()
            .await
            .expect("a stream");
        let events = events(sse).await;
        let kinds: Vec<String> = events
            .iter()
            .map(|e| match kind(e) {
                "statusUpdate" => "O.observe:event:status".to_owned(),
                "artifactUpdate" => "O.observe:event:artifact".to_owned(),
                other => format!("O.observe:event:{other}"),
            })
            .collect();
        assert!(kinds.len() >= 4, "{kinds:?}");
        assert_eq!(log.take(), kinds, "{binding:?}");
    }
}
