//! Our client against the official Python SDK server (`a2a-sdk`, tests/interop/python/
//! echo_server.py under uvicorn on 127.0.0.1, gRPC beside it), on all three bindings: send, stream, get, list (and
//! paging), cancel, resubscribe, push-config CRUD, and the Timestamp extension activated and
//! echoed. Every operation is a named check; the test fails listing each failed check.
//!
//! The peer is installed by the test (see `a2a_tests::interop`); the tests run under CI (and
//! with `--ignored`) and fail without python3 or the package index, and are ignored otherwise.

use std::collections::HashSet;
use std::future::Future;

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientError, SendOptions, SendResult};
use a2a_runtime::extension::{Extension as _, MetadataExt as _, TimestampExtension};
use a2a_runtime::test::within;
use a2a_runtime::types::{
    ListTasksRequest, ProtocolBinding, SendMessageConfiguration, StreamResponse,
    TaskPushNotificationConfig, TaskState,
};
use a2a_tests::client::{artifact_text, describe, event_state, options};
use a2a_tests::interop;
use futures::{StreamExt as _, TryStreamExt as _};

/// The named checks of one run, and what failed.
struct Checks {
    binding: ProtocolBinding,
    passed: Vec<&'static str>,
    failed: Vec<String>,
}

impl Checks {
    async fn run<F: Future<Output = Result<(), String>>>(&mut self, name: &'static str, f: F) {
        match within(name, f).await {
            Ok(()) => self.passed.push(name),
            Err(e) => self.failed.push(format!("{name}: {e}")),
        }
    }

    fn finish(self, log: &str) {
        println!("{}: passed {:?}", self.binding, self.passed);
        assert!(
            self.failed.is_empty(),
            "our client ({}) against the Python SDK server, failed checks:\n  {}\n--- server log\n{log}",
            self.binding,
            self.failed.join("\n  ")
        );
    }
}

/// `Err(message)` unless `cond`.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

fn fail(e: ClientError) -> String {
    format!("{e} ({e:?})")
}

/// The agent's error, when the agent answered with one.
fn agent_only(e: ClientError) -> Option<A2aError> {
    e.agent_error().map(|a| a.error().clone())
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

async fn send_task(
    c: &A2aClient,
    text: &str,
    opts: SendOptions,
) -> Result<a2a_runtime::types::Task, String> {
    match c.send_message(text, opts).await.map_err(fail)?.into_inner() {
        SendResult::Task(t) => Ok(t),
        SendResult::Message(m) => Err(format!("expected a task, got the message {m:?}")),
    }
}

async fn against_python_server(binding: ProtocolBinding) {
    let python = interop::setup(interop::python).await;
    let (server, url) = interop::start_python_server(&python).await;
    let mut checks = Checks {
        binding: binding.clone(),
        passed: Vec::new(),
        failed: Vec::new(),
    };
    let c = within("discover", A2aClient::discover(&url, options(&binding)))
        .await
        .unwrap_or_else(|e| {
            panic!(
                "discover the Python SDK server: {e:?}\n{}",
                server.log_tail()
            )
        });
    assert_eq!(c.interface().protocol_binding, binding);
    let ts = within(
        "connect",
        A2aClient::builder()
            .options(options(&binding))
            .extension(TimestampExtension::default())
            .connect(url.as_str()),
    )
    .await
    .expect("the Python server declares Timestamp");

    checks
        .run("send", async {
            let resp = c
                .send_message("hello", SendOptions::default())
                .await
                .map_err(fail)?;
            let SendResult::Task(t) = resp.get_ref() else {
                return Err(format!("expected a task: {:?}", resp.get_ref()));
            };
            ensure!(
                t.status.state == TaskState::Completed,
                "state {}",
                t.status.state
            );
            ensure!(
                artifact_text(&t.artifacts) == ["echo: hello"],
                "artifacts {:?}",
                artifact_text(&t.artifacts)
            );
            Ok(())
        })
        .await;

    checks
        .run("version", async {
            // The Python SDK does not send A2A-Version on responses: accept its absence, but
            // a present one must be 1.0.
            let resp = c
                .send_message("hello", SendOptions::default())
                .await
                .map_err(fail)?;
            ensure!(
                resp.protocol_version().is_none_or(|v| v == "1.0"),
                "A2A-Version {:?}",
                resp.protocol_version()
            );
            Ok(())
        })
        .await;

    checks
        .run("stream", async {
            let resp = c
                .stream_message("stream", SendOptions::default())
                .await
                .map_err(fail)?;
            let events: Vec<StreamResponse> =
                resp.into_inner().try_collect().await.map_err(fail)?;
            let shape = describe(&events);
            let Some(StreamResponse::Task(first)) = events.first() else {
                return Err(format!("the first event is not the task: {shape}"));
            };
            let chunks: Vec<(String, bool)> = events
                .iter()
                .filter_map(|e| match e {
                    StreamResponse::ArtifactUpdate(a) => (a.task_id == first.id).then(|| {
                        (
                            a.artifact
                                .parts
                                .iter()
                                .filter_map(|p| p.as_text())
                                .collect(),
                            a.append,
                        )
                    }),
                    _ => None,
                })
                .collect();
            ensure!(
                chunks
                    == [
                        ("chunk 1".to_owned(), false),
                        ("chunk 2".to_owned(), true),
                        ("chunk 3".to_owned(), true)
                    ],
                "chunks {chunks:?} ({shape})"
            );
            ensure!(
                events.last().and_then(event_state) == Some(TaskState::Completed),
                "does not end COMPLETED: {shape}"
            );
            Ok(())
        })
        .await;

    checks
        .run("get", async {
            let t = send_task(&c, "hello", SendOptions::default()).await?;
            let got = c
                .get_task(t.id.as_str(), None)
                .await
                .map_err(fail)?
                .into_inner();
            ensure!(
                got.id == t.id && got.status.state == TaskState::Completed,
                "{got:?}"
            );
            ensure!(artifact_text(&got.artifacts) == ["echo: hello"], "{got:?}");
            let trimmed = c
                .get_task(t.id.as_str(), Some(0))
                .await
                .map_err(fail)?
                .into_inner();
            ensure!(
                trimmed.history.is_empty(),
                "historyLength 0: {:?}",
                trimmed.history
            );
            match c.get_task("no-such-task", None).await.map_err(agent_only) {
                Err(Some(A2aError::TaskNotFound { .. })) => Ok(()),
                other => Err(format!("unknown task: {other:?}")),
            }
        })
        .await;

    checks
        .run("list", async {
            let context = format!("ctx-{}-{binding}", std::process::id());
            let mut created = HashSet::new();
            for i in 0..3 {
                let opts = SendOptions {
                    context_id: Some(context.clone()),
                    ..SendOptions::default()
                };
                created.insert(send_task(&c, &format!("m{i}"), opts).await?.id.to_string());
            }
            let req = ListTasksRequest {
                context_id: context.as_str().into(),
                page_size: Some(2),
                ..ListTasksRequest::default()
            };
            let page = c.list_tasks(req.clone()).await.map_err(fail)?.into_inner();
            ensure!(page.tasks.len() == 2, "page of {} tasks", page.tasks.len());
            ensure!(page.total_size == 3, "totalSize {}", page.total_size);
            ensure!(
                !page.next_page_token.is_empty(),
                "no nextPageToken on page 1"
            );
            let all: Vec<_> = c.list_all_tasks(req).try_collect().await.map_err(fail)?;
            let ids: HashSet<String> = all.iter().map(|t| t.id.to_string()).collect();
            ensure!(
                all.len() == 3 && ids == created,
                "walked {ids:?}, created {created:?}"
            );
            Ok(())
        })
        .await;

    checks
        .run("cancel", async {
            let t = send_task(&c, "wait", immediately()).await?;
            ensure!(
                !t.status.state.is_terminal(),
                "wait task is {}",
                t.status.state
            );
            let canceled = c
                .cancel_task(t.id.as_str())
                .await
                .map_err(fail)?
                .into_inner();
            ensure!(
                canceled.status.state == TaskState::Canceled,
                "{}",
                canceled.status.state
            );
            let done = send_task(&c, "hello", SendOptions::default()).await?;
            match c.cancel_task(done.id.as_str()).await.map_err(agent_only) {
                Err(Some(A2aError::TaskNotCancelable { .. })) => Ok(()),
                other => Err(format!("cancel of a completed task: {other:?}")),
            }
        })
        .await;

    checks
        .run("resubscribe", async {
            let t = send_task(&c, "wait", immediately()).await?;
            let mut stream = c
                .resubscribe(t.id.as_str())
                .await
                .map_err(fail)?
                .into_inner();
            let first = stream.next().await;
            let Some(Ok(StreamResponse::Task(snapshot))) = &first else {
                let _ = c.cancel_task(t.id.as_str()).await;
                return Err(format!("the first item is not the task: {first:?}"));
            };
            ensure!(snapshot.id == t.id, "snapshot of {}", snapshot.id);
            c.cancel_task(t.id.as_str()).await.map_err(fail)?;
            let rest: Vec<StreamResponse> = stream.try_collect().await.map_err(fail)?;
            ensure!(
                rest.last().and_then(event_state) == Some(TaskState::Canceled),
                "does not end CANCELED: {}",
                describe(&rest)
            );
            Ok(())
        })
        .await;

    checks
        .run("resubscribe_errors", async {
            match c.resubscribe("no-such-task").await.map_err(agent_only) {
                Err(Some(A2aError::TaskNotFound { .. })) => {}
                Err(e) => return Err(format!("missing task: {e:?}")),
                Ok(_) => return Err("missing task: a stream".into()),
            }
            let done = send_task(&c, "hello", SendOptions::default()).await?;
            match c.resubscribe(done.id.as_str()).await.map_err(agent_only) {
                Err(Some(A2aError::UnsupportedOperation(_))) => Ok(()),
                Err(e) => Err(format!("finished task: {e:?}")),
                Ok(_) => Err("finished task: a stream".into()),
            }
        })
        .await;

    checks
        .run("push_config_crud", async {
            let t = send_task(&c, "wait", immediately()).await?;
            let id = t.id.to_string();
            let result = async {
                let set = c
                    .set_push_config(TaskPushNotificationConfig {
                        task_id: t.id.clone(),
                        url: "https://webhook.invalid/a2a".into(),
                        token: "tok".into(),
                        ..TaskPushNotificationConfig::default()
                    })
                    .await
                    .map_err(fail)?
                    .into_inner();
                ensure!(!set.id.is_empty(), "the server assigned no id: {:?}", set);
                ensure!(set.url == "https://webhook.invalid/a2a", "{:?}", set);
                let named = c
                    .set_push_config(TaskPushNotificationConfig {
                        task_id: t.id.clone(),
                        id: "named".into(),
                        url: "https://webhook.invalid/b".into(),
                        ..TaskPushNotificationConfig::default()
                    })
                    .await
                    .map_err(fail)?
                    .into_inner();
                ensure!(named.id.as_str() == "named", "{:?}", named);
                let got = c
                    .get_push_config(&id, set.id.as_str())
                    .await
                    .map_err(fail)?
                    .into_inner();
                ensure!(got.id == set.id && got.token == "tok", "get: {:?}", got);
                let listed = c.list_push_configs(&id).await.map_err(fail)?.into_inner();
                let ids: HashSet<&str> = listed.configs.iter().map(|x| x.id.as_str()).collect();
                ensure!(
                    ids == HashSet::from([set.id.as_str(), "named"]),
                    "list: {ids:?}"
                );
                c.delete_push_config(&id, set.id.as_str())
                    .await
                    .map_err(fail)?;
                c.delete_push_config(&id, set.id.as_str())
                    .await
                    .map_err(|e| format!("the second delete (idempotent): {}", fail(e)))?;
                match c
                    .get_push_config(&id, set.id.as_str())
                    .await
                    .map_err(agent_only)
                {
                    Err(Some(A2aError::TaskNotFound { .. })) => {}
                    other => return Err(format!("get after delete: {other:?}")),
                }
                let left = c.list_push_configs(&id).await.map_err(fail)?.into_inner();
                ensure!(left.configs.len() == 1, "after delete: {:?}", left.configs);
                Ok(())
            }
            .await;
            let _ = c.cancel_task(&id).await;
            result
        })
        .await;

    checks
        .run("extension_activated_and_echoed", async {
            let resp = ts
                .send_message("hello", SendOptions::default())
                .await
                .map_err(fail)?;
            ensure!(
                resp.activated_extensions() == [TimestampExtension::URI],
                "echoed A2A-Extensions {:?}",
                resp.activated_extensions()
            );
            let SendResult::Task(t) = resp.get_ref() else {
                return Err("expected a task".into());
            };
            let stamp = t.artifacts[0]
                .metadata_of::<TimestampExtension>()
                .map_err(|e| format!("timestamp metadata: {e}"))?;
            ensure!(
                stamp.as_deref().is_some_and(|s| s.ends_with('Z')),
                "artifact timestamp {stamp:?}"
            );
            let streamed = ts
                .stream_message("stream", SendOptions::default())
                .await
                .map_err(fail)?;
            ensure!(
                streamed.activated_extensions() == [TimestampExtension::URI],
                "stream: echoed {:?}",
                streamed.activated_extensions()
            );
            let events: Vec<StreamResponse> =
                streamed.into_inner().try_collect().await.map_err(fail)?;
            let stamped = events.iter().any(|e| {
                matches!(e, StreamResponse::ArtifactUpdate(a)
                    if a.artifact.has_metadata_of::<TimestampExtension>())
            });
            ensure!(stamped, "no stamped artifact in {}", describe(&events));
            // Without the extension nothing is activated.
            let plain = c
                .send_message("hello", SendOptions::default())
                .await
                .map_err(fail)?;
            ensure!(
                plain.activated_extensions().is_empty(),
                "echoed {:?}",
                plain.activated_extensions()
            );
            Ok(())
        })
        .await;

    checks
        .run("card_refresh_304", async {
            // The SDK serves a weak ETag and answers 304 to If-None-Match.
            let changed = c.refresh_card().await.map_err(fail)?;
            ensure!(!changed, "the unchanged card was reported as changed");
            Ok(())
        })
        .await;

    checks
        .run("extended_card_not_declared", async {
            match c.extended_card().await.map_err(agent_only) {
                Err(Some(A2aError::UnsupportedOperation(_))) => Ok(()),
                other => Err(format!(
                    "GetExtendedAgentCard without the capability: {other:?}"
                )),
            }
        })
        .await;

    checks.finish(&server.log_tail());
    drop(server);
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn our_json_rpc_client_against_the_python_sdk_server() {
    against_python_server(ProtocolBinding::JsonRpc).await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn our_rest_client_against_the_python_sdk_server() {
    against_python_server(ProtocolBinding::HttpJson).await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn our_grpc_client_against_the_python_sdk_server() {
    against_python_server(ProtocolBinding::Grpc).await;
}
