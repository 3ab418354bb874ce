//! Metadata hygiene on every binding (JSON-RPC, HTTP+JSON, gRPC) and in streamed events: a
//! caller gets the metadata of the server's extensions only when they are active on its
//! request; unknown extension keys are kept or removed as configured; the stored task keeps
//! everything; with hygiene off, everything is answered.

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::client::{A2aClient, ClientOptions, SendOptions};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::MetadataHygiene;
use a2a_runtime::server::A2aServer;
use a2a_runtime::test::*;
use a2a_runtime::types::{Artifact, Part, ProtocolBinding, SendMessageResponse};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::support::{events, send_params, start};

/// A data-only extension of the server.
#[a2a_extension(uri = "https://test.example/ext/geo/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Geo {}

const GEO: &str = "https://test.example/ext/geo/v1";
/// An extension this server does not know.
const OTHER: &str = "https://other.example/ext/x/v1";

/// Writes Geo's key, an unknown extension's key and a plain key on the task and its artifact
/// (listing both extensions), whatever the request activated.
struct Agent;

impl AgentExecutor for Agent {
    async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let mut artifact = Artifact::new([Part::text("result")]);
        for (k, v) in [
            (GEO, json!("52.5,13.4")),
            (OTHER, json!(1)),
            ("note", json!("kept")),
        ] {
            artifact.metadata.insert(k.into(), v);
        }
        artifact.extensions = vec![GEO.into(), OTHER.into()];
        events.artifact(artifact).await?;
        events.complete_with("done").await
    }
}

fn server(mode: MetadataHygiene) -> a2a_runtime::server::A2aServerBuilder {
    A2aServer::builder()
        .card(agent_card("hygiene"))
        .executor(Agent)
        .linked_extensions(false)
        .extension(Geo {})
        .metadata_hygiene(mode)
        .grpc_addr("127.0.0.1:0")
}

/// The artifact's metadata keys and `extensions` list.
fn seen(artifact: &Value) -> (Vec<String>, Vec<String>) {
    let mut keys: Vec<String> = artifact["metadata"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    let uris = artifact["extensions"]
        .as_array()
        .map(|a| a.iter().map(|u| u.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    (keys, uris)
}

fn strings(items: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = items.iter().map(|s| (*s).to_owned()).collect();
    v.sort();
    v
}

#[tokio::test]
async fn inactive_extensions_metadata_is_removed_on_both_http_bindings_and_in_streams() {
    let srv = start(server(MetadataHygiene::Inactive)).await;
    for binding in Binding::BOTH {
        // Not activated: its key and URI are gone; the unknown extension and plain keys stay.
        let task = srv.send_task(binding, send_params("hi")).await;
        let (keys, uris) = seen(&task["artifacts"][0]);
        assert_eq!(keys, strings(&["note", OTHER]), "{binding:?}");
        assert_eq!(uris, [OTHER], "{binding:?}");
        // Activated: answered.
        let task = srv
            .request(binding, "SendMessage", send_params("hi"))
            .header("A2A-Extensions", GEO)
            .result()
            .await
            .unwrap();
        let (keys, _) = seen(&task["task"]["artifacts"][0]);
        assert_eq!(keys, strings(&["note", GEO, OTHER]), "{binding:?}");
        // The store kept everything: GetTask with Geo active sees it, without does not.
        let id = task["task"]["id"].as_str().unwrap().to_owned();
        let got = srv
            .request(binding, "GetTask", json!({"id": id}))
            .header("A2A-Extensions", GEO)
            .result()
            .await
            .unwrap();
        assert!(seen(&got["artifacts"][0]).0.contains(&GEO.to_owned()));
        let got = srv.ok(binding, "GetTask", json!({"id": id})).await;
        assert!(!seen(&got["artifacts"][0]).0.contains(&GEO.to_owned()));
        // Streamed events: the artifact update and the task.
        let stream = srv
            .request(binding, "SendStreamingMessage", send_params("hi"))
            .stream()
            .await
            .unwrap();
        let mut artifacts = 0;
        for event in events(stream).await {
            if let Some(update) = event.get("artifactUpdate") {
                artifacts += 1;
                assert_eq!(seen(&update["artifact"]).0, strings(&["note", OTHER]));
            }
        }
        assert_eq!(artifacts, 1, "{binding:?}");
    }
    srv.stop().await;
}

#[tokio::test]
async fn unknown_mode_also_removes_extensions_the_server_does_not_know_and_off_keeps_all() {
    let srv = start(server(MetadataHygiene::Unknown)).await;
    let task = srv.send_task(Binding::JsonRpc, send_params("hi")).await;
    assert_eq!(seen(&task["artifacts"][0]), (strings(&["note"]), vec![]));
    srv.stop().await;
    let srv = start(server(MetadataHygiene::Off)).await;
    let task = srv.send_task(Binding::Rest, send_params("hi")).await;
    let (keys, uris) = seen(&task["artifacts"][0]);
    assert_eq!(keys, strings(&["note", GEO, OTHER]));
    assert_eq!(uris, [GEO, OTHER]);
    srv.stop().await;
}

#[tokio::test]
async fn grpc_answers_are_filtered_alike() {
    let running = server(MetadataHygiene::Inactive)
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let options = ClientOptions {
        preferred_binding: Some(ProtocolBinding::Grpc),
        ..ClientOptions::default()
    };
    for (activate, expected) in [
        (false, vec!["note", OTHER]),
        (true, vec!["note", GEO, OTHER]),
    ] {
        let mut builder = A2aClient::builder().options(options.clone());
        if activate {
            builder = builder.activate_uri(GEO);
        }
        let c = builder.connect(running.url().as_str()).await.unwrap();
        let sent = c.send_message("hi", SendOptions::default()).await.unwrap();
        let SendMessageResponse::Task(task) = sent.into_inner() else {
            panic!("not a task");
        };
        let mut keys: Vec<String> = task.artifacts[0].metadata.0.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, strings(&expected), "activated: {activate}");
    }
    running.stop().await;
}
