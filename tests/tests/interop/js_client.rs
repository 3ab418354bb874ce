//! The official JS SDK client (`@a2a-js/sdk`, tests/interop/js/client_check.mjs) against our
//! server (the demo agent with the peer scripts' conventions, Timestamp enabled, push
//! notifications on), on both bindings: send, stream, get, cancel (and the rest of the script's
//! checks: list, resubscribe, push-config CRUD, the Timestamp extension echoed).
//!
//! The peer is installed by the test (see `a2a_tests::interop`); the tests run under CI (and
//! with `--ignored`) and fail without node/npm or the npm registry, and are ignored otherwise.

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
    "get_task_not_found",
    "list_tasks",
    "return_immediately_and_cancel",
    "cancel_terminal",
    "input_required",
    "resubscribe",
    "subscribe_terminal",
    "push_config_crud",
    "ext_header_echo",
];

async fn js_client_against_our_server(binding: &str) {
    js_client_against(binding, None).await;
}

/// With `token`: the server requires it as a bearer token, and the client sends it.
async fn js_client_against(binding: &str, token: Option<&str>) {
    let dir = interop::setup(interop::js_dir).await;
    let mut builder = interop_builder();
    if let Some(t) = token {
        builder = builder.authenticator(a2a_runtime::auth::StaticTokens::bearer().token("js", t));
    }
    let srv = TestServer::start(builder).await;
    let mut cmd = tokio::process::Command::new("node");
    cmd.current_dir(&dir)
        .arg(dir.join("client_check.mjs"))
        .arg(srv.url())
        .args(["--binding", binding, "--timeout", "20", "-v"]);
    if let Some(t) = token {
        cmd.args(["--token", t]);
    }
    let run = interop::run_script(cmd, "client_check.mjs").await;
    println!("{}", run.stdout);
    run.assert_all_passed(
        &format!("the JS SDK client ({binding}) against our server"),
        REQUIRED,
    );
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_js_sdk_client_over_json_rpc() {
    js_client_against_our_server("jsonrpc").await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_js_sdk_client_over_rest() {
    js_client_against_our_server("rest").await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_js_sdk_client_with_a_bearer_token_over_json_rpc() {
    js_client_against("jsonrpc", Some("js-token-0123456789")).await;
}

#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_js_sdk_client_with_a_bearer_token_over_rest() {
    js_client_against("rest", Some("js-token-0123456789")).await;
}
