#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Runs the `extensions` example binary and checks what it shows.

use std::process::Command;

#[test]
fn the_extensions_example_runs_and_shows_each_step() {
    let out = Command::new(env!("CARGO_BIN_EXE_extensions"))
        .output()
        .expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    for expected in [
        "declared: https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1 (required: false)",
        "declared: https://example.com/ext/locale/v1 (required: false)",
        "declared: https://example.com/ext/contract/v1 (required: true)",
        "contract params: terms 2026-01 at https://example.com/terms/2026-01",
        "refused: -32008 EXTENSION_SUPPORT_REQUIRED",
        "echoed A2A-Extensions: https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1, https://example.com/ext/locale/v1, https://example.com/ext/contract/v1",
        "artifact: bonjour, world",
        "artifact timestamp (github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp): 20",
        "task locale: fr",
        "task received_at: 20",
        "invalid locale: -32602",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    assert_eq!(stdout.lines().last(), Some("ok"));
}
