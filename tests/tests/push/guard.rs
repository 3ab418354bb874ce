//! Config validation naming the field, and the URL guard's corpus refused at registration and at
//! connect time, with a loopback canary that must see nothing.

use std::sync::Arc;

use a2a_runtime::protocol::Principal;
use a2a_runtime::server::A2aServer;
use a2a_runtime::store::{
    InMemoryPushConfigStore, InMemoryPushOutbox, InMemoryTaskStore, PushConfigStore, Scope,
};
use a2a_runtime::test::*;
use a2a_runtime::types::TaskPushNotificationConfig;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::{Value, json};

use super::*;

/// Every malformed field is InvalidParams naming it, on both bindings, for
/// CreateTaskPushNotificationConfig and inline in SendMessage; an upper-case scheme is fine.
#[tokio::test]
async fn every_malformed_field_is_invalid_params_naming_it_on_both_bindings() {
    let (server, _sender, _control) = push_server(guarded(Arc::new(TestDns::default()))).await;
    let good = "https://example.com/hook";
    let huge = format!("https://example.com/{}", "a".repeat(1 << 20));
    let cases: Vec<(Value, &str)> = vec![
        (json!({"url": ""}), "url"),
        (json!({"url": "http://exa mple.com/"}), "url"),
        (json!({"url": huge}), "url"),
        (json!({"url": "ftp://example.com/"}), "url"),
        (json!({"url": "example.com/hook"}), "url"),
        (json!({"url": "http://user:pw@example.com/"}), "url"),
        (json!({"url": "https://example.com/\r\nX-Evil: 1"}), "url"),
        (json!({"url": good, "token": "a\r\nb"}), "token"),
        (json!({"url": good, "token": "t".repeat(5000)}), "token"),
        (
            json!({"url": good, "authentication": {"scheme": "Bearer\r\nX: y"}}),
            "authentication.scheme",
        ),
        (
            json!({"url": good, "authentication": {"scheme": ""}}),
            "authentication.scheme",
        ),
        (
            json!({"url": good, "authentication": {"scheme": "Bearer", "credentials": "a\nb"}}),
            "authentication.credentials",
        ),
        (
            json!({"url": good, "authentication": {"scheme": "Bearer", "credentials": "x".repeat(5000)}}),
            "authentication.credentials",
        ),
    ];
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("ask")).await;
        let task_id = id(&task);
        for (config, field) in &cases {
            let mut c = config.clone();
            c["taskId"] = json!(task_id);
            server
                .err(binding, "CreateTaskPushNotificationConfig", c)
                .await
                .assert_invalid(field);
            let prefixed = format!("configuration.taskPushNotificationConfig.{field}");
            server
                .err(binding, "SendMessage", inline(msg("hello"), config.clone()))
                .await
                .assert_invalid(&prefixed);
        }
        let ok = server
            .ok(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task_id, "url": "HTTPS://example.com/hook"}),
            )
            .await;
        assert!(!ok["id"].as_str().unwrap().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// The URL guard
// ---------------------------------------------------------------------------------------------

/// Webhook URLs the guard must refuse (`{p}` is the canary's port).
fn corpus(p: u16) -> Vec<String> {
    let hosts = [
        // Loopback in every spelling the URL standard reads.
        "127.0.0.1",
        "127.1",
        "127.0.1",
        "2130706433",
        "0x7f000001",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "0177.1",
        "017700000001",
        "127.000.000.001",
        "127.255.255.254",
        "0x7F.0x00.0x00.0x01",
        // This network / unspecified.
        "0.0.0.0",
        "0",
        "0x0",
        "0.1.2.3",
        // Private.
        "10.0.0.1",
        "10.255.255.255",
        "012.0.0.1",
        "167772161",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.0.1",
        "192.168.1.1",
        "3232235777",
        "0xc0a80101",
        // Link-local and cloud metadata.
        "169.254.169.254",
        "169.254.0.1",
        "0xa9fea9fe",
        "2852039166",
        // CGNAT, documentation, benchmarking, IETF, AS112/AMT/6to4 relay, multicast, reserved.
        "100.64.0.1",
        "100.127.255.254",
        "192.0.2.1",
        "198.51.100.1",
        "203.0.113.1",
        "198.18.0.1",
        "198.19.255.254",
        "192.0.0.1",
        "192.0.0.170",
        "192.31.196.1",
        "192.52.193.1",
        "192.88.99.1",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        // IPv6.
        "[::1]",
        "[::]",
        "[0:0:0:0:0:0:0:1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::ffff:10.0.0.1]",
        "[::ffff:169.254.169.254]",
        "[::127.0.0.1]",
        "[64:ff9b::127.0.0.1]",
        "[64:ff9b::a9fe:a9fe]",
        "[64:ff9b:1::1]",
        "[fe80::1]",
        "[fc00::1]",
        "[fd00::1]",
        "[fec0::1]",
        "[ff02::1]",
        "[2001:db8::1]",
        "[2001::1]",
        "[2002:7f00:1::]",
        "[100::1]",
        "[3fff::1]",
        "[5f00::1]",
        // Local names.
        "localhost",
        "LOCALHOST",
        "localhost.",
        "a.localhost",
        "foo.bar.localhost",
        "metadata.google.internal",
        "metadata",
        "something.internal",
        "printer.local",
        "router.home.arpa",
        "1.0.0.127.in-addr.arpa",
        // Names that resolve to refused addresses (through the test's resolver).
        "loopback.example.com",
        "127.0.0.1.nip.io",
        "mixed.example.com",
        "v6loop.example.com",
        "mapped.example.com",
        "private.example.com",
        "meta.example.com",
        "cgnat.example.com",
        "ula.example.com",
    ];
    let mut urls: Vec<String> = hosts
        .iter()
        .map(|h| format!("http://{h}:{p}/hook"))
        .collect();
    urls.extend([
        // Userinfo tricks.
        format!("http://example.com@127.0.0.1:{p}/"),
        format!("http://user:pass@example.com:{p}/"),
        format!("http://a@b@127.0.0.1:{p}/"),
        format!("http://127.0.0.1:{p}#@example.com/"),
        format!("http://127.0.0.1:{p}\\@example.com/"),
        // Well-known non-web ports on a public host.
        "http://example.com:22/".into(),
        "http://example.com:25/".into(),
        "http://example.com:53/".into(),
        "https://example.com:445/".into(),
        "http://example.com:0/".into(),
        // Other schemes.
        format!("ftp://127.0.0.1:{p}/"),
        "file:///etc/passwd".into(),
        format!("gopher://127.0.0.1:{p}/"),
        format!("dict://127.0.0.1:{p}/"),
        "javascript:alert(1)".into(),
    ]);
    urls
}

/// The corpus is refused at registration on both bindings, as a config and inline.
#[tokio::test]
async fn the_guard_refuses_the_whole_corpus_at_registration() {
    let canary = Receiver::start().await;
    let urls = corpus(canary.port());
    assert!(urls.len() >= 80, "{}", urls.len());
    let (server, sender, _control) = push_server(guarded(Arc::new(TestDns::default()))).await;
    for binding in Binding::BOTH {
        let task_id = id(&server.send_task(binding, msg("ask")).await);
        for url in &urls {
            let e = server
                .err(
                    binding,
                    "CreateTaskPushNotificationConfig",
                    json!({"taskId": task_id, "url": url}),
                )
                .await;
            e.assert_invalid("url");
            let e = server
                .err(
                    binding,
                    "SendMessage",
                    inline(msg("hello"), json!({"url": url})),
                )
                .await;
            e.assert_invalid("configuration.taskPushNotificationConfig.url");
        }
    }
    assert!(m(&sender).refused_configs > 0);
    assert_eq!(canary.total(), 0, "the canary saw nothing");
}

/// The same corpus, stored behind the guard's back (as if registered before a DNS change, or
/// by an older version), is refused when the sender connects; so is a name that resolved to a
/// public address at registration and to loopback later (DNS rebinding). The canary sees
/// nothing, and every delivery is dead.
#[tokio::test]
async fn the_guard_refuses_the_whole_corpus_at_connect_time() {
    let canary = Receiver::start().await;
    let dns = Arc::new(TestDns::default());
    let store = Arc::new(InMemoryPushConfigStore::new());
    let tasks = InMemoryTaskStore::new()
        .with_push_configs(store.clone())
        .with_push_outbox(Arc::new(InMemoryPushOutbox::new()));
    let (agent, _control) = script_agent();
    let (server, sender) = start(
        A2aServer::builder()
            .card(agent_card("guarded"))
            .executor(agent)
            .task_store(Arc::new(tasks))
            .push_config_store(store.clone())
            .push(guarded(dns.clone())),
    )
    .await;
    let task_id = id(&server.send_task(Binding::JsonRpc, msg("ask")).await);
    // Rebinding: accepted at registration (a public address then).
    let rebind = format!("http://rebind.example.com:{}/hook", canary.port());
    server
        .ok(
            Binding::JsonRpc,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "rebind", "url": rebind}),
        )
        .await;
    let scope = Scope::new("", Principal::ANONYMOUS_ID);
    let urls = corpus(canary.port());
    for (i, url) in urls.iter().enumerate() {
        let config = TaskPushNotificationConfig {
            id: format!("c{i}").into(),
            task_id: task_id.clone().into(),
            url: url.clone(),
            ..TaskPushNotificationConfig::default()
        };
        store.put(&scope, &config).await.unwrap();
    }
    let configs = urls.len() as u64 + 1;
    let task = server
        .send_task(Binding::JsonRpc, msg_to(&task_id, "Ada"))
        .await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    // The continued turn's events (an artifact and the completion), to every config.
    eventually("every delivery settled", || m(&sender).dead >= 2 * configs).await;
    let metrics = m(&sender);
    assert_eq!(metrics.delivered, 0, "{metrics:?}");
    // All but the 9 URLs that do not even parse as webhooks (userinfo, backslash, schemes).
    assert!(metrics.blocked >= 2 * (configs - 9), "{metrics:?}");
    let dead = sender.dead_deliveries(10_000).await.unwrap();
    let rebound: Vec<_> = dead
        .iter()
        .filter(|d| d.new.config_id.as_str() == "rebind")
        .collect();
    assert!(!rebound.is_empty());
    assert!(
        rebound
            .iter()
            .all(|d| d.last_error.contains("blocked by the URL guard")),
        "{rebound:?}"
    );
    assert_eq!(canary.total(), 0, "the canary saw nothing");
}
