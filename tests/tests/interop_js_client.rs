//! The official JS SDK client (`@a2a-js/sdk`, tests/interop/js/client_check.mjs) against our
//! server (the demo agent with the peer scripts' conventions, Timestamp enabled, push
//! notifications on), on both bindings: send, stream, get, cancel (and the rest of the script's
//! checks: list, resubscribe, push-config CRUD, the Timestamp extension echoed).
//!
//! The peer is installed by the test (see `interop_support`); without node/npm or the npm
//! registry the test is skipped, unless `CI` is set, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod client_support;
mod interop_support;

use client_support::{interop_builder, serve};

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
    let Some(dir) = interop_support::setup(interop_support::js_dir).await else {
        return;
    };
    let srv = serve(interop_builder()).await;
    let mut cmd = tokio::process::Command::new("node");
    cmd.current_dir(&dir)
        .arg(dir.join("client_check.mjs"))
        .arg(&srv.url)
        .args(["--binding", binding, "--timeout", "20", "-v"]);
    let run = interop_support::run_script(cmd, "client_check.mjs").await;
    println!("{}", run.stdout);
    run.assert_all_passed(
        &format!("the JS SDK client ({binding}) against our server"),
        REQUIRED,
    );
}

#[tokio::test]
async fn the_js_sdk_client_over_json_rpc() {
    js_client_against_our_server("jsonrpc").await;
}

#[tokio::test]
async fn the_js_sdk_client_over_rest() {
    js_client_against_our_server("rest").await;
}
