//! The Traceability extension (a2a-samples `extensions/traceability/v1`), in one process: a
//! currency agent that calls a tool and then another agent (a rates agent, also traced), passing
//! its trace context along and nesting the rates agent's trace in its own; a client activates
//! the extension and prints the trace tree it got back, and the trace's wire form. Exits 0 when
//! everything behaved as shown.
//!
//! `cargo run -p a2a-examples --bin traceability`

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, SendOptions};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::Extension;
use a2a_runtime::samples::traceability::{ResponseTrace, StepAction, Traceability};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::{AgentCard, Artifact, Message, Part};
use serde_json::{Map, json};

fn card(name: &str, description: &str) -> AgentCard {
    AgentCard {
        name: name.into(),
        description: description.into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    }
}

/// Looks a rate up (a traced tool call) and replies with it.
struct Rates;

impl AgentExecutor for Rates {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if let Some(tracer) = ctx.extension::<Traceability>() {
            let mut params = Map::new();
            params.insert("pair".into(), json!("USD/GBP"));
            let mut step = tracer.tool("rates_db.lookup", params);
            step.set_attribute("source", "cache");
            step.finish();
        }
        events.reply(Message::agent_text("0.79")).await
    }
}

/// Converts an amount: parses it (a traced tool call), asks the rates agent (a traced agent
/// call, whose own trace is nested), answers with an artifact and completes.
struct CurrencyAgent {
    rates_url: String,
}

impl AgentExecutor for CurrencyAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let tracer = ctx.extension::<Traceability>();
        let mut params = Map::new();
        params.insert("text".into(), json!(ctx.text()));
        let parse = tracer.as_ref().map(|t| t.tool("parse_amount", params));
        let amount: f64 = ctx
            .text()
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap_or(1.0);
        if let Some(mut step) = parse {
            step.set_total_tokens(42);
            step.set_cost(1);
            step.finish();
        }

        let rates = A2aClient::builder()
            .extension(Traceability::new())
            .connect(self.rates_url.as_str())
            .await?;
        let mut request = Message::user_text("USD to GBP");
        let mut call = tracer
            .as_ref()
            .map(|t| t.agent_call(self.rates_url.clone(), "Rates Agent"));
        if let Some(call) = &mut call {
            call.propagate(&mut request);
            if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&request) {
                call.set_requests(m);
            }
        }
        let answer = rates.send_message(request, SendOptions::default()).await?;
        if let Some(mut call) = call {
            if let Ok(Some(trace)) = Traceability::trace_of(answer.get_ref()) {
                call.set_response_trace(trace);
            }
            call.finish();
        }
        let rate: f64 = match answer.get_ref() {
            a2a_runtime::client::SendResult::Message(m) => m.text().parse().unwrap_or(0.0),
            a2a_runtime::client::SendResult::Task(_) => 0.0,
        };
        let converted = amount * rate;
        events
            .artifact(
                Artifact::new([Part::text(format!("{amount} USD = {converted:.2} GBP"))])
                    .with_name("conversion_result"),
            )
            .await?;
        events
            .complete_with(format!("{amount} USD = {converted:.2} GBP"))
            .await
    }
}

fn print_trace(trace: &ResponseTrace, indent: usize) {
    fn walk(trace: &ResponseTrace, parent: Option<&str>, depth: usize) {
        for step in trace
            .steps
            .iter()
            .filter(|s| s.parent_step_id.as_deref() == parent)
        {
            let pad = "  ".repeat(depth);
            let call = step.call_type.as_ref().map_or("?", |c| c.as_str());
            let what = match &step.step_action {
                Some(StepAction::ToolInvocation(t)) => t.tool_name.clone(),
                Some(StepAction::AgentInvocation(a)) => a.agent_name.clone(),
                None => String::new(),
            };
            let tokens = step
                .total_tokens
                .map(|t| format!(", {t} tokens"))
                .unwrap_or_default();
            println!(
                "{pad}- {call} {what} ({} ms{tokens})",
                step.latency.unwrap_or(0)
            );
            if let Some(StepAction::AgentInvocation(a)) = &step.step_action
                && let Some(nested) = &a.response_trace
            {
                println!("{pad}  nested trace {}:", nested.trace_id);
                walk(nested, Some(&step.step_id), depth + 2);
            }
            walk(trace, Some(&step.step_id), depth + 1);
        }
    }
    // Roots: no parent, or a parent outside this trace (the caller's step).
    let roots: Vec<&str> = trace
        .steps
        .iter()
        .filter(|s| {
            s.parent_step_id
                .as_deref()
                .is_none_or(|p| trace.step(p).is_none())
        })
        .map(|s| s.step_id.as_str())
        .collect();
    for root in roots {
        let sub = ResponseTrace {
            trace_id: trace.trace_id.clone(),
            steps: trace
                .steps
                .iter()
                .map(|s| {
                    let mut s = s.clone();
                    if s.step_id == root {
                        s.parent_step_id = None;
                    }
                    s
                })
                .collect(),
        };
        walk(&sub, None, indent);
    }
}

/// What `--help` prints.
const USAGE: &str = "\
usage: traceability

The Traceability extension in one process: a currency agent calling a rates agent, both on
127.0.0.1, and a client printing the trace tree; exits 0 when everything behaved as shown.

  -h, --help       print this and exit
  -V, --version    print the version and exit
";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    a2a_examples::answer_help_or_version("traceability", USAGE);
    let rates = A2aServer::builder()
        .card(card("Rates Agent", "Exchange rates"))
        .executor(Rates)
        .extension(Traceability::new().agent("Rates Agent", ""))
        .build()?
        .start("127.0.0.1:0")
        .await?;
    // The root step of the currency agent's traces names it (its URL is only known once bound,
    // so it is left out here).
    let currency = A2aServer::builder()
        .card(card("Currency Agent", "Converts currencies"))
        .executor(CurrencyAgent {
            rates_url: rates.url(),
        })
        .extension(Traceability::new().agent("Currency Agent", ""))
        .build()?
        .start("127.0.0.1:0")
        .await?;

    let client = A2aClient::builder()
        .extension(Traceability::new())
        .connect(currency.url().as_str())
        .await?;
    println!(
        "declared: {}",
        client
            .card()
            .capabilities
            .extensions
            .iter()
            .map(|e| e.uri.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let sent = client
        .send_message("convert 100 USD to GBP", SendOptions::default())
        .await?;
    println!(
        "echoed A2A-Extensions: {}",
        sent.activated_extensions().join(", ")
    );
    let a2a_runtime::client::SendResult::Task(task) = sent.get_ref() else {
        return Err("expected a task".into());
    };
    let answer = task
        .status
        .message
        .as_ref()
        .map(Message::text)
        .unwrap_or_default();
    println!("task {}: {answer}", task.status.state);
    let trace = Traceability::trace_of(sent.get_ref())?.ok_or("no trace in the response")?;
    println!(
        "trace {} ({} steps) under metadata key {}:",
        trace.trace_id,
        trace.steps.len(),
        Traceability::METADATA_KEY
    );
    print_trace(&trace, 1);
    let nested = trace
        .steps
        .iter()
        .find_map(|s| match &s.step_action {
            Some(StepAction::AgentInvocation(a)) => a.response_trace.as_deref(),
            _ => None,
        })
        .ok_or("no nested trace")?;
    println!(
        "nested trace shares the trace id: {}",
        nested.trace_id == trace.trace_id
    );
    println!("wire step: {}", serde_json::to_string(&trace.steps[1])?);

    currency.stop().await;
    rates.stop().await;
    println!("ok");
    Ok(())
}
