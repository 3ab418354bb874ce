#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Runs the `secure-passport` and `traceability` example binaries and checks what they show.

use std::process::Command;

fn run(exe: &str) -> String {
    let out = Command::new(exe).output().expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert_eq!(stdout.lines().last(), Some("ok"), "{stdout}");
    stdout
}

fn assert_shows(stdout: &str, expected: &[&str]) {
    for e in expected {
        assert!(stdout.contains(e), "missing {e:?} in:\n{stdout}");
    }
}

#[test]
fn the_secure_passport_example_runs_and_shows_what_the_agent_saw() {
    let out = run(env!("CARGO_BIN_EXE_secure-passport"));
    assert_shows(
        &out,
        &[
            "declared: https://github.com/a2aproject/a2a-samples/tree/main/samples/python/extensions/secure-passport params {\"supportedStateKeys\":[\"user_preferred_currency\",\"loyalty_tier\"]}",
            "passport on the wire: {\"clientId\":\"a2a://orchestrator-agent.com\",\"sessionId\":\"travel-session-xyz\",\"signature\":\"MOCK-SIG-123456...\",\"state\":{",
            "signed: verified a2a://orchestrator-agent.com: prices in GBP, Gold fares (session travel-session-xyz) [A2A-Extensions: https://github.com/a2aproject/a2a-samples/tree/main/samples/python/extensions/secure-passport]",
            "unsigned: Unsigned passport from a2a://ecommerce-front.com: prices in USD, standard fares",
            "forged: refused -32602",
            "no trusted key signed the passport of a2a://mallory.example",
            "none: no passport: prices in USD, standard fares [A2A-Extensions: -]",
        ],
    );
}

#[test]
fn the_traceability_example_runs_and_shows_the_trace_tree() {
    let out = run(env!("CARGO_BIN_EXE_traceability"));
    assert_shows(
        &out,
        &[
            "declared: https://github.com/a2aproject/a2a-samples/extensions/traceability/v1",
            "echoed A2A-Extensions: https://github.com/a2aproject/a2a-samples/extensions/traceability/v1",
            "task TASK_STATE_COMPLETED: 100 USD = 79.00 GBP",
            "under metadata key github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability:",
            "- AGENT Currency Agent (",
            "  - TOOL parse_amount (",
            ", 42 tokens)",
            "  - AGENT Rates Agent (",
            "nested trace trace-",
            "- AGENT Rates Agent (",
            "- TOOL rates_db.lookup (",
            "nested trace shares the trace id: true",
            "wire step: {\"step_id\":\"step-",
            "\"call_type\":\"TOOL\",\"step_action\":{\"tool_invocation\":{\"tool_name\":\"parse_amount\"",
        ],
    );
}
