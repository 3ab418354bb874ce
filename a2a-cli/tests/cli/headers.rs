//! What the command line sends reaches the agent: `call` and extensions by URI, `--header` and
//! `--bearer` on every binding.

use a2a_examples::{DemoAgent, Locale, demo_card};
use a2a_runtime::auth::StaticTokens;
use a2a_runtime::extension::{Extension as _, ExtensionMethod, TimestampExtension};
use a2a_runtime::server::A2aServer;
use serde_json::json;

use super::*;

#[tokio::test]
async fn call_and_extensions_by_uri() {
    let agent = agent().await;
    for binding in BINDINGS {
        let call = [
            "--binding",
            binding,
            "--json",
            "call",
            EchoMethod::METHOD,
            r#"{"q":1}"#,
            "--uri",
            EchoParams::URI,
            "--path",
            EchoMethod::REST_PATH,
        ];
        if binding == "grpc" {
            let out = a2a(&agent.url, &call).await;
            assert_eq!(out.code, 8, "no extension methods on gRPC: {out:?}");
            assert!(out.stderr.contains("no gRPC form"), "{out:?}");
        } else {
            assert_eq!(
                a2a(&agent.url, &call).await.ok().json(),
                [json!({"echo": {"q": 1}})],
                "{binding}"
            );
        }

        // An extension activated by URI: the agent stamps its artifacts.
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "--extension",
                TimestampExtension::URI,
                "send",
                "hi",
            ],
        )
        .await
        .ok();
        let artifact = &out.json()[0]["task"]["artifacts"][0];
        assert!(
            artifact["metadata"][TimestampExtension::METADATA_KEY].is_string(),
            "{artifact}"
        );
        // Locale validates on the server only: the client sends what it is given.
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--extension",
                Locale::URI,
                "send",
                "hi",
                "--metadata",
                &json!({ Locale::URI: "xx" }).to_string(),
            ],
        )
        .await;
        assert_eq!(out.code, 7, "the agent refused it: {out:?}");
        assert!(
            out.stderr.contains("-32602") && out.stderr.contains("not supported"),
            "{out:?}"
        );
    }
    let out = a2a(
        &agent.url,
        &[
            "--binding",
            "rest",
            "call",
            EchoMethod::METHOD,
            "--uri",
            EchoParams::URI,
        ],
    )
    .await;
    assert_eq!(out.code, 2, "REST needs --path: {out:?}");
}

/// A raw server answering every connection with `response`.

#[tokio::test]
async fn headers_and_bearer_tokens_reach_the_agent_on_every_binding() {
    let agent = agent().await;
    let guarded = A2aServer::builder()
        .card(demo_card())
        .executor(DemoAgent)
        .authenticator(StaticTokens::bearer().token("cli", "tok-cli"))
        .linked_extensions(false)
        .grpc_addr("127.0.0.1:0")
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    for binding in BINDINGS {
        // --header (twice, one of them the probe), with --extension so the spy runs.
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "-H",
                "X-Other: 1",
                "--header",
                &format!("{PROBE}: {binding} probe"),
                "--extension",
                HeaderSpy::URI,
                "send",
                "hello",
            ],
        )
        .await
        .ok();
        assert_eq!(
            out.json()[0]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
        assert_eq!(
            agent.spy.lock().unwrap().pop(),
            Some(format!("{PROBE}={binding} probe")),
            "{binding}"
        );

        // An agent that requires a bearer token: refused without one or with a wrong one.
        let send = |extra: &'static [&'static str]| {
            let mut args = vec!["--binding", binding, "--json"];
            args.extend_from_slice(extra);
            args.extend_from_slice(&["send", "hello"]);
            let url = guarded.url();
            async move { a2a(&url, &args).await }
        };
        let out = send(&[]).await;
        assert_eq!(out.code, 9, "{binding}: no credential: {out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        let out = send(&["--bearer", "wrong"]).await;
        assert_eq!(out.code, 9, "{binding}: a wrong credential: {out:?}");
        let out = send(&["--bearer", "tok-cli"]).await.ok();
        assert_eq!(
            out.json()[0]["task"]["artifacts"][0]["parts"][0]["text"],
            "echo: hello",
            "{binding}"
        );
        // The token also comes from the environment.
        let mut c = command(
            &guarded.url(),
            &["--binding", binding, "get", "no-such-task"],
        );
        c.env("A2A_BEARER", "tok-cli");
        let out = finish(c.spawn().unwrap()).await;
        assert_eq!(out.code, 7, "authenticated, then TaskNotFound: {out:?}");
    }
}
