//! Traceability (a2aproject/a2a-samples `extensions/traceability/v1/spec.md`): JSON written
//! from the spec's proto, the protobuf-JSON and reference-implementation variants, and an agent
//! running the extension returning its trace, in the spec's wire format, to clients that
//! activate it.

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, SendOptions, SendResult};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::MetadataExt;
use a2a_runtime::samples::traceability::{
    CallType, ResponseTrace, Step, StepAction, Traceability, Tracer,
};
use a2a_runtime::test::{Binding, TestServer, within};
use a2a_runtime::types::{Artifact, Message, Part, StreamResponse, TaskState};
use futures::StreamExt as _;
use serde_json::{Value, json};

use super::{call, canonical, fixture, serve};

const URI: &str = "https://github.com/a2aproject/a2a-samples/extensions/traceability/v1";
const KEY: &str = "github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability";

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

#[test]
fn a_trace_with_every_field_round_trips() {
    let json = fixture("traceability.response_trace.json");
    let trace: ResponseTrace = serde_json::from_value(json).unwrap();
    assert_eq!(trace.trace_id, "trace-5f0c3c1e-9d1a-4a8e-b3f2-2c7d8e6a9b10");
    assert_eq!(trace.steps.len(), 3);

    let root = &trace.steps[0];
    assert_eq!(root.parent_step_id, None);
    assert_eq!(root.call_type, Some(CallType::Agent));
    let Some(StepAction::AgentInvocation(me)) = &root.step_action else {
        panic!("root action")
    };
    assert_eq!(me.agent_name, "Currency Agent");

    let tool = trace.step("step-tool").unwrap();
    assert_eq!(tool.parent_step_id.as_deref(), Some("step-root"));
    assert_eq!(tool.call_type, Some(CallType::Tool));
    let Some(StepAction::ToolInvocation(call)) = &tool.step_action else {
        panic!("tool action")
    };
    assert_eq!(call.tool_name, "get_exchange_rate");
    assert_eq!(call.parameters.as_ref().unwrap()["amount"], 100);
    assert_eq!(
        (tool.cost, tool.total_tokens, tool.latency),
        (Some(3), Some(154), Some(35))
    );
    assert_eq!(tool.additional_attributes["model"], "gemini-2.5-flash");
    assert_eq!(
        tool.end_time.unwrap().millis() - tool.start_time.unwrap().millis(),
        35
    );

    let nested = trace.step("step-agent").unwrap();
    let Some(StepAction::AgentInvocation(callee)) = &nested.step_action else {
        panic!("agent action")
    };
    assert_eq!(callee.agent_name, "Rates Agent");
    assert_eq!(
        callee.requests.as_ref().unwrap()["message"]["messageId"],
        "msg-rates-1"
    );
    let inner = callee.response_trace.as_ref().unwrap();
    assert_eq!(inner.steps[0].parent_step_id.as_deref(), Some("step-agent"));
    assert_eq!(trace.children("step-root").count(), 2);
}

#[test]
fn a_message_carrying_a_trace_round_trips() {
    let json = fixture("traceability.message.json");
    let message: Message = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(message.extensions, [URI]);
    let trace = message.metadata_of::<Traceability>().unwrap().unwrap();
    assert_eq!(
        canonical(&serde_json::to_value(&trace).unwrap()),
        canonical(&fixture("traceability.response_trace.json"))
    );

    // Written by us: the same bytes.
    let mut ours = Message::agent_text("100 USD = 79 GBP");
    ours.message_id = "msg-reply-1".into();
    ours.context_id = "ctx-1".into();
    ours.task_id = "task-1".into();
    ours.set_metadata_of::<Traceability>(&trace);
    assert_eq!(
        canonical(&serde_json::to_value(&ours).unwrap()),
        canonical(&json)
    );
}

#[test]
fn canonical_protobuf_json_decodes_to_the_same_trace() {
    let snake: ResponseTrace =
        serde_json::from_value(fixture("traceability.response_trace.json")).unwrap();
    let camel: ResponseTrace =
        serde_json::from_value(fixture("traceability.protojson_camel.json")).unwrap();
    assert_eq!(camel, snake);
}

#[test]
fn the_reference_implementations_output_decodes_and_keeps_its_extra_members() {
    let json = fixture("traceability.reference_python.json");
    let trace: ResponseTrace = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(trace.trace_id, "trace-0b6e2a4c-7f1d-4c55-9a3e-1d2f3a4b5c6d");
    let first = &trace.steps[0];
    assert_eq!(first.parent_step_id, None);
    assert_eq!(first.call_type, Some(CallType::Tool));
    assert_eq!(
        (first.cost, first.total_tokens, first.latency),
        (None, None, Some(0))
    );
    assert!(first.additional_attributes.is_empty());
    assert_eq!(
        first.start_time.unwrap().to_rfc3339(),
        "2025-10-01T12:00:00.123Z"
    );
    assert_eq!(first.extra["name"], "get_exchange_rate");
    assert_eq!(first.extra["step_type"], "tool_call");
    assert_eq!(first.extra["parameters"]["currency_to"], "EUR");
    let second = &trace.steps[1];
    assert_eq!(second.call_type, Some(CallType::Other("HOST".into())));
    assert_eq!(second.cost, Some(12));

    // Written back: every member the reference emitted, values kept (nulls of spec fields
    // omitted, timestamps at millisecond precision in UTC).
    let back = serde_json::to_value(&trace).unwrap();
    let step = back["steps"][1].as_object().unwrap();
    for member in ["name", "parameters", "requests", "step_type", "error"] {
        assert_eq!(step[member], json["steps"][1][member], "{member}");
    }
    assert_eq!(step["call_type"], "HOST");
    assert_eq!(step["start_time"], "2025-10-01T12:00:01.500Z");
    assert!(!step.contains_key("parent_step_id"));
}

#[test]
fn values_the_proto_does_not_allow_are_errors() {
    let step = |extra: Value| {
        let mut s = json!({"step_id": "s", "trace_id": "t"});
        s.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value::<Step>(s)
    };
    assert!(step(json!({"cost": 1.5})).is_err());
    assert!(step(json!({"latency": "soon"})).is_err());
    assert!(step(json!({"call_type": 7})).is_err());
    assert!(step(json!({"start_time": "yesterday"})).is_err());
    assert!(step(json!({"additional_attributes": {"n": 1}})).is_err());
    assert_eq!(step(json!({"cost": 4.0})).unwrap().cost, Some(4));
    assert_eq!(
        step(json!({"total_tokens": "9"})).unwrap().total_tokens,
        Some(9)
    );
}

#[test]
fn the_tracer_builds_a_tree_under_its_root_step() {
    let tracer = Tracer::new();
    let root = tracer.root_step_id();
    let mut params = serde_json::Map::new();
    params.insert("q".into(), json!("x"));
    let mut tool = tracer.tool("search", params);
    tool.set_cost(2);
    tool.set_attribute("k", "v");
    let tool_id = tool.finish().step_id;
    {
        // Dropped without finish: still recorded.
        let _agent = tracer.agent_call("http://127.0.0.1:1", "Other");
    }
    let trace = tracer.snapshot();
    assert!(trace.trace_id.starts_with("trace-"));
    assert_eq!(trace.steps.len(), 3);
    assert_eq!(trace.steps[0].step_id, root);
    assert!(trace.steps[0].latency.is_some() && trace.steps[0].end_time.is_some());
    assert!(trace.steps.iter().all(|s| s.trace_id == trace.trace_id));
    assert_eq!(trace.steps[1].step_id, tool_id);
    assert_eq!(trace.children(&root).count(), 2);
    assert_eq!(trace.steps[2].call_type, Some(CallType::Agent));

    // Continuing a caller's trace: same trace id, root under the caller's step.
    let callee = Tracer::new();
    callee.continue_trace(&trace);
    let t = callee.snapshot();
    assert_eq!(t.trace_id, trace.trace_id);
    assert_eq!(
        t.steps[0].parent_step_id.as_deref(),
        Some(trace.steps[2].step_id.as_str())
    );
}

// ---------------------------------------------------------------------------------------------
// An agent using it
// ---------------------------------------------------------------------------------------------

/// Records a tool step when traced; then, by the input text: "reply" → a direct reply;
/// "task" → an artifact and COMPLETED without a message; anything else → COMPLETED with a
/// message.
struct Currency;

impl AgentExecutor for Currency {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if let Some(tracer) = ctx.extension::<Traceability>() {
            let mut params = serde_json::Map::new();
            params.insert("currency_from".into(), json!("USD"));
            params.insert("currency_to".into(), json!("GBP"));
            let mut step = tracer.tool("get_exchange_rate", params);
            step.set_total_tokens(154);
            step.set_cost(3);
            step.set_attribute("model", "test");
            step.finish();
        }
        match ctx.text().as_str() {
            "reply" => events.reply(Message::agent_text("1 USD = 0.79 GBP")).await,
            "task" => {
                events
                    .artifact(Artifact::new([Part::text("79 GBP")]).with_name("conversion_result"))
                    .await?;
                events.complete().await
            }
            _ => events.complete_with("100 USD = 79 GBP").await,
        }
    }
}

/// The currency agent with the extension.
async fn start() -> TestServer {
    let traceability = Traceability::new().agent("Currency Agent", "http://127.0.0.1:10000");
    let description = "Converts currencies, with traces";
    serve("Currency Agent", description, Currency, traceability).await
}

/// `method` over JSON-RPC, activating the extension or not: the echoed `A2A-Extensions` and the
/// envelope.
async fn rpc(
    server: &TestServer,
    method: &str,
    params: Value,
    activate: bool,
) -> (Option<String>, Value) {
    let activate = activate.then_some(URI);
    let answer = call(server, Binding::JsonRpc, method, params, activate).await;
    (answer.header_list("a2a-extensions"), answer.json())
}

fn send(text: &str) -> Value {
    json!({"message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// Checks the wire form of a trace our agent returned: the spec's snake_case members, the root
/// step naming the agent, and the tool step under it.
fn check_wire_trace(trace: &Value) {
    let obj = trace.as_object().unwrap();
    assert_eq!(
        obj.keys().collect::<Vec<_>>(),
        ["steps", "trace_id"],
        "{trace}"
    );
    let trace_id = trace["trace_id"].as_str().unwrap();
    assert!(trace_id.starts_with("trace-"), "{trace_id}");
    let steps = trace["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{trace}");

    let root = &steps[0];
    assert_eq!(root["trace_id"], trace_id);
    assert_eq!(root["call_type"], "AGENT");
    assert!(root.get("parent_step_id").is_none());
    assert_eq!(
        root["step_action"],
        json!({"agent_invocation": {"agent_url": "http://127.0.0.1:10000", "agent_name": "Currency Agent"}})
    );
    assert!(root["latency"].is_i64(), "{root}");
    for t in ["start_time", "end_time"] {
        let s = root[t].as_str().unwrap();
        assert!(s.ends_with('Z') && s.len() == 24, "{t}: {s}");
    }

    let tool = &steps[1];
    let keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "additional_attributes",
            "call_type",
            "cost",
            "end_time",
            "latency",
            "parent_step_id",
            "start_time",
            "step_action",
            "step_id",
            "total_tokens",
            "trace_id"
        ]
    );
    assert_eq!(tool["parent_step_id"], root["step_id"]);
    assert_eq!(tool["call_type"], "TOOL");
    assert_eq!(
        tool["step_action"],
        json!({"tool_invocation": {"tool_name": "get_exchange_rate", "parameters": {"currency_from": "USD", "currency_to": "GBP"}}})
    );
    assert_eq!(tool["cost"], 3);
    assert_eq!(tool["total_tokens"], 154);
    assert_eq!(tool["additional_attributes"], json!({"model": "test"}));
    assert!(tool["step_id"].as_str().unwrap().starts_with("step-"));
    // And it decodes into the typed structs.
    let _: ResponseTrace = serde_json::from_value(trace.clone()).unwrap();
}

#[tokio::test]
async fn a_direct_reply_carries_the_trace_in_its_metadata() {
    let server = start().await;
    let (echoed, body) = rpc(&server, "SendMessage", send("reply"), true).await;
    assert_eq!(echoed.as_deref(), Some(URI));
    let message = &body["result"]["message"];
    assert_eq!(message["extensions"], json!([URI]), "{message}");
    let metadata = message["metadata"].as_object().unwrap();
    assert_eq!(metadata.keys().collect::<Vec<_>>(), [KEY]);
    check_wire_trace(&metadata[KEY]);
}

#[tokio::test]
async fn the_final_status_message_carries_the_trace_and_get_task_shows_it() {
    let server = start().await;
    let (_, body) = rpc(&server, "SendMessage", send("status"), true).await;
    let task = &body["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let message = &task["status"]["message"];
    assert_eq!(message["parts"][0]["text"], "100 USD = 79 GBP");
    check_wire_trace(&message["metadata"][KEY]);
    // The artifact carries none: the trace goes on the message that ends the turn.
    assert!(
        task["artifacts"]
            .as_array()
            .is_none_or(|a| a.iter().all(|a| a.get("metadata").is_none()))
    );

    // Stored with the task: GetTask (no extension needed) returns it.
    let id = task["id"].as_str().unwrap();
    let (_, got) = rpc(&server, "GetTask", json!({"id": id}), false).await;
    assert_eq!(
        got["result"]["status"]["message"]["metadata"][KEY],
        message["metadata"][KEY]
    );
}

#[tokio::test]
async fn a_final_status_without_a_message_gets_one_with_the_trace() {
    let server = start().await;
    let (_, body) = rpc(&server, "SendMessage", send("task"), true).await;
    let task = &body["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let message = &task["status"]["message"];
    assert_eq!(message["role"], "ROLE_AGENT");
    let trace = &message["metadata"][KEY];
    check_wire_trace(trace);
    assert_eq!(
        message["parts"][0]["text"],
        format!("trace {}: 2 steps", trace["trace_id"].as_str().unwrap())
    );
    assert_eq!(message["taskId"], task["id"]);
}

#[tokio::test]
async fn without_activation_no_trace_is_added() {
    let server = start().await;
    for text in ["reply", "status", "task"] {
        let (echoed, body) = rpc(&server, "SendMessage", send(text), false).await;
        assert_eq!(echoed, None);
        assert!(!body.to_string().contains(KEY), "{text}: {body}");
    }
}

#[tokio::test]
async fn a_malformed_trace_context_is_refused() {
    let server = start().await;
    let mut params = send("reply");
    params["message"]["metadata"] = json!({KEY: {"trace_id": "t", "steps": [{"cost": "lots"}]}});
    let (_, body) = rpc(&server, "SendMessage", params, true).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
}

#[tokio::test]
async fn a_caller_propagates_its_trace_context_and_nests_the_callees_trace() {
    let server = start().await;
    let client = A2aClient::builder()
        .extension(Traceability::new())
        .connect(server.url())
        .await
        .unwrap();

    // The caller's own trace, with a step for the call to the agent.
    let caller = Tracer::new();
    let mut call = caller.agent_call(server.url(), "Currency Agent");
    let mut message = Message::user_text("reply");
    call.propagate(&mut message);
    let sent = client
        .send_message(message, SendOptions::default())
        .await
        .unwrap();
    assert_eq!(sent.activated_extensions(), [URI]);
    let callee_trace = Traceability::trace_of(sent.get_ref())
        .unwrap()
        .expect("a trace");
    // The callee continued the caller's trace, under the calling step.
    assert_eq!(callee_trace.trace_id, caller.trace_id());
    assert_eq!(
        callee_trace.steps[0].parent_step_id.as_deref(),
        Some(call.step_id())
    );
    assert!(
        callee_trace
            .steps
            .iter()
            .all(|s| s.trace_id == caller.trace_id())
    );

    call.set_response_trace(callee_trace.clone());
    let call_id = call.finish().step_id;
    let full = caller.snapshot();
    let step = full.step(&call_id).unwrap();
    let Some(StepAction::AgentInvocation(inv)) = &step.step_action else {
        panic!("agent invocation")
    };
    assert_eq!(inv.response_trace.as_deref(), Some(&callee_trace));
    let wire = serde_json::to_value(&full).unwrap();
    let nested = wire["steps"][1]["step_action"]["agent_invocation"]["response_trace"].clone();
    assert_eq!(nested["trace_id"], caller.trace_id());
}

#[tokio::test]
async fn streamed_final_status_carries_the_trace() {
    let server = start().await;
    let client = A2aClient::builder()
        .extension(Traceability::new())
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client
        .stream_message("task", SendOptions::default())
        .await
        .unwrap()
        .into_inner();
    let mut last_status = None;
    while let Some(event) = within("the next event", events.next()).await {
        match event.unwrap() {
            StreamResponse::StatusUpdate(u) => last_status = Some(u.status),
            StreamResponse::ArtifactUpdate(a) => {
                assert!(!a.artifact.has_metadata_of::<Traceability>());
            }
            _ => {}
        }
    }
    let status = last_status.expect("a status update");
    assert_eq!(status.state, TaskState::Completed);
    let trace = status
        .message
        .as_ref()
        .unwrap()
        .metadata_of::<Traceability>()
        .unwrap()
        .unwrap();
    check_wire_trace(&serde_json::to_value(&trace).unwrap());

    // The whole task, read later, has it too.
    let task_id = status.message.as_ref().unwrap().task_id.to_string();
    let task = client.get_task(&task_id, None).await.unwrap().into_inner();
    assert_eq!(Traceability::trace_of_task(&task).unwrap(), Some(trace));
    let _ = SendResult::Task(task);
}
