//! Every client operation against our own server over real HTTP, on both bindings (JSON-RPC and
//! HTTP+JSON, chosen with `preferred_binding` from the card): send (task and direct message),
//! stream, get, list and paging, cancel, resubscribe, push-config CRUD, the extended card, the
//! server's version, and typed errors from either binding's error shape.

use std::collections::HashSet;

use a2a_runtime::A2aError;
use a2a_runtime::client::{SendOptions, SendResult};
use a2a_runtime::test::{TestServer, within};
use a2a_runtime::types::{
    ListTasksRequest, SendMessageConfiguration, StreamResponse, TaskPushNotificationConfig,
    TaskState,
};
use a2a_tests::client::*;
use futures::{StreamExt as _, TryStreamExt as _};

fn immediately() -> SendOptions {
    SendOptions {
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..SendMessageConfiguration::default()
        }),
        ..SendOptions::default()
    }
}

#[tokio::test]
async fn send_returns_the_completed_task_or_the_direct_reply() {
    let srv = TestServer::start(builder("send")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let resp = within("send", c.send_message("hello", SendOptions::default()))
            .await
            .unwrap();
        assert_eq!(resp.protocol_version(), Some("1.0"), "{binding}");
        let SendResult::Task(task) = resp.get_ref() else {
            panic!("{binding}: expected a task, got {:?}", resp.get_ref())
        };
        assert_eq!(task.status.state, TaskState::Completed, "{binding}");
        assert_eq!(artifact_text(&task.artifacts), ["echo: hello"], "{binding}");
        assert_eq!(task.history[0].text(), "hello");

        let resp = within(
            "send direct",
            c.send_message("direct hi", SendOptions::default()),
        )
        .await
        .unwrap();
        match resp.into_inner() {
            SendResult::Message(m) => assert_eq!(m.text(), "reply: direct hi", "{binding}"),
            other => panic!("{binding}: expected a direct message, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn send_continues_a_task_that_asked_for_input() {
    let srv = TestServer::start(builder("multi-turn")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let SendResult::Task(asked) = within("ask", c.send_message("ask", Default::default()))
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        assert_eq!(asked.status.state, TaskState::InputRequired, "{binding}");
        let opts = SendOptions {
            task_id: Some(asked.id.to_string()),
            history_length: Some(1),
            ..SendOptions::default()
        };
        let SendResult::Task(done) = within("answer", c.send_message("Ada", opts))
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        assert_eq!(done.id, asked.id);
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(artifact_text(&done.artifacts), ["Hello, Ada!"]);
        assert!(
            done.history.len() <= 1,
            "historyLength 1: {:?}",
            done.history
        );
    }
}

#[tokio::test]
async fn stream_yields_the_task_first_then_every_event_in_order() {
    let srv = TestServer::start(builder("stream")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let resp = within(
            "stream",
            c.stream_message("stream one two three", SendOptions::default()),
        )
        .await
        .unwrap();
        assert_eq!(resp.protocol_version(), Some("1.0"));
        let events: Vec<StreamResponse> = collect(resp.into_inner())
            .await
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        let shape = describe(&events);
        let StreamResponse::Task(first) = &events[0] else {
            panic!("{binding}: the first event is not the task: {shape}")
        };
        for e in &events[1..] {
            let id = match e {
                StreamResponse::StatusUpdate(u) => &u.task_id,
                StreamResponse::ArtifactUpdate(a) => &a.task_id,
                StreamResponse::Task(t) => &t.id,
                StreamResponse::Message(_) => panic!("{binding}: a message in a task stream"),
            };
            assert_eq!(id, &first.id, "{binding}: {shape}");
        }
        let chunks: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::ArtifactUpdate(a) => Some(
                    a.artifact
                        .parts
                        .iter()
                        .filter_map(|p| p.as_text())
                        .collect(),
                ),
                _ => None,
            })
            .collect();
        assert_eq!(
            chunks,
            ["stream ", "one ", "two ", "three "],
            "{binding}: {shape}"
        );
        let appends: Vec<(bool, bool)> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::ArtifactUpdate(a) => Some((a.append, a.last_chunk)),
                _ => None,
            })
            .collect();
        assert_eq!(
            appends,
            [(false, false), (true, false), (true, false), (true, true)],
            "{binding}: append / lastChunk"
        );
        let states: Vec<TaskState> = events[1..].iter().filter_map(event_state).collect();
        assert_eq!(
            states.first(),
            Some(&TaskState::Working),
            "{binding}: {shape}"
        );
        assert_eq!(
            event_state(events.last().unwrap()),
            Some(TaskState::Completed),
            "{binding}: the last event is the final state: {shape}"
        );
        let first_chunk = events
            .iter()
            .position(|e| matches!(e, StreamResponse::ArtifactUpdate(_)))
            .unwrap();
        let working = events
            .iter()
            .position(|e| event_state(e) == Some(TaskState::Working))
            .unwrap();
        assert!(working < first_chunk, "{binding}: {shape}");

        // A direct reply streams as exactly one message.
        let events: Vec<StreamResponse> = collect(
            within(
                "stream direct",
                c.stream_message("direct hi", Default::default()),
            )
            .await
            .unwrap()
            .into_inner(),
        )
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
        assert!(
            matches!(&events[..], [StreamResponse::Message(m)] if m.text() == "reply: direct hi"),
            "{binding}: {}",
            describe(&events)
        );
    }
}

#[tokio::test]
async fn get_task_returns_the_task_trimmed_to_history_length() {
    let srv = TestServer::start(builder("get")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let SendResult::Task(sent) = c
            .send_message("hello", Default::default())
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        let got = within("get", c.get_task(sent.id.as_str(), None))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.id, sent.id, "{binding}");
        assert_eq!(got.status.state, TaskState::Completed);
        assert_eq!(artifact_text(&got.artifacts), ["echo: hello"]);
        assert!(!got.history.is_empty());
        let trimmed = c
            .get_task(sent.id.as_str(), Some(0))
            .await
            .unwrap()
            .into_inner();
        assert!(trimmed.history.is_empty(), "{binding}: historyLength 0");

        let err = agent_err(c.get_task("no-such-task", None).await.unwrap_err());
        assert!(
            matches!(&err, A2aError::TaskNotFound { .. }),
            "{binding}: {err:?}"
        );
        assert_eq!(err.code(), -32001);
    }
}

#[tokio::test]
async fn list_pages_and_list_all_tasks_walks_every_page() {
    let srv = TestServer::start(builder("list")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let context = format!("ctx-{binding}");
        let mut created = HashSet::new();
        for i in 0..5 {
            let opts = SendOptions {
                context_id: Some(context.clone()),
                ..SendOptions::default()
            };
            let SendResult::Task(t) = c
                .send_message(format!("m{i}"), opts)
                .await
                .unwrap()
                .into_inner()
            else {
                panic!("expected a task")
            };
            assert_eq!(t.context_id.as_str(), context);
            created.insert(t.id.to_string());
        }
        // Another context, which the filter must leave out.
        c.send_message("elsewhere", Default::default())
            .await
            .unwrap();

        let req = ListTasksRequest {
            context_id: context.as_str().into(),
            page_size: Some(2),
            ..ListTasksRequest::default()
        };
        let first = within("list", c.list_tasks(req.clone()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(first.tasks.len(), 2, "{binding}");
        assert_eq!(first.total_size, 5, "{binding}");
        assert!(!first.next_page_token.is_empty(), "{binding}: more pages");
        assert!(
            first.tasks.iter().all(|t| t.artifacts.is_empty()),
            "no artifacts unless includeArtifacts"
        );

        let all: Vec<_> = within("list all", c.list_all_tasks(req).try_collect::<Vec<_>>())
            .await
            .unwrap();
        let ids: HashSet<String> = all.iter().map(|t| t.id.to_string()).collect();
        assert_eq!(all.len(), 5, "{binding}: every task once");
        assert_eq!(ids, created, "{binding}");
        let stamps: Vec<_> = all.iter().map(|t| t.status.timestamp.unwrap()).collect();
        assert!(
            stamps.windows(2).all(|w| w[0] >= w[1]),
            "{binding}: newest first across pages"
        );
    }
}

#[tokio::test]
async fn cancel_returns_the_canceled_task_and_refuses_a_finished_one() {
    let srv = TestServer::start(builder("cancel")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let SendResult::Task(t) = within("wait", c.send_message("wait", immediately()))
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        assert!(
            !t.status.state.is_terminal(),
            "{binding}: {}",
            t.status.state
        );
        let canceled = within("cancel", c.cancel_task(t.id.as_str()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(canceled.id, t.id);
        assert_eq!(canceled.status.state, TaskState::Canceled, "{binding}");
        assert_eq!(
            c.get_task(t.id.as_str(), None)
                .await
                .unwrap()
                .get_ref()
                .status
                .state,
            TaskState::Canceled
        );

        let SendResult::Task(done) = c
            .send_message("hi", Default::default())
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        let err = agent_err(c.cancel_task(done.id.as_str()).await.unwrap_err());
        assert!(
            matches!(err, A2aError::TaskNotCancelable { .. }),
            "{binding}: {err:?}"
        );
        let err = agent_err(c.cancel_task("no-such-task").await.unwrap_err());
        assert!(
            matches!(err, A2aError::TaskNotFound { .. }),
            "{binding}: {err:?}"
        );
    }
}

#[tokio::test]
async fn resubscribe_yields_the_task_then_live_events_until_final() {
    let srv = TestServer::start(builder("resubscribe")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let SendResult::Task(t) = c
            .send_message("wait", immediately())
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        let mut stream = within("resubscribe", c.resubscribe(t.id.as_str()))
            .await
            .unwrap()
            .into_inner();
        let first = within("first event", stream.next()).await.unwrap().unwrap();
        let StreamResponse::Task(snapshot) = &first else {
            panic!("{binding}: the first item is not the task: {first:?}")
        };
        assert_eq!(snapshot.id, t.id);
        assert_eq!(snapshot.status.state, TaskState::Working, "{binding}");
        // The snapshot arrived, so the subscription is live: cancel and see it end.
        c.cancel_task(t.id.as_str()).await.unwrap();
        let rest: Vec<StreamResponse> = collect(stream)
            .await
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rest.last().and_then(event_state),
            Some(TaskState::Canceled),
            "{binding}: {}",
            describe(&rest)
        );
    }
}

#[tokio::test]
async fn resubscribe_to_a_missing_or_finished_task_is_an_error_not_an_empty_stream() {
    let srv = TestServer::start(builder("resubscribe-errors")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let err = within("missing", c.resubscribe("no-such-task"))
            .await
            .err()
            .map(agent_err)
            .unwrap_or_else(|| panic!("{binding}: a stream for a missing task"));
        assert!(
            matches!(err, A2aError::TaskNotFound { .. }),
            "{binding}: {err:?}"
        );

        let SendResult::Task(done) = c
            .send_message("hi", Default::default())
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        let err = within("finished", c.resubscribe(done.id.as_str()))
            .await
            .err()
            .map(agent_err)
            .unwrap_or_else(|| panic!("{binding}: a stream for a finished task"));
        assert!(
            matches!(err, A2aError::UnsupportedOperation(_)),
            "{binding}: {err:?}"
        );
        assert_eq!(err.code(), -32004);
    }
}

#[tokio::test]
async fn push_configs_set_get_list_delete() {
    let srv = TestServer::start(builder("push")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        assert_eq!(c.card().capabilities.push_notifications, Some(true));
        let SendResult::Task(t) = c
            .send_message("wait", immediately())
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        let task_id = t.id.to_string();
        let set = within(
            "set",
            c.set_push_config(TaskPushNotificationConfig {
                task_id: t.id.clone(),
                url: "https://webhook.invalid/a2a".into(),
                token: "tok-1".into(),
                ..TaskPushNotificationConfig::default()
            }),
        )
        .await
        .unwrap()
        .into_inner();
        assert!(!set.id.is_empty(), "{binding}: the server assigns the id");
        assert_eq!(set.url, "https://webhook.invalid/a2a");
        let named = c
            .set_push_config(TaskPushNotificationConfig {
                task_id: t.id.clone(),
                id: "mine".into(),
                url: "https://webhook.invalid/b".into(),
                ..TaskPushNotificationConfig::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(named.id.as_str(), "mine", "{binding}: a given id is kept");

        let got = c
            .get_push_config(&task_id, set.id.as_str())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.id, set.id);
        assert_eq!(got.url, "https://webhook.invalid/a2a");
        assert_eq!(got.token, "tok-1");
        assert_eq!(got.task_id, t.id);

        let listed = c.list_push_configs(&task_id).await.unwrap().into_inner();
        let ids: HashSet<&str> = listed.configs.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(ids, HashSet::from([set.id.as_str(), "mine"]), "{binding}");

        let deleted = c
            .delete_push_config(&task_id, set.id.as_str())
            .await
            .unwrap();
        assert_eq!(deleted.protocol_version(), Some("1.0"));
        c.delete_push_config(&task_id, set.id.as_str())
            .await
            .expect("delete is idempotent");
        let err = agent_err(
            c.get_push_config(&task_id, set.id.as_str())
                .await
                .unwrap_err(),
        );
        assert!(
            matches!(err, A2aError::TaskNotFound { .. }),
            "{binding}: {err:?}"
        );
        let left = c.list_push_configs(&task_id).await.unwrap().into_inner();
        assert_eq!(left.configs.len(), 1, "{binding}");
        let err = agent_err(c.delete_push_config("no-such-task", "x").await.unwrap_err());
        assert!(
            matches!(err, A2aError::TaskNotFound { .. }),
            "{binding}: {err:?}"
        );
        c.cancel_task(&task_id).await.unwrap();
    }
}

#[tokio::test]
async fn push_configs_on_an_agent_without_the_capability_are_refused() {
    let mut card = card("no-push");
    card.capabilities.push_notifications = None;
    let srv = TestServer::start(
        a2a_runtime::server::A2aServer::builder()
            .card(card)
            .executor(TestAgent)
            .linked_extensions(false)
            .workers(1),
    )
    .await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        let SendResult::Task(t) = c
            .send_message("hi", Default::default())
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        let err = agent_err(
            c.set_push_config(TaskPushNotificationConfig {
                task_id: t.id.clone(),
                url: "https://webhook.invalid/a2a".into(),
                ..TaskPushNotificationConfig::default()
            })
            .await
            .unwrap_err(),
        );
        assert!(
            matches!(err, A2aError::PushNotificationNotSupported),
            "{binding}: {err:?}"
        );
    }
}

#[tokio::test]
async fn extended_card_is_fetched() {
    let srv = TestServer::start(builder("extended")).await;
    for binding in BOTH {
        let c = client(srv.url(), &binding).await;
        assert_eq!(c.card().capabilities.extended_agent_card, Some(true));
        let card = within("extended card", c.extended_card()).await.unwrap();
        assert_eq!(
            card.get_ref().name,
            "client test agent (extended)",
            "{binding}"
        );
        assert_eq!(
            card.get_ref().version,
            "1.0.0",
            "the agent version (Response::protocol_version is the protocol version)"
        );
        assert_eq!(card.protocol_version(), Some("1.0"));
    }
    let plain = TestServer::start(
        a2a_runtime::server::A2aServer::builder()
            .card(a2a_tests::client::card("plain"))
            .executor(TestAgent)
            .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
            .linked_extensions(false)
            .workers(1),
    )
    .await;
    for binding in BOTH {
        let c = client(plain.url(), &binding).await;
        let err = agent_err(c.extended_card().await.unwrap_err());
        assert!(
            matches!(err, A2aError::UnsupportedOperation(_)),
            "{binding}: {err:?}"
        );
    }
}
