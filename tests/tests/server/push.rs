//! Push-notification config CRUD over real HTTP on both bindings (#51-#55) and the per-task
//! limit. Webhook URLs point at a closed loopback port: nothing here may leave the machine.

use a2a_runtime::server::A2aServer;
use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::{Value, json};

const HOOK: &str = "http://127.0.0.1:9/hook";

async fn push_server() -> (TestServer, Control) {
    let (agent, control) = script_agent();
    let mut c = agent_card("push");
    c.capabilities.push_notifications = Some(true);
    (
        TestServer::start(
            A2aServer::builder()
                .card(c)
                .executor(agent)
                .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true)),
        )
        .await,
        control,
    )
}

fn configs(list: &Value) -> Vec<String> {
    list["configs"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| c["id"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// #52-#55: create assigns an id and echoes the config; get returns it; list holds every
/// config; delete removes it and is idempotent; a deleted config is TaskNotFound.
#[tokio::test]
async fn push_config_crud_52_to_55() {
    let (server, _control) = push_server().await;
    for binding in Binding::BOTH {
        let task_id = id(&server.send_task(binding, msg("ask")).await);
        let created = server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "url": HOOK, "token": "tok-1",
                       "authentication": {"scheme": "Bearer", "credentials": "s3cr3t"}}),
            )
            .await;
        let cfg_id = created["id"].as_str().expect("an assigned id").to_owned();
        assert!(!cfg_id.is_empty());
        assert_eq!(created["taskId"], task_id.as_str());
        assert_eq!(created["url"], HOOK);
        assert_eq!(created["token"], "tok-1");
        assert_eq!(created["authentication"]["scheme"], "Bearer");

        let chosen = server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "mine", "url": HOOK}),
            )
            .await;
        assert_eq!(chosen["id"], "mine", "a client-chosen config id is kept");

        let got = server
            .ok(
                binding,
                "GetTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": cfg_id}),
            )
            .await;
        assert_eq!(got, created);

        let list = server
            .ok(
                binding,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id}),
            )
            .await;
        assert_eq!(configs(&list), [cfg_id.as_str(), "mine"]);

        for _ in 0..2 {
            let deleted = server
                .ok(
                    binding,
                    "DeleteTaskPushNotificationConfig",
                    json!({"taskId": task_id, "id": cfg_id}),
                )
                .await;
            assert_eq!(deleted, json!({}), "Delete returns Empty, idempotently");
        }
        server
            .err(
                binding,
                "GetTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": cfg_id}),
            )
            .await
            .assert_task_not_found();
        let list = server
            .ok(
                binding,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id}),
            )
            .await;
        assert_eq!(configs(&list), ["mine"]);
    }
}

/// #53 #55 and §3.7: every push-config operation on an unknown task is TaskNotFound.
#[tokio::test]
async fn push_config_unknown_task_is_not_found() {
    let (server, _control) = push_server().await;
    for binding in Binding::BOTH {
        let calls = [
            (
                "CreateTaskPushNotificationConfig",
                json!({"taskId": "no-such-task", "url": HOOK}),
            ),
            (
                "GetTaskPushNotificationConfig",
                json!({"taskId": "no-such-task", "id": "c"}),
            ),
            (
                "ListTaskPushNotificationConfigs",
                json!({"taskId": "no-such-task"}),
            ),
            (
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": "no-such-task", "id": "c"}),
            ),
        ];
        for (op, params) in calls {
            server
                .err(binding, op, params)
                .await
                .assert_task_not_found();
        }
    }
}

/// #51: with `pushNotifications` off (absent), all four operations are
/// PushNotificationNotSupported (-32003 / 400 FAILED_PRECONDITION) — even for a real task.
#[tokio::test]
async fn push_off_is_not_supported_for_all_four_51() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let task_id = id(&server.send_task(binding, msg("ask")).await);
        let calls = [
            (
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "url": HOOK}),
            ),
            (
                "GetTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "c"}),
            ),
            (
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id}),
            ),
            (
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "c"}),
            ),
        ];
        for (op, params) in calls {
            server.err(binding, op, params).await.assert_a2a(
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                -32003,
                400,
                "FAILED_PRECONDITION",
            );
        }
        // A webhook in SendMessage's configuration is refused the same way.
        let params = with_config(
            msg("hi"),
            json!({"taskPushNotificationConfig": {"url": HOOK}}),
        );
        server.err(binding, "SendMessage", params).await.assert_a2a(
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            -32003,
            400,
            "FAILED_PRECONDITION",
        );
    }
}

/// Limits: at most 10 configs per task; the 11th is refused, replacing an existing one is not.
#[tokio::test]
async fn at_most_ten_push_configs_per_task() {
    let (server, _control) = push_server().await;
    for binding in Binding::BOTH {
        let task_id = id(&server.send_task(binding, msg("ask")).await);
        for i in 0..10 {
            server
                .ok(
                    binding,
                    "CreateTaskPushNotificationConfig",
                    json!({"taskId": task_id, "id": format!("c{i}"), "url": HOOK}),
                )
                .await;
        }
        let err = server
            .err(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "url": HOOK}),
            )
            .await;
        match binding {
            Binding::JsonRpc => assert_eq!(err.code, -32602, "{}", err.body),
            Binding::Rest => assert_eq!(err.http, 400, "{}", err.body),
        }
        assert!(err.message.contains("10"), "{}", err.message);
        let replaced = server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "id": "c3", "url": "http://127.0.0.1:9/other"}),
            )
            .await;
        assert_eq!(replaced["url"], "http://127.0.0.1:9/other");
        let list = server
            .ok(
                binding,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id}),
            )
            .await;
        assert_eq!(configs(&list).len(), 10);
    }
}

/// §3.1: a webhook given in SendMessage's configuration is registered for the new task.
#[tokio::test]
async fn webhook_in_send_message_configuration_is_registered() {
    let (server, _control) = push_server().await;
    for binding in Binding::BOTH {
        let params = with_config(
            msg("ask"),
            json!({"taskPushNotificationConfig": {"url": HOOK, "token": "t"}}),
        );
        let task_id = id(&server.send_task(binding, params).await);
        let list = server
            .ok(
                binding,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id}),
            )
            .await;
        let cs = list["configs"].as_array().unwrap();
        assert_eq!(cs.len(), 1, "{list}");
        assert_eq!(cs[0]["taskId"], task_id.as_str());
        assert_eq!(cs[0]["url"], HOOK);
        assert!(!cs[0]["id"].as_str().unwrap().is_empty());
    }
}

/// ListTaskPushNotificationConfigs pages: `pageSize` configs per page, oldest first, with a
/// `nextPageToken` until the last page; a token the server did not issue is InvalidParams.
#[tokio::test]
async fn push_configs_are_listed_in_pages() {
    let (server, _control) = push_server().await;
    for binding in Binding::BOTH {
        let task_id = id(&server.send_task(binding, msg("ask")).await);
        for i in 0..3 {
            server
                .ok(
                    binding,
                    "CreateTaskPushNotificationConfig",
                    json!({"taskId": task_id, "id": format!("p{i}"), "url": HOOK}),
                )
                .await;
        }
        let first = server
            .ok(
                binding,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id, "pageSize": 2}),
            )
            .await;
        assert_eq!(configs(&first), ["p0", "p1"], "{first}");
        let token = first["nextPageToken"].as_str().unwrap().to_owned();
        assert!(!token.is_empty());
        let second = server
            .ok(
                binding,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id, "pageSize": 2, "pageToken": token}),
            )
            .await;
        assert_eq!(configs(&second), ["p2"], "{second}");
        assert!(second["nextPageToken"].as_str().unwrap_or("").is_empty());
        server
            .err(
                binding,
                "ListTaskPushNotificationConfigs",
                json!({"taskId": task_id, "pageToken": "forged"}),
            )
            .await
            .assert_invalid("pageToken");
    }
}
