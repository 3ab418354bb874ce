//! The example agents of `a2a-examples` (Echo, Streaming, MultiTurn, Demo), each served over
//! real HTTP and answering correctly on both bindings.

use std::time::Duration;

use a2a_examples::{DemoAgent, EchoAgent, MultiTurnAgent, StreamingAgent, demo_card};
use a2a_runtime::server::A2aServer;
use a2a_runtime::test::*;
use a2a_tests::params::*;
use serde_json::json;

#[tokio::test]
async fn echo_agent_answers() {
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("echo"))
            .executor(EchoAgent),
    )
    .await;
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("hello there")).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED");
        assert_eq!(task["artifacts"][0]["name"], "echo");
        assert_eq!(text(&task["artifacts"][0]), "echo: hello there");
    }
}

#[tokio::test]
async fn streaming_agent_streams_word_chunks() {
    let agent = StreamingAgent {
        delay: Duration::ZERO,
    };
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("streaming"))
            .executor(agent),
    )
    .await;
    for binding in Binding::BOTH {
        let events = server
            .stream(binding, "SendStreamingMessage", msg("one two three"))
            .await
            .unwrap()
            .collect()
            .await;
        let kinds: Vec<&str> = events.iter().map(Event::member).collect();
        assert_eq!(
            kinds,
            [
                "task",
                "statusUpdate",
                "artifactUpdate",
                "artifactUpdate",
                "artifactUpdate",
                "statusUpdate"
            ]
        );
        let chunks: Vec<String> = events[2..5]
            .iter()
            .map(|e| text(&e.data["artifactUpdate"]["artifact"]))
            .collect();
        assert_eq!(chunks, ["one ", "two ", "three "]);
        assert_eq!(events[4].data["artifactUpdate"]["lastChunk"], true);
        assert_eq!(events[5].state(), Some("TASK_STATE_COMPLETED"));

        let task = server.send_task(binding, msg("one two three")).await;
        assert_eq!(text(&task["artifacts"][0]), "one two three ");
    }
}

#[tokio::test]
async fn multi_turn_agent_asks_then_greets() {
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("multi-turn"))
            .executor(MultiTurnAgent),
    )
    .await;
    for binding in Binding::BOTH {
        let asked = server.send_task(binding, msg("hi")).await;
        assert_eq!(state(&asked), "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(text(&asked["status"]["message"]), "What is your name?");
        let done = server.send_task(binding, msg_to(&id(&asked), "Ada")).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED");
        assert_eq!(done["contextId"], asked["contextId"]);
        assert_eq!(text(&done["artifacts"][0]), "Hello, Ada!");
    }
}

/// The demo agent in process: echo, `stream …`, `ask`, and `wait` (works until canceled).
#[tokio::test]
async fn demo_agent_answers_every_command() {
    let server =
        TestServer::start(A2aServer::builder().card(demo_card()).executor(DemoAgent)).await;
    for binding in Binding::BOTH {
        let echo = server.send_task(binding, msg("hello")).await;
        assert_eq!(text(&echo["artifacts"][0]), "echo: hello");
        let streamed = server.send_task(binding, msg("stream a b")).await;
        assert_eq!(text(&streamed["artifacts"][0]), "stream a b ");
        let asked = server.send_task(binding, msg("ask")).await;
        assert_eq!(state(&asked), "TASK_STATE_INPUT_REQUIRED");
        let greeted = server.send_task(binding, msg_to(&id(&asked), "Bob")).await;
        assert_eq!(text(&greeted["artifacts"][0]), "Hello, Bob!");

        let waiting = server
            .send_task(
                binding,
                with_config(msg("wait"), json!({"returnImmediately": true})),
            )
            .await;
        let canceled = server
            .ok(binding, "CancelTask", json!({"id": id(&waiting)}))
            .await;
        assert_eq!(state(&canceled), "TASK_STATE_CANCELED");
    }
}
