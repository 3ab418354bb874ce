//! Every operation on both bindings refuses every wrong credential, and keeps tenants and
//! owners apart.

use std::collections::BTreeMap;

use a2a_runtime::test::{Binding, TestServer};
use serde_json::{Value, json};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_on_both_bindings_refuses_every_wrong_credential() {
    let k1 = IssuerKey::new("k1");
    let stranger = IssuerKey::new("k1");
    let unknown = IssuerKey::new("k-unknown");
    let jwks = JwksServer::start(vec![k1.jwk.clone()]).await;
    let srv = guarded_server(jwks.jwks()).await;
    let base = srv.url();
    let server = TestServer::remote(&base);
    let http = server.http().clone();
    let jane = format!(
        "Bearer {}",
        k1.token("jane", 600, json!({"tenants": ["acme"]}))
    );

    // The card declares what is enforced.
    let public: Value = http
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        public["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        public["securitySchemes"]["jwt"]["httpAuthSecurityScheme"]["bearerFormat"],
        "JWT"
    );
    assert_eq!(
        public["securityRequirements"],
        json!([{"schemes": {"bearer": {}}}, {"schemes": {"jwt": {}}}])
    );

    let refused_credentials: Vec<(&str, Option<String>)> = vec![
        ("no credential", None),
        ("a wrong token", Some("Bearer tok-nobody".into())),
        ("garbage", Some("Basic !!!garbage!!!".into())),
        (
            "an expired JWT",
            Some(format!(
                "Bearer {}",
                k1.token("jane", -60, json!({"tenants": ["acme"]}))
            )),
        ),
        (
            "a JWT signed by an unknown key",
            Some(format!(
                "Bearer {}",
                unknown.token("jane", 600, json!({"tenants": ["acme"]}))
            )),
        ),
        (
            "a JWT with a known kid signed by another key",
            Some(format!(
                "Bearer {}",
                stranger.token("jane", 600, json!({"tenants": ["acme"]}))
            )),
        ),
        (
            "a JWT with alg none",
            Some(format!("Bearer {}", alg_none_token("jane"))),
        ),
        (
            "a JWT for another audience",
            Some(format!(
                "Bearer {}",
                k1.token("jane", 600, json!({"aud": "elsewhere"}))
            )),
        ),
    ];

    let mut cases = 0;
    for binding in [Binding::JsonRpc, Binding::Rest] {
        // Alice's task in acme; jane's (JWT) task in acme; bob's own task, no tenant.
        let (task, cfg) = waiting_task(&server, binding, "acme", &format!("Bearer {ALICE}")).await;
        let (jane_task, _) = waiting_task(&server, binding, "acme", &jane).await;
        let missing = "task-that-does-not-exist";

        // 1. Every refused credential: 401 with a challenge, one body for all of them.
        let mut first_body: BTreeMap<&str, String> = BTreeMap::new();
        for (what, auth) in &refused_credentials {
            for (op, params) in operations(&task, &cfg) {
                let r = call(&server, binding, op, params, Some("acme"), auth.as_deref()).await;
                assert_eq!(r.status, 401, "{binding:?} {op} with {what}: {r:?}");
                assert!(
                    !r.sse,
                    "{binding:?} {op} with {what}: refused before any stream"
                );
                assert_eq!(
                    r.www_authenticate.as_deref(),
                    Some("Bearer realm=\"a2a\""),
                    "{binding:?} {op} with {what}"
                );
                assert_eq!(
                    r.reason(),
                    Some("UNAUTHENTICATED"),
                    "{binding:?} {op} with {what}: {r:?}"
                );
                if binding == Binding::JsonRpc {
                    assert_eq!(r.code(), -31401);
                    assert_eq!(r.body["id"], Value::Null);
                } else {
                    assert_eq!(r.error().unwrap()["status"], "UNAUTHENTICATED");
                }
                let body = first_body.entry(op).or_insert_with(|| r.text.clone());
                assert_eq!(
                    body, &r.text,
                    "{binding:?} {op}: the same answer for {what}"
                );
                cases += 1;
            }
        }

        // 2. Another principal (bob: a bearer token; and jane's JWT for alice's task): what is
        //    not theirs is not found, exactly as a task that does not exist.
        for (who, auth, tenant) in [
            ("bob", format!("Bearer {BOB}"), None),
            ("bob in acme", format!("Bearer {BOB}"), Some("acme")),
            ("jane", jane.clone(), Some("acme")),
        ] {
            for (op, params) in operations(&task, &cfg) {
                let r = call(&server, binding, op, params, tenant, Some(&auth)).await;
                if addresses_task(op) {
                    let (_, missing_params) = operations(missing, &cfg)
                        .into_iter()
                        .find(|(o, _)| *o == op)
                        .unwrap();
                    let absent =
                        call(&server, binding, op, missing_params, tenant, Some(&auth)).await;
                    assert_eq!(
                        r.reason(),
                        Some("TASK_NOT_FOUND"),
                        "{binding:?} {op} as {who}: {r:?}"
                    );
                    assert_eq!(r.status, absent.status, "{binding:?} {op} as {who}");
                    assert_eq!(
                        r.text,
                        absent.text.replace(missing, &task),
                        "{binding:?} {op} as {who}: identical to a missing task"
                    );
                } else if tenant == Some("acme") && who.starts_with("bob") {
                    assert_eq!(
                        r.status,
                        if binding == Binding::Rest { 403 } else { 200 },
                        "{r:?}"
                    );
                    assert_eq!(
                        r.reason(),
                        Some("PERMISSION_DENIED"),
                        "{binding:?} {op} as {who}: {r:?}"
                    );
                } else {
                    // Their own view: none of alice's tasks in it.
                    let v = result(binding, &r);
                    assert!(
                        !v.to_string().contains(&task),
                        "{binding:?} {op} as {who}: {v}"
                    );
                }
                cases += 1;
            }
        }

        // 3. Alice in a tenant she does not belong to, and alice's id under another tenant.
        for tenant in ["globex", "ACME"] {
            for (op, params) in operations(&task, &cfg) {
                let r = call(
                    &server,
                    binding,
                    op,
                    params,
                    Some(tenant),
                    Some(&format!("Bearer {ALICE}")),
                )
                .await;
                if addresses_task(op) {
                    assert_eq!(
                        r.reason(),
                        Some("TASK_NOT_FOUND"),
                        "{binding:?} {op} in {tenant}: {r:?}"
                    );
                    assert_eq!(r.status, if binding == Binding::Rest { 404 } else { 200 });
                } else {
                    assert_eq!(
                        r.reason(),
                        Some("PERMISSION_DENIED"),
                        "{binding:?} {op} in {tenant}: {r:?}"
                    );
                }
                cases += 1;
            }
            // A new task in a tenant she does not belong to is refused too.
            let r = call(
                &server,
                binding,
                "SendMessage",
                msg("hi", None),
                Some(tenant),
                Some(&format!("Bearer {ALICE}")),
            )
            .await;
            assert_eq!(r.reason(), Some("PERMISSION_DENIED"), "{r:?}");
            cases += 1;
        }
        // Alice's task is not found outside its tenant either.
        let r = call(
            &server,
            binding,
            "GetTask",
            json!({"id": task}),
            None,
            Some(&format!("Bearer {ALICE}")),
        )
        .await;
        assert_eq!(r.reason(), Some("TASK_NOT_FOUND"), "{r:?}");
        cases += 1;

        // 4. The rightful principals succeed at everything.
        for (who, auth, own) in [
            ("alice", format!("Bearer {ALICE}"), task.clone()),
            ("jane", jane.clone(), jane_task.clone()),
        ] {
            let (t, c) = if who == "alice" {
                (own.clone(), cfg.clone())
            } else {
                let r = call(
                    &server,
                    binding,
                    "CreateTaskPushNotificationConfig",
                    json!({"taskId": own, "url": "https://hooks.example.com/a2a"}),
                    Some("acme"),
                    Some(&auth),
                )
                .await;
                (
                    own.clone(),
                    result(binding, &r)["id"].as_str().unwrap().to_owned(),
                )
            };
            // Cancel last: the task must stay open for the others.
            let mut ops = operations(&t, &c);
            let cancel = ops.remove(4);
            ops.push(cancel);
            for (op, params) in ops {
                let r = call(&server, binding, op, params, Some("acme"), Some(&auth)).await;
                assert_eq!(r.status, 200, "{binding:?} {op} as {who}: {r:?}");
                assert!(r.error().is_none(), "{binding:?} {op} as {who}: {r:?}");
                if op == "SubscribeToTask" || op == "SendStreamingMessage" {
                    assert!(r.sse, "{binding:?} {op} as {who}: {r:?}");
                    assert!(r.text.contains(&t), "{binding:?} {op} as {who}: {}", r.text);
                }
                if op == "GetTask" || op == "tasks/mine" || op == "ListTasks" {
                    assert!(r.text.contains(&t), "{binding:?} {op} as {who}: {}", r.text);
                }
                if op == "GetExtendedAgentCard" {
                    let card = result(binding, &r);
                    assert_eq!(card["name"], "guarded (extended)");
                    assert_eq!(card["capabilities"]["extensions"][0]["uri"], EXT, "{card}");
                    assert!(card["securitySchemes"]["bearer"].is_object(), "{card}");
                    assert!(
                        !card["supportedInterfaces"].as_array().unwrap().is_empty(),
                        "{card}"
                    );
                }
                cases += 1;
            }
        }
    }
    println!("{cases} cases refused, not found or served as they must be");
    assert_eq!(cases, 366, "every case of the matrix ran");
    drop(jwks);
}
