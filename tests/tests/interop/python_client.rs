//! The official Python SDK client (`a2a-sdk`, tests/interop/python/client_check.py) against our
//! server (the demo agent with the peer scripts' conventions, Timestamp enabled, push
//! notifications on, gRPC on a second port), on all three bindings: card, send, stream, get, list, cancel, resubscribe,
//! subscribe to a finished task, push-config CRUD, and the Timestamp extension activated and
//! echoed. The script prints one line per check and `N passed, M failed`.
//!
//! The peer is installed by the test (see `a2a_tests::interop`); the tests run under CI (and
//! with `--ignored`) and fail without python3 or the package index, and are ignored otherwise.

use a2a_runtime::test::TestServer;
use a2a_tests::client::interop_builder;
use a2a_tests::interop;

/// The checks that must pass (not be skipped).
const REQUIRED: &[&str] = &[
    "card",
    "send_blocking",
    "stream",
    "stream_echo",
    "get_task",
    "get_task_history_length",
    "get_task_not_found",
    "list_tasks",
    "return_immediately_and_cancel",
    "cancel_terminal",
    "input_required",
    "resubscribe",
    "subscribe_terminal",
    "push_config_crud",
    "ext_header_echo",
    "ext_header_echo_stream",
    "ext_timestamp_metadata",
    "ext_not_requested",
];

async fn python_client_against_our_server(binding: &str) {
    python_client_against(binding, None).await;
}

/// With `token`: the server requires it as a bearer token, and the client sends it.
async fn python_client_against(binding: &str, token: Option<&str>) {
    let python = interop::setup(interop::python).await;
    let mut builder = interop_builder().grpc_addr("127.0.0.1:0");
    if let Some(t) = token {
        builder =
            builder.authenticator(a2a_runtime::auth::StaticTokens::bearer().token("python", t));
    }
    let srv = TestServer::start(builder).await;
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(
        interop::interop_dir()
            .join("python")
            .join("client_check.py"),
    )
    .arg(srv.url())
    .args(["--binding", binding, "--timeout", "20", "-v"])
    .env("PYTHONUNBUFFERED", "1");
    if let Some(t) = token {
        cmd.args(["--token", t]);
    }
    let run = interop::run_script(cmd, "client_check.py").await;
    println!("{}", run.stdout);
    run.assert_all_passed(
        &format!("the Python SDK client ({binding}) against our server"),
        REQUIRED,
    );
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_python_sdk_client_over_json_rpc() {
    python_client_against_our_server("jsonrpc").await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_python_sdk_client_over_rest() {
    python_client_against_our_server("rest").await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_python_sdk_client_over_grpc() {
    python_client_against_our_server("grpc").await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_python_sdk_client_with_a_bearer_token_over_json_rpc() {
    python_client_against("jsonrpc", Some("py-token-0123456789")).await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_python_sdk_client_with_a_bearer_token_over_rest() {
    python_client_against("rest", Some("py-token-0123456789")).await;
}

/// Several agents in one server (#50): the Python SDK client at each agent's own URL (its card
/// at `/agents/{name}/.well-known/agent-card.json`), on every binding (gRPC: the tenant its
/// card's GRPC interface names).
#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_python_sdk_client_at_each_agent_of_a_server() {
    let python = interop::setup(interop::python).await;
    let server = a2a_runtime::server::MultiAgentServer::builder()
        .agent("first", interop_builder())
        .agent("second", interop_builder())
        .grpc_addr("127.0.0.1:0")
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    for name in ["first", "second"] {
        for binding in ["jsonrpc", "rest", "grpc"] {
            let mut cmd = tokio::process::Command::new(&python);
            cmd.arg(
                interop::interop_dir()
                    .join("python")
                    .join("client_check.py"),
            )
            .arg(format!("{}/agents/{name}", running.url()))
            .args(["--binding", binding, "--timeout", "20", "-v"])
            .env("PYTHONUNBUFFERED", "1");
            let run = interop::run_script(cmd, "client_check.py").await;
            println!("{}", run.stdout);
            run.assert_all_passed(
                &format!("the Python SDK client ({binding}) at agent {name}"),
                REQUIRED,
            );
        }
    }
    running.stop().await;
}
